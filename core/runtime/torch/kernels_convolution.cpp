// Convolutions: Conv, Ramiel's FusedConv, ConvTranspose; oneDNN primitives made once per
// input shape and thread count, with the kernels' trial (direct, Winograd) inside the model.
#include "core/runtime/torch/kernel.h"

#include "core/runtime/torch/fused_activation.h"
#include "core/runtime/torch/onednn_support.h"

#include "core/runtime/torch/activation_loops.h"
#include "core/runtime/torch/channels_last.h"
#include "core/runtime/torch/fresh_tensor.h"
#include "core/runtime/torch/intra_op_threads.h"
#include "core/runtime/torch/matrix_vector.h"
#include "core/runtime/torch/parallel_chunks.h"
#include "core/runtime/torch/winograd.h"

#include "core/ir/fused_ops.h"
#include "core/ir/window.h"
#include "core/runtime/runtime.h"
#include "core/util/environment.h"
#include "core/util/error.h"

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#if RAMIEL_HAVE_DNNL
#include <dnnl.hpp>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

namespace ramiel {

namespace {

// `w` ([O, I, kH, kW]) with channels-last strides, also where a dimension is 1.
// mkldnn_prepacked::conv2d_prepack packs the weights for a channels-last input
// only when the weight's suggest_memory_format() says channels-last; packed
// from contiguous weights they were in the layout of the blocked-input
// primitive, and conv2d_run reordered them into the channels-last primitive's
// layout on every run (10-25 us a convolution). contiguous(ChannelsLast) is not
// enough for a 1x1 kernel: both layouts agree there, so it keeps the
// contiguous strides and the tensor still reads as contiguous.
at::Tensor channelsLastStrided(const at::Tensor& w)
{
    const int64_t o = w.size(0), i = w.size(1), kh = w.size(2), kw = w.size(3);
    at::Tensor out = at::empty_strided({o, i, kh, kw}, {i * kh * kw, 1, kw * i, i}, w.options());
    out.copy_(w);
    return out;
}

// oneDNN convolution on weights reordered once into its own blocked layout
// (libtorch's mkldnn_prepacked ops, what torch.jit.freeze uses), optionally with
// Relu fused into the primitive. A packing is made per input shape (oneDNN
// picks the layout for it) and per intra-op thread count of the calling thread
// (oneDNN's JIT convolutions fix their thread split when the primitive is
// made: one packed under 1 thread stays single-threaded on 2, one packed under
// 2 splits work a 1-thread worker then runs serially), and kept; copies of a
// node on workers with the same threads share it. Without these ops (a
// libtorch built without oneDNN) it is not used.
class PackedConvolution {
public:
    static bool available()
    {
        static const bool ok = at::hasMKLDNN() &&
                               c10::Dispatcher::singleton().findSchema({"mkldnn_prepacked::conv2d_prepack", ""}) &&
                               c10::Dispatcher::singleton().findSchema({"mkldnn_prepacked::conv2d_run", ""});
        return ok;
    }

    PackedConvolution(at::Tensor weight, at::Tensor bias, int64_t groups, bool relu)
        : weight_(std::move(weight)), bias_(std::move(bias)), groups_(groups), relu_(relu),
          run_(c10::Dispatcher::singleton().findSchemaOrThrow("mkldnn_prepacked::conv2d_run", ""))
    {
    }

    // x: float, 4-D, channels-last; pads symmetric (begin = end).
    at::Tensor operator()(const at::Tensor& x, const Window& win)
    {
        torch::jit::Stack stack{x, packingFor(x.sizes().vec(), at::get_num_threads(), win)};
        run_.callBoxed(&stack);
        return stack.at(0).toTensor();
    }

private:
    c10::IValue packingFor(const std::vector<int64_t>& sizes, int threads, const Window& win)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& [key, packed] : packings_)
            if (key.first == sizes && key.second == threads)
                return packed;
        torch::jit::Stack stack{weight_, bias_.defined() ? c10::IValue(bias_) : c10::IValue(), win.strides,
                                win.padBegin, win.dilations, groups_, sizes, std::string(relu_ ? "relu" : "none")};
        c10::Dispatcher::singleton().findSchemaOrThrow("mkldnn_prepacked::conv2d_prepack", "").callBoxed(&stack);
        packings_.emplace_back(std::make_pair(sizes, threads), stack.at(0));
        return stack.at(0);
    }

    at::Tensor weight_, bias_;
    int64_t groups_;
    bool relu_;
    c10::OperatorHandle run_;
    std::mutex mutex_;
    std::vector<std::pair<std::pair<std::vector<int64_t>, int>, c10::IValue>> packings_;  // by (sizes, threads)
};

#if RAMIEL_HAVE_DNNL
// Whether a convolution on `threads` intra-op threads runs as row bands: each thread a
// one-thread primitive on its share of the output rows, reading input rows that its share
// of the convolution before mostly wrote, in its own core's cache. oneDNN's grouped kernel
// splits by groups first, so with few groups each thread reads its channels of every
// pixel, half of them from the other core: inside a model, regnet_x_400mf's 2-group 3x3
// (32 channels, 112x112, stride 2) took as long on two threads as on one. Measured on
// 1x1 -> grouped -> 1x1 chains (docs/runtime.md): faster with 16-channel groups (whole
// AVX-512 blocks) when strided or with at most 2 groups a thread; no faster with more
// groups at stride 1 or with 8-channel groups; slower on 7 rows (uneven bands).
bool wantsRowBands(int64_t batch, int64_t outRows, int64_t groups, int64_t inPerGroup, int64_t outPerGroup,
                   int64_t stride, int threads)
{
    return threads > 1 && batch == 1 && groups > 1 && inPerGroup % 16 == 0 && outPerGroup % 16 == 0 &&
           outRows >= 4 * threads && (stride > 1 || groups <= 2 * threads);
}

// Moves a primitive descriptor on to the next kernel oneDNN offers for its operation, whose
// descriptor must still live (the iterator reads it again); false where there is none. oneDNN
// 2.6 takes the first from its primitive cache where a primitive of the same operation was
// made before, and its iterator then starts over, offering that kernel again: so the next is
// the first whose name differs.
bool nextImplementation(dnnl::convolution_forward::primitive_desc& pd)
{
    const std::string first = pd.impl_info_str();
    while (pd.next_impl())
        if (first != pd.impl_info_str())
            return true;
    return false;
}

// Whether a Winograd convolution of a batch runs image by image: a one-image primitive on
// one thread, the images shared out evenly among the intra-op threads. oneDNN 2.6 has its
// F(2x2, 3x3) kernel for one image only and gives a batch its F(4x4, 3x3) one, whose
// transformed weights (6x6 tiles) are 2.25x the size. Alone (AMD EPYC host,
// docs/runtime.md), one thread, image by image took 0.64x of the batch kernel's time on
// ResNet's 256 -> 256 at 14x14 with 2 images and 0.87x with 4, 0.78-0.84x on GoogLeNet's
// 160 -> 320 and 128 -> 256; on 56x56 outputs 1.09-1.11x (not taken). Uneven shares are
// not taken either: the thread with an image more waits about as long as they save
// (resnet18 at 3 images on 2 threads, its 14x14 ones 4.7-5.3 ms a run either way).
bool wantsImageByImage(int64_t batch, int64_t outPixels, int threads)
{
    return batch > 1 && batch % threads == 0 && outPixels < 28 * 28;
}

// Whether a Winograd convolution of one image runs in row bands, one per intra-op thread,
// each a one-thread primitive that reorders its own rows in and out, of either layout
// (runWinogradBands): where its weights, transformed into 6x6 tiles as oneDNN 2.6 gives a
// band (F(4x4, 3x3)), are no larger than its input and output, which each core then reads
// and writes only in its own rows. Alone, two threads (AMD EPYC host, docs/runtime.md), against oneDNN's
// own split with the reorders around it: GoogLeNet's 64 -> 192 at 56x56 0.77x hot and
// 0.83x with the caches flushed; 128 -> 192 at 28x28, whose weights are 3.5 times its
// activations, 0.77x hot but 1.34x flushed, and inside the model slower, as every one
// whose weights are the larger (each band reads them all).
bool wantsWinogradBands(int64_t batch, int64_t in, int64_t out, int64_t outRows, int64_t outCols, int threads)
{
    return threads > 1 && batch == 1 && outRows >= 4 * threads && out * in * 36 <= (in + out) * outRows * outCols;
}

// Whether a grouped convolution also tries oneDNN's blocked layout (nChw16c), its input
// reordered in and its output out (OneDnnConvolution's trial keeps the faster). With
// groups of 16 channels oneDNN 2.6 has only its older grouped kernel
// (`jit:avx512_core`), which reads a channels-last input group by group, each pixel's
// channels of a group a cache line apart from the next pixel's by the whole width:
// alone, one thread, ResNeXt-101's 32 groups of 16 (512 channels) at 56x56 stride 2 took
// 4.8 ms channels-last and 1.7 ms blocked, reorders included; at 28x28 1.06 -> 0.72 ms.
// Narrower or smaller ones gained less than their reorders cost (RegNet's 160 and 400
// channels, 14x14 outputs), depthwise ones run the same kernel (brdgmm) either way
// (docs/runtime.md).
bool wantsBlockedGroups(int64_t groups, int64_t in, int64_t outPerGroup, int64_t outPixels)
{
    return groups >= 16 && in >= 256 && in / groups >= 16 && outPerGroup >= 16 && outPixels >= 28 * 28;
}

// Whether a convolution of a graph's image runs in row bands, each thread copying
// its band's input rows channels-last itself (OneDnnConvolution::image): two or
// more threads, one image, at least 4 output rows a thread, and a band's copy and
// output within 1.5 MiB, so both stay in the core's cache. Fitted on the first
// convolutions of 7 models on two threads (docs/runtime.md): 3x3 ones on 224x224
// images (a band's 0.7-1.1 MiB) 8-12 % faster or (efficientnet_b0) unchanged;
// ResNet's and GoogLeNet's 7x7 (1.9 MiB) unchanged, Inception's 3x3 on 299x299
// (1.95 MiB) 15 % slower.
bool wantsImageBands(const std::vector<int64_t>& in, const std::vector<int64_t>& out, int64_t kh, int64_t stride,
                     int64_t dilation, int threads)
{
    if (threads < 2 || in[0] != 1 || out[2] < 4 * threads)
        return false;
    const int64_t rows = (out[2] + threads - 1) / threads, inRows = (rows - 1) * stride + (kh - 1) * dilation + 1;
    const int64_t bytes = (inRows * in[3] * in[1] + rows * out[3] * out[1]) * int64_t(sizeof(float));
    return bytes <= (3 << 20) / 2;
}

// A 2-D float convolution on a channels-last input as one oneDNN primitive,
// made once per input shape and intra-op thread count of the calling thread
// (oneDNN fixes its layout for the shape and its thread split for the threads
// when the primitive is made) and kept, with the weights reordered once into
// the layout the primitive picked; its activation is a post-op, or for SiLU a
// pass of each thread over its share of the output while it is still in cache
// (FusedActivation::isPostOp). The same libdnnl.so.2 as libtorch's, called
// without libtorch's mkldnn_prepacked::conv2d_run, which on every run made the
// primitive descriptor anew (ideep's compute), found the primitive in oneDNN's
// cache and wrapped the tensors: 20-30 us a convolution, most of a small one's
// time and none of it parallel. Copies of a node on workers with the same
// threads share a primitive; each thread runs it with arguments of its own
// (ThreadArguments).
class OneDnnConvolution {
public:
    // `sum`: a summand of the output's shape is added before the activation: it
    // becomes the output (in place, or copied where something else holds it),
    // which the primitive then accumulates into (a `sum` post-op; a `binary` add post-op reading the summand where it lies
    // made oneDNN leave its brgemm kernels for slower ones, docs/runtime.md).
    // `blockedOutput`: a Winograd primitive leaves its output in its blocked
    // layout (winograd.h) for readers that are all Winograd convolutions, or a
    // blocked stage's for the stage's readers. `blockedStage`: the convolution is
    // part of a blocked stage and runs on the blocked layout, no trial.
    OneDnnConvolution(at::Tensor weight, at::Tensor bias, int64_t groups, FusedActivation act, bool sum,
                      bool blockedOutput, bool blockedStage)
        : weight_(std::move(weight)), bias_(std::move(bias)), groups_(groups), act_(act), sum_(sum),
          blockedOutput_(blockedOutput && act.isPostOp()), blockedStage_(blockedStage && act.isPostOp())
    {
    }

    // x: float, 4-D, channels-last, or blocked (winograd.h); pads as the window has
    // them (asymmetric ones too). z: the summand where the convolution has one,
    // float, either layout; an undefined result when z is not of the output's
    // sizes (the caller then adds it itself).
    at::Tensor operator()(const at::Tensor& x, const Window& win, const at::Tensor& z = at::Tensor())
    {
        const std::vector<int64_t> sizes = logicalSizes(x);
        if (sum_ && (!z.defined() || z.scalar_type() != at::kFloat || logicalSizes(z) != outputSizes(sizes, win)))
            return at::Tensor();
        Slot& slot = slotFor(sizes, at::get_num_threads(), win, false);
        at::Tensor y = slot.settled.load(std::memory_order_acquire) ? run(*slot.primitive, x, z) : runTrial(slot, x, z);
        if (!act_.isPostOp())
            act_.applyTo(y);
        return y;
    }

    // x: a graph's image, planar float [N, C <= 4, H, W] (isPlanarImage). Where the
    // output is made in row bands (one image, two or more threads), each thread copies
    // the input rows its band reads into a channels-last buffer of its own and
    // convolves them there, so the copy is read in the cache of the core that wrote it;
    // otherwise the whole image is made channels-last first.
    at::Tensor image(const at::Tensor& x, const Window& win)
    {
        const std::shared_ptr<const Primitive> p = slotFor(x.sizes().vec(), at::get_num_threads(), win, true).primitive;
        at::Tensor y;
        if (p->bands.empty()) {
            y = runDirect(*p, asChannelsLast(x), at::Tensor());
        } else {
            y = emptyFloat(p->outSizes, at::MemoryFormat::ChannelsLast);
            runImageBands(*p, x, y);
        }
        if (!act_.isPostOp())
            act_.applyTo(y);
        return y;
    }

private:
    struct Primitive;
    struct Slot;
    enum class Layout { ChannelsLast, Winograd, BlockedDirect };

    static at::Tensor plain(const at::Tensor& t) { return isBlocked(t) ? unblocked(t) : t; }

    // One run of p on a channels-last or blocked input (and summand); the output before
    // any activation the primitive does not apply. (Tensors passed on by reference: a
    // summand's use count tells whether it may become the output.)
    at::Tensor run(const Primitive& p, const at::Tensor& x, const at::Tensor& z) const
    {
        return p.blocked                      ? runBlocked(p, x, z)
               : isBlocked(x) || isBlocked(z) ? runDirect(p, plain(x), plain(z))
                                              : runDirect(p, x, z);
    }

    // A run while the slot's kernels take turns (Slot): candidate k on every count-th call,
    // timed in place inside the model, where its weights and input arrive as they will later
    // (on one host Winograd's 14x14 convolutions tied the direct kernel when rerun back to
    // back, and took 1.2-2.1x its time inside GoogLeNet). Only a thread's calls after its
    // first kKernelTrialCalls / 2 are timed (an executor's first runs are slow for reasons of
    // their own: Slot::threadCalls), and the lowest time of each candidate decides once one
    // thread has made kKernelTrialCalls calls.
    at::Tensor runTrial(Slot& slot, const at::Tensor& x, const at::Tensor& z)
    {
        int call = 0, own = 0;
        std::shared_ptr<const Primitive> candidate;
        {
            std::lock_guard<std::mutex> lock(slot.trial);
            if (slot.settled.load(std::memory_order_relaxed))
                return run(*slot.primitive, x, z);
            call = slot.calls++;
            own = slot.callsOf(std::this_thread::get_id())++;
            candidate = slot.candidates[(call + slot.phase) % slot.count];
        }
        const auto start = std::chrono::steady_clock::now();
        at::Tensor y = run(*candidate, x, z);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::lock_guard<std::mutex> lock(slot.trial);
        if (slot.settled.load(std::memory_order_relaxed))
            return y;
        double& best = slot.best[(call + slot.phase) % slot.count];
        if (own >= kKernelTrialCalls / 2)
            best = std::min(best, seconds);
        // Threads that come and go, a few calls each, end it too: on the fastest timed, or on
        // the rule's kernel (the first) where none was.
        if (own + 1 == kKernelTrialCalls || slot.calls >= kKernelTrialCalls * Slot::kThreadsAtMost) {
            const int fastest = int(std::min_element(slot.best, slot.best + slot.count) - slot.best);
            slot.primitive = slot.candidates[fastest];
            for (auto& c : slot.candidates)
                c.reset();
            slot.settled.store(true, std::memory_order_release);
        }
        return y;
    }

    // One run on channels-last tensors; returns the output before any activation the
    // primitive does not apply.
    at::Tensor runDirect(const Primitive& p, const at::Tensor& x, const at::Tensor& z) const
    {
        at::Tensor y;
        if (sum_) {
            // A channels-last summand that no other tensor holds (the serial executor hands
            // a value's last reader the value itself) becomes the output, accumulated into
            // in place; otherwise it is copied into a fresh one.
            if (heldOnlyHere(z) && z.is_contiguous(at::MemoryFormat::ChannelsLast))
                y = z;
            else
                y = emptyFloat(p.outSizes, at::MemoryFormat::ChannelsLast)
                        .copy_(z.contiguous(at::MemoryFormat::ChannelsLast));
        } else {
            y = emptyFloat(p.outSizes, at::MemoryFormat::ChannelsLast);
        }
        if (p.bands.empty())
            p.arguments.execute(p.primitive, p.pd, x, y, p.weights, bias_.defined() ? &p.bias : nullptr);
        else
            runBands(p, x, y);
        return y;
    }

    // Each intra-op thread runs its band of the output rows (ATen's parallel_for hands
    // thread t chunk t when there are as many chunks as threads).
    void runBands(const Primitive& p, const at::Tensor& x, at::Tensor& y) const
    {
        const float* in = x.data_ptr<float>();
        float* out = y.data_ptr<float>();
        const int64_t rowFloats = x.size(3) * x.size(1);  // channels-last
        at::parallel_for(0, int64_t(p.bands.size()), 1, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                const Band& b = *p.bands[size_t(i)];
                b.arguments.execute(b.primitive, b.pd, in + b.srcRow * rowFloats, out + b.dstOffset, b.weights,
                                    bias_.defined() ? &p.bias : nullptr);
            }
        });
    }

    void runImageBands(const Primitive& p, const at::Tensor& x, at::Tensor& y) const
    {
        const float* in = x.data_ptr<float>();
        float* out = y.data_ptr<float>();
        const int64_t c = x.size(1), h = x.size(2), w = x.size(3);
        at::parallel_for(0, int64_t(p.bands.size()), 1, [&](int64_t begin, int64_t end) {
            thread_local std::vector<float> rows;  // a band's input rows; kept for the next run
            for (int64_t i = begin; i < end; ++i) {
                const Band& b = *p.bands[size_t(i)];
                rows.resize(size_t(b.srcRows * w * c));
                interleaveImageRows(in, c, h, w, b.srcRow, b.srcRows, rows.data());
                b.arguments.execute(b.primitive, b.pd, rows.data(), out + b.dstOffset, b.weights,
                                    bias_.defined() ? &p.bias : nullptr);
            }
        });
    }

    // A Winograd convolution runs on oneDNN's blocked layout, not on channels-last:
    // the input (and a summand) reordered in, the output out, except where they
    // are held blocked already (winograd.h: nChw16c, what oneDNN picks with AVX-512).
    struct Blocked {
        dnnl::memory::desc plainSrc, plainDst;  // nhwc
        dnnl::reorder in, sumIn, out;
        bool srcIs16c, dstIs16c;  // the primitive's layouts are winograd.h's
    };

    // A Winograd band's reorders: its input rows (with the halo) and its summand's rows into
    // its blocked buffers, its output rows out, each from or to the whole tensor in either
    // layout (channels-last, or winograd.h's blocked one where the channels fill its blocks).
    struct RowsReorder {
        dnnl::memory::desc rows;  // the band's rows inside the whole tensor
        dnnl::reorder reorder;
    };
    struct BandReorders {
        std::array<RowsReorder, 2> in, sum, out;  // [0]: channels-last, [1]: blocked
    };

    // One intra-op thread's rows of the output as a one-thread primitive (wantsRowBands,
    // wantsImageBands, wantsWinogradBands); also a batch's one-image primitive
    // (wantsImageByImage).
    struct Band {
        int64_t srcRow = 0, srcRows = 0;  // the input rows it reads
        int64_t dstRow = 0, dstRows = 0;  // the output rows it writes
        int64_t dstOffset = 0;            // floats from the start of a channels-last output
        dnnl::convolution_forward::primitive_desc pd;
        dnnl::convolution_forward primitive;
        at::Tensor weightBuffer;
        dnnl::memory weights;
        ThreadArguments arguments;
        std::optional<BandReorders> reorders;  // a Winograd band's
    };

    struct Primitive {
        dnnl::convolution_forward::primitive_desc pd;  // none where the convolution runs in bands
        dnnl::convolution_forward primitive;
        at::Tensor weightBuffer;
        dnnl::memory weights, bias;
        std::vector<int64_t> outSizes;
        std::optional<Blocked> blocked;
        std::vector<std::unique_ptr<Band>> bands;
        std::unique_ptr<Band> perImage;  // a blocked batch's one-image, one-thread primitive (wantsImageByImage)
        ThreadArguments arguments;
    };

    // One run of a Winograd primitive: reorders around it, each on the calling thread's
    // intra-op threads, where the input, summand or output are not held blocked.
    // Returns the output blocked (blockedOutput) or channels-last, as runDirect.
    at::Tensor runBlocked(const Primitive& p, const at::Tensor& x, const at::Tensor& z) const
    {
        if (!p.bands.empty())
            return runWinogradBands(p, x, z);
        const Blocked& b = *p.blocked;
        auto bytes = [&](const dnnl::memory::desc& d) { return at::empty({int64_t(d.get_size())}, x.options().dtype(at::kByte)); };
        at::Tensor src = b.srcIs16c && isBlocked(x) ? x : bytes(p.pd.src_desc());
        if (!src.is_same(x))
            reorder(b.in, b.plainSrc, plain(x).contiguous(at::MemoryFormat::ChannelsLast).data_ptr(), p.pd.src_desc(),
                    src.data_ptr());
        at::Tensor dst;
        if (sum_ && b.dstIs16c && isBlocked(z)) {
            // A blocked summand that no other tensor holds becomes the output, as in runDirect.
            dst = heldOnlyHere(z) ? z : z.clone();
        } else {
            dst = b.dstIs16c ? emptyBlocked(p.outSizes) : bytes(p.pd.dst_desc());
            if (sum_)
                reorder(b.sumIn, b.plainDst, plain(z).contiguous(at::MemoryFormat::ChannelsLast).data_ptr(),
                        p.pd.dst_desc(), dst.data_ptr());
        }
        if (p.perImage)
            runImageByImage(p, src, dst);
        else
            p.arguments.execute(p.primitive, p.pd, src, dst, p.weights, bias_.defined() ? &p.bias : nullptr);
        if (blockedOutput_ && b.dstIs16c)
            return dst;
        at::Tensor y = emptyFloat(p.outSizes, at::MemoryFormat::ChannelsLast);
        reorder(b.out, p.pd.dst_desc(), dst.data_ptr(), b.plainDst, y.data_ptr());
        return y;
    }

    // Each intra-op thread its band of output rows through a one-thread Winograd primitive:
    // its input rows (and its summand's) reordered into blocked buffers of its own, its
    // output rows out of one into their place, so each core reorders what it convolves.
    // Returns the output blocked (blockedOutput) or channels-last, as runBlocked.
    at::Tensor runWinogradBands(const Primitive& p, const at::Tensor& x, const at::Tensor& z) const
    {
        const int xIn = isBlocked(x) ? 1 : 0, zIn = sum_ && isBlocked(z) ? 1 : 0;
        const at::Tensor xs = xIn ? x : x.contiguous(at::MemoryFormat::ChannelsLast);
        const at::Tensor zs = !sum_ || zIn ? z : z.contiguous(at::MemoryFormat::ChannelsLast);
        const int yOut = blockedOutput_ && p.blocked->dstIs16c ? 1 : 0;
        at::Tensor y = yOut ? emptyBlocked(p.outSizes) : emptyFloat(p.outSizes, at::MemoryFormat::ChannelsLast);
        at::parallel_for(0, int64_t(p.bands.size()), 1, [&](int64_t begin, int64_t end) {
            thread_local at::Tensor src, dst;  // kept for the next run
            const auto fit = [](at::Tensor& t, size_t bytes) {
                if (!t.defined() || size_t(t.numel()) < bytes)
                    t = at::empty({int64_t(bytes)}, at::TensorOptions().dtype(at::kByte));
            };
            for (int64_t i = begin; i < end; ++i) {
                const Band& b = *p.bands[size_t(i)];
                const BandReorders& r = *b.reorders;
                fit(src, b.pd.src_desc().get_size());
                fit(dst, b.pd.dst_desc().get_size());
                reorder(r.in[xIn].reorder, r.in[xIn].rows, xs.data_ptr(), b.pd.src_desc(), src.data_ptr());
                if (sum_)
                    reorder(r.sum[zIn].reorder, r.sum[zIn].rows, zs.data_ptr(), b.pd.dst_desc(), dst.data_ptr());
                b.arguments.execute(b.primitive, b.pd, src.data_ptr(), dst.data_ptr(), b.weights,
                                    bias_.defined() ? &p.bias : nullptr);
                reorder(r.out[yOut].reorder, b.pd.dst_desc(), dst.data_ptr(), r.out[yOut].rows, y.data_ptr());
            }
        });
        return y;
    }

    // The images of a blocked batch shared out among the intra-op threads, each image
    // (a contiguous part of the batch in nChw16c) run by the one-image primitive.
    void runImageByImage(const Primitive& p, const at::Tensor& src, at::Tensor& dst) const
    {
        const Band& one = *p.perImage;
        const auto* in = static_cast<const char*>(src.data_ptr());
        auto* out = static_cast<char*>(dst.data_ptr());
        const size_t inBytes = one.pd.src_desc().get_size(), outBytes = one.pd.dst_desc().get_size();
        at::parallel_for(0, p.outSizes[0], 1, [&](int64_t begin, int64_t end) {
            for (int64_t n = begin; n < end; ++n)
                one.arguments.execute(one.primitive, one.pd, in + n * inBytes, out + n * outBytes, one.weights,
                                      bias_.defined() ? &p.bias : nullptr);
        });
    }

    static void reorder(const dnnl::reorder& r, const dnnl::memory::desc& from, void* fromData,
                        const dnnl::memory::desc& to, void* toData)
    {
        dnnl::memory a(from, dnnlEngine(), fromData), b(to, dnnlEngine(), toData);
        thread_local dnnl::stream stream(dnnlEngine());
        r.execute(stream, a, b);
        stream.wait();
    }

    std::vector<int64_t> outputSizes(const std::vector<int64_t>& sizes, const Window& win) const
    {
        std::vector<int64_t> out{sizes[0], weight_.size(0), 0, 0};
        for (int i = 0; i < 2; ++i) {
            const int64_t k = weight_.size(2 + i);
            out[2 + i] = (sizes[2 + i] + win.padBegin[i] + win.padEnd[i] - ((k - 1) * win.dilations[i] + 1)) /
                             win.strides[i] + 1;
        }
        return out;
    }

    // The slot for an input shape, thread count and window, its kernels made on first
    // use. Where oneDNN has a Winograd kernel for a convolution that wantsWinograd's rule
    // admits, it and the direct kernel take turns in the first runs and the faster stays
    // (runTrial): which wins depends on the machine as much as on the shape (docs/runtime.md).
    // So do the blocked and the channels-last direct kernel where wantsBlockedGroups admits one.
    Slot& slotFor(const std::vector<int64_t>& sizes, int threads, const Window& win, bool image)
    {
        std::vector<int64_t> window = win.strides;
        for (const auto* v : {&win.padBegin, &win.padEnd, &win.dilations})
            window.insert(window.end(), v->begin(), v->end());
        std::shared_ptr<Slot> slot;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (const auto& s : slots_)
                if (s->sizes == sizes && s->threads == threads && s->window == window && s->image == image)
                    slot = s;
            if (!slot) {
                slot = std::make_shared<Slot>();
                std::tie(slot->sizes, slot->window, slot->threads, slot->image) = std::tie(sizes, window, threads, image);
                slots_.push_back(slot);
            }
        }
        std::call_once(slot->made, [&] {
            const std::vector<int64_t> out = outputSizes(sizes, win);
            const bool winograd = winograd_ != WinogradChoice::Never &&
                                  wantsWinograd(weight_.size(1), out[1], weight_.size(2), weight_.size(3),
                                                out[2] * out[3], groups_, win.strides, win.dilations);
            const bool blockedDirect =
                !image && ((groupedLayout_ != GroupedLayoutChoice::ChannelsLast &&
                            wantsBlockedGroups(groups_, sizes[1], out[1] / groups_, out[2] * out[3])) ||
                           blockedStage_);
            const Layout layout = winograd        ? Layout::Winograd
                                  : blockedDirect ? Layout::BlockedDirect
                                                  : Layout::ChannelsLast;
            std::shared_ptr<const Primitive> p = makePrimitive(sizes, threads, win, image, layout);
            const bool measured = winograd ? winograd_ == WinogradChoice::Measured
                                           : groupedLayout_ == GroupedLayoutChoice::Measured && !blockedStage_;
            if (p->blocked && !image && measured) {
                static std::atomic<int> slots{0};
                slot->phase = slots++ % 2;
                slot->candidates[0] = p;
                slot->candidates[1] = makePrimitive(sizes, threads, win, image, Layout::ChannelsLast);
                slot->count = 2;
                // Image by image is not always the faster Winograd: one thread, two images
                // (AMD EPYC host), 96 -> 208 at 14x14 took 1.36 ms so and 0.48 as a batch
                // (direct 0.71); 128 -> 256 0.65 and 0.80 (docs/runtime.md). So the batch's
                // own Winograd primitive takes its turns too.
                if (p->perImage) {
                    auto batch = makePrimitive(sizes, threads, win, image, Layout::Winograd, false);
                    if (batch->blocked)
                        slot->candidates[slot->count++] = std::move(batch);
                } else if (p->bands.empty()) {
                    // Nor is oneDNN's first Winograd kernel for one whole image, its F(2x2, 3x3),
                    // always the faster: alone, one thread (Zen 4 host), its F(4x4, 3x3) took
                    // 0.70x of its time on ResNet's 64 -> 64 at 56x56 and 0.44x on GoogLeNet's
                    // 96 -> 208 at 14x14, but 1.07x on ResNet's 256 -> 256 at 14x14
                    // (docs/runtime.md). So the next kernel oneDNN offers takes its turns too.
                    if (auto next = makePrimitive(sizes, threads, win, image, Layout::Winograd, true, true))
                        slot->candidates[slot->count++] = std::move(next);
                }
            } else {
                slot->primitive = p;
                slot->settled.store(true, std::memory_order_release);
            }
        });
        return *slot;
    }

    // A primitive as the rules say, on oneDNN's blocked layout where `layout` asks for it
    // and oneDNN has a kernel for the shape there; `byImage` false: a Winograd one for the
    // whole batch where wantsImageByImage would run it image by image. `nextKernel`: the
    // whole input's Winograd primitive on the kernel oneDNN offers after its first, neither
    // image by image nor in bands; null where it offers none.
    std::shared_ptr<const Primitive> makePrimitive(const std::vector<int64_t>& sizes, int threads, const Window& win,
                                                   bool image, Layout layout, bool byImage = true,
                                                   bool nextKernel = false) const
    {
        using dims = dnnl::memory::dims;
        using tag = dnnl::memory::format_tag;
        const auto f32 = dnnl::memory::data_type::f32;
        const int64_t o = weight_.size(0), kh = weight_.size(2), kw = weight_.size(3);
        const std::vector<int64_t> out = outputSizes(sizes, win);
        const int64_t i = weight_.size(1);  // input channels per group
        const dims weightDims = groups_ == 1 ? dims{o, i, kh, kw} : dims{groups_, o / groups_, i, kh, kw};
        const dnnl::memory::desc src(dims(sizes.begin(), sizes.end()), f32, tag::nhwc);
        const dnnl::memory::desc dst(dims(out.begin(), out.end()), f32, tag::nhwc);
        const dnnl::memory::desc anyWeights(weightDims, f32, tag::any);
        const dims strides(win.strides.begin(), win.strides.end());
        dims dilations;
        for (int64_t d : win.dilations)
            dilations.push_back(d - 1);  // oneDNN counts the gaps
        const dims padL(win.padBegin.begin(), win.padBegin.end()), padR(win.padEnd.begin(), win.padEnd.end());
        const auto kind = dnnl::prop_kind::forward_inference;
        // This convolution's descriptor for an algorithm, source, destination and pads.
        auto convDesc = [&](dnnl::algorithm alg, const dnnl::memory::desc& from, const dnnl::memory::desc& to,
                            const dims& begin, const dims& end) {
            return bias_.defined() ? dnnl::convolution_forward::desc(kind, alg, from, anyWeights,
                                                                     dnnl::memory::desc({o}, f32, tag::a), to,
                                                                     strides, dilations, begin, end)
                                   : dnnl::convolution_forward::desc(kind, alg, from, anyWeights, to, strides,
                                                                     dilations, begin, end);
        };
        const auto direct = dnnl::algorithm::convolution_direct;
        const dnnl::convolution_forward::desc desc = convDesc(direct, src, dst, padL, padR);
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        dnnl::post_ops ops;
        if (sum_)
            ops.append_sum(1.0f);
        if (act_.kind == FusedActivation::Relu)
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        else if (act_.kind == FusedActivation::LeakyRelu)
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, act_.a, 0.0f);
        else if (act_.kind == FusedActivation::Clip)
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, act_.a, act_.b);
        else if (act_.kind == FusedActivation::Sigmoid)
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f);
        else if (act_.kind == FusedActivation::HardSwish)
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_hardswish, 0.0f, 0.0f);  // x * relu6(x + 3) / 6
        attr.set_post_ops(ops);
        auto p = std::make_shared<Primitive>();
        p->outSizes = out;
        if (layout != Layout::ChannelsLast) {
            // A blocked stage's layout is winograd.h's; elsewhere oneDNN picks.
            const tag blocked = blockedStage_ && layout == Layout::BlockedDirect ? tag::nChw16c : tag::any;
            const dnnl::memory::desc anySrc(src.dims(), f32, blocked), anyDst(dst.dims(), f32, blocked);
            const auto alg = layout == Layout::Winograd ? dnnl::algorithm::convolution_winograd : direct;
            try {
                // The descriptor outlives the primitive descriptor's iterator, which reads it
                // again for every next kernel.
                const dnnl::convolution_forward::desc blockedDesc = convDesc(alg, anySrc, anyDst, padL, padR);
                p->pd = dnnl::convolution_forward::primitive_desc(blockedDesc, attr, dnnlEngine());
                if (nextKernel && !nextImplementation(p->pd))
                    return nullptr;
                const dnnl::engine& eng = dnnlEngine();
                auto is16c = [&](const dnnl::memory::desc& d, const std::vector<int64_t>& s) {
                    return s[1] % 16 == 0 && d == dnnl::memory::desc(dims(s.begin(), s.end()), f32, tag::nChw16c);
                };
                p->blocked = Blocked{src, dst, dnnl::reorder(dnnl::reorder::primitive_desc(eng, src, eng, p->pd.src_desc())),
                                     dnnl::reorder(dnnl::reorder::primitive_desc(eng, dst, eng, p->pd.dst_desc())),
                                     dnnl::reorder(dnnl::reorder::primitive_desc(eng, p->pd.dst_desc(), eng, dst)),
                                     is16c(p->pd.src_desc(), sizes), is16c(p->pd.dst_desc(), out)};
                if (p->pd.src_desc() == src && p->pd.dst_desc() == dst)
                    p->blocked.reset();  // oneDNN's kernel for it is the channels-last one
            } catch (const dnnl::error&) {  // none for this shape or these post-ops: the direct kernel
                p->blocked.reset();
            }
            if (nextKernel && !p->blocked)
                return nullptr;
        }
        // The weights, reordered once from [O, I, kH, kW] (goihw for groups) into the primitive's layout.
        const dnnl::memory::desc plainWeights(weightDims, f32, groups_ == 1 ? tag::oihw : tag::goihw);
        if (layout == Layout::Winograd && byImage && !nextKernel && p->blocked && p->blocked->srcIs16c &&
            p->blocked->dstIs16c && wantsImageByImage(sizes[0], out[2] * out[3], threads)) {
            try {
                IntraOpThreadsScope oneThread(1);
                const dnnl::memory::desc imageSrc(dims{1, sizes[1], sizes[2], sizes[3]}, f32, tag::nChw16c);
                const dnnl::memory::desc imageDst(dims{1, o, out[2], out[3]}, f32, tag::nChw16c);
                auto one = std::make_unique<Band>();
                one->pd = dnnl::convolution_forward::primitive_desc(
                    convDesc(dnnl::algorithm::convolution_winograd, imageSrc, imageDst, padL, padR), attr,
                    dnnlEngine());
                one->primitive = dnnl::convolution_forward(one->pd);
                std::tie(one->weightBuffer, one->weights) = reorderedWeights(one->pd.weights_desc(), plainWeights, weight_);
                p->perImage = std::move(one);
            } catch (const dnnl::error&) {  // none for one image: the batch's primitive
                p->perImage.reset();
            }
        }
        // Thread t's band of the output rows as a one-thread primitive of `alg` in `layout`, on
        // the input rows it reads (pads only where the band meets the image's edge), its
        // weights shared with the band before it where their layouts agree.
        auto addBand = [&](int t, dnnl::algorithm alg, tag bandLayout) -> Band& {
            const int64_t rows = out[2], k = (kh - 1) * win.dilations[0] + 1;
            const int64_t r0 = rows * t / threads, r1 = rows * (t + 1) / threads;
            const int64_t first = r0 * win.strides[0] - win.padBegin[0];
            const int64_t last = (r1 - 1) * win.strides[0] - win.padBegin[0] + k;
            const int64_t i0 = std::max<int64_t>(first, 0), i1 = std::min(last, sizes[2]);
            auto b = std::make_unique<Band>();
            b->srcRow = i0;
            b->srcRows = i1 - i0;
            b->dstRow = r0;
            b->dstRows = r1 - r0;
            b->dstOffset = r0 * out[3] * o;
            const dnnl::memory::desc bandSrc(dims{1, sizes[1], i1 - i0, sizes[3]}, f32, bandLayout);
            const dnnl::memory::desc bandDst(dims{1, o, r1 - r0, out[3]}, f32, bandLayout);
            b->pd = dnnl::convolution_forward::primitive_desc(
                convDesc(alg, bandSrc, bandDst, dims{i0 - first, padL[1]}, dims{last - i1, padR[1]}), attr,
                dnnlEngine());
            b->primitive = dnnl::convolution_forward(b->pd);
            const Band* top = p->bands.empty() ? nullptr : p->bands.front().get();
            if (top && b->pd.weights_desc() == top->pd.weights_desc())
                std::tie(b->weightBuffer, b->weights) = std::tie(top->weightBuffer, top->weights);
            else
                std::tie(b->weightBuffer, b->weights) = reorderedWeights(b->pd.weights_desc(), plainWeights, weight_);
            p->bands.push_back(std::move(b));
            return *p->bands.back();
        };
        if (layout == Layout::Winograd && p->blocked && !p->perImage && !nextKernel &&
            wantsWinogradBands(sizes[0], sizes[1], o, out[2], out[3], threads)) {
            try {
                IntraOpThreadsScope oneThread(1);
                const dnnl::engine& eng = dnnlEngine();
                // A band's rows inside a whole tensor of either layout, and the reorder between
                // them and the band's own blocked buffer (none where the channels do not fill
                // the blocks: such a value is never held blocked).
                auto rowsOf = [&](const dims& whole, int64_t row, int64_t rows, const dnnl::memory::desc& band,
                                  bool intoBand) {
                    std::array<RowsReorder, 2> r;
                    for (int blocked = 0; blocked < 2; ++blocked) {
                        if (blocked && whole[1] % 16 != 0)
                            continue;
                        r[size_t(blocked)].rows = dnnl::memory::desc(whole, f32, blocked ? tag::nChw16c : tag::nhwc)
                                                      .submemory_desc(dims{1, whole[1], rows, whole[3]}, dims{0, 0, row, 0});
                        const dnnl::memory::desc& from = intoBand ? r[size_t(blocked)].rows : band;
                        const dnnl::memory::desc& to = intoBand ? band : r[size_t(blocked)].rows;
                        r[size_t(blocked)].reorder = dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to));
                    }
                    return r;
                };
                const dims whole(sizes.begin(), sizes.end()), wholeOut(out.begin(), out.end());
                for (int t = 0; t < threads; ++t) {
                    Band& b = addBand(t, dnnl::algorithm::convolution_winograd, tag::nChw16c);
                    BandReorders r;
                    r.in = rowsOf(whole, b.srcRow, b.srcRows, b.pd.src_desc(), true);
                    if (sum_)
                        r.sum = rowsOf(wholeOut, b.dstRow, b.dstRows, b.pd.dst_desc(), true);
                    r.out = rowsOf(wholeOut, b.dstRow, b.dstRows, b.pd.dst_desc(), false);
                    b.reorders = std::move(r);
                }
            } catch (const dnnl::error&) {  // a band oneDNN has no Winograd kernel for: the whole image
                p->bands.clear();
            }
        }
        const bool imageBands = image && wantsImageBands(sizes, out, kh, win.strides[0], win.dilations[0], threads);
        if (!p->blocked &&
            (imageBands || wantsRowBands(sizes[0], out[2], groups_, i, o / groups_, win.strides[0], threads))) {
            try {
                IntraOpThreadsScope oneThread(1);
                for (int t = 0; t < threads; ++t)
                    addBand(t, direct, tag::nhwc);
            } catch (const dnnl::error&) {  // a band's shape oneDNN will not take: the one primitive
                p->bands.clear();
            }
        }
        if (p->bands.empty() && !p->perImage) {
            if (!p->blocked)
                p->pd = dnnl::convolution_forward::primitive_desc(desc, attr, dnnlEngine());
            p->primitive = dnnl::convolution_forward(p->pd);
            std::tie(p->weightBuffer, p->weights) = reorderedWeights(p->pd.weights_desc(), plainWeights, weight_);
        }
        if (bias_.defined())
            p->bias = dnnl::memory(dnnl::memory::desc({o}, f32, tag::a), dnnlEngine(), bias_.data_ptr());
        return p;
    }

    // The key a primitive is kept under, and the primitive, made once; or, until
    // `settled`, the two candidates that take turns (runTrial).
    struct Slot {
        std::vector<int64_t> sizes, window;  // input sizes; strides, pads, dilations
        int threads = 1;
        bool image = false;
        std::once_flag made;
        std::atomic<bool> settled{false};
        std::shared_ptr<const Primitive> primitive;  // set once settled
        std::mutex trial;
        // Blocked (Winograd or direct), channels-last, and where the Winograd one runs image
        // by image, the batch's Winograd one, or where it runs whole, oneDNN's next Winograd
        // kernel for it.
        std::shared_ptr<const Primitive> candidates[3];
        int count = 0;  // of candidates
        int phase = 0;  // the candidate of the first call: neighbours differ, so blocked
                        // values meet readers of both kinds in the trial runs
        int calls = 0;  // by every thread
        // Each calling thread's calls so far. Two copies of GoogLeNet at batch 2 on two workers:
        // Winograd's 56x56 convolution took 15-60 ms in each thread's first five calls (the
        // direct kernel 12-13 ms from the start) and 5.6-6.2 ms from its seventh on, as once
        // settled; timed from the third call, the direct kernel won the trial in 3 processes
        // of 4 (cause not pinned down: until the worker's allocation pattern replays, the
        // blocked input, output and reorder come from the heap; glibc's mmap and trim
        // thresholds set high did not change it).
        std::vector<std::pair<std::thread::id, int>> threadCalls;
        static constexpr int kThreadsAtMost = 64;
        int& callsOf(std::thread::id thread)
        {
            for (auto& [t, n] : threadCalls)
                if (t == thread)
                    return n;
            return threadCalls.emplace_back(thread, 0).second;
        }
        double best[3] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::infinity()};
    };

    at::Tensor weight_, bias_;  // [O, I, kH, kW] contiguous; [O] contiguous
    int64_t groups_;
    FusedActivation act_;
    bool sum_, blockedOutput_, blockedStage_;
    WinogradChoice winograd_ = winogradChoice();
    GroupedLayoutChoice groupedLayout_ = groupedLayoutChoice();
    std::mutex mutex_;
    std::vector<std::shared_ptr<Slot>> slots_;
};
#endif

Kernel convolutionKernel(const KernelContext& c, FusedActivation act);

// A 3-D convolution whose window spans one plane (1 x kh x kw: the spatial half of a
// factorized video convolution, R(2+1)D's and S3D's) or one axis (kd x 1 x 1: the temporal
// half) is a 2-D convolution: over the N·D planes as images, or over each sample as an
// image of D rows of H·W pixels, with a 1-column window. Run so, it takes the 2-D path
// (oneDNN primitives made once, channels-last, Winograd where it wins), where ATen's 3-D
// convolution makes its primitive anew each call. The views are free when the input is laid
// out channels-last (what the 2-D path leaves, seen as 5-D) or holds one sample; else one copy.
// Empty where the convolution is not of that kind.
std::optional<Kernel> factorizedConvolution(const KernelContext& c, FusedActivation act)
{
    const Node& n = c.node;
    if (c.inputRank(0) != 5 || !c.isConstant(1) || c.constants[1].dim() != 5 ||
        c.constants[1].scalar_type() != at::kFloat || (c.hasInput(2) && !c.isConstant(2)) ||
        (n.attrString("auto_pad", "NOTSET") != "NOTSET" && n.attrString("auto_pad", "NOTSET") != "VALID"))
        return std::nullopt;
    const at::Tensor& w = c.constants[1];
    auto kernel = n.attrInts("kernel_shape"), strides = n.attrInts("strides"), pads = n.attrInts("pads"),
         dilations = n.attrInts("dilations");
    if (kernel.empty())
        kernel = {w.size(2), w.size(3), w.size(4)};
    if (strides.empty())
        strides.assign(3, 1);
    if (dilations.empty())
        dilations.assign(3, 1);
    if (pads.empty() || n.attrString("auto_pad", "NOTSET") == "VALID")
        pads.assign(6, 0);
    if (kernel.size() != 3 || strides.size() != 3 || dilations.size() != 3 || pads.size() != 6 ||
        kernel != std::vector<int64_t>{w.size(2), w.size(3), w.size(4)})
        return std::nullopt;
    const bool planes = kernel[0] == 1 && strides[0] == 1 && pads[0] == 0 && pads[3] == 0;
    const bool depth = kernel[1] == 1 && kernel[2] == 1 && strides[1] == 1 && strides[2] == 1 && pads[1] == 0 &&
                       pads[2] == 0 && pads[4] == 0 && pads[5] == 0;
    if (!planes && !depth)
        return std::nullopt;

    // The same node in two dimensions, on a graph that only tells its input's rank.
    Node flat = n;
    auto drop = [&](const std::string& name) {
        auto& a = flat.attributes;
        a.erase(std::remove_if(a.begin(), a.end(), [&](const Attribute& x) { return x.name == name; }), a.end());
    };
    auto set = [&](const std::string& name, std::vector<int64_t> values) {
        drop(name);
        flat.attributes.push_back(Attribute::ofInts(name, std::move(values)));
    };
    drop("auto_pad");
    if (planes) {
        set("kernel_shape", {kernel[1], kernel[2]});
        set("strides", {strides[1], strides[2]});
        set("pads", {pads[1], pads[2], pads[4], pads[5]});
        set("dilations", {dilations[1], dilations[2]});
    } else {
        set("kernel_shape", {kernel[0], 1});
        set("strides", {strides[0], 1});
        set("pads", {pads[0], 0, pads[3], 0});
        set("dilations", {dilations[0], 1});
    }
    Graph graph;
    for (ValueId& v : flat.inputs)
        if (v != kNone)
            v = graph.addValue(c.graph.value(v).name, TensorType{c.graph.value(v).type.dtype, Shape::of({1, 1, 1, 1})});
    for (ValueId& v : flat.outputs)
        if (v != kNone)
            v = graph.addValue(c.graph.value(v).name);
    KernelContext inner{graph, flat, c.constants};
    inner.constants[1] = planes ? w.squeeze(2).contiguous() : w.reshape({w.size(0), w.size(1), w.size(2), 1});
    const Kernel conv = convolutionKernel(inner, act);

    // [N, C, D, H, W] as 2-D images, and the 2-D output back.
    auto asImages = [planes](const at::Tensor& x) {
        if (x.dim() != 5)
            throw Error(ErrorKind::Runtime, {}, "the input has rank " + std::to_string(x.dim()) + " where 5 is expected");
        return planes ? x.transpose(1, 2).reshape({x.size(0) * x.size(2), x.size(1), x.size(3), x.size(4)})
                      : x.reshape({x.size(0), x.size(1), x.size(2), x.size(3) * x.size(4)});
    };
    return [conv, asImages, planes](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        std::vector<at::Tensor> flatIn = in;
        flatIn[0] = asImages(in[0]);
        if (flatIn.size() > 3 && flatIn[3].defined())  // the summand, shaped as the output
            flatIn[3] = asImages(flatIn[3]);
        std::vector<at::Tensor> flatOut(out.size());
        conv(flatIn, flatOut);
        const at::Tensor& y = flatOut[0];
        const auto x = in[0].sizes();  // N, C, D, H, W
        out[0] = planes ? y.reshape({x[0], x[2], y.size(1), y.size(2), y.size(3)}).transpose(1, 2)
                        : y.reshape({x[0], y.size(1), y.size(2), x[3], x[4]});
    };
}

// Whether a float tensor holds a NaN or an infinity: one pass that writes nothing, each
// intra-op thread over a fixed share of a dense tensor's memory (ATen's test for any other).
bool holdsNonFinite(const at::Tensor& t)
{
    if (!t.defined() || t.scalar_type() != at::kFloat)
        return false;
    if (!t.is_non_overlapping_and_dense())
        return !at::isfinite(t).all().item<bool>();
    const float* data = t.data_ptr<float>();
    std::atomic<bool> found{false};
    at::parallel_for(0, t.numel(), kGrainElements, [&](int64_t begin, int64_t end) {
        if (anyNonFinite(data + begin, end - begin))
            found.store(true, std::memory_order_relaxed);
    });
    return found.load();
}

// A convolution, plus its summand (a FusedConv's fourth input) where it has
// one, then its activation `act` (fused into oneDNN's primitive where a
// prepacked path applies it; otherwise applied in place on the output).
// oneDNN applies Relu and Clip with vmaxps / vminps, which give a number where
// the convolution gave NaN (ONNX's Relu, ATen's, ONNX Runtime's keep it): unless its
// inputs are known finite (KernelContext::finiteRun), a convolution whose weights, bias,
// input or summand hold a NaN or an infinity (inf - inf is NaN) takes ATen's
// convolution and then the activation.
Kernel convolutionKernel(const KernelContext& c, FusedActivation act)
{
    if (auto k = factorizedConvolution(c, act))
        return *k;
    const Node n = c.node;
    const bool sum = c.hasInput(3);
    const int64_t groups = n.attrInt("group", 1);
    auto kernelAttr = n.attrInts("kernel_shape");
    // 2-D convolutions run channels-last: oneDNN's layout, also on one thread,
    // where libtorch 1.13 sends contiguous 1x1 convolutions to a slow im2col
    // (docs/runtime.md has the measurements). Activations stay channels-last
    // between convolutions (pooling, BatchNormalization and Concat have
    // channels-last kernels, channels_last.h); the rest follow the logical layout.
    const bool channelsLast = c.inputRank(0) == 4;
    at::Tensor weight = c.isConstant(1) ? (channelsLast ? c.constants[1].contiguous(at::MemoryFormat::ChannelsLast)
                                                        : c.constants[1].contiguous())
                                        : at::Tensor();
    at::Tensor bias = c.isConstant(2) ? c.constants[2].contiguous() : at::Tensor();
    const bool packable = channelsLast && weight.defined() && weight.scalar_type() == at::kFloat &&
                          weight.dim() == 4 && (!c.hasInput(2) || (bias.defined() && bias.scalar_type() == at::kFloat));
#if RAMIEL_HAVE_DNNL
    std::shared_ptr<OneDnnConvolution> direct;
    if (packable) {
        direct = std::make_shared<OneDnnConvolution>(c.constants[1].contiguous(), bias, groups, act, sum,
                                                     c.blockedOutput, c.blockedStage);
        weight = c.constants[1];  // only its shape is read now: no second copy
    }
#endif
    // A 1x1 convolution of one pixel (squeeze-excite's, on a pooled [1, C, 1, 1]) is a
    // matrix-vector product: Ramiel's (matrix_vector.h), by rows where it reduces the
    // channels, by columns where it expands them, the activation on the calling thread.
    // Through oneDNN's primitive each took 5-8 us, most of it the call.
    const bool onePixel = packable && !sum && groups == 1 && weight.size(2) == 1 && weight.size(3) == 1;
    const bool byColumns = onePixel && weight.size(1) < weight.size(0);
    const at::Tensor pixelWeights =
        !onePixel ? at::Tensor()
                  : byColumns ? packColumns(c.constants[1].reshape({weight.size(0), weight.size(1)}).t())
                              : c.constants[1].contiguous().view({weight.size(0), weight.size(1)});
    std::shared_ptr<PackedConvolution> packed;
    if (packable && !sum && !weight.is_same(c.constants[1]) && PackedConvolution::available() &&
        (act.kind == FusedActivation::None || act.kind == FusedActivation::Relu)) {
        packed = std::make_shared<PackedConvolution>(channelsLastStrided(c.constants[1]), bias, groups,
                                                     act.kind == FusedActivation::Relu);
        weight = c.constants[1];
    }
    const bool postOpDropsNaN = act.kind == FusedActivation::Relu || act.kind == FusedActivation::Clip;
    const bool finiteConstants = c.finiteConstants;
    const std::atomic<bool>* finiteRun = c.finiteRun;
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& w = weight.defined() ? weight : in[1];
        const at::Tensor& b = bias.defined() ? bias : (in.size() > 2 ? in[2] : at::Tensor());
        const bool fusable = !postOpDropsNaN || (finiteRun && finiteRun->load(std::memory_order_relaxed)) ||
                             (finiteConstants && !holdsNonFinite(in[0]) && !(sum && in.size() > 3 && holdsNonFinite(in[3])));
        // The input, and the summand, may come held in a Winograd layout (winograd.h).
        const bool blockedIn = channelsLast && isBlocked(in[0]);
        const std::vector<int64_t> inSizes = channelsLast ? logicalSizes(in[0]) : in[0].sizes().vec();
        Window win = windowOf(n, kernelAttr.empty() ? kernelFromWeight(w) : kernelAttr,
                              std::vector<int64_t>(inSizes.begin() + 2, inSizes.end()));
#if RAMIEL_HAVE_DNNL
        if (direct && fusable && !sum && channelsLast && isPlanarImage(in[0])) {
            out[0] = direct->image(in[0], win);
            return;
        }
#endif
        auto unpadded = [](const std::vector<int64_t>& pads) {
            return std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; });
        };
        if (onePixel && !blockedIn && in[0].scalar_type() == at::kFloat && inSizes.size() == 4 && inSizes[0] == 1 &&
            inSizes[2] == 1 && inSizes[3] == 1 && unpadded(win.padBegin) && unpadded(win.padEnd)) {
            const int64_t o = weight.size(0);
            out[0] = byColumns ? matrixVectorByColumns(pixelWeights, in[0], bias, {1, o, 1, 1})
                               : matrixVectorProduct(pixelWeights, in[0], bias, 1.0f, 1.0f, {1, o, 1, 1});
            act.applyTo(out[0].data_ptr<float>(), o);
            return;
        }
        at::Tensor x = blockedIn ? in[0] : channelsLast && in[0].dim() == 4 ? asChannelsLast(in[0]) : in[0];
        static const at::Tensor none;
        const at::Tensor& z = sum && in.size() > 3 ? in[3] : none;  // a reference: its use count tells
#if RAMIEL_HAVE_DNNL
        if (direct && fusable && x.scalar_type() == at::kFloat && (x.dim() == 4 || blockedIn)) {
            out[0] = (*direct)(x, win, z);  // asymmetric pads included
            if (out[0].defined())
                return;
        }
#endif
        if (blockedIn)
            x = unblocked(x);
        if (!win.symmetric()) {
            x = at::constant_pad_nd(x, win.atenPads(), 0.0);
            if (channelsLast && x.dim() == 4)
                x = x.contiguous(at::MemoryFormat::ChannelsLast);
            win.padBegin.assign(win.padBegin.size(), 0);
            win.padEnd.assign(win.padEnd.size(), 0);
        }
        if (packed && fusable && x.scalar_type() == at::kFloat && x.dim() == 4) {
            out[0] = (*packed)(x, win);
            return;
        }
        // (ATen 1.13 fails on an empty batch with a channels-last weight: a detector's mask head
        // when no box is left.)
        out[0] = at::convolution(x, x.numel() == 0 ? w.contiguous() : w, b, win.strides, win.padBegin, win.dilations, false,
                                 std::vector<int64_t>(win.padBegin.size(), 0), groups);
        if (z.defined())
            out[0] = out[0] + (channelsLast && isBlocked(z) ? unblocked(z) : z);
        act.applyTo(out[0]);
    };
}

Kernel convKernel(const KernelContext& c) { return convolutionKernel(c, {}); }

// Ramiel's FusedConv (core/ir/fused_ops.h): the convolution, then its
// activation, a oneDNN post-op where the convolution runs on oneDNN, else in
// place on the fresh output (no second tensor, no second node).
Kernel fusedConvKernel(const KernelContext& c)
{
    const FusedActivation act = fusedActivation(c);
    if (act.kind == FusedActivation::None && !c.hasInput(3))
        c.unsupported("neither an activation nor a summand");
    return convolutionKernel(c, act);
}

}  // namespace

// Conv, Ramiel's FusedConv, ConvTranspose.
void registerConvolutionKernels(KernelRegistry& r)
{
    r["Conv"] = convKernel;
    r[std::string(kRamielDomain) + ":" + kFusedConv] = fusedConvKernel;
    r["ConvTranspose"] = [](const KernelContext& c) -> Kernel {
        const Node n = c.node;
        const int64_t groups = n.attrInt("group", 1);
        const auto kernelAttr = n.attrInts("kernel_shape");
        const auto outputPaddingAttr = n.attrInts("output_padding");
        const auto outputShape = n.attrInts("output_shape");
        const std::string autoPad = n.attrString("auto_pad", "NOTSET");
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& w = in[1];
            const auto kernel = kernelAttr.empty() ? kernelFromWeight(w) : kernelAttr;
            const size_t d = kernel.size();
            auto strides = n.attrInts("strides"), dil = n.attrInts("dilations"), pads = n.attrInts("pads");
            if (strides.empty()) strides.assign(d, 1);
            if (dil.empty()) dil.assign(d, 1);
            std::vector<int64_t> outPad = outputPaddingAttr.empty() ? std::vector<int64_t>(d, 0) : outputPaddingAttr;
            std::vector<int64_t> begin(d, 0), end(d, 0);
            if (in[0].dim() != int64_t(d) + 2 || strides.size() != d || dil.size() != d || outPad.size() != d ||
                (!outputShape.empty() && outputShape.size() < d))
                throw Error(ErrorKind::Runtime, {}, "the input, weight and window attributes disagree on the number of "
                                                    "spatial dimensions");
            const auto spatial = spatialSizes(in[0]);
            for (size_t i = 0; i < d; ++i) {
                const int64_t full = strides[i] * (spatial[i] - 1) + outPad[i] + (kernel[i] - 1) * dil[i] + 1;
                if (!outputShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
                    const int64_t target = !outputShape.empty() ? outputShape[outputShape.size() - d + i] : spatial[i] * strides[i];
                    int64_t total = full - target;
                    if (total < 0) {  // the output is larger than the full result: extend it at the end
                        outPad[i] += -total;
                        total = 0;
                    }
                    // ONNX's rule: SAME_UPPER pads the larger half at the end, output_shape and
                    // SAME_LOWER at the start (as ONNX Runtime does).
                    begin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
                    end[i] = total - begin[i];
                } else if (pads.size() == 2 * d) {
                    begin[i] = pads[i];
                    end[i] = pads[i + d];
                }
            }
            at::Tensor y = at::convolution(in[0], w, in.size() > 2 ? in[2] : at::Tensor(), strides,
                                           std::vector<int64_t>(d, 0), dil, true, outPad, groups);
            for (size_t i = 0; i < d; ++i) {
                const int64_t size = y.size(int64_t(i) + 2);
                y = y.slice(int64_t(i) + 2, begin[i], size - end[i]);
            }
            out[0] = y.contiguous();
        };
    };
}

}  // namespace ramiel
