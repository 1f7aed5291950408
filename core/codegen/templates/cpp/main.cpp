// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "npy.cpp"
struct InputSpec {
    const char* name;
    at::ScalarType dtype;
    Ints shape;
};
const std::vector<InputSpec> kInputs;
const std::vector<std::pair<const char*, const char*>> kOutputs;
const std::vector<int> kThreads;
constexpr double kBound = 0;
constexpr int kKernelTrialCalls = 8;
bool kernelTrialsSettled();
#ifndef RAMIEL_CLASS
#define RAMIEL_CLASS Model  // placeholder: the class name
#endif
class RAMIEL_CLASS {
public:
    explicit RAMIEL_CLASS(const std::string& weightsFile);
    std::vector<at::Tensor> forward(const std::vector<at::Tensor>& inputs) const;
    std::vector<at::Tensor> forwardParallel(const std::vector<at::Tensor>& inputs);
};
namespace {  // prelude.cpp's, which this file closes
// </check-only>
// Each graph input's .npy file or "": --input NAME=FILE.npy (as `ramiel run`; the others
// random), or --input FILE.npy once per graph input, in order.
std::vector<std::string> inputFiles(const std::vector<std::string>& specs)
{
    std::vector<std::string> files(kInputs.size()), positional;
    bool named = false;
    for (const std::string& spec : specs) {
        const size_t eq = spec.find('=');
        size_t k = 0;
        while (eq != std::string::npos && k < kInputs.size() && spec.compare(0, eq, kInputs[k].name) != 0)
            ++k;
        if (eq != std::string::npos && eq + 1 < spec.size() && k < kInputs.size()) {
            files[k] = spec.substr(eq + 1);
            named = true;
        } else {
            positional.push_back(spec);
        }
    }
    if (positional.empty())
        return files;
    if (named || positional.size() != kInputs.size())
        throw std::runtime_error("expected NAME=FILE.npy, or " + std::to_string(kInputs.size()) +
                                 " --input files (one per graph input, in order), got " + std::to_string(specs.size()));
    return positional;
}

std::vector<at::Tensor> makeInputs(const std::vector<std::string>& specs)
{
    const std::vector<std::string> files = inputFiles(specs);
    std::vector<at::Tensor> inputs;
    at::manual_seed(0);
    for (size_t k = 0; k < kInputs.size(); ++k) {
        if (!files[k].empty()) {
            at::Tensor t = readNpy(files[k]);
            if (t.scalar_type() != kInputs[k].dtype)
                throw std::runtime_error(files[k] + ": input " + kInputs[k].name + " has another dtype");
            inputs.push_back(t);
        } else if (at::isFloatingType(kInputs[k].dtype)) {
            inputs.push_back(at::randn(kInputs[k].shape, at::TensorOptions().dtype(kInputs[k].dtype)));
        } else {
            inputs.push_back(at::zeros(kInputs[k].shape, at::TensorOptions().dtype(kInputs[k].dtype)));
        }
    }
    return inputs;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Serial and parallel take turns of 3 timed runs, so that a change in the machine's load
// hits both; each turn starts with 0.1 s of untimed runs (at least one), because the first
// runs after the other find cold caches and sleeping threads and speed up over tens of
// milliseconds.
template <typename S, typename P>
std::pair<double, double> medianSeconds(S&& serialRun, P&& parallelRun, int runs)
{
    std::vector<double> s, p;
    auto turn = [&](auto& run, std::vector<double>& out, int count) {
        const auto warmUntil = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
        do
            run();
        while (std::chrono::steady_clock::now() < warmUntil);
        for (int i = 0; i < count; ++i) {
            const auto start = std::chrono::steady_clock::now();
            run();
            out.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
    };
    for (int done = 0; done < runs; done += 3) {
        turn(serialRun, s, std::min(3, runs - done));
        turn(parallelRun, p, std::min(3, runs - done));
    }
    return {median(s), median(p)};
}

int run(int argc, char** argv)
{
    std::vector<std::string> inputFiles;
    std::string saveDir, weightsFile = WEIGHTS_FILE;
    int runs = 10, serialThreads = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
            std::cerr << "usage: " << argv[0]
                      << " [--input [NAME=]X.npy ...] [--save-outputs DIR] [--runs N] [--serial-threads N] [--weights FILE]\n";
            return 2;
        }
        const std::string v = argv[++i];
        if (a == "--input")
            inputFiles.push_back(v);
        else if (a == "--save-outputs")
            saveDir = v;
        else if (a == "--runs")
            runs = std::max(1, std::stoi(v));
        else if (a == "--serial-threads")
            serialThreads = std::max(1, std::stoi(v));
        else if (a == "--weights")
            weightsFile = v;
        else {
            std::cerr << "unknown option " << a << "\n";
            return 2;
        }
    }
#ifdef M_MMAP_THRESHOLD
    // As Ramiel's runtime does: glibc keeps freed activations in the heap for the next run
    // instead of mapping and unmapping every large tensor on every run, and every thread uses
    // that one heap (a worker's own arena is unmapped whenever it empties: the ConvNeXt-T
    // program took 55 ms a run on one worker of two threads with arenas, 41 without).
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_ARENA_MAX, 1);
#endif
    RAMIEL_CLASS model(weightsFile);
    const std::vector<at::Tensor> inputs = makeInputs(inputFiles);
    at::set_num_threads(serialThreads);
    // A convolution's kernels take turns in its first calls (kernel trials): run both ways until
    // every trial has chosen, so that serial and parallel compute alike.
    for (int k = 0; k < kKernelTrialCalls; ++k) {
        {
            c10::InferenceMode guard;
            model.forward(inputs);
        }
        model.forwardParallel(inputs);
        if (kernelTrialsSettled())
            break;
    }
    std::vector<at::Tensor> expected;
    {
        c10::InferenceMode guard;
        expected = model.forward(inputs);
    }
    const std::vector<at::Tensor> got = model.forwardParallel(inputs);
    bool agree = true;
    for (size_t k = 0; k < got.size(); ++k) {
        // A NaN matches a NaN in the same place: a model may output some, serially and in parallel alike.
        const bool shaped = expected[k].sizes() == got[k].sizes();
        const at::Tensor bothNaN = shaped ? at::isnan(expected[k]) & at::isnan(got[k]) : at::Tensor();
        const bool same = shaped && at::equal(expected[k].masked_fill(bothNaN, 0), got[k].masked_fill(bothNaN, 0));
        const at::Tensor a = expected[k].to(at::kDouble), b = got[k].to(at::kDouble);
        const bool ok = shaped && at::allclose(a, b, 1e-4, 1e-5, /*equal_nan=*/true);
        const double diff = a.numel() && shaped ? (a - b).abs().masked_fill(bothNaN, 0).max().item<double>() : 0.0;
        agree = agree && ok;
        std::printf("output %s: shape %s, max |serial - parallel| %.3g %s\n", kOutputs[k].first,
                    c10::str(b.sizes()).c_str(), diff, same ? "ok (equal)" : ok ? "ok" : "MISMATCH");
    }
    const auto [serialSeconds, parallelSeconds] = medianSeconds(
        [&] {
            c10::InferenceMode guard;
            model.forward(inputs);
        },
        [&] { model.forwardParallel(inputs); }, runs);
    std::string threads;
    for (int n : kThreads)
        threads += (threads.empty() ? "" : ", ") + std::to_string(n);
    std::printf("serial   %.2f ms  (%d intra-op thread%s)\n", serialSeconds * 1e3, serialThreads, serialThreads == 1 ? "" : "s");
    std::printf("parallel %.2f ms  (%zu worker%s, threads [%s])\n", parallelSeconds * 1e3, kThreads.size(),
                kThreads.size() == 1 ? "" : "s", threads.c_str());
    if (kBound > 0)
        std::printf("speedup  %.2fx  (bound %.2fx: the schedule's serial cost over max(critical path, work / workers))\n",
                    serialSeconds / parallelSeconds, kBound);
    else
        std::printf("speedup  %.2fx  (bound not known)\n", serialSeconds / parallelSeconds);
    if (!saveDir.empty())
        std::filesystem::create_directories(saveDir);
    for (size_t k = 0; k < got.size() && !saveDir.empty(); ++k)
        writeNpy(saveDir + "/" + kOutputs[k].second, got[k]);
    if (!agree) {
        std::cerr << "serial and parallel outputs differ\n";
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
#if defined(__GLIBC__)
    // Huge pages for the heap, as Ramiel's CLI runs (activations and packed weights span tens of
    // megabytes; with 4 KiB pages the TLB misses show). glibc reads this tunable only when a
    // process starts, so the program starts itself once more with it, added to a GLIBC_TUNABLES
    // of your own (one that names glibc.malloc.hugetlb is left as it is); where the start fails
    // the program runs as it is.
    const char* own = std::getenv("GLIBC_TUNABLES");
    const std::string tunables = own ? own : "";
    if (tunables.find("glibc.malloc.hugetlb") == std::string::npos) {
        setenv("GLIBC_TUNABLES", ((tunables.empty() ? "" : tunables + ":") + "glibc.malloc.hugetlb=1").c_str(), 1);
        // LLVM's OpenMP (where CMakeLists.txt linked it) lets an idle team spin 1 ms, not 200,
        // and its spinning threads yield the CPU only where they outnumber the CPUs, as the
        // runtime's do (a yield hands the core to any background job for a scheduler tick).
        setenv("KMP_BLOCKTIME", "1", 0);
        setenv("KMP_USE_YIELD", "2", 0);
        execv("/proc/self/exe", argv);
    }
#endif
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    }
}
