// LibTorch's in-place spellings of the pointwise ops (tapegrad/tensor_methods.hpp,
// tapegrad/inplace_ops.hpp), each the out-of-place op written into x by detail::apply_inplace
// (Note [In-place ops] in inplace.cpp), and the composed pointwise ops reciprocal, frac,
// addcmul, addcdiv and lerp.
//
// keep_old says whether the op's backward reads its input, which the write destroys: relu,
// sigmoid, tanh, exp, sqrt, rsqrt and expm1 save their output (the value written into x, kept
// in a buffer of its own), so they write with no copy; the others read a copy of the old x when
// recording, as PyTorch keeps the original self.
#include <string>

#include "autograd/record.hpp"
#include "ops/inplace.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
using Fn = Tensor (*)(const Tensor&);
Tensor& unary_(Tensor& x, const char* name, Fn f, bool keep_old) {
    return detail::apply_inplace(x, name, {}, f, keep_old);
}
}  // namespace

Tensor reciprocal(const Tensor& x) {
    const ComposedName named;
    return named(1.0 / promote::floating(x), "reciprocal", "ReciprocalBackward0");
}
Tensor frac(const Tensor& x) {
    runtime::check_floating("frac", x);
    const ComposedName named;
    return named(x - trunc(x), "frac", "FracBackward0");
}
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
    const ComposedName named;
    return named(self + t1 * t2 * value, "addcmul", "AddcmulBackward0");
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
    if (t1.defined() && t2.defined() && is_integral(t1.dtype(), true) &&
        is_integral(t2.dtype(), true))
        throw dtype_error(
            "addcdiv: integer division with addcdiv is no longer supported (tensor1 " +
            std::string(dtype_name(t1.dtype())) + " " + shape_str(t1.sizes()) + ", tensor2 " +
            dtype_name(t2.dtype()) + " " + shape_str(t2.sizes()) + ")");
    const ComposedName named;
    return named(self + t1 / t2 * value, "addcdiv", "AddcdivBackward0");
}
namespace {
/// LibTorch's lerp takes end and weight in self's dtype only.
void check_lerp(const Tensor& self, const Tensor& t, const char* what) {
    runtime::check_floating("lerp", self);
    if (!t.defined())
        throw value_error(std::string("lerp: undefined ") + what);
    if (t.dtype() != self.dtype())
        throw dtype_error(std::string("lerp: expected dtype ") + dtype_name(self.dtype()) +
                          " for `" + what + "` but got dtype " + dtype_name(t.dtype()) + " " +
                          shape_str(t.sizes()));
}
}  // namespace

Tensor lerp(const Tensor& self, const Tensor& end, Scalar weight) {
    check_lerp(self, end, "end");
    const ComposedName named;
    return named(self + (end - self) * weight, "lerp", "LerpBackward0");
}
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
    check_lerp(self, end, "end");
    check_lerp(self, weight, "weight");
    const ComposedName named;
    return named(self + (end - self) * weight, "lerp", "LerpBackward1");
}

Tensor& relu_(Tensor& x) {
    return unary_(x, "relu_", relu, false);
}
Tensor& sigmoid_(Tensor& x) {
    return unary_(x, "sigmoid_", sigmoid, false);
}
Tensor& tanh_(Tensor& x) {
    return unary_(x, "tanh_", tanh, false);
}
Tensor& exp_(Tensor& x) {
    return unary_(x, "exp_", exp, false);
}
Tensor& log_(Tensor& x) {
    return unary_(x, "log_", log, true);
}
Tensor& sqrt_(Tensor& x) {
    return unary_(x, "sqrt_", sqrt, false);
}
Tensor& rsqrt_(Tensor& x) {
    return unary_(x, "rsqrt_", rsqrt, false);
}
Tensor& abs_(Tensor& x) {
    return unary_(x, "abs_", abs, true);
}
Tensor& neg_(Tensor& x) {
    return unary_(x, "neg_", neg, true);
}
Tensor& floor_(Tensor& x) {
    return unary_(x, "floor_", floor, true);
}
Tensor& ceil_(Tensor& x) {
    return unary_(x, "ceil_", ceil, true);
}
Tensor& round_(Tensor& x) {
    return unary_(x, "round_", round, true);
}
Tensor& trunc_(Tensor& x) {
    return unary_(x, "trunc_", trunc, true);
}
Tensor& frac_(Tensor& x) {
    return unary_(x, "frac_", frac, true);
}
Tensor& reciprocal_(Tensor& x) {
    return unary_(x, "reciprocal_", reciprocal, true);
}
Tensor& sin_(Tensor& x) {
    return unary_(x, "sin_", sin, true);
}
Tensor& cos_(Tensor& x) {
    return unary_(x, "cos_", cos, true);
}
Tensor& log1p_(Tensor& x) {
    return unary_(x, "log1p_", log1p, true);
}
Tensor& expm1_(Tensor& x) {
    return unary_(x, "expm1_", expm1, false);
}
Tensor& clamp_(Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
    return detail::apply_inplace(
        x, "clamp_", {}, [&](const Tensor& t) { return clamp(t, lo, hi); }, true);
}
Tensor& clamp_min_(Tensor& x, Scalar lo) {
    return detail::apply_inplace(
        x, "clamp_min_", {}, [&](const Tensor& t) { return clamp_min(t, lo); }, true);
}
Tensor& clamp_max_(Tensor& x, Scalar hi) {
    return detail::apply_inplace(
        x, "clamp_max_", {}, [&](const Tensor& t) { return clamp_max(t, hi); }, true);
}

namespace detail {

Tensor& TensorMethods::self() {
    return static_cast<Tensor&>(*this);
}
const Tensor& TensorMethods::self() const {
    return static_cast<const Tensor&>(*this);
}

// clang-format off
Tensor& TensorMethods::relu_() { return tg::relu_(self()); }
Tensor& TensorMethods::sigmoid_() { return tg::sigmoid_(self()); }
Tensor& TensorMethods::tanh_() { return tg::tanh_(self()); }
Tensor& TensorMethods::exp_() { return tg::exp_(self()); }
Tensor& TensorMethods::log_() { return tg::log_(self()); }
Tensor& TensorMethods::sqrt_() { return tg::sqrt_(self()); }
Tensor& TensorMethods::rsqrt_() { return tg::rsqrt_(self()); }
Tensor& TensorMethods::abs_() { return tg::abs_(self()); }
Tensor& TensorMethods::neg_() { return tg::neg_(self()); }
Tensor& TensorMethods::sign_() { return unary_(self(), "sign_", sign, true); }
Tensor& TensorMethods::floor_() { return tg::floor_(self()); }
Tensor& TensorMethods::ceil_() { return tg::ceil_(self()); }
Tensor& TensorMethods::round_() { return tg::round_(self()); }
Tensor& TensorMethods::trunc_() { return tg::trunc_(self()); }
Tensor& TensorMethods::frac_() { return tg::frac_(self()); }
Tensor& TensorMethods::reciprocal_() { return tg::reciprocal_(self()); }
Tensor& TensorMethods::square_() { return unary_(self(), "square_", square, true); }
Tensor& TensorMethods::sin_() { return tg::sin_(self()); }
Tensor& TensorMethods::cos_() { return tg::cos_(self()); }
Tensor& TensorMethods::log1p_() { return tg::log1p_(self()); }
Tensor& TensorMethods::expm1_() { return tg::expm1_(self()); }
Tensor& TensorMethods::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
    return tg::clamp_(self(), lo, hi);
}
Tensor& TensorMethods::clamp_min_(Scalar lo) { return tg::clamp_min_(self(), lo); }
Tensor& TensorMethods::clamp_max_(Scalar hi) { return tg::clamp_max_(self(), hi); }
Tensor TensorMethods::neg() const { return tg::neg(self()); }
Tensor TensorMethods::trunc() const { return tg::trunc(self()); }
Tensor TensorMethods::frac() const { return tg::frac(self()); }
Tensor TensorMethods::reciprocal() const { return tg::reciprocal(self()); }
// clang-format on

Tensor& TensorMethods::pow_(Scalar e) {
    return apply_inplace(
        self(), "pow_", {}, [&](const Tensor& t) { return tg::pow(t, e); }, true);
}
Tensor& TensorMethods::pow_(const Tensor& e) {
    return apply_inplace(
        self(), "pow_", {&e}, [&](const Tensor& t) { return tg::pow(t, e); }, true);
}
Tensor& TensorMethods::fmod_(Scalar b) {
    return apply_inplace(
        self(), "fmod_", {}, [&](const Tensor& t) { return tg::fmod(t, b); }, true);
}
Tensor& TensorMethods::fmod_(const Tensor& b) {
    return apply_inplace(
        self(), "fmod_", {&b}, [&](const Tensor& t) { return tg::fmod(t, b); }, true);
}
Tensor& TensorMethods::remainder_(Scalar b) {
    return apply_inplace(
        self(), "remainder_", {}, [&](const Tensor& t) { return tg::remainder(t, b); }, true);
}
Tensor& TensorMethods::remainder_(const Tensor& b) {
    return apply_inplace(
        self(), "remainder_", {&b}, [&](const Tensor& t) { return tg::remainder(t, b); }, true);
}
Tensor& TensorMethods::masked_fill_(const Tensor& mask, Scalar value) {
    return apply_inplace(
        self(), "masked_fill_", {},
        [&](const Tensor& t) { return tg::masked_fill(t, mask, value); }, true);
}
Tensor& TensorMethods::masked_fill_(const Tensor& mask, const Tensor& value) {
    if (value.defined() && value.dim() != 0)
        throw shape_error(
            "masked_fill_: only supports a 0-dimensional value tensor, but got tensor with " +
            std::to_string(value.dim()) + " dimension(s) " + shape_str(value.sizes()));
    return apply_inplace(
        self(), "masked_fill_", {&value},
        [&](const Tensor& t) { return tg::where(mask, value.to(t.dtype()), t); }, true);
}
Tensor& TensorMethods::addcmul_(const Tensor& t1, const Tensor& t2, Scalar value) {
    return apply_inplace(
        self(), "addcmul_", {&t1, &t2},
        [&](const Tensor& t) { return tg::addcmul(t, t1, t2, value); }, true);
}
Tensor& TensorMethods::addcdiv_(const Tensor& t1, const Tensor& t2, Scalar value) {
    return apply_inplace(
        self(), "addcdiv_", {&t1, &t2},
        [&](const Tensor& t) { return tg::addcdiv(t, t1, t2, value); }, true);
}
Tensor& TensorMethods::lerp_(const Tensor& end, Scalar weight) {
    return apply_inplace(
        self(), "lerp_", {&end}, [&](const Tensor& t) { return tg::lerp(t, end, weight); }, true);
}
Tensor& TensorMethods::lerp_(const Tensor& end, const Tensor& weight) {
    return apply_inplace(
        self(), "lerp_", {&end, &weight}, [&](const Tensor& t) { return tg::lerp(t, end, weight); },
        true);
}
Tensor TensorMethods::addcmul(const Tensor& t1, const Tensor& t2, Scalar value) const {
    return tg::addcmul(self(), t1, t2, value);
}
Tensor TensorMethods::addcdiv(const Tensor& t1, const Tensor& t2, Scalar value) const {
    return tg::addcdiv(self(), t1, t2, value);
}
Tensor TensorMethods::lerp(const Tensor& end, Scalar weight) const {
    return tg::lerp(self(), end, weight);
}
Tensor TensorMethods::lerp(const Tensor& end, const Tensor& weight) const {
    return tg::lerp(self(), end, weight);
}

}  // namespace detail
}  // namespace tg
