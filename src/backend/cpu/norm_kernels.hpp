#pragma once
// The fused CPU kernels of the normalisations and of dropout's mask (Note [Fused normalisation
// kernels] in cpu/norm_kernels.cpp). Host pointers to contiguous float32 or float64 data of
// dtype d; threaded over planes or rows with cpu_parallel. The ops call them for tensors on the
// CPU and keep their composed path on other devices.
#include <cstdint>

#include "tapegrad/dtype.hpp"

namespace tg::backend::cpu {

/// x [N, C, S] read as P = N·C planes of S elements; plane p is channel p % C and belongs to
/// group `group(p)`: its channel (batch_norm, groups = 0) or, with G = groups, group
/// (p / C)·G + (p % C) / (C / G) of sample p / C (group_norm).
struct Planes {
    int64_t planes = 0, len = 0, channels = 0, groups = 0;
    int64_t group(int64_t p) const {
        return groups ? (p / channels) * groups + (p % channels) / (channels / groups)
                      : p % channels;
    }
    int64_t group_count() const { return groups ? planes / channels * groups : channels; }
};

/// out[p] = Σ over plane p of x, or with `center` (one value per group) Σ (x - center)²; in
/// double.
void plane_sums(Dtype d, const void* x, const Planes& g, const double* center, double* out);
/// y = x·scale[p] + shift[p] over each plane p (scale and shift rounded to d first).
void plane_affine(Dtype d, void* y, const void* x, const Planes& g, const double* scale,
                  const double* shift);
/// s1[p] = Σ dy and s2[p] = Σ dy·(x - mean[group(p)]) over each plane p, in double.
void plane_grad_sums(Dtype d, const void* dy, const void* x, const Planes& g, const double* mean,
                     double* s1, double* s2);
/// dx = k[p]·dy + a[p]·(x - m[p]) + b[p] over each plane p; a == nullptr: dx = k[p]·dy.
void plane_grad_apply(Dtype d, void* dx, const void* dy, const void* x, const Planes& g,
                      const double* k, const double* a, const double* m, const double* b);

/// layer_norm (center) / rms_norm of x [rows, cols]: y = xhat·w + b (w, b [cols] or null),
/// mean and rstd [rows] written in d (mean only with center).
void row_norm_forward(Dtype d, void* y, const void* x, const void* w, const void* b, int64_t rows,
                      int64_t cols, bool center, double eps, void* mean, void* rstd);
/// Its gradients: dx (null: not wanted) = rstd·(g - mean(g) - xhat·mean(g·xhat)), g = dy·w,
/// dw = Σ_rows dy·xhat, db = Σ_rows dy ([cols], null: not wanted). The column sums are taken
/// over fixed blocks of rows and added in block order: the same bits at any thread count.
void row_norm_backward(Dtype d, void* dx, void* dw, void* db, const void* dy, const void* x,
                       const void* w, const void* mean, const void* rstd, int64_t rows,
                       int64_t cols, bool center);

/// out[i] = in[i]·(bit i of bits ? one : 0) over n elements (dropout with its mask as bits).
void mask_bits_mul(Dtype d, void* out, const void* in, const uint64_t* bits, int64_t n, double one);

}  // namespace tg::backend::cpu
