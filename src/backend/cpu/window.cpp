// The CPU's window kernels (backend.hpp's WindowOp): the element bodies of
// device_common/window.hpp, split over the kernel threads by output element. Every kernel but
// FoldScatter writes only the elements of its own slice (Note [Gathering adjoints]).
#include "backend/device_common/window.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/backend.hpp"
#include "backend/cpu/iterate.hpp"
#include "backend/cpu/simd.hpp"
#include "backend/cpu/threads.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::cpu {

namespace {

/// Runs body(begin, end) over [0, n) units of `per_unit` elements each, in one slice per kernel
/// thread (one slice below kParallelMin / 8 elements: window elements cost several loads each).
template <class F>
void slices(int64_t n, const F& body, int64_t per_unit = 1) {
    const int threads = n * per_unit >= kParallelMin / 8 ? cpu_threads() : 1;
    if (threads < 2) {
        body(int64_t(0), n);
        return;
    }
    const int parts = threads;
    cpu_parallel(parts, [&](int t) { body(n * t / parts, n * (t + 1) / parts); });
}

/// Runs f(p, r, c, e) for every element e = (p*nr + r)*nc + c of a [planes, nr, nc] output, a
/// row (p, r) at a time, the rows split over the kernel threads.
template <class F>
void rows(int64_t planes, int64_t nr, int64_t nc, const F& f) {
    slices(
        planes * nr,
        [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t p = r / nr, i = r % nr;
                for (int64_t c = 0; c < nc; ++c)
                    f(p, i, c, r * nc + c);
            }
        },
        nc);
}

/// An atomic x += v on a float or double (compare-and-swap on its bits).
template <class T>
void atomic_add(T* x, T v) {
    T old, want;
    __atomic_load(x, &old, __ATOMIC_RELAXED);
    do {
        want = old + v;
    } while (!__atomic_compare_exchange(x, &old, &want, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/// FoldScatter: the scatter form of Fold, kept for the benchmark only: each (plane, tap) row of
/// col adds its entries into the x elements they were read from, atomically, since rows of
/// different taps write the same elements.
template <class T>
void fold_scatter(const Window& g, T* dx, const T* col) {
    const int64_t K = g.kh * g.kw;
    std::memset(dx, 0, size_t(g.planes * g.h * g.w) * sizeof(T));
    slices(g.planes * K, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t p = r / K, a = (r % K) / g.kw, b = r % g.kw;
            T* out = dx + p * g.h * g.w;
            const T* c = col + window::col_row(g, p, r % K);
            for (int64_t i = 0; i < g.oh; ++i) {
                const int64_t y = i * g.sh - g.ph + a * g.dh;
                if (y < 0 || y >= g.h)
                    continue;
                for (int64_t j = 0; j < g.ow; ++j) {
                    const int64_t x = j * g.sw - g.pw + b * g.dw;
                    if (x >= 0 && x < g.w)
                        atomic_add(out + y * g.w + x, c[i * g.ow + j]);
                }
            }
        }
    });
}

/// The valid output columns of tap b: [*j0, *j1) with 0 <= j*sw - pw + b*dw < w.
inline void tap_columns(const Window& g, int64_t b, int64_t* j0, int64_t* j1) {
    const int64_t off = b * g.dw - g.pw;  // x = j*sw + off
    *j0 = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
    *j1 = g.w - off <= 0 ? 0 : std::min(g.ow, (g.w - off + g.sw - 1) / g.sw);
    if (*j1 < *j0)
        *j1 = *j0;
}

/// Unfold of tap (a, b) of one plane xp into out [oh, ow] when rows keep their width (ow == w)
/// and both strides are 1: output element (i, j) reads x element (i, j) shifted by a constant,
/// so the tap's valid rows are one block of x, copied at once (a row at a time, a 3x3 unfold of
/// 28-wide rows spent more in memmove calls than in copying). The columns of each valid row
/// outside [j0, j1) read the neighbouring rows and are zeroed after, a column at a time.
template <class T>
void unfold_block(const Window& g, int64_t a, int64_t j0, int64_t j1, int64_t off, const T* xp,
                  T* out) {
    const int64_t shift = a * g.dh - g.ph;  // output row i reads x row i + shift
    const int64_t i0 = std::max<int64_t>(0, -shift), i1 = std::min(g.oh, g.h - shift);
    if (i1 <= i0 || j1 <= j0) {
        std::fill(out, out + g.oh * g.ow, T(0));
        return;
    }
    std::fill(out, out + i0 * g.ow, T(0));
    std::fill(out + i1 * g.ow, out + g.oh * g.ow, T(0));
    const T* src = xp + (i0 + shift) * g.w + j0 + off;
    std::copy(src, src + (i1 - i0 - 1) * g.ow + (j1 - j0), out + i0 * g.ow + j0);
    for (int64_t j = 0; j < j0; ++j)
        for (int64_t i = i0; i < i1; ++i)
            out[i * g.ow + j] = T(0);
    for (int64_t j = j1; j < g.ow; ++j)
        for (int64_t i = i0; i < i1; ++i)
            out[i * g.ow + j] = T(0);
}

/// Unfold a row at a time: row (p, a, b) of col, output row i, reads x row i*sh - ph + a*dh.
template <class T>
void unfold_rows(const Window& g, T* col, const T* x) {
    const int64_t K = g.kh * g.kw;
    const bool block = g.sw == 1 && g.sh == 1 && g.ow == g.w;
    slices(
        g.planes * K,
        [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t p = r / K, a = (r % K) / g.kw, b = r % g.kw;
                int64_t j0, j1;
                tap_columns(g, b, &j0, &j1);
                const int64_t off = b * g.dw - g.pw;
                const T* xp = x + p * g.h * g.w;
                T* out = col + window::col_row(g, p, r % K);
                if (block) {
                    unfold_block(g, a, j0, j1, off, xp, out);
                    continue;
                }
                for (int64_t i = 0; i < g.oh; ++i, out += g.ow) {
                    const int64_t y = i * g.sh - g.ph + a * g.dh;
                    if (y < 0 || y >= g.h) {
                        std::fill(out, out + g.ow, T(0));
                        continue;
                    }
                    const T* xr = xp + y * g.w;  // x column j*sw + off
                    std::fill(out, out + j0, T(0));
                    if (g.sw == 1)
                        std::copy(xr + j0 + off, xr + j1 + off, out + j0);
                    else
                        for (int64_t j = j0; j < j1; ++j)
                            out[j] = xr[j * g.sw + off];
                    std::fill(out + j1, out + g.ow, T(0));
                }
            }
        },
        g.oh * g.ow);
}

/// Fold (the gather, Note [Gathering adjoints]) a row at a time: each dx row (p, y) is owned by
/// one thread and sums, tap (a, b) by tap in the per-element order of window::fold_at, the col
/// row of the window row i that reads it.
template <class T>
void fold_rows(const Window& g, T* dx, const T* col) {
    slices(
        g.planes * g.h,
        [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t p = r / g.h, y = r % g.h;
                T* out = dx + r * g.w;
                std::fill(out, out + g.w, T(0));
                for (int64_t a = 0; a < g.kh; ++a) {
                    const int64_t i = window::window_of(y, a, g.sh, g.ph, g.dh, g.oh);
                    if (i < 0)
                        continue;
                    for (int64_t b = 0; b < g.kw; ++b) {
                        int64_t j0, j1;
                        tap_columns(g, b, &j0, &j1);
                        const T* c = col + window::col_row(g, p, a * g.kw + b) + i * g.ow;
                        const int64_t off = b * g.dw - g.pw;  // column j reads x = j*sw + off
                        if (g.sw == 1)
                            for (int64_t j = j0; j < j1; ++j)
                                out[j + off] += c[j];
                        else
                            for (int64_t j = j0; j < j1; ++j)
                                out[j * g.sw + off] += c[j];
                    }
                }
            }
        },
        g.w * g.kh * g.kw);
}

/// Each tap column b's valid output columns [j0, j1) and offset (x = j*sw + off), computed once.
struct TapColumns {
    std::vector<int64_t> j0, j1, off;
    explicit TapColumns(const Window& g) : j0(size_t(g.kw)), j1(size_t(g.kw)), off(size_t(g.kw)) {
        for (int64_t b = 0; b < g.kw; ++b) {
            tap_columns(g, b, &j0[size_t(b)], &j1[size_t(b)]);
            off[size_t(b)] = b * g.dw - g.pw;
        }
    }
};

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

/// MaxPool a row at a time: output row (p, i) starts at -inf with no index, then takes each tap
/// (a, b) in max_pool_at's order (max_tap), so its values and indices are max_pool_at's.
template <class T>
void max_pool_rows(const Window& g, T* y, int64_t* arg, const T* x) {
    const TapColumns tc(g);
    slices(
        g.planes * g.oh,
        [&](int64_t r0, int64_t r1) {
            const int64_t oh = g.oh, ow = g.ow, h = g.h, w = g.w, kh = g.kh, kw = g.kw, sh = g.sh,
                          sw = g.sw, ph = g.ph, dh = g.dh;
            const int64_t *tj0 = tc.j0.data(), *tj1 = tc.j1.data(), *toff = tc.off.data();
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t p = r / oh, i = r % oh;
                T* out = y + r * ow;
                int64_t* at = arg + r * ow;
                std::fill(out, out + ow, -std::numeric_limits<T>::infinity());
                std::fill(at, at + ow, int64_t(-1));
                const T* xp = x + p * h * w;
                for (int64_t a = 0; a < kh; ++a) {
                    const int64_t yy = i * sh - ph + a * dh;
                    if (yy < 0 || yy >= h)
                        continue;
                    for (int64_t b = 0; b < kw; ++b) {
                        const int64_t start = yy * w + toff[b];  // x index of column 0
                        const int64_t j0 = tj0[b], j1 = tj1[b];
                        if (j1 <= j0)
                            continue;
                        // from the first column read (column 0 may lie left of the plane)
                        const T* xs = xp + start + j0 * sw;
                        T* o = out + j0;
                        int64_t* t = at + j0;
                        const int64_t base = start + j0 * sw, n = j1 - j0;
                        if constexpr (std::is_same_v<T, float>)
                            if (sw == 2) {
                                max_tap_f32_s2(o, t, xs, base, n);
                                continue;
                            }
                        max_tap(o, t, xs, base, sw, n);
                    }
                }
            }
        },
        g.ow * g.kh * g.kw);
}

/// MaxPoolBackward when windows do not overlap (stride >= the dilated kernel on both axes):
/// each input element lies in at most one window, so the thread that owns a plane owns every
/// element its windows cover, and dx = 0 + dy at each window's argmax (the gather's one-term
/// sum, -0 included) and 0 elsewhere: exclusive writes, O(outputs) instead of O(inputs·taps).
template <class T>
void max_pool_backward_disjoint(const Window& g, T* dx, const T* dy, const int64_t* arg) {
    slices(
        g.planes,
        [&](int64_t p0, int64_t p1) {
            const int64_t in = g.h * g.w, outs = g.oh * g.ow;
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
        g.h * g.w);
}

/// MaxPoolBackward (the gather) a row at a time: dx row (p, y) collects, tap (a, b) by tap in
/// max_pool_backward_at's order, dy of the window of row i = window_of(y, a) and column j whose
/// argmax is (y, j*sw + off): the same sums in the same order, one division per row and tap
/// instead of two per element and tap.
template <class T>
void max_pool_backward_rows(const Window& g, T* dx, const T* dy, const int64_t* arg) {
    const TapColumns tc(g);
    slices(
        g.planes * g.h,
        [&](int64_t r0, int64_t r1) {
            const int64_t oh = g.oh, ow = g.ow, h = g.h, w = g.w, kh = g.kh, kw = g.kw, sh = g.sh,
                          sw = g.sw, ph = g.ph, dh = g.dh;
            const int64_t *tj0 = tc.j0.data(), *tj1 = tc.j1.data(), *toff = tc.off.data();
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t p = r / h, yy = r % h, base = p * oh * ow;
                T* out = dx + r * w;
                std::fill(out, out + w, T(0));
                for (int64_t a = 0; a < kh; ++a) {
                    const int64_t i = window::window_of(yy, a, sh, ph, dh, oh);
                    if (i < 0)
                        continue;
                    const int64_t* ar = arg + base + i * ow;
                    const T* d = dy + base + i * ow;
                    for (int64_t b = 0; b < kw; ++b) {
                        const int64_t j0 = tj0[b], j1 = tj1[b];
                        const int64_t off = toff[b], self = yy * w + off;
                        // a select, not a branch: adding +0 leaves the sum (never -0) as it is
                        for (int64_t j = j0; j < j1; ++j)
                            out[j * sw + off] += ar[j] == self + j * sw ? d[j] : T(0);
                    }
                }
            }
        },
        g.w * g.kh * g.kw);
}

template <class T>
void window_loop(WindowOp op, const Window& g, const View& outv, const View& inv,
                 const View& auxv) {
    T* out = ptr<T>(outv);
    const T* in = ptr<T>(inv);
    switch (op) {
        case WindowOp::Unfold:
            unfold_rows(g, out, in);
            return;
        case WindowOp::Fold:
            fold_rows(g, out, in);
            return;
        case WindowOp::FoldScatter:
            fold_scatter(g, out, in);
            return;
        case WindowOp::MaxPool:
            max_pool_rows(g, out, ptr<int64_t>(auxv), in);
            return;
        case WindowOp::MaxPoolBackward:
            if (g.sh >= g.dh * (g.kh - 1) + 1 && g.sw >= g.dw * (g.kw - 1) + 1)
                max_pool_backward_disjoint(g, out, in, ptr<int64_t>(auxv));
            else
                max_pool_backward_rows(g, out, in, ptr<int64_t>(auxv));
            return;
        case WindowOp::AvgPool:
            rows(g.planes, g.oh, g.ow, [&](int64_t p, int64_t i, int64_t j, int64_t e) {
                out[e] = window::avg_pool_at(g, in, p, i, j);
            });
            return;
        case WindowOp::AvgPoolBackward:
            rows(g.planes, g.h, g.w, [&](int64_t p, int64_t y, int64_t x, int64_t e) {
                out[e] = window::avg_pool_backward_at(g, in, p, y, x);
            });
            return;
    }
}

}  // namespace

void CpuBackend::window(WindowOp op, const Window& g, const View& out, const View& in,
                        const View& aux) {
    if (out.dtype != Dtype::Float32 && out.dtype != Dtype::Float64)
        throw dtype_error(std::string("window kernel: dtype ") + dtype_name(out.dtype) +
                          " is not floating");
    if (out.dtype == Dtype::Float32)
        window_loop<float>(op, g, out, in, aux);
    else
        window_loop<double>(op, g, out, in, aux);
}

}  // namespace tg::backend::cpu
