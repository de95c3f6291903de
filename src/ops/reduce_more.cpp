// prod, median, kthvalue and bincount (tapegrad/reduce_ops.hpp; cumprod is with cumsum in
// sort.cpp): composed from elementwise products, the host sort (Note [Sorting on the host]),
// gather and index_add, so every backend runs them.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
/// x's product along d, keeping d (size 1): halves multiplied pairwise, log2(n) elementwise
/// passes on the tensor's device; an empty dim gives ones. Unrecorded.
Tensor product_along(const Tensor& x, int64_t d) {
    NoGradGuard g;
    int64_t n = x.size(d);
    if (n == 0) {
        Shape s = x.sizes();
        s[size_t(d)] = 1;
        return ones(s, x.options());
    }
    Tensor y = x.clone();
    while (n > 1) {
        const int64_t h = n / 2;
        Tensor z = y.narrow(d, 0, h) * y.narrow(d, h, h);
        if (n % 2) {
            Tensor first = z.narrow(d, 0, 1);
            first.mul_(y.narrow(d, 2 * h, 1));
        }
        y = z;
        n = h;
    }
    return y;
}

/// Π_{j != i} x_j along d for each i, as the exclusive products from the left times those from
/// the right (two cumprods): exact with any number of zeros, and differentiable again.
Tensor others_product(const Tensor& x, int64_t d) {
    const int64_t n = x.size(d);
    if (n <= 1)
        return ones_like(x);
    const Tensor one = ones_like(x.narrow(d, 0, 1));
    const Tensor left = cumprod(cat({one, x.narrow(d, 0, n - 1)}, d), d);
    const Tensor right = flip(cumprod(flip(cat({x.narrow(d, 1, n - 1), one}, d), {d}), d), {d});
    return left * right;
}

/// x in the dtype LibTorch's prod computes in: dtype if given, int64 for integers and bool.
Tensor product_input(const Tensor& x, std::optional<Dtype> dtype) {
    if (dtype)
        return x.to(*dtype);
    return is_integral(x.dtype(), true) ? x.to(kInt64) : x;
}

/// The position along d (int64, d kept) of each row's k-th smallest (from 0), NaN above every
/// number; with first_nan, a row holding a NaN gives its first NaN (median's rule).
Tensor position(const Tensor& x, int64_t d, int64_t k, bool first_nan) {
    NoGradGuard g;
    const Tensor order = argsort(x, d);
    Tensor at = full({}, double(k), TensorOptions(kInt64).device(x.device()));
    if (first_nan && is_floating(x.dtype())) {
        const Tensor nans = sum(isnan(x), {d}, true);  // stable sort: the first NaN is at n - nans
        at = where(gt(nans, 0), x.size(d) - nans, at.expand(nans.sizes()));
    }
    Shape s = x.sizes();
    s[size_t(d)] = 1;
    return gather(order, d, at.expand(s).contiguous());
}

/// (values, indices) at position k along dim (median: first_nan), LibTorch's checks.
std::tuple<Tensor, Tensor> select_kth(const char* op, const char* torch, const Tensor& x_in,
                                      int64_t k, int64_t dim, bool keepdim, bool first_nan) {
    checks::defined(op, x_in);
    const Tensor x = x_in.dim() ? x_in : x_in.reshape({1});
    const int64_t d = wrap_dim(dim, x.dim(), op), n = x.size(d);
    if (n == 0)
        throw shape_error(std::string(op) + ": cannot reduce dim " + std::to_string(d) +
                          " of size 0 of " + shape_str(x_in.sizes()));
    if (k < 0 || k >= n)
        throw value_error(std::string(op) + ": k " + std::to_string(k + 1) +
                          " is out of range [1, " + std::to_string(n) + "] for dim " +
                          std::to_string(d) + " of " + shape_str(x_in.sizes()));
    Tensor idx = position(x, d, k, first_nan);
    const ComposedName named;
    Tensor v = gather(x, d, idx);
    if (!x_in.dim()) {
        v = v.reshape({});
        idx = idx.reshape({});
    } else if (!keepdim) {
        v = v.squeeze(d);
        idx = idx.squeeze(d);
    }
    return {named(v, op, torch), idx};
}
}  // namespace

Tensor prod(const Tensor& x_in, int64_t dim, bool keepdim, std::optional<Dtype> dtype) {
    checks::defined("prod", x_in);
    const Tensor x = product_input(x_in, dtype);
    if (x.dim() == 0) {
        wrap_dim(dim, 1, "prod");
        const ComposedName named;
        return named(x * 1, "prod", "ProdBackward1");
    }
    const int64_t d = wrap_dim(dim, x.dim(), "prod");
    Tensor y = product_along(x, d);
    if (!keepdim)
        y = y.squeeze(d);
    if (should_record({&x})) {  // dx = dy·Π_{j≠i} x_j
        record("prod", {&x}, y, [sx = save(x), sy = save_output(y), d, keepdim](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (xx.numel() == 0)
                return Grads{zeros_like(xx)};
            const Tensor g = keepdim ? dy : dy.unsqueeze(d);
            bool has_zero;
            {
                NoGradGuard ng;
                has_zero = eq(xx, 0).any().item<bool>();
            }
            if (!has_zero)  // one pass, as LibTorch's: y/x_i is the product of the others
                return Grads{g * (keepdim ? sy.get() : sy.get().unsqueeze(d)) / xx};
            return Grads{g * others_product(xx, d)};
        });
        torch_name(y, "ProdBackward1");
    }
    return y;
}
Tensor prod(const Tensor& x, std::optional<Dtype> dtype) {
    checks::defined("prod", x);
    const ComposedName named;
    return named(prod(x.reshape({-1}), 0, false, dtype), "prod", "ProdBackward0");
}

Tensor median(const Tensor& x_in) {
    checks::defined("median", x_in);
    const Tensor x = x_in.reshape({-1});
    const int64_t n = x.size(0);
    if (n == 0) {
        if (!is_floating(x_in.dtype()))
            throw shape_error(std::string("median: cannot take the median of an empty ") +
                              dtype_name(x_in.dtype()) + " tensor " + shape_str(x_in.sizes()));
        return full({}, std::nan(""), x_in.options());
    }
    Tensor y;
    {
        NoGradGuard g;
        y = gather(x, 0, position(x, 0, (n - 1) / 2, true)).reshape({});
    }
    if (should_record({&x_in})) {  // dy shared by the elements equal to y (NaNs if y is NaN)
        Tensor hit;
        {
            NoGradGuard g;
            hit = isnan(y).item<bool>() ? isnan(x_in) : eq(x_in, y);
            hit = hit.to(x_in.dtype());
            hit = hit / sum(hit);
        }
        record("median", {&x_in}, y, [hit](const Tensor& dy) { return Grads{dy * hit}; });
        torch_name(y, "MedianBackward0");
    }
    return y;
}
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim) {
    checks::defined("median", x);
    const int64_t n = x.dim() ? x.size(wrap_dim(dim, x.dim(), "median")) : 1;
    return select_kth("median", "MedianBackward1", x, (n - 1) / 2, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
    return select_kth("kthvalue", "KthvalueBackward0", x, k - 1, dim, keepdim, false);
}

Tensor bincount(const Tensor& x, const Tensor& weights, int64_t minlength) {
    checks::defined("bincount", x);
    if (!is_integral(x.dtype(), false))
        throw dtype_error(std::string("bincount: expected an integer tensor, got ") +
                          dtype_name(x.dtype()) + " " + shape_str(x.sizes()));
    if (x.dim() != 1)
        throw shape_error("bincount: expected a 1-D tensor, got " + shape_str(x.sizes()));
    if (minlength < 0)
        throw value_error("bincount: minlength " + std::to_string(minlength) + " should be >= 0");
    if (weights.defined() && (weights.dim() != 1 || weights.size(0) != x.size(0)))
        throw shape_error("bincount: weights " + shape_str(weights.sizes()) +
                          " should be 1-D with the input's length " + shape_str(x.sizes()));
    NoGradGuard g;
    const Tensor idx = x.to(kInt64);
    int64_t len = minlength;
    if (x.numel() > 0) {
        if (lt(idx, 0).any().item<bool>())
            throw value_error("bincount: expected non-negative values in " + shape_str(x.sizes()));
        len = std::max(len, max(idx).item<int64_t>() + 1);
    }
    if (!weights.defined())
        return index_add(ones({x.size(0)}, idx.options()), {len}, 0, idx);
    const Dtype out = weights.dtype() == kFloat32 ? kFloat32 : kFloat64;
    return index_add(weights.detach().to(out), {len}, 0, idx);
}

namespace detail {
// clang-format off
Tensor TensorMethods::prod(std::optional<Dtype> dtype) const { return tg::prod(self(), dtype); }
Tensor TensorMethods::prod(int64_t dim, bool keepdim, std::optional<Dtype> dtype) const {
    return tg::prod(self(), dim, keepdim, dtype);
}
Tensor TensorMethods::cumprod(int64_t dim, std::optional<Dtype> dtype) const {
    return tg::cumprod(self(), dim, dtype);
}
Tensor TensorMethods::median() const { return tg::median(self()); }
std::tuple<Tensor, Tensor> TensorMethods::median(int64_t dim, bool keepdim) const {
    return tg::median(self(), dim, keepdim);
}
std::tuple<Tensor, Tensor> TensorMethods::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
    return tg::kthvalue(self(), k, dim, keepdim);
}
Tensor TensorMethods::bincount() const { return tg::bincount(self()); }
Tensor TensorMethods::bincount(const Tensor& weights, int64_t minlength) const {
    return tg::bincount(self(), weights, minlength);
}
// clang-format on
}  // namespace detail
}  // namespace tg
