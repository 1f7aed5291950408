#include "core/codegen/names.h"

#include "core/codegen/expr.h"

#include <vector>

namespace ramiel::codegen {

namespace {

// Python and C++ keywords, and names the generated code defines or imports.
const char* const kReserved[] = {
    // Python
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "match", "case",
    "print", "len", "range", "list", "dict", "object", "type", "self", "exec", "eval", "open",
    // C++
    "alignas", "alignof", "asm", "auto", "bool", "char", "char8_t", "char16_t", "char32_t", "concept", "const",
    "consteval", "constexpr", "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype",
    "default", "delete", "do", "double", "dynamic_cast", "enum", "explicit", "export", "extern", "false",
    "float", "friend", "goto", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "nullptr",
    "operator", "private", "protected", "public", "register", "reinterpret_cast", "requires", "short",
    "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
    "thread_local", "throw", "true", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "and_eq", "bitand", "bitor", "compl", "not_eq", "or_eq", "xor",
    "xor_eq", "final", "override", "main", "errno", "assert", "NULL", "EOF", "stdin", "stdout", "stderr",
    // the generated code's own names
    "torch", "np", "numpy", "os", "functools", "sys", "time", "argparse", "threading", "at", "c10", "std", "w", "inputs",
    "slots", "Slot", "Slots", "Weights", "Ints", "load_weights", "serial", "parallel", "run_parallel", "F", "nn",
    "concurrent", "conv2d", "max_pool2d", "conv3d", "max_pool3d", "planarWeights", "pooledSize", "KERNEL_TRIAL_CALLS", "kernel_trials_settled", "kKernelTrialCalls", "kernelTrialsSettled", "kInf", "Aborted", "Workers", "PackedConvolutions", "PACKED_CONV",
    "OneDnn", "ONEDNN", "ctypes", "WEIGHTS", "counts_nonfinite_inputs", "NonFiniteRun", "nonFiniteRuns",
    "nonFiniteInputs", "reluAfter", "nonFinite",
    "WEIGHTS_FILE", "WEIGHTS_BYTES", "INPUTS", "OUTPUTS", "THREADS", "BOUND", "SLOTS", "model", "Model", "super",
    "float", "id", "isinstance", "getattr", "tuple", "forward_parallel", "forwardParallel",
    // torch.nn.Module's attributes (weights are buffers of the generated module)
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "cpu", "cuda",
    "double", "dump_patches", "eval", "extra_repr", "forward", "get_buffer", "get_extra_state", "get_parameter",
    "get_submodule", "half", "ipu", "load_state_dict", "modules", "named_buffers", "named_children",
    "named_modules", "named_parameters", "parameters", "register_backward_hook", "register_buffer",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook", "register_module",
    "register_parameter", "register_state_dict_pre_hook", "requires_grad_", "set_extra_state", "share_memory",
    "state_dict", "to", "to_empty", "train", "training", "xpu", "zero_grad", "compile",
};

bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

IdentifierPool::IdentifierPool()
{
    for (const char* r : kReserved)
        taken_.insert(r);
    for (const std::string& helper : helperNames())
        taken_.insert(helper);
}

std::string IdentifierPool::make(std::string_view name, std::string_view prefix)
{
    std::string base(prefix);
    for (char c : name) {
        const char k = isAlpha(c) || isDigit(c) ? c : '_';
        if (k == '_' && (base.empty() || base.back() == '_'))
            continue;  // no leading '_', no "__"
        base += k;
        if (base.size() >= 48)
            break;
    }
    while (!base.empty() && base.back() == '_' && base.size() > prefix.size())
        base.pop_back();
    if (base.empty() || !isAlpha(base[0]))
        base = "v" + (base.empty() || base[0] == '_' ? base : "_" + base);
    if (base.size() >= 2 && base[base.size() - 1] == '_' && base[base.size() - 2] == '_')
        base.pop_back();
    std::string id = base;
    for (int n = 2; taken_.count(id); ++n)
        id = base + (base.back() == '_' ? "" : "_") + std::to_string(n);
    taken_.insert(id);
    return id;
}

std::string nodeBaseName(std::string_view nodeName)
{
    std::vector<std::string> parts(1);
    for (char c : nodeName) {
        if (c == '/') {
            if (!parts.back().empty())
                parts.emplace_back();
        } else {
            parts.back() += c;
        }
    }
    if (parts.back().empty())
        parts.pop_back();
    // The last part names the operator ("Conv", "Relu_3"): the others say where it is.
    auto isOperator = [](const std::string& part) {
        size_t i = 0;
        if (part.empty() || !(part[0] >= 'A' && part[0] <= 'Z'))
            return false;
        while (i < part.size() && (isAlpha(part[i]) || isDigit(part[i])))
            ++i;
        if (i == part.size())
            return true;
        if (part[i] != '_' || i + 1 == part.size())
            return false;
        for (++i; i < part.size(); ++i)
            if (!isDigit(part[i]))
                return false;
        return true;
    };
    if (parts.size() > 1 && isOperator(parts.back()))
        parts.pop_back();
    // A part the next one repeats says nothing more: "branch2/branch2.0" is "branch2.0".
    std::string base;
    for (size_t i = 0; i < parts.size(); ++i) {
        const std::string& part = parts[i];
        if (i + 1 < parts.size() && parts[i + 1].size() > part.size() && parts[i + 1].compare(0, part.size(), part) == 0 &&
            !isAlpha(parts[i + 1][part.size()]) && !isDigit(parts[i + 1][part.size()]))
            continue;
        base += (base.empty() ? "" : "_") + part;
    }
    return base;
}

std::string className(std::string_view fileStem)
{
    std::string name;
    bool upper = true;
    for (char c : fileStem) {
        if (!isAlpha(c) && !isDigit(c)) {
            upper = true;
            continue;
        }
        name += upper && c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c;
        upper = false;
        if (name.size() >= 40)
            break;
    }
    if (name.empty() || !isAlpha(name[0]))
        name = "Model" + name;
    return name;
}

std::string asciiDisplay(std::string_view name)
{
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (char ch : name) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x7f) {
            if (c == '\\')
                out += '\\';
            out += ch;
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string quotedForComment(std::string_view name) { return "'" + asciiDisplay(name) + "'"; }

namespace {

std::string literal(std::string_view name, bool cpp)
{
    std::string out = "\"";
    for (char c : asciiDisplay(name)) {
        if (c == '\\' || c == '"' || (cpp && c == '?'))
            out += '\\';
        out += c;
    }
    return out + "\"";
}

}  // namespace

std::string pythonLiteral(std::string_view name) { return literal(name, false); }
std::string cppLiteral(std::string_view name) { return literal(name, true); }

}  // namespace ramiel::codegen
