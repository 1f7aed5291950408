// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// ONNX's Loop: the body, a function of its own, runs as many times as the trip count and its
// condition say.

// body({iteration, condition, carried..., outer...}) gives {condition, carried..., scan values...};
// it runs while the iteration is below trips and the condition holds (undefined where the node
// leaves either out; without a condition the body's is ignored). Gives the last carried values,
// then each scan output's values stacked (empty, of its type, where the body never ran).
std::vector<at::Tensor> onnxLoop(const std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>& body,
                                 const at::Tensor& trips, const at::Tensor& condition, std::vector<at::Tensor> carried,
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
