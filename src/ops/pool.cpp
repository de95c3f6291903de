// Pooling of 1, 2 and 3 spatial dims: max_pool (with indices), avg_pool, adaptive_avg_pool and
// adaptive_max_pool over [N,C,*] or [C,*], on the window kernels (1- and 2-D windows are 3-D
// ones with leading axes of size 1). Every backward is a gather (Note [Gathering adjoints] in
// backend/device_common/window.hpp), and each backward is itself one recorded op whose own
// backward is the forward's gather again, so double backward works:
//   max:  dx = MaxPoolBackward(dy; idx),   its adjoint  d dy = gather(g, idx)
//   avg:  dx = AvgPoolBackward(dy),        its adjoint  d dy = AvgPool(g)
#include <cmath>
#include <string>

#include "autograd/record.hpp"
#include "backend/backend.hpp"
#include "ops/conv_gemm.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

using backend::Window;
using backend::WindowOp;

const char* const kShapes[] = {"", "[N,C,L] or [C,L]", "[N,C,H,W] or [C,H,W]",
                               "[N,C,D,H,W] or [C,D,H,W]"};

/// x with a batch dim ((nd+2)-dim; an unbatched (nd+1)-dim x gets N = 1); throws for other
/// ranks.
Tensor batched(const char* op, const Tensor& x, int nd) {
    if (!x.defined())
        throw value_error(std::string(op) + ": undefined input");
    runtime::check_float_kernels(op, x);
    if (x.dim() == nd + 2)
        return x;
    if (x.dim() == nd + 1)
        return x.unsqueeze(0);
    throw shape_error(std::string(op) + ": input " + shape_str(x.sizes()) + ": expected " +
                      kShapes[nd]);
}

Tensor unbatched(const Tensor& y, const Tensor& x, int nd) {
    return x.dim() == nd + 1 ? y.squeeze(0) : y;
}

/// The shape [N, C, spatial...] of xb with the spatial dims of window g's input or output.
Shape pool_shape(const Tensor& xb, const Window& g, int nd, bool out) {
    Shape s{xb.size(0), xb.size(1)};
    const int64_t v[3] = {out ? g.ot : g.t, out ? g.oh : g.h, out ? g.ow : g.w};
    for (int i = 3 - nd; i < 3; ++i)
        s.push_back(v[i]);
    return s;
}

/// A window over xb's planes (N·C) and spatial dims (the leading axes of a 1- or 2-D window
/// stay at size 1).
Window planes_of(const char* op, const Tensor& xb, int nd) {
    Window g;
    g.planes = checked_mul(xb.size(0), xb.size(1), op, xb.sizes());
    g.h = g.oh = 1;  // the axes a 1-D window leaves alone (depth is one already)
    int64_t* in[3] = {&g.t, &g.h, &g.w};
    for (int i = 0; i < nd; ++i)
        *in[3 - nd + i] = xb.size(2 + i);
    return g;
}

/// Runs a window kernel from `in` (contiguous) into a new tensor of `shape` (and aux).
Tensor run(WindowOp op, const Window& g, const Tensor& in, const Shape& shape,
           const Tensor& aux = {}) {
    Tensor out = runtime::empty(shape, in.dtype(), in.device(), "pool");
    if (out.numel() > 0)
        runtime::be(in).window(op, g, runtime::view(out), runtime::view(in),
                               aux.defined() ? runtime::view(aux) : backend::View{});
    return out;
}

/// The gather of max pooling's backward, recorded: dx = Σ dy over the windows whose argmax
/// each element is; its adjoint gathers g at the indices.
Tensor max_pool_backward(const Tensor& dy, const Tensor& idx, const Window& g, const Shape& xs) {
    const Tensor dyc = dy.detach().contiguous();
    Tensor dx = run(WindowOp::MaxPoolBackward, g, dyc, xs, idx);
    if (should_record({&dy}))
        record("max_pool2d_backward", {&dy}, dx,
               [si = save_intermediate(idx), ys = dy.sizes(), xs](const Tensor& gx) {
                   const Tensor flat = gx.reshape({xs[0], xs[1], -1});
                   const Tensor at = si.get().reshape({ys[0], ys[1], -1});
                   return Grads{gather(flat, 2, at).reshape(ys)};
               });
    return dx;
}

/// Max pooling of the batched xb over windows g: y and the argmax indices, recorded.
std::pair<Tensor, Tensor> max_window(const char* op, const Tensor& xb, const Window& g, int nd) {
    const Shape ys = pool_shape(xb, g, nd, true);
    const Tensor xc = xb.detach().contiguous();
    Tensor idx = runtime::empty(ys, Dtype::Int64, xb.device(), op);
    Tensor y = run(WindowOp::MaxPool, g, xc, ys, idx);
    if (should_record({&xb})) {
        record(op, {&xb}, y, [si = save_intermediate(idx), g, xs = xb.sizes()](const Tensor& dy) {
            return Grads{max_pool_backward(dy, si.get(), g, xs)};
        });
        if (recipes_wanted())
            recipe(y, [g, ys, op](const std::vector<Tensor>& xs) {
                Tensor at = runtime::empty(ys, Dtype::Int64, xs[0].device(), op);
                return run(WindowOp::MaxPool, g, xs[0].contiguous(), ys, at);
            });
    }
    return {y, idx};
}

/// Average pooling forward (AvgPool) or its gather adjoint (AvgPoolBackward), each the other's
/// backward; xs and ys the input's and output's shapes.
Tensor avg_window(bool forward, const Tensor& in, const Window& g, const Shape& xs,
                  const Shape& ys) {
    const Tensor ic = in.detach().contiguous();
    Tensor out =
        forward ? run(WindowOp::AvgPool, g, ic, ys) : run(WindowOp::AvgPoolBackward, g, ic, xs);
    if (should_record({&in}))
        record(forward ? "avg_pool2d" : "avg_pool2d_backward", {&in}, out,
               [forward, g, xs, ys](const Tensor& d) {
                   return Grads{avg_window(!forward, d, g, xs, ys)};
               });
    return out;
}

/// Output length of a pooling window along one dim (PyTorch's pooling_output_shape).
int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
    const int64_t span = in + 2 * p - d * (k - 1) - 1;
    int64_t o = (span + (ceil_mode ? s - 1 : 0)) / s + 1;
    if (ceil_mode && (o - 1) * s >= in + p)
        --o;
    return o;
}

std::string dims_str(const std::vector<int64_t>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "x" : "") + std::to_string(v[i]);
    return s;
}

/// The windows of an nd-D max or average pooling over the batched xb, checked.
Window pool_window(const char* op, const Tensor& xb, int nd, const IntArg& kernel,
                   const IntArg& stride, const IntArg& padding, const IntArg& dilation,
                   bool ceil_mode) {
    const auto k = conv::values_of(op, "kernel_size", kernel, nd, 0);
    const auto s = stride.values().empty() ? k : conv::values_of(op, "stride", stride, nd, 1);
    const auto p = conv::values_of(op, "padding", padding, nd, 0);
    const auto d = conv::values_of(op, "dilation", dilation, nd, 1);
    const std::string where = std::string(op) + ": input " + shape_str(xb.sizes());
    Window g = planes_of(op, xb, nd);
    std::vector<int64_t> extent;
    bool fits = true;
    for (int i = 0; i < nd; ++i) {
        const size_t u = size_t(i);
        if (k[u] <= 0 || s[u] <= 0 || d[u] <= 0)
            throw value_error(where + ": kernel_size, stride and dilation must be positive");
        if (p[u] < 0 || p[u] > k[u] / 2)
            throw value_error(where + ": padding must be >= 0 and at most half the kernel size");
        extent.push_back(d[u] * (k[u] - 1) + 1);
        fits = fits && xb.size(2 + i) + 2 * p[u] >= extent.back();
    }
    int64_t* f[3][6] = {{&g.t, &g.kt, &g.ot, &g.st, &g.pt, &g.dt},
                        {&g.h, &g.kh, &g.oh, &g.sh, &g.ph, &g.dh},
                        {&g.w, &g.kw, &g.ow, &g.sw, &g.pw, &g.dw}};
    for (int i = 0; i < nd; ++i) {
        const size_t u = size_t(i);
        int64_t* const* a = f[3 - nd + i];
        *a[1] = k[u], *a[3] = s[u], *a[4] = p[u], *a[5] = d[u];
        *a[2] = fits ? pool_out(*a[0], k[u], s[u], p[u], d[u], ceil_mode) : 0;
        fits = fits && *a[2] > 0;
    }
    if (!fits)
        throw shape_error(where + ": the window (" + dims_str(extent) +
                          ") is larger than the padded input");
    return g;
}

/// The windows of an nd-D adaptive pooling over the batched xb, checked.
Window adaptive_window(const char* op, const Tensor& x, const Tensor& xb, int nd,
                       const IntArg& output_size) {
    const auto o = conv::values_of(op, "output_size", output_size, nd, -1);
    Window g = planes_of(op, xb, nd);
    g.adaptive = 1;
    int64_t* out[3] = {&g.ot, &g.oh, &g.ow};
    for (int i = 0; i < nd; ++i) {
        if (o[size_t(i)] <= 0)
            throw value_error(std::string(op) + ": input " + shape_str(x.sizes()) +
                              ": output_size must be positive");
        if (xb.size(2 + i) == 0)
            throw shape_error(std::string(op) + ": input " + shape_str(x.sizes()) +
                              ": empty spatial dims");
        *out[3 - nd + i] = o[size_t(i)];
    }
    return g;
}

std::pair<Tensor, Tensor> max_pool_nd(const char* op, int nd, const Tensor& x,
                                      const IntArg& kernel_size, const IntArg& stride,
                                      const IntArg& padding, const IntArg& dilation,
                                      bool ceil_mode) {
    const Tensor xb = batched(op, x, nd);
    const Window g = pool_window(op, xb, nd, kernel_size, stride, padding, dilation, ceil_mode);
    auto [y, idx] = max_window(op, xb, g, nd);
    return {unbatched(y, x, nd), unbatched(idx, x, nd)};
}

Tensor avg_pool_nd(const char* op, int nd, const Tensor& x, const IntArg& kernel_size,
                   const IntArg& stride, const IntArg& padding, bool ceil_mode,
                   bool count_include_pad, std::optional<int64_t> divisor_override) {
    const Tensor xb = batched(op, x, nd);
    Window g = pool_window(op, xb, nd, kernel_size, stride, padding, 1, ceil_mode);
    g.count_include_pad = count_include_pad;
    if (divisor_override) {
        if (*divisor_override == 0)
            throw value_error(std::string(op) + ": divisor must be not zero");
        g.divisor = *divisor_override;
    }
    return unbatched(avg_window(true, xb, g, xb.sizes(), pool_shape(xb, g, nd, true)), x, nd);
}

Tensor adaptive_avg_nd(const char* op, int nd, const Tensor& x, const IntArg& output_size,
                       const char* torch) {
    const Tensor xb = batched(op, x, nd);
    const Window g = adaptive_window(op, x, xb, nd, output_size);
    const ComposedName named;
    return named(unbatched(avg_window(true, xb, g, xb.sizes(), pool_shape(xb, g, nd, true)), x, nd),
                 op, torch);
}

std::pair<Tensor, Tensor> adaptive_max_nd(const char* op, int nd, const Tensor& x,
                                          const IntArg& output_size) {
    const Tensor xb = batched(op, x, nd);
    const Window g = adaptive_window(op, x, xb, nd, output_size);
    auto [y, idx] = max_window(op, xb, g, nd);
    return {unbatched(y, x, nd), unbatched(idx, x, nd)};
}

}  // namespace

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const IntArg& kernel_size,
                                                  const IntArg& stride, const IntArg& padding,
                                                  const IntArg& dilation, bool ceil_mode) {
    return max_pool_nd("max_pool2d", 2, x, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor max_pool2d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride,
                  const IntArg& padding, const IntArg& dilation, bool ceil_mode) {
    return max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode).first;
}

std::pair<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, const IntArg& kernel_size,
                                                  const IntArg& stride, const IntArg& padding,
                                                  const IntArg& dilation, bool ceil_mode) {
    return max_pool_nd("max_pool1d", 1, x, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor max_pool1d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride,
                  const IntArg& padding, const IntArg& dilation, bool ceil_mode) {
    return max_pool1d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode).first;
}

std::pair<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x, const IntArg& kernel_size,
                                                  const IntArg& stride, const IntArg& padding,
                                                  const IntArg& dilation, bool ceil_mode) {
    return max_pool_nd("max_pool3d", 3, x, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor max_pool3d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride,
                  const IntArg& padding, const IntArg& dilation, bool ceil_mode) {
    return max_pool3d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode).first;
}

Tensor avg_pool2d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride,
                  const IntArg& padding, bool ceil_mode, bool count_include_pad) {
    return avg_pool_nd("avg_pool2d", 2, x, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, std::nullopt);
}

Tensor avg_pool2d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride,
                  const IntArg& padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
    return avg_pool_nd("avg_pool2d", 2, x, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, divisor_override);
}

Tensor avg_pool1d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride,
                  const IntArg& padding, bool ceil_mode, bool count_include_pad) {
    return avg_pool_nd("avg_pool1d", 1, x, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, std::nullopt);
}

Tensor avg_pool3d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride,
                  const IntArg& padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
    return avg_pool_nd("avg_pool3d", 3, x, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, divisor_override);
}

Tensor adaptive_avg_pool1d(const Tensor& x, const IntArg& output_size) {
    return adaptive_avg_nd("adaptive_avg_pool1d", 1, x, output_size, "AdaptiveAvgPool2DBackward0");
}

Tensor adaptive_avg_pool2d(const Tensor& x, const IntArg& output_size) {
    return adaptive_avg_nd("adaptive_avg_pool2d", 2, x, output_size, "AdaptiveAvgPool2DBackward0");
}

Tensor adaptive_avg_pool3d(const Tensor& x, const IntArg& output_size) {
    return adaptive_avg_nd("adaptive_avg_pool3d", 3, x, output_size, "AdaptiveAvgPool3DBackward0");
}

std::pair<Tensor, Tensor> adaptive_max_pool1d(const Tensor& x, const IntArg& output_size) {
    return adaptive_max_nd("adaptive_max_pool1d", 1, x, output_size);
}

std::pair<Tensor, Tensor> adaptive_max_pool2d(const Tensor& x, const IntArg& output_size) {
    return adaptive_max_nd("adaptive_max_pool2d", 2, x, output_size);
}

std::pair<Tensor, Tensor> adaptive_max_pool3d(const Tensor& x, const IntArg& output_size) {
    return adaptive_max_nd("adaptive_max_pool3d", 3, x, output_size);
}

}  // namespace tg
