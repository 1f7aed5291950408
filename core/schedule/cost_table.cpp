#include "core/schedule/cost_table.h"

#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <unordered_map>

namespace ramiel {

namespace {

// Bytes per sample that `from` hands to `to`: the values it produces that `to` reads.
double bytesBetween(const Graph& g, NodeId from, NodeId to)
{
    double bytes = 0;
    const Node& consumer = g.node(to);
    for (ValueId v : g.node(from).outputs) {
        if (v == kNone)
            continue;
        const bool read = std::find(consumer.inputs.begin(), consumer.inputs.end(), v) != consumer.inputs.end() ||
                          std::find(consumer.implicitInputs.begin(), consumer.implicitInputs.end(), v) !=
                              consumer.implicitInputs.end();
        if (read)
            bytes += static_cast<double>(g.value(v).type.byteSize().value_or(0));
    }
    return bytes;
}

}  // namespace

CostTable CostTable::fromStatic(const Graph& g, const Topology& topo, const std::vector<NodeCost>& costs,
                                const MachineConstants& m, const EdgeCostParameters& edges)
{
    CostTable t;
    t.topo_ = &topo;
    t.source_ = "static";
    t.edges_ = edges;
    const size_t n = g.nodeCount();
    t.fixed_.assign(n, m.overheadSeconds);
    t.flopSeconds_.assign(n, 0);
    t.constSeconds_.assign(n, 0);
    t.actSeconds_.assign(n, 0);
    t.perSample_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
        const NodeCost& c = costs[i];
        if (!c.known)
            continue;
        double constBytes = 0;
        for (ValueId v : g.node(static_cast<NodeId>(i)).inputs)
            if (v != kNone && g.value(v).isConstant())
                constBytes += static_cast<double>(g.value(v).type.byteSize().value_or(0));
        constBytes = std::min(constBytes, c.bytes());
        t.flopSeconds_[i] = c.flops / m.flopsPerSecond;
        t.constSeconds_[i] = constBytes / m.bytesPerSecond;
        t.actSeconds_[i] = (c.bytes() - constBytes) / m.bytesPerSecond;
    }
    t.predBytes_.resize(n);
    for (size_t v = 0; v < n; ++v)
        for (NodeId p : topo.preds[v])
            t.predBytes_[v].push_back(bytesBetween(g, p, static_cast<NodeId>(v)));
    return t;
}

CostTable CostTable::fromSeconds(const Topology& topo, const std::vector<double>& secondsPerSample,
                                 const EdgeCostParameters& edges, double edgeBytes)
{
    CostTable t;
    t.topo_ = &topo;
    t.source_ = "explicit";
    t.edges_ = edges;
    const size_t n = topo.nodeCount();
    t.fixed_.assign(n, 0);
    t.flopSeconds_.assign(n, 0);
    t.constSeconds_.assign(n, 0);
    t.actSeconds_.assign(n, 0);
    t.perSample_ = secondsPerSample;
    t.predBytes_.resize(n);
    for (size_t v = 0; v < n; ++v)
        t.predBytes_[v].assign(topo.preds[v].size(), edgeBytes);
    return t;
}

CostTable CostTable::fromMeasured(const std::string& path, const Graph& g, const Topology& topo,
                                  const CostTable& fallback, std::vector<std::string>* missing)
{
    std::ifstream in(path);
    if (!in)
        throw Error(ErrorKind::Io, path, "cannot open the measured-cost table");
    nlohmann::json j;
    std::unordered_map<std::string, double> seconds, threadedSeconds;
    double batch = 1;
    int threaded = 0;
    try {
        in >> j;
        batch = j.value("batch", 1.0);
        for (const auto& [name, value] : j.at("nodes").items())
            seconds[name] = value.is_object() ? value.at("seconds").get<double>() : value.get<double>();
        if (j.contains("threaded")) {
            threaded = j.at("threaded").at("threads").get<int>();
            for (const auto& [name, value] : j.at("threaded").at("nodes").items())
                threadedSeconds[name] = value.get<double>();
        }
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::Usage, path, std::string("not a measured-cost table: ") + e.what());
    }
    if (!(batch > 0))
        throw Error(ErrorKind::Usage, path, "\"batch\" must be positive");

    std::vector<double> byNode(g.nodeCount(), std::nan(""));
    for (size_t i = 0; i < g.nodeCount(); ++i) {
        const auto it = seconds.find(g.node(static_cast<NodeId>(i)).name);
        if (it != seconds.end() && it->second >= 0)
            byNode[i] = it->second;
        else if (missing)
            missing->push_back(g.node(static_cast<NodeId>(i)).name);
    }
    CostTable t = fromMeasuredSeconds(byNode, int(batch), fallback, path);
    t.topo_ = &topo;
    if (threaded > 1) {
        std::vector<double> byNodeThreaded(g.nodeCount(), std::nan(""));
        for (size_t i = 0; i < g.nodeCount(); ++i) {
            const auto it = threadedSeconds.find(g.node(static_cast<NodeId>(i)).name);
            if (it != threadedSeconds.end() && it->second >= 0)
                byNodeThreaded[i] = it->second;
        }
        t.setThreadedSeconds(threaded, byNodeThreaded, int(batch));
    }
    return t;
}

CostTable CostTable::fromMeasuredSeconds(const std::vector<double>& seconds, int batch, const CostTable& fallback,
                                         const std::string& source)
{
    CostTable t = fallback;
    t.source_ = source;
    for (size_t i = 0; i < seconds.size() && i < t.perSample_.size(); ++i) {
        if (std::isnan(seconds[i]))
            continue;
        t.fixed_[i] = t.flopSeconds_[i] = t.constSeconds_[i] = t.actSeconds_[i] = 0;
        t.perSample_[i] = seconds[i] / batch;
    }
    return t;
}

void CostTable::setThreadedSeconds(int threads, const std::vector<double>& seconds, int batch)
{
    threadedCount_ = threads > 1 ? threads : 0;
    threadedPerSample_.assign(perSample_.size(), -1.0);
    for (size_t i = 0; i < seconds.size() && i < threadedPerSample_.size(); ++i)
        if (!std::isnan(seconds[i]) && seconds[i] >= 0)
            threadedPerSample_[i] = seconds[i] / batch;
}

double CostTable::edge(NodeId from, NodeId to, int samples) const
{
    const auto& preds = topo_->preds[static_cast<size_t>(to)];
    for (size_t k = 0; k < preds.size(); ++k)
        if (preds[k] == from)
            return predEdge(to, k, samples);
    return 0;
}

}  // namespace ramiel
