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
    std::unordered_map<std::string, double> seconds;
    struct Count {
        int threads;
        std::unordered_map<std::string, double> seconds;
        double untimed;
    };
    std::vector<Count> threaded;
    double batch = 1;
    double untimed = 0;
    // Per node, the whole run's median ("median_total", when given) less the nodes' times.
    auto untimedOf = [](const nlohmann::json& table, const std::unordered_map<std::string, double>& nodes) {
        double timed = 0;
        for (const auto& [name, s] : nodes)
            timed += s;
        const double total = table.value("median_total", 0.0);
        return nodes.empty() || !(total > timed) ? 0.0 : (total - timed) / double(nodes.size());
    };
    try {
        in >> j;
        batch = j.value("batch", 1.0);
        for (const auto& [name, value] : j.at("nodes").items())
            seconds[name] = value.is_object() ? value.at("seconds").get<double>() : value.get<double>();
        untimed = untimedOf(j, seconds);
        // "threaded": one table on more threads, or a list of them (one per count).
        if (j.contains("threaded")) {
            const nlohmann::json& list = j.at("threaded").is_array() ? j.at("threaded")
                                                                     : nlohmann::json::array({j.at("threaded")});
            for (const auto& table : list) {
                Count c{table.at("threads").get<int>(), {}, 0};
                for (const auto& [name, value] : table.at("nodes").items())
                    c.seconds[name] = value.get<double>();
                c.untimed = untimedOf(table, c.seconds);
                threaded.push_back(std::move(c));
            }
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
    CostTable t = fromMeasuredSeconds(byNode, int(batch), fallback, path, untimed);
    t.topo_ = &topo;
    for (const Count& c : threaded) {
        if (c.threads < 2)
            continue;
        std::vector<double> byNodeThreaded(g.nodeCount(), std::nan(""));
        for (size_t i = 0; i < g.nodeCount(); ++i) {
            const auto it = c.seconds.find(g.node(static_cast<NodeId>(i)).name);
            if (it != c.seconds.end() && it->second >= 0)
                byNodeThreaded[i] = it->second;
        }
        t.setThreadedSeconds(c.threads, byNodeThreaded, int(batch), c.untimed);
    }
    return t;
}

CostTable CostTable::fromMeasuredSeconds(const std::vector<double>& seconds, int batch, const CostTable& fallback,
                                         const std::string& source, double untimedSeconds)
{
    CostTable t = fallback;
    t.source_ = source;
    t.untimed_ = untimedSeconds;
    for (size_t i = 0; i < seconds.size() && i < t.perSample_.size(); ++i) {
        if (std::isnan(seconds[i]))
            continue;
        t.flopSeconds_[i] = t.constSeconds_[i] = t.actSeconds_[i] = 0;
        t.fixed_[i] = untimedSeconds;
        t.perSample_[i] = seconds[i] / batch;
    }
    return t;
}

void CostTable::setThreadedSeconds(int threads, const std::vector<double>& seconds, int batch, double untimedSeconds)
{
    if (threads <= 1)
        return;
    Threaded t{threads, std::vector<double>(perSample_.size(), -1.0), untimedSeconds};
    for (size_t i = 0; i < seconds.size() && i < t.perSample.size(); ++i)
        if (!std::isnan(seconds[i]) && seconds[i] >= 0)
            t.perSample[i] = seconds[i] / batch;
    auto at = std::lower_bound(threaded_.begin(), threaded_.end(), threads,
                               [](const Threaded& a, int k) { return a.threads < k; });
    if (at != threaded_.end() && at->threads == threads)
        *at = std::move(t);
    else
        threaded_.insert(at, std::move(t));
}

void CostTable::updateThreadedSeconds(int threads, const std::vector<double>& seconds, int batch)
{
    auto at = std::find_if(threaded_.begin(), threaded_.end(), [&](const Threaded& t) { return t.threads == threads; });
    if (at == threaded_.end()) {
        setThreadedSeconds(threads, seconds, batch);
        return;
    }
    for (size_t i = 0; i < seconds.size() && i < at->perSample.size(); ++i)
        if (!std::isnan(seconds[i]) && seconds[i] >= 0)
            at->perSample[i] = seconds[i] / batch;
}

double CostTable::untimedSeconds(int threads) const
{
    if (threads <= 1)
        return untimed_;
    for (const Threaded& t : threaded_)
        if (t.threads == threads)
            return t.untimed;
    return 0;
}

std::vector<int> CostTable::threadedCounts() const
{
    std::vector<int> counts;
    for (const Threaded& t : threaded_)
        counts.push_back(t.threads);
    return counts;
}

bool CostTable::measuredAt(int threads) const
{
    if (threads <= 1)
        return true;
    for (const Threaded& t : threaded_)
        if (t.threads == threads)
            return true;
    return false;
}

double CostTable::node(NodeId n, int samples, int threads) const
{
    const double one = node(n, samples);
    if (threads <= 1 || threaded_.empty())
        return one;
    const size_t i = static_cast<size_t>(n);
    // The measured count nearest to `threads` that knows this node (ties: the larger).
    const Threaded* nearest = nullptr;
    for (const Threaded& t : threaded_)
        if (t.perSample[i] >= 0 && (!nearest || std::abs(t.threads - threads) <= std::abs(nearest->threads - threads)))
            nearest = &t;
    if (!nearest || one <= 0)
        return one;
    const double at = nearest->untimed + samples * nearest->perSample[i];
    if (nearest->threads == threads)
        return at;
    // Amdahl: t(k) = t(1) · ((1 - f) + f / k), f fitted at the measured count m;
    // f < 0 (slower on more threads) is overhead that grows toward t(1) · (1 - f).
    const double m = nearest->threads;
    const double f = std::clamp((1.0 - at / one) / (1.0 - 1.0 / m), -1.0, 1.0);
    return one * ((1.0 - f) + f / threads);
}

double CostTable::threadSwitch(NodeId to, int samples) const
{
    double bytes = 0;
    for (double b : predBytes_[static_cast<size_t>(to)])
        bytes += b;
    return edges_.latencySeconds + samples * bytes / edges_.bytesPerSecond;
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
