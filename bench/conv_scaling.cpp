// One oneDNN convolution alone (channels-last float, ReLU post-op, the direct
// algorithm, as the runtime makes it), timed on one thread and on P: how far a
// kernel scales by itself, apart from everything a model run adds. Each thread
// count is timed with the data where a micro-benchmark leaves it (the same input,
// output and weights every run, in cache) and where a model run leaves it (the
// input just written by all threads in row bands, the output last written by the
// other core, the weights pushed out of cache by a 64 MiB sweep). `bands`: each
// thread runs a one-thread primitive on its share of the output rows instead of
// one primitive on all threads (the runtime's row bands, kernels_convolution.cpp).
// Prints figures; asserts nothing.
//
//   ./build/bin/bench_conv_scaling IN OUT SIZE KERNEL GROUPS [THREADS=2] [RUNS=600]
//   e.g. 480 480 14 5 480 (a depthwise 5x5 of MnasNet), 256 1024 14 1 1 (a ResNet 1x1)
#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

struct Shape {
    int in, out, size, kernel, groups;
};

const dnnl::engine& engine()
{
    static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

// A primitive on output rows [r0, r1) of the image (all of them: one primitive).
struct Part {
    dnnl::convolution_forward primitive;
    memory src, weights, bias, dst;
};

Part makePart(const Shape& s, float* x, float* y, int r0, int r1)
{
    const int pad = s.kernel / 2, first = r0 - pad, last = r1 - 1 - pad + s.kernel;
    const int i0 = std::max(first, 0), i1 = std::min(last, s.size);
    const memory::desc src({1, s.in, i1 - i0, s.size}, memory::data_type::f32, Tag::nhwc);
    const memory::desc dst({1, s.out, r1 - r0, s.size}, memory::data_type::f32, Tag::nhwc);
    const memory::dims w = s.groups == 1 ? memory::dims{s.out, s.in, s.kernel, s.kernel}
                                         : memory::dims{s.groups, s.out / s.groups, s.in / s.groups, s.kernel, s.kernel};
    const memory::desc weights(w, memory::data_type::f32, Tag::any), bias({s.out}, memory::data_type::f32, Tag::a);
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                            src, weights, bias, dst, {1, 1}, {i0 - first, pad}, {last - i1, pad});
    const dnnl::convolution_forward::primitive_desc pd(d, attr, engine());
    Part p{dnnl::convolution_forward(pd), memory(src, engine(), x + size_t(i0) * s.size * s.in),
           memory(pd.weights_desc(), engine()), memory(pd.bias_desc(), engine()),
           memory(dst, engine(), y + size_t(r0) * s.size * s.out)};
    float* wp = static_cast<float*>(p.weights.get_data_handle());
    for (size_t i = 0; i < pd.weights_desc().get_size() / sizeof(float); ++i)
        wp[i] = 0.01f * float(int(i % 17) - 8);
    std::fill_n(static_cast<float*>(p.bias.get_data_handle()), s.out, 0.f);
    return p;
}

double medianMicroseconds(const Shape& s, int threads, bool asInModel, bool bands, int runs)
{
    std::vector<float> x(size_t(s.size) * s.size * s.in, 0.5f), y(size_t(s.size) * s.size * s.out, 0.f);
    std::vector<float> sweep(asInModel ? (16u << 20) : 0);
    std::vector<Part> parts;
    if (bands) {
        omp_set_num_threads(1);  // each band's primitive is made for one thread
        for (int t = 0; t < threads; ++t)
            parts.push_back(makePart(s, x.data(), y.data(), s.size * t / threads, s.size * (t + 1) / threads));
    } else {
        omp_set_num_threads(threads);
        parts.push_back(makePart(s, x.data(), y.data(), 0, s.size));
    }
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
                                         {DNNL_ARG_BIAS, p.bias}, {DNNL_ARG_DST, p.dst}});
        } else {
#pragma omp parallel num_threads(threads)
            {
                Part& p = parts[size_t(omp_get_thread_num())];
                thread_local dnnl::stream bandStream(engine());  // as the runtime keeps one a thread
                p.primitive.execute(bandStream, {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_WEIGHTS, p.weights},
                                                 {DNNL_ARG_BIAS, p.bias}, {DNNL_ARG_DST, p.dst}});
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
        std::fprintf(stderr, "usage: %s IN OUT SIZE KERNEL GROUPS [THREADS=2] [RUNS=600]\n", argv[0]);
        return 2;
    }
    const Shape s{std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5])};
    const int threads = argc > 6 ? std::atoi(argv[6]) : 2, runs = argc > 7 ? std::atoi(argv[7]) : 600;
    if (s.in <= 0 || s.out <= 0 || s.size <= 0 || s.kernel <= 0 || s.kernel % 2 == 0 || s.groups <= 0 ||
        s.in % s.groups || s.out % s.groups || threads < 2 || runs < 10) {
        std::fprintf(stderr, "%s: channels divisible by the groups, an odd kernel, 2 or more threads, 10 or more runs\n",
                     argv[0]);
        return 2;
    }
    std::printf("convolution %d -> %d channels, %dx%d, kernel %d, %d groups; median of %d runs (the first fifth "
                "untimed), us\n",
                s.in, s.out, s.size, s.size, s.kernel, s.groups, runs);
    std::printf("%-34s %10s %10s %10s %10s\n", "data", "1 thread", (std::to_string(threads) + " threads").c_str(),
                "bands", "scaling");
    for (bool asInModel : {false, true}) {
        const double one = medianMicroseconds(s, 1, asInModel, false, runs);
        const double many = medianMicroseconds(s, threads, asInModel, false, runs);
        const double bands = s.size >= 2 * threads ? medianMicroseconds(s, threads, asInModel, true, runs) : 0.0;
        std::printf("%-34s %10.1f %10.1f %10.1f %9.2fx\n",
                    asInModel ? "as a model run leaves it" : "in cache, as the last run left it", one, many, bands,
                    one / many);
    }
    return 0;
}
