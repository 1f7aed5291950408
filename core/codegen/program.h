// What both generators render: the lowered nodes, identifiers for every
// model-derived name, and for each cluster the steps its worker runs (bind an
// input slice, wait for a slot, compute a node, publish to a slot).
#pragma once

#include "core/codegen/codegen.h"
#include "core/codegen/lowering.h"
#include "core/codegen/names.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ramiel::codegen {

struct Step {
    enum class Kind { BindInput, Wait, Compute, Publish };
    Kind kind = Kind::Compute;
    ValueId value = kNone;  // BindInput, Wait, Publish: the value; Compute: the node's first output
    NodeId node = kNone;    // Compute
    int copy = 0;
    int slot = -1;          // Wait, Publish
    int input = -1;         // BindInput: index into the graph inputs
    int otherCluster = -1;  // Wait: the producer's cluster
    bool clone = false;     // Compute: a clone (computed here, published by its owner)
};

struct OutputSource {  // one graph output
    enum class Kind { Slots, Weight, Input } kind = Kind::Slots;
    std::vector<int> slots;  // by copy
    ValueId value = kNone;
    int input = -1;
};

struct Program;

// An If branch as a function of its own: its graph as a model, and that model's program
// (serial only, constants as literals), whose own branches are functions too.
struct BranchFunction {
    std::string name;  // unique among the file's branch functions
    bool then = true;
    bool body = false;            // a Loop's or Scan's body: called with its own inputs, then the outer values
    std::string opType;           // If, Loop or Scan
    std::string ifName;           // the If (Loop, Scan) node's name
    std::vector<ValueId> params;  // the outer values it reads, in its own graph (LoweredBranch::outer)
    std::unique_ptr<Model> model;
    Topology topo;
    Schedule schedule;
    std::unique_ptr<Program> program;
};

struct Program {
    const Model& model;
    const Topology& topo;
    const Schedule& schedule;
    LoweredModel low;
    std::vector<std::string> valueId;  // by value: its variable in the serial code (short, from the node's name)
    std::vector<std::vector<std::string>> copyValueId;  // d > 1: by copy, then value: its variable in that copy
    // C++: by (node, copy; -1 the serial code), the variable holding a multi-output node's vector.
    std::map<std::pair<NodeId, int>, std::string> outputsVar;
    std::string className;  // the model's class (Python module, C++ class), from the file name
    double bound = 0;       // the schedule's speedup bound (0: not known)
    std::map<ValueId, std::string> weightMember;  // by constant value
    std::vector<std::vector<Step>> clusters;
    std::vector<int> threads;  // by cluster
    std::vector<OutputSource> outputs;
    std::vector<int> copyOffset;  // first sample of each copy
    int slotCount = 0;
    std::vector<std::string> outputFiles;  // by graph output: the .npy name `ramiel run --save-outputs` uses
    // By LoweredModel::branches index: the function of each If branch the nodes call.
    std::vector<std::unique_ptr<BranchFunction>> branches;
    bool inlineConstants = false;  // constants as literals (a branch's), not weights

    Program(const Model& m, const Topology& t, const Schedule& s) : model(m), topo(t), schedule(s) {}

    // The variable holding a computed value of one copy (copy -1: the serial code).
    std::string var(ValueId v, int copy) const;
    std::string outputsVarOf(NodeId node, int copy) const;  // outputsVar's entry
    int inputIndex(ValueId v) const;  // -1 when not a graph input
    // A graph input's dimensions at the schedule's batch (a fixed first dimension scaled by
    // it); empty where the input has no shape.
    std::vector<int64_t> inputDims(ValueId v) const;
};

Program buildProgram(const CodegenRequest& request);

// The values node `id`'s statement reads: its inputs and the outer values its branches read.
std::vector<ValueId> readValues(const Graph& g, NodeId id);

// Variables to drop after each statement of a function body, so that memory is
// reused while hot (as the runtime does): a value goes after its last use.
using VarKey = std::pair<ValueId, int>;  // value, copy
std::vector<std::vector<VarKey>> lastUses(const std::vector<std::vector<VarKey>>& usesByStatement,
                                          const std::set<VarKey>& keep);
// The uses of each statement of the serial function (nodes in topological order
// with code) and of cluster c's steps.
std::vector<std::vector<VarKey>> serialUses(const Program& p, std::vector<NodeId>* nodes);
std::vector<std::vector<VarKey>> clusterUses(const Program& p, size_t cluster);
// The serial function's drops: lastUses of serialUses, graph outputs kept.
std::vector<std::vector<VarKey>> serialDrops(const Program& p, std::vector<NodeId>* nodes);

// Whether any node's expression calls one of `fns` (a template piece needed only then, such as `recurrent`).
bool callsFunction(const Program& p, const std::vector<std::string>& fns);
// The functions of the loops, recurrent, indexing, shapes, signal, training, volumetric, detection and quantized pieces (templates/python/*.py, templates/cpp/*.cpp).
inline const std::vector<std::string> kLoopHelpers = {"onnx_loop", "onnx_scan", "onnx_scan_batched"};
inline const std::vector<std::string> kRecurrentHelpers = {"recurrent", "recurrent_steps", "recurrent_batch_first",
                                                           "reverse_within"};
inline const std::vector<std::string> kIndexingHelpers = {"onnx_gather",      "onnx_gather_nd",  "onnx_gather_elements",
                                                          "onnx_scatter_elements", "onnx_scatter_nd", "onnx_one_hot",
                                                          "onnx_topk",        "onnx_trilu",      "onnx_resize_linear",
                                                          "onnx_resize_nearest", "onnx_resize_cubic",
                                                          "onnx_resize",      "onnx_compress",   "onnx_unique",
                                                          "onnx_max_pool_with_indices", "onnx_max_unpool"};
inline const std::vector<std::string> kShapeHelpers = {"sizes_of",   "onnx_reshape", "onnx_expand",  "onnx_slice",
                                                       "onnx_range", "onnx_squeeze", "onnx_reduce_sum",
                                                       "onnx_cumsum",  "onnx_pad"};
inline const std::vector<std::string> kSignalHelpers = {"onnx_window", "onnx_dft"};
inline const std::vector<std::string> kTrainingHelpers = {"onnx_dropout", "onnx_batch_norm_training"};
inline const std::vector<std::string> kVolumetricHelpers = {"conv3d", "max_pool3d"};
inline const std::vector<std::string> kDetectionHelpers = {"onnx_roi_align", "onnx_nms"};
inline const std::vector<std::string> kQuantizedHelpers = {"quantize_linear",  "dequantize_linear",       "qlinear_conv",
                                                           "qlinear_matmul",   "max_pool2d_uint8",        "integer_matmul",
                                                           "integer_conv",     "dynamic_quantize_linear",
                                                           "qlinear_conv_exact", "qlinear_matmul_exact"};

// Rendering of literals shared by both languages.
std::string formatReal(double v);  // shortest text that reads back as the same float/double

// What differs between the languages when an expression or a comment is written.
struct Syntax {
    bool python;  // function names from FunctionName::python, else ::cpp
    const char* trueWord;
    const char* falseWord;
    const char* none;
    const char* listOpen;
    const char* listClose;
    const char* comment;  // line comment marker
    const char* weights;  // what a weight's member follows: "self." (Python buffers), "w." (C++)
    std::string (*integer)(int64_t);  // C++ spells INT64_MIN so, as no literal can
    const char* (*dtype)(DataType);
    std::string (*ints)(const std::vector<int64_t>&);
    std::string (*real)(double);
    std::string (*tensor)(const Tensor&);  // a constant as a literal (Program::inlineConstants)
};

// At most this many elements in a constant written as a literal.
inline constexpr int64_t kMaxLiteralElements = 256;
// A constant's elements in a literal, comma-separated, as `syntax` spells numbers and bools.
std::string literalElements(const Tensor& t, const Syntax& syntax);

// Writes lowered expressions for one graph copy (-1: the serial code).
struct Renderer {
    const Program& p;
    const Syntax& syntax;
    int copy;

    std::string expr(const Expr& e) const;
};


// The generated files' text: Python's model.py (the module), run.py (its benchmark) and README.md.
std::string renderPython(const Program& p, const std::string& command, size_t weightBytes);
std::string renderPythonRun(const Program& p, const std::string& command);
std::string renderReadme(const Program& p, const std::string& command, bool python);
std::string renderCpp(const Program& p, const std::string& command, size_t weightBytes);
std::string renderCMake(const Program& p);

// Weights file layout: a 64-byte header, then each weight 64-byte aligned.
struct WeightEntry {
    ValueId value;
    size_t offset;
    size_t bytes;
};
std::vector<WeightEntry> weightLayout(const Program& p, size_t* totalBytes);
// The start of weights.bin: the writer puts it there, both loaders check it (their templates' placeholder
// RAMIEL_WEIGHTS_MAGIC); the C++ loader compares 16 bytes.
inline constexpr std::string_view kWeightsMagic = "RAMIEL-WEIGHTS1\n";
static_assert(kWeightsMagic.size() == 16);

// A template's text (core/codegen/templates/, embedded as templates::k...) with each placeholder
// RAMIEL_<NAME> replaced by its value; a placeholder alone on its line stands for whole lines (the value,
// complete lines, replaces that line). Throws Error(Internal) for a placeholder without a value and for a
// value whose placeholder the template lacks.
std::string fillTemplate(std::string_view text, const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace ramiel::codegen
