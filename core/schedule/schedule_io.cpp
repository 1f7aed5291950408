#include "core/schedule/schedule_io.h"

#include "core/util/error.h"

namespace ramiel {

nlohmann::json scheduleToJson(const Schedule& s)
{
    return {{"algorithm", s.algorithm}, {"workers", s.workers},     {"batch", s.batch},
            {"degree", s.degree},       {"sub_batch", s.subBatch},  {"nodes_per_copy", s.nodesPerCopy},
            {"clusters", s.clusters},   {"owner", s.owner},         {"rank", s.rank},
            {"threads", s.threads},     {"worker_threads", s.workerThreads}};
}

Schedule scheduleFromJson(const nlohmann::json& j)
{
    Schedule s;
    try {
        s.algorithm = j.at("algorithm").get<std::string>();
        s.workers = j.at("workers").get<int>();
        s.batch = j.at("batch").get<int>();
        s.degree = j.at("degree").get<int>();
        s.subBatch = j.at("sub_batch").get<std::vector<int>>();
        s.nodesPerCopy = j.at("nodes_per_copy").get<int32_t>();
        s.clusters = j.at("clusters").get<std::vector<std::vector<InstanceId>>>();
        s.owner = j.at("owner").get<std::vector<int32_t>>();
        s.rank = j.at("rank").get<std::vector<int32_t>>();
        s.threads = j.at("threads").get<std::vector<int32_t>>();
        s.workerThreads = j.value("worker_threads", std::vector<int32_t>{});
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::Usage, {}, std::string("not a schedule: ") + e.what());
    }
    return s;
}

void checkScheduleFits(const Schedule& s, const Topology& topo)
{
    const size_t instances = size_t(s.nodesPerCopy) * s.subBatch.size();
    if (s.nodesPerCopy != int32_t(topo.nodeCount()) || s.degree != int(s.subBatch.size()) ||
        s.owner.size() != instances || s.rank.size() != instances ||
        (!s.threads.empty() && s.threads.size() != instances) ||
        (!s.workerThreads.empty() && s.workerThreads.size() != s.clusters.size()))
        throw Error(ErrorKind::Usage, {}, "the schedule is not one of this model (its sizes differ)");
    for (const auto& cluster : s.clusters)
        for (InstanceId i : cluster)
            if (i < 0 || size_t(i) >= instances)
                throw Error(ErrorKind::Usage, {}, "the schedule names an instance the model does not have");
    for (int32_t t : s.threads)
        if (t < 0 || t > 1024)
            throw Error(ErrorKind::Usage, {}, "the schedule gives an item " + std::to_string(t) + " threads");
    for (int32_t t : s.workerThreads)
        if (t < 1 || t > 1024)
            throw Error(ErrorKind::Usage, {}, "the schedule gives a worker " + std::to_string(t) + " threads");
}

Schedule scheduleFromJson(const nlohmann::json& j, const Topology& topo)
{
    Schedule s = scheduleFromJson(j);
    checkScheduleFits(s, topo);
    return s;
}

}  // namespace ramiel
