// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// ONNX's Loop and Scan: the body, a function of its own, runs as many times as the trip count
// and its condition say, or once per slice of the scan inputs.
using Body = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

// body({iteration, condition, carried..., outer...}) gives {condition, carried..., scan values...};
// it runs while the iteration is below trips and the condition holds (undefined where the node
// leaves either out; without a condition the body's is ignored). Gives the last carried values,
// then each scan output's values stacked (empty, of its type, where the body never ran).
std::vector<at::Tensor> onnxLoop(const Body& body, const at::Tensor& trips, const at::Tensor& condition, std::vector<at::Tensor> carried,
                                 const std::vector<at::Tensor>& outer, const std::vector<at::ScalarType>& scanTypes)
{
    const int64_t limit = trips.defined() ? trips.item<int64_t>() : std::numeric_limits<int64_t>::max();
    bool keep = condition.defined() ? condition.item<bool>() : true;
    const size_t n = carried.size();
    std::vector<std::vector<at::Tensor>> scans(scanTypes.size());
    for (int64_t iteration = 0; iteration < limit && keep; ++iteration) {
        std::vector<at::Tensor> args{at::scalar_tensor(iteration, at::kLong), at::scalar_tensor(keep, at::kBool)};
        args.insert(args.end(), carried.begin(), carried.end());
        args.insert(args.end(), outer.begin(), outer.end());
        const std::vector<at::Tensor> out = body(args);
        if (condition.defined())
            keep = out[0].item<bool>();
        std::copy(out.begin() + 1, out.begin() + 1 + std::ptrdiff_t(n), carried.begin());
        for (size_t j = 0; j < scans.size(); ++j)
            scans[j].push_back(out[1 + n + j]);
    }
    for (size_t j = 0; j < scans.size(); ++j)
        carried.push_back(scans[j].empty() ? at::empty({0}, scanTypes[j]) : at::stack(scans[j]));
    return carried;
}

// A scan output's values stacked along axis (in reverse order where asked); empty, of its type,
// where there are none.
at::Tensor stacked(std::vector<at::Tensor> values, int64_t axis, bool reverse, at::ScalarType type)
{
    if (values.empty())
        return at::empty({0}, type);
    if (reverse)
        std::reverse(values.begin(), values.end());
    return at::stack(values, axis);
}

// ONNX's Scan: body({states..., slices..., outer...}) gives {states..., scan values...} for each
// slice of the scan inputs along their axes (from the last where reversed). Gives the last
// states, then each scan output's values stacked along its axis (reversed where asked).
std::vector<at::Tensor> onnxScan(const Body& body, std::vector<at::Tensor> states, const std::vector<at::Tensor>& inputs,
                                 const std::vector<at::Tensor>& outer, const Ints& inAxes, const Ints& inReverse,
                                 const Ints& outAxes, const Ints& outReverse, const std::vector<at::ScalarType>& scanTypes)
{
    Ints axes;
    for (size_t j = 0; j < inputs.size(); ++j)
        axes.push_back(inAxes[j] < 0 ? inAxes[j] + inputs[j].dim() : inAxes[j]);
    const int64_t length = inputs[0].size(axes[0]);
    for (size_t j = 0; j < inputs.size(); ++j)
        if (inputs[j].size(axes[j]) != length)
            throw std::runtime_error("Scan: the scan inputs have different lengths along their axes");
    const size_t n = states.size();
    std::vector<std::vector<at::Tensor>> scans(scanTypes.size());
    for (int64_t t = 0; t < length; ++t) {
        std::vector<at::Tensor> args = states;
        for (size_t j = 0; j < inputs.size(); ++j)
            args.push_back(inputs[j].select(axes[j], inReverse[j] ? length - 1 - t : t));
        args.insert(args.end(), outer.begin(), outer.end());
        const std::vector<at::Tensor> out = body(args);
        std::copy(out.begin(), out.begin() + std::ptrdiff_t(n), states.begin());
        for (size_t j = 0; j < scans.size(); ++j)
            scans[j].push_back(out[n + j]);
    }
    for (size_t j = 0; j < scans.size(); ++j)
        states.push_back(stacked(std::move(scans[j]), outAxes[j], outReverse[j] != 0, scanTypes[j]));
    return states;
}

// Scan before opset 9: every input and output has a batch axis first, and onnxScan runs once per
// batch entry over axis 0 of the rest; sequences shorter than the input are refused.
std::vector<at::Tensor> onnxScanBatched(const Body& body, const at::Tensor& sequenceLens, const std::vector<at::Tensor>& states,
                                        const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& outer,
                                        const Ints& inReverse, const std::vector<at::ScalarType>& scanTypes)
{
    if (sequenceLens.defined() && !(sequenceLens.to(at::kLong) == inputs[0].size(1)).all().item<bool>())
        throw std::runtime_error("Scan: sequence_lens shorter than the sequence are not supported");
    const Ints zeros(scanTypes.size(), 0);
    std::vector<std::vector<at::Tensor>> parts(states.size() + scanTypes.size());
    for (int64_t i = 0; i < inputs[0].size(0); ++i) {
        std::vector<at::Tensor> s, x;
        for (const at::Tensor& t : states)
            s.push_back(t[i]);
        for (const at::Tensor& t : inputs)
            x.push_back(t[i]);
        const std::vector<at::Tensor> row = onnxScan(body, s, x, outer, Ints(inputs.size(), 0), inReverse, zeros, zeros, scanTypes);
        for (size_t j = 0; j < row.size(); ++j)
            parts[j].push_back(row[j]);
    }
    std::vector<at::Tensor> out;
    for (const std::vector<at::Tensor>& p : parts)
        out.push_back(at::stack(p));
    return out;
}
