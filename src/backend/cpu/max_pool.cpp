// The CPU's max pooling kernels (WindowOp::MaxPool and MaxPoolBackward): a row of windows at a
// time with mask selects, a kernel of its own for the common 2x2 pool with stride 2, and a
// backward that writes each input element from one thread only (Note [Gathering adjoints]).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backend/device_common/window.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "backend/cpu/window_parts.hpp"
#include "core/simd.hpp"

namespace tg::backend::cpu {

namespace {

/// One tap of a MaxPool row: out[j] and at[j] (the best so far and its index) against the tap's
/// value x[j*sw] at index base + j*sw, for j in [0, n), by max_pool_at's rule (a NaN wins and
/// stays). The columns are independent, so their compares overlap instead of forming one
/// window's chain, and the result is chosen by masks, not by a branch on the data.
template <class T>
inline void max_tap(T* __restrict out, int64_t* __restrict at, const T* __restrict x, int64_t base,
                    int64_t sw, int64_t n) {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    for (int64_t j = 0; j < n; ++j) {
        const T v = x[j * sw], best = out[j];
        const int64_t cur = at[j];
        const bool take = (v > best) | (cur < 0) | ((v != v) & (best == best));
        // selects by masks: a branch on `take` is mispredicted about once per window
        const int64_t m = -int64_t(take);
        at[j] = ((base + j * sw) & m) | (cur & ~m);
        U vb, bb;
        std::memcpy(&vb, &v, sizeof(T));
        std::memcpy(&bb, &best, sizeof(T));
        const U r = (vb & U(m)) | (bb & ~U(m));
        std::memcpy(out + j, &r, sizeof(T));
    }
}

/// max_tap for float32 windows two columns apart (every 2x2/2 pool), the stride a constant and
/// compiled for each SIMD width (Note [Wider SIMD]) so the loop vectorises.
TG_SIMD_CLONES void max_tap_f32_s2(float* __restrict out, int64_t* __restrict at,
                                   const float* __restrict x, int64_t base, int64_t n) {
    max_tap(out, at, x, base, 2, n);
}

/// v where take, else best, by their bits (a select, not a branch).
inline float pick(bool take, float v, float best) {
    uint32_t vb, bb;
    std::memcpy(&vb, &v, 4);
    std::memcpy(&bb, &best, 4);
    const uint32_t m = -uint32_t(take), r = (vb & m) | (bb & ~m);
    float out;
    std::memcpy(&out, &r, 4);
    return out;
}

/// One output row of a 2x2 pool with stride 2, no padding and no dilation (the common pool),
/// float32, from input rows x0 and x1 (x0 at index base of its plane, of width w): each output
/// from its four inputs at once, in max_pool_at's tap order and by its rule (the first tap is
/// taken; a later one when greater, or when NaN and the best so far is not), so its values and
/// indices are max_tap's. The window's chain is four values long, and the columns vectorise
/// (compiled per SIMD width).
TG_SIMD_CLONES void max_pool_2x2_row(float* __restrict out, int64_t* __restrict at,
                                     const float* __restrict x0, const float* __restrict x1,
                                     int64_t base, int32_t w, int64_t ow) {
    for (int64_t j = 0; j < ow; ++j) {
        const float a = x0[2 * j], b = x0[2 * j + 1], c = x1[2 * j], d = x1[2 * j + 1];
        float best = a;
        int32_t off = 0;
        bool take = (b > best) | ((b != b) & (best == best));
        best = pick(take, b, best);
        off = take ? 1 : off;
        take = (c > best) | ((c != c) & (best == best));
        best = pick(take, c, best);
        off = take ? w : off;
        take = (d > best) | ((d != d) & (best == best));
        best = pick(take, d, best);
        off = take ? w + 1 : off;
        out[j] = best;
        at[j] = base + 2 * j + off;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/// max_pool_2x2_row with AVX-512, 16 outputs a step and the short tail (a 7- or 14-wide row
/// of a small feature map) under masks instead of scalar code: the even and odd columns of
/// each input row split by permutes; take = !(v <= best) && best is a number, which is
/// max_tap's rule (a NaN is taken and stays).
#pragma GCC diagnostic push  // GCC 12 flags _mm512_undefined inside the intrinsics' own headers
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) void max_pool_2x2_row_avx512(float* out, int64_t* at,
                                                                const float* x0, const float* x1,
                                                                int64_t base, int32_t w,
                                                                int64_t ow) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512i lane2 = _mm512_slli_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 1);
    for (int64_t j = 0; j < ow; j += 16) {
        const int64_t n = std::min<int64_t>(16, ow - j);
        const __mmask16 m = __mmask16((1u << n) - 1);
        const __mmask16 mlo = n >= 8 ? __mmask16(0xFFFF) : __mmask16((1u << (2 * n)) - 1);
        const __mmask16 mhi = n > 8 ? __mmask16((1u << (2 * n - 16)) - 1) : __mmask16(0);
        const float* r0 = x0 + 2 * j;
        const float* r1 = x1 + 2 * j;
        const __m512 lo0 = _mm512_maskz_loadu_ps(mlo, r0),
                     hi0 = _mm512_maskz_loadu_ps(mhi, r0 + 16);
        const __m512 lo1 = _mm512_maskz_loadu_ps(mlo, r1),
                     hi1 = _mm512_maskz_loadu_ps(mhi, r1 + 16);
        __m512 best = _mm512_permutex2var_ps(lo0, even, hi0);
        __m512i off = _mm512_setzero_si512();
        const __m512 v[3] = {_mm512_permutex2var_ps(lo0, odd, hi0),
                             _mm512_permutex2var_ps(lo1, even, hi1),
                             _mm512_permutex2var_ps(lo1, odd, hi1)};
        const int32_t o[3] = {1, w, w + 1};
        for (int t = 0; t < 3; ++t) {
            const __mmask16 take = _mm512_cmp_ps_mask(v[t], best, _CMP_NLE_UQ) &
                                   _mm512_cmp_ps_mask(best, best, _CMP_ORD_Q);
            best = _mm512_mask_mov_ps(best, take, v[t]);
            off = _mm512_mask_mov_epi32(off, take, _mm512_set1_epi32(o[t]));
        }
        _mm512_mask_storeu_ps(out + j, m, best);
        const __m512i idx = _mm512_add_epi32(off, lane2);  // 2*lane + the tap's offset
        const __m512i b = _mm512_set1_epi64(base + 2 * j);
        const __m512i lo = _mm512_add_epi64(b, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(idx)));
        const __m512i hi =
            _mm512_add_epi64(b, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(idx, 1)));
        _mm512_mask_storeu_epi64(at + j, __mmask8(m & 0xFF), lo);
        _mm512_mask_storeu_epi64(at + j + 8, __mmask8(m >> 8), hi);
    }
}
#pragma GCC diagnostic pop
#endif

// Note [Prefetching]: in a training step the pool's input (the ReLU's output, 12.8 MB for the
// CNN example's first pool) has mostly left the cache by the time the pool reads it, and the
// kernel's time went to waiting on its loads (perf), at about half the bandwidth of a plain
// streaming pass over the same input: the hardware prefetcher did not keep ahead of it, though
// the rows it reads are contiguous. Asking for the input kPrefetchAhead floats (2 KiB, nine rows of
// 28) ahead of the row being pooled brings it to memory speed. max_pool2d_with_indices of an
// input just written by relu, behind 32 MB of other traffic, 1 thread, min of 40 (busy host):
// [128,32,28,28] 1.6-1.9 -> 1.0 ms, [128,64,14,14] 1.1-1.2 -> 0.7 ms (2 threads about the same:
// the bandwidth is the limit). A plain pass that streams the same input gains nothing from it:
// the hardware prefetcher follows it. Values and indices are unchanged (a prefetch moves data).
constexpr int64_t kPrefetchAhead = 512;

/// Output rows [r0, r1) of a 2x2/2 pool over planes of h x w (max_pool_2x2_row's, with AVX-512
/// where the CPU has it: bench, [128,32,28,28] forward on 1 thread 4.8 -> 1.0 ms, [128,64,14,14]
/// 4.9 -> 0.6 ms).
void max_pool_2x2_f32(float* y, int64_t* arg, const float* x, int64_t h, int64_t w, int64_t oh,
                      int64_t ow, int64_t r0, int64_t r1) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx512 = __builtin_cpu_supports("avx512f");
#else
    const bool avx512 = false;
#endif
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t p = r / oh, i = r % oh, base = 2 * i * w;
        const float* x0 = x + p * h * w + base;
        // (by address: past the input's end a prefetch does not fault, but a pointer is UB)
        const uintptr_t ahead = reinterpret_cast<uintptr_t>(x0) + 4 * kPrefetchAhead;
        for (int64_t k = 0; k < 2 * w; k += 16)
            __builtin_prefetch(reinterpret_cast<const void*>(ahead + uintptr_t(4 * k)));
#if defined(__x86_64__) && defined(__GNUC__)
        if (avx512) {
            max_pool_2x2_row_avx512(y + r * ow, arg + r * ow, x0, x0 + w, base, int32_t(w), ow);
            continue;
        }
#endif
        max_pool_2x2_row(y + r * ow, arg + r * ow, x0, x0 + w, base, int32_t(w), ow);
    }
}

/// MaxPool a row at a time: output row (p, z, i) starts at -inf with no index, then takes each
/// tap (q, a, b) in max_pool_at's order (max_tap), so its values and indices are max_pool_at's.
template <class T>
void max_pool_rows(const Window& g, T* y, int64_t* arg, const T* x) {
    const TapColumns tc(g);
    slices(
        g.planes * g.ot * g.oh,
        [&](int64_t r0, int64_t r1) {
            const int64_t oh = g.oh, ow = g.ow, h = g.h, w = g.w, kh = g.kh, kw = g.kw, sh = g.sh,
                          sw = g.sw, ph = g.ph, dh = g.dh, ot = g.ot;
            const int64_t *tj0 = tc.j0.data(), *tj1 = tc.j1.data(), *toff = tc.off.data();
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t p = r / (ot * oh), z = (r / oh) % ot, i = r % oh;
                T* out = y + r * ow;
                int64_t* at = arg + r * ow;
                std::fill(out, out + ow, -std::numeric_limits<T>::infinity());
                std::fill(at, at + ow, int64_t(-1));
                for (int64_t q = 0; q < g.kt; ++q) {
                    const int64_t zz = z * g.st - g.pt + q * g.dt;
                    if (zz < 0 || zz >= g.t)
                        continue;
                    const T* xp = x + (p * g.t + zz) * h * w;
                    for (int64_t a = 0; a < kh; ++a) {
                        const int64_t yy = i * sh - ph + a * dh;
                        if (yy < 0 || yy >= h)
                            continue;
                        for (int64_t b = 0; b < kw; ++b) {
                            const int64_t start = yy * w + toff[b];  // slice index of column 0
                            const int64_t j0 = tj0[b], j1 = tj1[b];
                            if (j1 <= j0)
                                continue;
                            // from the first column read (column 0 may lie left of the plane)
                            const T* xs = xp + start + j0 * sw;
                            T* o = out + j0;
                            int64_t* t = at + j0;
                            const int64_t base = zz * h * w + start + j0 * sw, n = j1 - j0;
                            if constexpr (std::is_same_v<T, float>)
                                if (sw == 2) {
                                    max_tap_f32_s2(o, t, xs, base, n);
                                    continue;
                                }
                            max_tap(o, t, xs, base, sw, n);
                        }
                    }
                }
            }
        },
        g.ow * window::taps(g));
}

/// MaxPoolBackward when windows do not overlap (stride >= the dilated kernel on every axis):
/// each input element lies in at most one window, so the thread that owns a plane owns every
/// element its windows cover, and dx = 0 + dy at each window's argmax (the gather's one-term
/// sum, -0 included) and 0 elsewhere: exclusive writes, O(outputs) instead of O(inputs·taps).
template <class T>
void max_pool_backward_disjoint(const Window& g, T* dx, const T* dy, const int64_t* arg) {
    slices(
        g.planes,
        [&](int64_t p0, int64_t p1) {
            const int64_t in = window::volume(g), outs = window::positions(g);
            for (int64_t p = p0; p < p1; ++p) {
                T* o = dx + p * in;
                std::fill(o, o + in, T(0));
                const int64_t* a = arg + p * outs;
                const T* d = dy + p * outs;
                for (int64_t e = 0; e < outs; ++e)
                    if (a[e] >= 0)
                        o[a[e]] = T(0) + d[e];
            }
        },
        window::volume(g));
}

/// MaxPoolBackward (the gather) a row at a time: dx row (p, z, y) collects, tap (q, a, b) by
/// tap in max_pool_backward_at's order, dy of the window of depth rz = window_of(z, q), row
/// i = window_of(y, a) and column j whose argmax is (z, y, j*sw + off): the same sums in the
/// same order, one division per row and tap instead of two per element and tap.
template <class T>
void max_pool_backward_rows(const Window& g, T* dx, const T* dy, const int64_t* arg) {
    const TapColumns tc(g);
    slices(
        g.planes * g.t * g.h,
        [&](int64_t r0, int64_t r1) {
            const int64_t oh = g.oh, ow = g.ow, h = g.h, w = g.w, kh = g.kh, kw = g.kw, sh = g.sh,
                          sw = g.sw, ph = g.ph, dh = g.dh, t = g.t;
            const int64_t *tj0 = tc.j0.data(), *tj1 = tc.j1.data(), *toff = tc.off.data();
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t p = r / (t * h), z = (r / h) % t, yy = r % h,
                              base = p * window::positions(g);
                T* out = dx + r * w;
                std::fill(out, out + w, T(0));
                for (int64_t q = 0; q < g.kt; ++q) {
                    const int64_t rz = window::window_of(z, q, g.st, g.pt, g.dt, g.ot);
                    if (rz < 0)
                        continue;
                    for (int64_t a = 0; a < kh; ++a) {
                        const int64_t i = window::window_of(yy, a, sh, ph, dh, oh);
                        if (i < 0)
                            continue;
                        const int64_t* ar = arg + base + (rz * oh + i) * ow;
                        const T* d = dy + base + (rz * oh + i) * ow;
                        for (int64_t b = 0; b < kw; ++b) {
                            const int64_t j0 = tj0[b], j1 = tj1[b];
                            const int64_t off = toff[b], self = (z * h + yy) * w + off;
                            // a select, not a branch: adding +0 leaves the sum (never -0) as is
                            for (int64_t j = j0; j < j1; ++j)
                                out[j * sw + off] += ar[j] == self + j * sw ? d[j] : T(0);
                        }
                    }
                }
            }
        },
        g.w * window::taps(g));
}

/// Adaptive windows element by element (window::max_pool_at and max_pool_backward_at).
template <class T>
void max_pool_adaptive(const Window& g, T* y, int64_t* arg, const T* x) {
    const int64_t S = window::positions(g);
    slices(
        g.planes * S,
        [&](int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e) {
                const int64_t l = e % S;
                y[e] = window::max_pool_at(g, x, e / S, l / (g.oh * g.ow), (l / g.ow) % g.oh,
                                           l % g.ow, arg + e);
            }
        },
        4);
}
template <class T>
void max_pool_backward_adaptive(const Window& g, T* dx, const T* dy, const int64_t* arg) {
    const int64_t V = window::volume(g);
    slices(
        g.planes * V,
        [&](int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e) {
                const int64_t l = e % V;
                dx[e] = window::max_pool_backward_at(g, dy, arg, e / V, l / (g.h * g.w),
                                                     (l / g.w) % g.h, l % g.w);
            }
        },
        4);
}

}  // namespace

template <class T>
void max_pool(const Window& g, T* y, int64_t* arg, const T* x) {
    if (g.adaptive) {
        max_pool_adaptive(g, y, arg, x);
        return;
    }
    if constexpr (std::is_same_v<T, float>)
        if (g.t == 1 && g.kt == 1 && g.ot == 1 && g.kh == 2 && g.kw == 2 && g.sh == 2 &&
            g.sw == 2 && g.dh == 1 && g.dw == 1 && g.ph == 0 && g.pw == 0 && 2 * g.oh <= g.h &&
            2 * g.ow <= g.w && g.w < (int64_t(1) << 30)) {  // offsets within a window are int32
            slices(
                g.planes * g.oh,
                [&](int64_t r0, int64_t r1) {
                    max_pool_2x2_f32(y, arg, x, g.h, g.w, g.oh, g.ow, r0, r1);
                },
                g.ow * 4);
            return;
        }
    max_pool_rows(g, y, arg, x);
}

template <class T>
void max_pool_backward(const Window& g, T* dx, const T* dy, const int64_t* arg) {
    if (g.adaptive)
        max_pool_backward_adaptive(g, dx, dy, arg);
    else if (g.st >= g.dt * (g.kt - 1) + 1 && g.sh >= g.dh * (g.kh - 1) + 1 &&
             g.sw >= g.dw * (g.kw - 1) + 1)
        max_pool_backward_disjoint(g, dx, dy, arg);
    else
        max_pool_backward_rows(g, dx, dy, arg);
}

template void max_pool<float>(const Window&, float*, int64_t*, const float*);
template void max_pool<double>(const Window&, double*, int64_t*, const double*);
template void max_pool_backward<float>(const Window&, float*, const float*, const int64_t*);
template void max_pool_backward<double>(const Window&, double*, const double*, const int64_t*);

}  // namespace tg::backend::cpu
