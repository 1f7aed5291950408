// Renders a Program as Python (docs/codegen.md shows an excerpt): model.py, a torch.nn.Module
// whose forward() runs the model serially and forward_parallel() the schedule, with the fixed
// code of templates/python/ spliced in; run.py, its benchmark; README.md.
#include "core/codegen/program.h"
#include "core/codegen/templates.h"
#include "core/util/text.h"

#include <map>
#include <set>
#include <sstream>

namespace ramiel::codegen {

namespace {

const char* torchDtype(DataType t)
{
    switch (t) {
    case DataType::Float: return "torch.float32";
    case DataType::Double: return "torch.float64";
    case DataType::Float16: return "torch.float16";
    case DataType::BFloat16: return "torch.bfloat16";
    case DataType::Int8: return "torch.int8";
    case DataType::UInt8: return "torch.uint8";
    case DataType::Int16: return "torch.int16";
    case DataType::Int32: return "torch.int32";
    case DataType::Int64: return "torch.int64";
    case DataType::Bool: return "torch.bool";
    default: return "None";
    }
}

std::string ints(const std::vector<int64_t>& v)
{
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

std::string real(double v)
{
    const std::string s = formatReal(v);
    if (s == "inf")
        return "float('inf')";
    if (s == "-inf")
        return "-float('inf')";
    if (s == "nan")
        return "float('nan')";
    return s;
}

// A bytes literal holding exactly `bytes` (fixed text such as the weights magic, not model names).
std::string bytesLiteral(std::string_view bytes)
{
    static const char hex[] = "0123456789abcdef";
    std::string s = "b'";
    for (char ch : bytes) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\n') {
            s += "\\n";
        } else if (c < 0x20 || c >= 0x7f) {
            s += {'\\', 'x', hex[c >> 4], hex[c & 15]};
        } else {
            if (c == '\\' || c == '\'')
                s += '\\';
            s += ch;
        }
    }
    return s + "'";
}

std::string integer(int64_t v) { return std::to_string(v); }

// A constant as a literal (Syntax::tensor; below).
std::string tensorLiteral(const Tensor& t);

const Syntax kSyntax{true, "True", "False", "None", "[", "]", "#", "self.", integer, torchDtype, ints, real, tensorLiteral};

// `torch.tensor([0.5, 0.7], dtype=torch.float32)`, reshaped to its dims where it has two or more.
std::string tensorLiteral(const Tensor& t)
{
    const std::string values = literalElements(t, kSyntax);
    const std::string s = "torch.tensor(" + (t.dims.empty() ? values : "[" + values + "]") + ", dtype=" + torchDtype(t.dtype) + ")";
    return t.dims.size() <= 1 ? s : s + ".reshape(" + ints(t.dims) + ")";
}

std::string dropLine(const Program& p, const std::vector<VarKey>& vars, const std::string& indent = "        ")
{
    if (vars.empty())
        return {};
    std::string s = indent + "del ";
    for (size_t k = 0; k < vars.size(); ++k)
        s += (k ? ", " : "") + p.var(vars[k].first, vars[k].second);
    return s + "\n";
}

// The left side of a node's statement: its variable, or for several outputs `a, b, _`
// ('_' for a value `used` says nothing reads).
template <typename Used>
std::string targets(const Program& p, NodeId id, int copy, Used used)
{
    std::string s;
    for (ValueId v : computedValues(p.model.graph, p.low, id))
        s += (s.empty() ? "" : ", ") + (v != kNone && used(v) ? p.var(v, copy) : std::string("_"));
    return s;
}

// The statements of p's graph in one topological order at `indent`, each value dropped after
// its last use ('del'), so memory is reused while hot.
std::string serialStatements(const Program& p, const std::string& indent)
{
    const Graph& g = p.model.graph;
    auto used = [&](ValueId v) { return !g.value(v).consumers.empty() || g.value(v).isGraphOutput; };
    const Renderer r{p, kSyntax, -1};
    std::vector<NodeId> nodes;
    const auto dropsAfter = serialDrops(p, &nodes);
    std::string s;
    for (size_t i = 0; i < nodes.size(); ++i)  // a value nothing reads is assigned to '_' (pyflakes)
        s += indent + targets(p, nodes[i], -1, used) + " = " + r.expr(p.low.nodeExpr[size_t(nodes[i])]) + "\n" +
             dropLine(p, dropsAfter[i], indent);
    return s;
}

// The graph's outputs as `return` writes them: one, or several separated by commas.
std::string returnedValues(const Program& p)
{
    const Graph& g = p.model.graph;
    const Renderer r{p, kSyntax, -1};
    std::string s;
    for (size_t k = 0; k < g.outputs().size(); ++k)
        s += (k ? ", " : "") + r.expr(Expr::val(g.outputs()[k]));
    return g.outputs().empty() ? "()" : s;
}

// The functions of p's If branches and Loop and Scan bodies (theirs first), at the module's level:
// `def then_x(a, b):`; a body returns a list (a Loop's condition, the carried values or states,
// the scan outputs' values).
void writeBranchFunctions(std::ostream& o, const Program& p)
{
    for (const auto& f : p.branches) {
        const Program& b = *f->program;
        writeBranchFunctions(o, b);
        std::string params;
        for (ValueId v : f->params)
            params += (params.empty() ? "" : ", ") + b.var(v, -1);
        o << "def " << f->name << "(" << params << "):\n"
          << "    # The " << (f->body ? "body of " + f->opType + " " : f->then ? "then branch of If " : "else branch of If ")
          << quotedForComment(f->ifName) << ".\n"
          << serialStatements(b, "    ") << "    return "
          << (f->body ? "[" + returnedValues(b) + "]" : returnedValues(b)) << "\n\n\n";
    }
}

}  // namespace

std::string renderPython(const Program& p, const std::string& command, size_t weightBytes)
{
    const Graph& g = p.model.graph;
    const Schedule& s = p.schedule;
    std::ostringstream o;
    o << "# Generated by Ramiel from " << quotedForComment(p.model.path) << ".\n"
      << "# Command: " << asciiDisplay(command) << "\n"
      << "# Schedule: " << asciiDisplay(s.algorithm) << ", " << countOf(int(s.clusters.size()), "worker") << ", batch " << s.batch
      << ", " << s.degree << (s.degree == 1 ? " copy" : " copies (sub-batches)") << "; speedup bound "
      << (p.bound > 0 ? formatFixed(p.bound, 2) + "x" : std::string("not known")) << ".\n"
      << "#\n"
      << "# " << p.className << ".forward() runs every node in one topological order. forward_parallel()\n"
      << "# runs the schedule: worker K runs _worker_K, its nodes in the schedule's global order,\n"
      << "# taking values other workers computed from one-shot slots; every wait is for a value\n"
      << "# earlier in that order, so the workers cannot deadlock. Weights are buffers read from\n"
      << "# weights.bin (raw little-endian tensors at the offsets in WEIGHTS; no pickle).\n"
      << "#\n"
      << "#   from model import " << p.className << "\n"
      << "#   net = " << p.className << "()  # loads weights.bin beside this file\n"
      << "#   with torch.inference_mode():\n"
      << "#       y = net(x)                    # serial\n"
      << "#   y = net.forward_parallel(x)       # the schedule, on " << countOf(int(s.clusters.size()), "worker thread") << "\n"
      << templates::kPythonPrelude << "\n";

    // Tables.
    size_t total = 0;
    const auto layout = weightLayout(p, &total);
    o << "WEIGHTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'weights.bin')\n"
      << "WEIGHTS_BYTES = " << weightBytes << "\n"
      << "# (buffer, dtype, shape, offset in bytes, ONNX name)\nWEIGHTS = [\n";
    for (const WeightEntry& e : layout) {
        const Tensor& t = *p.low.constants.at(e.value);
        o << "    (" << pythonLiteral(p.weightMember.at(e.value)) << ", " << torchDtype(t.dtype) << ", " << ints(t.dims)
          << ", " << e.offset << ", " << pythonLiteral(g.value(e.value).name) << "),\n";
    }
    o << "]\n# (ONNX name, dtype, shape at batch " << s.batch << ")\nINPUTS = [\n";
    for (ValueId v : p.low.inputs) {
        const std::vector<int64_t> dims = p.inputDims(v);
        o << "    (" << pythonLiteral(g.value(v).name) << ", " << torchDtype(g.value(v).type.dtype) << ", " << ints(dims)
          << "),\n";
    }
    o << "]\n# (ONNX name, file written by run.py --save-outputs)\nOUTPUTS = [\n";
    for (size_t k = 0; k < g.outputs().size(); ++k)
        o << "    (" << pythonLiteral(g.value(g.outputs()[k]).name) << ", " << pythonLiteral(p.outputFiles[k]) << "),\n";
    o << "]\nTHREADS = [";
    for (size_t c = 0; c < p.threads.size(); ++c)
        o << (c ? ", " : "") << p.threads[c];
    o << "]  # intra-op threads of each worker\n"
      << "BOUND = " << (p.bound > 0 ? formatFixed(p.bound, 2) : std::string("0")) << "  # the schedule's speedup bound: serial cost / max(critical path, work / workers)\n"
      << "SLOTS = " << p.slotCount << "  # values handed from one worker to another in each run\n\n\n"
      << fillTemplate(templates::kPythonWeights, {{"RAMIEL_WEIGHTS_MAGIC", bytesLiteral(kWeightsMagic)}}) << "\n\n"
      << templates::kPythonOnednn << "\n\n" << templates::kPythonSlots << "\n\n"
      << (callsFunction(p, kRecurrentHelpers) ? std::string(templates::kPythonRecurrent) + "\n\n" : std::string())
      << (callsFunction(p, kLoopHelpers) ? std::string(templates::kPythonLoops) + "\n\n" : std::string())
      << (callsFunction(p, kVolumetricHelpers) ? std::string(templates::kPythonVolumetric) + "\n\n" : std::string())
      << (callsFunction(p, kIndexingHelpers) ? std::string(templates::kPythonIndexing) + "\n\n" : std::string())
      << (callsFunction(p, kShapeHelpers) ? std::string(templates::kPythonShapes) + "\n\n" : std::string())
      << (callsFunction(p, kSignalHelpers) ? std::string(templates::kPythonSignal) + "\n\n" : std::string())
      << (callsFunction(p, kTrainingHelpers) ? std::string(templates::kPythonTraining) + "\n\n" : std::string())
      << (callsFunction(p, kDetectionHelpers) ? std::string(templates::kPythonDetection) + "\n\n" : std::string())
      << (callsFunction(p, kQuantizedHelpers) ? std::string(templates::kPythonQuantized) + "\n\n" : std::string());
    writeBranchFunctions(o, p);

    std::ostringstream m;  // the generated methods
    // forward(): serial.
    auto outputList = [&](auto&& spell) {
        std::string r;
        for (size_t k = 0; k < g.outputs().size(); ++k)
            r += (k ? ", " : "") + spell(k);
        return g.outputs().size() == 1 ? r : (g.outputs().size() == 0 ? "()" : r);
    };
    std::string params;
    for (ValueId v : p.low.inputs)
        params += ", " + p.var(v, -1);
    m << "    @torch.inference_mode()\n"
      << "    @counts_nonfinite_inputs\n"
      << "    def forward(self" << params << "):\n"
      << "        \"\"\"Every node in one topological order.\"\"\"\n";
    m << serialStatements(p, "        ") << "        return " << returnedValues(p) << "\n\n";

    // forward_parallel(): the schedule.
    std::string args;
    for (ValueId v : p.low.inputs)
        args += (args.empty() ? "" : ", ") + p.var(v, -1);
    m << "    @counts_nonfinite_inputs\n"
      << "    def forward_parallel(self" << params << "):\n"
      << "        \"\"\"The schedule on " << countOf(int(p.clusters.size()), "worker thread") << " (the same result as forward()).\"\"\"\n"
      << "        return self._run_schedule([" << args << "])\n\n";

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
        m << "    def _worker_" << c << "(self, inputs, slots):\n"
          << "        \"\"\"Worker " << c << ": " << computes << " nodes";
        if (clones)
            m << " (" << clones << " of them clones: also computed by their owner, to save a hand-off)";
        m << "; publishes " << publishes << " values";
        for (const auto& [from, names] : waits) {
            m << "; waits for " << names.size() << " from worker " << from << " (";
            for (size_t k = 0; k < names.size() && k < 4; ++k)
                m << (k ? ", " : "") << names[k];
            m << (names.size() > 4 ? ", ..." : "") << ")";
        }
        m << ".\"\"\"\n";
        if (p.clusters[c].empty())
            m << "        pass\n";
        std::set<std::pair<ValueId, int>> used;
        for (const Step& st : p.clusters[c]) {
            if (st.kind == Step::Kind::Publish)
                used.insert({st.value, st.copy});
            if (st.kind == Step::Kind::Compute)
                for (ValueId v : readValues(g, st.node))
                    used.insert({v, st.copy});
        }
        const auto drops = lastUses(clusterUses(p, c), {});
        for (size_t i = 0; i < p.clusters[c].size(); ++i) {
            const Step& st = p.clusters[c][i];
            Renderer r{p, kSyntax, st.copy};
            switch (st.kind) {
            case Step::Kind::BindInput:
                m << "        " << p.var(st.value, st.copy) << " = inputs[" << st.input << "]";
                if (s.degree > 1)
                    m << "[" << p.copyOffset[size_t(st.copy)] << ":"
                      << p.copyOffset[size_t(st.copy)] + s.subBatch[size_t(st.copy)] << "]";
                m << "\n";
                break;
            case Step::Kind::Wait:
                m << "        " << p.var(st.value, st.copy) << " = slots[" << st.slot << "].get()  # from worker "
                  << st.otherCluster << "\n";
                break;
            case Step::Kind::Compute:
                m << "        "
                  << targets(p, st.node, st.copy, [&](ValueId v) { return used.count({v, st.copy}) != 0; }) << " = "
                  << r.expr(p.low.nodeExpr[size_t(st.node)]) << (st.clone ? "  # clone" : "") << "\n";
                break;
            case Step::Kind::Publish:
                m << "        slots[" << st.slot << "].put(" << p.var(st.value, st.copy) << ")\n";
                break;
            }
            m << dropLine(p, drops[i]);
        }
        m << "\n";
    }

    // The graph outputs, from the slots (copies concatenated along the batch).
    m << "    def _outputs(self, inputs, slots):\n        return " << outputList([&](size_t k) {
        const OutputSource& out = p.outputs[k];
        if (out.kind == OutputSource::Kind::Weight)
            return "self." + p.weightMember.at(out.value);
        if (out.kind == OutputSource::Kind::Input)
            return "inputs[" + std::to_string(out.input) + "]";
        if (out.slots.size() == 1)
            return "slots[" + std::to_string(out.slots[0]) + "].get()";
        std::string cat = "torch.cat([";
        for (size_t j = 0; j < out.slots.size(); ++j)
            cat += (j ? ", " : "") + std::string("slots[") + std::to_string(out.slots[j]) + "].get()";
        return cat + "], dim=0)";
    }) << "\n";

    std::string methods = m.str();
    o << fillTemplate(templates::kPythonModule, {{"RAMIEL_CLASS", p.className}, {"RAMIEL_METHODS", methods}});
    return o.str();
}

std::string renderPythonRun(const Program& p, const std::string& command)
{
    std::ostringstream o;
    o << "#!/usr/bin/env python3\n"
      << "# Generated by Ramiel from " << quotedForComment(p.model.path) << ".\n"
      << "# Command: " << asciiDisplay(command) << "\n"
      << "#\n"
      << "# Runs model.py's " << p.className << " serially and in parallel, checks that both agree,\n"
      << "# and times them (serial and parallel alternating; medians).\n"
      << "# Usage: python3 run.py [--input [NAME=]X.npy ...] [--save-outputs DIR] [--runs N] [--serial-threads N]\n"
      << fillTemplate(templates::kPythonMain, {{"RAMIEL_CLASS", p.className}});
    return o.str();
}

std::string renderReadme(const Program& p, const std::string& command, bool python)
{
    const Schedule& s = p.schedule;
    std::ostringstream o;
    o << "# " << p.className << ", generated by Ramiel\n\n"
      << "Made by `" << asciiDisplay(command) << "` from `" << asciiDisplay(p.model.path) << "`: "
      << asciiDisplay(s.algorithm) << " schedule on " << countOf(int(s.clusters.size()), "worker") << " (intra-op threads ";
    for (size_t c = 0; c < p.threads.size(); ++c)
        o << (c ? ", " : "") << p.threads[c];
    o << "), batch " << s.batch << ", " << s.degree << (s.degree == 1 ? " copy" : " copies")
      << (p.bound > 0 ? ", speedup bound " + formatFixed(p.bound, 2) + "x" : std::string()) << ".\n\n";
    if (python) {
        o << "| file | what |\n|---|---|\n"
          << "| `model.py` | `" << p.className << "`, a `torch.nn.Module`: `forward()` serial, `forward_parallel()` the schedule |\n"
          << "| `run.py` | runs both, checks that they agree, times them |\n"
          << "| `weights.bin` | the weights, raw (no pickle), read by `model.py` |\n\n"
          << "```sh\n"
          << "python3 run.py --runs 20                 # serial and parallel timings, threads, bound, speedup\n"
          << "python3 run.py --input x.npy --save-outputs out/   # or --input NAME=x.npy per graph input\n"
          << "```\n\n"
          << "From your own code (with this folder on `sys.path`):\n\n"
          << "```python\n"
          << "import torch\n"
          << "from model import " << p.className << "\n\n"
          << "net = " << p.className << "()\n"
          << "with torch.inference_mode():\n"
          << "    y = net(x)                  # serial\n"
          << "y = net.forward_parallel(x)     # the schedule, on " << countOf(int(s.clusters.size()), "worker thread") << "\n"
          << "```\n\n"
          << "Convolutions and max pooling run as oneDNN primitives made once each, through ctypes in the\n"
          << "`libdnnl.so.2` (oneDNN 2) that libtorch runs on; without it, through PyTorch's operators.\n"
          << "`run.py` starts itself with `glibc.malloc.hugetlb=1` in `GLIBC_TUNABLES` (huge pages for the\n"
          << "heap, a few per cent faster); start your own program with it for the same.\n";
    } else {
        o << "| file | what |\n|---|---|\n"
          << "| `main.cpp` | the model (`forward()` serial, `forwardParallel()` the schedule) and a benchmark `main()` |\n"
          << "| `CMakeLists.txt` | builds `model` against libtorch and oneDNN |\n"
          << "| `weights.bin` | the weights, raw, read at start |\n\n"
          << "```sh\n"
          << "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build\n"
          << "./build/model --runs 20                  # serial and parallel timings, threads, bound, speedup\n"
          << "./build/model --input x.npy --save-outputs out/    # or --input NAME=x.npy per graph input\n"
          << "```\n\n"
          << "Convolutions and max pooling run as oneDNN primitives made once each, through oneDNN's own\n"
          << "API: CMake looks for its headers (Debian: `libdnnl-dev`, the oneDNN that libtorch links).\n"
          << "Without them, or with `-DMODEL_USE_ONEDNN=OFF`, they run through libtorch's operators,\n"
          << "which are slower (GoogLeNet at batch 1, one thread: 18.5 against 16.1 ms). `model` starts\n"
          << "itself with `glibc.malloc.hugetlb=1` added to `GLIBC_TUNABLES` (huge pages for the heap)\n"
          << "unless that names `glibc.malloc.hugetlb` already. Where LLVM's OpenMP runtime is installed\n"
          << "(Debian: `libomp5-14`), CMake links it ahead of libtorch's libgomp, whose place it takes, as\n"
          << "Ramiel's own programs run: its parallel regions cost about half as much.\n";
    }
    return o.str();
}

}  // namespace ramiel::codegen
