// ramiel run MODEL.onnx: run once on the libtorch runtime and summarize the outputs.
#include "analysis.h"
#include "commands.h"

#include "core/ir/declared_types.h"
#include "core/onnx/onnx_import.h"
#include "core/pipeline/run_inputs.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"
#include "core/util/npy.h"
#include "core/util/text.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

namespace ramiel::cli {

namespace {

struct RunOptions {
    ModelOptions model;
    std::string saveDir;
    int threads = 1;
    int batch = 1;
    uint64_t seed = 0;
};

std::string summary(const Tensor& t)
{
    std::string s = dataTypeName(t.dtype) + "[" + t.shape().toString() + "]";
    if (t.dtype == DataType::Complex64 || t.dtype == DataType::Complex128) {  // the first values, real+imag j
        const int64_t n = t.numel();
        if (n <= 0 || int64_t(t.data.size()) != n * elementSize(t.dtype))
            return s;
        s += "  first [";
        for (int64_t i = 0; i < n && i < 4; ++i) {
            const double re = t.dtype == DataType::Complex64 ? double(t.at<float>(2 * i)) : t.at<double>(2 * i);
            const double im = t.dtype == DataType::Complex64 ? double(t.at<float>(2 * i + 1)) : t.at<double>(2 * i + 1);
            s += (i ? ", " : "") + formatFixed(re, 4) + (im < 0 ? "-" : "+") + formatFixed(std::abs(im), 4) + "j";
        }
        return s + (n > 4 ? ", ...]" : "]");
    }
    const auto v = t.toDoubles();
    if (!v || v->empty())
        return s;
    double lo = (*v)[0], hi = (*v)[0], sum = 0;
    size_t arg = 0;
    for (size_t i = 0; i < v->size(); ++i) {
        lo = std::min(lo, (*v)[i]);
        if ((*v)[i] > hi) {
            hi = (*v)[i];
            arg = i;
        }
        sum += (*v)[i];
    }
    s += "  min " + formatFixed(lo, 4) + "  max " + formatFixed(hi, 4) + "  mean " + formatFixed(sum / double(v->size()), 4) +
         "  argmax " + std::to_string(arg) + "  first [";
    for (size_t i = 0; i < v->size() && i < 4; ++i)
        s += (i ? ", " : "") + formatFixed((*v)[i], 4);
    return s + (v->size() > 4 ? ", ...]" : "]");
}

}  // namespace

Command addRunCommand(CLI::App& app)
{
    auto o = std::make_shared<RunOptions>();
    CLI::App* sub = app.add_subcommand("run", "Run the model once on the libtorch runtime and summarize its outputs");
    addModelOptions(sub, o->model);
    addInputFilesOption(sub, o->model);
    sub->add_option("--threads", o->threads, "Intra-op threads")->capture_default_str()->check(CLI::PositiveNumber);
    sub->add_option("-b,--batch", o->batch, "Samples per random input (files set their own)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--seed", o->seed, "Seed of the random inputs")->capture_default_str();
    sub->add_option("--save-outputs", o->saveDir,
                    "Write each output as DIR/<name>.npy (<name>_2.npy, ... where names clash)");
    return {sub, [o] {
                const Model model = pipeline::loadModel(o->model.model, o->model.prepare);
                // Refused before the run where the model declares an output .npy cannot hold,
                // after it (nothing printed yet) where only the run tells.
                auto checkStorable = [&](ValueId v, DataType t) {
                    if (!o->saveDir.empty() && t != DataType::Undefined && !npyCanStore(t))
                        throw Error(ErrorKind::Unsupported, model.path,
                                    "output '" + model.graph.value(v).name + "' is " + dataTypeName(t) +
                                        ", which a .npy file cannot hold (run without --save-outputs)");
                };
                for (ValueId v : model.graph.outputs())
                    checkStorable(v, model.graph.value(v).type.dtype);
                const auto compiled = runtime().compile(model);
                const std::vector<Tensor> inputs = pipeline::runInputs(model, *compiled, o->model.prepare.inputs, o->batch,
                                                                       o->seed, pipeline::FileSamples::AsHeld);
                compiled->setInputs(inputs);
                const double seconds = compiled->serialExecutor(o->threads)->run();
                const std::vector<Tensor> outputs = compiled->outputs();
                for (size_t i = 0; i < outputs.size(); ++i)
                    checkStorable(model.graph.outputs()[i], outputs[i].dtype);
                // Distinct files even where names clash once made file names ("out/1" and "out_1").
                std::vector<std::string> names;
                for (ValueId v : model.graph.outputs())
                    names.push_back(model.graph.value(v).name);
                const std::vector<std::string> files = uniqueFileNames(names, ".npy");
                // Saved before anything is printed: a failed write is one line on stderr, nothing on stdout.
                std::vector<std::string> saved;
                if (!o->saveDir.empty()) {
                    std::error_code ec;
                    std::filesystem::create_directories(o->saveDir, ec);
                    if (ec)
                        throw Error(ErrorKind::Io, o->saveDir, "cannot create the folder: " + ec.message());
                    for (size_t i = 0; i < outputs.size(); ++i) {
                        saved.push_back((std::filesystem::path(o->saveDir) / files[i]).string());
                        writeNpy(saved.back(), outputs[i]);
                    }
                }
                std::cout << printable(model.path) << ": ran in " << formatSeconds(seconds) << " (" << o->threads
                          << (o->threads == 1 ? " thread" : " threads") << ", first run)\n";
                for (size_t i = 0; i < outputs.size(); ++i) {
                    std::cout << "  " << printable(names[i]) << "  " << summary(outputs[i]) << "\n";
                    if (!saved.empty())
                        std::cout << "    saved " << printable(saved[i]) << "\n";
                }
                for (const std::string& line : outputsContradictingDeclarations(model.graph, inputs, outputs))
                    std::cerr << "ramiel: warning: " << printable(model.path) << ": " << printable(line) << "\n";
                return 0;
            }};
}

}  // namespace ramiel::cli
