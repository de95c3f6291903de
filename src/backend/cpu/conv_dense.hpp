#pragma once
// The CPU's direct kernel for dense stride-1 convolutions in float32 (Note [Direct dense
// convolutions] in cpu/conv_dense.cpp): no unfolded buffer, AVX-512 where the CPU has it.
#include <cstdint>

namespace tg::backend::cpu {

/// One stride-1, groups = 1 convolution: x [N, C, T, H, W] -> y [N, O, ot, oh, ow] (2-D and
/// 1-D ones have T = kt = ot = 1), output depth z reading input depths z - pt + q·dt for q < kt
/// (zero outside [0, T)), likewise rows and columns; pt, ph, pw may be negative (the adjoint's).
struct DenseConv {
    int64_t N = 0, C = 0, O = 0;
    int64_t T = 1, H = 1, W = 1;
    int64_t ot = 1, oh = 1, ow = 1;
    int64_t kt = 1, kh = 1, kw = 1;
    int64_t pt = 0, ph = 0, pw = 0;
    int64_t dt = 1, dh = 1, dw = 1;
};

/// Whether dense_conv runs here: an x86-64 CPU with AVX-512F (and not TG_CONV_DENSE=0).
bool dense_conv_available();

/// The float32 elements of the workspace dense_conv needs (the zero-padded copy of x).
int64_t dense_conv_workspace(const DenseConv& g);

/// y[n, o, z, i, j] = bias[o] + Σ_{c, q, a, b} wt(o, c, q, a, b) · x[n, c, z - pt + q·dt,
/// i - ph + a·dh, j - pw + b·dw], where wt is w [O, C, kt, kh, kw], or with `adjoint` w
/// [C, O, kt, kh, kw] with its taps reversed: wt(o, c, q, a, b) = w[c, o, kt-1-q, kh-1-a,
/// kw-1-b] (a stride-1 convolution's input gradient is the convolution of dy by that wt with
/// front padding d·(k-1) - p). bias may be null. Every y element is summed in one fixed order
/// by one thread: the same bits for any thread count. Requires dense_conv_available().
void dense_conv(const DenseConv& g, float* y, const float* x, const float* w, const float* bias,
                bool adjoint, float* workspace);

/// The largest kw dense_conv_weight takes.
constexpr int64_t kDenseWeightMaxKw = 4;

/// dw [O, C, kt, kh, kw] = Σ_n Σ_{z, i, j} dy[n, o, z, i, j] · x[n, c, z - pt + q·dt,
/// i - ph + a·dh, j - pw + b·dw]: the weight gradient of dense_conv's (not adjoint) convolution
/// g, for kw <= kDenseWeightMaxKw. The sums run over (sample, output depth) tiles in order, each
/// tile's a vector per dw element added across its lanes at the tile's end; the dw elements are
/// shared out over the threads, so the same bits for any thread count. workspace as dense_conv's.
void dense_conv_weight(const DenseConv& g, float* dw, const float* x, const float* dy,
                       float* workspace);

}  // namespace tg::backend::cpu
