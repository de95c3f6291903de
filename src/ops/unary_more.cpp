// tan, sinh, cosh, asin, acos, atan, log2, log10, exp2, erf and erfc (tapegrad/math_ops.hpp):
// a kernels.def kernel forward, a composed VJP (so create_graph differentiates it again), and the
// in-place forms through detail::apply_inplace.
#include <cmath>
#include <string>

#include "autograd/record.hpp"
#include "ops/inplace.hpp"
#include "ops/promote.hpp"
#include "ops/unary_op.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

using detail::unary_op;
using runtime::UnaryOp;

namespace {
constexpr double kLn2 = 0.693147180559945309417232121458176568;
constexpr double kLn10 = 2.302585092994045684017991454684364208;
constexpr double kTwoOverSqrtPi = 1.128379167095512573896158903121545172;

Tensor gauss(const Tensor& x) {  // 2/√π·e^(-x²)
    return exp(-(x * x)) * kTwoOverSqrtPi;
}
}  // namespace

Tensor tan(const Tensor& x) {
    return unary_op(
        "tan", UnaryOp::tan, x,
        [](const Tensor& dy, const Tensor&, const Tensor& y) { return dy * (y * y + 1.0); }, true);
}
Tensor sinh(const Tensor& x) {
    return unary_op(
        "sinh", UnaryOp::sinh, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return dy * cosh(xx); }, false);
}
Tensor cosh(const Tensor& x) {
    return unary_op(
        "cosh", UnaryOp::cosh, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return dy * sinh(xx); }, false);
}
Tensor asin(const Tensor& x) {
    return unary_op(
        "asin", UnaryOp::asin, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return dy * rsqrt(1.0 - xx * xx); },
        false);
}
Tensor acos(const Tensor& x) {
    return unary_op(
        "acos", UnaryOp::acos, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) {
            return -dy * rsqrt(1.0 - xx * xx);
        },
        false);
}
Tensor atan(const Tensor& x) {
    return unary_op(
        "atan", UnaryOp::atan, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return dy / (xx * xx + 1.0); },
        false);
}
Tensor log2(const Tensor& x) {
    return unary_op(
        "log2", UnaryOp::log2, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return dy / (xx * kLn2); }, false);
}
Tensor log10(const Tensor& x) {
    return unary_op(
        "log10", UnaryOp::log10, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return dy / (xx * kLn10); }, false);
}
Tensor exp2(const Tensor& x) {
    return unary_op(
        "exp2", UnaryOp::exp2, x,
        [](const Tensor& dy, const Tensor&, const Tensor& y) { return dy * y * kLn2; }, true);
}
Tensor erf(const Tensor& x) {
    return unary_op(
        "erf", UnaryOp::erf, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return dy * gauss(xx); }, false);
}
Tensor erfc(const Tensor& x) {
    return unary_op(
        "erfc", UnaryOp::erfc, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return -dy * gauss(xx); }, false);
}

// tan and exp2 save their output (no copy of the old x); the others read their input
#define TG_INPLACE(f, keep_old)                                             \
    Tensor& f##_(Tensor& x) {                                               \
        return detail::apply_inplace(                                       \
            x, #f "_", {}, [](const Tensor& t) { return f(t); }, keep_old); \
    }                                                                       \
    Tensor detail::TensorMethods::f() const {                               \
        return tg::f(self());                                               \
    }                                                                       \
    Tensor& detail::TensorMethods::f##_() {                                 \
        return tg::f##_(self());                                            \
    }
TG_INPLACE(tan, false)
TG_INPLACE(sinh, true)
TG_INPLACE(cosh, true)
TG_INPLACE(asin, true)
TG_INPLACE(acos, true)
TG_INPLACE(atan, true)
TG_INPLACE(log2, true)
TG_INPLACE(log10, true)
TG_INPLACE(exp2, false)
TG_INPLACE(erf, true)
TG_INPLACE(erfc, true)
#undef TG_INPLACE

}  // namespace tg
