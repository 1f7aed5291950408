// Scheduling benchmarks: planning time on inception_v3 and on a synthetic
// 10,000-node DAG, and the simulated speedups of every scheduler on the
// torchvision exports. Prints figures; asserts nothing.
//
//   ./build/bin/bench_schedule build/models [--machine FILE]
#include "core/analysis/metrics.h"
#include "core/ir/synthetic.h"
#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/schedule/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace ramiel;

namespace {

double seconds(const std::chrono::steady_clock::time_point& t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median wall time of the whole planning pipeline (scheduler, merging,
// cloning, simulation, validation) over `runs` runs.
double medianPlanSeconds(const SchedulingProblem& p, const std::string& algo, int runs)
{
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        planSchedule(p, algo);
        t.push_back(seconds(t0));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_schedule MODELS_DIR [--machine FILE]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const std::string machineFile = argc >= 4 && std::string(argv[2]) == "--machine" ? argv[3] : "";
    const MachineConstants machine = obtainMachineConstants(machineFile);
    std::printf("machine constants: %.1f GFLOP/s, %.1f GB/s, %.2f us overhead (%s); edge latency 20 us\n\n",
                machine.flopsPerSecond / 1e9, machine.bytesPerSecond / 1e9, machine.overheadSeconds * 1e6,
                machine.source.c_str());
    EdgeCostParameters edges;
    edges.bytesPerSecond = machine.bytesPerSecond;

    struct Loaded {
        std::string name;
        Model model;
        Topology topo;
        std::unique_ptr<CostTable> costs;
    };
    std::vector<std::unique_ptr<Loaded>> models;
    for (const char* name : {"googlenet", "inception_v3", "squeezenet1_0", "resnet18", "densenet121", "mobilenet_v2"}) {
        auto l = std::make_unique<Loaded>();
        l->name = name;
        l->model = loadOnnx(dir + "/" + name + ".onnx");
        l->topo = buildTopology(l->model.graph);
        l->costs = std::make_unique<CostTable>(
            CostTable::fromStatic(l->model.graph, l->topo, estimateCosts(l->model.graph), machine, edges));
        models.push_back(std::move(l));
    }
    auto problem = [](const Loaded& l, int workers, int batch = 1, int degree = 1) {
        return SchedulingProblem::of(l.model.graph, l.topo, *l.costs, workers, batch, degree);
    };

    std::printf("Planning time, whole pipeline (median of 9), P = 4, batch 1:\n");
    for (const auto& l : models)
        if (l->name == "inception_v3")
            for (const SchedulerInfo& s : schedulers())
                std::printf("  inception_v3 (%zu nodes)  %-7s %8.2f ms\n", l->model.graph.nodeCount(), s.name.c_str(),
                            medianPlanSeconds(problem(*l, 4), s.name, 9) * 1e3);

    {
        const SyntheticDag d = randomDag(10000, 42, 24, 3);
        const Topology topo = buildTopology(d.graph);
        const CostTable costs = CostTable::fromSeconds(topo, d.seconds, edges, 64 * 1024);
        const SchedulingProblem p = SchedulingProblem::of(d.graph, topo, costs, 8);
        for (const SchedulerInfo& s : schedulers())
            std::printf("  synthetic DAG (10000 nodes, %zu edges) P = 8  %-7s %8.1f ms\n", topo.edgeCount,
                        s.name.c_str(), medianPlanSeconds(p, s.name, 3) * 1e3);
    }

    std::printf("\nSimulated speedup over one-thread serial, batch 1 (static costs; bound = T1/T-inf):\n");
    std::printf("| model | T1/T-inf |");
    const int cores[] = {2, 4, 8, 16};
    for (const char* a : {"linear", "dsc", "heft"})
        for (int p : cores)
            std::printf(" %s P=%d |", a, p);
    std::printf("\n|---|---|");
    for (int i = 0; i < 12; ++i)
        std::printf("---|");
    std::printf("\n");
    for (const auto& l : models) {
        const Plan base = planSchedule(problem(*l, 1), "serial");
        std::printf("| %s | %.2f |", l->name.c_str(), base.work / base.span);
        for (const char* a : {"linear", "dsc", "heft"})
            for (int p : cores)
                std::printf(" %.2f |", planSchedule(problem(*l, p), a).simulation.speedup);
        std::printf("\n");
    }

    std::printf("\nHyperclustering, batch 8, P = 4: simulated speedup over one-thread serial at batch 8:\n");
    std::printf("| model | d=1 | d=2 | d=4 | d=8 | heft d=8 |\n|---|---|---|---|---|---|\n");
    for (const auto& l : models) {
        std::printf("| %s |", l->name.c_str());
        for (int d : {1, 2, 4, 8})
            std::printf(" %.2f |", planSchedule(problem(*l, 4, 8, d), "linear").simulation.speedup);
        std::printf(" %.2f |\n", planSchedule(problem(*l, 4, 8, 8), "heft").simulation.speedup);
    }
    return 0;
}
