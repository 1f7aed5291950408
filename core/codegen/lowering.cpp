#include "core/codegen/lowering.h"

#include "core/analysis/constant_sources.h"
#include "core/analysis/finite_values.h"

#include "core/ir/batch_norm.h"
#include "core/ir/cast_target.h"
#include "core/ir/dropout.h"
#include "core/ir/fused_ops.h"
#include "core/ir/lp_pool_order.h"
#include "core/ir/pad_axes.h"
#include "core/ir/recurrent_activations.h"
#include "core/ir/slice_range.h"
#include "core/ir/split_parts.h"
#include "core/ir/window.h"
#include "core/util/error.h"
#include "core/util/text.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>

namespace ramiel::codegen {

namespace {

const std::map<std::string, FunctionName>& functionTable()
{
    static const std::map<std::string, FunctionName> table = {
        // The generated programs' own helpers, oneDNN primitives made once: a 2-D convolution
        // (Relu fused) and a linear layer (bias and GELU fused), as the runtime runs them, max
        // pooling without the indices that F.max_pool2d / at::max_pool2d compute, and layer
        // normalization and softmax along the last axis, 2.5-3x faster than ATen's
        // (templates/python/onednn.py, templates/cpp/onednn.cpp);
        // 3-D ones on them (templates/*/volumetric.*). oneDNN's max pooling does not keep a NaN:
        // the max pooling helpers take values that are finite whenever the model's inputs are
        // (finite_values.h; they look at their input only in a call whose inputs are not), and
        // ATen's (aten_max_pool*) the others.
        {"conv2d", {"conv2d", "conv2d"}},
        {"max_pool2d", {"max_pool2d", "max_pool2d"}},
        {"aten_max_pool2d", {"F.max_pool2d", "at::max_pool2d"}},
        {"aten_max_pool3d", {"F.max_pool3d", "at::max_pool3d"}},
        {"linear", {"linear", "linear"}},
        {"batched_matmul", {"batched_matmul", "batchedMatmul"}},
        {"layer_norm", {"layer_norm", "layerNorm"}},
        {"softmax", {"softmax", "softmaxAlong"}},
        {"conv3d", {"conv3d", "conv3d"}},
        {"max_pool3d", {"max_pool3d", "max_pool3d"}},
        {"convolution", {"torch.convolution", "at::convolution"}},
        {"constant_pad_nd", {"F.pad", "at::constant_pad_nd"}},
        {"max_pool1d", {"F.max_pool1d", "at::max_pool1d"}},
        {"avg_pool1d", {"F.avg_pool1d", "at::avg_pool1d"}},
        {"avg_pool2d", {"F.avg_pool2d", "at::avg_pool2d"}},
        {"avg_pool3d", {"F.avg_pool3d", "at::avg_pool3d"}},
        {"mean", {"torch.mean", "at::mean"}},
        {"addmv", {"torch.addmv", "at::addmv"}},
        {"mv", {"torch.mv", "at::mv"}},
        {"amax", {"torch.amax", "at::amax"}},
        {"logsumexp", {"torch.logsumexp", "at::logsumexp"}},
        {"relu", {"F.relu", "at::relu"}},
        {"sigmoid", {"torch.sigmoid", "at::sigmoid"}},
        {"tanh", {"torch.tanh", "at::tanh"}},
        {"exp", {"torch.exp", "at::exp"}},
        {"log", {"torch.log", "at::log"}},
        {"sqrt", {"torch.sqrt", "at::sqrt"}},
        {"neg", {"torch.neg", "at::neg"}},
        {"abs", {"torch.abs", "at::abs"}},
        {"erf", {"torch.erf", "at::erf"}},
        {"reciprocal", {"torch.reciprocal", "at::reciprocal"}},
        {"add", {"torch.add", "at::add"}},
        {"sub", {"torch.sub", "at::sub"}},
        {"rsqrt", {"torch.rsqrt", "at::rsqrt"}},
        {"det", {"torch.linalg.det", "at::linalg_det"}},
        {"bitwise_left_shift", {"torch.bitwise_left_shift", "at::bitwise_left_shift"}},
        {"bitwise_right_shift", {"torch.bitwise_right_shift", "at::bitwise_right_shift"}},
        // The signal helpers (templates/python/signal.py, templates/cpp/signal.cpp).
        {"onnx_window", {"onnx_window", "onnxWindow"}},
        {"onnx_dft", {"onnx_dft", "onnxDft"}},
        // The training helpers (templates/python/training.py, templates/cpp/training.cpp).
        {"onnx_dropout", {"onnx_dropout", "onnxDropout"}},
        {"onnx_batch_norm_training", {"onnx_batch_norm_training", "onnxBatchNormTraining"}},
        {"onnx_squeeze", {"onnx_squeeze", "onnxSqueeze"}},
        {"onnx_reduce_sum", {"onnx_reduce_sum", "onnxReduceSum"}},
        {"onnx_cumsum", {"onnx_cumsum", "onnxCumSum"}},
        {"mul", {"torch.mul", "at::mul"}},
        {"div", {"torch.div", "at::div"}},
        {"matmul", {"torch.matmul", "at::matmul"}},
        {"cat", {"torch.cat", "at::cat"}},
        {"flatten", {"torch.flatten", "at::flatten"}},
        {"reshape", {"torch.reshape", "at::reshape"}},
        {"t", {"torch.t", "at::t"}},
        {"batch_norm", {"F.batch_norm", "at::batch_norm"}},
        {"permute", {"torch.permute", "at::permute"}},
        {"ones_like", {"torch.ones_like", "at::ones_like"}},
        {"leaky_relu", {"F.leaky_relu", "at::leaky_relu"}},
        {"hardswish", {"F.hardswish", "at::hardswish"}},
        {"hardsigmoid", {"F.hardsigmoid", "at::hardsigmoid"}},
        {"gelu", {"F.gelu", "at::gelu"}},
        {"silu", {"F.silu", "at::silu"}},
        {"clamp", {"torch.clamp", "at::clamp"}},
        {"dropout", {"torch.dropout", "at::dropout"}},
        {"group_norm", {"F.group_norm", "at::group_norm"}},
        {"repeat_interleave", {"torch.repeat_interleave", "at::repeat_interleave"}},
        {"sum", {"torch.sum", "at::sum"}},
        {"vector_norm", {"torch.linalg.vector_norm", "at::linalg_vector_norm"}},
        {"amin", {"torch.amin", "at::amin"}},
        {"pow", {"torch.pow", "at::pow"}},
        {"einsum", {"torch.einsum", "at::einsum"}},
        {"select", {"torch.select", "at::select"}},
        {"narrow", {"torch.narrow", "at::narrow"}},
        {"index_select", {"torch.index_select", "at::index_select"}},
        {"flip", {"torch.flip", "at::flip"}},
        {"squeeze", {"torch.squeeze", "at::squeeze"}},
        {"unsqueeze", {"torch.unsqueeze", "at::unsqueeze"}},
        {"split", {"torch.split", "at::split_with_sizes"}},
        {"maximum", {"torch.maximum", "at::maximum"}},
        {"minimum", {"torch.minimum", "at::minimum"}},
        {"elu", {"F.elu", "at::elu"}},
        {"log1p", {"torch.log1p", "at::log1p"}},
        {"tensor", {"torch.tensor", "at::tensor"}},
        {"full", {"torch.full", "at::full"}},
        {"where", {"torch.where", "at::where"}},
        {"eq", {"torch.eq", "at::eq"}},
        {"lt", {"torch.lt", "at::lt"}},
        {"gt", {"torch.gt", "at::gt"}},
        {"logical_not", {"torch.logical_not", "at::logical_not"}},
        {"logical_and", {"torch.logical_and", "at::logical_and"}},
        {"logical_or", {"torch.logical_or", "at::logical_or"}},
        {"logical_xor", {"torch.logical_xor", "at::logical_xor"}},
        {"fmod", {"torch.fmod", "at::fmod"}},
        {"remainder", {"torch.remainder", "at::remainder"}},
        {"instance_norm", {"F.instance_norm", "at::instance_norm"}},
        // Resize as PyTorch's upsampling: F.interpolate with its mode, which C++ names in the function.
        {"interpolate_bilinear", {"F.interpolate", "at::upsample_bilinear2d"}},
        {"interpolate_nearest", {"F.interpolate", "at::upsample_nearest2d"}},
        // Pad's reflect and edge modes: F.pad with its mode, which C++ names in the function.
        {"reflection_pad1d", {"F.pad", "at::reflection_pad1d"}},
        {"reflection_pad2d", {"F.pad", "at::reflection_pad2d"}},
        {"reflection_pad3d", {"F.pad", "at::reflection_pad3d"}},
        {"replication_pad1d", {"F.pad", "at::replication_pad1d"}},
        {"replication_pad2d", {"F.pad", "at::replication_pad2d"}},
        {"replication_pad3d", {"F.pad", "at::replication_pad3d"}},
        // The generated programs' own helpers (templates/python/recurrent.py, templates/cpp/recurrent.cpp).
        {"recurrent", {"recurrent", "recurrent"}},
        {"recurrent_steps", {"recurrent_steps", "recurrentSteps"}},
        {"recurrent_batch_first", {"recurrent_batch_first", "recurrentBatchFirst"}},
        {"reverse_within", {"reverse_within", "reverseWithin"}},
        // The generated programs' ONNX indexing helpers (templates/python/indexing.py, templates/cpp/indexing.cpp).
        {"onnx_gather", {"onnx_gather", "onnxGather"}},
        {"onnx_gather_nd", {"onnx_gather_nd", "onnxGatherNd"}},
        {"onnx_scatter_elements", {"onnx_scatter_elements", "onnxScatterElements"}},
        {"onnx_topk", {"onnx_topk", "onnxTopK"}},
        {"onnx_gather_elements", {"onnx_gather_elements", "onnxGatherElements"}},
        {"onnx_trilu", {"onnx_trilu", "onnxTrilu"}},
        {"onnx_scatter_nd", {"onnx_scatter_nd", "onnxScatterNd"}},
        {"onnx_one_hot", {"onnx_one_hot", "onnxOneHot"}},
        {"onnx_resize_linear", {"onnx_resize_linear", "onnxResizeLinear"}},
        {"onnx_resize_nearest", {"onnx_resize_nearest", "onnxResizeNearest"}},
        {"onnx_resize_cubic", {"onnx_resize_cubic", "onnxResizeCubic"}},
        {"onnx_resize", {"onnx_resize", "onnxResize"}},
        {"onnx_compress", {"onnx_compress", "onnxCompress"}},
        {"onnx_unique", {"onnx_unique", "onnxUnique"}},
        {"onnx_max_pool_with_indices", {"onnx_max_pool_with_indices", "onnxMaxPoolWithIndices"}},
        {"onnx_max_unpool", {"onnx_max_unpool", "onnxMaxUnpool"}},
        // The int8 helpers (templates/python/quantized.py, templates/cpp/quantized.cpp).
        {"quantize_linear", {"quantize_linear", "quantizeLinear"}},
        {"dequantize_linear", {"dequantize_linear", "dequantizeLinear"}},
        {"qlinear_conv", {"qlinear_conv", "qlinearConv"}},
        {"qlinear_matmul", {"qlinear_matmul", "qlinearMatmul"}},
        {"max_pool2d_uint8", {"max_pool2d_uint8", "maxPool2dUint8"}},
        {"dynamic_quantize_linear", {"dynamic_quantize_linear", "dynamicQuantizeLinear"}},
        {"integer_matmul", {"integer_matmul", "integerMatmul"}},
        {"integer_conv", {"integer_conv", "integerConv"}},
        {"qlinear_conv_exact", {"qlinear_conv_exact", "qlinearConvExact"}},
        {"qlinear_matmul_exact", {"qlinear_matmul_exact", "qlinearMatmulExact"}},
        // Their shape helpers (templates/python/shapes.py, templates/cpp/shapes.cpp).
        {"sizes_of", {"sizes_of", "sizesOf"}},
        {"onnx_reshape", {"onnx_reshape", "onnxReshape"}},
        {"onnx_expand", {"onnx_expand", "onnxExpand"}},
        {"onnx_slice", {"onnx_slice", "onnxSlice"}},
        {"onnx_range", {"onnx_range", "onnxRange"}},
        {"onnx_pad", {"onnx_pad", "onnxPad"}},
        // The Loop and Scan helpers (templates/python/loops.py, templates/cpp/loops.cpp).
        {"onnx_loop", {"onnx_loop", "onnxLoop"}},
        {"onnx_scan", {"onnx_scan", "onnxScan"}},
        {"onnx_scan_batched", {"onnx_scan_batched", "onnxScanBatched"}},
        // Their detection helpers (templates/python/detection.py, templates/cpp/detection.cpp).
        {"onnx_roi_align", {"onnx_roi_align", "onnxRoiAlign"}},
        {"onnx_nms", {"onnx_nms", "onnxNms"}},
        {"nonzero", {"torch.nonzero", "at::nonzero"}},
        // GridSample: Python names the modes, C++ takes their codes.
        {"grid_sample", {"F.grid_sample", "at::grid_sampler"}},
        {"prod", {"torch.prod", "at::prod"}},
        {"ge", {"torch.ge", "at::ge"}},
        {"le", {"torch.le", "at::le"}},
        {"floor", {"torch.floor", "at::floor"}},
        {"ceil", {"torch.ceil", "at::ceil"}},
        {"round", {"torch.round", "at::round"}},
        {"sign", {"torch.sign", "at::sign"}},
        {"isnan", {"torch.isnan", "at::isnan"}},
        {"isinf", {"torch.isinf", "at::isinf"}},
        {"isposinf", {"torch.isposinf", "at::isposinf"}},
        {"isneginf", {"torch.isneginf", "at::isneginf"}},
        {"sin", {"torch.sin", "at::sin"}},
        {"cos", {"torch.cos", "at::cos"}},
        {"tan", {"torch.tan", "at::tan"}},
        {"asin", {"torch.asin", "at::asin"}},
        {"acos", {"torch.acos", "at::acos"}},
        {"atan", {"torch.atan", "at::atan"}},
        {"sinh", {"torch.sinh", "at::sinh"}},
        {"cosh", {"torch.cosh", "at::cosh"}},
        {"asinh", {"torch.asinh", "at::asinh"}},
        {"acosh", {"torch.acosh", "at::acosh"}},
        {"atanh", {"torch.atanh", "at::atanh"}},
        {"argmax", {"torch.argmax", "at::argmax"}},
        {"argmin", {"torch.argmin", "at::argmin"}},
        {"rsub", {"torch.rsub", "at::rsub"}},
        {"zeros_like", {"torch.zeros_like", "at::zeros_like"}},
        {"scalar_tensor", {"torch.scalar_tensor", "at::scalar_tensor"}},
        {"triu", {"torch.triu", "at::triu"}},
        {"tril", {"torch.tril", "at::tril"}},
        {"cumsum", {"torch.cumsum", "at::cumsum"}},
        {"log_softmax", {"F.log_softmax", "at::log_softmax"}},
        {"nll_loss", {"F.nll_loss", "at::nll_loss_nd"}},
        {"celu", {"F.celu", "at::celu"}},
        {"softplus", {"F.softplus", "at::softplus"}},
        {"pixel_shuffle", {"F.pixel_shuffle", "at::pixel_shuffle"}},
    };
    return table;
}

}  // namespace

const FunctionName& functionName(const std::string& fn)
{
    const std::map<std::string, FunctionName>& table = functionTable();
    const auto it = table.find(fn);
    if (it == table.end())
        throw Error(ErrorKind::Internal, {}, "code generation: no spelling for function '" + fn + "'");
    return it->second;
}

std::vector<std::string> helperNames()
{
    std::vector<std::string> names;
    auto bare = [](std::string_view name) { return name.find('.') == name.npos && name.find("::") == name.npos; };
    for (const auto& [fn, spelling] : functionTable())
        for (const char* name : {spelling.python, spelling.cpp})
            if (bare(name))
                names.push_back(name);
    return names;
}

namespace {

using E = Expr;

struct Context {
    const Model& model;
    const Graph& graph;
    LoweredModel& out;
    const Node& node;
    int batch;  // the samples forward() runs at once; the shapes are at batch 1
    const std::vector<bool>& finite;  // by value id: finite whenever the graph's inputs are (finite_values.h)
    const std::vector<ValueId>& sources;  // by value id: the initializer it is, through Identity nodes too (constant_sources.h)

    [[noreturn]] void unsupported(const std::string& why) const
    {
        throw Error(ErrorKind::Unsupported, model.path,
                    "code generation: operator " + printable(node.opType) + " (node '" + printable(node.name) +
                        "'): " + why);
    }
    ValueId in(size_t i) const
    {
        const ValueId v = node.input(i);
        if (v == kNone)
            unsupported("input " + std::to_string(i) + " is missing");
        return v;
    }
    bool has(size_t i) const { return node.input(i) != kNone; }
    // Input i, or the initializer it is where Identity nodes pass one on: what a kernel that
    // prepares its constant operands once reads (PyTorch's exporter shares equal initializers so).
    ValueId constantIn(size_t i) const
    {
        const ValueId v = in(i);
        return sources[size_t(v)] != kNone ? sources[size_t(v)] : v;
    }
    int64_t rank(size_t i) const
    {
        const auto& shape = graph.value(in(i)).type.shape;
        if (!shape)
            unsupported("the rank of input " + std::to_string(i) + " is unknown (fix input sizes with --shape)");
        return int64_t(shape->rank());
    }
    std::vector<int64_t> dims(ValueId v) const
    {
        const auto& shape = graph.value(v).type.shape;
        std::vector<int64_t> d;
        if (!shape)
            unsupported("the shape of '" + printable(graph.value(v).name) + "' is unknown (fix input sizes with --shape)");
        for (const Dim& x : shape->dims)
            d.push_back(x.value);
        return d;
    }
    DataType dtype(size_t i) const { return graph.value(in(i)).type.dtype; }
    std::vector<int64_t> constInts(size_t i) const
    {
        const Tensor* t = out.constant(in(i));
        if (!t)
            unsupported("input " + std::to_string(i) + " must be a constant for code generation");
        const auto ints = t->toInt64s();
        if (!ints)
            unsupported("input " + std::to_string(i) + " is not an integer tensor");
        return *ints;
    }
    std::optional<double> constScalar(size_t i) const
    {
        const Tensor* t = out.constant(in(i));
        if (!t)
            return std::nullopt;
        const auto d = t->toDoubles();
        if (!d || d->size() != 1)
            return std::nullopt;
        return (*d)[0];
    }
    // `e` gives the node's first `count` outputs as a sequence (count > 1).
    E outputs(E e, size_t count) const
    {
        out.outputCount[size_t(node.id)] = count;
        return e;
    }
    // How many of the node's outputs code must give: up to the last one read.
    size_t outputsRead() const
    {
        size_t read = 1;
        for (size_t k = 1; k < node.outputs.size(); ++k) {
            const ValueId v = node.outputs[k];
            if (v != kNone && (!graph.value(v).consumers.empty() || graph.value(v).isGraphOutput))
                read = k + 1;
        }
        return read;
    }
    void onlyFirstOutput() const
    {
        for (size_t k = 1; k < node.outputs.size(); ++k)
            if (node.outputs[k] != kNone && !graph.value(node.outputs[k]).consumers.empty())
                unsupported("output " + std::to_string(k) + " is used, which generated code does not compute");
        for (size_t k = 1; k < node.outputs.size(); ++k)
            if (node.outputs[k] != kNone && graph.value(node.outputs[k]).isGraphOutput)
                unsupported("output " + std::to_string(k) + " is a graph output, which generated code does not compute");
    }
    // Input i's axis `a` counted from the start, where `extra` more axes than i has are named
    // (Unsqueeze's); i's rank is needed only for a negative one.
    int64_t axisOf(size_t i, int64_t a, int64_t extra = 0) const
    {
        if (a >= 0 && !graph.value(in(i)).type.shape)
            return a;
        return axis(a, rank(i) + extra);
    }
    // The same, for a function that reads a negative axis as ONNX does (counted from the end):
    // a negative `a` stays so where i's rank is unknown.
    int64_t axisOrNegative(size_t i, int64_t a) const
    {
        return a < 0 && !graph.value(in(i)).type.shape ? a : axisOf(i, a);
    }
    int64_t axis(int64_t a, int64_t r) const
    {
        if (a < -r || a >= std::max<int64_t>(r, 1))
            unsupported("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(r));
        return a < 0 ? a + r : a;
    }
};

// The node's window (core/ir/window.h, as the runtime reads it), refusing what
// code generation cannot resolve: mismatched ranks and unknown sizes under auto_pad.
Window windowOf(const Context& c, const std::vector<int64_t>& kernel)
{
    const size_t d = kernel.size();
    std::vector<int64_t> spatial;
    const std::string autoPad = c.node.attrString("auto_pad", "NOTSET");
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        const auto x = c.dims(c.in(0));
        if (x.size() != d + 2)
            c.unsupported("the input's rank does not match the kernel's");
        spatial.assign(x.begin() + 2, x.end());
        for (int64_t size : spatial)
            if (size < 0)
                c.unsupported("auto_pad needs known spatial sizes (fix input sizes with --shape)");
    }
    Window w = ramiel::windowOf(c.node, kernel, spatial);
    if (w.strides.size() != d || w.dilations.size() != d)
        c.unsupported("strides or dilations do not match the kernel's rank");
    return w;
}

E constantPad(E x, const std::vector<int64_t>& atenPads, double value)
{
    return E::call("constant_pad_nd", {std::move(x), E::list(atenPads), E::real(value).named("value", value == 0.0)});
}

bool allEqual(const std::vector<int64_t>& v, int64_t x)
{
    return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
}

// A convolution's kernel sizes: its kernel_shape, else the spatial sizes of the weights at input
// `weights`; refused unless 1-D to 3-D and of the input's spatial rank.
std::vector<int64_t> convolutionKernel(const Context& c, size_t weights)
{
    std::vector<int64_t> kernel = c.node.attrInts("kernel_shape");
    if (kernel.empty()) {
        const auto w = c.dims(c.in(weights));
        if (w.size() < 3)
            c.unsupported("the weight's rank is unknown");
        kernel.assign(w.begin() + 2, w.end());
    }
    if (int64_t(kernel.size()) != c.rank(0) - 2 || kernel.empty() || kernel.size() > 3)
        c.unsupported("only 1-D, 2-D and 3-D convolutions are supported");
    return kernel;
}

// A convolution. `activation` (a FusedConv's: "Relu"; "Silu" or "HardSwish" for a 2-D one): the
// caller wants it after the convolution; `*fused` is set to true when the convolution applies it
// (the conv2d and conv3d helpers, as oneDNN's post-op), else left false for the caller to apply.
E conv(const Context& c, const std::string& activation = "", bool* fused = nullptr)
{
    const int64_t r = c.rank(0);
    const std::vector<int64_t> kernel = convolutionKernel(c, 1);
    const Window win = windowOf(c, kernel);
    E x = E::val(c.in(0));
    std::vector<int64_t> pads = win.padBegin;
    if (!win.symmetric()) {
        x = constantPad(std::move(x), win.atenPads(), 0.0);
        pads.assign(pads.size(), 0);
    }
    const int64_t groups = c.node.attrInt("group", 1);
    // As the runtime's convolution kernel: a 2-D float convolution with constant weights runs as
    // a oneDNN primitive made once (the conv2d helper), with Relu, SiLU or HardSwish fused; a 3-D
    // one through the conv3d helper (Relu only), which runs the factorized kinds on conv2d.
    auto floatConstant = [&](size_t i) {
        const Tensor* t = c.out.constant(c.constantIn(i));
        return t && t->dtype == DataType::Float;
    };
    if ((r == 4 || r == 5) && c.dtype(0) == DataType::Float && floatConstant(1) && (!c.has(2) || floatConstant(2))) {
        const bool relu = activation == "Relu";
        const bool applied = relu || (r == 4 && (activation == "Silu" || activation == "HardSwish"));
        if (fused)
            *fused = applied;
        std::vector<E> args{std::move(x), E::val(c.constantIn(1)), c.has(2) ? E::val(c.constantIn(2)) : E::none(),
                            E::list(win.strides).named("stride", allEqual(win.strides, 1)),
                            E::list(pads).named("padding", allEqual(pads, 0)),
                            E::list(win.dilations).named("dilation", allEqual(win.dilations, 1)),
                            E::integer(groups).named("groups", groups == 1)};
        if (r == 5) {
            args.push_back(E::boolean(relu).named("relu", !relu));
            return E::call("conv3d", std::move(args));
        }
        if (applied) {  // Python's keyword (relu=True), C++'s last argument (Activation::Relu)
            std::string keyword = activation;
            std::transform(keyword.begin(), keyword.end(), keyword.begin(), [](unsigned char ch) { return std::tolower(ch); });
            args.push_back(E::boolean(true).named(keyword).inPythonOnly());
            args.push_back(E::symbol("Activation::" + activation).inCppOnly());
        }
        return E::call("conv2d", std::move(args));
    }
    if (r == 4 && c.out.isConstant(c.in(1)))
        c.out.channelsLast.insert(c.in(1));
    return E::call("convolution", {std::move(x), E::val(c.in(1)), c.has(2) ? E::val(c.in(2)) : E::none(),
                                   E::list(win.strides), E::list(pads), E::list(win.dilations), E::boolean(false),
                                   E::list(std::vector<int64_t>(pads.size(), 0)), E::integer(groups)});
}

// As pool() in kernels_neural.cpp.
E pool(const Context& c, bool max, bool includePad)
{
    const auto kernel = c.node.attrInts("kernel_shape");
    const int64_t r = c.rank(0);
    if (kernel.empty() || kernel.size() > 3 || int64_t(kernel.size()) != r - 2)
        c.unsupported("only 1-D, 2-D and 3-D pooling is supported");
    const DataType t = c.dtype(0);
    const Window w = windowOf(c, kernel);
    const size_t d = kernel.size();
    // MaxPool's indices, as the runtime computes them: 2-D, pads the same at both ends.
    if (max && c.outputsRead() == 2) {
        if (d != 2 || !w.symmetric() || w.padBegin[0] * 2 > w.kernel[0] || w.padBegin[1] * 2 > w.kernel[1] ||
            (t != DataType::Float && t != DataType::Double))
            c.unsupported("the indices are generated for 2-D float pooling with pads the same at both ends, at most "
                          "half the kernel");
        return c.outputs(E::call("onnx_max_pool_with_indices",
                                 {E::val(c.in(0)), E::list(w.kernel), E::list(w.strides), E::list(w.padBegin),
                                  E::list(w.dilations), E::boolean(w.ceil),
                                  E::boolean(c.node.attrInt("storage_order", 0) != 0)}),
                         2);
    }
    c.onlyFirstOutput();
    if (max && c.node.attrInt("storage_order", 0) != 0)
        c.unsupported("storage_order = 1 is not supported");
    // uint8 max pooling (the quantize pass keeps pooled values in int8), as the runtime: the
    // quantized kernel, which skips padded cells.
    if (max && t == DataType::UInt8 && d == 2 && w.symmetric() && w.padBegin[0] * 2 <= w.kernel[0] &&
        w.padBegin[1] * 2 <= w.kernel[1])
        return E::call("max_pool2d_uint8", {E::val(c.in(0)), E::list(w.kernel), E::list(w.strides),
                                             E::list(w.padBegin).named("padding", allEqual(w.padBegin, 0)),
                                             E::list(w.dilations).named("dilation", allEqual(w.dilations, 1)),
                                             E::boolean(w.ceil).named("ceil_mode", !w.ceil)});
    if (t != DataType::Float && t != DataType::Double)
        c.unsupported("pooling is generated for float and double tensors, and uint8 max pooling in two dimensions");
    bool padded = !w.symmetric();
    for (size_t i = 0; i < d && !padded; ++i)
        padded = w.padBegin[i] * 2 > w.kernel[i];
    E x = E::val(c.in(0));
    std::vector<int64_t> p = padded ? std::vector<int64_t>(d, 0) : w.padBegin;
    const std::string suffix = std::to_string(d) + "d";
    // The helpers (oneDNN's max pooling) for 2-D and 3-D inputs that are finite whenever the
    // model's inputs are; ATen's for the others, which carry a NaN through.
    const std::string maxPool = (d >= 2 && !readsFiniteValues(c.node, c.finite) ? "aten_max_pool" : "max_pool") + suffix;
    auto run = [&](E input, bool include) {
        E kernelSize = E::list(w.kernel).named("kernel_size"), stride = E::list(w.strides).named("stride"),
          padding = E::list(p).named("padding", allEqual(p, 0)), ceil = E::boolean(w.ceil).named("ceil_mode", !w.ceil);
        if (max)
            return E::call(maxPool, {std::move(input), kernelSize, stride, padding,
                                                 E::list(w.dilations).named("dilation", allEqual(w.dilations, 1)), ceil});
        return E::call("avg_pool" + suffix, {std::move(input), kernelSize, stride, padding, ceil,
                                             E::boolean(include).named("count_include_pad", include)});
    };
    if (!padded)
        return run(x, includePad);
    E input = constantPad(x, w.atenPads(), max ? -std::numeric_limits<double>::infinity() : 0.0);
    if (max || includePad)
        return run(std::move(input), includePad);
    // Padded cells must not count: divide by each window's real cell count.
    return E::call("div", {run(std::move(input), true), run(constantPad(E::call("ones_like", {x}), w.atenPads(), 0.0), true)});
}

std::vector<int64_t> spatialDims(int64_t rank)
{
    std::vector<int64_t> d;
    for (int64_t i = 2; i < rank; ++i)
        d.push_back(i);
    return d;
}

bool isFloating(DataType t) { return t == DataType::Float || t == DataType::Double || t == DataType::Float16 || t == DataType::BFloat16; }

// The element types the generated code names (torch.float32 / at::kFloat ...).
bool castable(DataType t)
{
    return isFloating(t) || t == DataType::Int8 || t == DataType::UInt8 || t == DataType::Int16 || t == DataType::Int32 ||
           t == DataType::Int64 || t == DataType::Bool;
}

// The integers of a Slice, Squeeze or Unsqueeze list: an attribute before `inputSince`,
// else a constant input (absent: empty).
std::vector<int64_t> listOf(const Context& c, size_t input, const char* attr, int64_t inputSince)
{
    if (c.node.opset < inputSince)
        return c.node.attrInts(attr);
    return c.has(input) ? c.constInts(input) : std::vector<int64_t>{};
}

// As the runtime's Slice kernel: each axis in turn. A positive step keeps the bounds as
// written (Python's slices and ATen's slice clamp them as ONNX does, whatever the
// batch); a negative one is the forward slice of the same elements, flipped, computed
// from the known size, so only at batch 1.
E slice(const Context& c)
{
    if (c.node.opset >= 10)
        for (size_t i = 1; i <= 4; ++i)
            if (c.has(i) && !c.out.isConstant(c.in(i))) {  // bounds computed when the code runs
                std::vector<E> args{E::val(c.in(0))};
                for (size_t k = 1; k <= 4; ++k)
                    args.push_back(c.has(k) ? E::val(c.in(k)) : E::none());
                return E::call("onnx_slice", std::move(args));
            }
    const auto starts = listOf(c, 1, "starts", 10), ends = listOf(c, 2, "ends", 10);
    auto axes = listOf(c, 3, "axes", 10);
    const auto steps = c.node.opset < 10 ? std::vector<int64_t>{} : listOf(c, 4, "", 10);
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i)
            axes.push_back(int64_t(i));
    if (starts.size() != axes.size() || ends.size() != axes.size() || (!steps.empty() && steps.size() != axes.size()))
        c.unsupported("starts, ends, axes and steps differ in length");
    E y = E::val(c.in(0));
    std::vector<int64_t> seen;
    for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t axis = c.axisOf(0, axes[i]);
        if (std::count(seen.begin(), seen.end(), axis))
            c.unsupported("axes name axis " + std::to_string(axis) + " twice");
        seen.push_back(axis);
        const int64_t step = steps.empty() ? 1 : steps[i];
        if (step == 0)
            c.unsupported("step 0");
        int64_t start = starts[i], end = ends[i];
        if (step > 0) {
            // Bounds past 2^62 from zero read as that far, which no axis reaches (PyTorch's
            // Python indexing refuses INT64_MIN).
            constexpr int64_t far = int64_t(1) << 62;
            const bool toEnd = end >= far;
            start = std::clamp(start, -far, far);
            if (start == 0 && step == 1 && toEnd)
                continue;  // the whole axis
            y = E::slice(std::move(y), axis, start, toEnd ? E::kToEnd : std::max(end, -far), step);
            continue;
        }
        const int64_t size = c.dims(c.in(0))[size_t(axis)];
        if (size < 0 || c.batch != 1)
            c.unsupported("a negative step needs the axis's size, known at batch 1 only");
        int64_t clamped = step;
        clampSlice(size, clamped, start, end);
        const int64_t stride = -clamped;
        if (start <= end) {
            y = E::slice(std::move(y), axis, 0, 0, 1);  // no element
            continue;
        }
        const int64_t count = (start - end + stride - 1) / stride, first = start - (count - 1) * stride;
        y = E::call("flip", {E::slice(std::move(y), axis, first, start + 1, stride), E::list({axis})});
    }
    return y;
}

// As the runtime's Gather kernel: one constant index (Swin's q, k, v = qkv[0], qkv[1],
// qkv[2]) is `select` (or `narrow` keeping the axis), a constant list `index_select`; any
// other indices (a matrix, computed ones, ones counting from the end) the `onnx_gather` helper.
E gather(const Context& c)
{
    const int64_t axis = c.axisOrNegative(0, c.node.attrInt("axis", 0));
    if (c.dtype(1) != DataType::Int64 && c.dtype(1) != DataType::Int32)
        c.unsupported("the indices are not int32 or int64");
    const E x = E::val(c.in(0)), dim = E::integer(axis);
    const Tensor* indices = c.out.constant(c.in(1));
    const auto values = indices ? indices->toInt64s() : std::nullopt;
    const bool forward = values && std::none_of(values->begin(), values->end(), [](int64_t v) { return v < 0; });
    if (!forward || indices->dims.size() > 1)
        return E::call("onnx_gather", {x, dim, E::val(c.in(1))});
    if (values->size() == 1)
        return indices->dims.empty()
                   ? E::call("select", {x, dim.named("dim"), E::integer((*values)[0]).named("index")})
                   : E::call("narrow", {x, dim.named("dim"), E::integer((*values)[0]).named("start"), E::integer(1).named("length")});
    return E::call("index_select", {x, dim.named("dim"), E::val(c.in(1)).named("index")});
}

// A reduction's axes: from the attribute, or the constant input since `inputSince`; none:
// every axis, or (nullopt) no reduction with noop_with_empty_axes.
std::optional<std::vector<int64_t>> reduceAxes(const Context& c, int64_t inputSince)
{
    std::vector<int64_t> axes = listOf(c, 1, "axes", inputSince);
    if (axes.empty()) {
        if (c.node.opset >= inputSince && c.node.attrInt("noop_with_empty_axes", 0) != 0)
            return std::nullopt;
        for (int64_t i = 0; i < c.rank(0); ++i)
            axes.push_back(i);
    }
    for (size_t i = 0; i < axes.size(); ++i) {
        axes[i] = c.axisOf(0, axes[i]);
        if (std::count(axes.begin(), axes.begin() + i, axes[i]))
            c.unsupported("axes name axis " + std::to_string(axes[i]) + " twice");
    }
    return axes;
}

// ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd (reduceAxes). torch.prod takes one
// axis at a time: the last first.
E reduce(const Context& c, const char* fn, int64_t inputSince)
{
    const bool keep = c.node.attrInt("keepdims", 1) != 0;
    if (std::string(fn) == "mean" && !isFloating(c.dtype(0)))
        c.unsupported("ReduceMean is generated for floating-point tensors only");
    if (std::string(fn) == "sum" && c.node.opset >= inputSince && c.has(1) && !c.out.isConstant(c.in(1)))
        return E::call("onnx_reduce_sum", {E::val(c.in(0)), E::val(c.in(1)), E::boolean(keep),
                                           E::boolean(c.node.attrInt("noop_with_empty_axes", 0) != 0)});
    if (!keep && listOf(c, 1, "axes", inputSince).empty() &&
        !(c.node.opset >= inputSince && c.node.attrInt("noop_with_empty_axes", 0) != 0))
        return E::call(fn, {E::val(c.in(0))});  // one number, whatever the rank
    std::optional<std::vector<int64_t>> reduced = reduceAxes(c, inputSince);
    if (!reduced)
        return E::val(c.in(0));
    std::vector<int64_t> axes = std::move(*reduced);
    if (std::string(fn) != "prod")
        return E::call(fn, {E::val(c.in(0)), E::list(axes).named("dim"), E::boolean(keep).named("keepdim")});
    std::sort(axes.rbegin(), axes.rend());
    E y = E::val(c.in(0));
    for (int64_t a : axes)
        y = E::call("prod", {std::move(y), E::integer(a).named("dim"), E::boolean(keep).named("keepdim")});
    return y;
}

// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp of floating-point
// tensors, as the runtime computes them: a sum of |x|, x·x or x over the axes (reduceAxes),
// then the square root or the log; logsumexp.
E reduceComposed(const Context& c)
{
    const std::string& op = c.node.opType;
    if (!isFloating(c.dtype(0)))
        c.unsupported(op + " is generated for floating-point tensors only");
    const std::optional<std::vector<int64_t>> axes = reduceAxes(c, 18);
    if (!axes)
        return E::val(c.in(0));
    const E x = E::val(c.in(0)), dim = E::list(*axes).named("dim"),
            keep = E::boolean(c.node.attrInt("keepdims", 1) != 0).named("keepdim");
    if (op == "ReduceLogSumExp")
        return E::call("logsumexp", {x, dim, keep});
    const E summed = op == "ReduceL1"   ? E::call("abs", {x})
                     : op == "ReduceLogSum" ? x
                                            : E::call("mul", {x, x});
    const E sum = E::call("sum", {summed, dim, keep});
    return op == "ReduceL2" ? E::call("sqrt", {sum}) : op == "ReduceLogSum" ? E::call("log", {sum}) : sum;
}

// LpPool's and GlobalLpPool's p (core/ir/lp_pool_order.h), refused unless positive.
double lpOrder(const Context& c)
{
    const double p = lpPoolOrder(c.node);
    if (!(p > 0) || !std::isfinite(p))
        c.unsupported("p " + std::to_string(p) + " is not a positive number");
    return p;
}

// The Lp operators as the runtime's kernels compute them: LpNormalization x over its L1 or L2
// norm along the axis; LpPool the window sums of |x|^p (pads counting as zeros: padded first,
// then averaged over whole windows and scaled by their size), to the power 1 / p; GlobalLpPool
// each channel's p-norm.
E lpNormalization(const Context& c)
{
    const int64_t p = c.node.attrInt("p", 2);
    if (p != 1 && p != 2)
        c.unsupported("p " + std::to_string(p) + " is not 1 or 2");
    const E x = E::val(c.in(0)), dim = E::integer(c.axisOrNegative(0, c.node.attrInt("axis", -1))).named("dim"),
            keep = E::boolean(true).named("keepdim");
    const E norm = p == 1 ? E::call("sum", {E::call("abs", {x}), dim, keep})
                          : E::call("sqrt", {E::call("sum", {E::call("mul", {x, x}), dim, keep})});
    return E::call("div", {x, norm});
}

E lpPool(const Context& c)
{
    const std::vector<int64_t> kernel = c.node.attrInts("kernel_shape");
    if (kernel.empty() || kernel.size() > 3 || int64_t(kernel.size()) != c.rank(0) - 2)
        c.unsupported("only 1-D, 2-D and 3-D pooling is supported");
    for (int64_t d : c.node.attrInts("dilations"))
        if (d != 1)
            c.unsupported("dilations other than 1 are not supported");
    const double p = lpOrder(c);
    const Window w = windowOf(c, kernel);
    double volume = 1;
    for (int64_t k : kernel)
        volume *= double(k);
    const E powers = constantPad(E::call("pow", {E::call("abs", {E::val(c.in(0))}), E::real(p)}), w.atenPads(), 0.0);
    const E mean = E::call("avg_pool" + std::to_string(kernel.size()) + "d",
                           {powers, E::list(w.kernel), E::list(w.strides), E::list(std::vector<int64_t>(kernel.size(), 0)),
                            E::boolean(w.ceil)});
    return E::call("pow", {E::call("mul", {mean, E::real(volume)}), E::real(1.0 / p)});
}

E globalLpPool(const Context& c)
{
    return E::call("vector_norm", {E::val(c.in(0)), E::real(lpOrder(c)), E::list(spatialDims(c.rank(0))), E::boolean(true)});
}

// Squeeze (axes; none: every axis of size one, as ONNX) and Unsqueeze, one axis at a time.
E squeeze(const Context& c, bool unsqueeze)
{
    if (c.node.opset >= 13 && c.has(1) && !c.out.isConstant(c.in(1)))  // axes computed when the code runs
        return E::call("onnx_squeeze", {E::val(c.in(0)), E::val(c.in(1)), E::boolean(unsqueeze)});
    std::vector<int64_t> axes = listOf(c, 1, "axes", 13);
    if (axes.empty()) {
        if (unsqueeze)
            c.unsupported("no axes");
        return E::call("squeeze", {E::val(c.in(0))});
    }
    // One axis, counted from the end where the rank is unknown: squeeze's and unsqueeze's dim
    // counts as ONNX's does (of the input's axes, of the output's).
    if (axes.size() == 1 && axes[0] < 0 && !c.graph.value(c.in(0)).type.shape)
        return E::call(unsqueeze ? "unsqueeze" : "squeeze", {E::val(c.in(0)), E::integer(axes[0])});
    for (int64_t& a : axes)
        a = c.axisOf(0, a, unsqueeze ? int64_t(axes.size()) : 0);
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
        c.unsupported("axes name an axis twice");
    if (!unsqueeze)
        std::reverse(axes.begin(), axes.end());  // later axes first, so the earlier keep their places
    E y = E::val(c.in(0));
    for (int64_t a : axes)
        y = E::call(unsqueeze ? "unsqueeze" : "squeeze", {std::move(y), E::integer(a)});
    return y;
}

// LSTM, GRU and RNN with their default activations (an RNN's Tanh or Relu), no clip or
// input_forget, float weights: as PyTorch's one-layer kernels (the `recurrent` helper; with
// sequence_lens on packed sequences) where they compute the node (forward or bidirectional, a
// GRU's reset gate applied after its linear transformation, no peepholes) and its weights are
// constants, else step by step (`recurrent_steps`, which also takes a clip, any of ONNX's
// activations and input_forget). Layout 1 runs on the input and initial states transposed
// (`recurrent_batch_first` puts the outputs back).
E recurrent(const Context& c)
{
    const std::string& op = c.node.opType;
    const std::string direction = c.node.attrString("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
        c.unsupported("direction '" + printable(direction) + "'");
    const bool batchFirst = c.node.attrInt("layout", 0) != 0;
    const double clip = c.node.attrFloat("clip", 0);
    if (c.node.attr("clip") && !(clip > 0))
        c.unsupported("clip " + std::to_string(clip) + " is not positive");
    const bool inputForget = c.node.attrInt("input_forget", 0) != 0;
    const bool resetFirst = op == "GRU" && c.node.attrInt("linear_before_reset", 0) == 0;
    const size_t directions = direction == "bidirectional" ? 2 : 1;
    std::string why;
    const auto acts = recurrentActivations(c.node, directions, why);
    if (!acts)
        c.unsupported(why);
    std::string kind = op == "LSTM" ? "lstm" : op == "GRU" ? "gru" : "rnn_tanh";
    const bool allRelu = std::all_of(acts->begin(), acts->end(), [](const RecurrentActivation& a) { return a.name == "relu"; });
    if (op == "RNN" && allRelu)
        kind = "rnn_relu";
    const bool otherActivations = *acts != defaultRecurrentActivations(op, directions) && !(op == "RNN" && allRelu);
    const size_t last = op == "LSTM" ? 7 : 5;  // the last input: an LSTM's peepholes, else initial_h
    bool constantWeights = true;
    for (size_t i : {size_t(1), size_t(2), size_t(3), size_t(7)})
        if (i <= last && c.has(i)) {
            if (c.dtype(i) != DataType::Float)
                c.unsupported("W, R, B and P must be float tensors");
            constantWeights = constantWeights && c.out.isConstant(c.in(i));
        }
    if (c.dtype(0) != DataType::Float)
        c.unsupported("recurrent layers are generated for float sequences only");
    if (c.has(4) && c.dtype(4) != DataType::Int32 && c.dtype(4) != DataType::Int64)
        c.unsupported("sequence_lens is not an integer tensor");
    const bool cellOptions = clip > 0 || otherActivations || inputForget;  // what only recurrent_steps takes
    const bool steps = direction == "reverse" || resetFirst || (op == "LSTM" && c.has(7)) || !constantWeights || cellOptions;
    if (resetFirst)
        kind = "gru_reset_first";
    // X, W, R, then B, sequence_lens, initial_h, initial_c and P up to the last one given (the
    // batch's axis first in layout 1: the sequence's, as the layer reads them).
    auto input = [&](size_t i) {
        return batchFirst && (i == 0 || i == 5 || i == 6)
                   ? E::method(E::val(c.in(i)), "transpose", {E::integer(0), E::integer(1)})
                   : E::val(c.in(i));
    };
    std::vector<E> args{E::text(kind)};
    if (steps)
        args.push_back(E::text(direction));
    for (size_t i = 0; i <= 2; ++i)
        args.push_back(input(i));
    size_t given = 2;
    for (size_t i = 3; i <= (steps ? last : std::min<size_t>(last, 6)); ++i)
        if (c.has(i))
            given = i;
    for (size_t i = 3; i <= given; ++i)
        args.push_back(c.has(i) ? input(i) : E::none());
    if (cellOptions) {  // keywords in Python; in C++ after every optional input
        static const char* const names[] = {"b", "sequence_lens", "initial_h", "initial_c", "p"};
        for (size_t i = given + 1; i <= 7; ++i)
            args.push_back(E::none().named(names[i - 3], true));
        std::vector<E> functions;
        for (const RecurrentActivation& a : *acts)
            functions.push_back(E::tensors({E::text(a.name), E::real(a.alpha), E::real(a.beta)}));
        args.push_back(E::real(clip).named("clip", !(clip > 0)));
        args.push_back(E::tensors(otherActivations ? std::move(functions) : std::vector<E>{}).named("activations", !otherActivations));
        args.push_back(E::boolean(inputForget).named("input_forget", !inputForget));
    }
    // Y alone, or Y and the final states (all of them: the helpers give them all).
    E call = E::call(steps ? "recurrent_steps" : "recurrent", std::move(args));
    if (batchFirst)
        call = E::call("recurrent_batch_first", {std::move(call)});
    return c.outputsRead() == 1 ? E::index(call, 0) : c.outputs(call, op == "LSTM" ? 3 : 2);
}

// Resizing axis by axis through a generated helper `fn` (onnx_resize_linear, _nearest or
// _cubic: x, axis, size, scale, unrounded length, coordinate mode, then `extra`) of each axis
// whose size or scale changes, as the runtime's separable path computes it, where PyTorch's
// upsampling computes something else.
E resizeByAxis(const Context& c, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
               const std::vector<double>& scales, const std::vector<double>& lengths, const std::string& coord,
               const std::string& fn, const std::vector<E>& extra = {})
{
    E y = E::val(c.in(0));
    for (size_t axis = 0; axis < in.size(); ++axis) {
        if (in[axis] == out[axis] && scales[axis] == 1.0)
            continue;
        std::vector<E> args{y, E::integer(int64_t(axis)), E::integer(out[axis]), E::real(scales[axis]),
                            E::real(lengths[axis]), E::text(coord)};
        args.insert(args.end(), extra.begin(), extra.end());
        y = E::call(fn, std::move(args));
    }
    return y;
}

// Whether a Resize's scales or sizes are computed when the code runs (other than the sizes
// PyTorch writes for F.interpolate(x, size=...), which resize() reads), or its mode is
// tf_crop_and_resize (with roi and extrapolation_value).
bool resizeIsComputed(const Context& c)
{
    const bool opset10 = c.node.opset < 11;
    const size_t scalesInput = opset10 ? 1 : 2;
    const bool scalesComputed = c.has(scalesInput) && !c.out.isConstant(c.in(scalesInput));
    const bool sizesComputed = !opset10 && c.has(3) && !c.out.isConstant(c.in(3));
    if (!opset10 && c.node.attrString("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
        return true;
    if (!scalesComputed && !sizesComputed)
        return false;
    return !(sizesComputed && c.graph.value(c.in(3)).producer != kNone &&
             c.graph.node(c.graph.value(c.in(3)).producer).opType == "Concat" && c.graph.value(c.in(0)).type.shape);
}

// Resize through the onnx_resize helper, which reads the scales or sizes when the code runs and
// takes each axis as resizeByAxis does once it knows the sizes: any rank, any axis, scales or
// sizes computed then, tf_crop_and_resize.
E resizeByHelper(const Context& c)
{
    const bool opset10 = c.node.opset < 11;
    const size_t scalesInput = opset10 ? 1 : 2;
    const std::string coord =
        opset10 ? "asymmetric" : c.node.attrString("coordinate_transformation_mode", "half_pixel");
    const bool crop = coord == "tf_crop_and_resize";
    const std::string mode = c.node.attrString("mode", "nearest");
    if (mode != "nearest" && mode != "linear" && mode != "cubic")
        c.unsupported("mode '" + printable(mode) + "'");
    auto given = [&](size_t i) {  // an empty constant is no input
        const Tensor* t = c.has(i) ? c.out.constant(c.in(i)) : nullptr;
        const bool empty = t && t->numel() == 0;
        return c.has(i) && !empty ? E::val(c.in(i)) : E::none();
    };
    std::vector<E> args{E::val(c.in(0)), given(scalesInput), opset10 ? E::none() : given(3), E::text(mode),
                        E::text(coord), E::text(c.node.attrString("nearest_mode", "round_prefer_floor")),
                        E::real(c.node.attrFloat("cubic_coeff_a", -0.75f)),
                        E::boolean(c.node.attrInt("exclude_outside", 0) != 0)};
    if (crop) {  // roi's region of each axis, and the value of outputs from outside the input
        args.push_back(given(1));
        args.push_back(E::real(c.node.attrFloat("extrapolation_value", 0.0f)));
    }
    return E::call("onnx_resize", std::move(args));
}

// Resize of a 4-D tensor's two spatial axes as PyTorch's upsampling, where that computes what
// the node does: bilinear with half_pixel coordinates (pytorch_half_pixel where no output axis
// has one element) or align_corners, nearest with asymmetric coordinates and floor (what
// F.interpolate exports); linear and nearest in the other coordinate modes and roundings, and
// cubic, axis by axis (resizeByAxis; opset 10's asymmetric too). The output size comes from the
// inferred shapes; scales (no sizes) must give whole sizes, for PyTorch reads a size's scale as
// out / in. The rest (scales or sizes computed, tf_crop_and_resize, other ranks, the batch or
// the channels resized, sizes unknown or fractional): resizeByHelper.
E resize(const Context& c)
{
    if (resizeIsComputed(c))
        return resizeByHelper(c);
    const std::string mode = c.node.attrString("mode", "nearest");
    const std::string coord =
        c.node.opset < 11 ? "asymmetric" : c.node.attrString("coordinate_transformation_mode", "half_pixel");
    const std::vector<int64_t> in = c.dims(c.in(0)), out = c.dims(c.node.outputs[0]);
    if (c.rank(0) != 4 || out.size() != 4 || in[2] < 0 || in[3] < 0 || out[2] < 0 || out[3] < 0 || in[0] != out[0] ||
        in[1] != out[1])
        return resizeByHelper(c);
    // Sizes computed as PyTorch writes F.interpolate(x, size=(h, w)): the input's batch and
    // channels (from its Shape) and the constant spatial sizes, Concat-ed.
    auto spatialConstant = [&](ValueId sizes) {
        const NodeId producer = c.graph.value(sizes).producer;
        if (producer == kNone || c.graph.node(producer).opType != "Concat" || c.graph.node(producer).inputs.empty())
            return false;
        const Tensor* t = c.out.constant(c.graph.node(producer).inputs.back());
        const auto last = t ? t->toInt64s() : std::nullopt;
        return last && *last == std::vector<int64_t>{out[2], out[3]};
    };
    const bool sizesGiven =
        c.node.opset >= 11 && c.has(3) && (!c.out.isConstant(c.in(3)) || c.out.constant(c.in(3))->numel() > 0);
    if (sizesGiven && !c.out.isConstant(c.in(3)) && !spatialConstant(c.in(3)))
        return resizeByHelper(c);
    // Each axis's scale and unrounded output length, as the runtime reads them.
    std::vector<double> scales(4, 1.0), lengths(4, 0.0);
    for (size_t i = 0; i < 4; ++i) {
        scales[i] = in[i] > 0 ? double(out[i]) / double(in[i]) : 1.0;
        lengths[i] = double(out[i]);
    }
    if (!sizesGiven) {
        const size_t scalesInput = c.node.opset < 11 ? 1 : 2;  // opset 10: X, scales
        const Tensor* t = c.has(scalesInput) ? c.out.constant(c.in(scalesInput)) : nullptr;
        const auto given = t ? t->toDoubles() : std::nullopt;
        if (!given || given->size() != 4)
            c.unsupported("the scales or sizes must be constants for code generation");
        scales = *given;
        for (size_t i = 2; i < 4; ++i) {
            lengths[i] = double(in[i]) * scales[i];
            if (std::abs(lengths[i] - double(out[i])) > 1e-6 * double(out[i]))
                return resizeByHelper(c);  // a fractional size
        }
    }
    const E x = E::val(c.in(0)), size = E::list({out[2], out[3]}).named("size");
    if (mode == "linear") {
        const bool align = coord == "align_corners";
        if (align || coord == "half_pixel" || (coord == "pytorch_half_pixel" && out[2] > 1 && out[3] > 1))
            return E::call("interpolate_bilinear", {x, size, E::text("bilinear").named("mode").inPythonOnly(),
                                                    E::boolean(align).named("align_corners")});
    }
    if (mode == "linear")
        return resizeByAxis(c, in, out, scales, lengths, coord, "onnx_resize_linear");
    const std::string nearest = c.node.attrString("nearest_mode", "round_prefer_floor");
    if (mode == "nearest" && coord == "asymmetric" && nearest == "floor")
        return E::call("interpolate_nearest", {x, size, E::text("nearest").named("mode", true).inPythonOnly()});
    if (mode == "nearest")
        return resizeByAxis(c, in, out, scales, lengths, coord, "onnx_resize_nearest", {E::text(nearest)});
    if (mode == "cubic")
        return resizeByAxis(c, in, out, scales, lengths, coord, "onnx_resize_cubic",
                            {E::real(c.node.attrFloat("cubic_coeff_a", -0.75f)),
                             E::boolean(c.node.attrInt("exclude_outside", 0) != 0)});
    c.unsupported("mode '" + printable(mode) + "'");
}

// Pad as the runtime's kernel: constant pads (since opset 18 on the axes input 3 names) as
// constant_pad_nd, or reflection_pad / replication_pad on the axes after the first two of a 3-D
// to 5-D floating-point tensor; other reflect and edge pads, and pads, axes or value computed
// when the code runs, through `onnx_pad`.
E pad(const Context& c)
{
    const std::string mode = c.node.attrString("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge")
        c.unsupported("pad mode '" + printable(mode) + "' is not supported");
    const bool hasAxes = c.node.opset >= 18 && c.has(3);
    auto helper = [&] {
        return E::call("onnx_pad", {E::val(c.in(0)), E::val(c.in(1)), hasAxes ? E::val(c.in(3)) : E::none(), E::text(mode),
                                    c.has(2) ? E::val(c.in(2)) : E::none()});
    };
    if (c.node.opset >= 11 && (!c.out.isConstant(c.in(1)) || (hasAxes && !c.out.isConstant(c.in(3))) ||
                               (c.has(2) && !c.constScalar(2))))
        return helper();
    auto pads = c.node.opset < 11 ? c.node.attrInts(c.node.opset < 2 ? "paddings" : "pads") : c.constInts(1);
    // Where shape inference could not give the rank (a detector's masks), pads of every axis give it.
    const bool rankKnown = c.graph.value(c.in(0)).type.shape.has_value();
    const int64_t rank = rankKnown || hasAxes ? c.rank(0) : int64_t(pads.size() / 2);
    if (hasAxes) {
        std::string problem;
        const auto every = padsOfEveryAxis(pads, c.constInts(3), rank, problem);
        if (!every)
            c.unsupported(problem);
        pads = *every;
    }
    if (int64_t(pads.size()) != 2 * rank)
        c.unsupported("pads has " + std::to_string(pads.size()) + " entries for rank " + std::to_string(rank));
    std::vector<int64_t> p;  // ATen's order: the last axis first
    for (int64_t i = rank; i-- > 0;) {
        p.push_back(pads[size_t(i)]);
        p.push_back(pads[size_t(i + rank)]);
    }
    if (mode != "constant") {
        if (rank < 3 || rank > 5 || pads[0] || pads[1] || pads[size_t(rank)] || pads[size_t(rank) + 1] ||
            !isFloating(c.dtype(0))) {
            if (c.node.opset < 11)  // pads as an attribute: no tensor for onnx_pad
                c.unsupported("pad mode '" + mode + "' is generated for the axes after the first two of a 3-D to 5-D "
                              "floating-point tensor");
            return helper();
        }
        p.resize(size_t(2 * (rank - 2)));  // the first two axes', last in that order, are 0
        const std::string fn = (mode == "reflect" ? "reflection_pad" : "replication_pad") + std::to_string(rank - 2) + "d";
        return E::call(fn, {E::val(c.in(0)), E::list(p),
                            E::text(mode == "reflect" ? "reflect" : "replicate").named("mode").inPythonOnly()});
    }
    double value = c.node.attrFloat("value", 0.0f);
    if (c.node.opset >= 11)
        value = c.has(2) ? *c.constScalar(2) : 0.0;
    return constantPad(E::val(c.in(0)), p, value);
}

// A float product by a constant 2-D float B (transposed: B is [N, K], Gemm's transB), plus a
// constant bias of B's N columns where given (both as Context::constantIn gives them), then
// GELU where gelu: the `linear` helper, one oneDNN matmul primitive as the runtime's
// OneDnnMatMul; none where that does not apply.
std::optional<E> linearLayer(const Context& c, E a, ValueId b, bool transposed, ValueId bias, bool gelu)
{
    const auto constant = [&](ValueId v) -> const Tensor* {
        const Tensor* t = c.out.constant(v);
        return t && t->dtype == DataType::Float ? t : nullptr;
    };
    const Tensor* weight = constant(b);
    if (c.dtype(0) != DataType::Float || !weight || weight->dims.size() != 2 || weight->numel() == 0)
        return std::nullopt;
    const int64_t n = weight->dims[transposed ? 0 : 1];
    const Tensor* row = bias == kNone ? nullptr : constant(bias);
    if (bias != kNone && (!row || row->numel() != n || row->dims.empty() || row->dims.back() != n))
        return std::nullopt;
    return E::call("linear", {std::move(a), transposed ? E::call("t", {E::val(b)}) : E::val(b),
                              bias == kNone ? E::none() : E::val(bias), E::boolean(gelu).named("gelu", !gelu)});
}

// As the runtime's ConvTranspose kernel: at::convolution, transposed, with output_padding. Pads
// the same at both ends of each axis are ATen's padding; others (explicit, or those output_shape
// and auto_pad SAME_* give, found here from the input's sizes as the runtime finds them) crop
// the unpadded result, and an output_shape larger than that result extends its output_padding.
E convTranspose(const Context& c)
{
    std::vector<int64_t> kernel = c.node.attrInts("kernel_shape");
    if (kernel.empty()) {
        const auto w = c.dims(c.in(1));
        kernel.assign(w.begin() + std::min<ptrdiff_t>(2, ptrdiff_t(w.size())), w.end());
    }
    const size_t d = kernel.size();
    if (d == 0 || d > 3 || int64_t(d) != c.rank(0) - 2)
        c.unsupported("only 1-D, 2-D and 3-D transposed convolutions are supported");
    auto values = [&](const char* name, int64_t fill) {
        std::vector<int64_t> v = c.node.attrInts(name);
        if (v.empty())
            v.assign(d, fill);
        if (v.size() != d)
            c.unsupported(std::string(name) + " has " + std::to_string(v.size()) + " values for " + std::to_string(d) + " axes");
        return v;
    };
    const auto strides = values("strides", 1), dilations = values("dilations", 1);
    auto outPad = values("output_padding", 0);
    const std::vector<int64_t> outputShape = c.node.attrInts("output_shape");
    const std::string autoPad = c.node.attrString("auto_pad", "NOTSET");
    std::vector<int64_t> begin(d, 0), end(d, 0);
    if (!outputShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        if (!outputShape.empty() && outputShape.size() < d)
            c.unsupported("output_shape has " + std::to_string(outputShape.size()) + " values for " + std::to_string(d) + " axes");
        const std::vector<int64_t> in = c.dims(c.in(0));
        for (size_t i = 0; i < d; ++i) {
            const int64_t size = in[i + 2];
            if (size < 1)
                c.unsupported("the input's spatial sizes are unknown (fix input sizes with --shape)");
            const int64_t full = strides[i] * (size - 1) + outPad[i] + (kernel[i] - 1) * dilations[i] + 1;
            const int64_t target = !outputShape.empty() ? outputShape[outputShape.size() - d + i] : size * strides[i];
            int64_t total = full - target;
            if (total < 0) {  // larger than the full result: extended at the end
                outPad[i] += -total;
                total = 0;
            }
            begin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
            end[i] = total - begin[i];
        }
    } else if (const std::vector<int64_t> pads = c.node.attrInts("pads"); !pads.empty()) {
        if (pads.size() != 2 * d)
            c.unsupported("pads has " + std::to_string(pads.size()) + " values for " + std::to_string(d) + " axes");
        if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; }))
            c.unsupported("pads are negative");
        begin.assign(pads.begin(), pads.begin() + std::ptrdiff_t(d));
        end.assign(pads.begin() + std::ptrdiff_t(d), pads.end());
    }
    const bool symmetric = begin == end;
    E y = E::call("convolution", {E::val(c.in(0)), E::val(c.in(1)), c.has(2) ? E::val(c.in(2)) : E::none(),
                                  E::list(strides), E::list(symmetric ? begin : std::vector<int64_t>(d, 0)),
                                  E::list(dilations), E::boolean(true), E::list(outPad),
                                  E::integer(c.node.attrInt("group", 1))});
    for (size_t i = 0; i < d && !symmetric; ++i)
        if (begin[i] != 0 || end[i] != 0)
            y = E::slice(std::move(y), int64_t(i) + 2, begin[i], end[i] != 0 ? -end[i] : E::kToEnd, 1);
    return y;
}

// If: the branch the condition picks when the code runs, each a function of the values of this
// graph it reads (the generators write it from its own lowered graph, Program::branches).
E ifElse(const Context& c)
{
    if (c.dtype(0) != DataType::Bool)
        c.unsupported("the condition is not a bool tensor");
    std::vector<E> calls;
    for (const bool then : {true, false}) {
        const char* name = then ? "then_branch" : "else_branch";
        const Attribute* a = c.node.attr(name);
        if (!a || !a->g)
            c.unsupported(std::string("it has no ") + name);
        const Graph& sub = *a->g;
        if (sub.outputs().size() != c.node.outputs.size())
            c.unsupported(std::string(name) + " gives " + std::to_string(sub.outputs().size()) + " outputs for " +
                          std::to_string(c.node.outputs.size()));
        LoweredBranch b{c.node.id, then, a->g, {}, {}};
        for (const Value& v : sub.values())
            if (v.isOuterScope && (!v.consumers.empty() || v.isGraphOutput)) {
                const ValueId outer = c.graph.findValue(v.name);
                if (outer == kNone)
                    c.unsupported(std::string(name) + " reads '" + printable(v.name) + "', which is not defined outside it");
                b.outer.push_back(v.id);
                b.params.push_back(outer);
            }
        std::vector<E> args;
        for (ValueId v : b.params)
            args.push_back(E::val(v));
        calls.push_back(E::branch(c.out.branches.size(), std::move(args)));
        c.out.branches.push_back(std::move(b));
    }
    const E e = E::ifElse(E::val(c.in(0)), calls[0], calls[1]);
    return c.node.outputs.size() == 1 ? e : c.outputs(e, c.node.outputs.size());
}

// The node's body attribute, refused unless it takes `inputs` and gives `outputs` values.
std::shared_ptr<const Graph> bodyOf(const Context& c, size_t inputs, size_t outputs)
{
    const Attribute* a = c.node.attr("body");
    if (!a || !a->g)
        c.unsupported("it has no body");
    if (a->g->inputs().size() != inputs || a->g->outputs().size() != outputs)
        c.unsupported("the body takes " + std::to_string(a->g->inputs().size()) + " inputs and gives " +
                      std::to_string(a->g->outputs().size()) + " outputs, the node needs " + std::to_string(inputs) +
                      " and " + std::to_string(outputs));
    return a->g;
}

// A Loop's or Scan's body (bodyOf's) as a function of its own inputs (each starting from `starts`'
// enclosing value, kNone for none), then of the enclosing values it reads, whose expressions go to
// `outer`. Returns the body's index among the lowered branches (Expr::function).
size_t lowerBody(const Context& c, std::shared_ptr<const Graph> body, const std::vector<ValueId>& starts, std::vector<E>& outer)
{
    LoweredBranch b{c.node.id, true, body, {}, {}, true};
    for (size_t k = 0; k < starts.size(); ++k) {
        b.outer.push_back(body->inputs()[k]);
        b.params.push_back(starts[k]);
    }
    for (const Value& v : body->values())
        if (v.isOuterScope && (!v.consumers.empty() || v.isGraphOutput)) {
            const ValueId enclosing = c.graph.findValue(v.name);
            if (enclosing == kNone)
                c.unsupported("its body reads '" + printable(v.name) + "', which is not defined outside it");
            b.outer.push_back(v.id);
            b.params.push_back(enclosing);
            outer.push_back(E::val(enclosing));
        }
    c.out.branches.push_back(std::move(b));
    return c.out.branches.size() - 1;
}

// The element types of the body's outputs from `first` on, its scan outputs (for empty ones).
E scanTypes(const Context& c, const Graph& body, size_t first)
{
    std::vector<E> types;
    for (size_t j = first; j < body.outputs().size(); ++j) {
        const DataType t = body.value(body.outputs()[j]).type.dtype;
        if (t == DataType::Undefined)
            c.unsupported("the type of scan output " + std::to_string(j - first) + " is unknown");
        types.push_back(E::dtype(t));
    }
    return E::tensors(std::move(types));
}

// The values of inputs [first, first + count).
E inputList(const Context& c, size_t first, size_t count)
{
    std::vector<E> values;
    for (size_t j = first; j < first + count; ++j)
        values.push_back(E::val(c.in(j)));
    return E::tensors(std::move(values));
}

// Loop: its body a function of its own inputs (the iteration, the condition, the N carried values)
// and the enclosing graph's values it reads, run by the `onnx_loop` helper as the runtime's kernel
// runs it; the N last carried values, then the K scan outputs stacked.
E loop(const Context& c)
{
    const size_t n = c.node.inputs.size() < 2 ? 0 : c.node.inputs.size() - 2;
    const std::shared_ptr<const Graph> body = bodyOf(c, n + 2, c.node.outputs.size() + 1);
    std::vector<ValueId> starts{kNone, kNone};
    for (size_t j = 0; j < n; ++j)
        starts.push_back(c.in(2 + j));
    std::vector<E> outer;
    const size_t index = lowerBody(c, body, starts, outer);
    const E call = E::call("onnx_loop", {E::function(index), c.has(0) ? E::val(c.in(0)) : E::none(),
                                         c.has(1) ? E::val(c.in(1)) : E::none(), inputList(c, 2, n),
                                         E::tensors(std::move(outer)), scanTypes(c, *body, 1 + n)});
    return c.node.outputs.size() == 1 ? E::index(call, 0) : c.outputs(call, c.node.outputs.size());
}

// Scan: its body a function of the N states and M scan slices, then of the enclosing values it
// reads, run by `onnx_scan` over the slices along each scan input's axis (Scan-8, whose inputs have
// a batch axis first and a sequence_lens, by `onnx_scan_batched` once per batch entry); the N last
// states, then the K scan outputs stacked along their axes.
E scan(const Context& c)
{
    const bool batched = c.node.opset < 9;
    const size_t first = batched ? 1 : 0, inputs = c.node.inputs.size();
    const int64_t m = c.node.attrInt("num_scan_inputs", 0);
    if (m < 1 || size_t(m) + first > inputs)
        c.unsupported("num_scan_inputs " + std::to_string(m) + " is not between 1 and the node's inputs");
    const size_t n = inputs - first - size_t(m);
    if (c.node.outputs.size() < n)
        c.unsupported("it has fewer outputs than states");
    const size_t k = c.node.outputs.size() - n;
    const std::shared_ptr<const Graph> body = bodyOf(c, n + size_t(m), n + k);
    auto perEntry = [&](const char* name, size_t count) {
        std::vector<int64_t> v = c.node.attrInts(name);
        if (v.empty())
            v.assign(count, 0);
        if (v.size() != count)
            c.unsupported(std::string(name) + " has " + std::to_string(v.size()) + " entries for " + std::to_string(count));
        return v;
    };
    std::vector<ValueId> starts;
    for (size_t j = first; j < inputs; ++j)
        starts.push_back(c.in(j));
    std::vector<E> outer;
    const size_t index = lowerBody(c, body, starts, outer);
    const E call =
        batched ? E::call("onnx_scan_batched", {E::function(index), c.has(0) ? E::val(c.in(0)) : E::none(),
                                                inputList(c, 1, n), inputList(c, 1 + n, size_t(m)),
                                                E::tensors(std::move(outer)), E::list(perEntry("directions", size_t(m))),
                                                scanTypes(c, *body, n)})
                : E::call("onnx_scan", {E::function(index), inputList(c, 0, n), inputList(c, n, size_t(m)),
                                        E::tensors(std::move(outer)), E::list(perEntry("scan_input_axes", size_t(m))),
                                        E::list(perEntry("scan_input_directions", size_t(m))),
                                        E::list(perEntry("scan_output_axes", k)),
                                        E::list(perEntry("scan_output_directions", k)), scanTypes(c, *body, n)});
    return c.node.outputs.size() == 1 ? E::index(call, 0) : c.outputs(call, c.node.outputs.size());
}

using Lowering = std::function<E(const Context&)>;

E unary(const Context& c, const char* fn) { return E::call(fn, {E::val(c.in(0))}); }

// Softmax, LogSoftmax and Hardmax along the node's axis. Before opset 13 ONNX coerces the input
// to 2-D at the axis (the dimensions before it times those after): then flattened so, computed
// along dimension 1 and reshaped back to the input's sizes; the same as the axis alone where it
// is the last one.
E alongAxis(const Context& c, const std::function<E(E, int64_t)>& f)
{
    const E x = E::val(c.in(0));
    if (c.node.opset >= 13 && !c.graph.value(c.in(0)).type.shape)
        return f(x, c.axisOrNegative(0, c.node.attrInt("axis", -1)));
    const int64_t rank = c.rank(0);
    const int64_t a = c.axis(c.node.attrInt("axis", c.node.opset < 13 ? 1 : -1), rank);
    if (c.node.opset >= 13 || a == rank - 1)
        return f(x, a);
    const E flat = a == 0 ? E::call("reshape", {x, E::list({1, -1})})
                          : E::call("flatten", {E::call("flatten", {x, E::integer(0).named("start_dim"),
                                                                    E::integer(a - 1).named("end_dim")}),
                                                E::integer(1).named("start_dim")});
    return E::call("reshape", {f(flat, 1), E::sizes(x)});
}

// 1 at the first largest value along the axis, 0 elsewhere (as the runtime's kernel).
E hardmax(E x, int64_t axis)
{
    const E index = E::call("argmax", {x, E::integer(axis).named("dim"), E::boolean(true).named("keepdim")});
    return E::method(E::call("zeros_like", {x}), "scatter", {E::integer(axis), index, E::real(1.0)});
}

// ArgMax or ArgMin: ties give the first index, or with select_last_index the last one (the
// axis searched flipped, as the runtime's kernel).
E argReduce(const Context& c, const char* fn)
{
    const int64_t axis = c.axisOrNegative(0, c.node.attrInt("axis", 0));
    const bool keep = c.node.attrInt("keepdims", 1) != 0, last = c.node.attrInt("select_last_index", 0) != 0;
    const E x = E::val(c.in(0));
    const E searched = last ? E::call("flip", {x, E::list({axis})}) : x;
    const E index = E::call(fn, {searched, E::integer(axis).named("dim"), E::boolean(keep).named("keepdim")});
    if (!last)
        return index;
    const E size = E::method(x, "size", {E::integer(axis)});
    return E::call("sub", {E::call("rsub", {index, size}), E::integer(1)});  // size - 1 - index
}

// The int8 operators (templates/*/quantized.*) in the form the quantize pass writes them and the
// runtime's fast path runs them: constant scalar scales and zero points, uint8 activations,
// constant int8 weights of zero offset.
bool constantScalar(const Context& c, size_t i) { return c.has(i) && c.constScalar(i).has_value(); }

bool constantOfType(const Context& c, size_t i, DataType t)
{
    const Tensor* value = c.has(i) ? c.out.constant(c.in(i)) : nullptr;
    return value && value->dtype == t;
}

bool zeroOrAbsent(const Context& c, size_t i)
{
    if (!c.has(i))
        return true;
    const Tensor* t = c.out.constant(c.in(i));
    const auto values = t ? t->toDoubles() : std::nullopt;
    return values && std::all_of(values->begin(), values->end(), [](double v) { return v == 0; });
}

// QLinearConv or QLinearMatMul (a at 0, its scale and zero point, the weights at 3, their scale
// and zero point, the output's scale and zero point at 6 and 7), refused unless in that form.
bool quantizePassForm(const Context& c)
{
    return constantScalar(c, 1) && constantScalar(c, 2) && constantScalar(c, 6) && constantScalar(c, 7) &&
           constantOfType(c, 2, DataType::UInt8) && constantOfType(c, 7, DataType::UInt8) &&
           constantOfType(c, 3, DataType::Int8) && c.out.isConstant(c.in(4)) && zeroOrAbsent(c, 5) &&
           c.dtype(0) == DataType::UInt8;
}

// The inputs of a QLinear product from `first` to `last` (absent ones None).
std::vector<E> quantizedInputs(const Context& c, size_t first, size_t last)
{
    std::vector<E> args;
    for (size_t i = first; i <= last; ++i)
        args.push_back(c.has(i) ? E::val(c.in(i)) : E::none());
    return args;
}

// QuantizeLinear and DequantizeLinear: a per-tensor scale, or one per entry of `axis`.
int64_t quantizationAxis(const Context& c)
{
    const auto& shape = c.graph.value(c.in(1)).type.shape;
    const bool perTensor = shape && std::all_of(shape->dims.begin(), shape->dims.end(), [](const Dim& d) { return d.value == 1; });
    return perTensor ? 0 : c.axisOf(0, c.node.attrInt("axis", 1));
}

// DepthToSpace (DCR or CRD) and SpaceToDepth of a 4-D input with known channels and spatial
// sizes, as the runtime's kernel: reshape, permute, reshape (the batch left as -1).
E depthSpace(const Context& c, bool toSpace)
{
    const int64_t b = c.node.attrInt("blocksize", 0);
    const std::string mode = c.node.attrString("mode", "DCR");
    if (b < 1)
        c.unsupported("blocksize " + std::to_string(b) + " must be positive");
    if (toSpace && mode != "DCR" && mode != "CRD")
        c.unsupported("mode '" + printable(mode) + "' is not DCR or CRD");
    const std::vector<int64_t> d = c.dims(c.in(0));
    if (d.size() != 4 || d[1] < 0 || d[2] < 0 || d[3] < 0)
        c.unsupported("the input must have rank 4 with known channels and spatial sizes (fix input sizes with --shape)");
    const int64_t C = d[1], H = d[2], W = d[3];
    const E x = E::val(c.in(0));
    auto rearranged = [&](std::vector<int64_t> split, std::vector<int64_t> perm, std::vector<int64_t> shape) {
        const E moved = E::call("permute", {E::call("reshape", {x, E::list(std::move(split))}), E::list(std::move(perm))});
        return E::call("reshape", {moved, E::list(std::move(shape))});
    };
    if (!toSpace) {
        if (H % b || W % b)
            c.unsupported("height " + std::to_string(H) + " and width " + std::to_string(W) + " are not multiples of blocksize");
        return rearranged({-1, C, H / b, b, W / b, b}, {0, 3, 5, 1, 2, 4}, {-1, C * b * b, H / b, W / b});
    }
    if (C % (b * b))
        c.unsupported(std::to_string(C) + " channels are not a multiple of blocksize squared");
    if (mode == "CRD")  // PyTorch's pixel shuffle
        return E::call("pixel_shuffle", {x, E::integer(b)});
    return rearranged({-1, b, b, C / (b * b), H, W}, {0, 3, 4, 1, 5, 2}, {-1, C / (b * b), H * b, W * b});
}

// LRN as the runtime computes it: the squares summed over a window of channels [c - floor((size-1)/2),
// c + ceil((size-1)/2)] (an average pool over the padded channel axis, times size), then
// x / (bias + alpha / size * sum)^beta. Needs the channels' and spatial sizes.
E lrn(const Context& c)
{
    const int64_t size = c.node.attrInt("size", 0);
    if (size < 1)
        c.unsupported("size " + std::to_string(size) + " must be positive");
    const double alpha = c.node.attrFloat("alpha", 1e-4f), beta = c.node.attrFloat("beta", 0.75f),
                 bias = c.node.attrFloat("bias", 1.0f);
    const std::vector<int64_t> d = c.dims(c.in(0));
    if (d.size() < 3 || std::any_of(d.begin() + 1, d.end(), [](int64_t v) { return v < 1; }))
        c.unsupported("the input needs rank 3 or more and known, nonzero channels and spatial sizes (fix input sizes with --shape)");
    int64_t spatial = 1;
    for (size_t i = 2; i < d.size(); ++i)
        spatial *= d[i];
    const E x = E::val(c.in(0));
    const int64_t before = (size - 1) / 2, after = size - 1 - before;
    std::vector<int64_t> pads(2 * (d.size() - 2), 0);
    pads.push_back(before);
    pads.push_back(after);
    const E squares = constantPad(E::call("unsqueeze", {E::call("mul", {x, x}), E::integer(1)}), pads, 0.0);
    const E flat = E::call("reshape", {squares, E::list({-1, 1, d[1] + size - 1, spatial})});
    const E sum = E::call("mul", {E::call("avg_pool2d", {flat, E::list({size, 1}).named("kernel_size"),
                                                         E::list({1, 1}).named("stride")}),
                                  E::real(double(size))});
    const E scaled = E::call("add", {E::call("mul", {E::call("reshape", {sum, E::sizes(x)}), E::real(alpha / double(size))}),
                                     E::real(bias)});
    return E::call("div", {x, E::call("pow", {scaled, E::real(beta)})});
}

// MeanVarianceNormalization over `axes` (N, H, W by default), as ONNX's function body and the
// runtime's kernel: (x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9).
E meanVarianceNormalization(const Context& c)
{
    if (!isFloating(c.dtype(0)))
        c.unsupported("MeanVarianceNormalization is generated for floating-point tensors only");
    std::vector<int64_t> axes = c.node.attr("axes") ? c.node.attrInts("axes") : std::vector<int64_t>{0, 2, 3};
    for (int64_t& a : axes)
        a = c.axisOf(0, a);
    const E x = E::val(c.in(0));
    auto mean = [&](E v) { return E::call("mean", {std::move(v), E::list(axes).named("dim"), E::boolean(true).named("keepdim")}); };
    const E m = mean(x);
    const E variance = E::call("sub", {mean(E::call("mul", {x, x})), E::call("mul", {m, m})});
    return E::call("div", {E::call("sub", {x, m}), E::call("add", {E::call("sqrt", {variance}), E::real(1e-9)})});
}

// Trilu: the upper or lower triangle from diagonal k, a constant (0 where absent) clamped, as
// the runtime's kernel, where the matrix's sizes are known; a computed k, the `onnx_trilu` helper.
E trilu(const Context& c)
{
    const bool upper = c.node.attrInt("upper", 1) != 0;
    if (c.has(1) && !c.out.isConstant(c.in(1)))
        return E::call("onnx_trilu", {E::val(c.in(0)), E::val(c.in(1)), E::boolean(upper)});
    int64_t k = 0;
    if (c.has(1)) {
        const std::vector<int64_t> given = c.constInts(1);
        if (given.size() != 1)
            c.unsupported("k has " + std::to_string(given.size()) + " values where one is expected");
        k = given[0];
    }
    const auto& shape = c.graph.value(c.in(0)).type.shape;
    if (shape && shape->rank() >= 2 && shape->dims[shape->rank() - 1].isKnown() && shape->dims[shape->rank() - 2].isKnown()) {
        const int64_t limit = shape->dims[shape->rank() - 1].value + shape->dims[shape->rank() - 2].value + 1;
        k = std::clamp<int64_t>(k, -limit, limit);
    } else if (std::abs(k) > (int64_t(1) << 31)) {
        c.unsupported("k " + std::to_string(k) + " is beyond any matrix whose sizes are unknown");
    }
    return E::call(upper ? "triu" : "tril", {E::val(c.in(0)), E::integer(k).named("diagonal", k == 0)});
}

// EyeLike: ones on diagonal k of a matrix of the input's shape (a lower triangle's upper one
// from k), of the node's dtype or the input's.
E eyeLike(const Context& c)
{
    const int64_t k = c.node.attrInt("k", 0);
    const Attribute* type = c.node.attr("dtype");
    const DataType t = type ? dataTypeFromOnnx(int32_t(type->i)) : c.dtype(0);
    if (!castable(t))
        c.unsupported("a matrix of type " + dataTypeName(t) + " is not generated");
    if (c.rank(0) != 2)
        c.unsupported("the input must have rank 2");
    const E ones = E::call("ones_like", {E::val(c.in(0)), E::dtype(t).named("dtype")});
    return E::call("triu", {E::call("tril", {ones, E::integer(k).named("diagonal", k == 0)}), E::integer(k).named("diagonal", k == 0)});
}

// CumSum along a constant axis, exclusive (shifted by one, the first sum 0) and reversed, as
// the runtime's kernel.
E cumSum(const Context& c)
{
    const bool exclusive = c.node.attrInt("exclusive", 0) != 0, reverse = c.node.attrInt("reverse", 0) != 0;
    if (!c.out.isConstant(c.in(1)))  // the axis computed when the code runs
        return E::call("onnx_cumsum", {E::val(c.in(0)), E::val(c.in(1)), E::boolean(exclusive), E::boolean(reverse)});
    const std::vector<int64_t> given = c.constInts(1);
    if (given.size() != 1)
        c.unsupported("axis has " + std::to_string(given.size()) + " values where one is expected");
    const int64_t axis = c.axisOf(0, given[0]);
    const E x = E::val(c.in(0));
    auto flipped = [&](E v) { return reverse ? E::call("flip", {std::move(v), E::list({axis})}) : v; };
    E y = E::call("cumsum", {flipped(x), E::integer(axis).named("dim"), E::dtype(c.dtype(0)).named("dtype")});
    if (exclusive) {
        const int64_t n = c.dims(c.in(0))[size_t(axis)];
        if (n < 0 || (axis == 0 && c.batch != 1))
            c.unsupported("exclusive needs the axis's size, known here only at batch 1 and for known sizes");
        if (n > 0)
            y = E::call("cat", {E::tensors({E::call("zeros_like", {E::call("narrow", {y, E::integer(axis), E::integer(0), E::integer(1)})}),
                                            E::call("narrow", {y, E::integer(axis), E::integer(0), E::integer(n - 1)})}),
                                E::integer(axis).named("dim")});
    }
    return flipped(y);
}

// A fused node's activation (its `activation`, `activation_params`) applied to y.
E activated(const Context& c, const E& y)
{
    const std::string act = c.node.attrString("activation", "");
    const Attribute* p = c.node.attr("activation_params");
    const std::vector<float> params = p ? p->floats : std::vector<float>{};
    if (act.empty())
        return y;
    if (act == "Relu")
        return E::call("relu", {y});
    if (act == "Sigmoid")
        return E::call("sigmoid", {y});
    if (act == "HardSwish")
        return E::call("hardswish", {y});
    if (act == "Silu")
        return E::call("silu", {y});
    if (act == "LeakyRelu")
        return E::call("leaky_relu", {y, E::real(params.empty() ? 0.01 : params[0]).named("negative_slope")});
    if (act == "Clip" && params.size() == 2)
        return E::call("clamp", {y, E::real(params[0]).named("min"), E::real(params[1]).named("max")});
    c.unsupported("activation '" + printable(act) + "'");
}

// Inference batch normalization of x, the node's statistics its inputs from `first`
// on (scale, B, mean, variance), in at::batch_norm's order; Python names each one.
E batchNorm(const Context& c, const E& x, size_t first)
{
    return E::call("batch_norm", {x, E::val(c.in(first)).named("weight"), E::val(c.in(first + 1)).named("bias"),
                                  E::val(c.in(first + 2)).named("running_mean"), E::val(c.in(first + 3)).named("running_var"),
                                  E::boolean(false).named("training", true), E::real(0.0).named("momentum", true),
                                  E::real(c.node.attrFloat("epsilon", 1e-5f)).named("eps"),
                                  E::boolean(false).named("cudnn_enabled", true)});
}

// Group normalization of the node's first input over `groups` groups, with per-channel
// scale and bias (ATen's kernel, channels-last aware).
E groupNorm(const Context& c, int64_t groups, const E& scale, const E& bias)
{
    return E::call("group_norm", {E::val(c.in(0)), E::integer(groups), scale.named("weight"), bias.named("bias"),
                                  E::real(c.node.attrFloat("epsilon", 1e-5f)).named("eps")});
}

const std::map<std::string, Lowering>& lowerings()
{
    static const std::map<std::string, Lowering> table = [] {
        std::map<std::string, Lowering> r;
        r["Conv"] = [](const Context& c) { return conv(c); };
        // Ramiel's fused convolution (fuse-conv-activation): the convolution, plus its summand
        // where it has one, then its activation. oneDNN's Relu post-op makes 0 of NaN: conv2d fuses
        // a Relu only where the node's inputs are finite whenever the graph's are (and looks at
        // its input in a call whose inputs are not); elsewhere the Relu is written out. Its SiLU
        // (swish) and HardSwish keep NaN and infinities as ATen's do (HardSwish makes NaN of -inf,
        // as ATen's), and are fused everywhere: ATen's, passes of their own, took 5 of
        // efficientnet_b0's 16-17 ms and 0.44 of mobilenet_v3_large's 6.3 on one thread.
        r[kFusedConv] = [](const Context& c) {
            bool fused = false;
            const std::string act = c.node.attrString("activation", "");
            const bool fusable =
                act == "Silu" || act == "HardSwish" || (act == "Relu" && readsFiniteValues(c.node, c.finite));
            const E y = c.has(3) ? E::call("add", {conv(c), E::val(c.in(3))}) : conv(c, fusable ? act : "", &fused);
            return fused ? y : activated(c, y);
        };
        // fuse-batchnorm's ai.ramiel.FusedBatchNorm: cat of the parts (more than one),
        // batch_norm as BatchNormalization's, then the activation.
        r[kFusedBatchNorm] = [](const Context& c) {
            const size_t parts = c.node.inputs.size() - 4;
            std::vector<E> xs;
            for (size_t i = 0; i < parts; ++i)
                xs.push_back(E::val(c.in(i)));
            const E x = parts == 1 ? xs[0] : E::call("cat", {E::tensors(std::move(xs)), E::integer(1).named("dim")});
            return activated(c, batchNorm(c, x, parts));
        };
        // fuse-group-norm's ai.ramiel.FusedGroupNorm: group_norm, then the activation.
        r[kFusedGroupNorm] = [](const Context& c) {
            return activated(c, groupNorm(c, c.node.attrInt("num_groups", 1), E::val(c.in(1)), E::val(c.in(2))));
        };
        // ONNX GroupNormalization: the same, opset 18's scale and bias per group repeated for
        // each group's channels.
        r["GroupNormalization"] = [](const Context& c) {
            const int64_t groups = c.node.attrInt("num_groups", 0);
            if (groups < 1)
                c.unsupported("GroupNormalization without a num_groups of at least 1");
            E scale = E::val(c.in(1)), bias = E::val(c.in(2));
            if (c.node.opset < 21) {
                const std::vector<int64_t> d = c.dims(c.in(0));
                if (d.size() < 2 || d[1] < 1 || d[1] % groups)
                    c.unsupported("GroupNormalization whose channels are unknown or not divided by num_groups");
                scale = E::call("repeat_interleave", {scale, E::integer(d[1] / groups)});
                bias = E::call("repeat_interleave", {bias, E::integer(d[1] / groups)});
            }
            return groupNorm(c, groups, scale, bias);
        };
        r["MaxPool"] = [](const Context& c) { return pool(c, true, true); };
        r["LpNormalization"] = lpNormalization;
        r["LpPool"] = lpPool;
        r["GlobalLpPool"] = globalLpPool;
        r["AveragePool"] = [](const Context& c) { return pool(c, false, c.node.attrInt("count_include_pad", 0) != 0); };
        r["GlobalAveragePool"] = [](const Context& c) {
            // 2-D with known sizes: an average pool over the whole image, a channels-last kernel
            // (mean reduces over non-inner dimensions, 1.4-1.6x slower here).
            const auto& shape = c.graph.value(c.in(0)).type.shape;
            if (shape && shape->rank() == 4 && shape->dims[2].isKnown() && shape->dims[3].isKnown())
                return E::call("avg_pool2d", {E::val(c.in(0)), E::list({shape->dims[2].value, shape->dims[3].value}).named("kernel_size")});
            return E::call("mean", {E::val(c.in(0)), E::list(spatialDims(c.rank(0))).named("dim"), E::boolean(true).named("keepdim")});
        };
        r["GlobalMaxPool"] = [](const Context& c) {
            return E::call("amax", {E::val(c.in(0)), E::list(spatialDims(c.rank(0))).named("dim"), E::boolean(true).named("keepdim")});
        };
        for (const auto& [op, fn] : std::vector<std::pair<const char*, const char*>>{
                 {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Exp", "exp"}, {"Log", "log"},
                 {"Sqrt", "sqrt"}, {"Neg", "neg"}, {"Abs", "abs"}, {"Erf", "erf"}, {"Reciprocal", "reciprocal"},
                 {"Floor", "floor"}, {"Ceil", "ceil"}, {"Round", "round"}, {"Sign", "sign"}, {"IsNaN", "isnan"},
                 {"Sin", "sin"}, {"Cos", "cos"}, {"Tan", "tan"}, {"Asin", "asin"}, {"Acos", "acos"}, {"Atan", "atan"},
                 {"Sinh", "sinh"}, {"Cosh", "cosh"}, {"Asinh", "asinh"}, {"Acosh", "acosh"}, {"Atanh", "atanh"}}) {
            const char* f = fn;
            r[op] = [f](const Context& c) { return unary(c, f); };
        }
        for (const auto& [op, fn] : std::vector<std::pair<const char*, const char*>>{
                 {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"MatMul", "matmul"}}) {
            const std::string f = fn;
            r[op] = [f](const Context& c) {
                const bool integers = !isFloating(c.dtype(0)) && !isFloating(c.dtype(1));
                if (f == "div" && integers)  // ONNX's integer division truncates
                    return E::call(f, {E::val(c.in(0)), E::val(c.in(1)), E::text("trunc").named("rounding_mode")});
                if (f == "div" && (!isFloating(c.dtype(0)) || !isFloating(c.dtype(1))))
                    c.unsupported("Div of a floating-point and an integer tensor");
                if (f == "matmul") {  // by a constant matrix: a linear layer; of two floats: oneDNN's too
                    if (auto layer = linearLayer(c, E::val(c.in(0)), c.constantIn(1), false, kNone, false))
                        return *layer;
                    if (c.dtype(0) == DataType::Float && c.dtype(1) == DataType::Float)
                        return E::call("batched_matmul", {E::val(c.in(0)), E::val(c.in(1))});
                }
                return E::call(f, {E::val(c.in(0)), E::val(c.in(1))});
            };
        }
        r["Gelu"] = [](const Context& c) {  // ONNX Gelu (opset 20) and fuse-gelu's ai.ramiel.Gelu
            if (c.node.attrString("approximate", "none") != "none")
                c.unsupported("Gelu with approximate '" + printable(c.node.attrString("approximate", "")) + "'");
            return unary(c, "gelu");
        };
        r[kSilu] = [](const Context& c) { return unary(c, "silu"); };  // fuse-silu's ai.ramiel.Silu
        // ONNX HardSwish (opset 14) and fuse-hardswish's ai.ramiel.HardSwish.
        r["HardSwish"] = [](const Context& c) { return unary(c, "hardswish"); };
        r["HardSigmoid"] = [](const Context& c) {  // PyTorch's own where alpha is 1/6 and beta 1/2
            const double alpha = c.node.attrFloat("alpha", 0.2f), beta = c.node.attrFloat("beta", 0.5f);
            if (std::abs(alpha - 1.0 / 6.0) < 1e-6 && beta == 0.5)
                return unary(c, "hardsigmoid");
            const E line = E::call("add", {E::call("mul", {E::val(c.in(0)), E::real(alpha)}), E::real(beta)});
            return E::call("clamp", {line, E::real(0).named("min"), E::real(1).named("max")});
        };
        // ONNX LayerNormalization (opset 17) and fuse-layer-norm's ai.ramiel.LayerNormalization:
        // layer_norm over the dimensions from `axis` on, which must leave the batch out.
        // F.layer_norm; the mean and inverse standard deviation where they are read too, as the
        // runtime's kernel computes them (the deviation's square's mean; shapes keep the
        // normalized axes as 1).
        r["LayerNormalization"] = [](const Context& c) {
            if (c.dtype(0) != DataType::Float)
                c.unsupported("LayerNormalization is generated for float tensors only");
            const int64_t rank = c.rank(0), axis = c.axis(c.node.attrInt("axis", -1), rank);
            if (axis == 0 && c.batch != 1)  // copies of the graph would each normalize their own samples
                c.unsupported("it normalizes over the batch dimension too, which is generated at batch 1 only");
            const std::vector<int64_t> d = c.dims(c.in(0));
            const double eps = c.node.attrFloat("epsilon", 1e-5f);
            const E x = E::val(c.in(0));
            const E y = E::call("layer_norm", {x, E::list(std::vector<int64_t>(d.begin() + axis, d.end())), E::val(c.in(1)),
                                               c.has(2) ? E::val(c.in(2)) : E::none(), E::real(eps)});
            if (c.outputsRead() == 1)
                return y;
            std::vector<int64_t> reduce;
            for (int64_t i = axis; i < rank; ++i)
                reduce.push_back(i);
            auto mean = [&](const E& t) { return E::method(t, "mean", {E::list(reduce), E::boolean(true)}); };
            const E deviation = E::call("sub", {x, mean(x)});
            const E invStd = E::call("rsqrt", {E::call("add", {mean(E::method(deviation, "pow", {E::integer(2)})), E::real(eps)})});
            return c.outputs(E::tensors({y, mean(x), invStd}), c.outputsRead());
        };
        r[kMatMulAdd] = [](const Context& c) {  // fuse-matmul-add's ai.ramiel.MatMulAdd
            const bool gelu = c.node.attrString("activation", "") == kGelu;
            if (auto layer = linearLayer(c, E::val(c.in(0)), c.constantIn(1), false, c.constantIn(2), gelu))
                return *layer;
            const E sum = E::call("add", {E::call("matmul", {E::val(c.in(0)), E::val(c.in(1))}), E::val(c.in(2))});
            return gelu ? E::call("gelu", {sum}) : sum;
        };
        // fuse-channel-shuffle's ai.ramiel.ChannelShuffle: cat, reshape, permute, reshape, then
        // where its Slices were folded in, split into its outputs.
        r[kChannelShuffle] = [](const Context& c) {
            std::vector<E> parts;
            for (size_t i = 0; i < c.node.inputs.size(); ++i)
                parts.push_back(E::val(c.in(i)));
            const std::vector<int64_t> d = c.dims(c.in(0));
            const std::vector<int64_t> split = c.node.attrInts("split");
            const int64_t group = c.node.attrInt("group", 1), channels = std::accumulate(split.begin(), split.end(), int64_t(0));
            if (split.size() != c.node.outputs.size() || group < 1 || channels % group)
                c.unsupported("split " + std::to_string(split.size()) + " sizes of " + std::to_string(channels) +
                              " channels for " + std::to_string(c.node.outputs.size()) + " outputs in " +
                              std::to_string(group) + " groups");
            const E x = parts.size() == 1 ? parts[0] : E::call("cat", {E::tensors(std::move(parts)), E::integer(1).named("dim")});
            const E grouped = E::call("reshape", {x, E::list({-1, group, channels / group, d.at(2), d.at(3)})});
            const E shuffled = E::method(E::call("permute", {grouped, E::list({0, 2, 1, 3, 4})}), "contiguous");
            const E y = E::call("reshape", {shuffled, E::list({-1, channels, d.at(2), d.at(3)})});
            if (c.node.outputs.size() == 1)
                return y;
            // Its Slices or Split, folded in: the channels cut into the node's outputs.
            return c.outputs(E::call("split", {y, E::list(split), E::integer(1).named("dim")}), split.size());
        };
        // Split into parts of the given sizes (an attribute before opset 13, then input 1), or
        // ONNX's equal parts of a known axis.
        r["Split"] = [](const Context& c) {
            const int64_t axis = c.axisOf(0, c.node.attrInt("axis", 0));
            if (c.node.opset >= 13 && c.has(1) && !c.out.isConstant(c.in(1))) {  // sizes computed when the code runs
                const E parts = E::call("split", {E::val(c.in(0)), E::call("sizes_of", {E::val(c.in(1))}),
                                                  E::integer(axis).named("dim", axis == 0)});
                return c.node.outputs.size() == 1 ? E::index(parts, 0) : c.outputs(parts, c.node.outputs.size());
            }
            std::vector<int64_t> sizes = c.node.opset < 13 ? c.node.attrInts("split")
                                                             : (c.has(1) ? c.constInts(1) : std::vector<int64_t>{});
            if (sizes.empty()) {
                const int64_t size = c.dims(c.in(0))[size_t(axis)];
                if (size < 0 || (axis == 0 && c.batch != 1))
                    c.unsupported("equal parts need the axis's size, known here only at batch 1 and for known sizes");
                SplitParts parts = splitParts(c.node.opset, size, int64_t(c.node.outputs.size()));
                if (!parts.problem.empty())
                    c.unsupported(parts.problem);
                sizes = std::move(parts.sizes);
            }
            if (sizes.size() != c.node.outputs.size())
                c.unsupported(std::to_string(sizes.size()) + " sizes for " + std::to_string(c.node.outputs.size()) + " outputs");
            const E parts = E::call("split", {E::val(c.in(0)), E::list(sizes), E::integer(axis).named("dim", axis == 0)});
            return sizes.size() == 1 ? E::index(parts, 0) : c.outputs(parts, sizes.size());
        };
        r["Identity"] = [](const Context& c) { return E::val(c.in(0)); };
        // Inference's copy, or in training mode (is_test = 0 before opset 7, a constant
        // training_mode since opset 12) torch.dropout with the node's ratio.
        r["Dropout"] = [](const Context& c) {
            const DropoutMode m = dropoutMode(c.node, [&](size_t i) { return c.out.constant(c.node.input(i)); });
            if (m.dropsNothing() && c.outputsRead() == 2)  // and its mask, every element kept (the runtime's bool)
                return c.outputs(E::tensors({E::val(c.in(0)), E::call("ones_like", {E::val(c.in(0)),
                                                                                     E::dtype(DataType::Bool).named("dtype")})}),
                                 2);
            if (m.dropsNothing())
                return E::val(c.in(0));
            if (m.training && m.ratio && c.outputsRead() == 1) {
                if (!(*m.ratio > 0.0 && *m.ratio < 1.0))
                    c.unsupported("ratio " + std::to_string(*m.ratio) + " is outside [0, 1)");
                return E::call("dropout", {E::val(c.in(0)), E::real(*m.ratio), E::boolean(true)});
            }
            // The mask read, or the ratio or mode known only when the code runs: onnx_dropout (the
            // attributes before opset 12 as scalar tensors).
            auto given = [&](size_t i, E attribute) {
                return c.node.opset < 12 ? E::call("scalar_tensor", {std::move(attribute)})
                       : c.has(i)       ? E::val(c.in(i))
                                        : E::none();
            };
            const E call = E::call("onnx_dropout", {E::val(c.in(0)), given(1, E::real(m.ratio.value_or(0.5))),
                                                    given(2, E::boolean(m.training.value_or(false)))});
            return c.outputsRead() == 1 ? E::index(call, 0) : c.outputs(call, 2);
        };
        r["Concat"] = [](const Context& c) {
            std::vector<E> parts;
            for (ValueId v : c.node.inputs)
                if (v != kNone)
                    parts.push_back(E::val(v));
            if (parts.empty())
                c.unsupported("no inputs");
            return E::call("cat", {E::tensors(std::move(parts)), E::integer(c.axisOrNegative(0, c.node.attrInt("axis", 0))).named("dim")});
        };
        // The axis in [-rank, rank], a negative one counted from the end of the input's axes. With
        // the rank unknown (a detector's boxes), an axis from the start: flatten's, which refuses an
        // input of just `axis` dimensions when the code runs.
        r["Flatten"] = [](const Context& c) {
            const bool known = c.graph.value(c.in(0)).type.shape.has_value();
            const int64_t rank = known ? c.rank(0) : -1;
            const int64_t given = c.node.attrInt("axis", 1);
            const int64_t a = given < 0 ? c.axisOf(0, given) : c.axisOf(0, given, 1);
            const E x = E::val(c.in(0));
            if (a == 0)
                return E::call("reshape", {x, E::list({1, -1})});
            if (a == rank)
                return E::call("reshape", {x, E::list({-1, 1})});
            if (a == 1)
                return E::call("flatten", {x, E::integer(1).named("start_dim")});
            return E::call("flatten", {E::call("flatten", {x, E::integer(0).named("start_dim"), E::integer(a - 1).named("end_dim")}),
                                       E::integer(1).named("start_dim")});
        };
        r["Gemm"] = [](const Context& c) {
            const double alpha = c.node.attrFloat("alpha", 1.0f), beta = c.node.attrFloat("beta", 1.0f);
            // A float product by constant weights: oneDNN's matmul, also for one row (a classifier
            // at batch 1), where it beats ATen's matrix-vector product (efficientnet_b0's 1000 x 1280
            // on one thread 207 against 325 us, on two 90 against 165).
            const bool transB = c.node.attrInt("transB", 0) != 0;
            if (c.node.attrInt("transA", 0) == 0 && alpha == 1.0 && (!c.has(2) || beta == 1.0))
                if (auto layer = linearLayer(c, E::val(c.in(0)), c.constantIn(1), transB, c.has(2) ? c.constantIn(2) : kNone, false))
                    return *layer;
            // Otherwise, as the runtime's kernel: one row of A times constant [N, K] rows of B
            // (transB) is a matrix-vector product, 2-5x faster than a 1-row GEMM. Only at batch 1:
            // forward() runs the whole batch, even when each copy runs one sample.
            const auto& shapeA = c.graph.value(c.in(0)).type.shape;
            if (c.batch == 1 && c.node.attrInt("transA", 0) == 0 && c.node.attrInt("transB", 0) != 0 &&
                c.out.isConstant(c.in(1)) && shapeA && shapeA->rank() == 2 && shapeA->dims[0].value == 1 &&
                c.dtype(0) == c.dtype(1) &&
                (!c.has(2) || c.rank(2) <= 1)) {
                E row = E::index(E::val(c.in(0)), 0);
                E y = c.has(2) ? E::call("addmv", {E::val(c.in(2)), E::val(c.in(1)), row,
                                                   E::real(beta).named("beta", beta == 1.0),
                                                   E::real(alpha).named("alpha", alpha == 1.0)})
                               : E::call("mv", {E::val(c.in(1)), row});
                if (!c.has(2) && alpha != 1.0)
                    y = E::call("mul", {y, E::real(alpha)});
                return E::method(y, "unsqueeze", {E::integer(0)});
            }
            E a = E::val(c.in(0)), b = E::val(c.in(1));
            if (c.node.attrInt("transA", 0) != 0)
                a = E::call("t", {a});
            if (c.node.attrInt("transB", 0) != 0)
                b = E::call("t", {b});
            E y = E::call("matmul", {a, b});
            if (alpha != 1.0)
                y = E::call("mul", {y, E::real(alpha)});
            if (c.has(2))
                y = E::call("add", {y, beta == 1.0 ? E::val(c.in(2)) : E::call("mul", {E::val(c.in(2)), E::real(beta)})});
            return y;
        };
        r["BatchNormalization"] = [](const Context& c) {
            if (batchNormTrains(c.node)) {  // the batch's statistics, and the running ones moved towards them
                if (c.node.attrInt("spatial", 1) == 0)
                    c.unsupported("training with statistics per activation (spatial = 0) is not supported");
                const E call = E::call("onnx_batch_norm_training",
                                       {E::val(c.in(0)), E::val(c.in(1)), E::val(c.in(2)), E::val(c.in(3)), E::val(c.in(4)),
                                        E::real(c.node.attrFloat("epsilon", 1e-5f)), E::real(c.node.attrFloat("momentum", 0.9f))});
                return c.outputsRead() == 1 ? E::index(call, 0) : c.outputs(call, 5);
            }
            c.onlyFirstOutput();
            if (c.node.attrInt("spatial", 1) == 0)
                c.unsupported("statistics per activation (spatial = 0) are not supported");
            return batchNorm(c, E::val(c.in(0)), 1);
        };
        r["Softmax"] = [](const Context& c) {
            return alongAxis(c, [](E x, int64_t axis) { return E::call("softmax", {std::move(x), E::integer(axis).named("dim")}); });
        };
        r["Transpose"] = [](const Context& c) {
            std::vector<int64_t> perm = c.node.attrInts("perm");
            if (perm.empty())
                for (int64_t i = c.rank(0); i-- > 0;)
                    perm.push_back(i);
            // A view, as the runtime's: ConvNeXt's way back to NCHW stays channels-last, which
            // the next convolution reads as it lies (a copy there cost 2 copies a block).
            return E::call("permute", {E::val(c.in(0)), E::list(perm)});
        };
        r["Reshape"] = [](const Context& c) {
            if (c.node.opset < 5)
                c.unsupported("opset below 5 is not supported");
            if (!c.out.isConstant(c.in(1)))
                return E::call("onnx_reshape", {E::val(c.in(0)), E::val(c.in(1)), E::boolean(c.node.attrInt("allowzero", 0) != 0)});
            const auto shape = c.constInts(1);
            if (c.node.attrInt("allowzero", 0) != 0 || std::count(shape.begin(), shape.end(), 0) == 0)
                return E::call("reshape", {E::val(c.in(0)), E::list(shape)});
            // A 0 copies the input's size there, read when the code runs: x.size(1).
            std::vector<E> sizes;
            for (size_t i = 0; i < shape.size(); ++i)
                sizes.push_back(shape[i] == 0 ? E::method(E::val(c.in(0)), "size", {E::integer(int64_t(i))}) : E::integer(shape[i]));
            return E::call("reshape", {E::val(c.in(0)), E::tensors(std::move(sizes))});
        };
        // Constant padding of any axes; 'reflect' and 'edge' (ATen's reflection and replication
        // padding) of the axes after the first two of a 3-D to 5-D floating-point tensor, as the
        // runtime's kernel pads them.
        r["Pad"] = pad;
        r["Slice"] = slice;
        r["Resize"] = resize;
        // Upsample (before opset 10) in nearest mode of a 4-D tensor's spatial axes by constant scales
        // that give whole sizes: ONNX's asymmetric coordinates with floor, F.interpolate's nearest;
        // linear mode axis by axis as the runtime; scales computed when the code runs, or other
        // ranks and axes (since opset 9, where the scales are an input): every axis through onnx_resize.
        r["Upsample"] = [](const Context& c) {
            std::string mode = c.node.attrString("mode", "nearest");
            if (mode == "bilinear")  // an old spelling the runtime takes too
                mode = "linear";
            if (mode != "nearest" && mode != "linear")
                c.unsupported("mode '" + printable(mode) + "'");
            auto byHelper = [&] {
                return E::call("onnx_resize", {E::val(c.in(0)), E::val(c.in(1)), E::none(), E::text(mode),
                                               E::text("asymmetric"), E::text("floor"), E::real(-0.75), E::boolean(false)});
            };
            std::vector<double> scales;
            if (c.node.opset < 9) {
                for (float f : c.node.attr("scales") ? c.node.attr("scales")->floats : std::vector<float>{})
                    scales.push_back(f);
            } else if (!c.out.isConstant(c.in(1))) {
                return byHelper();
            } else {
                const auto given = c.out.constants.at(c.in(1))->toDoubles();
                if (!given)
                    c.unsupported("the scales are not numbers");
                scales = *given;
            }
            const std::vector<int64_t> in = c.dims(c.in(0));
            const bool spatial = in.size() == 4 && scales.size() == 4 && scales[0] == 1.0 && scales[1] == 1.0;
            if (!spatial && c.node.opset >= 9)
                return byHelper();
            if (!spatial)
                c.unsupported("generated for the two spatial axes of a 4-D tensor");
            std::vector<int64_t> size;
            for (size_t i = 2; i < 4; ++i) {
                const double out = double(in[i]) * scales[i];
                const bool whole = in[i] >= 0 && scales[i] >= 1.0 && out == std::floor(out) && out <= double(int64_t(1) << 40);
                if (!whole && c.node.opset >= 9)
                    return byHelper();
                if (!whole)
                    c.unsupported("scale " + std::to_string(scales[i]) + " of a size " + std::to_string(in[i]) +
                                  " is not generated (at least 1, giving a whole size)");
                size.push_back(int64_t(out));
            }
            if (mode == "linear")  // asymmetric coordinates: x_out / scale
                return resizeByAxis(c, in, {in[0], in[1], size[0], size[1]}, scales,
                                    {double(in[0]), double(in[1]), double(size[0]), double(size[1])}, "asymmetric",
                                    "onnx_resize_linear");
            return E::call("interpolate_nearest", {E::val(c.in(0)), E::list(size).named("size"),
                                                   E::text("nearest").named("mode", true).inPythonOnly()});
        };
        for (const char* op : {"LSTM", "GRU", "RNN"})
            r[op] = recurrent;
        // ReverseSequence: each row's first sequence_lens steps in reverse order (the recurrent
        // piece's reverse_within, which takes the time axis first).
        r["ReverseSequence"] = [](const Context& c) {
            const int64_t time = c.node.attrInt("time_axis", 0), batch = c.node.attrInt("batch_axis", 1);
            if (!((time == 0 && batch == 1) || (time == 1 && batch == 0)))
                c.unsupported("time_axis " + std::to_string(time) + " and batch_axis " + std::to_string(batch) +
                              " are not 0 and 1");
            if (c.dtype(1) != DataType::Int64 && c.dtype(1) != DataType::Int32)
                c.unsupported("sequence_lens is not an integer tensor");
            if (time == 0)
                return E::call("reverse_within", {E::val(c.in(0)), E::val(c.in(1))});
            auto swap = [](E x) { return E::method(std::move(x), "transpose", {E::integer(0), E::integer(1)}); };
            return swap(E::call("reverse_within", {swap(E::val(c.in(0))), E::val(c.in(1))}));
        };
        r["Gather"] = gather;
        r["Compress"] = [](const Context& c) {
            const Attribute* axis = c.node.attr("axis");
            return E::call("onnx_compress", {E::val(c.in(0)), E::val(c.in(1)), axis ? E::integer(axis->i) : E::none()});
        };
        r["Unique"] = [](const Context& c) {
            const Attribute* axis = c.node.attr("axis");
            const E call = E::call("onnx_unique", {E::val(c.in(0)), axis ? E::integer(axis->i) : E::none(),
                                                   E::boolean(c.node.attrInt("sorted", 1) != 0)});
            return c.outputsRead() == 1 ? E::index(call, 0) : c.outputs(call, 4);
        };
        // MaxUnpool from its kernel, strides and pads (the pooled input's shape), then output_shape.
        r["MaxUnpool"] = [](const Context& c) {
            const std::vector<int64_t> kernel = c.node.attrInts("kernel_shape");
            if (kernel.empty() || int64_t(kernel.size()) != c.rank(0) - 2)
                c.unsupported("kernel_shape does not name the input's spatial axes");
            std::vector<int64_t> strides = c.node.attrInts("strides"), pads = c.node.attrInts("pads");
            if (strides.empty())
                strides.assign(kernel.size(), 1);
            if (pads.empty())
                pads.assign(2 * kernel.size(), 0);
            if (strides.size() != kernel.size() || pads.size() != 2 * kernel.size())
                c.unsupported("strides and pads do not match kernel_shape");
            std::vector<E> args{E::val(c.in(0)), E::val(c.in(1)), E::list(kernel), E::list(strides), E::list(pads)};
            if (c.has(2))
                args.push_back(E::val(c.in(2)));
            return E::call("onnx_max_unpool", std::move(args));
        };
        r["GatherND"] = [](const Context& c) {
            if (c.dtype(1) != DataType::Int64)
                c.unsupported("the indices are not int64");
            return E::call("onnx_gather_nd", {E::val(c.in(0)), E::val(c.in(1)), E::integer(c.node.attrInt("batch_dims", 0))});
        };
        r["ReduceMean"] = [](const Context& c) { return reduce(c, "mean", 18); };
        r["ReduceSum"] = [](const Context& c) { return reduce(c, "sum", 13); };
        r["ReduceMax"] = [](const Context& c) { return reduce(c, "amax", 18); };
        r["ReduceMin"] = [](const Context& c) { return reduce(c, "amin", 18); };
        r["ReduceProd"] = [](const Context& c) { return reduce(c, "prod", 18); };
        for (const char* op : {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
            r[op] = reduceComposed;
        r["Squeeze"] = [](const Context& c) { return squeeze(c, false); };
        r["Unsqueeze"] = [](const Context& c) { return squeeze(c, true); };
        // As the runtime's kernel: a constant one-element exponent (LayerNorm's x^2 written
        // out) as a number, which ATen squares; the result has the base's type.
        r["Pow"] = [](const Context& c) {
            if (!castable(c.dtype(0)) || !castable(c.dtype(1)))
                c.unsupported("Pow of " + dataTypeName(c.dtype(0)) + " and " + dataTypeName(c.dtype(1)) + " is not generated");
            const auto e = c.constScalar(1);
            if (e && isFloating(c.dtype(0)) && c.rank(1) <= c.rank(0))
                return E::call("pow", {E::val(c.in(0)), E::real(*e)});
            const E y = E::call("pow", {E::val(c.in(0)), E::val(c.in(1))});
            return c.dtype(1) == c.dtype(0) ? y : E::method(y, "to", {E::dtype(c.dtype(0))});
        };
        r["Einsum"] = [](const Context& c) {
            const std::string eq = c.node.attrString("equation", "");
            if (eq.empty() || eq.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ,.->") != std::string::npos)
                c.unsupported("the equation '" + printable(eq) + "' has characters outside letters, spaces, ',', '.' and '->'");
            std::vector<E> operands;
            for (size_t i = 0; i < c.node.inputs.size(); ++i)
                operands.push_back(E::val(c.in(i)));
            return E::call("einsum", {E::text(eq), E::tensors(std::move(operands))});
        };
        // Clip: bounds as attributes before opset 11, then optional constant inputs (computed
        // ones as tensors, torch.maximum / torch.minimum, as the runtime's kernel).
        r["Clip"] = [](const Context& c) {
            if (c.node.opset < 11) {
                const float lo = c.node.attrFloat("min", -std::numeric_limits<float>::max());
                const float hi = c.node.attrFloat("max", std::numeric_limits<float>::max());
                return E::call("clamp", {E::val(c.in(0)), E::real(lo).named("min"), E::real(hi).named("max")});
            }
            // Integer tensors: the bounds as tensors of their type (a number would make the result float).
            const bool floating = isFloating(c.dtype(0));
            const auto lo = c.has(1) ? c.constScalar(1) : std::nullopt, hi = c.has(2) ? c.constScalar(2) : std::nullopt;
            if ((c.has(1) && !lo) || (c.has(2) && !hi) || (!floating && (c.has(1) || c.has(2)))) {
                E y = E::val(c.in(0));
                if (c.has(1))
                    y = E::call("maximum", {y, E::val(c.in(1))});
                if (c.has(2))
                    y = E::call("minimum", {y, E::val(c.in(2))});
                return y;
            }
            if (!lo && !hi)
                return E::method(E::val(c.in(0)), "clone");
            return E::call("clamp", {E::val(c.in(0)), lo ? E::real(*lo).named("min") : E::none().named("min", true),
                                     hi ? E::real(*hi).named("max") : E::none().named("max", true)});
        };
        r["LeakyRelu"] = [](const Context& c) {
            return E::call("leaky_relu", {E::val(c.in(0)), E::real(c.node.attrFloat("alpha", 0.01f)).named("negative_slope")});
        };
        r["Elu"] = [](const Context& c) {
            return E::call("elu", {E::val(c.in(0)), E::real(c.node.attrFloat("alpha", 1.0f)).named("alpha")});
        };
        // As the runtime's kernel and ONNX's definition, log(exp(x) + 1) (F.softplus turns linear past 20).
        r["Softplus"] = [](const Context& c) { return E::call("log1p", {unary(c, "exp")}); };
        // Max, Min, Sum and Mean of one or more inputs, pairwise (Mean then divided by their count).
        for (const auto& [op, fn] : std::vector<std::pair<const char*, const char*>>{
                 {"Max", "maximum"}, {"Min", "minimum"}, {"Sum", "add"}, {"Mean", "add"}}) {
            const std::string f = fn;
            r[op] = [f](const Context& c) {
                E y = E::val(c.in(0));
                for (size_t i = 1; i < c.node.inputs.size(); ++i)
                    y = E::call(f, {y, E::val(c.in(i))});
                if (c.node.inputs.size() == 1)
                    return E::method(y, "clone");
                return c.node.opType == "Mean" ? E::call("div", {y, E::integer(int64_t(c.node.inputs.size()))}) : y;
            };
        }
        r["Where"] = [](const Context& c) {
            if (c.dtype(0) != DataType::Bool)
                c.unsupported("the condition is not a bool tensor");
            return E::call("where", {E::val(c.in(0)), E::val(c.in(1)), E::val(c.in(2))});
        };
        for (const auto& [op, fn] : std::vector<std::pair<const char*, const char*>>{
                 {"Equal", "eq"}, {"Less", "lt"}, {"Greater", "gt"}, {"LessOrEqual", "le"}, {"GreaterOrEqual", "ge"},
                 {"And", "logical_and"}, {"Or", "logical_or"}, {"Xor", "logical_xor"}}) {
            const std::string f = fn;
            r[op] = [f](const Context& c) { return E::call(f, {E::val(c.in(0)), E::val(c.in(1))}); };
        }
        r["Not"] = [](const Context& c) { return unary(c, "logical_not"); };
        // fmod 1: the remainder with the dividend's sign (C's fmod); 0, for integers only, the divisor's.
        r["Mod"] = [](const Context& c) {
            const bool fmod = c.node.attrInt("fmod", 0) != 0;
            if (!fmod && isFloating(c.dtype(0)))
                c.unsupported("fmod 0 on floating-point inputs (ONNX requires fmod 1)");
            return E::call(fmod ? "fmod" : "remainder", {E::val(c.in(0)), E::val(c.in(1))});
        };
        // As the runtime's kernel: instance_norm with the node's scale and bias, no running statistics.
        // (C++'s argument order; Python names each, and has no cudnn_enabled.)
        r["InstanceNormalization"] = [](const Context& c) {
            return E::call("instance_norm", {E::val(c.in(0)), E::val(c.in(1)).named("weight"), E::val(c.in(2)).named("bias"),
                                             E::none().named("running_mean", true), E::none().named("running_var", true),
                                             E::boolean(true).named("use_input_stats", true), E::real(0.1).named("momentum", true),
                                             E::real(c.node.attrFloat("epsilon", 1e-5f)).named("eps"),
                                             E::boolean(false).named("cudnn_enabled", true)});
        };
        r["ConvTranspose"] = convTranspose;
        r["Cast"] = [](const Context& c) {
            const DataType to = castTarget(c.node);
            if (!castable(to) || !castable(c.dtype(0)))
                c.unsupported("a cast from " + dataTypeName(c.dtype(0)) + " to " + dataTypeName(to) + " is not generated");
            return E::method(E::val(c.in(0)), "to", {E::dtype(to)});
        };
        // Expand to a constant shape with ONNX's two-way broadcast: each output size from the
        // inferred shape, -1 (keep) where it is the input's own; a computed shape, or shapes not
        // inferred, the `onnx_expand` helper.
        r["Expand"] = [](const Context& c) {
            if (!c.out.isConstant(c.in(1)) || !c.graph.value(c.in(0)).type.shape || !c.graph.value(c.node.outputs[0]).type.shape)
                return E::call("onnx_expand", {E::val(c.in(0)), E::val(c.in(1))});
            const std::vector<int64_t> in = c.dims(c.in(0)), out = c.dims(c.node.outputs[0]);
            if (out.size() < in.size() || std::count(out.begin(), out.end(), -1))
                c.unsupported("the output's shape is unknown");
            std::vector<int64_t> sizes = out;
            for (size_t i = 0; i < in.size(); ++i)
                if (in[i] == out[out.size() - in.size() + i])
                    sizes[out.size() - in.size() + i] = -1;
            if (!c.out.isConstant(c.in(0)) && c.batch != 1 && !in.empty() && sizes[out.size() - in.size()] != -1)
                c.unsupported("it expands the batch dimension at batch " + std::to_string(c.batch));
            return E::method(E::method(E::val(c.in(0)), "expand", {E::list(sizes)}), "contiguous");
        };
        r["Tile"] = [](const Context& c) {
            if (c.node.opset < 6)
                c.unsupported("tiles and axis as inputs (opset below 6) are not supported");
            if (!c.out.isConstant(c.in(1)))  // repeats computed when the code runs
                return E::method(E::val(c.in(0)), "repeat", {E::call("sizes_of", {E::val(c.in(1))})});
            return E::method(E::val(c.in(0)), "repeat", {E::list(c.constInts(1))});
        };
        // A shape filled with the node's value (zeros of float by default).
        r["ConstantOfShape"] = [](const Context& c) {
            const Attribute* v = c.node.attr("value");
            const Tensor* value = v && v->t ? v->t.get() : nullptr;
            const DataType type = value ? value->dtype : DataType::Float;
            const auto number = value ? value->toDoubles() : std::optional<std::vector<double>>(std::vector<double>{0.0});
            if (!castable(type) || !number || number->size() != 1)
                c.unsupported("the value must be one number");
            const E shape = c.out.isConstant(c.in(0)) ? E::list(c.constInts(0)) : E::call("sizes_of", {E::val(c.in(0))});
            return E::call("full", {shape, E::real((*number)[0]), E::dtype(type).named("dtype")});
        };
        // The sizes when the code runs, as an int64 tensor (start and end since opset 15).
        r["Shape"] = [](const Context& c) {
            const E sizes = E::call("tensor", {E::sizes(E::val(c.in(0)))});
            const int64_t start = c.node.attrInt("start", 0);
            const auto* end = c.node.attr("end");
            if (start == 0 && !end)
                return sizes;
            return E::slice(sizes, 0, start, end ? end->i : E::kToEnd, 1);
        };
        // The k largest or smallest values and their indices, ONNX's order of equal values kept
        // (the `onnx_topk` helper: a stable sort in Python; in C++ the k first of each row selected,
        // then sorted by value and index, as the runtime does); k a constant (an attribute before opset 10)
        // or computed when the code runs.
        r["TopK"] = [](const Context& c) {
            const int64_t axis = c.axisOrNegative(0, c.node.attrInt("axis", -1));
            E k = E::integer(c.node.attrInt("k", -1));
            if (c.node.opset >= 10 && !c.out.isConstant(c.in(1))) {
                k = E::val(c.in(1));
            } else if (c.node.opset >= 10) {
                const std::vector<int64_t> given = c.constInts(1);
                if (given.size() != 1)
                    c.unsupported("K has " + std::to_string(given.size()) + " values where one is expected");
                k = E::integer(given[0]);
            }
            if (k.kind == Expr::Kind::Int && k.i < 0)
                c.unsupported("K " + std::to_string(k.i) + " is negative");
            const E call = E::call("onnx_topk", {E::val(c.in(0)), k, E::integer(axis),
                                                 E::boolean(c.node.attrInt("largest", 1) != 0)});
            return c.outputsRead() == 1 ? E::index(call, 0) : c.outputs(call, 2);
        };
        // Updates written at computed or constant indices (the `onnx_scatter_elements` helper);
        // Scatter is its name before opset 11.
        for (const char* op : {"ScatterElements", "Scatter"})
            r[op] = [](const Context& c) {
                const std::string reduction = c.node.attrString("reduction", "none");
                if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
                    c.unsupported("reduction '" + printable(reduction) + "' is not one of none, add, mul, max, min");
                if (c.dtype(1) != DataType::Int64 && c.dtype(1) != DataType::Int32)
                    c.unsupported("the indices are not int32 or int64");
                if (c.dtype(2) != c.dtype(0))
                    c.unsupported("the updates' type differs from the data's");
                const int64_t axis = c.axisOrNegative(0, c.node.attrInt("axis", 0));
                return E::call("onnx_scatter_elements", {E::val(c.in(0)), E::integer(axis), E::val(c.in(1)),
                                                         E::val(c.in(2)), E::text(reduction)});
            };
        // The indices of the nonzero elements, one row per axis, as ONNX lays them out.
        r["NonZero"] = [](const Context& c) {
            return E::method(E::method(E::call("nonzero", {E::val(c.in(0))}), "t"), "contiguous");
        };
        r["Range"] = [](const Context& c) {
            return E::call("onnx_range", {E::val(c.in(0)), E::val(c.in(1)), E::val(c.in(2))});
        };
        r["If"] = ifElse;
        r["Loop"] = loop;
        r["Scan"] = scan;
        // As the runtime's kernel: ATen's grid sampler (4-D), its modes by name in Python and by
        // code in C++ (interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border,
        // 2 reflection).
        r["GridSample"] = [](const Context& c) {
            const std::string mode = c.node.attrString("mode", c.node.opset < 20 ? "bilinear" : "linear");
            const std::string padding = c.node.attrString("padding_mode", "zeros");
            const std::map<std::string, std::pair<const char*, int64_t>> modes = {
                {"bilinear", {"bilinear", 0}}, {"linear", {"bilinear", 0}}, {"nearest", {"nearest", 1}},
                {"bicubic", {"bicubic", 2}}, {"cubic", {"bicubic", 2}}};
            const std::map<std::string, int64_t> paddings = {{"zeros", 0}, {"border", 1}, {"reflection", 2}};
            if (!modes.count(mode))
                c.unsupported("mode '" + printable(mode) + "' is not bilinear, nearest or bicubic");
            if (!paddings.count(padding))
                c.unsupported("padding_mode '" + printable(padding) + "' is not zeros, border or reflection");
            if (c.rank(0) != 4)
                c.unsupported("only 4-D inputs are generated");
            const auto& [name, code] = modes.at(mode);
            const E grid = c.dtype(1) == c.dtype(0) ? E::val(c.in(1)) : E::method(E::val(c.in(1)), "to", {E::dtype(c.dtype(0))});
            return E::call("grid_sample", {E::val(c.in(0)), grid, E::integer(code).inCppOnly(),
                                           E::integer(paddings.at(padding)).inCppOnly(), E::text(name).named("mode").inPythonOnly(),
                                           E::text(padding).named("padding_mode").inPythonOnly(),
                                           E::boolean(c.node.attrInt("align_corners", 0) != 0).named("align_corners")});
        };
        // RoiAlign and NonMaxSuppression as the runtime's kernels (the detection helpers).
        r["RoiAlign"] = [](const Context& c) {
            const std::string mode = c.node.attrString("mode", "avg");
            if (mode != "avg" && mode != "max")
                c.unsupported("mode '" + printable(mode) + "' is not avg or max");
            const std::string coord = c.node.attrString("coordinate_transformation_mode",
                                                        c.node.opset < 16 ? "output_half_pixel" : "half_pixel");
            if (coord != "half_pixel" && coord != "output_half_pixel")
                c.unsupported("coordinate_transformation_mode '" + printable(coord) + "' is not half_pixel or output_half_pixel");
            const int64_t outH = c.node.attrInt("output_height", 1), outW = c.node.attrInt("output_width", 1);
            const int64_t ratio = c.node.attrInt("sampling_ratio", 0);
            if (outH < 1 || outW < 1 || ratio < 0)
                c.unsupported("output_height and output_width must be positive and sampling_ratio not negative");
            return E::call("onnx_roi_align", {E::val(c.in(0)), E::val(c.in(1)), E::val(c.in(2)), E::text(mode), E::integer(outH),
                                              E::integer(outW), E::integer(ratio), E::real(c.node.attrFloat("spatial_scale", 1.0f)),
                                              E::boolean(coord == "half_pixel")});
        };
        r["NonMaxSuppression"] = [](const Context& c) {
            std::vector<E> args{E::val(c.in(0)), E::val(c.in(1))};
            for (size_t i = 2; i <= 4; ++i)
                args.push_back(c.has(i) ? E::val(c.in(i)) : E::none());
            args.push_back(E::boolean(c.node.attrInt("center_point_box", 0) != 0));
            return E::call("onnx_nms", std::move(args));
        };
        // The training losses as the runtime's kernel computes them: ATen's nll_loss on the
        // scores (SoftmaxCrossEntropyLoss: their log-softmax over axis 1, its second output), the
        // class weights, ignore_index (none given: no class is ignored; ATen's default is -100)
        // and the reduction ('mean': over the weights of the targets not ignored).
        for (const bool softmaxFirst : {false, true})
            r[softmaxFirst ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss"] = [softmaxFirst](const Context& c) {
                const std::string reduction = c.node.attrString("reduction", "mean");
                const int64_t mode = reduction == "none" ? 0 : reduction == "mean" ? 1 : reduction == "sum" ? 2 : -1;
                if (mode < 0)
                    c.unsupported("reduction '" + printable(reduction) + "'");
                const Attribute* ignore = c.node.attr("ignore_index");
                const E logProb = softmaxFirst ? E::call("log_softmax", {E::val(c.in(0)), E::integer(1).named("dim")})
                                               : E::val(c.in(0));
                auto as = [&](size_t i, DataType t) {
                    return c.dtype(i) == t ? E::val(c.in(i)) : E::method(E::val(c.in(i)), "to", {E::dtype(t)});
                };
                const E weight = c.has(2) ? as(2, c.dtype(0)) : E::none();
                const E loss = E::call(
                    "nll_loss", {logProb, as(1, DataType::Int64), weight.named("weight", !c.has(2)),
                                 E::text(reduction).named("reduction", reduction == "mean").inPythonOnly(),
                                 E::integer(mode).inCppOnly(),
                                 E::integer(ignore ? ignore->i : std::numeric_limits<int64_t>::min()).named("ignore_index")});
                return softmaxFirst && c.outputsRead() > 1 ? c.outputs(E::tensors({loss, logProb}), 2) : loss;
            };
        r["Det"] = [](const Context& c) { return E::call("det", {E::val(c.in(0))}); };
        r["BitShift"] = [](const Context& c) {
            const std::string direction = c.node.attrString("direction", "");
            if (direction != "LEFT" && direction != "RIGHT")
                c.unsupported("direction '" + printable(direction) + "'");
            return E::call(direction == "LEFT" ? "bitwise_left_shift" : "bitwise_right_shift", {E::val(c.in(0)), E::val(c.in(1))});
        };
        // The windows as the runtime computes them: a0 + a1 cos(2 pi n / N) + a2 cos(4 pi n / N).
        const std::map<std::string, std::array<double, 3>> windows = {
            {"HannWindow", {0.5, -0.5, 0.0}}, {"HammingWindow", {25.0 / 46, -21.0 / 46, 0.0}}, {"BlackmanWindow", {0.42, -0.5, 0.08}}};
        for (const auto& [op, a] : windows)
            r[op] = [a = a](const Context& c) {
                const DataType t = dataTypeFromOnnx(int32_t(c.node.attrInt("output_datatype", 1)));
                if (!castable(t))
                    c.unsupported("output_datatype " + dataTypeName(t));
                return E::call("onnx_window", {E::val(c.in(0)), E::real(a[0]), E::real(a[1]), E::real(a[2]),
                                               E::boolean(c.node.attrInt("periodic", 1) != 0), E::dtype(t)});
            };
        // DFT as the runtime's kernel: the axis an attribute (1 by default) before opset 20, a
        // constant input 2 since (-2 where it is left out); dft_length read when the code runs.
        r["DFT"] = [](const Context& c) {
            const bool inverse = c.node.attrInt("inverse", 0) != 0, onesided = c.node.attrInt("onesided", 0) != 0;
            if (inverse && onesided)
                c.unsupported("an inverse one-sided DFT is not supported");
            int64_t axis = c.node.attrInt("axis", 1);
            if (c.node.opset >= 20) {
                axis = -2;
                if (c.has(2)) {
                    const auto given = c.constInts(2);
                    if (given.size() != 1)
                        c.unsupported("axis holds " + std::to_string(given.size()) + " values, not one");
                    axis = given[0];
                }
            }
            return E::call("onnx_dft", {E::val(c.in(0)), c.has(1) ? E::val(c.in(1)) : E::none(), E::integer(axis),
                                        E::boolean(inverse), E::boolean(onesided)});
        };
        r["LogSoftmax"] = [](const Context& c) {
            return alongAxis(c, [](E x, int64_t axis) { return E::call("log_softmax", {std::move(x), E::integer(axis).named("dim")}); });
        };
        r["Hardmax"] = [](const Context& c) { return alongAxis(c, hardmax); };
        r["ArgMax"] = [](const Context& c) { return argReduce(c, "argmax"); };
        r["ArgMin"] = [](const Context& c) { return argReduce(c, "argmin"); };
        // As the runtime's kernels: PRelu's slope broadcast (x where x >= 0, else x * slope),
        // Selu, ThresholdedRelu and Shrink written out, Softsign x / (|x| + 1), Mish x tanh(softplus(x)).
        r["PRelu"] = [](const Context& c) {
            const E x = E::val(c.in(0));
            return E::call("where", {E::call("ge", {x, E::integer(0)}), x, E::call("mul", {x, E::val(c.in(1))})});
        };
        r["Selu"] = [](const Context& c) {
            const double alpha = c.node.attrFloat("alpha", 1.67326319217681884765625f);
            const double gamma = c.node.attrFloat("gamma", 1.05070102214813232421875f);
            const E x = E::val(c.in(0));
            return E::call("where", {E::call("gt", {x, E::integer(0)}), E::call("mul", {x, E::real(gamma)}),
                                     E::call("mul", {E::call("sub", {E::call("exp", {x}), E::integer(1)}), E::real(alpha * gamma)})});
        };
        r["Celu"] = [](const Context& c) {
            return E::call("celu", {E::val(c.in(0)), E::real(c.node.attrFloat("alpha", 1.0f)).named("alpha")});
        };
        r["ThresholdedRelu"] = [](const Context& c) {
            const E x = E::val(c.in(0));
            return E::call("where", {E::call("gt", {x, E::real(c.node.attrFloat("alpha", 1.0f))}), x, E::call("zeros_like", {x})});
        };
        r["Shrink"] = [](const Context& c) {
            const double bias = c.node.attrFloat("bias", 0.0f), lambd = c.node.attrFloat("lambd", 0.5f);
            const E x = E::val(c.in(0));
            auto shifted = [&](const char* fn) {  // x -/+ bias in x's type
                const E y = E::call(fn, {x, E::real(bias)});
                return isFloating(c.dtype(0)) ? y : E::method(y, "to", {E::dtype(c.dtype(0))});
            };
            if (!castable(c.dtype(0)))
                c.unsupported("Shrink of " + dataTypeName(c.dtype(0)) + " tensors is not generated");
            return E::call("where", {E::call("lt", {x, E::real(-lambd)}), shifted("add"),
                                     E::call("where", {E::call("gt", {x, E::real(lambd)}), shifted("sub"), E::call("zeros_like", {x})})});
        };
        r["Softsign"] = [](const Context& c) {
            return E::call("div", {E::val(c.in(0)), E::call("add", {unary(c, "abs"), E::integer(1)})});
        };
        r["Mish"] = [](const Context& c) { return E::call("mul", {E::val(c.in(0)), E::call("tanh", {unary(c, "softplus")})}); };
        r["IsInf"] = [](const Context& c) {
            const bool negative = c.node.attrInt("detect_negative", 1) != 0, positive = c.node.attrInt("detect_positive", 1) != 0;
            if (!negative && !positive)
                return E::call("zeros_like", {E::val(c.in(0)), E::dtype(DataType::Bool).named("dtype")});
            return unary(c, negative && positive ? "isinf" : negative ? "isneginf" : "isposinf");
        };
        // The element count when the code runs, as an int64 scalar.
        r["Size"] = [](const Context& c) {
            return E::call("scalar_tensor", {E::method(E::val(c.in(0)), "numel"), E::dtype(DataType::Int64).named("dtype")});
        };
        r["CastLike"] = [](const Context& c) {
            if (!castable(c.dtype(1)) || !castable(c.dtype(0)))
                c.unsupported("a cast from " + dataTypeName(c.dtype(0)) + " to " + dataTypeName(c.dtype(1)) + " is not generated");
            return E::method(E::val(c.in(0)), "to", {E::dtype(c.dtype(1))});
        };
        r["Trilu"] = trilu;
        r["EyeLike"] = eyeLike;
        r["DepthToSpace"] = [](const Context& c) { return depthSpace(c, true); };
        r["SpaceToDepth"] = [](const Context& c) { return depthSpace(c, false); };
        r["LRN"] = lrn;
        r["MeanVarianceNormalization"] = meanVarianceNormalization;
        r["CumSum"] = cumSum;
        // Elements picked along the axis at computed indices, negative ones counted from the end
        // (the `onnx_gather_elements` helper).
        r["GatherElements"] = [](const Context& c) {
            if (c.dtype(1) != DataType::Int64 && c.dtype(1) != DataType::Int32)
                c.unsupported("the indices are not int32 or int64");
            return E::call("onnx_gather_elements", {E::val(c.in(0)), E::integer(c.axisOrNegative(0, c.node.attrInt("axis", 0))),
                                                    E::val(c.in(1))});
        };
        r["ScatterND"] = [](const Context& c) {
            const std::string reduction = c.node.attrString("reduction", "none");
            if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
                c.unsupported("reduction '" + printable(reduction) + "' is not one of none, add, mul, max, min");
            if (c.dtype(1) != DataType::Int64)
                c.unsupported("the indices are not int64");
            return E::call("onnx_scatter_nd", {E::val(c.in(0)), E::val(c.in(1)), E::val(c.in(2)), E::text(reduction)});
        };
        // A new axis of `depth` entries (the `onnx_one_hot` helper; depth and values may be computed).
        r["OneHot"] = [](const Context& c) {
            if (!castable(c.dtype(2)))
                c.unsupported("values of type " + dataTypeName(c.dtype(2)) + " are not generated");
            const int64_t axis = c.node.attrInt("axis", -1);
            const E where = E::integer(axis < 0 || !c.graph.value(c.in(0)).type.shape ? axis : c.axis(axis, c.rank(0) + 1));
            return E::call("onnx_one_hot", {E::val(c.in(0)), E::val(c.in(1)), E::val(c.in(2)), where});
        };
        r["QuantizeLinear"] = [](const Context& c) {
            const DataType t = c.has(2) ? c.dtype(2) : DataType::UInt8;  // the zero point's type
            if (t != DataType::UInt8 && t != DataType::Int8)
                c.unsupported("quantization to " + dataTypeName(t) + " is not generated (uint8 and int8 are)");
            if (!isFloating(c.dtype(0)))
                c.unsupported("the input is not a floating-point tensor");
            const bool u = t == DataType::UInt8;
            return E::call("quantize_linear", {E::val(c.in(0)), E::val(c.in(1)), c.has(2) ? E::val(c.in(2)) : E::none(),
                                               E::integer(quantizationAxis(c)), E::dtype(t), E::real(u ? 0 : -128),
                                               E::real(u ? 255 : 127)});
        };
        r["DequantizeLinear"] = [](const Context& c) {
            if (c.dtype(0) != DataType::UInt8 && c.dtype(0) != DataType::Int8 && c.dtype(0) != DataType::Int32)
                c.unsupported("dequantization of " + dataTypeName(c.dtype(0)) + " is not generated");
            return E::call("dequantize_linear", {E::val(c.in(0)), E::val(c.in(1)), c.has(2) ? E::val(c.in(2)) : E::none(),
                                                 E::integer(quantizationAxis(c))});
        };
        r["QLinearConv"] = [](const Context& c) {
            const std::vector<int64_t> kernel = convolutionKernel(c, 3);
            const Window w = windowOf(c, kernel);
            if (!quantizePassForm(c) || c.rank(0) != 4 || (c.has(8) && !constantOfType(c, 8, DataType::Int32)) ||
                !w.symmetric()) {  // the runtime's reference path: exact in double
                const bool symmetric = w.symmetric();
                std::vector<E> args = quantizedInputs(c, 0, 8);
                for (E e : {E::list(w.strides), E::list(symmetric ? w.padBegin : std::vector<int64_t>(kernel.size(), 0)),
                            symmetric ? E::none() : E::list(w.atenPads()), E::list(w.dilations),
                            E::integer(c.node.attrInt("group", 1))})
                    args.push_back(std::move(e));
                return E::call("qlinear_conv_exact", std::move(args));
            }
            return E::call("qlinear_conv", {E::val(c.in(0)), E::val(c.in(1)), E::val(c.in(2)), E::val(c.in(3)), E::val(c.in(4)),
                                            E::val(c.in(6)), E::val(c.in(7)), c.has(8) ? E::val(c.in(8)) : E::none(),
                                            E::list(w.strides), E::list(w.padBegin), E::list(w.dilations),
                                            E::integer(c.node.attrInt("group", 1))});
        };
        r["QLinearMatMul"] = [](const Context& c) {
            if (!quantizePassForm(c) || c.rank(3) != 2)  // the runtime's reference path: exact in double
                return E::call("qlinear_matmul_exact", quantizedInputs(c, 0, 7));
            return E::call("qlinear_matmul", {E::val(c.in(0)), E::val(c.in(1)), E::val(c.in(2)), E::val(c.in(3)),
                                              E::val(c.in(4)), E::val(c.in(6)), E::val(c.in(7))});
        };
        // Dynamic quantization (ONNX Runtime's quantize_dynamic writes it: DynamicQuantizeLinear,
        // MatMulInteger, ConvInteger), exact as the runtime computes it (the int8 helpers).
        r["DynamicQuantizeLinear"] = [](const Context& c) {
            if (c.dtype(0) != DataType::Float)
                c.unsupported("the input is not a float tensor");
            const E call = E::call("dynamic_quantize_linear", {E::val(c.in(0))});
            return c.outputsRead() == 1 ? E::index(call, 0) : c.outputs(call, 3);
        };
        r["MatMulInteger"] = [](const Context& c) {
            return E::call("integer_matmul", {E::val(c.in(0)), c.has(2) ? E::val(c.in(2)) : E::none(), E::val(c.in(1)),
                                              c.has(3) ? E::val(c.in(3)) : E::none()});
        };
        r["ConvInteger"] = [](const Context& c) {
            const std::vector<int64_t> kernel = convolutionKernel(c, 1);
            const Window w = windowOf(c, kernel);
            const bool symmetric = w.symmetric();
            return E::call("integer_conv", {E::val(c.in(0)), c.has(2) ? E::val(c.in(2)) : E::none(), E::val(c.in(1)),
                                            c.has(3) ? E::val(c.in(3)) : E::none(), E::list(w.strides),
                                            E::list(symmetric ? w.padBegin : std::vector<int64_t>(kernel.size(), 0)),
                                            symmetric ? E::none() : E::list(w.atenPads()), E::list(w.dilations),
                                            E::integer(c.node.attrInt("group", 1))});
        };
        r["Constant"] = [](const Context&) { return E::none(); };
        return r;
    }();
    return table;
}

template <typename T>
std::shared_ptr<const Tensor> tensorOf(DataType dtype, const std::vector<T>& values, std::vector<int64_t> dims)
{
    auto t = std::make_shared<Tensor>();
    t->dtype = dtype;
    t->dims = std::move(dims);
    t->data.resize(values.size() * sizeof(T));
    if (!values.empty())
        std::memcpy(t->data.data(), values.data(), t->data.size());
    return t;
}

// The value of a Constant node, as the runtime's Constant kernel reads it.
std::shared_ptr<const Tensor> constantValue(const Model& model, const Node& n)
{
    std::shared_ptr<const Tensor> value;
    for (const Attribute& a : n.attributes) {
        if (a.name == "value" && a.t)
            value = a.t;
        else if (a.name == "value_float")
            value = tensorOf<float>(DataType::Float, {a.f}, {});
        else if (a.name == "value_int")
            value = tensorOf<int64_t>(DataType::Int64, {a.i}, {});
        else if (a.name == "value_floats")
            value = tensorOf<float>(DataType::Float, a.floats, {int64_t(a.floats.size())});
        else if (a.name == "value_ints")
            value = tensorOf<int64_t>(DataType::Int64, a.ints, {int64_t(a.ints.size())});
    }
    if (!value || !value->hasData())
        throw Error(ErrorKind::Unsupported, model.path,
                    "code generation: operator Constant (node '" + printable(n.name) +
                        "'): no supported value attribute, or its data was not loaded");
    return value;
}

void collectWeights(const Expr& e, LoweredModel& out, std::set<ValueId>& seen)
{
    if (e.kind == Expr::Kind::Value && out.isConstant(e.value) && seen.insert(e.value).second)
        out.weights.push_back(e.value);
    for (const Expr& a : e.args)
        collectWeights(a, out, seen);
}

}  // namespace

std::vector<ValueId> computedValues(const Graph& g, const LoweredModel& low, NodeId id)
{
    const Node& n = g.node(id);
    std::vector<ValueId> values(low.outputCount[size_t(id)], kNone);
    std::copy_n(n.outputs.begin(), std::min(values.size(), n.outputs.size()), values.begin());
    return values;
}

std::vector<std::string> codegenOperators()
{
    std::vector<std::string> ops;
    for (const auto& [op, f] : lowerings())
        ops.push_back(op);
    return ops;
}

LoweredModel lowerModel(const Model& model, int batch)
{
    const Graph& g = model.graph;
    LoweredModel out;
    for (const Value& v : g.values())
        if (v.initializer) {
            if (!v.initializer->hasData())
                throw Error(ErrorKind::Unsupported, model.path,
                            "code generation: the data of constant '" + printable(v.name) + "' was not loaded");
            out.constants[v.id] = v.initializer;
        }
    for (ValueId v : g.inputs())
        if (!out.isConstant(v))
            out.inputs.push_back(v);
    // Check every node first, so that one error names the first unsupported node by position.
    for (const Node& n : g.nodes()) {
        const bool ramiel = n.domain == kRamielDomain;  // the node checks refused any other name there
        if (!n.domain.empty() && n.domain != "ai.onnx" && !ramiel)
            throw Error(ErrorKind::Unsupported, model.path,
                        "code generation: operator " + printable(n.domain) + "." + printable(n.opType) + " (node '" +
                            printable(n.name) + "') is not supported");
        if (!lowerings().count(n.opType) || (n.hasSubgraphs() && n.opType != "If" && n.opType != "Loop" && n.opType != "Scan") ||
            ((n.opType == kFusedConv || n.opType == kFusedBatchNorm || n.opType == kFusedGroupNorm || n.opType == kSilu ||
              n.opType == kMatMulAdd ||
              n.opType == kChannelShuffle) &&
             !ramiel)) {
            std::string known;
            for (const std::string& op : codegenOperators())
                known += (known.empty() ? "" : ", ") + op;
            throw Error(ErrorKind::Unsupported, model.path,
                        "code generation: operator " + printable(n.opType) + " (node '" + printable(n.name) +
                            "') is not supported; supported: " + known);
        }
        if (n.opType == "Constant" && !n.outputs.empty() && n.outputs[0] != kNone)
            out.constants[n.outputs[0]] = constantValue(model, n);
    }
    out.nodeExpr.resize(g.nodeCount());
    out.outputCount.assign(g.nodeCount(), 1);
    const std::vector<bool> finite = finiteWithInputs(g);
    const std::vector<ValueId> sources = constantSources(g);
    std::set<ValueId> seen;
    for (const Node& n : g.nodes()) {
        Context c{model, g, out, n, batch, finite, sources};
        // A recurrent layer may give only its final states; other lowerings read their first output.
        const bool statesOnly = n.opType == "LSTM" || n.opType == "GRU" || n.opType == "RNN";
        if (n.outputs.empty() || (n.outputs[0] == kNone && !statesOnly))
            c.unsupported("the node has no first output");
        out.nodeExpr[size_t(n.id)] = lowerings().at(n.opType)(c);
        if (n.outputs[0] == kNone && out.outputCount[size_t(n.id)] == 1)
            c.unsupported("the node gives none of its outputs");
        collectWeights(out.nodeExpr[size_t(n.id)], out, seen);
    }
    for (ValueId v : out.inputs)
        if (!castable(g.value(v).type.dtype))
            throw Error(ErrorKind::Unsupported, model.path,
                        "code generation: input '" + printable(g.value(v).name) + "' has type " +
                            dataTypeName(g.value(v).type.dtype) + ", which generated code does not take");
    for (ValueId v : g.outputs())  // a graph output may be a constant itself
        if (out.isConstant(v) && seen.insert(v).second)
            out.weights.push_back(v);
    for (ValueId v : out.weights) {
        const Tensor& t = *out.constants.at(v);
        if (elementSize(t.dtype) == 0 || t.dtype == DataType::Complex64 || t.dtype == DataType::Complex128 ||
            t.dtype == DataType::UInt16 || t.dtype == DataType::UInt32 || t.dtype == DataType::UInt64)
            throw Error(ErrorKind::Unsupported, model.path,
                        "code generation: constant '" + printable(g.value(v).name) + "' has type " +
                            dataTypeName(t.dtype) + ", which generated code does not load");
    }
    return out;
}

}  // namespace ramiel::codegen
