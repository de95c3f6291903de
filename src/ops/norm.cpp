// Normalisation: batch_norm and group_norm, one node each, sharing one forward and one backward.
//
// Note [Normalisation layout]: both normalise x [N,C,*] by a mean and an inverse standard
// deviation (invstd) computed over a group of elements, then scale and shift each channel:
//   batch_norm: one group per channel (all dims but 1): statistics [1,C,1,...];
//   group_norm: one group per sample and group of C/G channels: x viewed as [N,G,L], L =
//               C/G·spatial, statistics [N,G,1].
// Each statistic is spread to a per-(sample, channel) "coefficient" shape, [1,C,1,...] or
// [N,C,1,...], in which everything elementwise happens with one broadcasting kernel over x:
//   y = x·scale + shift,   scale = invstd·w,   shift = b - mean·scale.
// The node saves x, the statistics (small) and the weight. Its backward, with M the group size,
// xhat = (x - mean)·invstd and the sums Σ over a group:
//   dw = Σ_{n,spatial} dy·xhat,   db = Σ_{n,spatial} dy,
//   dx = invstd·(dy·w - Σ(dy·w)/M - xhat·Σ(dy·w·xhat)/M)   (statistics of this batch)
//   dx = invstd·w·dy                                        (running statistics: constants)
// On the CPU (float32, float64) the forward and the backward without create_graph run on the
// fused per-plane kernels (Note [Fused normalisation kernels] in backend/cpu/norm_kernels.cpp):
// two reading passes and one writing pass forward, one and one backward; on OpenCL on their
// twins (backend.hpp's PlaneNormOp). On other devices (CUDA) the backward without create_graph
// runs as dx = dy·k + x·p + q with per-coefficient k, p, q, two buffers of x's size, through the
// broadcasting kernels. With create_graph the same formulas are written with tapegrad's ops,
// and the statistics are recomputed from x so that they carry x's history: the second
// derivative then includes the terms through the mean and the variance.
#include <cmath>
#include <string>

#include "autograd/record.hpp"
#include "checkpoint/recomputing.hpp"
#include "ops/norm_fused.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

using runtime::BinaryOp;
using runtime::UnaryOp;

/// How one normalisation reads x (Note [Normalisation layout]).
struct Layout {
    Shape view;                 // x as its statistics see it
    std::vector<int64_t> dims;  // the dims of `view` a statistic reduces
    Shape stat;                 // `view` with those dims kept as 1
    Shape coef;                 // [1,C,1,...] (batch_norm) or [N,C,1,...] (group_norm)
    Shape param;                // [1,C,1,...]
    int64_t count = 0;          // M: the elements of one group
    int64_t groups = 0;         // G for group_norm, 0 for batch_norm
};

/// The product of x's dims from `from` on.
int64_t numel_from(const Tensor& x, int64_t from) {
    int64_t n = 1;
    for (int64_t d = from; d < x.dim(); ++d)
        n *= x.size(d);
    return n;
}

Layout batch_layout(const Tensor& x) {
    Layout l;
    l.view = x.sizes();
    l.param = Shape(size_t(x.dim()), 1);
    l.param[1] = x.size(1);
    for (int64_t d = 0; d < x.dim(); ++d)
        if (d != 1)
            l.dims.push_back(d);
    l.stat = l.coef = l.param;
    l.count = x.size(0) * numel_from(x, 2);
    return l;
}

Layout group_layout(const Tensor& x, int64_t groups) {
    Layout l;
    const int64_t N = x.size(0), C = x.size(1);
    l.count = C / groups * numel_from(x, 2);
    l.view = {N, groups, l.count};
    l.dims = {2};
    l.stat = {N, groups, 1};
    l.param = Shape(size_t(x.dim()), 1);
    l.param[1] = C;
    l.coef = l.param;
    l.coef[0] = N;
    l.groups = groups;
    return l;
}

/// A statistic (l.stat) spread to the coefficient shape (l.coef); recorded when grad mode is on.
Tensor to_coef(const Tensor& s, const Layout& l) {
    if (!l.groups)
        return s;
    const int64_t N = l.coef[0], C = l.coef[1];
    return s.expand({N, l.groups, C / l.groups}).reshape(l.coef);
}

/// Per-coefficient values (l.coef) summed over each group's channels (l.stat).
Tensor from_coef(const Tensor& c, const Layout& l) {
    if (!l.groups)
        return c;
    const int64_t N = l.coef[0], C = l.coef[1];
    return sum(c.reshape({N, l.groups, C / l.groups}), {2}, true);
}

/// 1/√(var + eps).
Tensor inverse_std(const Tensor& var, double eps) {
    return rdiv(1.0, sqrt(var + eps));
}

/// What the normalisation of one batch needs from its arguments.
struct NormArgs {
    const char* op;
    const Tensor& x;
    const Tensor& w;
    const Tensor& b;
    double eps;
};

std::string shapes(const Tensor& t) {
    return shape_str(t.sizes());
}

/// Checks x [N,C,*] (floating) and that t (weight, bias or a running statistic, when defined)
/// is a [C] tensor of x's dtype on x's device.
void check_channel_tensor(const char* op, const char* what, const Tensor& x, const Tensor& t) {
    if (!t.defined())
        return;
    runtime::check_same(op, x, t);
    if (t.dim() != 1 || t.size(0) != x.size(1))
        throw shape_error(std::string(op) + ": " + what + " " + shapes(t) +
                          " does not match input " + shapes(x) + " with " +
                          std::to_string(x.size(1)) + " channels (expected [" +
                          std::to_string(x.size(1)) + "])");
}

void check_args(const NormArgs& a) {
    if (!a.x.defined())
        throw value_error(std::string(a.op) + ": undefined input");
    runtime::check_float_kernels(a.op, a.x);
    if (a.x.dim() < 2)
        throw shape_error(std::string(a.op) + ": input " + shapes(a.x) +
                          " must have at least 2 dims [N,C,...]");
    check_channel_tensor(a.op, "weight", a.x, a.w);
    check_channel_tensor(a.op, "bias", a.x, a.b);
    if (!(a.eps > 0) || !std::isfinite(a.eps))
        throw value_error(std::string(a.op) + ": eps " + runtime::scalar_str(a.eps) +
                          " must be finite and > 0");
}

/// x·scale + shift (Note [Normalisation layout]), written into `into` when it is defined (a
/// contiguous buffer of x's size that holds nothing needed any more).
Tensor affine(const Tensor& x, const Layout& l, const Tensor& mean, const Tensor& invstd,
              const Tensor& w, const Tensor& b, const char* op, Tensor into) {
    const Tensor mc = to_coef(mean, l), ic = to_coef(invstd, l);
    const Tensor scale = w.defined() ? ic * w.reshape(l.param) : ic;
    const Tensor ms = mc * scale;
    const Tensor shift = b.defined() ? b.reshape(l.param) - ms : -ms;
    if (into.defined()) {
        into = into.view(x.sizes());
        runtime::binary_into(BinaryOp::mul, into, x, scale, op, 0, 0);
    } else {
        into = runtime::binary(BinaryOp::mul, x, scale, op);
    }
    runtime::binary_into(BinaryOp::add, into, into, shift, op, 0, 0);
    return into;
}

/// The gradients of one normalisation without create_graph: {dx, dw, db} as needed.
Grads backward_fast(const Tensor& dy, const Tensor& x, const Layout& l, const Tensor& mean,
                    const Tensor& invstd, const Tensor& w, bool batch_stats, const char* op,
                    bool need_x, bool need_w, bool need_b) {
    Grads g(3);
    const int64_t C = x.size(1);
    if (x.numel() == 0) {  // an empty batch: no statistics, zero parameter gradients
        if (need_x)
            g[0] = zeros_like(x);
        if (need_w)
            g[1] = zeros({C}, x.options());
        if (need_b)
            g[2] = zeros({C}, x.options());
        return g;
    }
    const Tensor mc = to_coef(mean, l), ic = to_coef(invstd, l);
    const Tensor wc = w.defined() ? w.reshape(l.param) : Tensor();
    // per-(sample,)channel sums of dy and dy·xhat
    const bool need_s2 = need_w || (need_x && batch_stats);
    const bool need_s1 = need_b || (need_x && batch_stats);
    Tensor t, s1, s2;
    if (need_s2) {
        t = runtime::binary(BinaryOp::sub, x, mc, op);
        runtime::binary_into(BinaryOp::mul, t, t, dy, op, 0, 0);
        s2 = sum_to(t, l.coef) * ic;
    }
    if (need_s1)
        s1 = sum_to(dy, l.coef);
    if (need_w)
        g[1] = sum_to(s2, l.param).reshape({C});
    if (need_b)
        g[2] = sum_to(s1, l.param).reshape({C});
    if (!need_x)
        return g;
    const Tensor k = wc.defined() ? ic * wc : ic;
    Tensor dx = runtime::binary(BinaryOp::mul, dy, k, op);
    if (batch_stats) {
        // dx = k·dy + p·x + q:  p = -invstd²·g2,  q = invstd·(mean·invstd·g2 - g1), with
        // g1 = Σ(dy·w)/M and g2 = Σ(dy·w·xhat)/M over each group
        const double inv_m = 1.0 / double(l.count);
        const Tensor ws1 = wc.defined() ? s1 * wc : s1, ws2 = wc.defined() ? s2 * wc : s2;
        const Tensor g1 = to_coef(from_coef(ws1, l) * inv_m, l);
        const Tensor g2 = to_coef(from_coef(ws2, l) * inv_m, l);
        const Tensor p = -(ic * ic * g2);
        const Tensor q = ic * (mc * ic * g2 - g1);
        runtime::binary_into(BinaryOp::mul, t, x, p, op, 0, 0);  // t's sums are taken
        runtime::binary_into(BinaryOp::add, t, t, q, op, 0, 0);
        runtime::binary_into(BinaryOp::add, dx, dx, t, op, 0, 0);
    }
    g[0] = dx;
    return g;
}

/// The same gradients as tapegrad ops that record (create_graph). With batch statistics they
/// are recomputed from x (Note [Normalisation layout]).
Grads backward_recorded(const Tensor& dy, const Tensor& x, const Layout& l, Tensor mean,
                        Tensor invstd, const Tensor& w, bool batch_stats, double eps, bool need_x,
                        bool need_w, bool need_b) {
    Grads g(3);
    const int64_t C = x.size(1);
    Tensor xv = x.reshape(l.view), xc_v;
    if (batch_stats) {
        mean = tg::mean(xv, l.dims, true);
        xc_v = xv - mean;
        invstd = inverse_std(tg::mean(xc_v * xc_v, l.dims, true), eps);
    } else {
        xc_v = xv - mean;
    }
    const Tensor xhat_v = xc_v * invstd;
    const Tensor xhat = xhat_v.reshape(x.sizes());
    if (need_w)
        g[1] = sum_to(dy * xhat, l.param).reshape({C});
    if (need_b)
        g[2] = sum_to(dy, l.param).reshape({C});
    if (!need_x)
        return g;
    const Tensor dxhat = w.defined() ? dy * w.reshape(l.param) : dy;
    if (!batch_stats) {
        g[0] = dxhat * to_coef(invstd, l);
        return g;
    }
    const Tensor d_v = dxhat.reshape(l.view);
    const Tensor dx_v = invstd * (d_v - tg::mean(d_v, l.dims, true) -
                                  xhat_v * tg::mean(d_v * xhat_v, l.dims, true));
    g[0] = dx_v.reshape(x.sizes());
    return g;
}

/// Normalises x with the statistics (l.stat shape) and records the node.
Tensor normalize(const NormArgs& a, const Layout& l, Tensor mean, Tensor invstd, bool batch_stats,
                 const Tensor& buffer) {
    Tensor y;
    {
        NoGradGuard no_grad;
        if (a.x.numel() == 0) {  // no statistics; saved as zeros so that dw = Σ dy·xhat stays 0
            mean = zeros(l.stat, a.x.options());
            invstd = zeros(l.stat, a.x.options());
        }
        const Tensor w = a.w.defined() ? a.w.detach() : a.w, b = a.b.defined() ? a.b.detach() : a.b;
        y = norm_fused::takes(a.x)
                ? norm_fused::affine(a.x.detach(), l.groups, mean, invstd, w, b, buffer)
                : affine(a.x.detach(), l, mean, invstd, w, b, a.op, buffer);
    }
    if (should_record({&a.x, &a.w, &a.b})) {
        record(
            a.op, {&a.x, &a.w, &a.b}, y,
            [sx = save(a.x), sw = save(a.w), sm = save_intermediate(mean),
             si = save_intermediate(invstd), l, batch_stats, eps = a.eps,
             op = a.op](const Tensor& dy, const Node& n) {
                const Tensor xx = sx.get(), ww = sw.get();
                if (GradMode::is_enabled())
                    return backward_recorded(dy, xx, l, sm.get(), si.get(), ww, batch_stats, eps,
                                             needs(n, 0), needs(n, 1), needs(n, 2));
                if (norm_fused::takes(xx) && dy.device() == xx.device() && dy.dtype() == xx.dtype())
                    return norm_fused::backward(dy, xx, l.groups, sm.get(), si.get(), ww,
                                                batch_stats, needs(n, 0), needs(n, 1), needs(n, 2));
                return backward_fast(dy, xx, l, sm.get(), si.get(), ww, batch_stats, op,
                                     needs(n, 0), needs(n, 1), needs(n, 2));
            });
        // the same statistics, so no running-statistics update (Note [Dynamic
        // rematerialization] in src/checkpoint/budget.cpp), on the kernel the forward ran: the
        // fused one computes its scale and shift in double, the composed one in x's dtype
        if (recipes_wanted())
            recipe(y, [l, m = mean.detach(), is = invstd.detach(),
                       op = a.op](const std::vector<Tensor>& xs) {
                return norm_fused::takes(xs[0])
                           ? norm_fused::affine(xs[0], l.groups, m, is, xs[1], xs[2], Tensor())
                           : affine(xs[0], l, m, is, xs[1], xs[2], op, Tensor());
            });
    }
    return y;
}

/// The mean and biased variance of x's groups (l.stat), and the buffer of x's size they used.
struct Moments {
    Tensor mean, var, buffer;
};

Moments moments(const Tensor& x, const Layout& l, const char* op) {
    Moments m;
    if (norm_fused::takes(x)) {
        norm_fused::moments(x, l.groups, l.stat, m.mean, m.var);
        return m;
    }
    const Tensor xv = x.reshape(l.view);
    const double inv_m = 1.0 / double(l.count);
    m.mean = sum(xv, l.dims, true) * inv_m;
    m.buffer = runtime::binary(BinaryOp::sub, xv, m.mean, op);  // two passes: no cancellation
    runtime::unary_into(UnaryOp::square, m.buffer, m.buffer, 0, 0);
    m.var = sum(m.buffer, l.dims, true) * inv_m;
    return m;
}

/// running = (1 - momentum)·running + momentum·value, in place (a [C] buffer).
void update_running(const Tensor& running, const Tensor& value, double momentum, const char* op) {
    runtime::binary_into(BinaryOp::axpby, running, running, value.reshape({running.size(0)}), op,
                         1 - momentum, momentum);
    runtime::mark_modified(running);
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps, bool /*cudnn_enabled*/) {
    const char* op = "batch_norm";
    const NormArgs a{op, x, weight, bias, eps};
    check_args(a);
    check_channel_tensor(op, "running_mean", x, running_mean);
    check_channel_tensor(op, "running_var", x, running_var);
    for (const Tensor* r : {&running_mean, &running_var})
        if (r->defined() && r->requires_grad())
            throw value_error(std::string(op) + ": running statistics " + shapes(*r) +
                              " require grad: they are buffers, updated in place and not "
                              "differentiated");
    if (!(momentum >= 0 && momentum <= 1))
        throw value_error(std::string(op) + ": momentum " + runtime::scalar_str(momentum) +
                          " is not in [0, 1]");
    if (!training && (!running_mean.defined() || !running_var.defined()))
        throw value_error(std::string(op) + ": input " + shapes(x) +
                          ": evaluation (training=false) needs running_mean and running_var");
    const Layout l = batch_layout(x);
    if (training && l.count == 1)
        throw shape_error(std::string(op) + ": input " + shapes(x) +
                          " has 1 value per channel: training needs more than 1 for a variance");
    Tensor mean, invstd, buffer;
    {
        NoGradGuard no_grad;
        if (training) {
            Moments m = moments(x.detach(), l, op);
            // Note [Side effects of a recomputation] in checkpoint/recomputing.hpp; an empty
            // batch leaves the running statistics as they are, as in PyTorch
            if (!checkpointing::recomputing() && x.numel() > 0) {
                if (running_mean.defined())
                    update_running(running_mean, m.mean, momentum, op);
                if (running_var.defined())  // the unbiased variance
                    update_running(running_var, m.var * (double(l.count) / double(l.count - 1)),
                                   momentum, op);
            }
            mean = m.mean;
            invstd = inverse_std(m.var, eps);
            buffer = m.buffer;
        } else {  // a copy: a later training step updates the running statistics in place
            mean = running_mean.detach().clone().reshape(l.stat);
            invstd = inverse_std(running_var.detach().reshape(l.stat), eps);
        }
    }
    return normalize(a, l, mean, invstd, training, buffer);
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps, bool /*cudnn_enabled*/) {
    const char* op = "group_norm";
    const NormArgs a{op, x, weight, bias, eps};
    check_args(a);
    if (num_groups <= 0 || x.size(1) % num_groups != 0)
        throw shape_error(std::string(op) + ": input " + shapes(x) + " has " +
                          std::to_string(x.size(1)) + " channels, which " +
                          std::to_string(num_groups) + " groups do not divide");
    const Layout l = group_layout(x, num_groups);
    Tensor mean, invstd, buffer;
    {
        NoGradGuard no_grad;
        Moments m = moments(x.detach(), l, op);
        mean = m.mean;
        invstd = inverse_std(m.var, eps);
        buffer = m.buffer;
    }
    return normalize(a, l, mean, invstd, true, buffer);
}

}  // namespace tg
