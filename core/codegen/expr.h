// A tiny language-neutral expression tree: what one ONNX node computes, as
// nested calls of ATen functions that exist under the same name and argument
// order in Python (torch.*) and C++ (at::*). The generators render it.
#pragma once

#include "core/ir/graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ramiel::codegen {

struct Expr {
    enum class Kind { Value, Int, Float, Bool, Ints, None, List, Call, Method, Index, Slice, Text, Symbol, Sizes, DType, IfElse, Branch, Function };
    Kind kind = Kind::None;
    ValueId value = kNone;   // Value: a tensor of the graph (constant or computed)
    int64_t i = 0;           // Int, Bool; Index: the position; Slice: the dimension; DType: the DataType; Branch, Function: its index
    double f = 0;            // Float
    std::vector<int64_t> ints;
    std::string fn;          // Call: an entry of the function table; Method: the method name; Text: the text
    std::vector<Expr> args;  // Call / List elements; Method: args[0] is the object, then its arguments; Index, Slice: args[0];
                             // IfElse: the condition, then the two branches' calls; Branch: the outer values it reads
    // As an argument of a Call: Python passes it as keyword=value (C++ always by
    // position, so keyword arguments keep C++'s order); `isDefault`: the keyword's
    // default value, which Python leaves out.
    std::string keyword;
    bool isDefault = false;
    bool pythonOnly = false;  // an argument C++'s function does not take (F.interpolate's mode)
    bool cppOnly = false;     // an argument Python's function does not take (at::grid_sampler's mode code)

    static Expr val(ValueId v) { Expr e; e.kind = Kind::Value; e.value = v; return e; }
    static Expr integer(int64_t v) { Expr e; e.kind = Kind::Int; e.i = v; return e; }
    static Expr real(double v) { Expr e; e.kind = Kind::Float; e.f = v; return e; }
    static Expr boolean(bool v) { Expr e; e.kind = Kind::Bool; e.i = v; return e; }
    static Expr list(std::vector<int64_t> v) { Expr e; e.kind = Kind::Ints; e.ints = std::move(v); return e; }
    static Expr none() { return Expr{}; }
    static Expr tensors(std::vector<Expr> items) { Expr e; e.kind = Kind::List; e.args = std::move(items); return e; }
    static Expr call(std::string fn, std::vector<Expr> args)
    {
        Expr e;
        e.kind = Kind::Call;
        e.fn = std::move(fn);
        e.args = std::move(args);
        return e;
    }
    // This argument as keyword=value in Python.
    Expr named(std::string name, bool defaultValue = false) const
    {
        Expr e = *this;
        e.keyword = std::move(name);
        e.isDefault = defaultValue;
        return e;
    }
    // This argument in Python only.
    Expr inPythonOnly() const
    {
        Expr e = *this;
        e.pythonOnly = true;
        return e;
    }
    // This argument in C++ only.
    Expr inCppOnly() const
    {
        Expr e = *this;
        e.cppOnly = true;
        return e;
    }
    // object.name(args...): the same spelling in both languages (arguments by position).
    static Expr method(Expr object, std::string name, std::vector<Expr> args = {})
    {
        Expr e;
        e.kind = Kind::Method;
        e.fn = std::move(name);
        e.args = {std::move(object)};
        e.args.insert(e.args.end(), args.begin(), args.end());
        return e;
    }
    // A string literal; the caller keeps it to characters that need no escaping in either language.
    static Expr text(std::string s)
    {
        Expr e;
        e.kind = Kind::Text;
        e.fn = std::move(s);
        return e;
    }
    // A name spelled as it is, for one language's arguments only (C++'s `Activation::Relu`).
    static Expr symbol(std::string s)
    {
        Expr e;
        e.kind = Kind::Symbol;
        e.fn = std::move(s);
        return e;
    }
    // object's elements start, start + step, ... before end along dimension `dim` (step > 0),
    // bounds read as Python's slices and ONNX's Slice read them (negative ones count from the
    // end, both clamped into the dimension); kToEnd: to the end. Python `x[:, 2:8]`, C++
    // `x.slice(1, 2, 8, 1)`.
    static constexpr int64_t kToEnd = INT64_MAX;
    static Expr slice(Expr object, int64_t dim, int64_t start, int64_t end, int64_t step)
    {
        Expr e;
        e.kind = Kind::Slice;
        e.i = dim;
        e.ints = {start, end, step};
        e.args = {std::move(object)};
        return e;
    }
    // An element type: Python `torch.float32`, C++ `at::kFloat`.
    static Expr dtype(DataType t)
    {
        Expr e;
        e.kind = Kind::DType;
        e.i = int64_t(t);
        return e;
    }
    // object's sizes, read when the code runs: Python `x.shape`, C++ `x.sizes()`.
    static Expr sizes(Expr object)
    {
        Expr e;
        e.kind = Kind::Sizes;
        e.args = {std::move(object)};
        return e;
    }
    // `then` where the one-element bool tensor `condition` holds when the code runs, else `otherwise`
    // (only the one taken runs): Python `(a if bool(c) else b)`, C++ `(c.item<bool>() ? a : b)`.
    static Expr ifElse(Expr condition, Expr then, Expr otherwise)
    {
        Expr e;
        e.kind = Kind::IfElse;
        e.args = {std::move(condition), std::move(then), std::move(otherwise)};
        return e;
    }
    // A call of the generated function of LoweredModel::branches[index] on the values it reads.
    static Expr branch(size_t index, std::vector<Expr> outerValues)
    {
        Expr e;
        e.kind = Kind::Branch;
        e.i = int64_t(index);
        e.args = std::move(outerValues);
        return e;
    }
    // The generated function of LoweredModel::branches[index] itself (a Loop's body, which a helper calls).
    static Expr function(size_t index)
    {
        Expr e;
        e.kind = Kind::Function;
        e.i = int64_t(index);
        return e;
    }
    // object[i] along the first dimension, also the same in both languages.
    static Expr index(Expr object, int64_t i)
    {
        Expr e;
        e.kind = Kind::Index;
        e.i = i;
        e.args = {std::move(object)};
        return e;
    }
};

// The Python and C++ spelling of a Call's function.
struct FunctionName {
    const char* python;
    const char* cpp;
};
// Throws Error(Internal) for a name the table lacks.
const FunctionName& functionName(const std::string& fn);
// The spellings that are the generated programs' own helpers (no namespace or module): names
// no value, member or function of the generated code may take.
std::vector<std::string> helperNames();

}  // namespace ramiel::codegen
