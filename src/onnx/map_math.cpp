// Mappings of the traced elementwise ops, activations and reductions (map.hpp): add, sub, mul,
// div with a tensor or a number (rsub, rdiv: the number first), neg, exp, log, sqrt, pow, relu,
// tanh, sigmoid, gelu, silu, softmax, log_softmax, sum.
#include <string>
#include <vector>

#include "onnx/map.hpp"

namespace tg::onnx::detail {
namespace {

/// A binary op `type` on two tensors, or on the tensor and the traced number "value"
/// (number_first: value op x).
std::string binary(OpStep& s, const char* type, bool number_first = false) {
    if (s.op.inputs.size() == 2)
        return s.graph.add(type, {s.as_out_type(0), s.as_out_type(1)});
    const std::string x = s.as_out_type(0);
    // the number in the output's type (an int64 tensor plus 0.5 is float32)
    const std::string c = s.op.out.dtype() == kInt64
                              ? s.graph.int64s("const", {}, {int64_t(s.op.f("value"))})
                              : s.graph.floats("const", {}, {float(s.op.f("value"))});
    return s.graph.add(
        type, number_first ? std::vector<std::string>{c, x} : std::vector<std::string>{x, c});
}

const char* unary_type(const OpStep& s) {
    static const char* const table[][2] = {
        {"neg", "Neg"},   {"exp", "Exp"},   {"log", "Log"},        {"sqrt", "Sqrt"},
        {"relu", "Relu"}, {"tanh", "Tanh"}, {"sigmoid", "Sigmoid"}};
    for (const auto& row : table)
        if (s.is(row[0]))
            return row[1];
    return nullptr;
}

std::string sum(OpStep& s) {
    const Dims dims = s.op.ints("dims");
    const bool keep = s.op.i("keepdim") != 0;
    int64_t b = s.in_bdim[0];
    for (int64_t d : dims)
        if (d == b)
            b = -1;  // summed over: the output has no batch
    if (b >= 0 && !keep)
        for (int64_t d : dims)
            b -= d < s.in_bdim[0] ? 1 : 0;
    s.out_bdim = b;
    Graph& g = s.graph;
    return g.add("ReduceSum", {s.in[0], g.int64s("axes", {int64_t(dims.size())}, dims)},
                 {attr("keepdims", int64_t(keep))});
}

}  // namespace

std::optional<std::string> map_math_op(OpStep& s) {
    if (s.is("add"))
        return binary(s, "Add");
    if (s.is("sub"))
        return binary(s, "Sub");
    if (s.is("rsub"))
        return binary(s, "Sub", true);
    if (s.is("mul"))
        return binary(s, "Mul");
    if (s.is("div"))
        return binary(s, "Div");
    if (s.is("rdiv"))
        return binary(s, "Div", true);
    if (s.is("pow"))  // x ^ tensor, x ^ number, number ^ x
        return binary(s, "Pow", s.op.inputs.size() == 1 && s.op.i("number_first") != 0);
    if (const char* type = unary_type(s))  // an integer tensor's exp is float32: Cast first
        return s.graph.add(type, {s.as_out_type(0)});
    if (s.is("gelu"))
        return emit_gelu(s.graph, s.in[0], "none");
    if (s.is("silu"))
        return s.graph.add("Mul", {s.in[0], s.graph.add("Sigmoid", {s.in[0]})});
    if (s.is("softmax") || s.is("log_softmax"))
        return s.graph.add(s.is("softmax") ? "Softmax" : "LogSoftmax", {s.in[0]},
                           {attr("axis", s.op.i("dim"))});
    if (s.is("sum"))
        return sum(s);
    return std::nullopt;
}

}  // namespace tg::onnx::detail
