#include "core/pipeline/options.h"

#include "core/schedule/scheduler.h"
#include "core/util/error.h"

#include <algorithm>
#include <thread>

namespace ramiel::pipeline {

int PlanSettings::cores() const { return workers > 0 ? workers : std::max(1, int(std::thread::hardware_concurrency())); }

bool PlanSettings::operator==(const PlanSettings& o) const
{
    return algorithm == o.algorithm && workers == o.workers && batch == o.batch && degree == o.degree &&
           clone == o.clone && switching == o.switching && hybrid == o.hybrid && costs == o.costs &&
           latencyMicroseconds == o.latencyMicroseconds;
}

namespace {

std::vector<std::string> schedulerList()
{
    std::vector<std::string> names;
    for (const SchedulerInfo& s : schedulers())
        names.push_back(s.name);
    return names;
}

}  // namespace

std::string schedulerNames()
{
    std::string names;
    const auto& table = schedulers();
    for (size_t i = 0; i < table.size(); ++i)
        names += (i == 0 ? "" : i + 1 == table.size() ? " or " : ", ") + table[i].name;
    return names;
}

const std::vector<PlanOption>& planOptions()
{
    static const std::vector<PlanOption> table = {
        {"algorithm", "-a,--algo", "Algorithm", "Scheduler: " + schedulerNames(), &PlanSettings::algorithm, false, 0, 0,
         "linear", schedulerList()},
        {"workers", "-p,--cores", "Workers P", "Worker threads P: the schedule has at most P clusters",
         &PlanSettings::workers, false, 1, 1024, "this machine's cores", {}},
        {"batch", "-b,--batch", "Batch B", "Batch B, in samples of the model's own input", &PlanSettings::batch, false,
         1, 65536, "1", {}},
        {"degree", "-d,--degree", "Degree d", "Hypercluster degree d: the batch runs as d sub-batches (graph copies), 1..B",
         &PlanSettings::degree, false, 1, 65536, "1", {}},
        {"clone", "--no-clone", "Clone cheap nodes",
         "Clone cheap nodes into every cluster that reads them (the flag turns it off)", &PlanSettings::clone, true, 0, 0,
         "on", {}},
        {"switching", "--no-switching", "Hypercluster switching",
         "Hypercluster switching: rotate copies' clusters over the workers, then swap (the flag turns it off)",
         &PlanSettings::switching, true, 0, 0, "on", {}},
        {"hybrid", "--hybrid", "Hybrid (intra-op threads)",
         "Hybrid schedule: the graph's serial parts run on P intra-op threads (needs costs measured on P threads: "
         "ramiel profile --threaded P)",
         &PlanSettings::hybrid, false, 0, 0, "off", {}},
        {"costs", "--costs", "", "Node costs: 'static' (the cost model) or a measured-cost JSON file (ramiel profile -o)",
         &PlanSettings::costs, false, 0, 0, "static", {}},
        {"latency", "--latency", "",
         "Fixed cost of a value crossing clusters, in microseconds (plus bytes / bandwidth); default: the hand-off time "
         "calibrated for this machine",
         &PlanSettings::latencyMicroseconds, false, 0, 0, "calibrated", {}},
    };
    return table;
}

const PlanOption& findPlanOption(const std::string& name)
{
    for (const PlanOption& o : planOptions())
        if (o.name == name)
            return o;
    throw Error(ErrorKind::Internal, {}, "no plan option '" + name + "'");
}

std::string describePlanOptions()
{
    std::string out = "| option | name | default | what it sets |\n|---|---|---|---|\n";
    for (const PlanOption& o : planOptions()) {
        std::string flags = o.flags;
        std::replace(flags.begin(), flags.end(), ',', ' ');
        out += "| `" + flags + "` | " + o.name + " | " + o.defaultText + " | " + o.help + " |\n";
    }
    return out;
}

}  // namespace ramiel::pipeline
