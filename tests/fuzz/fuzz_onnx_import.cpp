// libFuzzer target for the ONNX importer and the analysis that follows it.
// Any input must either load or raise ramiel::Error: a crash, a sanitizer
// report, a hang or another exception type is a bug. See docs/fuzzing.md.
#include "core/analysis/cost_model.h"
#include "core/analysis/metrics.h"
#include "core/ir/topology.h"
#include "core/onnx/onnx_import.h"
#include "core/util/error.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    ramiel::ImportOptions options;
    options.loadExternalData = false;  // never touch the file system
    try {
        const ramiel::Model m = ramiel::loadOnnxFromBytes(
            std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.onnx", {}, options);
        const ramiel::Topology topo = ramiel::buildTopology(m.graph);
        const auto costs = ramiel::estimateCosts(m.graph);
        ramiel::computeMetrics(m.graph, topo, costs, ramiel::costSeconds(costs, ramiel::MachineConstants{}));
    } catch (const ramiel::Error&) {
    }
    return 0;
}
