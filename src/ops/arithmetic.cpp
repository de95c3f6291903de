// Arithmetic: + - * / pow sqrt rsqrt square exp log abs clamp maximum minimum where (ops.hpp has
// the VJPs).
#include <cmath>
#include <limits>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
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

// Note [Bool arithmetic]: a bool tensor with a number is taken as float32 (mask * 2.0; PyTorch
// gives int64 for an integral number, but tg::Scalar is a double and cannot tell 2 from 2.0);
// two bool tensors add as logical_or and multiply as logical_and, as in PyTorch, and divide as
// float32. With a tensor of another dtype, the kernel converts the bool operand (Note [Bool
// tensors] in src/runtime/dispatch.cpp).
const Tensor& number(const Tensor& a, Tensor& keep) {
    if (a.dtype() != kBool)
        return a;
    keep = a.to(kFloat32);
    return keep;
}
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

Tensor add(const Tensor& a, const Tensor& b) {
    if (both_bool(a, b))
        return logical_or(a, b);
    Tensor y = runtime::binary(BinaryOp::add, a, b, "add");
    if (should_record({&a, &b}))
        record("add", {&a, &b}, y, [](const Tensor& dy, const Node& n) {
            return Grads{grad_for(n, 0, dy), grad_for(n, 1, dy)};
        });
    return y;
}

Tensor sub(const Tensor& a, const Tensor& b) {
    check_no_bool_sub(a, &b);
    Tensor y = runtime::binary(BinaryOp::sub, a, b, "sub");
    if (should_record({&a, &b}))
        record("sub", {&a, &b}, y, [](const Tensor& dy, const Node& n) {
            return Grads{grad_for(n, 0, dy), needs(n, 1) ? grad_for(n, 1, -dy) : Tensor()};
        });
    return y;
}

Tensor mul(const Tensor& a, const Tensor& b) {
    if (both_bool(a, b))
        return logical_and(a, b);
    Tensor y = runtime::binary(BinaryOp::mul, a, b, "mul");
    if (should_record({&a, &b}))  // each input is saved only if the other needs its gradient
        record("mul", {&a, &b}, y,
               [sa = b.requires_grad() ? save(a) : Saved(),
                sb = a.requires_grad() ? save(b) : Saved()](const Tensor& dy, const Node& n) {
                   return Grads{needs(n, 0) ? grad_for(n, 0, dy * sb.get()) : Tensor(),
                                needs(n, 1) ? grad_for(n, 1, dy * sa.get()) : Tensor()};
               });
    return y;
}

Tensor div(const Tensor& a, const Tensor& b) {
    if (both_bool(a, b))
        return div(a.to(kFloat32), b.to(kFloat32));
    Tensor y = runtime::binary(BinaryOp::div, a, b, "div");
    if (should_record({&a, &b}))
        record("div", {&a, &b}, y,
               [sa = b.requires_grad() ? save(a) : Saved(), sb = save(b)](const Tensor& dy,
                                                                          const Node& n) {
                   const Tensor bb = sb.get();
                   return Grads{
                       needs(n, 0) ? grad_for(n, 0, dy / bb) : Tensor(),
                       needs(n, 1) ? grad_for(n, 1, -dy * sa.get() / (bb * bb)) : Tensor()};
               });
    return y;
}

Tensor add(const Tensor& a_in, Scalar s) {
    Tensor keep;
    const Tensor& a = number(a_in, keep);
    Tensor y = runtime::unary(UnaryOp::add_scalar, a, s);
    if (should_record({&a}))
        record("add", {&a}, y, [](const Tensor& dy) { return Grads{dy}; });
    torch_name(y, "AddBackward1");
    return y;
}

Tensor mul(const Tensor& a_in, Scalar s) {
    Tensor keep;
    const Tensor& a = number(a_in, keep);
    Tensor y = runtime::unary(UnaryOp::mul_scalar, a, s);
    if (should_record({&a}))
        record("mul", {&a}, y, [s](const Tensor& dy) { return Grads{dy * s}; });
    torch_name(y, "MulBackward1");
    return y;
}

Tensor rdiv(Scalar s, const Tensor& a_in) {
    Tensor keep;
    const Tensor& a = number(a_in, keep);
    Tensor y = runtime::unary(UnaryOp::rdiv_scalar, a, s);
    if (should_record({&a}))
        record("rdiv", {&a}, y, [sa = save(a), sy = save_output(y)](const Tensor& dy) {
            return Grads{-dy * sy.get() / sa.get()};
        });
    return y;
}

Tensor neg(const Tensor& x) {
    Tensor y = runtime::unary(UnaryOp::neg, x);
    if (should_record({&x}))
        record("neg", {&x}, y, [](const Tensor& dy) { return Grads{-dy}; });
    return y;
}

Tensor pow(const Tensor& x, Scalar e) {
    runtime::check_floating("pow", x);
    Tensor y = runtime::unary(UnaryOp::pow_scalar, x, e);
    if (should_record({&x}))
        record("pow", {&x}, y, [sx = save(x), e](const Tensor& dy) {
            return Grads{dy * e * pow(sx.get(), e - 1)};
        });
    return y;
}

Tensor pow(const Tensor& a, const Tensor& b) {
    Tensor y = runtime::binary(BinaryOp::pow, a, b, "pow");
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

Tensor pow(Scalar s, const Tensor& x) {
    Tensor y = runtime::unary(UnaryOp::rpow_scalar, x, s);
    if (should_record({&x}))
        record("pow", {&x}, y, [sy = save_output(y), s](const Tensor& dy) {
            return Grads{dy * sy.get() * std::log(s)};
        });
    torch_name(y, "PowBackward2");
    return y;
}

Tensor sqrt(const Tensor& x) {
    runtime::check_floating("sqrt", x);
    Tensor y = runtime::unary(UnaryOp::sqrt, x);
    if (should_record({&x}))
        record("sqrt", {&x}, y, [sy = save_output(y)](const Tensor& dy) {
            const Tensor yy = sy.get();
            if (GradMode::is_enabled())
                return Grads{dy / (yy * 2)};
            return Grads{runtime::binary(BinaryOp::sqrt_backward, dy, yy, "sqrt")};
        });
    return y;
}

Tensor rsqrt(const Tensor& x) {
    runtime::check_floating("rsqrt", x);
    Tensor y = runtime::unary(UnaryOp::rsqrt, x);
    if (should_record({&x}))  // d/dx x^(-1/2) = -y^3 / 2
        record("rsqrt", {&x}, y, [sy = save_output(y)](const Tensor& dy) {
            const Tensor yy = sy.get();
            return Grads{dy * (yy * yy * yy) * -0.5};
        });
    return y;
}

Tensor square(const Tensor& x) {
    return x.dtype() == kInt64 ? mul(x, x) : pow(x, 2);
}

Tensor exp(const Tensor& x) {
    runtime::check_floating("exp", x);
    Tensor y = runtime::unary(UnaryOp::exp, x);
    if (should_record({&x}))
        record("exp", {&x}, y,
               [sy = save_output(y)](const Tensor& dy) { return Grads{dy * sy.get()}; });
    return y;
}

Tensor log(const Tensor& x) {
    runtime::check_floating("log", x);
    Tensor y = runtime::unary(UnaryOp::log, x);
    if (should_record({&x}))
        record("log", {&x}, y, [sx = save(x)](const Tensor& dy) { return Grads{dy / sx.get()}; });
    return y;
}

Tensor log1p(const Tensor& x) {
    runtime::check_floating("log1p", x);
    Tensor y = runtime::unary(UnaryOp::log1p, x);
    if (should_record({&x}))
        record("log1p", {&x}, y,
               [sx = save(x)](const Tensor& dy) { return Grads{dy / (sx.get() + 1)}; });
    return y;
}

Tensor expm1(const Tensor& x) {
    runtime::check_floating("expm1", x);
    Tensor y = runtime::unary(UnaryOp::expm1, x);
    if (should_record({&x}))
        record("expm1", {&x}, y,
               [sy = save_output(y)](const Tensor& dy) { return Grads{dy * (sy.get() + 1)}; });
    return y;
}

Tensor sin(const Tensor& x) {
    runtime::check_floating("sin", x);
    Tensor y = runtime::unary(UnaryOp::sin, x);
    if (should_record({&x}))
        record("sin", {&x}, y,
               [sx = save(x)](const Tensor& dy) { return Grads{dy * cos(sx.get())}; });
    return y;
}

Tensor cos(const Tensor& x) {
    runtime::check_floating("cos", x);
    Tensor y = runtime::unary(UnaryOp::cos, x);
    if (should_record({&x}))
        record("cos", {&x}, y,
               [sx = save(x)](const Tensor& dy) { return Grads{-dy * sin(sx.get())}; });
    return y;
}

Tensor abs(const Tensor& x) {
    Tensor y = runtime::unary(UnaryOp::abs, x);
    if (should_record({&x}))
        record("abs", {&x}, y, [sx = save(x)](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (GradMode::is_enabled())
                return Grads{dy * runtime::unary(UnaryOp::sign, xx)};
            return Grads{runtime::binary(BinaryOp::abs_backward, dy, xx, "abs")};
        });
    return y;
}

namespace {
/// min(max(x, lo), hi) for lo <= hi (infinite bounds for one-sided clamps).
Tensor clamp_between(const Tensor& x, Scalar lo, Scalar hi) {
    Tensor y = runtime::unary(UnaryOp::clamp, x, lo, hi);
    if (should_record({&x}))
        record("clamp", {&x}, y, [sx = save(x), lo, hi](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (GradMode::is_enabled())  // the mask is a constant of the second derivative
                return Grads{dy * runtime::binary(BinaryOp::clamp_backward, ones_like(xx), xx,
                                                  "clamp", lo, hi)};
            return Grads{runtime::binary(BinaryOp::clamp_backward, dy, xx, "clamp", lo, hi)};
        });
    return y;
}
}  // namespace

Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
    if (!lo && !hi)
        throw value_error("clamp: at least one of min and max must be given");
    if ((lo && std::isnan(*lo)) || (hi && std::isnan(*hi)))
        throw value_error("clamp: a bound is nan");
    const double inf = std::numeric_limits<double>::infinity();
    if (lo && hi && *lo > *hi)  // LibTorch: every element becomes max, with no gradient
        return clamp_between(clamp_between(x, *lo, inf), -inf, *hi);
    return clamp_between(x, lo.value_or(-inf), hi.value_or(inf));
}
Tensor clamp_min(const Tensor& x, Scalar lo) {
    return clamp(x, lo, std::nullopt);
}
Tensor clamp_max(const Tensor& x, Scalar hi) {
    return clamp(x, std::nullopt, hi);
}

namespace {
/// maximum (is_max) or minimum; ties split the gradient evenly.
Tensor extremum(const Tensor& a, const Tensor& b, bool is_max) {
    const char* name = is_max ? "maximum" : "minimum";
    Tensor y = runtime::binary(is_max ? BinaryOp::maximum : BinaryOp::minimum, a, b, name);
    if (should_record({&a, &b}))
        record(name, {&a, &b}, y,
               [sa = save(a), sb = save(b), is_max](const Tensor& dy, const Node& n) {
                   const Tensor aa = sa.get(), bb = sb.get();
                   // share(u, v) = (u > v) + (u == v)/2: the part of dy that goes to u
                   auto share = [&](const Tensor& u, const Tensor& v) {
                       return runtime::binary(BinaryOp::max_grad_share, u, v, "maximum");
                   };
                   return Grads{
                       needs(n, 0) ? grad_for(n, 0, dy * (is_max ? share(aa, bb) : share(bb, aa)))
                                   : Tensor(),
                       needs(n, 1) ? grad_for(n, 1, dy * (is_max ? share(bb, aa) : share(aa, bb)))
                                   : Tensor()};
               });
    return y;
}
}  // namespace
Tensor maximum(const Tensor& a, const Tensor& b) {
    return extremum(a, b, true);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
    return extremum(a, b, false);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
    checks::is_bool("where", "condition", cond);
    runtime::check_same("where", a, b);
    if (cond.device() != a.device())
        throw device_error("where: condition on " + cond.device().str() + ", values on " +
                           a.device().str());
    const Shape s =
        broadcast_shapes(cond.sizes(), broadcast_shapes(a.sizes(), b.sizes(), "where"), "where");
    Tensor y = runtime::empty(s, a.dtype(), a.device(), "where");
    Shape sc, sa, sb;
    runtime::be(y).where(runtime::view(y), runtime::broadcast_view(cond, s, sc),
                         runtime::broadcast_view(a, s, sa), runtime::broadcast_view(b, s, sb));
    if (should_record({&a, &b}))
        record("where", {&a, &b}, y, [sc2 = save(cond)](const Tensor& dy, const Node& n) {
            const Tensor c = sc2.get();
            const Tensor zero = zeros({}, dy.options());
            return Grads{needs(n, 0) ? grad_for(n, 0, where(c, dy, zero)) : Tensor(),
                         needs(n, 1) ? grad_for(n, 1, where(c, zero, dy)) : Tensor()};
        });
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
Tensor operator/(const Tensor& a_in, Scalar s) {
    Tensor keep;
    const Tensor& a = number(a_in, keep);
    if (!is_floating(a.dtype()))  // int64 divides (truncating), never records; by 0 it throws
        return runtime::unary(UnaryOp::div_scalar, a, s);
    const ComposedName named;
    return named(mul(a, 1.0 / s), "div", "DivBackward1");
}
Tensor operator+(Scalar s, const Tensor& a) {
    return add(a, s);
}
Tensor operator-(Scalar s, const Tensor& a) {
    check_no_bool_sub(a);
    Tensor y = runtime::unary(UnaryOp::rsub_scalar, a, s);
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
