// Arithmetic: + - * / pow (ops.hpp has the VJPs; sqrt, exp, log and the other unary math:
// unary_math.cpp; clamp, maximum, minimum and where: select.cpp).
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

using runtime::BinaryOp;
using runtime::UnaryOp;

namespace {
/// dy restricted to input i's shape, or undefined when input i needs no gradient.
Tensor grad_for(const Node& n, size_t i, const Tensor& g) {
    return needs(n, i) ? sum_to(g, in_shape(n, i)) : Tensor();
}

// Note [Bool arithmetic]: a bool tensor with a number promotes as LibTorch's (Note [Type
// promotion]): mask * 2 is int64, mask * 2.0 float32, mask * x x's dtype; two bool tensors add as
// logical_or and multiply as logical_and, as in PyTorch, and divide as float32.
bool both_bool(const Tensor& a, const Tensor& b) {
    return a.dtype() == kBool && b.dtype() == kBool;
}
/// PyTorch refuses subtraction with a bool tensor, pointing to the mask operators.
void check_no_bool_sub(const Tensor& a, const Tensor* b = nullptr) {
    const Tensor& t = a.dtype() == kBool || !b ? a : *b;
    if (t.dtype() == kBool)
        throw dtype_error("sub: " + shape_str(t.sizes()) +
                          " bool: subtraction with a bool tensor is not supported (invert a mask "
                          "with ~ or logical_not(), compare two with ^ or logical_xor())");
}
}  // namespace

Tensor add(const Tensor& a_in, const Tensor& b_in) {
    if (both_bool(a_in, b_in))
        return logical_or(a_in, b_in);
    const auto ab = promote::both(a_in, b_in);
    const Tensor &a = ab.first, &b = ab.second;
    Tensor y = runtime::binary(BinaryOp::add, a, b, "add");
    trace_op("add", {&a_in, &b_in}, y);
    if (should_record({&a, &b}))
        record("add", {&a, &b}, y, [](const Tensor& dy, const Node& n) {
            return Grads{grad_for(n, 0, dy), grad_for(n, 1, dy)};
        });
    recipe(y, [](const std::vector<Tensor>& xs) {
        return runtime::binary(BinaryOp::add, xs[0], xs[1], "add");
    });
    return y;
}

Tensor sub(const Tensor& a_in, const Tensor& b_in) {
    check_no_bool_sub(a_in, &b_in);
    const auto ab = promote::both(a_in, b_in);
    const Tensor &a = ab.first, &b = ab.second;
    Tensor y = runtime::binary(BinaryOp::sub, a, b, "sub");
    trace_op("sub", {&a_in, &b_in}, y);
    if (should_record({&a, &b}))
        record("sub", {&a, &b}, y, [](const Tensor& dy, const Node& n) {
            return Grads{grad_for(n, 0, dy), needs(n, 1) ? grad_for(n, 1, -dy) : Tensor()};
        });
    recipe(y, [](const std::vector<Tensor>& xs) {
        return runtime::binary(BinaryOp::sub, xs[0], xs[1], "sub");
    });
    return y;
}

Tensor mul(const Tensor& a_in, const Tensor& b_in) {
    if (both_bool(a_in, b_in))
        return logical_and(a_in, b_in);
    const auto ab = promote::both(a_in, b_in);
    const Tensor &a = ab.first, &b = ab.second;
    Tensor y = runtime::binary(BinaryOp::mul, a, b, "mul");
    trace_op("mul", {&a_in, &b_in}, y);
    if (should_record({&a, &b}))  // each input is saved only if the other needs its gradient
        record("mul", {&a, &b}, y,
               [sa = b.requires_grad() ? save(a) : Saved(),
                sb = a.requires_grad() ? save(b) : Saved()](const Tensor& dy, const Node& n) {
                   return Grads{needs(n, 0) ? grad_for(n, 0, dy * sb.get()) : Tensor(),
                                needs(n, 1) ? grad_for(n, 1, dy * sa.get()) : Tensor()};
               });
    recipe(y, [](const std::vector<Tensor>& xs) {
        return runtime::binary(BinaryOp::mul, xs[0], xs[1], "mul");
    });
    return y;
}

Tensor div(const Tensor& a_in, const Tensor& b_in) {
    const auto ab = promote::both_floating(a_in, b_in);  // true division, as LibTorch's
    const Tensor &a = ab.first, &b = ab.second;
    Tensor y = runtime::binary(BinaryOp::div, a, b, "div");
    trace_op("div", {&a_in, &b_in}, y);
    if (should_record({&a, &b}))
        record("div", {&a, &b}, y,
               [sa = b.requires_grad() ? save(a) : Saved(), sb = save(b)](const Tensor& dy,
                                                                          const Node& n) {
                   const Tensor bb = sb.get();
                   return Grads{
                       needs(n, 0) ? grad_for(n, 0, dy / bb) : Tensor(),
                       needs(n, 1) ? grad_for(n, 1, -dy * sa.get() / (bb * bb)) : Tensor()};
               });
    recipe(y, [](const std::vector<Tensor>& xs) {
        return runtime::binary(BinaryOp::div, xs[0], xs[1], "div");
    });
    return y;
}

Tensor div(const Tensor& a_in, const Tensor& b_in, std::optional<std::string_view> mode) {
    if (!mode)
        return div(a_in, b_in);
    const bool floor_mode = *mode == "floor";
    if (!floor_mode && *mode != "trunc")
        throw value_error("div: rounding_mode must be \"trunc\", \"floor\" or none, got \"" +
                          std::string(*mode) + "\"");
    const auto ab = promote::both(a_in, b_in);
    const Dtype d = ab.first.dtype();
    if (is_floating(d)) {
        if (floor_mode)  // LibTorch's floor division of floats is not floor(a / b) at the edges
            throw dtype_error("div: rounding_mode \"floor\" takes integer tensors, got " +
                              std::string(dtype_name(d)) +
                              " (tg::floor(a / b) can differ from "
                              "LibTorch's in the last place)");
        return trunc(div(ab.first, ab.second));
    }
    // integers: the truncating int64 kernel (Note [Integer division] in kernels.def), then
    // floor's correction where the remainder's sign differs from the divisor's
    const Tensor a = runtime::converted(ab.first, kInt64),
                 b = runtime::converted(ab.second, kInt64);
    Tensor q = runtime::binary(BinaryOp::div, a, b, "div");
    if (floor_mode) {
        const Tensor r =
            runtime::binary(BinaryOp::sub, a, runtime::binary(BinaryOp::mul, q, b, "div"), "div");
        const Tensor off = logical_and(ne(r, 0), ne(lt(r, 0), lt(b, 0)));
        q = runtime::binary(BinaryOp::sub, q, runtime::converted(off, kInt64), "div");
    }
    return runtime::converted(q, d);
}

Tensor add(const Tensor& a_in, Scalar s) {
    const Tensor a = promote::to(a_in, result_type(a_in, s));
    Tensor y = runtime::unary(UnaryOp::add_scalar, a, promote::value_in(a.dtype(), s));
    if (Trace* tr = trace_slot())
        tr->add("add", {&a_in}, y, {{"value", s.toDouble()}});
    if (should_record({&a}))
        record("add", {&a}, y, [](const Tensor& dy) { return Grads{dy}; });
    torch_name(y, "AddBackward1");
    if (recipes_wanted())
        recipe(y, [v = promote::value_in(a.dtype(), s)](const std::vector<Tensor>& xs) {
            return runtime::unary(UnaryOp::add_scalar, xs[0], v);
        });
    return y;
}

Tensor mul(const Tensor& a_in, Scalar s) {
    const Tensor a = promote::to(a_in, result_type(a_in, s));
    Tensor y = runtime::unary(UnaryOp::mul_scalar, a, promote::value_in(a.dtype(), s));
    if (Trace* tr = trace_slot())
        tr->add("mul", {&a_in}, y, {{"value", s.toDouble()}});
    if (should_record({&a}))
        record("mul", {&a}, y, [s](const Tensor& dy) { return Grads{dy * s}; });
    torch_name(y, "MulBackward1");
    if (recipes_wanted())
        recipe(y, [v = promote::value_in(a.dtype(), s)](const std::vector<Tensor>& xs) {
            return runtime::unary(UnaryOp::mul_scalar, xs[0], v);
        });
    return y;
}

// s / a and s - a are LibTorch C++'s full_like(a, s).div_(a) and .sub_(a): computed in a's dtype
// with s checked into it, so an integral a cannot take s / a (a float result), as there.
Tensor rdiv(Scalar s, const Tensor& a) {
    promote::check_can_cast("div_", is_floating(a.dtype()) ? a.dtype() : kFloat32, a);
    Tensor y = runtime::unary(UnaryOp::rdiv_scalar, a, promote::checked_in(a.dtype(), s, "div"));
    if (Trace* tr = trace_slot())
        tr->add("rdiv", {&a}, y, {{"value", s.toDouble()}});
    if (should_record({&a}))
        record("rdiv", {&a}, y, [sa = save(a), sy = save_output(y)](const Tensor& dy) {
            return Grads{-dy * sy.get() / sa.get()};
        });
    return y;
}

Tensor neg(const Tensor& x) {
    Tensor y = runtime::unary(UnaryOp::neg, x);
    trace_op("neg", {&x}, y);
    if (should_record({&x}))
        record("neg", {&x}, y, [](const Tensor& dy) { return Grads{-dy}; });
    recipe(y, [](const std::vector<Tensor>& xs) { return runtime::unary(UnaryOp::neg, xs[0]); });
    return y;
}

Tensor pow(const Tensor& x_in, Scalar e) {
    const Tensor x = promote::to(x_in, result_type(x_in, e));  // uint8 ^ 2 is uint8, ^ 2.5 float
    if (is_integral(x.dtype()) && e.isIntegral() && e.toLong() < 0)
        throw value_error("pow: " + shape_str(x.sizes()) + " " + dtype_name(x.dtype()) + " ^ " +
                          runtime::scalar_str(e) +
                          ": integers to negative integer powers are not allowed");
    Tensor y = runtime::unary(UnaryOp::pow_scalar, x, promote::value_in(x.dtype(), e));
    if (Trace* tr = trace_slot())
        tr->add("pow", {&x_in}, y, {{"value", e.toDouble()}, {"number_first", false}});
    if (should_record({&x}))
        record("pow", {&x}, y, [sx = save(x), e](const Tensor& dy) {
            return Grads{dy * e * pow(sx.get(), e - 1)};
        });
    return y;
}

Tensor pow(const Tensor& a_in, const Tensor& b_in) {
    const auto ab = promote::both(a_in, b_in);
    const Tensor &a = ab.first, &b = ab.second;
    Tensor y = runtime::binary(BinaryOp::pow, a, b, "pow");
    trace_op("pow", {&a_in, &b_in}, y);
    if (should_record({&a, &b}))
        record("pow", {&a, &b}, y,
               [sa = save(a), sb = save(b), sy = save_output(y)](const Tensor& dy, const Node& n) {
                   const Tensor aa = sa.get(), bb = sb.get();
                   return Grads{needs(n, 0) ? grad_for(n, 0, dy * bb * pow(aa, bb - 1)) : Tensor(),
                                needs(n, 1) ? grad_for(n, 1, dy * sy.get() * log(aa)) : Tensor()};
               });
    torch_name(y, "PowBackward1");
    return y;
}

Tensor pow(Scalar s, const Tensor& x_in) {
    const Tensor x = promote::to(x_in, result_type(s, x_in));
    Tensor y = runtime::unary(UnaryOp::rpow_scalar, x, promote::value_in(x.dtype(), s));
    if (Trace* tr = trace_slot())
        tr->add("pow", {&x_in}, y, {{"value", s.toDouble()}, {"number_first", true}});
    if (should_record({&x}))
        record("pow", {&x}, y, [sy = save_output(y), s](const Tensor& dy) {
            return Grads{dy * sy.get() * std::log(s)};
        });
    torch_name(y, "PowBackward2");
    return y;
}

Tensor operator+(const Tensor& a, const Tensor& b) {
    return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
    return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
    return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
    return div(a, b);
}
Tensor operator+(const Tensor& a, Scalar s) {
    return add(a, s);
}
Tensor operator-(const Tensor& a, Scalar s) {
    check_no_bool_sub(a);
    const ComposedName named;
    return named(add(a, -s), "sub", "SubBackward1");
}
Tensor operator*(const Tensor& a, Scalar s) {
    return mul(a, s);
}
/// y = a / s as LibTorch computes it: a times 1/s, the reciprocal in the kernel's precision
/// (float for float32, float16 and bfloat16); an integral a divides as float32.
Tensor operator/(const Tensor& a_in, Scalar s) {
    const Dtype d = is_floating(result_type(a_in, s)) ? result_type(a_in, s) : kFloat32;
    const Tensor a = promote::to(a_in, d);
    const double v = promote::value_in(d, s);
    const double r = d == kFloat64 ? 1.0 / v : double(1.0f / float(v));
    Tensor y = runtime::unary(UnaryOp::mul_scalar, a, r);
    if (Trace* tr = trace_slot())
        tr->add("mul", {&a_in}, y, {{"value", r}});  // a·(1/s), as computed
    if (should_record({&a}))
        record("div", {&a}, y, [r](const Tensor& dy) {
            return Grads{GradMode::is_enabled() ? dy * r
                                                : runtime::unary(UnaryOp::mul_scalar, dy, r)};
        });
    torch_name(y, "DivBackward1");
    return y;
}
Tensor operator+(Scalar s, const Tensor& a) {
    return add(a, s);
}
Tensor operator-(Scalar s, const Tensor& a) {
    check_no_bool_sub(a);
    Tensor y = runtime::unary(UnaryOp::rsub_scalar, a, promote::checked_in(a.dtype(), s, "sub"));
    if (Trace* tr = trace_slot())
        tr->add("rsub", {&a}, y, {{"value", s.toDouble()}});
    if (should_record({&a}))
        record("rsub", {&a}, y, [](const Tensor& dy) { return Grads{-dy}; });
    return y;
}
Tensor operator*(Scalar s, const Tensor& a) {
    return mul(a, s);
}
Tensor operator/(Scalar s, const Tensor& a) {
    return rdiv(s, a);
}
Tensor operator-(const Tensor& x) {
    return neg(x);
}

}  // namespace tg
