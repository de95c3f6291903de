// Pooling: max_pool2d (with indices), avg_pool2d and adaptive_avg_pool2d over [N,C,H,W] or
// [C,H,W], on the window kernels. Every backward is a gather (Note [Gathering adjoints] in
// backend/device_common/window.hpp), and each backward is itself one recorded op whose own
// backward is the forward's gather again, so double backward works:
//   max:  dx = MaxPoolBackward(dy; idx),   its adjoint  d dy = gather(g, idx)
//   avg:  dx = AvgPoolBackward(dy),        its adjoint  d dy = AvgPool(g)
#include <cmath>
#include <string>

#include "autograd/record.hpp"
#include "backend/backend.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

using backend::Window;
using backend::WindowOp;

/// x as [N,C,H,W] (a 3-D [C,H,W] gets N = 1); throws for other ranks.
Tensor batched(const char* op, const Tensor& x) {
    if (!x.defined())
        throw value_error(std::string(op) + ": undefined input");
    runtime::check_float_kernels(op, x);
    if (x.dim() == 4)
        return x;
    if (x.dim() == 3)
        return x.unsqueeze(0);
    throw shape_error(std::string(op) + ": input " + shape_str(x.sizes()) +
                      ": expected [N,C,H,W] or [C,H,W]");
}

Tensor unbatched(const Tensor& y, const Tensor& x) {
    return x.dim() == 3 ? y.squeeze(0) : y;
}

/// Runs a window kernel from `in` (contiguous) into a new tensor of `shape` (and aux).
Tensor run(WindowOp op, const Window& g, const Tensor& in, const Shape& shape,
           const Tensor& aux = {}) {
    Tensor out = runtime::empty(shape, in.dtype(), in.device(), "pool");
    runtime::be(in).window(op, g, runtime::view(out), runtime::view(in),
                           aux.defined() ? runtime::view(aux) : backend::View{});
    return out;
}

/// The gather of max pooling's backward, recorded: dx = Σ dy over the windows whose argmax
/// each element is; its adjoint gathers g at the indices.
Tensor max_pool_backward(const Tensor& dy, const Tensor& idx, const Window& g, const Shape& xs) {
    const Tensor dyc = dy.detach().contiguous();
    Tensor dx = runtime::empty(xs, dy.dtype(), dy.device(), "max_pool2d");
    runtime::be(dy).window(WindowOp::MaxPoolBackward, g, runtime::view(dx), runtime::view(dyc),
                           runtime::view(idx));
    if (should_record({&dy}))
        record("max_pool2d_backward", {&dy}, dx,
               [si = save_intermediate(idx), ys = dy.sizes(), xs](const Tensor& gx) {
                   const Tensor flat = gx.reshape({xs[0], xs[1], xs[2] * xs[3]});
                   const Tensor at = si.get().reshape({ys[0], ys[1], ys[2] * ys[3]});
                   return Grads{gather(flat, 2, at).reshape(ys)};
               });
    return dx;
}

/// Average pooling forward (AvgPool) or its gather adjoint (AvgPoolBackward), each the other's
/// backward.
Tensor avg_window(bool forward, const Tensor& in, const Window& g, int64_t n, int64_t c) {
    const Tensor ic = in.detach().contiguous();
    Tensor out = forward ? run(WindowOp::AvgPool, g, ic, {n, c, g.oh, g.ow})
                         : run(WindowOp::AvgPoolBackward, g, ic, {n, c, g.h, g.w});
    if (should_record({&in}))
        record(forward ? "avg_pool2d" : "avg_pool2d_backward", {&in}, out,
               [forward, g, n, c](const Tensor& d) {
                   return Grads{avg_window(!forward, d, g, n, c)};
               });
    return out;
}

std::pair<int64_t, int64_t> two(const char* op, const char* what, const IntArg& v,
                                std::pair<int64_t, int64_t> none) {
    const auto& s = v.values();
    if (s.empty())
        return none;
    if (s.size() == 1)
        return {s[0], s[0]};
    if (s.size() == 2)
        return {s[0], s[1]};
    throw shape_error(std::string(op) + ": " + what + " has " + std::to_string(s.size()) +
                      " values: expected 1 or 2");
}

/// Output length of a pooling window along one dim (PyTorch's pooling_output_shape).
int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
    const int64_t span = in + 2 * p - d * (k - 1) - 1;
    int64_t o = (span + (ceil_mode ? s - 1 : 0)) / s + 1;
    if (ceil_mode && (o - 1) * s >= in + p)
        --o;
    return o;
}

/// The windows of a max or average pooling over x4 [N,C,H,W], checked.
Window pool_window(const char* op, const Tensor& x4, const IntArg& kernel, const IntArg& stride,
                   const IntArg& padding, const IntArg& dilation, bool ceil_mode) {
    const auto k = two(op, "kernel_size", kernel, {0, 0});
    const auto s = two(op, "stride", stride, k);
    const auto p = two(op, "padding", padding, {0, 0});
    const auto d = two(op, "dilation", dilation, {1, 1});
    const std::string where = std::string(op) + ": input " + shape_str(x4.sizes());
    if (k.first <= 0 || k.second <= 0 || s.first <= 0 || s.second <= 0 || d.first <= 0 ||
        d.second <= 0)
        throw value_error(where + ": kernel_size, stride and dilation must be positive");
    if (p.first < 0 || p.second < 0 || p.first > k.first / 2 || p.second > k.second / 2)
        throw value_error(where + ": padding must be >= 0 and at most half the kernel size");
    Window g;
    g.planes = checked_mul(x4.size(0), x4.size(1), op, x4.sizes());
    g.h = x4.size(2), g.w = x4.size(3);
    g.kh = k.first, g.kw = k.second, g.sh = s.first, g.sw = s.second;
    g.ph = p.first, g.pw = p.second, g.dh = d.first, g.dw = d.second;
    const bool fits =
        g.h + 2 * g.ph >= g.dh * (g.kh - 1) + 1 && g.w + 2 * g.pw >= g.dw * (g.kw - 1) + 1;
    g.oh = fits ? pool_out(g.h, g.kh, g.sh, g.ph, g.dh, ceil_mode) : 0;
    g.ow = fits ? pool_out(g.w, g.kw, g.sw, g.pw, g.dw, ceil_mode) : 0;
    if (g.oh <= 0 || g.ow <= 0)
        throw shape_error(where + ": the window (" + std::to_string(d.first * (k.first - 1) + 1) +
                          "x" + std::to_string(d.second * (k.second - 1) + 1) +
                          ") is larger than the padded input");
    return g;
}

}  // namespace

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const IntArg& kernel_size,
                                                  const IntArg& stride, const IntArg& padding,
                                                  const IntArg& dilation, bool ceil_mode) {
    const char* op = "max_pool2d";
    const Tensor x4 = batched(op, x);
    const Window g = pool_window(op, x4, kernel_size, stride, padding, dilation, ceil_mode);
    const int64_t N = x4.size(0), C = x4.size(1);
    const Tensor xc = x4.detach().contiguous();
    Tensor idx = runtime::empty({N, C, g.oh, g.ow}, Dtype::Int64, x.device(), op);
    Tensor y = run(WindowOp::MaxPool, g, xc, {N, C, g.oh, g.ow}, idx);
    if (should_record({&x4}))
        record(op, {&x4}, y, [si = save_intermediate(idx), g, xs = x4.sizes()](const Tensor& dy) {
            return Grads{max_pool_backward(dy, si.get(), g, xs)};
        });
    return {unbatched(y, x), unbatched(idx, x)};
}

Tensor max_pool2d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride,
                  const IntArg& padding, const IntArg& dilation, bool ceil_mode) {
    return max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode).first;
}

Tensor avg_pool2d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride,
                  const IntArg& padding, bool ceil_mode, bool count_include_pad) {
    const char* op = "avg_pool2d";
    const Tensor x4 = batched(op, x);
    Window g = pool_window(op, x4, kernel_size, stride, padding, 1, ceil_mode);
    g.count_include_pad = count_include_pad;
    return unbatched(avg_window(true, x4, g, x4.size(0), x4.size(1)), x);
}

Tensor adaptive_avg_pool2d(const Tensor& x, const IntArg& output_size) {
    const char* op = "adaptive_avg_pool2d";
    const Tensor x4 = batched(op, x);
    const auto o = two(op, "output_size", output_size, {-1, -1});
    if (o.first <= 0 || o.second <= 0)
        throw value_error(std::string(op) + ": input " + shape_str(x.sizes()) +
                          ": output_size must be positive");
    if (x4.size(2) == 0 || x4.size(3) == 0)
        throw shape_error(std::string(op) + ": input " + shape_str(x.sizes()) +
                          ": empty spatial dims");
    Window g;
    g.planes = checked_mul(x4.size(0), x4.size(1), op, x4.sizes());
    g.h = x4.size(2), g.w = x4.size(3), g.oh = o.first, g.ow = o.second, g.adaptive = 1;
    const ComposedName named;
    return named(unbatched(avg_window(true, x4, g, x4.size(0), x4.size(1)), x), op,
                 "AdaptiveAvgPool2DBackward0");
}

}  // namespace tg
