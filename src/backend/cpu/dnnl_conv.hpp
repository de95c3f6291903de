#pragma once
// Float32 convolutions on oneDNN (built with TG_DNNL only; Note [The convolution strategy by
// shape] in ops/conv_direct.cpp says when they are taken).
#include <cstdint>

namespace tg::backend::cpu {

/// One convolution: x [N, C, in...] -> y [N, O, out...] with w [O, C/groups, k...], over nd
/// spatial axes (1 to 3), each with its stride s, front padding p and dilation d (1 = none);
/// the padding at the end is whatever makes out (it may be negative: unused last rows).
struct DnnlConv {
    int nd = 2;
    int64_t N = 0, C = 0, O = 0, groups = 1;
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
    int64_t s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
};

/// The three bilinear ops (Note [Convolution as three bilinear ops]).
enum class DnnlOp { Forward, Input, Weight };

/// Forward: out = y from a = x, b = w (+ bias, may be null); Input: out = dx from a = dy,
/// b = w; Weight: out = dw from a = x, b = dy. Every tensor contiguous float32 in tapegrad's
/// layout (N, C, spatial...; w O, C/groups, k...), on up to `threads` OpenMP threads. Returns
/// false, touching nothing, when oneDNN has no implementation for this convolution. A failure
/// while it runs throws tg::out_of_memory (no memory for its buffers) or tg::error (oneDNN's
/// own), naming the convolution.
bool dnnl_conv(DnnlOp op, const DnnlConv& c, float* out, const float* a, const float* b,
               const float* bias, int threads);

}  // namespace tg::backend::cpu
