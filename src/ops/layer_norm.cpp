// layer_norm and rms_norm: one node each, normalising the last dims of x row by row.
//
// Note [Row normalisation]: x is read as [rows, M], M the product of normalized_shape. Per row,
//   layer_norm: xhat = (x - mean)·rstd, rstd = 1/√(var + eps)     (the biased variance)
//   rms_norm:   xhat = x·rstd,          rstd = 1/√(mean(x²) + eps)
// and y = xhat·w + b elementwise over the last dims (w, b of normalized_shape, or undefined).
// The node saves x, w and rstd (and the mean): two numbers per row besides its inputs. With
// g = dy·w and the means over a row,
//   dx = rstd·(g - mean(g) - xhat·mean(g·xhat))      (rms_norm: without the mean(g) term)
//   dw = Σ_rows dy·xhat,   db = Σ_rows dy
// On the CPU (float32, float64) forward and backward without create_graph are one fused
// kernel each, threaded over rows (Note [Fused normalisation kernels] in
// backend/cpu/norm_kernels.cpp); OpenCL runs their twins (backend.hpp's RowNormOp, one kernel
// forward, one for dx and one for dw and db backward); CUDA composes the broadcasting kernels.
// With create_graph the same formulas are written with tapegrad's ops and the statistics are
// recomputed from x, so that second derivatives include the terms through them.
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "backend/cpu/norm_kernels.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

using backend::RowNormOp;
using runtime::BinaryOp;
using runtime::UnaryOp;

struct RowNorm {
    const char* op;
    bool center;  // layer_norm subtracts the mean; rms_norm does not
    int64_t rows = 0, cols = 0;
    double eps = 0;
};

RowNorm check(const char* op, bool center, const Tensor& x, const Shape& normalized,
              const Tensor& w, const Tensor& b, double eps) {
    if (!x.defined())
        throw value_error(std::string(op) + ": undefined input");
    runtime::check_float_kernels(op, x);
    const size_t k = normalized.size();
    bool ok = k > 0 && k <= size_t(x.dim());
    for (size_t i = 0; ok && i < k; ++i)
        ok = x.size(x.dim() - int64_t(k - i)) == normalized[i];
    if (!ok)
        throw shape_error(std::string(op) + ": input " + shape_str(x.sizes()) +
                          " does not end with normalized_shape " + shape_str(normalized));
    for (const Tensor* t : {&w, &b}) {
        if (!t->defined())
            continue;
        runtime::check_same(op, x, *t);
        if (t->sizes() != normalized)
            throw shape_error(std::string(op) + ": " + (t == &w ? "weight " : "bias ") +
                              shape_str(t->sizes()) + " must have normalized_shape " +
                              shape_str(normalized));
    }
    if (!(eps >= 0) || !std::isfinite(eps))
        throw value_error(std::string(op) + ": eps " + runtime::scalar_str(eps) +
                          " must be finite and >= 0");
    RowNorm r{op, center};
    r.cols = numel_of(normalized);
    r.rows = numel_of(Shape(x.sizes().begin(), x.sizes().end() - int64_t(k)));
    r.eps = eps;
    return r;
}

/// [rows, 1] statistics and xhat of the rows of xv [rows, M] (no recording).
struct Stats {
    Tensor mean, rstd, xhat;
};

Stats stats(const RowNorm& r, const Tensor& xv) {
    Stats s;
    const double inv_m = 1.0 / double(r.cols);
    if (r.center) {
        s.mean = sum(xv, {1}, true) * inv_m;
        s.xhat = runtime::binary(BinaryOp::sub, xv, s.mean, r.op);  // two passes: no cancellation
    } else {
        s.xhat = runtime::unary(UnaryOp::identity, xv);  // a buffer of its own for y
    }
    Tensor sq = runtime::unary(UnaryOp::square, s.xhat);
    s.rstd = sum(sq, {1}, true) * inv_m;
    runtime::unary_into(UnaryOp::add_scalar, s.rstd, s.rstd, r.eps, 0);
    runtime::unary_into(UnaryOp::sqrt, s.rstd, s.rstd, 0, 0);
    runtime::unary_into(UnaryOp::rdiv_scalar, s.rstd, s.rstd, 1, 0);
    runtime::binary_into(BinaryOp::mul, s.xhat, s.xhat, s.rstd, r.op, 0, 0);
    return s;
}

/// The gradients without create_graph: {dx, dw, db} as needed.
Grads backward_fast(const RowNorm& r, const Tensor& dy, const Tensor& x, const Tensor& w,
                    const Tensor& mean, const Tensor& rstd, const Node& n) {
    Grads g(3);
    const Tensor dyv = dy.reshape({r.rows, r.cols}), xv = x.reshape({r.rows, r.cols});
    Tensor xhat = r.center ? runtime::binary(BinaryOp::sub, xv, mean, r.op)
                           : runtime::unary(UnaryOp::identity, xv);
    runtime::binary_into(BinaryOp::mul, xhat, xhat, rstd, r.op, 0, 0);
    if (needs(n, 1))
        g[1] = sum(runtime::binary(BinaryOp::mul, dyv, xhat, r.op), {0}).reshape(w.sizes());
    if (needs(n, 2))
        g[2] = sum(dyv, {0}).reshape(w.sizes());
    if (!needs(n, 0))
        return g;
    const double inv_m = 1.0 / double(r.cols);
    // dx = rstd·(g - mean(g) - xhat·mean(g·xhat)), in g's buffer; xhat becomes its last term
    const Tensor dx = w.defined()
                          ? runtime::binary(BinaryOp::mul, dyv, w.reshape({1, r.cols}), r.op)
                          : runtime::unary(UnaryOp::identity, dyv);
    const Tensor c = sum(runtime::binary(BinaryOp::mul, dx, xhat, r.op), {1}, true) * -inv_m;
    if (r.center)
        runtime::binary_into(BinaryOp::sub, dx, dx, sum(dx, {1}, true) * inv_m, r.op, 0, 0);
    runtime::binary_into(BinaryOp::mul, xhat, xhat, c, r.op, 0, 0);
    runtime::binary_into(BinaryOp::add, dx, dx, xhat, r.op, 0, 0);
    runtime::binary_into(BinaryOp::mul, dx, dx, rstd, r.op, 0, 0);
    g[0] = dx.reshape(x.sizes());
    return g;
}

/// The same gradients with tapegrad's ops, recorded (create_graph).
Grads backward_recorded(const RowNorm& r, const Tensor& dy, const Tensor& x, const Tensor& w,
                        const Node& n) {
    Grads g(3);
    const Tensor xv = x.reshape({r.rows, r.cols}), dyv = dy.reshape({r.rows, r.cols});
    const Tensor xc = r.center ? xv - mean(xv, {1}, true) : xv;
    const Tensor rstd = rdiv(1.0, sqrt(mean(xc * xc, {1}, true) + r.eps));
    const Tensor xhat = xc * rstd;
    if (needs(n, 1))
        g[1] = sum(dyv * xhat, {0}).reshape(w.sizes());
    if (needs(n, 2))
        g[2] = sum(dyv, {0}).reshape(w.sizes());
    if (!needs(n, 0))
        return g;
    const Tensor gg = w.defined() ? dyv * w.reshape({1, r.cols}) : dyv;
    Tensor inner = gg - xhat * mean(gg * xhat, {1}, true);
    if (r.center)
        inner = inner - mean(gg, {1}, true);
    g[0] = (rstd * inner).reshape(x.sizes());
    return g;
}

/// Whether fused row kernels serve x (float32 or float64): the CPU's (Note [Fused normalisation
/// kernels] in backend/cpu/norm_kernels.cpp), or its device backend's (OpenCL's twins).
bool fused(const Tensor& x) {
    return (x.dtype() == kFloat32 || x.dtype() == kFloat64) &&
           (x.device().is_cpu() || runtime::be(x).fuses_row_norm());
}

/// The device kernel's operands (backend.hpp's RowNormOp): views, data null where undefined.
void run_device(RowNormOp op, const RowNorm& r, const Tensor& any,
                std::initializer_list<const Tensor*> ts) {
    std::vector<backend::View> v;
    for (const Tensor* t : ts)
        v.push_back(t->defined() ? runtime::view(*t) : backend::View{});
    runtime::be(any).row_norm(op, backend::RowNorm{r.rows, r.cols, r.center, r.eps}, v.data());
}

/// t's first element in host memory (t on the CPU), or null for an undefined t.
const void* host(const Tensor& t) {
    return t.defined() ? static_cast<const char*>(t.impl()->storage->data) +
                             size_t(t.impl()->offset) * element_size(t.dtype())
                       : nullptr;
}

/// y, mean and rstd of x [rows, cols] on the fused kernel, in one pass per row.
void forward_fused(const RowNorm& r, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                   Tensor& mean, Tensor& rstd) {
    const Tensor xc = x.contiguous(), wc = w.defined() ? w.contiguous() : w,
                 bc = b.defined() ? b.contiguous() : b;
    y = runtime::empty(x.sizes(), x.dtype(), x.device(), r.op);
    rstd = runtime::empty({r.rows, 1}, x.dtype(), x.device(), r.op);
    if (r.center)
        mean = runtime::empty({r.rows, 1}, x.dtype(), x.device(), r.op);
    if (!x.device().is_cpu())
        return run_device(RowNormOp::Forward, r, x, {&y, &xc, &wc, &bc, &mean, &rstd});
    backend::cpu::row_norm_forward(x.dtype(), const_cast<void*>(host(y)), host(xc), host(wc),
                                   host(bc), r.rows, r.cols, r.center, r.eps,
                                   const_cast<void*>(host(mean)), const_cast<void*>(host(rstd)));
}

/// backward_fast on the fused kernel: one pass per row.
Grads backward_fused(const RowNorm& r, const Tensor& dy, const Tensor& x, const Tensor& w,
                     const Tensor& mean, const Tensor& rstd, const Node& n) {
    Grads g(3);
    const Tensor dyc = dy.contiguous(), xc = x.contiguous(), wc = w.defined() ? w.contiguous() : w;
    if (needs(n, 0))
        g[0] = runtime::empty(x.sizes(), x.dtype(), x.device(), r.op);
    for (size_t i = 1; i < 3; ++i)
        if (needs(n, i))
            g[i] = runtime::empty(w.sizes(), x.dtype(), x.device(), r.op);
    if (!x.device().is_cpu()) {
        run_device(RowNormOp::Backward, r, x, {&g[0], &g[1], &g[2], &dyc, &xc, &wc, &mean, &rstd});
        return g;
    }
    backend::cpu::row_norm_backward(x.dtype(), const_cast<void*>(host(g[0])),
                                    const_cast<void*>(host(g[1])), const_cast<void*>(host(g[2])),
                                    host(dyc), host(xc), host(wc), host(mean), host(rstd), r.rows,
                                    r.cols, r.center);
    return g;
}

/// y, mean and rstd of x, unrecorded: the forward, and a MemoryBudget's recomputation of y.
void forward(const RowNorm& r, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
             Tensor& mean, Tensor& rstd) {
    NoGradGuard no_grad;
    const Tensor xv = x.detach().reshape({r.rows, r.cols});
    if (x.numel() == 0) {
        y = runtime::empty(x.sizes(), x.dtype(), x.device(), r.op);
        mean = rstd = zeros({r.rows, 1}, x.options());
    } else if (fused(x)) {
        forward_fused(r, x.detach(), w.defined() ? w.detach() : w, b.defined() ? b.detach() : b, y,
                      mean, rstd);
    } else {
        Stats s = stats(r, xv);
        mean = s.mean;
        rstd = s.rstd;
        y = s.xhat;
        if (w.defined())
            runtime::binary_into(BinaryOp::mul, y, y, w.detach().reshape({1, r.cols}), r.op, 0, 0);
        if (b.defined())
            runtime::binary_into(BinaryOp::add, y, y, b.detach().reshape({1, r.cols}), r.op, 0, 0);
        y = y.reshape(x.sizes());
    }
}

Tensor row_norm(const RowNorm& r, const Tensor& x, const Tensor& w, const Tensor& b) {
    Tensor y, mean, rstd;
    forward(r, x, w, b, y, mean, rstd);
    if (!should_record({&x, &w, &b}))
        return y;
    auto backward = [sx = save(x), sw = save(w), sm = save_intermediate(mean),
                     sr = save_intermediate(rstd), r](const Tensor& dy, const Node& n) {
        const Tensor xx = sx.get(), ww = sw.get();
        if (GradMode::is_enabled())
            return backward_recorded(r, dy, xx, ww, n);
        if (xx.numel() == 0) {
            Grads g(3);
            if (needs(n, 0))
                g[0] = zeros_like(xx);
            for (size_t i = 1; i < n.inputs_.size(); ++i)
                if (needs(n, i))
                    g[i] = zeros(ww.sizes(), ww.options());
            return g;
        }
        if (fused(xx) && dy.device() == xx.device() && dy.dtype() == xx.dtype())
            return backward_fused(r, dy, xx, ww, sm.get(), sr.get(), n);
        return backward_fast(r, dy, xx, ww, sm.get(), sr.get(), n);
    };
    record(r.op, {&x, &w, &b}, y, std::move(backward));
    // under a MemoryBudget: y again on the same kernel, so the same bits (the statistics dropped)
    recipe(y, [r](const std::vector<Tensor>& xs) {
        Tensor y2, mean2, rstd2;
        forward(r, xs[0], xs[1], xs[2], y2, mean2, rstd2);
        return y2;
    });
    return y;
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps, bool /*cudnn_enable*/) {
    Tensor y = row_norm(check("layer_norm", true, x, normalized_shape, weight, bias, eps), x,
                        weight, bias);
    if (Trace* tr = trace_slot())
        tr->add("layer_norm", {&x, &weight, &bias}, y,
                {{"normalized_dims", int64_t(normalized_shape.size())}, {"eps", eps}});
    return y;
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
    const double e = eps ? *eps
                         : (x.defined() && x.dtype() == kFloat64 ? 2.220446049250313e-16
                                                                 : 1.1920928955078125e-07);
    return row_norm(check("rms_norm", false, x, normalized_shape, weight, {}, e), x, weight, {});
}

}  // namespace tg
