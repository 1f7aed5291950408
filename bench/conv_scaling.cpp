// One oneDNN convolution alone (channels-last float, ReLU post-op, the direct
// algorithm, as the runtime makes it), timed on one thread and on P: how far a
// kernel scales by itself, apart from everything a model run adds. Each thread
// count is timed with the data where a micro-benchmark leaves it (the same input,
// output and weights every run, in cache) and where a model run leaves it (the
// input just written by all threads in row bands, the output last written by the
// other core, the weights pushed out of cache by a 64 MiB sweep). `bands`: each
// thread runs a one-thread primitive on its share of the output rows instead of
// one primitive on all threads (the runtime's row bands, kernels_convolution.cpp).
// ALGORITHM `winograd` or `winograd-next`: oneDNN's first Winograd kernel for the shape, or
// the one it offers next (F(2x2) and F(4x4) for one image), on its blocked layout (nChw16c,
// as the runtime's Winograd convolutions); their third column is `shares` instead of bands:
// each thread a one-thread primitive on its share of the output channels (whole blocks of
// 16, as even as they divide) over the whole input. Prints figures; asserts nothing.
//
//   ./build/bin/bench_conv_scaling IN OUT SIZE KERNEL GROUPS [THREADS=2] [RUNS=600] [ALGORITHM=direct]
//   e.g. 480 480 14 5 480 (a depthwise 5x5 of MnasNet), 256 1024 14 1 1 (a ResNet 1x1),
//   160 320 14 3 1 2 600 winograd-next (GoogLeNet's inception4e 3x3 on F(4x4))
#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

enum class Algorithm { Direct, Winograd, WinogradNext };

struct Shape {
    int in, out, size, kernel, groups;
    Algorithm algorithm = Algorithm::Direct;
};

const dnnl::engine& engine()
{
    static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

// A primitive on output rows [r0, r1) of the image (all of them: one primitive).
struct Part {
    dnnl::convolution_forward primitive;
    memory src, weights, bias, dst, scratchpad;  // the scratchpad its own, as the runtime gives one a thread
    std::string kernel;                            // oneDNN's name for it
};

// The primitive for output rows [r0, r1) and output channels [c0, c1): a row band (direct,
// channels-last) or a channel share (Winograd, blocked: whole 16-channel blocks, contiguous
// in the output for one image).
Part makePart(const Shape& s, float* x, float* y, int r0, int r1, int c0, int c1)
{
    const int pad = s.kernel / 2, first = r0 - pad, last = r1 - 1 - pad + s.kernel;
    const int i0 = std::max(first, 0), i1 = std::min(last, s.size), out = c1 - c0;
    const bool winograd = s.algorithm != Algorithm::Direct;
    const Tag layout = winograd ? Tag::nChw16c : Tag::nhwc;
    const memory::desc src({1, s.in, i1 - i0, s.size}, memory::data_type::f32, layout);
    const memory::desc dst({1, out, r1 - r0, s.size}, memory::data_type::f32, layout);
    const memory::dims w = s.groups == 1 ? memory::dims{out, s.in, s.kernel, s.kernel}
                                         : memory::dims{s.groups, out / s.groups, s.in / s.groups, s.kernel, s.kernel};
    const memory::desc weights(w, memory::data_type::f32, Tag::any), bias({out}, memory::data_type::f32, Tag::a);
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    // Kept alive while the primitive descriptor's iterator may read it again (next_impl).
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                            winograd ? dnnl::algorithm::convolution_winograd
                                                     : dnnl::algorithm::convolution_direct,
                                            src, weights, bias, dst, {1, 1}, {i0 - first, pad}, {last - i1, pad});
    dnnl::convolution_forward::primitive_desc pd(d, attr, engine());
    if (s.algorithm == Algorithm::WinogradNext) {
        const std::string firstKernel = pd.impl_info_str();
        bool found = false;
        while (!found && pd.next_impl())
            found = firstKernel != pd.impl_info_str();
        if (!found)
            throw std::runtime_error("oneDNN offers no other Winograd kernel than " + firstKernel);
    }
    // For one image a range of whole blocks starts at its first block in either layout's row
    // (channels-last: the row's channels; blocked: the block's plane).
    const size_t dstOffset = winograd ? size_t(c0) * s.size * s.size + size_t(r0) * s.size * 16
                                      : size_t(r0) * s.size * s.out + size_t(c0);
    const size_t srcOffset = winograd ? size_t(i0) * s.size * 16 : size_t(i0) * s.size * s.in;
    Part p{dnnl::convolution_forward(pd), memory(src, engine(), x + srcOffset), memory(pd.weights_desc(), engine()),
           memory(pd.bias_desc(), engine()), memory(dst, engine(), y + dstOffset),
           memory(pd.scratchpad_desc(), engine()), pd.impl_info_str()};
    float* wp = static_cast<float*>(p.weights.get_data_handle());
    for (size_t i = 0; i < pd.weights_desc().get_size() / sizeof(float); ++i)
        wp[i] = 0.01f * float(int(i % 17) - 8);
    std::fill_n(static_cast<float*>(p.bias.get_data_handle()), out, 0.f);
    return p;
}

// `bands`: a primitive a thread, on its rows (direct) or its output channels (Winograd).
// `kernel`, where not null, gets oneDNN's name for the first primitive.
double medianMicroseconds(const Shape& s, int threads, bool asInModel, bool bands, int runs, std::string* kernel = nullptr)
{
    std::vector<float> x(size_t(s.size) * s.size * s.in, 0.5f), y(size_t(s.size) * s.size * s.out, 0.f);
    std::vector<float> sweep(asInModel ? (16u << 20) : 0);
    std::vector<Part> parts;
    if (bands) {
        omp_set_num_threads(1);  // each band's primitive is made for one thread
        const int blocks = s.out / 16;
        for (int t = 0; t < threads; ++t)
            parts.push_back(s.algorithm == Algorithm::Direct
                                ? makePart(s, x.data(), y.data(), s.size * t / threads, s.size * (t + 1) / threads, 0, s.out)
                                : makePart(s, x.data(), y.data(), 0, s.size, 16 * (blocks * t / threads),
                                           16 * (blocks * (t + 1) / threads)));
    } else {
        omp_set_num_threads(threads);
        parts.push_back(makePart(s, x.data(), y.data(), 0, s.size, 0, s.out));
    }
    if (kernel)
        *kernel = parts[0].kernel;
    omp_set_num_threads(threads);
    const size_t rowFloats = size_t(s.size) * s.in;
    dnnl::stream stream(engine());
    std::vector<double> times;
    for (int run = 0; run < runs; ++run) {
        if (asInModel) {
            for (size_t i = 0; i < sweep.size(); i += 16)
                sweep[i] += 1.f;
#pragma omp parallel num_threads(std::max(threads, 2))
            {
                const int t = omp_get_thread_num();
                if (t == 1)  // the other core wrote the output last
                    std::fill(y.begin(), y.end(), 0.f);
                if (t < threads) {  // the input, written in row bands by the run's threads
                    const size_t r0 = size_t(s.size) * t / threads, r1 = size_t(s.size) * (t + 1) / threads;
                    for (size_t i = r0 * rowFloats; i < r1 * rowFloats; ++i)
                        x[i] = 0.01f * float((i + size_t(run)) % 13);
                }
            }
        }
        const auto start = std::chrono::steady_clock::now();
        if (!bands) {
            Part& p = parts[0];
            p.primitive.execute(stream, {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_WEIGHTS, p.weights},
                                         {DNNL_ARG_BIAS, p.bias}, {DNNL_ARG_DST, p.dst}, {DNNL_ARG_SCRATCHPAD, p.scratchpad}});
        } else {
#pragma omp parallel num_threads(threads)
            {
                Part& p = parts[size_t(omp_get_thread_num())];
                thread_local dnnl::stream bandStream(engine());  // as the runtime keeps one a thread
                p.primitive.execute(bandStream, {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_WEIGHTS, p.weights},
                                                 {DNNL_ARG_BIAS, p.bias}, {DNNL_ARG_DST, p.dst}, {DNNL_ARG_SCRATCHPAD, p.scratchpad}});
            }
        }
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    times.erase(times.begin(), times.begin() + runs / 5);  // the first fifth warms up
    std::nth_element(times.begin(), times.begin() + long(times.size() / 2), times.end());
    return times[times.size() / 2] * 1e6;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 6) {
        std::fprintf(stderr, "usage: %s IN OUT SIZE KERNEL GROUPS [THREADS=2] [RUNS=600] [direct|winograd|winograd-next]\n",
                     argv[0]);
        return 2;
    }
    Shape s{std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5])};
    const int threads = argc > 6 ? std::atoi(argv[6]) : 2, runs = argc > 7 ? std::atoi(argv[7]) : 600;
    const std::string algorithm = argc > 8 ? argv[8] : "direct";
    if (algorithm == "winograd")
        s.algorithm = Algorithm::Winograd;
    else if (algorithm == "winograd-next")
        s.algorithm = Algorithm::WinogradNext;
    else if (algorithm != "direct") {
        std::fprintf(stderr, "%s: the algorithm is direct, winograd or winograd-next, not '%s'\n", argv[0],
                     algorithm.c_str());
        return 2;
    }
    const bool winograd = s.algorithm != Algorithm::Direct;
    if (s.in <= 0 || s.out <= 0 || s.size <= 0 || s.kernel <= 0 || s.kernel % 2 == 0 || s.groups <= 0 ||
        s.in % s.groups || s.out % s.groups || threads < 2 || runs < 10 ||
        (winograd && (s.kernel != 3 || s.groups != 1 || s.in % 16 || s.out % 16 || s.out / 16 < threads))) {
        std::fprintf(stderr, "%s: channels divisible by the groups, an odd kernel, 2 or more threads, 10 or more runs; "
                     "Winograd: 3x3, no groups, channels in blocks of 16, an output block a thread at least\n",
                     argv[0]);
        return 2;
    }
    std::string kernel;
    try {
        medianMicroseconds(s, 1, false, false, 10, &kernel);
    } catch (const std::exception& e) {  // dnnl::error too
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    std::printf("convolution %d -> %d channels, %dx%d, kernel %d, %d groups, oneDNN's %s; median of %d runs (the "
                "first fifth untimed), us\n",
                s.in, s.out, s.size, s.size, s.kernel, s.groups, kernel.c_str(), runs);
    std::printf("%-34s %10s %10s %10s %10s\n", "data", "1 thread", (std::to_string(threads) + " threads").c_str(),
                winograd ? "shares" : "bands", "scaling");
    for (bool asInModel : {false, true}) {
        const double one = medianMicroseconds(s, 1, asInModel, false, runs);
        const double many = medianMicroseconds(s, threads, asInModel, false, runs);
        const double bands = winograd || s.size >= 2 * threads ? medianMicroseconds(s, threads, asInModel, true, runs) : 0.0;
        std::printf("%-34s %10.1f %10.1f %10.1f %9.2fx\n",
                    asInModel ? "as a model run leaves it" : "in cache, as the last run left it", one, many, bands,
                    one / many);
    }
    return 0;
}
