// bilinear, cosine_similarity, pairwise_distance and pdist: compositions of recorded ops, but for
// the p-norm of differences, one node with LibTorch's norm backward (Note [Norms of differences]).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/distance_ops.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

std::string shapes(const Tensor& a, const Tensor& b) {
    return shape_str(a.sizes()) + " and " + shape_str(b.sizes());
}

/// Both defined, floating, on one device; else the typed error naming op.
void check_two(const char* op, const Tensor& a, const Tensor& b) {
    if (!a.defined() || !b.defined())
        throw value_error(std::string(op) + ": undefined input");
    runtime::check_float_kernels(op, a);
    runtime::check_float_kernels(op, b);
    checks::same_device(op, "x2", b, a);
}

Tensor zero_like_scalar(const Tensor& t) {
    return zeros({}, t.options());
}

// Note [Norms of differences]: pairwise_distance and pdist take the p-norm of differences, which
// are often exactly 0 (equal rows) or tied. Their gradients are LibTorch's norm backward rather
// than the derivative of a composition (which is NaN at 0): 0 where the norm is 0; p = 1 sign(d);
// p = 2 d/y; p < 1 sign(d)|d|^(p-1) y^(1-p) (0 where d = 0); otherwise
// d|d|^(p-2)/y^(p-1) (sign(d)|d|^(p-1)/y^(p-1) below 2); p = ±inf the elements equal to the
// norm, sharing the gradient evenly (pdist: each gets all of it, as LibTorch's pdist kernel);
// p = 0 none. The formulas are recorded ops, so they differentiate again.
Tensor p_norm_backward(const Tensor& d, const Tensor& y, const Tensor& dy, double p, int64_t dim,
                       bool keepdim, bool inf_each) {
    Shape kept = d.sizes();
    kept[size_t(dim)] = 1;
    const Tensor yk = keepdim ? y : y.reshape(kept), gk = keepdim ? dy : dy.reshape(kept);
    const Tensor zero = zero_like_scalar(d);
    if (p == 0)
        return zeros_like(d);
    if (p == 1)
        return sign(d) * gk;
    if (std::isinf(p)) {
        const Tensor mask = eq(abs(d), yk).to(d.dtype());
        const Tensor share = inf_each ? gk : gk / sum(mask, {dim}, true);
        return sign(d) * mask * share;
    }
    const Tensor nonzero = gt(yk, 0);
    const Tensor safe_y = where(nonzero, yk, ones({}, d.options()));
    if (p < 1)  // sign(d)|d|^(p-1), 0 where d is 0, times dy·y^(1-p)
        return where(eq(d, 0), zero, sign(d) * pow(abs(d), p - 1)) *
               where(nonzero, gk * pow(safe_y, 1 - p), zero);
    const Tensor scale = where(nonzero, gk / (p == 2 ? safe_y : pow(safe_y, p - 1)), zero);
    if (p == 2)
        return d * scale;
    return (p < 2 ? sign(d) * pow(abs(d), p - 1) : d * pow(abs(d), p - 2)) * scale;
}

/// ‖d‖_p over dim (Note [Norms of differences]).
Tensor p_norm(const Tensor& d, double p, int64_t dim, bool keepdim, bool inf_each) {
    Tensor y;
    {
        NoGradGuard guard;
        const Tensor a = abs(d);
        if (p == 0)
            y = sum(ne(d, 0).to(d.dtype()), {dim}, keepdim);
        else if (std::isinf(p))
            y = d.size(dim) == 0 ? sum(a, {dim}, keepdim)
                                 : (p > 0 ? amax(a, {dim}, keepdim) : amin(a, {dim}, keepdim));
        else if (p == 1)
            y = sum(a, {dim}, keepdim);
        else if (p == 2)
            y = sqrt(sum(d * d, {dim}, keepdim));
        else
            y = pow(sum(pow(a, p), {dim}, keepdim), 1 / p);
    }
    if (should_record({&d}))
        record("norm", {&d}, y,
               [sd = save(d), sy = save_output(y), p, dim, keepdim, inf_each](const Tensor& dy) {
                   return Grads{p_norm_backward(sd.get(), sy.get(), dy, p, dim, keepdim, inf_each)};
               });
    return y;
}

/// max(‖x‖₂, eps) over dim (kept), whose gradient is x·dy / max(‖x‖₂, eps): LibTorch 1.13's
/// cosine_similarity clamps the norm in place under no_grad, and the norm's backward then reads
/// the clamped value as the norm (checked against LibTorch below eps: tests/test_nn_distance).
Tensor clamped_norm(const Tensor& x, int64_t dim, double eps) {
    Tensor y;
    {
        NoGradGuard guard;
        y = clamp_min(sqrt(sum(x * x, {dim}, true)), eps);
    }
    if (should_record({&x}))
        record("norm", {&x}, y, [sx = save(x), sy = save_output(y)](const Tensor& dy) {
            const Tensor yy = sy.get(), zero = zero_like_scalar(yy);
            const Tensor nonzero = gt(yy, 0);
            return Grads{sx.get() *
                         where(nonzero, dy / where(nonzero, yy, ones({}, yy.options())), zero)};
        });
    return y;
}

}  // namespace

Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& w, const Tensor& b) {
    const char* op = "bilinear";
    check_two(op, x1, x2);
    if (!w.defined())
        throw value_error("bilinear: undefined weight");
    runtime::check_float_kernels(op, w);
    runtime::check_same(op, x1, x2);
    runtime::check_same(op, x1, w);
    if (b.defined())
        runtime::check_same(op, x1, b);
    if (x1.dim() != x2.dim() || x1.dim() < 1)
        throw shape_error("bilinear: inputs " + shapes(x1, x2) +
                          " must have the same number of dims (at least 1)");
    for (int64_t d = 0; d + 1 < x1.dim(); ++d)
        if (x1.size(d) != x2.size(d))
            throw shape_error("bilinear: input batch dims differ: " + shapes(x1, x2));
    if (w.dim() != 3 || w.size(1) != x1.sizes().back() || w.size(2) != x2.sizes().back())
        throw shape_error("bilinear: weight " + shape_str(w.sizes()) + " must be [out, " +
                          std::to_string(x1.sizes().back()) + ", " +
                          std::to_string(x2.sizes().back()) + "] for inputs " + shapes(x1, x2));
    const int64_t out = w.size(0), in1 = w.size(1), in2 = w.size(2);
    if (b.defined()) {
        if (b.sizes() != Shape{out})
            throw shape_error("bilinear: bias " + shape_str(b.sizes()) + " must be [" +
                              std::to_string(out) + "] for weight " + shape_str(w.sizes()));
    }
    Shape lead(x1.sizes().begin(), x1.sizes().end() - 1);
    const int64_t n = numel_of(lead);
    // t[n, o, j] = Σ_i x1[n, i] w[o, i, j] (one GEMM), then y[n, o] = Σ_j t[n, o, j] x2[n, j]
    const Tensor t = matmul(x1.reshape({n, in1}), w.permute({1, 0, 2}).reshape({in1, out * in2}));
    Tensor y = matmul(t.reshape({n, out, in2}), x2.reshape({n, in2, 1})).reshape({n, out});
    if (b.defined())
        y = y + b;
    lead.push_back(out);
    return y.reshape(lead);
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
    const char* op = "cosine_similarity";
    check_two(op, x1, x2);
    const ComposedName named;
    const Shape s = broadcast_shapes(x1.sizes(), x2.sizes(), op);
    const int64_t d = wrap_dim(dim, int64_t(s.size()), op);
    const Tensor a = x1.expand(s), b = x2.expand(s);
    const Tensor na = clamped_norm(a, d, eps), nb = clamped_norm(b, d, eps);
    return named(sum((a / na) * (b / nb), {d}), op, "SumBackward1");
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
    const char* op = "pairwise_distance";
    check_two(op, x1, x2);
    const ComposedName named;
    (void)broadcast_shapes(x1.sizes(), x2.sizes(), op);  // names the op when they do not
    const Tensor diff = x1 - x2 + eps;
    if (diff.dim() == 0)  // the norm of one element
        return named(p_norm(diff.reshape({1}), p, 0, false, false), op, "NormBackward1");
    return named(p_norm(diff, p, diff.dim() - 1, keepdim, false), op, "NormBackward1");
}

Tensor pdist(const Tensor& x, double p) {
    if (!x.defined())
        throw value_error("pdist: undefined input");
    runtime::check_float_kernels("pdist", x);
    if (x.dim() != 2)
        throw shape_error("pdist: input " + shape_str(x.sizes()) + " must be 2-D [N, M]");
    if (!(p >= 0))
        throw value_error("pdist: p = " + runtime::scalar_str(p) + " must be >= 0");
    const ComposedName named;
    const int64_t n = x.size(0), pairs = n > 1 ? n * (n - 1) / 2 : 0;
    std::vector<int64_t> first, second;
    first.reserve(size_t(pairs));
    second.reserve(size_t(pairs));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i + 1; j < n; ++j)
            first.push_back(i), second.push_back(j);
    const Tensor rows_i = tensor(first).to(x.device()), rows_j = tensor(second).to(x.device());
    const Tensor diff = index_select(x, 0, rows_i) - index_select(x, 0, rows_j);  // [pairs, M]
    return named(p_norm(diff, p, 1, false, true), "pdist", "PdistBackward0");
}

}  // namespace tg
