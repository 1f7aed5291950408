// Turning names from a model (arbitrary bytes) into safe generated code:
// identifiers that cannot clash with keywords or each other, and ASCII text
// for comments and string literals that cannot end them early.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace ramiel::codegen {

// Makes unique identifiers: [A-Za-z][A-Za-z0-9_]*, no "__" (reserved in C++,
// dunder in Python), never a Python or C++ keyword or a name the generated
// code itself uses, at most 48 characters plus a "_N" suffix for clashes.
class IdentifierPool {
public:
    IdentifierPool();
    // A fresh identifier built from `name` (with `prefix` prepended, which
    // must itself be a valid identifier start).
    std::string make(std::string_view name, std::string_view prefix = {});
    void reserve(const std::string& identifier) { taken_.insert(identifier); }
    bool taken(const std::string& identifier) const { return taken_.count(identifier) != 0; }

private:
    std::set<std::string> taken_;
};

// A short base for the variable of a value a node computes: the node's name
// without the last path part when that names the operator
// ("/inception3a/branch1/conv/Conv" -> "inception3a_branch1_conv").
std::string nodeBaseName(std::string_view nodeName);
// A CamelCase class name from a file's stem ("inception_v3" -> "InceptionV3"):
// letters and digits only, "Model" before one that would not start with a letter.
std::string className(std::string_view fileStem);

// The name as one line of printable ASCII: other bytes as \xNN, '\' doubled.
std::string asciiDisplay(std::string_view name);
// A comment-safe rendering: the ASCII display in single quotes (a comment
// line then never ends in a backslash, which would continue a C++ comment).
std::string quotedForComment(std::string_view name);
// Double-quoted string literals whose value is asciiDisplay(name).
std::string pythonLiteral(std::string_view name);
std::string cppLiteral(std::string_view name);

}  // namespace ramiel::codegen
