// instance_norm (ATen's composition over batch_norm), local_response_norm (LibTorch's
// composition in F::) and cross_map_lrn2d (nn::CrossMapLRN2d's function, one node with
// LibTorch's own backward).
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "ops/once_differentiable.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

std::string shape_of(const Tensor& t) {
    return t.defined() ? shape_str(t.sizes()) : "undefined";
}

/// t [C] repeated n times: [n·C] (undefined stays undefined), differentiable.
Tensor repeat_channels(const Tensor& t, int64_t n) {
    if (!t.defined())
        return t;
    return t.reshape({1, t.numel()}).expand({n, t.numel()}).reshape({n * t.numel()});
}

}  // namespace

Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const Tensor& running_mean, const Tensor& running_var, bool use_input_stats,
                     double momentum, double eps, bool) {
    if (!x.defined() || x.dim() < 2)
        throw shape_error("instance_norm: expected an input [N,C,*] with at least 2 dims, got " +
                          shape_of(x));
    if (!use_input_stats && (!running_mean.defined() || !running_var.defined()))
        throw value_error("instance_norm: input " + shape_of(x) +
                          ": use_input_stats=false needs running_mean and running_var");
    const int64_t n = x.size(0), c = x.size(1);
    for (const Tensor* t : {&weight, &bias, &running_mean, &running_var})
        if (t->defined() && (t->dim() != 1 || t->size(0) != c))
            throw shape_error("instance_norm: input " + shape_of(x) + " has " + std::to_string(c) +
                              " channels, a weight, bias or running " + "statistic is " +
                              shape_of(*t));
    if (use_input_stats && x.numel() > 0 && x.numel() == n * c)
        throw shape_error("instance_norm: input " + shape_of(x) +
                          " has 1 value per instance and channel: its statistics need more");
    Shape s = x.sizes();
    s[0] = 1;
    s[1] = n * c;
    Tensor rm, rv;
    {
        NoGradGuard g;
        if (running_mean.defined())
            rm = repeat_channels(running_mean.detach(), n).contiguous();
        if (running_var.defined())
            rv = repeat_channels(running_var.detach(), n).contiguous();
    }
    const ComposedName named;
    const Tensor y =
        batch_norm(x.contiguous().reshape(s), repeat_channels(weight, n), repeat_channels(bias, n),
                   rm, rv, use_input_stats, momentum, eps, false);
    if (use_input_stats && x.numel() > 0) {
        NoGradGuard g;
        if (running_mean.defined())
            Tensor(running_mean).copy_(rm.reshape({n, c}).mean({0}));
        if (running_var.defined())
            Tensor(running_var).copy_(rv.reshape({n, c}).mean({0}));
    }
    return named(y.reshape(x.sizes()), "instance_norm", "ViewBackward0");
}

Tensor local_response_norm(const Tensor& x, int64_t size, double alpha, double beta, double k) {
    if (!x.defined() || x.dim() < 3)
        throw shape_error(
            "local_response_norm: expected an input [N,C,*] with 3 or more dims, "
            "got " +
            shape_of(x));
    if (size < 1)
        throw value_error("local_response_norm: size " + std::to_string(size) +
                          " must be >= 1, for input " + shape_of(x));
    const Shape sizes = x.sizes();
    // the mean of x² over the channel window: a [size, 1] average pool of [N, 1, C, rest]
    int64_t rest = 1;
    for (size_t d = 2; d < sizes.size(); ++d)
        rest *= sizes[d];
    Tensor div = (x * x).reshape({sizes[0], 1, sizes[1], rest});
    div = pad(div, {0, 0, size / 2, (size - 1) / 2});
    div = avg_pool2d(div, {size, 1}, 1, 0, false, true).reshape(sizes);
    return x / pow(div * alpha + k, beta);
}

namespace {

/// Σ of src along dim 1 over the channels [lo_c, hi_c] for each channel c (an empty range: 0),
/// from the running sums S along the channels: S[hi] - S[lo - 1].
Tensor channel_window_sum(const Tensor& src, const std::vector<int64_t>& lo,
                          const std::vector<int64_t>& hi) {
    const int64_t C = src.size(1);
    const Shape& s = src.sizes();
    Tensor S = cumsum(src, 1);
    S = cat({zeros({s[0], 1, s[2], s[3]}, src.options()), S}, 1);  // S[j + 1] = Σ_{i <= j}
    std::vector<int64_t> top(static_cast<size_t>(C)), bottom(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
        const bool empty = hi[size_t(c)] < lo[size_t(c)];
        top[size_t(c)] = empty ? 0 : hi[size_t(c)] + 1;
        bottom[size_t(c)] = empty ? 0 : lo[size_t(c)];
    }
    const Tensor ti = tensor(top).to(src.device()), bi = tensor(bottom).to(src.device());
    return index_select(S, 1, ti) - index_select(S, 1, bi);
}

}  // namespace

Tensor cross_map_lrn2d(const Tensor& x, int64_t size, double alpha, double beta, int64_t k) {
    if (!x.defined() || x.dim() != 4)
        throw shape_error("CrossMapLRN2d: expected a 4-D input [N,C,H,W], got " + shape_of(x));
    if (size < 1)
        throw value_error("CrossMapLRN2d: size " + std::to_string(size) + " must be >= 1");
    runtime::check_floating("CrossMapLRN2d", x);
    const int64_t C = x.size(1), p = (size - 1) / 2 + 1, q = size - (size - 1) / 2;
    Tensor scale, y;
    {
        NoGradGuard g;
        const Tensor xd = x.detach();
        // LibTorch's running sum over the channels (norm_ops.hpp): the first p channels, then
        // + x²[c + p - 1] while it exists and - x²[c - p] once c > p, so x²[0] stays in:
        // x²[0] + Σ x²[j] for j in [c > p ? c - p + 1 : 1, min(c + p - 1, C - 1)]
        const Tensor sq = xd * xd;
        std::vector<int64_t> lo(static_cast<size_t>(C)), hi(static_cast<size_t>(C));
        for (int64_t c = 0; c < C; ++c) {
            lo[size_t(c)] = c > p ? c - p + 1 : 1;
            hi[size_t(c)] = std::min(c + p - 1, C - 1);
        }
        scale = (channel_window_sum(sq, lo, hi) + narrow(sq, 1, 0, 1)) * (alpha / double(size)) +
                double(k);
        y = pow(scale, -beta) * xd;
    }
    if (should_record({&x}))
        record("cross_map_lrn2d", {&x}, y,
               [sx = save(x), sy = save_output(y), ss = save_intermediate(scale), size, alpha, beta,
                q, C](const Tensor& dy) {
                   const Tensor xx = sx.get(), sc = ss.get();
                   Tensor dx;
                   {
                       NoGradGuard g;
                       const Tensor xd = xx.detach(), r = dy.detach() * sy.get().detach() / sc;
                       std::vector<int64_t> lo(static_cast<size_t>(C)), hi(static_cast<size_t>(C));
                       for (int64_t c = 0; c < C; ++c) {
                           lo[size_t(c)] = std::max<int64_t>(c - q, 0);
                           hi[size_t(c)] = std::min(c - q + size - 1, C - 1);
                       }
                       dx = pow(sc, -beta) * dy.detach() -
                            xd * channel_window_sum(r, lo, hi) * (2 * alpha * beta / double(size));
                   }
                   return Grads{
                       ops_detail::once_differentiable("cross_map_lrn2d_backward", dx, {&xx, &dy})};
               });
    return y;
}

}  // namespace tg
