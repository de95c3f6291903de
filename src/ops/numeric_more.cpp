// std, isnan/isinf/isfinite, nan_to_num, count_nonzero, dot/mv/outer, diag/trace, clip and sgn
// (tapegrad/numeric_ops.hpp), composed from var, comparisons, where, matmul and the index ops.
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
#include "ops/inplace.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
void check_vector(const char* op, const Tensor& t, const char* what) {
    checks::defined(op, t);
    if (t.dim() != 1)
        throw shape_error(std::string(op) + ": " + what + " must be 1-D, got " +
                          shape_str(t.sizes()));
}
/// The largest finite value of a floating dtype.
double largest(Dtype d) {
    switch (d) {
        case kFloat16:
            return 65504.0;
        case kBFloat16:
            return 3.3895313892515355e38;
        case kFloat32:
            return double(FLT_MAX);
        default:
            return DBL_MAX;
    }
}
}  // namespace

Tensor std(const Tensor& x, bool unbiased) {
    const ComposedName named;
    return named(sqrt(var(x, unbiased)), "std", "StdBackward0");
}
Tensor std(const Tensor& x, const std::vector<int64_t>& dims, bool unbiased, bool keepdim) {
    const ComposedName named;
    return named(sqrt(var(x, dims, unbiased, keepdim)), "std", "StdBackward0");
}
Tensor std(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased, bool keepdim) {
    return tg::std(x, std::vector<int64_t>(dims), unbiased, keepdim);
}
Tensor std(const Tensor& x, int dim) {
    return tg::std(x, std::vector<int64_t>{dim});
}

Tensor isnan(const Tensor& x) {
    checks::defined("isnan", x);
    NoGradGuard g;
    return is_floating(x.dtype()) ? ne(x, x) : zeros(x.sizes(), x.options().dtype(kBool));
}
Tensor isinf(const Tensor& x) {
    checks::defined("isinf", x);
    NoGradGuard g;
    if (!is_floating(x.dtype()))
        return zeros(x.sizes(), x.options().dtype(kBool));
    return eq(abs(x), std::numeric_limits<double>::infinity());
}
Tensor isfinite(const Tensor& x) {
    checks::defined("isfinite", x);
    NoGradGuard g;
    if (!is_floating(x.dtype()))
        return ones(x.sizes(), x.options().dtype(kBool));
    return lt(abs(x), std::numeric_limits<double>::infinity());  // NaN < inf is false
}

Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
    checks::defined("nan_to_num", x);
    if (!is_floating(x.dtype()))
        return x.clone();
    const double big = largest(x.dtype());
    const TensorOptions o = x.options().requires_grad(false);
    Tensor bad_nan, bad_pos, bad_neg;
    {
        NoGradGuard g;
        bad_nan = ne(x, x);
        bad_pos = eq(x, std::numeric_limits<double>::infinity());
        bad_neg = eq(x, -std::numeric_limits<double>::infinity());
    }
    const ComposedName named;
    Tensor y = where(bad_nan, full({}, nan.value_or(0.0), o), x);
    y = where(bad_pos, full({}, posinf.value_or(big), o), y);
    y = where(bad_neg, full({}, neginf.value_or(-big), o), y);
    return named(y, "nan_to_num", "NanToNumBackward0");
}
Tensor& nan_to_num_(Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                    std::optional<double> neginf) {
    return detail::apply_inplace(
        x, "nan_to_num_", {}, [&](const Tensor& t) { return nan_to_num(t, nan, posinf, neginf); },
        false);
}

Tensor count_nonzero(const Tensor& x, const std::vector<int64_t>& dims) {
    checks::defined("count_nonzero", x);
    NoGradGuard g;
    const Tensor nz = ne(x, 0).to(kInt64);
    return dims.empty() ? sum(nz) : sum(nz, dims);
}
Tensor count_nonzero(const Tensor& x, std::optional<int64_t> dim) {
    return count_nonzero(x, dim ? std::vector<int64_t>{*dim} : std::vector<int64_t>{});
}

Tensor dot(const Tensor& a, const Tensor& b) {
    check_vector("dot", a, "self");
    check_vector("dot", b, "other");
    checks::same_dtype("dot", "self", a, "tensor", b);
    if (a.size(0) != b.size(0))
        throw shape_error("dot: inconsistent tensor size, expected tensor " + shape_str(a.sizes()) +
                          " and src " + shape_str(b.sizes()) +
                          " to have the same number of elements");
    const ComposedName named;
    return named(matmul(a, b), "dot", "DotBackward0");
}
Tensor mv(const Tensor& a, const Tensor& v) {
    checks::defined("mv", a);
    if (a.dim() != 2)
        throw shape_error("mv: self must be 2-D, got " + shape_str(a.sizes()));
    check_vector("mv", v, "vec");
    checks::same_dtype("mv", "self", a, "vec", v);
    if (a.size(1) != v.size(0))
        throw shape_error("mv: " + shape_str(a.sizes()) + " x " + shape_str(v.sizes()) +
                          ": inner dimensions " + std::to_string(a.size(1)) +
                          " != " + std::to_string(v.size(0)));
    const ComposedName named;
    return named(matmul(a, v), "mv", "MvBackward0");
}
Tensor outer(const Tensor& a, const Tensor& b) {
    check_vector("outer", a, "self");
    check_vector("outer", b, "vec2");
    const ComposedName named;
    return named(a.reshape({-1, 1}) * b, "outer", "MulBackward0");
}
Tensor ger(const Tensor& a, const Tensor& b) {
    return outer(a, b);
}

Tensor diag(const Tensor& x, int64_t k) {
    checks::defined("diag", x);
    const TensorOptions idx = TensorOptions(kInt64).device(x.device());
    const ComposedName named;
    if (x.dim() == 1) {
        const int64_t n = x.size(0), m = n + (k < 0 ? -k : k);
        const int64_t first = k >= 0 ? k : -k * m;  // (0, k) or (-k, 0), flattened
        const Tensor at = arange(n, idx) * (m + 1) + first;
        return named(index_add(x, {m * m}, 0, at).view({m, m}), "diag", "DiagBackward0");
    }
    if (x.dim() != 2)
        throw shape_error("diag: supports 1-D or 2-D tensors, got " + shape_str(x.sizes()));
    const int64_t r = x.size(0), c = x.size(1);
    const int64_t len = std::max<int64_t>(k >= 0 ? std::min(r, c - k) : std::min(r + k, c), 0);
    const int64_t first = k >= 0 ? k : -k * c;
    const Tensor at = arange(len, idx) * (c + 1) + first;
    return named(index_select(x.reshape({-1}), 0, at), "diag", "DiagBackward0");
}
Tensor trace(const Tensor& x) {
    checks::defined("trace", x);
    if (x.dim() != 2)
        throw shape_error("trace: expected a matrix, got " + shape_str(x.sizes()));
    const ComposedName named;
    return named(sum(diag(x)), "trace", "TraceBackward0");
}

Tensor clip(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
    return clamp(x, lo, hi);
}
Tensor& clip_(Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
    return clamp_(x, lo, hi);
}
Tensor sgn(const Tensor& x) {
    return sign(x);
}

namespace detail {
// clang-format off
Tensor TensorMethods::std(bool unbiased) const { return tg::std(self(), unbiased); }
Tensor TensorMethods::std(const std::vector<int64_t>& dims, bool unbiased, bool keepdim) const {
    return tg::std(self(), dims, unbiased, keepdim);
}
Tensor TensorMethods::std(std::initializer_list<int64_t> dims, bool unbiased, bool keepdim) const {
    return tg::std(self(), dims, unbiased, keepdim);
}
Tensor TensorMethods::std(int dim) const { return tg::std(self(), dim); }
Tensor TensorMethods::isnan() const { return tg::isnan(self()); }
Tensor TensorMethods::isinf() const { return tg::isinf(self()); }
Tensor TensorMethods::isfinite() const { return tg::isfinite(self()); }
Tensor TensorMethods::nan_to_num(std::optional<double> nan, std::optional<double> posinf,
                                 std::optional<double> neginf) const {
    return tg::nan_to_num(self(), nan, posinf, neginf);
}
Tensor& TensorMethods::nan_to_num_(std::optional<double> nan, std::optional<double> posinf,
                                   std::optional<double> neginf) {
    return tg::nan_to_num_(self(), nan, posinf, neginf);
}
Tensor TensorMethods::count_nonzero(std::optional<int64_t> dim) const {
    return tg::count_nonzero(self(), dim);
}
Tensor TensorMethods::dot(const Tensor& other) const { return tg::dot(self(), other); }
Tensor TensorMethods::mv(const Tensor& vec) const { return tg::mv(self(), vec); }
Tensor TensorMethods::outer(const Tensor& vec2) const { return tg::outer(self(), vec2); }
Tensor TensorMethods::ger(const Tensor& vec2) const { return tg::outer(self(), vec2); }
Tensor TensorMethods::diag(int64_t diagonal) const { return tg::diag(self(), diagonal); }
Tensor TensorMethods::trace() const { return tg::trace(self()); }
Tensor TensorMethods::clip(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
    return tg::clip(self(), lo, hi);
}
Tensor& TensorMethods::clip_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
    return tg::clip_(self(), lo, hi);
}
Tensor TensorMethods::sgn() const { return tg::sgn(self()); }
// clang-format on
}  // namespace detail
}  // namespace tg
