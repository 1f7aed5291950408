// Renders a Program as main.cpp (a class with forward() serial and forwardParallel()
// the schedule on one std::thread per worker, in ATen calls, and a benchmark main())
// and the CMakeLists.txt that builds it against libtorch. main.cpp is the model's
// tables and methods, spliced between the fixed code of templates/cpp/.
#include "core/codegen/program.h"
#include "core/codegen/templates.h"
#include "core/util/text.h"

#include <limits>
#include <map>
#include <sstream>

namespace ramiel::codegen {

namespace {

const char* atenDtype(DataType t)
{
    switch (t) {
    case DataType::Float: return "at::kFloat";
    case DataType::Double: return "at::kDouble";
    case DataType::Float16: return "at::kHalf";
    case DataType::BFloat16: return "at::kBFloat16";
    case DataType::Int8: return "at::kChar";
    case DataType::UInt8: return "at::kByte";
    case DataType::Int16: return "at::kShort";
    case DataType::Int32: return "at::kInt";
    case DataType::Int64: return "at::kLong";
    case DataType::Bool: return "at::kBool";
    default: return "at::kFloat";
    }
}

std::string integer(int64_t v)
{
    return v == std::numeric_limits<int64_t>::min() ? "INT64_MIN" : std::to_string(v);
}

std::string ints(const std::vector<int64_t>& v)
{
    std::string s = "Ints{";
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + integer(v[i]);
    return s + "}";
}

std::string real(double v)
{
    const std::string s = formatReal(v);
    if (s == "inf")
        return "kInf";
    if (s == "-inf")
        return "-kInf";
    if (s == "nan")
        return "std::numeric_limits<double>::quiet_NaN()";
    return s;
}

// A constant as a literal (Syntax::tensor; below).
std::string tensorLiteral(const Tensor& t);

// A string literal holding exactly `bytes` (fixed text such as the weights magic, not model names).
std::string bytesLiteral(std::string_view bytes)
{
    std::string s = "\"";
    for (char ch : bytes) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\n') {
            s += "\\n";
        } else if (c < 0x20 || c >= 0x7f) {
            const char octal[] = {'\\', char('0' + (c >> 6)), char('0' + (c >> 3 & 7)), char('0' + (c & 7)), 0};
            s += octal;
        } else {
            if (c == '\\' || c == '"' || c == '?')
                s += '\\';
            s += ch;
        }
    }
    return s + "\"";
}

const Syntax kSyntax{false, "true", "false", "{}", "{", "}", "//", "w.", integer, atenDtype, ints, real, tensorLiteral};

// `at::tensor(std::vector<double>{0.5, 0.7}, at::kFloat)`, integers and bools through Ints, then
// reshaped to its dims; a scalar `at::scalar_tensor(0.5, at::kFloat)`.
std::string tensorLiteral(const Tensor& t)
{
    const std::string values = literalElements(t, kSyntax);
    if (t.dims.empty())
        return "at::scalar_tensor(" + values + ", " + atenDtype(t.dtype) + ")";
    const bool floating = t.dtype == DataType::Float || t.dtype == DataType::Double;
    const std::string s = floating                    ? "at::tensor(std::vector<double>{" + values + "}, " + atenDtype(t.dtype) + ")"
                          : t.dtype == DataType::Bool ? "at::tensor(Ints{" + values + "}, at::kLong).to(at::kBool)"
                                                      : "at::tensor(Ints{" + values + "}, " + atenDtype(t.dtype) + ")";
    return t.dims.size() == 1 ? s : s + ".reshape(" + ints(t.dims) + ")";
}

std::string dropLine(const Program& p, const std::vector<VarKey>& vars)
{
    if (vars.empty())
        return {};
    std::string s = "   ";  // under the statement, indented one more
    for (const VarKey& k : vars)
        s += " " + p.var(k.first, k.second) + ".reset();";
    return s + "\n";
}

// A node's statement: `at::Tensor x = expr;`, or for several outputs the vector it gives and
// each part moved out of it.
std::string statement(const Program& p, NodeId id, int copy, const std::string& expr, const std::string& comment)
{
    const std::vector<ValueId> values = computedValues(p.model.graph, p.low, id);
    if (values.size() == 1)
        return "    at::Tensor " + p.var(values[0], copy) + " = " + expr + ";" + comment + "\n";
    const std::string all = p.outputsVarOf(id, copy);
    std::string s = "    std::vector<at::Tensor> " + all + " = " + expr + ";" + comment + "\n";
    for (size_t k = 0; k < values.size(); ++k)
        if (values[k] != kNone)
            s += "    at::Tensor " + p.var(values[k], copy) + " = std::move(" + all + "[" + std::to_string(k) + "]);\n";
    return s;
}

// The statements of p's graph in one topological order, each value dropped after its last use
// (reset()), so memory is reused while hot.
std::string serialStatements(const Program& p)
{
    const Renderer r{p, kSyntax, -1};
    std::vector<NodeId> nodes;
    const auto dropsAfter = serialDrops(p, &nodes);
    std::string s;
    for (size_t i = 0; i < nodes.size(); ++i)
        s += statement(p, nodes[i], -1, r.expr(p.low.nodeExpr[size_t(nodes[i])]), "") + dropLine(p, dropsAfter[i]);
    return s;
}

// The graph's outputs, comma-separated.
std::string returnedValues(const Program& p)
{
    const Renderer r{p, kSyntax, -1};
    std::string s;
    for (size_t k = 0; k < p.model.graph.outputs().size(); ++k)
        s += (k ? ", " : "") + r.expr(Expr::val(p.model.graph.outputs()[k]));
    return s;
}

// The functions of p's If branches (theirs first): `at::Tensor then_x(at::Tensor a, at::Tensor b)`,
// a vector for several outputs; a Loop's or Scan's body takes and gives vectors.
void writeBranchFunctions(std::ostream& o, const Program& p)
{
    for (const auto& f : p.branches) {
        const Program& b = *f->program;
        writeBranchFunctions(o, b);
        if (f->body) {  // called by onnxLoop or onnxScan with its arguments in one vector
            o << "// The body of " << f->opType << " " << quotedForComment(f->ifName) << ".\n"
              << "std::vector<at::Tensor> " << f->name << "(const std::vector<at::Tensor>& args)\n{\n";
            for (size_t k = 0; k < f->params.size(); ++k)
                o << "    at::Tensor " << b.var(f->params[k], -1) << " = args[" << k << "];\n";
            o << serialStatements(b) << "    return {" << returnedValues(b) << "};\n}\n\n";
            continue;
        }
        const bool several = b.model.graph.outputs().size() != 1;
        std::string params;
        for (ValueId v : f->params)
            params += (params.empty() ? "at::Tensor " : ", at::Tensor ") + b.var(v, -1);
        o << "// The " << (f->then ? "then" : "else") << " branch of If " << quotedForComment(f->ifName) << ".\n"
          << (several ? "std::vector<at::Tensor> " : "at::Tensor ") << f->name << "(" << params << ")\n{\n"
          << serialStatements(b) << "    return " << (several ? "{" + returnedValues(b) + "}" : returnedValues(b))
          << ";\n}\n\n";
    }
}

}  // namespace

std::string renderCMake(const Program&)
{
    return R"CM(# Generated by Ramiel: builds the model's parallel C++ code against libtorch.
#   cmake -S . -B build && cmake --build build && ./build/model
cmake_minimum_required(VERSION 3.16)
project(ramiel_generated_model CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release)
endif()
find_package(Torch REQUIRED)
find_package(Threads REQUIRED)
# MODEL_TARGET lets a parent project build several generated models side by side.
if(NOT DEFINED MODEL_TARGET)
  set(MODEL_TARGET model)
endif()
add_executable(${MODEL_TARGET} main.cpp)
target_link_libraries(${MODEL_TARGET} PRIVATE ${TORCH_LIBRARIES} Threads::Threads)
target_compile_options(${MODEL_TARGET} PRIVATE ${TORCH_CXX_FLAGS})
target_compile_definitions(${MODEL_TARGET} PRIVATE "WEIGHTS_FILE=\"${CMAKE_CURRENT_SOURCE_DIR}/weights.bin\"")
# Convolutions and max pooling as oneDNN primitives of the program's own, made once each:
# oneDNN's headers (Debian: libdnnl-dev) and the libdnnl that libtorch links. Without them (or
# with -DMODEL_USE_ONEDNN=OFF) through libtorch's operators, which are slower.
option(MODEL_USE_ONEDNN "convolutions and max pooling as oneDNN primitives (needs oneDNN's headers)" ON)
find_path(ONEDNN_INCLUDE_DIR dnnl.hpp)
find_library(ONEDNN_LIBRARY dnnl)
if(MODEL_USE_ONEDNN AND ONEDNN_INCLUDE_DIR AND ONEDNN_LIBRARY)
  target_include_directories(${MODEL_TARGET} SYSTEM PRIVATE ${ONEDNN_INCLUDE_DIR})
  target_link_libraries(${MODEL_TARGET} PRIVATE ${ONEDNN_LIBRARY})
  target_compile_definitions(${MODEL_TARGET} PRIVATE HAVE_ONEDNN=1)
elseif(MODEL_USE_ONEDNN)
  message(STATUS "oneDNN's headers (libdnnl-dev) not found: convolutions and max pooling through libtorch's operators")
endif()
# LLVM's OpenMP runtime in place of libgomp, as Ramiel's own programs run: it serves libgomp's
# entry points, and a parallel region costs about half as much. Named by the program itself, so
# that libtorch's and oneDNN's OpenMP calls bind to it (Debian: libomp5-14; without it, libgomp).
find_library(LLVM_OPENMP_LIBRARY NAMES libomp.so.5)
if(LLVM_OPENMP_LIBRARY)
  target_link_libraries(${MODEL_TARGET} PRIVATE -Wl,--push-state,--no-as-needed ${LLVM_OPENMP_LIBRARY} -Wl,--pop-state)
endif()
# The program's own loops over a tensor (at::parallel_for: the SiLU pass, detection's and
# indexing's loops) share their work among the intra-op threads only where it is compiled with
# OpenMP; otherwise each runs on its calling thread alone. Linked to the runtime above if found.
find_package(OpenMP)
if(OpenMP_CXX_FOUND)
  target_compile_options(${MODEL_TARGET} PRIVATE ${OpenMP_CXX_FLAGS})
  if(NOT LLVM_OPENMP_LIBRARY)
    target_link_libraries(${MODEL_TARGET} PRIVATE OpenMP::OpenMP_CXX)
  endif()
endif()
)CM";
}

std::string renderCpp(const Program& p, const std::string& command, size_t weightBytes)
{
    const Graph& g = p.model.graph;
    const Schedule& s = p.schedule;
    const std::string& cls = p.className;
    std::ostringstream o;
    o << "// Generated by Ramiel from " << quotedForComment(p.model.path) << ".\n"
      << "// Command: " << asciiDisplay(command) << "\n"
      << "// Schedule: " << asciiDisplay(s.algorithm) << ", " << countOf(int(s.clusters.size()), "worker") << ", batch " << s.batch
      << ", " << s.degree << (s.degree == 1 ? " copy" : " copies (sub-batches)") << "; speedup bound "
      << (p.bound > 0 ? formatFixed(p.bound, 2) + "x" : std::string("not known")) << ".\n"
      << "//\n"
      << "// " << cls << "::forward() runs every node in one topological order. forwardParallel()\n"
      << "// runs the schedule: worker K runs workerK(), its nodes in the schedule's global order,\n"
      << "// taking values other workers computed from one-shot slots; every wait is for a value\n"
      << "// earlier in that order, so the workers cannot deadlock. Weights come from weights.bin\n"
      << "// (raw little-endian tensors at the offsets in kWeights).\n"
      << "//\n"
      << "// Usage: ./model [--input [NAME=]X.npy ...] [--save-outputs DIR] [--runs N] [--serial-threads N] [--weights FILE]\n"
      << templates::kCppPrelude << "\n";

    // Weights.
    size_t total = 0;
    const auto layout = weightLayout(p, &total);
    o << "// The model's constants.\nstruct Weights {\n";
    for (const WeightEntry& e : layout)
        o << "    at::Tensor " << p.weightMember.at(e.value) << ";\n";
    o << "};\n\n"
      << "struct WeightEntry {\n    at::Tensor Weights::*member;\n    at::ScalarType dtype;\n    Ints shape;\n"
      << "    size_t offset;\n    bool channelsLast;  // weights of 2-D convolutions at::convolution runs\n"
      << "    const char* name;   // in the ONNX model\n};\n\n"
      << "constexpr size_t kWeightsBytes = " << weightBytes << ";\n"
      << "const std::vector<WeightEntry> kWeights = {\n";
    for (const WeightEntry& e : layout) {
        const Tensor& t = *p.low.constants.at(e.value);
        o << "    {&Weights::" << p.weightMember.at(e.value) << ", " << atenDtype(t.dtype) << ", " << ints(t.dims) << ", "
          << e.offset << ", " << (p.low.channelsLast.count(e.value) ? "true" : "false") << ", "
          << cppLiteral(g.value(e.value).name) << "},\n";
    }
    o << "};\n\n";
    o << fillTemplate(templates::kCppWeights, {{"RAMIEL_WEIGHTS_MAGIC", bytesLiteral(kWeightsMagic)}}) << "\n";

    // Inputs and outputs.
    o << "struct InputSpec {\n    const char* name;\n    at::ScalarType dtype;\n    Ints shape;  // at batch " << s.batch
      << "\n};\nconst std::vector<InputSpec> kInputs = {\n";
    for (ValueId v : p.low.inputs) {
        const std::vector<int64_t> dims = p.inputDims(v);
        o << "    {" << cppLiteral(g.value(v).name) << ", " << atenDtype(g.value(v).type.dtype) << ", " << ints(dims)
          << "},\n";
    }
    o << "};\n// (ONNX name, file written by --save-outputs)\nconst std::vector<std::pair<const char*, const char*>> kOutputs = {\n";
    for (size_t k = 0; k < g.outputs().size(); ++k)
        o << "    {" << cppLiteral(g.value(g.outputs()[k]).name) << ", " << cppLiteral(p.outputFiles[k]) << "},\n";
    o << "};\nconst std::vector<int> kThreads = {";
    for (size_t c = 0; c < p.threads.size(); ++c)
        o << (c ? ", " : "") << p.threads[c];
    o << "};  // intra-op threads of each worker\n"
      << "constexpr double kBound = " << (p.bound > 0 ? formatFixed(p.bound, 2) : std::string("0"))
      << ";  // the schedule's speedup bound: serial cost / max(critical path, work / workers)\n"
      << "constexpr size_t kSlots = " << p.slotCount << ";  // values handed from one worker to another in each run\n\n"
      << templates::kCppOnednn << "\n" << templates::kCppSlots << "\n"
      << (callsFunction(p, kRecurrentHelpers) ? std::string(templates::kCppRecurrent) + "\n" : std::string())
      << (callsFunction(p, kLoopHelpers) ? std::string(templates::kCppLoops) + "\n" : std::string())
      << (callsFunction(p, kVolumetricHelpers) ? std::string(templates::kCppVolumetric) + "\n" : std::string())
      << (callsFunction(p, kIndexingHelpers) ? std::string(templates::kCppIndexing) + "\n" : std::string())
      << (callsFunction(p, kShapeHelpers) ? std::string(templates::kCppShapes) + "\n" : std::string())
      << (callsFunction(p, kSignalHelpers) ? std::string(templates::kCppSignal) + "\n" : std::string())
      << (callsFunction(p, kTrainingHelpers) ? std::string(templates::kCppTraining) + "\n" : std::string())
      << (callsFunction(p, kDetectionHelpers) ? std::string(templates::kCppDetection) + "\n" : std::string())
      << (callsFunction(p, kQuantizedHelpers) ? std::string(templates::kCppQuantized) + "\n" : std::string());
    writeBranchFunctions(o, p);

    // The class, then its generated members.
    std::ostringstream decl;
    for (size_t c = 0; c < p.clusters.size(); ++c)
        decl << "    void worker" << c << "(const std::vector<at::Tensor>& inputs, Slots& slots) const;\n";
    decl << "    void runWorker(size_t k, const std::vector<at::Tensor>& inputs, Slots& slots) const;\n"
         << "    std::vector<at::Tensor> outputs(const std::vector<at::Tensor>& inputs, Slots& slots) const;\n";
    o << fillTemplate(templates::kCppModel, {{"RAMIEL_CLASS", cls}, {"RAMIEL_DECLARATIONS", decl.str()}}) << "\n";

    // forward(): serial.
    o << "std::vector<at::Tensor> " << cls << "::forward(const std::vector<at::Tensor>& inputs) const\n{\n"
      << "    const NonFiniteRun nonFiniteInputs(inputs);  // conv2d's Relu keeps NaN\n";
    for (size_t k = 0; k < p.low.inputs.size(); ++k)
        o << "    at::Tensor " << p.var(p.low.inputs[k], -1) << " = inputs[" << k << "];\n";
    o << serialStatements(p) << "    return {" << returnedValues(p) << "};\n}\n\n";

    // One method per worker.
    for (size_t c = 0; c < p.clusters.size(); ++c) {
        size_t computes = 0, clones = 0, publishes = 0;
        std::map<int, std::vector<std::string>> waits;  // by producing worker
        for (const Step& st : p.clusters[c]) {
            computes += st.kind == Step::Kind::Compute;
            clones += st.clone;
            publishes += st.kind == Step::Kind::Publish;
            if (st.kind == Step::Kind::Wait)
                waits[st.otherCluster].push_back(p.var(st.value, st.copy));
        }
        o << "// Worker " << c << ": " << computes << " nodes";
        if (clones)
            o << " (" << clones << " of them clones: also computed by their owner, to save a hand-off)";
        o << "; publishes " << publishes << " values";
        for (const auto& [from, names] : waits) {
            o << "; waits for " << names.size() << " from worker " << from << " (";
            for (size_t k = 0; k < names.size() && k < 4; ++k)
                o << (k ? ", " : "") << names[k];
            o << (names.size() > 4 ? ", ..." : "") << ")";
        }
        o << ".\nvoid " << cls << "::worker" << c
          << "([[maybe_unused]] const std::vector<at::Tensor>& inputs, [[maybe_unused]] Slots& slots) const\n{\n";
        const auto drops = lastUses(clusterUses(p, c), {});
        for (size_t i = 0; i < p.clusters[c].size(); ++i) {
            const Step& st = p.clusters[c][i];
            Renderer r{p, kSyntax, st.copy};
            switch (st.kind) {
            case Step::Kind::BindInput:
                o << "    at::Tensor " << p.var(st.value, st.copy) << " = inputs[" << st.input << "]";
                if (s.degree > 1)
                    o << ".narrow(0, " << p.copyOffset[size_t(st.copy)] << ", " << s.subBatch[size_t(st.copy)] << ")";
                o << ";\n";
                break;
            case Step::Kind::Wait:
                o << "    at::Tensor " << p.var(st.value, st.copy) << " = slots.get(" << st.slot
                  << ");  // from worker " << st.otherCluster << "\n";
                break;
            case Step::Kind::Compute:
                o << statement(p, st.node, st.copy, r.expr(p.low.nodeExpr[size_t(st.node)]), st.clone ? "  // clone" : "");
                break;
            case Step::Kind::Publish:
                o << "    slots.put(" << st.slot << ", " << p.var(st.value, st.copy) << ");\n";
                break;
            }
            o << dropLine(p, drops[i]);
        }
        o << "}\n\n";
    }
    o << "void " << cls << "::runWorker(size_t k, const std::vector<at::Tensor>& inputs, Slots& slots) const\n{\n"
      << "    switch (k) {\n";
    for (size_t c = 0; c < p.clusters.size(); ++c)
        o << "    case " << c << ": worker" << c << "(inputs, slots); break;\n";
    o << "    default: break;\n    }\n}\n\n";

    // The graph outputs, from the slots (copies concatenated along the batch).
    o << "std::vector<at::Tensor> " << cls
      << "::outputs([[maybe_unused]] const std::vector<at::Tensor>& inputs, [[maybe_unused]] Slots& slots) const\n{\n"
      << "    return {\n";
    for (const OutputSource& out : p.outputs) {
        o << "        ";
        if (out.kind == OutputSource::Kind::Weight)
            o << "w." << p.weightMember.at(out.value);
        else if (out.kind == OutputSource::Kind::Input)
            o << "inputs[" << out.input << "]";
        else if (out.slots.size() == 1)
            o << "slots.get(" << out.slots[0] << ")";
        else {
            o << "at::cat({";
            for (size_t k = 0; k < out.slots.size(); ++k)
                o << (k ? ", " : "") << "slots.get(" << out.slots[k] << ")";
            o << "}, 0)";
        }
        o << ",  // " << quotedForComment(g.value(out.value).name) << "\n";
    }
    o << "    };\n}\n\n";

    o << templates::kCppNpy << "\n" << fillTemplate(templates::kCppMain, {{"RAMIEL_CLASS", cls}});
    return o.str();
}

}  // namespace ramiel::codegen
