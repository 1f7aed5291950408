// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// The calls of a convolution in which its kernels take turns (a kernel trial); main() runs the
// model serially and in parallel until every trial has chosen (kernelTrialsSettled).
constexpr int kKernelTrialCalls = 8;

// A fused Relu is oneDNN's post-op, which makes 0 of NaN where at::relu keeps it. Ramiel fuses it
// only into convolutions whose inputs are finite whenever the model's are; while a call of
// forward() or forwardParallel() runs on inputs that hold a NaN or an infinity (a NonFiniteRun),
// conv2d looks at its input and runs at::conv2d and at::relu where it holds one (inf - inf is NaN).
// SiLU (a pass of its own after the convolution with AVX-512, siluInPlace; elsewhere oneDNN's
// swish post-op) and a fused HardSwish give NaN and infinities where at::silu and at::hardswish
// do (NaN of -inf too), and run so everywhere.
std::atomic<int> nonFiniteRuns{0};  // such calls under way

// Whether a float tensor holds a NaN or an infinity (or sums past float): one pass, no copy.
bool nonFinite(const at::Tensor& t)
{
    return t.defined() && t.is_floating_point() && !std::isfinite(t.sum().item<double>());
}

// Counts a forward() or forwardParallel() call in nonFiniteRuns while it lasts, where its inputs
// hold a NaN or an infinity.
class NonFiniteRun {
public:
    explicit NonFiniteRun(const std::vector<at::Tensor>& inputs)
        : counted_(std::any_of(inputs.begin(), inputs.end(), nonFinite))
    {
        if (counted_)
            ++nonFiniteRuns;
    }
    ~NonFiniteRun()
    {
        if (counted_)
            --nonFiniteRuns;
    }
    NonFiniteRun(const NonFiniteRun&) = delete;
    NonFiniteRun& operator=(const NonFiniteRun&) = delete;

private:
    bool counted_;
};

// The activation conv2d applies to its output.
enum class Activation { None, Relu, Silu, HardSwish };

// Whether conv2d runs its Relu after at::conv2d rather than as oneDNN's post-op (above).
bool reluAfter(Activation activation, const at::Tensor& x)
{
    return activation == Activation::Relu && nonFiniteRuns.load() > 0 && nonFinite(x);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX512_SILU 1
// SiLU of n floats in place with AVX-512, as Ramiel's runtime computes it (within 2.5e-7 of the
// exact value): e^-x as x = k ln2 + r, e^r Cephes' degree-7 polynomial scaled by 2^k (x clamped
// to [-88, 88]), and 1 / (1 + e^-x) as rcp14 with one Newton step; the last n % 16 as below.
__attribute__((target("avx512f"))) void siluAvx512(float* y, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(y + i), one = _mm512_set1_ps(1.0f);
        const __m512 x = _mm512_max_ps(_mm512_min_ps(_mm512_sub_ps(_mm512_setzero_ps(), v), _mm512_set1_ps(88.0f)),
                                       _mm512_set1_ps(-88.0f));
        const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
        r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
        __m512 p = _mm512_set1_ps(1.9875691500e-4f);
        for (float c : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f})
            p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
        p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, one));
        const __m512 d = _mm512_add_ps(one, _mm512_scalef_ps(p, k));  // 1 + e^-v
        const __m512 q = _mm512_rcp14_ps(d);
        // The sigmoid 0 below v = -88, where e^-v overflows float (as at::silu: NaN of -inf)
        const __m512 sigmoid = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_set1_ps(-88.0f), _CMP_NLT_UQ),
                                                   _mm512_fmadd_ps(q, _mm512_fnmadd_ps(d, q, one), q));
        _mm512_storeu_ps(y + i, _mm512_mul_ps(v, sigmoid));
    }
    for (; i < n; ++i)
        y[i] = y[i] / (1.0f + std::exp(-y[i]));
}
#endif

// Whether this processor runs siluInPlace's pass (AVX-512); elsewhere oneDNN's swish post-op
// and at::silu_, which are vectorized for it, are the faster.
bool hasSiluPass()
{
#ifdef HAVE_AVX512_SILU
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    return avx512;
#else
    return false;
#endif
}

// SiLU in place on a contiguous float tensor, each intra-op thread over its share right after the
// convolution wrote it (still in its cache), as Ramiel's runtime runs it: oneDNN 2.6's swish
// post-op took 1.5x the time of this pass. Other tensors, and processors without AVX-512: at::silu_.
at::Tensor siluInPlace(at::Tensor y)
{
    if (!hasSiluPass() || y.scalar_type() != at::kFloat || !y.is_contiguous(y.suggest_memory_format()))
        return at::silu_(y);
#ifdef HAVE_AVX512_SILU
    float* data = y.data_ptr<float>();
    at::parallel_for(0, y.numel(), 16384, [&](int64_t begin, int64_t end) { siluAvx512(data + begin, end - begin); });
#endif
    return y;
}

// The activation applied to y in place.
at::Tensor activatedInPlace(at::Tensor y, Activation activation)
{
    switch (activation) {
    case Activation::Relu: return y.relu_();
    case Activation::Silu: return siluInPlace(y);
    case Activation::HardSwish: return at::hardswish_(y);
    case Activation::None: break;
    }
    return y;
}

// at::conv2d, then the activation.
at::Tensor conv2dByAten(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const Ints& stride,
                        const Ints& padding, const Ints& dilation, int64_t groups, Activation activation)
{
    return activatedInPlace(at::conv2d(x, weight, bias, stride, padding, dilation, groups), activation);
}

// at::max_pool2d's output size along one axis (ceil mode: the last window starts inside).
[[maybe_unused]] int64_t pooledSize(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                                    bool ceil)
{
    const int64_t span = (kernel - 1) * dilation + 1;
    const int64_t n = (size + 2 * padding - span + (ceil ? stride - 1 : 0)) / stride + 1;
    return ceil && (n - 1) * stride >= size + padding ? n - 1 : n;
}

// linear() where oneDNN does not run it: at::matmul, the bias added, then at::gelu.
at::Tensor linearByAten(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, bool gelu)
{
    at::Tensor y = at::matmul(x, weight);
    y = bias.defined() ? y + bias.reshape({-1}) : y;
    return gelu ? at::gelu(y) : y;
}

#if HAVE_ONEDNN
// The activation as oneDNN's eltwise post-op (undef: none, or SiLU where it is a pass of its own
// after the primitive: siluInPlace).
dnnl::algorithm postOpOf(Activation activation)
{
    switch (activation) {
    case Activation::Relu: return dnnl::algorithm::eltwise_relu;
    case Activation::Silu: return hasSiluPass() ? dnnl::algorithm::undef : dnnl::algorithm::eltwise_swish;
    case Activation::HardSwish: return dnnl::algorithm::eltwise_hardswish;
    case Activation::None: break;
    }
    return dnnl::algorithm::undef;
}

// conv2d and max_pool2d: at::conv2d (then its activation) and at::max_pool2d on a
// channels-last input, run as oneDNN primitives (oneDNN's own API, the library libtorch runs its
// convolutions on), as Ramiel's runtime runs 2-D convolutions. oneDNN fixes a primitive's memory
// layout for the input size and a convolution's thread split for the calling thread's intra-op
// threads when it makes one, so one is made for each (weights, input size, threads, settings)
// on first use and kept: a convolution's weights are reordered once into the layout it picked,
// its activation is a post-op, and each run only wraps the input and output tensors. A 3x3 convolution
// that the runtime's rule admits also tries Winograd's algorithm in its first calls, as the
// runtime does, and keeps the fastest kernel. libtorch's own
// convolution calls make the primitive's description anew every time (10-30 us each), and
// at::max_pool2d also writes an int64 index per output.
class OneDnn {
public:
    static OneDnn& instance()
    {
        static OneDnn oneDnn;
        return oneDnn;
    }

    at::Tensor conv2d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const Ints& stride,
                      const Ints& padding, const Ints& dilation, int64_t groups, dnnl::algorithm postOp)
    {
        Key key{weight.unsafeGetTensorImpl(), x.sizes().vec(), at::get_num_threads(), stride};
        for (const Ints* v : {&padding, &dilation})
            key.settings.insert(key.settings.end(), v->begin(), v->end());
        key.settings.insert(key.settings.end(), {groups, int64_t(postOp)});
        std::unique_lock<std::mutex> lock(mutex_);
        std::unique_ptr<Trial>& trial = trials_[key];
        if (!trial) {
            trial = std::make_unique<Trial>();
            const at::Tensor w = weight.contiguous();
            trial->candidates[0] = convolution(key.sizes, w, bias, stride, padding, dilation, groups, postOp, false);
            trial->count = 1;
            const Ints& out = trial->candidates[0]->outSizes;
            if (wantsWinograd(w, out, stride, dilation, groups)) {
                if (auto winograd = convolution(key.sizes, w, bias, stride, padding, dilation, groups, postOp, true))
                    trial->candidates[trial->count++] = std::move(winograd);
                // More than one image, as many for each intra-op thread, outputs under 28x28:
                // image by image too, as the runtime tries them. oneDNN 2.6 has its F(2x2, 3x3)
                // Winograd kernel for one image only and gives a batch its F(4x4, 3x3) one,
                // whose transformed weights are 2.25x the size; not always the faster (one
                // thread, two images: 96 -> 208 at 14x14 1.36 ms so, 0.48 as a batch).
                const int64_t batch = key.sizes[0];
                if (trial->count == 2 && batch > 1 && batch % at::get_num_threads() == 0 && out[2] * out[3] < 28 * 28) {
                    Ints one = key.sizes;
                    one[0] = 1;
                    if (auto byImage = convolution(one, w, bias, stride, padding, dilation, groups, postOp, true)) {
                        byImage->images = batch;
                        byImage->outSizes[0] = batch;
                        trial->candidates[trial->count++] = std::move(byImage);
                    }
                }
                // Otherwise the next Winograd kernel oneDNN offers, as the runtime tries it: for
                // one image its F(4x4, 3x3) after its F(2x2, 3x3), on some shapes the faster.
                if (trial->count == 2)
                    if (auto next = convolution(key.sizes, w, bias, stride, padding, dilation, groups, postOp, true, true))
                        trial->candidates[trial->count++] = std::move(next);
            }
            if (trial->count == 1)
                trial->chosen = trial->candidates[0].get();
        }
        lock.unlock();
        return runFaster(*trial, x);
    }

    at::Tensor maxPool2d(const at::Tensor& x, const Ints& kernel, const Ints& stride, const Ints& padding,
                         const Ints& dilation, bool ceil)
    {
        Key key{nullptr, x.sizes().vec(), at::get_num_threads(), kernel};
        for (const Ints* v : {&stride, &padding, &dilation})
            key.settings.insert(key.settings.end(), v->begin(), v->end());
        key.settings.push_back(ceil ? 1 : 0);
        return run(*cached(poolings_, key, [&] { return maxPooling(key.sizes, kernel, stride, padding, dilation, ceil); }), x);
    }

    // x [..., K] (contiguous, float) times the constant weight [K, N] (any strides), plus bias
    // (N values) where defined, then GELU where gelu.
    at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, bool gelu)
    {
        const int64_t k = weight.size(0), n = weight.size(1), rows = x.numel() / k;
        // By the weight's data, which the primitive keeps alive (a transposed view is a new tensor each call).
        Key key{weight.data_ptr(), {rows, k}, at::get_num_threads(), weight.strides().vec()};
        key.settings.insert(key.settings.end(), {gelu ? 1 : 0, int64_t(reinterpret_cast<intptr_t>(bias.defined() ? bias.data_ptr() : nullptr))});
        const Primitive* p = cached(products_, key, [&] { return product(rows, weight, bias, gelu); });
        Ints sizes = x.sizes().vec();
        sizes.back() = n;
        at::Tensor y = at::empty(sizes, x.options());
        execute(*p, x.data_ptr(), y.data_ptr());
        return y;
    }

    // a [..., M, K] times b [..., K, N] (floats, the same batch dimensions); at::matmul where oneDNN
    // has no kernel for their strides.
    at::Tensor batchedMatmul(const at::Tensor& a, const at::Tensor& b)
    {
        const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
        const at::Tensor a3 = a.reshape({-1, m, k}), b3 = b.reshape({-1, k, n});  // views where they can be
        Key key{nullptr, a3.sizes().vec(), at::get_num_threads(), a3.strides().vec()};
        for (const auto& v : {b3.sizes().vec(), b3.strides().vec()})
            key.settings.insert(key.settings.end(), v.begin(), v.end());
        const Primitive* p = cached(batchedProducts_, key, [&] { return batchedProduct(a3, b3); });
        if (!p)
            return at::matmul(a, b);
        at::Tensor y = at::empty({a3.size(0), m, n}, a.options());
        execute(*p, a3.data_ptr(), y.data_ptr(), b3.data_ptr());
        std::vector<int64_t> sizes = a.sizes().vec();
        sizes.back() = n;
        return y.view(sizes);
    }

    // x (contiguous, float) normalized over its last weight.numel() values, scaled by weight and
    // shifted by bias where defined (floats of that many values).
    at::Tensor layerNorm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps)
    {
        const int64_t n = weight.numel(), rows = x.numel() / n;
        Key key{weight.data_ptr(), {rows, n}, at::get_num_threads(), {}};
        int64_t epsBits = 0;
        std::memcpy(&epsBits, &eps, sizeof epsBits);
        key.settings = {epsBits, int64_t(reinterpret_cast<intptr_t>(bias.defined() ? bias.data_ptr() : nullptr))};
        const Primitive* p = cached(normalizations_, key, [&] { return normalization(rows, weight, bias, float(eps)); });
        at::Tensor y = at::empty(x.sizes(), x.options());
        execute(*p, x.data_ptr(), y.data_ptr());
        return y;
    }

    // The softmax of x (contiguous, float) along its last dimension.
    at::Tensor softmax(const at::Tensor& x)
    {
        const int64_t n = x.size(-1), rows = x.numel() / n;
        const Primitive* p = cached(softmaxes_, Key{nullptr, {rows, n}, at::get_num_threads(), {}}, [&] {
            const dnnl::memory::desc data({rows, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
            const dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference,
                                                      dnnl::algorithm::softmax_accurate, data, data, 1);
            const dnnl::softmax_v2_forward::primitive_desc pd(desc, attributes(dnnl::algorithm::undef), engine_);
            return made(dnnl::softmax_v2_forward(pd), pd, {rows, n});
        });
        at::Tensor y = at::empty(x.sizes(), x.options());
        execute(*p, x.data_ptr(), y.data_ptr());
        return y;
    }

    bool trialsSettled()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::all_of(trials_.begin(), trials_.end(), [](const auto& t) { return t.second->chosen.load() != nullptr; });
    }

private:
    struct Key {
        const void* weight;  // a convolution's; none for pooling
        Ints sizes;
        int threads;
        Ints settings;  // kernel or stride, padding, dilation, ...: weights may be shared
        bool operator<(const Key& o) const
        {
            return std::tie(weight, sizes, threads, settings) < std::tie(o.weight, o.sizes, o.threads, o.settings);
        }
    };

    struct Primitive {
        dnnl::primitive primitive;
        dnnl::memory::desc src, dst, scratch;
        dnnl::memory::desc operand;  // a product's second factor, passed with each run
        Ints outSizes;
        int64_t images = 1;  // more: a one-image primitive run on each image in turn
        std::unordered_map<int, dnnl::memory> constants;  // a convolution's weights and bias
        at::Tensor packedWeights, bias, source;            // what they point into; a product's own weights
        // Where the primitive runs on a layout of its own (Winograd's): the input reordered
        // into it from channels-last, and the output back.
        std::optional<dnnl::reorder> into, outOf;
        dnnl::memory::desc plainSrc, plainDst;
    };

    // A convolution's kernels: the direct one and, where the runtime's rule admits Winograd's
    // algorithm and oneDNN has a kernel for it, that one too (and for a small batch, image by
    // image; otherwise oneDNN's next Winograd kernel where it offers one), taking turns in the
    // first kKernelTrialCalls calls, each timed where the model runs it (not its first call);
    // then the fastest stays. Which wins depends on the machine as much as on the shape, so the
    // runtime chooses so too.
    struct Trial {
        std::unique_ptr<Primitive> candidates[3];
        int count = 0;  // of candidates
        std::atomic<const Primitive*> chosen{nullptr};
        std::mutex mutex;
        int calls = 0, done = 0;
        double best[3] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::infinity()};
    };

    // table's primitive for key, made by make() on first use (null where make() gives none);
    // workers may ask at once.
    template <typename Make>
    const Primitive* cached(std::map<Key, std::unique_ptr<Primitive>>& table, const Key& key, const Make& make)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto [entry, fresh] = table.try_emplace(key);
        if (fresh) {
            try {
                entry->second = make();
            } catch (...) {
                table.erase(entry);  // asked again, it tries again
                throw;
            }
        }
        return entry->second.get();
    }

    // The runtime's rule: a 3x3 convolution of stride 1 and dilation 1, one group, whose channels
    // give Winograd's transforms enough work to save, on a 14x14 to 56x56 output.
    static bool wantsWinograd(const at::Tensor& weight, const Ints& out, const Ints& stride, const Ints& dilation,
                              int64_t groups)
    {
        const int64_t o = weight.size(0), i = weight.size(1), pixels = out[2] * out[3];
        return groups == 1 && weight.size(2) == 3 && weight.size(3) == 3 && i >= 32 && o >= 64 &&
               i * o >= 24 * (i + o) && pixels >= 14 * 14 && pixels <= 56 * 56 && stride == Ints{1, 1} &&
               dilation == Ints{1, 1};
    }

    at::Tensor runFaster(Trial& t, const at::Tensor& x)
    {
        if (const Primitive* p = t.chosen.load(std::memory_order_acquire))
            return run(*p, x);
        int call = 0;
        {
            std::lock_guard<std::mutex> lock(t.mutex);
            call = t.calls++;
        }
        const int k = call % t.count;
        const auto start = std::chrono::steady_clock::now();
        at::Tensor y = run(*t.candidates[k], x);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::lock_guard<std::mutex> lock(t.mutex);
        if (call >= t.count)
            t.best[k] = std::min(t.best[k], seconds);
        if (++t.done == kKernelTrialCalls)
            t.chosen.store(t.candidates[std::min_element(t.best, t.best + t.count) - t.best].get(),
                           std::memory_order_release);
        return y;
    }

    at::Tensor run(const Primitive& p, const at::Tensor& x)
    {
        at::Tensor y = at::empty(p.outSizes, x.options().memory_format(at::MemoryFormat::ChannelsLast));
        for (int64_t i = 0; i < p.images; ++i)  // (one image where the primitive takes the batch)
            compute(p, p.images > 1 ? x[i] : x, p.images > 1 ? y[i] : y);
        return y;
    }

    // The output of x written into y, both channels-last.
    void compute(const Primitive& p, const at::Tensor& x, const at::Tensor& y)
    {
        if (!p.into) {
            execute(p, x.data_ptr(), y.data_ptr());
            return;
        }
        // The input reordered into the primitive's layout, the output back.
        auto bytes = [&](const dnnl::memory::desc& d) { return at::empty({int64_t(d.get_size())}, x.options().dtype(at::kByte)); };
        const at::Tensor src = bytes(p.src), dst = bytes(p.dst);
        dnnl::stream stream(engine_);
        dnnl::memory plainIn(p.plainSrc, engine_, x.data_ptr()), in(p.src, engine_, src.data_ptr());
        p.into->execute(stream, plainIn, in);
        execute(p, src.data_ptr(), dst.data_ptr());
        dnnl::memory out(p.dst, engine_, dst.data_ptr()), plainOut(p.plainDst, engine_, y.data_ptr());
        p.outOf->execute(stream, out, plainOut);
        stream.wait();
    }

    void execute(const Primitive& p, void* src, void* dst, void* operand = nullptr)
    {
        std::unordered_map<int, dnnl::memory> args = p.constants;
        args.emplace(DNNL_ARG_SRC, dnnl::memory(p.src, engine_, src));
        args.emplace(DNNL_ARG_DST, dnnl::memory(p.dst, engine_, dst));
        if (operand)
            args.emplace(DNNL_ARG_WEIGHTS, dnnl::memory(p.operand, engine_, operand));
        // Each run brings its own scratch memory, so that workers may run one primitive at once.
        at::Tensor scratch;
        if (p.scratch.get_size() > 0) {
            scratch = at::empty({int64_t(p.scratch.get_size())}, at::TensorOptions().dtype(at::kByte));
            args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(p.scratch, engine_, scratch.data_ptr()));
        }
        dnnl::stream stream(engine_);
        p.primitive.execute(stream, args);
        stream.wait();
    }

    // Moves pd on to the next kernel oneDNN offers for its operation (whose description must
    // outlive pd: the iterator reads it again); false where there is none. Where a primitive of
    // the same operation is in oneDNN's cache, the iterator offers its kernel first and again
    // as it starts over, so the next is the first whose name differs.
    static bool nextImplementation(dnnl::convolution_forward::primitive_desc& pd)
    {
        const std::string first = pd.impl_info_str();
        while (pd.next_impl())
            if (first != pd.impl_info_str())
                return true;
        return false;
    }

    // A user scratchpad (each run brings its own) and the eltwise post-op `eltwise` unless undef.
    static dnnl::primitive_attr attributes(dnnl::algorithm eltwise)
    {
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        if (eltwise != dnnl::algorithm::undef) {
            dnnl::post_ops ops;
            // alpha: Relu's slope below 0 (0), swish's factor inside its sigmoid (1)
            ops.append_eltwise(1.0f, eltwise, eltwise == dnnl::algorithm::eltwise_swish ? 1.0f : 0.0f, 0.0f);
            attr.set_post_ops(ops);
        }
        return attr;
    }

    // The weights (laid out as `plain` says), reordered once into the layout p's primitive picked
    // (`packed`) and passed to every run.
    void packWeights(Primitive& p, const dnnl::memory::desc& packed, const dnnl::memory::desc& plain,
                     const at::Tensor& weight)
    {
        p.packedWeights = at::empty({int64_t(packed.get_size())}, weight.options().dtype(at::kByte));
        dnnl::memory to(packed, engine_, p.packedWeights.data_ptr()), from(plain, engine_, weight.data_ptr());
        dnnl::stream stream(engine_);
        dnnl::reorder(from, to).execute(stream, from, to);
        stream.wait();
        p.constants.emplace(DNNL_ARG_WEIGHTS, to);
    }

    static dnnl::memory::desc channelsLast(const Ints& sizes)
    {
        return {sizes, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nhwc};
    }

    std::unique_ptr<Primitive> made(const dnnl::primitive& primitive, const dnnl::primitive_desc_base& pd,
                                    Ints outSizes)
    {
        auto p = std::make_unique<Primitive>();
        p->primitive = primitive;
        p->src = pd.src_desc(0);
        p->dst = pd.dst_desc(0);
        p->scratch = pd.scratchpad_desc();
        p->outSizes = std::move(outSizes);
        return p;
    }

    // A direct convolution on channels-last tensors, or with `winograd` Winograd's on oneDNN's
    // blocked layout (none where oneDNN has no such kernel for it), then the eltwise post-op
    // `postOp` (undef: none); with `nextKernel` too, on the Winograd kernel oneDNN offers after
    // its first (none where it offers no other).
    std::unique_ptr<Primitive> convolution(const Ints& sizes, const at::Tensor& weight, const at::Tensor& bias,
                                           const Ints& stride, const Ints& padding, const Ints& dilation,
                                           int64_t groups, dnnl::algorithm postOp, bool winograd, bool nextKernel = false)
    {
        using dims = dnnl::memory::dims;
        using tag = dnnl::memory::format_tag;
        const auto f32 = dnnl::memory::data_type::f32;
        const int64_t o = weight.size(0), i = weight.size(1), kh = weight.size(2), kw = weight.size(3);
        Ints out{sizes[0], o, 0, 0};
        dims gaps;  // oneDNN counts a dilation as the gaps between kernel taps
        for (int d = 0; d < 2; ++d) {
            const int64_t k = d == 0 ? kh : kw;
            out[2 + d] = (sizes[2 + d] + 2 * padding[d] - ((k - 1) * dilation[d] + 1)) / stride[d] + 1;
            gaps.push_back(dilation[d] - 1);
        }
        // Grouped weights are [groups, O / groups, I / groups, kH, kW] to oneDNN.
        const dims weightDims = groups == 1 ? dims{o, i, kh, kw} : dims{groups, o / groups, i, kh, kw};
        const dnnl::memory::desc anyWeights(weightDims, f32, tag::any);  // the primitive picks the layout
        const dnnl::memory::desc biasDesc({o}, f32, tag::a);
        const auto kind = dnnl::prop_kind::forward_inference;
        const auto alg = winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
        const dnnl::memory::desc src = winograd ? dnnl::memory::desc(sizes, f32, tag::any) : channelsLast(sizes);
        const dnnl::memory::desc dst = winograd ? dnnl::memory::desc(out, f32, tag::any) : channelsLast(out);
        const dnnl::convolution_forward::desc desc =
            bias.defined()
                ? dnnl::convolution_forward::desc(kind, alg, src, anyWeights, biasDesc, dst, stride, gaps, padding, padding)
                : dnnl::convolution_forward::desc(kind, alg, src, anyWeights, dst, stride, gaps, padding, padding);
        const dnnl::primitive_attr attr = attributes(postOp);
        dnnl::convolution_forward::primitive_desc pd;
        try {
            pd = dnnl::convolution_forward::primitive_desc(desc, attr, engine_);
        } catch (const dnnl::error&) {
            if (winograd)
                return nullptr;
            throw;
        }
        if (nextKernel && !nextImplementation(pd))
            return nullptr;
        auto p = made(dnnl::convolution_forward(pd), pd, out);
        if (winograd) {
            p->plainSrc = channelsLast(sizes);
            p->plainDst = channelsLast(out);
            p->into = dnnl::reorder(dnnl::reorder::primitive_desc(engine_, p->plainSrc, engine_, p->src));
            p->outOf = dnnl::reorder(dnnl::reorder::primitive_desc(engine_, p->dst, engine_, p->plainDst));
        }
        // The weights, reordered once from [O, I, kH, kW] into the layout the primitive picked.
        packWeights(*p, pd.weights_desc(), {weightDims, f32, groups == 1 ? tag::oihw : tag::goihw}, weight);
        if (bias.defined()) {
            p->bias = bias.contiguous();
            p->constants.emplace(DNNL_ARG_BIAS, dnnl::memory(biasDesc, engine_, p->bias.data_ptr()));
        }
        return p;
    }

    // rows x K times weight [K, N], plus bias where defined, then GELU where gelu: oneDNN's matmul,
    // the weights reordered once into the layout it picks, the bias and the GELU in its kernel.
    std::unique_ptr<Primitive> product(int64_t rows, const at::Tensor& weight, const at::Tensor& bias, bool gelu)
    {
        using tag = dnnl::memory::format_tag;
        const auto f32 = dnnl::memory::data_type::f32;
        const int64_t k = weight.size(0), n = weight.size(1);
        const dnnl::memory::desc src({rows, k}, f32, tag::ab), dst({rows, n}, f32, tag::ab);
        const dnnl::memory::desc anyWeights({k, n}, f32, tag::any), biasDesc({1, n}, f32, tag::ab);
        const dnnl::matmul::desc desc = bias.defined() ? dnnl::matmul::desc(src, anyWeights, biasDesc, dst)
                                                       : dnnl::matmul::desc(src, anyWeights, dst);
        const dnnl::matmul::primitive_desc pd(
            desc, attributes(gelu ? dnnl::algorithm::eltwise_gelu_erf : dnnl::algorithm::undef), engine_);
        auto p = made(dnnl::matmul(pd), pd, {rows, n});
        p->source = weight;
        packWeights(*p, pd.weights_desc(), {{k, n}, f32, weight.strides().vec()}, weight);
        if (bias.defined()) {
            p->bias = bias.reshape({-1}).contiguous();
            p->constants.emplace(DNNL_ARG_BIAS, dnnl::memory(biasDesc, engine_, p->bias.data_ptr()));
        }
        return p;
    }

    // [batch, M, K] times [batch, K, N], both as their strides lie, into a contiguous [batch, M, N]:
    // oneDNN's matmul; none where oneDNN has no kernel for those strides.
    std::unique_ptr<Primitive> batchedProduct(const at::Tensor& a, const at::Tensor& b)
    {
        const auto f32 = dnnl::memory::data_type::f32;
        const int64_t batch = a.size(0), m = a.size(1), n = b.size(2);
        try {
            const dnnl::matmul::desc desc({a.sizes().vec(), f32, a.strides().vec()}, {b.sizes().vec(), f32, b.strides().vec()},
                                          {{batch, m, n}, f32, dnnl::memory::format_tag::abc});
            const dnnl::matmul::primitive_desc pd(desc, attributes(dnnl::algorithm::undef), engine_);
            auto p = made(dnnl::matmul(pd), pd, {batch, m, n});
            p->operand = pd.weights_desc();
            return p;
        } catch (const dnnl::error&) {
            return nullptr;
        }
    }

    // Layer normalization of rows of weight.numel() values: scale and shift (where bias is
    // defined) applied in the kernel.
    std::unique_ptr<Primitive> normalization(int64_t rows, const at::Tensor& weight, const at::Tensor& bias, float eps)
    {
        using tag = dnnl::memory::format_tag;
        const auto f32 = dnnl::memory::data_type::f32;
        const int64_t n = weight.numel();
        const dnnl::memory::desc data({rows, n}, f32, tag::ab), values({n}, f32, tag::a);
        const auto flags = bias.defined() ? dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift
                                          : dnnl::normalization_flags::use_scale;
        const dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data, eps, flags);
        const dnnl::layer_normalization_forward::primitive_desc pd(desc, attributes(dnnl::algorithm::undef), engine_);
        auto p = made(dnnl::layer_normalization_forward(pd), pd, {rows, n});
        p->source = weight.reshape({-1}).contiguous();
        p->constants.emplace(DNNL_ARG_SCALE, dnnl::memory(values, engine_, p->source.data_ptr()));
        if (bias.defined()) {
            p->bias = bias.reshape({-1}).contiguous();
            p->constants.emplace(DNNL_ARG_SHIFT, dnnl::memory(values, engine_, p->bias.data_ptr()));
        }
        return p;
    }

    // at::max_pool2d without the indices; ceil mode is padding on the right that no window reads.
    std::unique_ptr<Primitive> maxPooling(const Ints& sizes, const Ints& kernel, const Ints& stride,
                                          const Ints& padding, const Ints& dilation, bool ceil)
    {
        Ints out{sizes[0], sizes[1], 0, 0}, right(2), gaps(2);
        for (int d = 0; d < 2; ++d) {
            const int64_t n = pooledSize(sizes[2 + d], kernel[d], stride[d], padding[d], dilation[d], ceil);
            out[2 + d] = n;
            right[d] = std::max(padding[d], (n - 1) * stride[d] + (kernel[d] - 1) * dilation[d] + 1 - sizes[2 + d] -
                                                padding[d]);
            gaps[d] = dilation[d] - 1;
        }
        const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max,
                                                  channelsLast(sizes), channelsLast(out), stride, kernel, gaps,
                                                  padding, right);
        const dnnl::pooling_v2_forward::primitive_desc pd(desc, attributes(dnnl::algorithm::undef), engine_);
        return made(dnnl::pooling_v2_forward(pd), pd, out);
    }

    dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
    std::mutex mutex_;
    std::map<Key, std::unique_ptr<Trial>> trials_;        // convolutions
    std::map<Key, std::unique_ptr<Primitive>> poolings_;
    std::map<Key, std::unique_ptr<Primitive>> products_;  // linear layers
    std::map<Key, std::unique_ptr<Primitive>> batchedProducts_;  // products of two activations (none: at::matmul)
    std::map<Key, std::unique_ptr<Primitive>> normalizations_;   // layer normalizations
    std::map<Key, std::unique_ptr<Primitive>> softmaxes_;        // along the last axis
};

at::Tensor conv2d(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias, const Ints& stride,
                  const Ints& padding, const Ints& dilation, int64_t groups, Activation activation = Activation::None)
{
    const at::Tensor x = input.contiguous(at::MemoryFormat::ChannelsLast);
    if (reluAfter(activation, x))
        return conv2dByAten(x, weight, bias, stride, padding, dilation, groups, activation);
    const dnnl::algorithm postOp = postOpOf(activation);
    const at::Tensor y = OneDnn::instance().conv2d(x, weight, bias, stride, padding, dilation, groups, postOp);
    return postOp == dnnl::algorithm::undef ? activatedInPlace(y, activation) : y;  // SiLU as a pass
}

bool kernelTrialsSettled() { return OneDnn::instance().trialsSettled(); }

// at::matmul(x, weight) for a constant float weight [K, N], plus bias (N values) where defined,
// then at::gelu where gelu: a linear layer as one oneDNN matmul primitive made once for each row
// count and intra-op thread count, as the runtime runs them. x's leading dimensions are its rows.
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {}, bool gelu = false)
{
    if (x.scalar_type() == at::kFloat && x.numel() > 0)
        return OneDnn::instance().linear(x.contiguous(), weight, bias, gelu);
    return linearByAten(x, weight, bias, gelu);
}

// at::matmul of two float tensors of the same batch dimensions as one oneDNN matmul primitive made
// once for each size and intra-op thread count (the runtime's products of two activations, which
// ATen hands to a BLAS one matrix at a time); anything else through at::matmul.
at::Tensor batchedMatmul(const at::Tensor& a, const at::Tensor& b)
{
    if (a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat || a.dim() < 2 || a.dim() != b.dim() ||
        a.sizes().slice(0, a.dim() - 2) != b.sizes().slice(0, b.dim() - 2) || a.numel() == 0 || b.numel() == 0)
        return at::matmul(a, b);
    return OneDnn::instance().batchedMatmul(a, b);
}

// Whether layerNorm runs oneDNN's kernel: floats, weights of the normalized shape.
bool normalizedByOneDnn(const at::Tensor& x, const Ints& shape, const at::Tensor& weight, const at::Tensor& bias)
{
    auto floats = [&](const at::Tensor& t) { return t.scalar_type() == at::kFloat && t.sizes() == at::IntArrayRef(shape); };
    return x.scalar_type() == at::kFloat && x.numel() > 0 && floats(weight) && (!bias.defined() || floats(bias));
}

// at::layer_norm over x's last dimensions, `shape`, as oneDNN's layer normalization made once
// for each size and intra-op thread count where x, weight and bias are floats of that shape.
at::Tensor layerNorm(const at::Tensor& x, const Ints& shape, const at::Tensor& weight, const at::Tensor& bias, double eps)
{
    if (normalizedByOneDnn(x, shape, weight, bias))
        return OneDnn::instance().layerNorm(x.contiguous(), weight, bias, eps);
    return at::layer_norm(x, shape, weight, bias, eps);
}

// at::softmax along dim; along the last one of a float tensor oneDNN's, made once for each size
// and intra-op thread count, unless x holds a NaN or +inf (its largest value, one pass): oneDNN
// makes 0 of a row's numbers beside one, where ATen and the runtime make the row NaN.
at::Tensor softmaxAlong(const at::Tensor& x, int64_t dim)
{
    if (x.scalar_type() == at::kFloat && x.numel() > 0 && x.dim() > 0 && (dim == -1 || dim == x.dim() - 1)) {
        const double top = x.max().item<double>();
        if (!std::isnan(top) && top != std::numeric_limits<double>::infinity())
            return OneDnn::instance().softmax(x.contiguous());
    }
    return at::softmax(x, dim);
}

// at::max_pool2d of a value that is finite whenever the model's inputs are: a float
// channels-last one runs oneDNN's max pooling, which can drop a NaN that at::max_pool2d carries
// to the output. So during a NonFiniteRun an input holding a NaN (its sum is NaN) takes
// at::max_pool2d, as does any other input.
at::Tensor max_pool2d(const at::Tensor& x, const Ints& kernel, const Ints& stride, const Ints& padding,
                      const Ints& dilation, bool ceil)
{
    if (x.scalar_type() != at::kFloat || x.dim() != 4 || !x.is_contiguous(at::MemoryFormat::ChannelsLast) ||
        (nonFiniteRuns.load() > 0 && std::isnan(x.sum().item<float>())))
        return at::max_pool2d(x, kernel, stride, padding, dilation, ceil);
    return OneDnn::instance().maxPool2d(x, kernel, stride, padding, dilation, ceil);
}
#else
// Without oneDNN's headers (libdnnl-dev), max_pool2d is at::max_pool2d and conv2d runs oneDNN through libtorch: on weights
// reordered once into its own layout (libtorch's mkldnn_prepacked operators, which
// torch.jit.freeze uses), with Relu fused. oneDNN fixes the layout for the input size and the
// thread split for the calling thread's intra-op threads when the weights are packed, so they
// are packed once per (weights, size, threads) and kept; each call still makes the primitive's
// description anew.
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
                  const Ints& padding, const Ints& dilation, int64_t groups, Activation activation = Activation::None)
{
    const at::Tensor x = input.contiguous(at::MemoryFormat::ChannelsLast);
    PackedConvolutions& packs = PackedConvolutions::instance();
    if (!packs.available() || reluAfter(activation, x))
        return conv2dByAten(x, weight, bias, stride, padding, dilation, groups, activation);
    const bool relu = activation == Activation::Relu;  // the packed convolution fuses Relu only
    at::Tensor y = packs.run(x, weight, bias, stride, padding, dilation, groups, relu);
    return relu ? y : activatedInPlace(y, activation);
}

at::Tensor max_pool2d(const at::Tensor& x, const Ints& kernel, const Ints& stride, const Ints& padding,
                      const Ints& dilation, bool ceil)
{
    return at::max_pool2d(x, kernel, stride, padding, dilation, ceil);
}

bool kernelTrialsSettled() { return true; }  // no trials without oneDNN

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {}, bool gelu = false)
{
    return linearByAten(x, weight, bias, gelu);
}

at::Tensor batchedMatmul(const at::Tensor& a, const at::Tensor& b) { return at::matmul(a, b); }

at::Tensor layerNorm(const at::Tensor& x, const Ints& shape, const at::Tensor& weight, const at::Tensor& bias, double eps)
{
    return at::layer_norm(x, shape, weight, bias, eps);
}

at::Tensor softmaxAlong(const at::Tensor& x, int64_t dim) { return at::softmax(x, dim); }
#endif
