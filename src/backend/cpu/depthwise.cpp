// The CPU's depthwise convolution kernels (backend.hpp's WindowOp::Depthwise*).
//
// Note [Depthwise convolutions]: with groups = channels (MobileNet's 3x3 layers), a convolution
// is C independent single-channel filters of kh·kw taps. Lowered to im2col and GEMMs, every
// group's GEMM is [1, taps] x [taps, L]: a GEMV that writes and rereads taps·L unfolded elements
// to do taps·L multiply-adds, at a fraction of the BLAS's speed. These kernels run the windows
// directly instead, a plane (one sample's channel) at a time, each tap a contiguous pass over a
// row of y (stride 1) that the compiler vectorises:
//   Forward: y[p, i, j]   = Σ_{a,b} w[c, a, b] · x[p, i·sh - ph + a·dh, j·sw - pw + b·dw]
//   Input:   dx[p] gets w[c, a, b] · dy[p, i, j] added at those positions (a plane's scatter:
//            the plane belongs to one thread, so no atomics, and the order is fixed)
//   Weight:  dw[c, a, b]  = Σ_n Σ_{i,j} dy[n·C + c, i, j] · x[n·C + c, i·sh - ph + a·dh, ...]
//            summed per output column j first (a row of partial sums per tap, which adds
//            elementwise and vectorises, where one running sum is a chain of dependent adds),
//            then over j
// Forward and Input split the planes over the kernel threads, Weight the channels (each summed
// over the samples in order), so every result is bit-identical for any thread count. 2-D windows
// only (conv1d is a 2-D window of one row); conv_direct.cpp picks these kernels (Note [The
// convolution strategy by shape]).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/cpu/window_parts.hpp"
#include "core/simd.hpp"

namespace tg::backend::cpu {

namespace {

// The rows' contiguous loops (stride 1), compiled for AVX2 and AVX-512 too (Note [Wider SIMD]:
// no FMA contraction, so every clone rounds alike).
template <class T>
TG_SIMD_CLONES void axpy_row(int64_t n, T a, const T* __restrict x, T* __restrict y) {
    for (int64_t j = 0; j < n; ++j)
        y[j] += a * x[j];
}
template <class T>
TG_SIMD_CLONES void mul_add_row(int64_t n, const T* __restrict a, const T* __restrict b,
                                T* __restrict acc) {
    for (int64_t j = 0; j < n; ++j)
        acc[j] += a[j] * b[j];
}

/// The input row of output row i and tap row a, or -1 in the padding.
inline int64_t in_row(const Window& g, int64_t i, int64_t a) {
    const int64_t y = i * g.sh - g.ph + a * g.dh;
    return y >= 0 && y < g.h ? y : -1;
}

template <class T>
void forward(const Window& g, T* y, const T* x, const T* w) {
    const int64_t C = g.planes / g.samples, taps = g.kh * g.kw, L = g.oh * g.ow;
    const TapColumns tc(g);
    slices(
        g.planes,
        [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
                const T* xp = x + p * g.h * g.w;
                const T* wc = w + (p % C) * taps;
                T* yp = y + p * L;
                std::fill(yp, yp + L, T(0));
                for (int64_t i = 0; i < g.oh; ++i) {
                    T* yr = yp + i * g.ow;
                    for (int64_t a = 0; a < g.kh; ++a) {
                        const int64_t r = in_row(g, i, a);
                        if (r < 0)
                            continue;
                        const T* xr = xp + r * g.w;
                        for (int64_t b = 0; b < g.kw; ++b) {
                            const size_t bb = size_t(b);
                            const T wv = wc[a * g.kw + b];
                            const int64_t j0 = tc.j0[bb], j1 = tc.j1[bb], off = tc.off[bb];
                            if (j1 <= j0)  // no column of this tap inside x
                                continue;
                            if (g.sw == 1)
                                axpy_row(j1 - j0, wv, xr + j0 + off, yr + j0);
                            else
                                for (int64_t j = j0; j < j1; ++j)
                                    yr[j] += wv * xr[j * g.sw + off];
                        }
                    }
                }
            }
        },
        L * taps);
}

template <class T>
void input(const Window& g, T* dx, const T* dy, const T* w) {
    const int64_t C = g.planes / g.samples, taps = g.kh * g.kw, L = g.oh * g.ow;
    const TapColumns tc(g);
    slices(
        g.planes,
        [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
                T* xp = dx + p * g.h * g.w;
                const T* wc = w + (p % C) * taps;
                const T* yp = dy + p * L;
                std::fill(xp, xp + g.h * g.w, T(0));
                for (int64_t i = 0; i < g.oh; ++i) {
                    const T* yr = yp + i * g.ow;
                    for (int64_t a = 0; a < g.kh; ++a) {
                        const int64_t r = in_row(g, i, a);
                        if (r < 0)
                            continue;
                        T* xr = xp + r * g.w;
                        for (int64_t b = 0; b < g.kw; ++b) {
                            const size_t bb = size_t(b);
                            const T wv = wc[a * g.kw + b];
                            const int64_t j0 = tc.j0[bb], j1 = tc.j1[bb], off = tc.off[bb];
                            if (j1 <= j0)  // no column of this tap inside x
                                continue;
                            if (g.sw == 1)
                                axpy_row(j1 - j0, wv, yr + j0, xr + j0 + off);
                            else
                                for (int64_t j = j0; j < j1; ++j)
                                    xr[j * g.sw + off] += wv * yr[j];
                        }
                    }
                }
            }
        },
        L * taps);
}

template <class T>
void weight(const Window& g, T* dw, const T* x, const T* dy) {
    const int64_t C = g.planes / g.samples, taps = g.kh * g.kw, L = g.oh * g.ow;
    const TapColumns tc(g);
    slices(
        C,
        [&](int64_t c0, int64_t c1) {
            // a row of partial sums per tap, one per output column: the products add
            // elementwise (vectorised), not into one serial sum
            std::vector<T> acc(size_t(taps * g.ow));
            for (int64_t c = c0; c < c1; ++c) {
                std::fill(acc.begin(), acc.end(), T(0));
                for (int64_t n = 0; n < g.samples; ++n) {
                    const int64_t p = n * C + c;
                    for (int64_t i = 0; i < g.oh; ++i) {
                        const T* yr = dy + p * L + i * g.ow;
                        for (int64_t a = 0; a < g.kh; ++a) {
                            const int64_t r = in_row(g, i, a);
                            if (r < 0)
                                continue;
                            const T* xr = x + p * g.h * g.w + r * g.w;
                            for (int64_t b = 0; b < g.kw; ++b) {
                                const size_t bb = size_t(b);
                                const int64_t j0 = tc.j0[bb], j1 = tc.j1[bb], off = tc.off[bb];
                                if (j1 <= j0)  // no column of this tap inside x
                                    continue;
                                T* ar = acc.data() + (a * g.kw + b) * g.ow;
                                if (g.sw == 1)
                                    mul_add_row(j1 - j0, yr + j0, xr + j0 + off, ar + j0);
                                else
                                    for (int64_t j = j0; j < j1; ++j)
                                        ar[j] += yr[j] * xr[j * g.sw + off];
                            }
                        }
                    }
                }
                for (int64_t t = 0; t < taps; ++t) {
                    T sum = 0;
                    for (int64_t j = 0; j < g.ow; ++j)
                        sum += acc[size_t(t * g.ow + j)];
                    dw[c * taps + t] = sum;
                }
            }
        },
        g.samples * L * taps);
}

}  // namespace

template <class T>
void depthwise(WindowOp op, const Window& g, T* out, const T* in, const T* aux) {
    if (op == WindowOp::DepthwiseForward)
        forward(g, out, in, aux);
    else if (op == WindowOp::DepthwiseInput)
        input(g, out, in, aux);
    else
        weight(g, out, in, aux);
}
template void depthwise<float>(WindowOp, const Window&, float*, const float*, const float*);
template void depthwise<double>(WindowOp, const Window&, double*, const double*, const double*);

}  // namespace tg::backend::cpu
