// libFuzzer target for the runtime: imports the model, runs the default graph
// passes on a copy and code generation's translation of its nodes, then compiles
// the model and runs it serially and on a 2-worker parallel schedule, on tiny
// seeded inputs. Any input must run or raise ramiel::Error; a crash, a sanitizer
// report, a hang, another exception, or a parallel run whose outputs differ from
// the serial run's is a bug.
// See docs/fuzzing.md.
#include "core/analysis/cost_model.h"
#include "core/codegen/lowering.h"
#include "core/ir/topology.h"
#include "core/onnx/onnx_import.h"
#include "core/passes/registry.h"
#include "core/runtime/runtime.h"
#include "core/schedule/scheduler.h"
#include "core/util/error.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

using namespace ramiel;

constexpr int64_t kMaxDim = 4;                       // every input dimension clamped to 1..kMaxDim
constexpr uint64_t kMaxModelBytes = 1 << 20;         // inputs and initializers together
constexpr int64_t kMaxValueBytes = int64_t(64) << 20;  // any value whose size shape inference knows

// Operators whose outputs differ from run to run by design.
bool random(const Model& m)
{
    for (const Node& n : m.graph.nodes())
        if (n.opType.rfind("Random", 0) == 0 || n.opType == "Multinomial" || n.opType == "Bernoulli" ||
            n.opType == "Dropout")
            return true;
    return false;
}

// Models that would not be cheap to run: refused before anything runs.
bool tooLarge(const Model& m)
{
    uint64_t total = 0;
    for (const Value& v : m.graph.values()) {
        if (v.isConstant()) {
            total += v.initializer->data.size();
            continue;
        }
        const auto bytes = v.type.byteSize();
        if (v.type.shape && v.type.shape->isFullyKnown() && (!bytes || *bytes > kMaxValueBytes))
            return true;
        if (v.producer == kNone && bytes)
            total += uint64_t(*bytes);
    }
    return total > kMaxModelBytes;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    runtime();  // load the module (and libtorch) before the first input, so its coverage counts from the start
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        // The declared inputs first (no inference), to fix every dimension small.
        ImportOptions probeOptions;
        probeOptions.loadExternalData = false;  // never touch the file system
        probeOptions.inferShapes = probeOptions.runChecker = false;
        const Model probe = loadOnnxFromBytes(bytes, "fuzz.onnx", {}, probeOptions);
        ImportOptions options;
        options.loadExternalData = false;
        for (ValueId v : probe.graph.inputs()) {
            const Value& value = probe.graph.value(v);
            if (value.isConstant() || !value.type.shape)
                continue;
            std::vector<int64_t> dims;
            for (const Dim& d : value.type.shape->dims)
                dims.push_back(d.isKnown() ? std::clamp<int64_t>(d.value, 1, kMaxDim) : 2);
            options.inputShapes[value.name] = dims;
        }
        const Model model = loadOnnxFromBytes(bytes, "fuzz.onnx", {}, options);
        if (tooLarge(model))
            return 0;

        try {
            Model optimized = model;
            passes::runPipeline(optimized, passes::parsePassList("default"), {});
        } catch (const Error&) {
        }
        try {  // code generation's translation of every node (no file is written)
            codegen::lowerModel(model, 1);
        } catch (const Error&) {
        }

        const auto compiled = runtime().compile(model);
        compiled->setInputs(compiled->randomInputs(1, size));
        compiled->serialExecutor(1)->run();
        const std::vector<Tensor> serial = compiled->outputs();

        const Topology topo = buildTopology(model.graph);
        const CostTable costs = CostTable::fromStatic(model.graph, topo, estimateCosts(model.graph), MachineConstants{},
                                                      EdgeCostParameters{});
        const Plan plan = planSchedule(SchedulingProblem::of(model.graph, topo, costs, 2), "linear");
        compiled->parallelExecutor(plan.schedule)->run();
        const std::vector<Tensor> parallel = compiled->outputs();
        if (!random(model))
            for (size_t i = 0; i < serial.size(); ++i)
                if (serial[i].dtype != parallel[i].dtype || serial[i].dims != parallel[i].dims ||
                    serial[i].data != parallel[i].data) {
                    std::fprintf(stderr, "output %zu of the parallel run differs from the serial run's\n", i);
                    std::abort();
                }
    } catch (const Error&) {
    }
    return 0;
}
