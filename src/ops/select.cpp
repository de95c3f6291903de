// Selections: clamp, maximum, minimum, where (ops.hpp has the VJPs). Operands promote as
// LibTorch's (Note [Type promotion] in tapegrad/promotion.hpp).
#include <cmath>
#include <limits>
#include <optional>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
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
}  // namespace

namespace {
/// min(max(x, lo), hi) on floating x for lo <= hi (infinite bounds for one-sided clamps).
Tensor clamp_between(const Tensor& x, double lo, double hi) {
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

/// x and the bounds promote together (clamp(int, 0.5, 2.5) is float32) and the bounds are checked
/// into the result dtype, as LibTorch's; lo > hi gives hi everywhere, as there.
Tensor clamp(const Tensor& x_in, std::optional<Scalar> lo, std::optional<Scalar> hi) {
    if (!lo && !hi)
        throw value_error("clamp: at least one of min and max must be given");
    if ((lo && std::isnan(*lo)) || (hi && std::isnan(*hi)))
        throw value_error("clamp: a bound is nan");
    const Dtype d = lo && hi ? promote_types(result_type(x_in, *lo), result_type(x_in, *hi))
                             : result_type(x_in, lo ? *lo : *hi);
    const Tensor x = promote::to(x_in, d);
    if (lo)
        promote::checked_in(d, *lo, "clamp");  // 300 into uint8 throws
    if (hi)
        promote::checked_in(d, *hi, "clamp");
    if (is_integral(d)) {  // not differentiable; exact bounds (a missing one is no double)
        const Tensor y = lo ? maximum(x, promote::scalar_tensor(*lo, x.options())) : x;
        return hi ? minimum(y, promote::scalar_tensor(*hi, x.options())) : y;
    }
    const double inf = std::numeric_limits<double>::infinity();
    const double l = lo ? promote::value_in(d, *lo) : -inf,
                 h = hi ? promote::value_in(d, *hi) : inf;
    if (l > h)  // LibTorch: every element becomes max, with no gradient
        return clamp_between(clamp_between(x, l, inf), -inf, h);
    return clamp_between(x, l, h);
}
Tensor clamp_min(const Tensor& x, Scalar lo) {
    return clamp(x, lo, std::nullopt);
}
Tensor clamp_max(const Tensor& x, Scalar hi) {
    return clamp(x, std::nullopt, hi);
}

namespace {
/// maximum (is_max) or minimum; ties split the gradient evenly.
Tensor extremum(const Tensor& a_in, const Tensor& b_in, bool is_max) {
    const char* name = is_max ? "maximum" : "minimum";
    const auto ab = promote::both(a_in, b_in);
    const Tensor &a = ab.first, &b = ab.second;
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

Tensor where(const Tensor& cond, const Tensor& a_in, const Tensor& b_in) {
    const auto ab = promote::both(a_in, b_in);
    const Tensor &a = ab.first, &b = ab.second;
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

}  // namespace tg
