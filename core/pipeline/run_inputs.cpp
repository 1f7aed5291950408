#include "core/pipeline/run_inputs.h"

#include "core/util/error.h"
#include "core/util/npy.h"

#include <algorithm>

namespace ramiel::pipeline {

std::map<std::string, std::string> parseInputFiles(const std::vector<std::string>& specs)
{
    std::map<std::string, std::string> files;
    for (const std::string& spec : specs) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
            throw Error(ErrorKind::Usage, {}, "--input takes NAME=FILE.npy, got '" + spec + "'");
        files[spec.substr(0, eq)] = spec.substr(eq + 1);
    }
    return files;
}

namespace {

// `file`'s data as the input `wanted` (its type and sizes) of a run of `samples` samples: as
// it is, or as `fit` says where it differs in the first axis, which the samples multiply.
Tensor fitted(Tensor file, const Tensor& wanted, int samples, FileSamples fit, const std::string& name,
              const std::string& path)
{
    const std::vector<int64_t>& have = file.dims;
    const std::vector<int64_t>& want = wanted.dims;
    if (file.dtype != wanted.dtype)
        throw Error(ErrorKind::Usage, path,
                    "holds " + dataTypeName(file.dtype) + " data; input '" + name + "' takes " + dataTypeName(wanted.dtype));
    if (have == want)
        return file;
    const int64_t rows = want.empty() ? 0 : want[0] / samples;  // one sample's rows
    const bool sameRow = !want.empty() && have.size() == want.size() && std::equal(have.begin() + 1, have.end(), want.begin() + 1);
    const bool wholeSamples = sameRow && rows > 0 && have[0] > 0 && have[0] % rows == 0;
    if (wholeSamples && fit == FileSamples::AsHeld)
        return file;
    if (!wholeSamples || (have[0] != rows && have[0] < want[0]))
        throw Error(ErrorKind::Usage, path,
                    "holds " + Shape::of(have).toString() + "; input '" + name + "' takes " + Shape::of(want).toString() +
                        (samples > 1 ? " (" + std::to_string(samples) + " samples; or one of them, or more samples)" : ""));
    const size_t rowBytes = file.data.size() / size_t(have[0]);
    std::string data;
    if (have[0] == rows) {  // one sample, repeated
        data.reserve(file.data.size() * size_t(samples));
        for (int k = 0; k < samples; ++k)
            data += file.data;
    } else {  // the first samples
        data = file.data.substr(0, rowBytes * size_t(want[0]));
    }
    file.dims = want;
    file.data = std::move(data);
    return file;
}

}  // namespace

std::vector<Tensor> runInputs(const Model& model, CompiledModel& compiled, const std::vector<std::string>& specs,
                              int samples, uint64_t seed, FileSamples fit)
{
    std::map<std::string, std::string> files = parseInputFiles(specs);
    std::vector<Tensor> inputs = compiled.randomInputs(samples, seed);
    size_t k = 0;
    for (ValueId v : model.graph.inputs()) {
        if (model.graph.value(v).isConstant())
            continue;
        const std::string& name = model.graph.value(v).name;
        const auto it = files.find(name);
        if (it != files.end()) {
            inputs[k] = fitted(readNpy(it->second), inputs[k], samples, fit, name, it->second);
            files.erase(it);
        }
        ++k;
    }
    if (!files.empty())
        throw Error(ErrorKind::Usage, model.path, "--input names '" + files.begin()->first + "', which is not a graph input");
    return inputs;
}

}  // namespace ramiel::pipeline
