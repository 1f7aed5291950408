// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// Recurrent layers (ONNX's LSTM, GRU and RNN) as PyTorch's own one-layer kernels: at::lstm,
// at::gru, at::rnn_tanh and at::rnn_relu. ONNX orders an LSTM's gates i, o, f, c and a GRU's
// z, r, h; PyTorch i, f, g, o and r, z, n. Each weight's gates are put in PyTorch's order once
// and kept (the weights live as long as the program). What those kernels do not compute runs
// step by step (recurrentSteps).
std::vector<at::Tensor> recurrentParams(const std::string& kind, const at::Tensor& w, const at::Tensor& r, const at::Tensor& b)
{
    static std::mutex mutex;
    static std::map<std::tuple<std::string, const void*, const void*, const void*>, std::vector<at::Tensor>> kept;
    const auto key = std::make_tuple(kind, w.data_ptr(), r.data_ptr(), b.defined() ? b.data_ptr() : nullptr);
    {
        std::lock_guard<std::mutex> lock(mutex);
        const auto it = kept.find(key);
        if (it != kept.end())
            return it->second;
    }
    const Ints gates = kind == "lstm" ? Ints{0, 2, 3, 1} : kind == "gru" ? Ints{1, 0, 2} : Ints{0};
    const int64_t hidden = r.size(-1), rows = int64_t(gates.size()) * hidden;
    auto reorder = [&](const at::Tensor& t) {  // t's rows, gate by gate
        std::vector<at::Tensor> parts;
        for (int64_t g : gates)
            parts.push_back(t.slice(0, g * hidden, (g + 1) * hidden));
        return at::cat(parts).contiguous();
    };
    std::vector<at::Tensor> params;
    for (int64_t d = 0; d < w.size(0); ++d) {
        const at::Tensor bias = b.defined() ? b[d] : at::zeros({2 * rows}, w.options());
        for (const at::Tensor& t : {w[d], r[d], bias.slice(0, 0, rows), bias.slice(0, rows)})
            params.push_back(reorder(t));
    }
    std::lock_guard<std::mutex> lock(mutex);
    return kept.emplace(key, std::move(params)).first->second;
}

// One layer of `kind` over x, from the states h0 (an LSTM's h and c): Y [sequence, batch,
// directions * hidden] and the final states.
std::vector<at::Tensor> runRecurrent(const std::string& kind, const at::Tensor& x, const std::vector<at::Tensor>& h0,
                                     const std::vector<at::Tensor>& params, bool both)
{
    if (kind == "lstm") {
        const auto [y, h, c] = at::lstm(x, h0, params, true, 1, 0.0, false, both, false);
        return {y, h, c};
    }
    const auto [y, h] = kind == "gru"        ? at::gru(x, h0[0], params, true, 1, 0.0, false, both, false)
                        : kind == "rnn_relu" ? at::rnn_relu(x, h0[0], params, true, 1, 0.0, false, both, false)
                                             : at::rnn_tanh(x, h0[0], params, true, 1, 0.0, false, both, false);
    return {y, h};
}

// Each row of x over its own length, as PyTorch's packed sequences run (rows sorted longest
// first, packed, run, padded and put back in order): Y zero past the row's length, and the
// final states; a row of length 0 never runs, its states are zero (as ONNX Runtime gives).
std::vector<at::Tensor> runRecurrentPacked(const std::string& kind, const at::Tensor& x, const at::Tensor& lengths,
                                           std::vector<at::Tensor> h0, const std::vector<at::Tensor>& params, bool both)
{
    const at::Tensor empty = (lengths == 0).view({1, -1, 1});
    const auto [sortedLengths, order] = at::sort(lengths.to(at::kLong).clamp_min(1).cpu(), /*dim=*/0, /*descending=*/true);
    const auto [data, batchSizes] = at::_pack_padded_sequence(x.index_select(1, order), sortedLengths, false);
    for (at::Tensor& h : h0)
        h = h.index_select(1, order);
    std::vector<at::Tensor> out;
    if (kind == "lstm") {
        const auto [y, h, c] = at::lstm(data, batchSizes, h0, params, true, 1, 0.0, false, both);
        out = {y, h, c};
    } else {
        const auto [y, h] = kind == "gru"        ? at::gru(data, batchSizes, h0[0], params, true, 1, 0.0, false, both)
                            : kind == "rnn_relu" ? at::rnn_relu(data, batchSizes, h0[0], params, true, 1, 0.0, false, both)
                                                 : at::rnn_tanh(data, batchSizes, h0[0], params, true, 1, 0.0, false, both);
        out = {y, h};
    }
    out[0] = std::get<0>(at::_pad_packed_sequence(out[0], batchSizes, false, 0.0, x.size(0)));
    const at::Tensor inOrder = at::argsort(order);
    for (at::Tensor& t : out)
        t = t.index_select(1, inOrder).masked_fill(empty, 0.0);
    return out;
}

// ONNX's outputs of a forward or bidirectional layer: Y [sequence, directions, batch, hidden],
// Y_h [directions, batch, hidden] and (an LSTM's) Y_c, as PyTorch gives the last two.
std::vector<at::Tensor> recurrent(const std::string& kind, const at::Tensor& x, const at::Tensor& w, const at::Tensor& r,
                                  const at::Tensor& b = {}, const at::Tensor& sequenceLens = {},
                                  const at::Tensor& initialH = {}, const at::Tensor& initialC = {})
{
    const std::vector<at::Tensor> params = recurrentParams(kind, w, r, b);
    const int64_t directions = w.size(0), hidden = r.size(-1);
    const at::Tensor h = initialH.defined() ? initialH : at::zeros({directions, x.size(1), hidden}, x.options());
    std::vector<at::Tensor> h0{h};
    if (kind == "lstm")
        h0.push_back(initialC.defined() ? initialC : at::zeros_like(h));
    std::vector<at::Tensor> out = sequenceLens.defined() ? runRecurrentPacked(kind, x, sequenceLens, h0, params, directions == 2)
                                                         : runRecurrent(kind, x, h0, params, directions == 2);
    out[0] = out[0].reshape({x.size(0), x.size(1), directions, hidden}).transpose(1, 2);
    return out;
}

// An activation function of a recurrent layer as ONNX names it (lower case), with its alpha and beta.
struct RecurrentActivation {
    std::string name;
    double alpha = 0, beta = 0;
};

at::Tensor recurrentActivation(const RecurrentActivation& a, const at::Tensor& v)
{
    if (a.name == "relu")
        return at::relu(v);
    if (a.name == "tanh")
        return at::tanh(v);
    if (a.name == "sigmoid")
        return at::sigmoid(v);
    if (a.name == "affine")
        return a.alpha * v + a.beta;
    if (a.name == "leakyrelu")
        return at::leaky_relu(v, a.alpha);
    if (a.name == "thresholdedrelu")
        return at::where(v > a.alpha, v, at::zeros_like(v));
    if (a.name == "scaledtanh")
        return a.alpha * at::tanh(a.beta * v);
    if (a.name == "hardsigmoid")
        return (a.alpha * v + a.beta).clamp(0, 1);
    if (a.name == "elu")
        return at::elu(v, a.alpha);
    if (a.name == "softsign")
        return v / (1 + v.abs());
    return at::softplus(v);  // "softplus"
}

// Each kind's activation functions by default: an LSTM's f, g, h, a GRU's f, g, an RNN's f.
std::vector<RecurrentActivation> recurrentDefaults(const std::string& kind)
{
    if (kind == "lstm")
        return {{"sigmoid"}, {"tanh"}, {"tanh"}};
    if (kind == "gru" || kind == "gru_reset_first")
        return {{"sigmoid"}, {"tanh"}};
    return {{kind == "rnn_relu" ? "relu" : "tanh"}};
}

// One step of ONNX's cell: the next h and c (an LSTM's; c as given for the others) from the
// input's projection xw (its bias added), the recurrent weights r and their bias rb, in ONNX's
// gate order (LSTM i, o, f, c; GRU z, r, h), with the activation functions acts, each gate's
// input clipped to [-clip, clip] where clip > 0, and an LSTM's forget gate 1 - i where inputForget.
std::pair<at::Tensor, at::Tensor> recurrentStep(const std::string& kind, const at::Tensor& xw, const at::Tensor& h,
                                                const at::Tensor& c, const at::Tensor& r, const at::Tensor& rb,
                                                const at::Tensor& p, const std::vector<RecurrentActivation>& acts,
                                                double clip, bool inputForget)
{
    const int64_t hidden = h.size(-1);
    auto f = [&](const at::Tensor& v) { return recurrentActivation(acts[0], v); };
    auto gate = [&](const at::Tensor& v) { return clip > 0 ? v.clamp(-clip, clip) : v; };
    if (kind == "gru_reset_first") {
        const at::Tensor zr = f(gate(xw.slice(1, 0, 2 * hidden) +
                                     at::addmm(rb.slice(0, 0, 2 * hidden), h, r.slice(0, 0, 2 * hidden).t())));
        const at::Tensor z = zr.slice(1, 0, hidden), reset = zr.slice(1, hidden);
        const at::Tensor n = recurrentActivation(
            acts[1], gate(xw.slice(1, 2 * hidden) + at::addmm(rb.slice(0, 2 * hidden), reset * h, r.slice(0, 2 * hidden).t())));
        return {(1 - z) * n + z * h, c};
    }
    const at::Tensor hr = at::addmm(rb, h, r.t());
    if (kind == "gru") {
        const at::Tensor zr = f(gate(xw.slice(1, 0, 2 * hidden) + hr.slice(1, 0, 2 * hidden)));
        const at::Tensor z = zr.slice(1, 0, hidden), reset = zr.slice(1, hidden);
        const at::Tensor n = recurrentActivation(acts[1], gate(xw.slice(1, 2 * hidden) + reset * hr.slice(1, 2 * hidden)));
        return {(1 - z) * n + z * h, c};
    }
    if (kind == "lstm") {
        const std::vector<at::Tensor> g = (xw + hr).chunk(4, 1);  // i, o, f, c
        at::Tensor in = g[0], out = g[1], forget = g[2];
        if (p.defined()) {
            in = in + p.slice(0, 0, hidden) * c;
            forget = forget + p.slice(0, 2 * hidden) * c;
        }
        in = f(gate(in));
        forget = inputForget ? 1 - in : f(gate(forget));
        const at::Tensor next = forget * c + in * recurrentActivation(acts[1], gate(g[3]));
        if (p.defined())
            out = out + p.slice(0, hidden, 2 * hidden) * next;
        return {f(gate(out)) * recurrentActivation(acts[2], next), next};
    }
    return {f(gate(xw + hr)), c};
}

// x [steps, batch, ...] with each row's first lengths[row] steps in reverse order (ONNX's
// ReverseSequence; a reverse recurrent layer's input and output).
at::Tensor reverseWithin(const at::Tensor& x, const at::Tensor& lengths)
{
    const at::Tensor n = lengths.to(at::kLong), t = at::arange(x.size(0), n.options()).unsqueeze(1);
    return x.index({at::where(t < n, n - 1 - t, t), at::arange(x.size(1), n.options())});
}

// The outputs recurrent() gives, computed step by step as ONNX defines the cells, for what
// PyTorch's kernels do not compute: direction "reverse", a GRU whose reset gate scales the state
// before its recurrent weights (kind "gru_reset_first", ONNX's linear_before_reset 0), an LSTM's
// peepholes p, weights computed when the model runs, a clip of the gates' inputs (clip > 0),
// activations other than the defaults (each function of each direction) and an LSTM's
// input_forget. A row past its sequence_lens keeps its states and gives zeros; in reverse it
// starts at its own last step.
std::vector<at::Tensor> recurrentSteps(const std::string& kind, const std::string& direction, const at::Tensor& x,
                                       const at::Tensor& w, const at::Tensor& r, const at::Tensor& b = {},
                                       const at::Tensor& sequenceLens = {}, const at::Tensor& initialH = {},
                                       const at::Tensor& initialC = {}, const at::Tensor& p = {}, double clip = 0,
                                       const std::vector<RecurrentActivation>& activations = {}, bool inputForget = false)
{
    const int64_t steps = x.size(0), batch = x.size(1), hidden = r.size(-1), width = w.size(1);
    const at::Tensor lengths = sequenceLens.defined() ? sequenceLens.to(at::kLong) : at::full({batch}, steps, at::kLong);
    const at::Tensor running = (at::arange(steps, at::kLong).unsqueeze(1) < lengths).unsqueeze(2);  // [steps, batch, 1]
    const std::vector<RecurrentActivation> defaults = recurrentDefaults(kind);  // also the functions per direction
    std::vector<at::Tensor> ys, hs, cs;
    for (int64_t d = 0; d < w.size(0); ++d) {
        const bool reverse = direction == "reverse" || d == 1;
        const at::Tensor bias = b.defined() ? b[d] : at::zeros({2 * width}, x.options());
        const at::Tensor xw = at::matmul(reverse ? reverseWithin(x, lengths) : x, w[d].t()) + bias.slice(0, 0, width);
        at::Tensor h = initialH.defined() ? initialH[d] : at::zeros({batch, hidden}, x.options());
        at::Tensor c = initialC.defined() ? initialC[d] : at::zeros_like(h);
        const std::vector<RecurrentActivation> acts =
            activations.empty() ? defaults
                                : std::vector<RecurrentActivation>(activations.begin() + d * int64_t(defaults.size()),
                                                                   activations.begin() + (d + 1) * int64_t(defaults.size()));
        at::Tensor y = at::zeros({steps, batch, hidden}, x.options());
        for (int64_t t = 0; t < steps; ++t) {
            const auto [hNext, cNext] = recurrentStep(kind, xw[t], h, c, r[d], bias.slice(0, width),
                                                      p.defined() ? p[d] : at::Tensor(), acts, clip, inputForget);
            h = at::where(running[t], hNext, h);
            c = at::where(running[t], cNext, c);
            y[t].copy_(hNext.masked_fill(running[t].logical_not(), 0.0));
        }
        ys.push_back(reverse ? reverseWithin(y, lengths) : y);
        hs.push_back(h);
        cs.push_back(c);
    }
    const at::Tensor empty = (lengths == 0).view({1, -1, 1});  // a row of length 0 never ran: its states are zero
    std::vector<at::Tensor> out{at::stack(ys, 1), at::stack(hs).masked_fill(empty, 0.0)};
    if (kind == "lstm")
        out.push_back(at::stack(cs).masked_fill(empty, 0.0));
    return out;
}

// A layer's outputs in ONNX's layout 1: Y [batch, sequence, directions, hidden], the states
// [batch, directions, hidden] (the layer ran on the input and states transposed).
std::vector<at::Tensor> recurrentBatchFirst(std::vector<at::Tensor> outputs)
{
    outputs[0] = outputs[0].permute({2, 0, 1, 3});
    for (size_t i = 1; i < outputs.size(); ++i)
        outputs[i] = outputs[i].transpose(0, 1);
    return outputs;
}
