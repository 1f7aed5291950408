// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// at::conv2d (then at::relu when relu) on a channels-last input, run as Ramiel's runtime runs
// 2-D convolutions: oneDNN on weights reordered once into its own layout (libtorch's
// mkldnn_prepacked operators, which torch.jit.freeze uses), with Relu fused. oneDNN fixes the
// layout for the input size and the thread split for the calling thread's intra-op threads
// when the weights are packed, so they are packed once per (weights, size, threads) and kept.
class PackedConvolutions {
public:
    static PackedConvolutions& instance()
    {
        static PackedConvolutions packs;
        return packs;
    }

    bool available() const { return available_; }

    at::Tensor run(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const Ints& stride,
                   const Ints& padding, const Ints& dilation, int64_t groups, bool relu)
    {
        torch::jit::Stack stack{x, packed(x, weight, bias, stride, padding, dilation, groups, relu)};
        run_->callBoxed(&stack);
        return stack.at(0).toTensor();
    }

private:
    struct Key {
        const void* weight;
        Ints sizes;
        int threads;
        Ints settings;  // stride, padding, dilation, groups, relu: weights may be shared
        bool operator<(const Key& o) const
        {
            return std::tie(weight, sizes, threads, settings) < std::tie(o.weight, o.sizes, o.threads, o.settings);
        }
    };

    PackedConvolutions()
    {
        auto& dispatcher = c10::Dispatcher::singleton();
        const auto prepack = dispatcher.findSchema({"mkldnn_prepacked::conv2d_prepack", ""});
        const auto run = dispatcher.findSchema({"mkldnn_prepacked::conv2d_run", ""});
        available_ = at::hasMKLDNN() && prepack && run;
        if (available_) {
            prepack_.emplace(*prepack);
            run_.emplace(*run);
        }
    }

    c10::IValue packed(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const Ints& stride,
                       const Ints& padding, const Ints& dilation, int64_t groups, bool relu)
    {
        Key key{weight.unsafeGetTensorImpl(), x.sizes().vec(), at::get_num_threads(), stride};
        key.settings.insert(key.settings.end(), padding.begin(), padding.end());
        key.settings.insert(key.settings.end(), dilation.begin(), dilation.end());
        key.settings.insert(key.settings.end(), {groups, relu ? 1 : 0});
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = packs_.find(key);
        if (it != packs_.end())
            return it->second;
        // Weights with channels-last strides (also for 1x1 kernels, where contiguous(ChannelsLast)
        // keeps the contiguous strides): packed from contiguous ones, they are laid out for a blocked
        // input and conv2d_run reorders them into the channels-last primitive's layout on every run.
        const int64_t o = weight.size(0), i = weight.size(1), kh = weight.size(2), kw = weight.size(3);
        at::Tensor w = at::empty_strided({o, i, kh, kw}, {i * kh * kw, 1, kw * i, i}, weight.options());
        w.copy_(weight);
        torch::jit::Stack stack{w, bias.defined() ? c10::IValue(bias) : c10::IValue(), stride, padding,
                                dilation, groups, key.sizes, std::string(relu ? "relu" : "none")};
        prepack_->callBoxed(&stack);
        return packs_.emplace(key, stack.at(0)).first->second;
    }

    bool available_ = false;
    std::optional<c10::OperatorHandle> prepack_, run_;
    std::mutex mutex_;
    std::map<Key, c10::IValue> packs_;
};

at::Tensor conv2d(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias, const Ints& stride,
                  const Ints& padding, const Ints& dilation, int64_t groups, bool relu)
{
    const at::Tensor x = input.contiguous(at::MemoryFormat::ChannelsLast);
    PackedConvolutions& packs = PackedConvolutions::instance();
    if (packs.available())
        return packs.run(x, weight, bias, stride, padding, dilation, groups, relu);
    at::Tensor y = at::conv2d(x, weight, bias, stride, padding, dilation, groups);
    return relu ? y.relu_() : y;
}
