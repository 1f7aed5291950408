// Recurrent layers: RNN, GRU and LSTM (ONNX's one-layer cells, forward, reverse
// or bidirectional). Each direction projects its whole input sequence at once
// (one GEMM with both biases folded in), then per time step multiplies the states
// by the recurrent weights and applies the gates row by row in one pass, in place.
// Directions and a batch's rows share nothing and run on threads of their own.
// Rows end at their own sequence_lens: a row past its length keeps its state and
// writes zeros to Y; in reverse a row starts at its own last step.
#include "core/runtime/torch/kernel.h"

#include "core/ir/recurrent_activations.h"
#include "core/runtime/torch/activation_loops.h"
#include "core/runtime/torch/intra_op_threads.h"
#include "core/runtime/torch/matrix_vector.h"
#include "core/runtime/torch/sgemm.h"
#include "core/runtime/torch/target_clones.h"
#include "core/runtime/torch/vector_math.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <stdexcept>

#include <omp.h>

namespace ramiel {

namespace {

// One of the activation functions ONNX's recurrent operators name, with its
// alpha and beta (the defaults are those of the ONNX operators of the same name).
struct Activation {
    enum class Kind { Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus };
    Kind kind = Kind::Sigmoid;
    float alpha = 0, beta = 0;

    template <typename T>
    void apply(T* x, int64_t n) const
    {
        if constexpr (std::is_same_v<T, float>) {
            switch (kind) {
            case Kind::Sigmoid: sigmoidRun(x, x, n); return;
            case Kind::Tanh: tanhRun(x, x, n); return;
            case Kind::Relu: reluRun(x, n); return;
            default: break;
            }
        }
        const T a = T(alpha), b = T(beta);
        for (int64_t i = 0; i < n; ++i) {
            const T v = x[i];
            switch (kind) {
            case Kind::Relu: x[i] = v > 0 ? v : T(0); break;
            case Kind::Tanh: x[i] = std::tanh(v); break;
            case Kind::Sigmoid: x[i] = T(1) / (T(1) + std::exp(-v)); break;
            case Kind::Affine: x[i] = a * v + b; break;
            case Kind::LeakyRelu: x[i] = v >= 0 ? v : a * v; break;
            case Kind::ThresholdedRelu: x[i] = v > a ? v : T(0); break;
            case Kind::ScaledTanh: x[i] = a * std::tanh(b * v); break;
            case Kind::HardSigmoid: x[i] = std::min(T(1), std::max(T(0), a * v + b)); break;
            case Kind::Elu: x[i] = v >= 0 ? v : a * (std::exp(v) - T(1)); break;
            case Kind::Softsign: x[i] = v / (T(1) + std::abs(v)); break;
            case Kind::Softplus: x[i] = v > 20 ? v : std::log1p(std::exp(v)); break;
            }
        }
    }
};

// The node's activations (core/ir/recurrent_activations.h), direction by direction.
std::vector<Activation> activationsOf(const KernelContext& c, int64_t directions)
{
    using K = Activation::Kind;
    static const std::pair<const char*, K> kinds[] = {
        {"relu", K::Relu},           {"tanh", K::Tanh},           {"sigmoid", K::Sigmoid},
        {"affine", K::Affine},       {"leakyrelu", K::LeakyRelu}, {"thresholdedrelu", K::ThresholdedRelu},
        {"scaledtanh", K::ScaledTanh}, {"hardsigmoid", K::HardSigmoid}, {"elu", K::Elu},
        {"softsign", K::Softsign},   {"softplus", K::Softplus},
    };
    std::string why;
    const auto functions = recurrentActivations(c.node, size_t(directions), why);
    if (!functions)
        c.unsupported(why);
    std::vector<Activation> out;
    for (const RecurrentActivation& f : *functions) {
        const auto* k = std::find_if(std::begin(kinds), std::end(kinds), [&](const auto& e) { return f.name == e.first; });
        out.push_back({k->second, f.alpha, f.beta});
    }
    return out;
}

enum class Cell { Rnn, Gru, Lstm };

int64_t gatesOf(Cell cell) { return cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4; }

// Everything a run needs that the node fixes.
struct Recurrence {
    Cell cell = Cell::Rnn;
    std::string op;
    int64_t directions = 1;
    bool reverseOnly = false;  // direction "reverse"
    int64_t hiddenAttr = 0;    // 0 where the node does not say
    bool batchFirst = false;   // layout 1
    bool linearBeforeReset = false;
    bool coupleInputForget = false;
    float clip = 0;  // 0: no clip
    std::vector<Activation> activations;  // per direction, per cell function
};

[[noreturn]] void badShape(const Recurrence& r, const std::string& what)
{
    throw Error(ErrorKind::Runtime, {}, r.op + " " + what);
}

void expectShape(const Recurrence& r, const char* name, const at::Tensor& t, std::vector<int64_t> want)
{
    if (t.sizes() != at::IntArrayRef(want))
        badShape(r, std::string("input ") + name + " has shape " + shapeText(t.sizes()) + " where " + shapeText(want) +
                        " is expected");
}

template <typename T>
void clipRow(T* x, int64_t n, float bound)
{
    if (bound <= 0)
        return;
    const T b = T(bound);
    for (int64_t i = 0; i < n; ++i)
        x[i] = std::min(b, std::max(-b, x[i]));
}

// A weight matrix ([n, k] rows) as the steps' products read it: columns for one
// GEMM of a large float batch, packed columns for a float row at a time.
struct StepWeights {
    at::Tensor cols;    // [k, n]
    at::Tensor packed;  // float: packColumns(cols)

    explicit StepWeights(const at::Tensor& rows) : cols(rows.t().contiguous())
    {
        if (rows.scalar_type() == at::kFloat)
            packed = packColumns(cols);
    }
    int64_t k() const { return cols.size(0); }
    int64_t n() const { return cols.size(1); }
};

void timesWeights(float* y, const StepWeights& w, const float* x, int64_t rows)
{
    packedColumnsProduct(y, w.n(), w.packed.data_ptr<float>(), x, w.k(), rows, w.k(), w.n());
}

void timesWeights(double* y, const StepWeights& w, const double* x, int64_t rows)
{
    const int64_t k = w.k(), n = w.n();
    const double* cols = w.cols.data_ptr<double>();
    std::fill(y, y + rows * n, 0.0);
    for (int64_t b = 0; b < rows; ++b)
        for (int64_t j = 0; j < k; ++j)
            for (int64_t i = 0; i < n; ++i)
                y[b * n + i] += x[b * k + j] * cols[j * n + i];
}

// The states' products with the weights: one GEMM for a large float batch (oneDNN's
// sgemm: OpenBLAS's took 2.1x as long on a GRU of 256 units at batch 8), else each
// weight read once for four rows at a time (at batch 1 a GEMM call cost more than the
// product: 4.4 us a step on 64 hidden units against 0.4). Rows past their sequence's
// end are computed too and not read.
template <typename T>
void statesTimesWeights(const at::Tensor& states, const StepWeights& w, at::Tensor& out)
{
    const int64_t batch = states.size(0);
    if (std::is_same_v<T, float> && batch >= 8) {
#if RAMIEL_HAVE_DNNL
        const int64_t k = w.k(), n = w.n();
        sgemm('N', batch, n, k, states.data_ptr<float>(), k, w.cols.data_ptr<float>(), n, 0.0f, out.data_ptr<float>(), n);
#else
        at::mm_out(out, states, w.cols);
#endif
    } else
        timesWeights(out.data_ptr<T>(), w, states.data_ptr<T>(), batch);
}

// One direction's weights, laid out once (when the compiled model is made, for
// constant weights): the input's columns, both biases folded into one but GRU's
// h-gate recurrent bias where the reset scales it (linear_before_reset), the
// recurrent weights as the steps read them (GRU without linear_before_reset: z and
// r's first, h's second, since (r ⊙ h) Rh^T waits for r).
struct DirectionWeights {
    at::Tensor inputCols;       // [input, gates * hidden]
    at::Tensor inputBias;       // [gates * hidden]
    at::Tensor recurrentBiasH;  // [hidden] or undefined
    std::optional<StepWeights> first, second;
    at::Tensor peephole;  // [3 * hidden] (i, o, f) or undefined
};

struct Weights {
    int64_t hidden = 0, inputSize = 0;
    at::ScalarType type = at::kFloat;
    std::vector<DirectionWeights> directions;
};

// W, R and the optional B and P checked against each other and the node, and laid out.
Weights prepareWeights(const Recurrence& r, const at::Tensor& wIn, const at::Tensor& rIn, const at::Tensor& bIn,
                       const at::Tensor& pIn, at::ScalarType type)
{
    const int64_t gates = gatesOf(r.cell);
    if (wIn.dim() != 3 || rIn.dim() != 3)
        badShape(r, "weights W and R have ranks " + std::to_string(wIn.dim()) + " and " + std::to_string(rIn.dim()) +
                        " where 3 is expected");
    Weights out;
    out.type = type;
    out.hidden = r.hiddenAttr > 0 ? r.hiddenAttr : rIn.size(2);
    out.inputSize = wIn.size(2);
    const int64_t hidden = out.hidden, width = gates * hidden;
    expectShape(r, "W", wIn, {r.directions, width, out.inputSize});
    expectShape(r, "R", rIn, {r.directions, width, hidden});
    const at::Tensor w = wIn.to(type), rw = rIn.to(type);
    const at::Tensor b = bIn.defined() ? bIn.to(type) : at::Tensor();
    const at::Tensor p = pIn.defined() ? pIn.to(type) : at::Tensor();
    if (b.defined())
        expectShape(r, "B", b, {r.directions, 2 * width});
    if (p.defined())
        expectShape(r, "P", p, {r.directions, 3 * hidden});
    const bool gruResetFirst = r.cell == Cell::Gru && !r.linearBeforeReset;
    for (int64_t d = 0; d < r.directions; ++d) {
        DirectionWeights dw;
        dw.inputCols = w[d].t().contiguous();
        dw.inputBias = at::zeros({width}, w.options());
        if (b.defined()) {
            const at::Tensor wb = b[d].narrow(0, 0, width), rb = b[d].narrow(0, width, width);
            dw.inputBias.copy_(wb);
            if (r.cell == Cell::Gru && r.linearBeforeReset) {
                dw.inputBias.narrow(0, 0, 2 * hidden).add_(rb.narrow(0, 0, 2 * hidden));
                dw.recurrentBiasH = rb.narrow(0, 2 * hidden, hidden).contiguous();
            } else {
                dw.inputBias.add_(rb);
            }
        }
        dw.first.emplace(gruResetFirst ? rw[d].narrow(0, 0, 2 * hidden) : rw[d]);
        if (gruResetFirst)
            dw.second.emplace(rw[d].narrow(0, 2 * hidden, hidden));
        if (p.defined())
            dw.peephole = p[d].contiguous();
        out.directions.push_back(std::move(dw));
    }
    return out;
}

// The input's projection for every step at once: x2 [steps * batch, input] times
// the input's columns plus the bias row. Float products run on oneDNN's sgemm (its
// AVX-512 kernels; ATen's addmm went to OpenBLAS's Haswell ones here, which took
// 45 % of a 128 -> 64 bidirectional LSTM's time).
at::Tensor inputProjection(const at::Tensor& x2, const DirectionWeights& dw)
{
#if RAMIEL_HAVE_DNNL
    if (x2.scalar_type() == at::kFloat && x2.numel() > 0 && dw.inputCols.size(1) > 0) {
        const at::Tensor x = x2.contiguous();
        const int64_t m = x.size(0), k = x.size(1), n = dw.inputCols.size(1);
        // A fresh output holding the bias rows (expand(...).contiguous() of one row would be
        // the bias itself, which the product would then add into).
        at::Tensor y = at::empty({m, n}, x.options()).copy_(dw.inputBias.expand({m, n}));
        sgemm('N', m, n, k, x.data_ptr<float>(), k, dw.inputCols.data_ptr<float>(), n, 1.0f, y.data_ptr<float>(), n);
        return y;
    }
#endif
    return at::addmm(dw.inputBias, x2, dw.inputCols);
}

// One direction over the sequence for the batch's rows [rowBegin, rowEnd), which
// share nothing with the other rows. xw: [seq, rowEnd - rowBegin, gates * hidden],
// those rows' input projection with biases; h, cState: [batch, hidden] states,
// updated in place; y: [seq, directions, batch, hidden] (this direction's slot written).
template <typename T>
RAMIEL_CLONES void runDirection(const Recurrence& r, int64_t d, bool reverse, const at::Tensor& xw,
                                const DirectionWeights& dw, const std::vector<int64_t>& lengths, int64_t rowBegin,
                                int64_t rowEnd, at::Tensor& h, at::Tensor& cState, at::Tensor& y)
{
    const int64_t batch = h.size(0), rows = rowEnd - rowBegin, hidden = h.size(1), gates = gatesOf(r.cell);
    const int64_t width = gates * hidden;
    const Activation* act = r.activations.data() + d * (r.cell == Cell::Rnn ? 1 : r.cell == Cell::Gru ? 2 : 3);
    const bool gruResetFirst = dw.second.has_value();
    const StepWeights& first = *dw.first;
    const at::Tensor states = h.narrow(0, rowBegin, rows);
    at::Tensor hr = at::empty({rows, first.n()}, h.options());
    at::Tensor gated = gruResetFirst ? at::empty({rows, hidden}, h.options()) : at::Tensor();
    at::Tensor hr2 = gruResetFirst ? at::empty({rows, hidden}, h.options()) : at::Tensor();
    std::vector<T> scratch(size_t(width + hidden));
    const T* xwData = xw.data_ptr<T>();
    T* hData = h.data_ptr<T>();
    T* hrData = hr.data_ptr<T>();
    T* cData = cState.defined() ? cState.data_ptr<T>() : nullptr;
    const T* pData = dw.peephole.defined() ? dw.peephole.data_ptr<T>() : nullptr;
    const T* rbh = dw.recurrentBiasH.defined() ? dw.recurrentBiasH.data_ptr<T>() : nullptr;
    T* yData = y.data_ptr<T>();
    const int64_t steps = rows == 0 ? 0 : *std::max_element(lengths.begin() + rowBegin, lengths.begin() + rowEnd);
    auto timeOf = [&](int64_t b, int64_t s) { return reverse ? lengths[size_t(b)] - 1 - s : s; };
    auto writeY = [&](int64_t t, int64_t b, const T* row) {
        std::copy(row, row + hidden, yData + ((t * r.directions + d) * batch + b) * hidden);
    };
    for (int64_t s = 0; s < steps; ++s) {
        statesTimesWeights<T>(states, first, hr);
        for (int64_t b = rowBegin; b < rowEnd; ++b) {
            if (s >= lengths[size_t(b)])
                continue;
            const int64_t t = timeOf(b, s);
            const T* x = xwData + (t * rows + b - rowBegin) * width;
            T* g = scratch.data();
            T* hRow = hData + b * hidden;
            if (r.cell == Cell::Rnn) {
                const T* rec = hrData + (b - rowBegin) * hidden;
                for (int64_t i = 0; i < hidden; ++i)
                    g[i] = x[i] + rec[i];
                clipRow(g, hidden, r.clip);
                act[0].apply(g, hidden);
                std::copy(g, g + hidden, hRow);
            } else if (r.cell == Cell::Lstm) {
                // Gates in ONNX's order i, o, f, c.
                const T* rec = hrData + (b - rowBegin) * width;
                T* cRow = cData + b * hidden;
                for (int64_t i = 0; i < width; ++i)
                    g[i] = x[i] + rec[i];
                T *gi = g, *go = g + hidden, *gf = g + 2 * hidden, *gc = g + 3 * hidden, *tmp = g + width;
                clipRow(g, width, pData ? 0.0f : r.clip);
                if (!pData && !r.coupleInputForget) {
                    act[0].apply(g, 3 * hidden);  // i, o and f side by side
                } else {
                    // The peepholes read the cell state: o's after it is updated.
                    if (pData)
                        for (int64_t i = 0; i < hidden; ++i) {
                            gi[i] += pData[i] * cRow[i];
                            gf[i] += pData[2 * hidden + i] * cRow[i];
                        }
                    clipRow(gi, hidden, pData ? r.clip : 0.0f);
                    act[0].apply(gi, hidden);
                    if (r.coupleInputForget) {
                        for (int64_t i = 0; i < hidden; ++i)
                            gf[i] = T(1) - gi[i];
                    } else {
                        clipRow(gf, hidden, pData ? r.clip : 0.0f);
                        act[0].apply(gf, hidden);
                    }
                }
                clipRow(gc, hidden, pData ? r.clip : 0.0f);
                act[1].apply(gc, hidden);
                for (int64_t i = 0; i < hidden; ++i)
                    cRow[i] = gf[i] * cRow[i] + gi[i] * gc[i];
                if (pData || r.coupleInputForget) {
                    if (pData)
                        for (int64_t i = 0; i < hidden; ++i)
                            go[i] += pData[hidden + i] * cRow[i];
                    clipRow(go, hidden, pData ? r.clip : 0.0f);
                    act[0].apply(go, hidden);
                }
                std::copy(cRow, cRow + hidden, tmp);
                act[2].apply(tmp, hidden);
                for (int64_t i = 0; i < hidden; ++i)
                    hRow[i] = go[i] * tmp[i];
            } else if (!gruResetFirst) {
                // Gates z, r, h; h's recurrent part (with its bias) scaled by r.
                const T* rec = hrData + (b - rowBegin) * width;
                for (int64_t i = 0; i < 2 * hidden; ++i)
                    g[i] = x[i] + rec[i];
                clipRow(g, 2 * hidden, r.clip);
                act[0].apply(g, 2 * hidden);
                T *z = g, *rg = g + hidden, *hh = g + 2 * hidden;
                for (int64_t i = 0; i < hidden; ++i)
                    hh[i] = x[2 * hidden + i] + rg[i] * (rec[2 * hidden + i] + (rbh ? rbh[i] : T(0)));
                clipRow(hh, hidden, r.clip);
                act[1].apply(hh, hidden);
                for (int64_t i = 0; i < hidden; ++i)
                    hRow[i] = (T(1) - z[i]) * hh[i] + z[i] * hRow[i];
            } else {
                // z and r now (kept in hr); h once every row has its r ⊙ h, below.
                T* zr = hrData + (b - rowBegin) * 2 * hidden;
                for (int64_t i = 0; i < 2 * hidden; ++i)
                    zr[i] += x[i];
                clipRow(zr, 2 * hidden, r.clip);
                act[0].apply(zr, 2 * hidden);
                T* gRow = gated.data_ptr<T>() + (b - rowBegin) * hidden;
                for (int64_t i = 0; i < hidden; ++i)
                    gRow[i] = zr[hidden + i] * hRow[i];
            }
            if (!gruResetFirst)
                writeY(t, b, hRow);
        }
        if (!gruResetFirst)
            continue;
        statesTimesWeights<T>(gated, *dw.second, hr2);
        const T* hr2Data = hr2.data_ptr<T>();
        for (int64_t b = rowBegin; b < rowEnd; ++b) {
            if (s >= lengths[size_t(b)])
                continue;
            const int64_t t = timeOf(b, s);
            const T* x = xwData + (t * rows + b - rowBegin) * width;
            const T* z = hrData + (b - rowBegin) * 2 * hidden;
            T* hh = scratch.data();
            T* hRow = hData + b * hidden;
            for (int64_t i = 0; i < hidden; ++i)
                hh[i] = x[2 * hidden + i] + hr2Data[(b - rowBegin) * hidden + i];
            clipRow(hh, hidden, r.clip);
            act[1].apply(hh, hidden);
            for (int64_t i = 0; i < hidden; ++i)
                hRow[i] = (T(1) - z[i]) * hh[i] + z[i] * hRow[i];
            writeY(t, b, hRow);
        }
    }
}

Kernel recurrentKernel(const KernelContext& c, Cell cell)
{
    Recurrence r;
    r.cell = cell;
    r.op = c.node.opType;
    const std::string direction = c.node.attrString("direction", "forward");
    if (direction == "bidirectional")
        r.directions = 2;
    else if (direction == "reverse")
        r.reverseOnly = true;
    else if (direction != "forward")
        c.unsupported("direction '" + direction + "' is not forward, reverse or bidirectional");
    r.hiddenAttr = c.node.attrInt("hidden_size", 0);
    if (r.hiddenAttr < 0)
        c.unsupported("hidden_size " + std::to_string(r.hiddenAttr) + " is negative");
    r.batchFirst = c.node.attrInt("layout", 0) != 0;
    r.linearBeforeReset = c.node.attrInt("linear_before_reset", 0) != 0;
    r.coupleInputForget = c.node.attrInt("input_forget", 0) != 0;
    r.clip = c.node.attrFloat("clip", 0);
    if (c.node.attr("clip") && !(r.clip > 0))
        c.unsupported("clip " + std::to_string(r.clip) + " is not positive");
    r.activations = activationsOf(c, r.directions);
    const bool peepholeConstant = cell != Cell::Lstm || !c.hasInput(7) || c.isConstant(7);
    std::shared_ptr<const Weights> prepared;
    if (c.isConstant(1) && c.isConstant(2) && (!c.hasInput(3) || c.isConstant(3)) && peepholeConstant) {
        const at::ScalarType type = c.constants[1].scalar_type();
        try {
            if (type == at::kFloat || type == at::kDouble)
                prepared = std::make_shared<const Weights>(prepareWeights(
                    r, c.constants[1], c.constants[2], c.hasInput(3) ? c.constants[3] : at::Tensor(),
                    cell == Cell::Lstm && c.hasInput(7) ? c.constants[7] : at::Tensor(), type));
        } catch (const Error& e) {  // named as the run's errors are
            throw Error(e.kind(), {}, "node '" + c.node.name + "' (" + c.node.opType + ") cannot be prepared: " + e.message());
        }
    }

    return [r, prepared](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const int64_t gates = gatesOf(r.cell);
        at::Tensor x = in[0];
        if (x.dim() != 3)
            badShape(r, "input X has rank " + std::to_string(x.dim()) + " where 3 is expected");
        if (x.scalar_type() != at::kFloat && x.scalar_type() != at::kDouble)
            throw Error(ErrorKind::Unsupported, {}, r.op + " of " + std::string(c10::toString(x.scalar_type())) +
                                                        " tensors is not supported (float and double are)");
        auto input = [&](size_t i) { return i < in.size() && in[i].defined() ? in[i] : at::Tensor(); };
        std::shared_ptr<const Weights> weights = prepared;
        if (!weights || weights->type != x.scalar_type())
            weights = std::make_shared<const Weights>(prepareWeights(
                r, in[1], in[2], input(3), r.cell == Cell::Lstm ? input(7) : at::Tensor(), x.scalar_type()));
        if (r.batchFirst)
            x = x.transpose(0, 1);
        const int64_t seq = x.size(0), batch = x.size(1), hidden = weights->hidden;
        if (x.size(2) != weights->inputSize)
            badShape(r, "input X has " + std::to_string(x.size(2)) + " features where W has " +
                            std::to_string(weights->inputSize));
        const auto opts = x.options();
        std::vector<int64_t> lengths(size_t(batch), seq);
        if (const at::Tensor given = input(4); given.defined()) {
            if (given.dim() != 1 || given.size(0) != batch)
                badShape(r, "input sequence_lens has shape " + shapeText(given.sizes()) + " where [" +
                                std::to_string(batch) + "] is expected");
            lengths = intsOf(given);
            for (int64_t len : lengths)
                if (len < 0 || len > seq)
                    badShape(r, "sequence length " + std::to_string(len) + " is outside [0, " + std::to_string(seq) +
                                    "]");
        }
        const std::vector<int64_t> stateShape = r.batchFirst ? std::vector<int64_t>{batch, r.directions, hidden}
                                                             : std::vector<int64_t>{r.directions, batch, hidden};
        auto initialState = [&](size_t i, const char* name) {
            const at::Tensor s = input(i);
            if (!s.defined())
                return at::zeros({r.directions, batch, hidden}, opts);
            expectShape(r, name, s, stateShape);
            return (r.batchFirst ? s.transpose(0, 1) : s).to(opts).contiguous().clone();
        };
        at::Tensor h = initialState(5, "initial_h");
        at::Tensor cState = r.cell == Cell::Lstm ? initialState(6, "initial_c") : at::Tensor();

        const bool ragged = std::any_of(lengths.begin(), lengths.end(), [&](int64_t l) { return l < seq; });
        at::Tensor y = ragged ? at::zeros({seq, r.directions, batch, hidden}, opts)
                              : at::empty({seq, r.directions, batch, hidden}, opts);
        // Work items: a direction's rows [begin, end), their input's projection and
        // their steps. The directions and the batch's rows share nothing, so on P
        // threads the items run at once, one thread each (inside, every product runs on
        // its thread alone): a bidirectional layer's two directions, a batch's rows in
        // P / directions shares.
        struct Item {
            int64_t d, begin, end;
        };
        const int threads = omp_in_parallel() ? 1 : currentIntraOpThreads();
        const int64_t shares = std::clamp<int64_t>(threads / r.directions, 1, std::max<int64_t>(batch, 1));
        std::vector<Item> items;
        for (int64_t d = 0; d < r.directions; ++d)
            for (int64_t i = 0; i < shares; ++i)
                items.push_back({d, batch * i / shares, batch * (i + 1) / shares});
        auto runItem = [&](const Item& item) {
            const DirectionWeights& dw = weights->directions[size_t(item.d)];
            const int64_t rows = item.end - item.begin;
            const at::Tensor xs = x.narrow(1, item.begin, rows).reshape({seq * rows, x.size(2)});
            const at::Tensor xw = inputProjection(xs, dw).reshape({seq, rows, gates * hidden});
            at::Tensor hd = h[item.d], cd = cState.defined() ? cState[item.d] : at::Tensor();
            const bool reverse = r.reverseOnly || item.d == 1;
            if (x.scalar_type() == at::kFloat)
                runDirection<float>(r, item.d, reverse, xw, dw, lengths, item.begin, item.end, hd, cd, y);
            else
                runDirection<double>(r, item.d, reverse, xw, dw, lengths, item.begin, item.end, hd, cd, y);
        };
        if (items.size() > 1 && threads > 1) {
            std::vector<std::exception_ptr> failed(items.size());
#pragma omp parallel for num_threads(int(std::min<size_t>(items.size(), size_t(threads)))) schedule(static, 1)
            for (size_t i = 0; i < items.size(); ++i) {
                try {
                    runItem(items[i]);
                } catch (...) {
                    failed[i] = std::current_exception();
                }
            }
            for (const std::exception_ptr& f : failed)
                if (f)
                    std::rethrow_exception(f);
        } else {
            for (const Item& item : items)
                runItem(item);
        }
        // A row of length 0 never ran: its final state is zero, as ONNX Runtime gives.
        for (int64_t b = 0; b < batch; ++b)
            if (lengths[size_t(b)] == 0) {
                h.select(1, b).zero_();
                if (cState.defined())
                    cState.select(1, b).zero_();
            }
        auto layout = [&](const at::Tensor& state) { return r.batchFirst ? state.transpose(0, 1).contiguous() : state; };
        out[0] = r.batchFirst ? y.permute({2, 0, 1, 3}).contiguous() : y;
        if (out.size() > 1)
            out[1] = layout(h);
        if (out.size() > 2 && cState.defined())
            out[2] = layout(cState);
    };
}

}  // namespace

void registerRecurrentKernels(KernelRegistry& r)
{
    r["RNN"] = [](const KernelContext& c) { return recurrentKernel(c, Cell::Rnn); };
    r["GRU"] = [](const KernelContext& c) { return recurrentKernel(c, Cell::Gru); };
    r["LSTM"] = [](const KernelContext& c) { return recurrentKernel(c, Cell::Lstm); };
}

}  // namespace ramiel
