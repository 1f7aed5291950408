#include "core/codegen/names.h"

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
    "torch", "np", "numpy", "os", "sys", "time", "argparse", "threading", "at", "c10", "std", "w", "inputs",
    "slots", "Slot", "Slots", "Weights", "Ints", "load_weights", "serial", "parallel", "run_parallel",
};

bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

IdentifierPool::IdentifierPool()
{
    for (const char* r : kReserved)
        taken_.insert(r);
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
