// unfold and fold (PyTorch's im2col and col2im): the window kernel's two halves as ops of their
// own, each the other's adjoint.
#include <string>

#include "autograd/record.hpp"
#include "ops/conv_gemm.hpp"
#include "runtime/dispatch.hpp"

namespace tg {

namespace {

using backend::Window;
using backend::WindowOp;
using conv::pair_of;

/// unfold / fold over planes N·C of [H, W], one sample per plane group (col [N, C·taps, L]).
Window fold_window(const char* op, const std::string& where, int64_t N, int64_t C, int64_t H,
                   int64_t W, const IntArg& kernel, const IntArg& dilation, const IntArg& padding,
                   const IntArg& stride) {
    const auto k = pair_of(op, "kernel_size", kernel, 0, 0);
    const auto d = pair_of(op, "dilation", dilation, 1, 1);
    const auto p = pair_of(op, "padding", padding, 0, 0);
    const auto s = pair_of(op, "stride", stride, 1, 1);
    if (k.first <= 0 || k.second <= 0 || d.first <= 0 || d.second <= 0 || s.first <= 0 ||
        s.second <= 0 || p.first < 0 || p.second < 0)
        throw value_error(where +
                          ": kernel_size, dilation and stride must be positive and "
                          "padding >= 0");
    Window g;
    g.kh = k.first, g.kw = k.second, g.dh = d.first, g.dw = d.second;
    g.ph = p.first, g.pw = p.second, g.sh = s.first, g.sw = s.second;
    g.h = H, g.w = W, g.planes = N * C, g.samples = 1;
    const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
    if (H + 2 * g.ph < eh || W + 2 * g.pw < ew)
        throw shape_error(where + ": the kernel (" + std::to_string(eh) + "x" + std::to_string(ew) +
                          " dilated) is larger than the padded input (" +
                          std::to_string(H + 2 * g.ph) + "x" + std::to_string(W + 2 * g.pw) + ")");
    g.oh = conv::out_size(H, g.kh, g.sh, 2 * g.ph, g.dh);
    g.ow = conv::out_size(W, g.kw, g.sw, 2 * g.pw, g.dw);
    const int64_t sizes[] = {N, C, g.kh * g.kw, g.oh * g.ow, H, W};
    (void)checked_prod(sizes, 4, op);
    (void)checked_prod(sizes + 3, 3, op);
    (void)checked_prod(sizes, 2, op);
    return g;
}

Tensor fold_apply(const Tensor& col, const Window& g);

/// col = unfold(x) with window g; recorded, its backward the fold.
Tensor unfold_apply(const Tensor& x, const Window& g) {
    const Tensor xc = x.detach().contiguous();
    const int64_t N = x.size(0), C = x.size(1);
    Tensor col = runtime::empty({N, C * g.kh * g.kw, g.oh * g.ow}, x.dtype(), x.device(), "unfold");
    if (col.numel() > 0)
        runtime::be(x).window(WindowOp::Unfold, g, runtime::view(col), runtime::view(xc), {});
    if (should_record({&x}))
        record("unfold", {&x}, col, [g](const Tensor& dy, const Node& n) {
            Grads gr(1);
            if (needs(n, 0))
                gr[0] = fold_apply(dy, g);
            return gr;
        });
    return col;
}

/// x = fold(col) with window g (the gather; TG_CONV_SCATTER=1 the scatter, as conv2d's);
/// recorded, its backward the unfold.
Tensor fold_apply(const Tensor& col, const Window& g) {
    const Tensor cc = col.detach().contiguous();
    const int64_t N = col.size(0), C = col.size(1) / (g.kh * g.kw);
    Tensor x = runtime::empty({N, C, g.h, g.w}, col.dtype(), col.device(), "fold");
    if (x.numel() > 0 && col.numel() == 0)
        runtime::fill(x, 0);
    else if (x.numel() > 0)
        runtime::be(col).window(conv::fold_op(), g, runtime::view(x), runtime::view(cc), {});
    if (should_record({&col}))
        record("fold", {&col}, x, [g](const Tensor& dy, const Node& n) {
            Grads gr(1);
            if (needs(n, 0))
                gr[0] = unfold_apply(dy, g);
            return gr;
        });
    return x;
}

}  // namespace

Tensor unfold(const Tensor& x, const IntArg& kernel_size, const IntArg& dilation,
              const IntArg& padding, const IntArg& stride) {
    const char* op = "unfold";
    if (!x.defined())
        throw value_error("unfold: undefined input");
    runtime::check_float_kernels(op, x);
    const std::string where = std::string(op) + ": input " + shape_str(x.sizes());
    if (x.dim() != 4)
        throw shape_error(where + ": expected a 4-D input [N,C,H,W]");
    const Window g = fold_window(op, where, x.size(0), x.size(1), x.size(2), x.size(3), kernel_size,
                                 dilation, padding, stride);
    return unfold_apply(x, g);
}

Tensor fold(const Tensor& col, const IntArg& output_size, const IntArg& kernel_size,
            const IntArg& dilation, const IntArg& padding, const IntArg& stride) {
    const char* op = "fold";
    if (!col.defined())
        throw value_error("fold: undefined input");
    runtime::check_float_kernels(op, col);
    const std::string where = std::string(op) + ": input " + shape_str(col.sizes());
    if (col.dim() != 3)
        throw shape_error(where + ": expected a 3-D input [N, C*kh*kw, L]");
    const auto out = pair_of(op, "output_size", output_size, -1, -1);
    if (out.first <= 0 || out.second <= 0)
        throw value_error(where + ": output_size must be two positive sizes");
    const auto k = pair_of(op, "kernel_size", kernel_size, 0, 0);
    const int64_t taps = k.first > 0 && k.second > 0 ? k.first * k.second : 1;
    if (col.size(1) % taps != 0)
        throw shape_error(where + ": dim 1 (" + std::to_string(col.size(1)) +
                          ") is not a multiple of the kernel's " + std::to_string(taps) + " taps");
    const Window g = fold_window(op, where, col.size(0), col.size(1) / taps, out.first, out.second,
                                 kernel_size, dilation, padding, stride);
    if (col.size(2) != g.oh * g.ow)
        throw shape_error(where + ": output_size " + std::to_string(out.first) + "x" +
                          std::to_string(out.second) + " has " + std::to_string(g.oh) + "x" +
                          std::to_string(g.ow) + " = " + std::to_string(g.oh * g.ow) +
                          " windows, the input " + std::to_string(col.size(2)));
    return fold_apply(col, g);
}

}  // namespace tg