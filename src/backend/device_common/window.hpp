#pragma once
// The per-element bodies of the window kernels (backend.hpp's WindowOp). CUDA runs every kernel
// from them, one thread per element; the CPU runs the pooling ones from them a row at a time and
// unfolds and folds whole rows (cpu/window.cpp, adding in the same order); OpenCL's program text
// (opencl/window_source.cpp) spells the same loops in OpenCL C. Each function computes one
// element of its output from its inputs and writes nothing else.
//
// Note [Gathering adjoints]: a convolution (Unfold + GEMM) and a pooling read overlapping
// windows, so each input element is read by several outputs. Their adjoints could be written as
// the forward loop run backwards, adding each output's gradient into the input elements its
// window read: a scatter, where two threads that own different outputs write the same input
// element and need atomics (or private buffers summed afterwards), and the order of additions,
// hence the float result, depends on the schedule. Written instead as a stencil over the input
// (the "transposed forward" form), each input element (y, x) enumerates the taps (a, b) of a
// window and solves for the one window (i, j) whose tap (a, b) lands on it:
//     i = (y + ph - a·dh) / sh   when the division is exact and 0 <= i < oh   (likewise j),
// and sums those windows' gradients itself. So:
//   - each thread writes only the elements it owns: no atomics, no zeroing pass, no races;
//   - the sum for one element is taken in one fixed order, tap (a, b) by tap, whatever the thread
//     count or device: results are bit-identical across thread counts, and equal (in float64, on
//     the CPU) to the single-threaded scatter, which adds the same terms in the same order;
//   - the work per element is bounded by kh·kw, so the threads stay balanced.
// Fold (the input gradient of a convolution), MaxPoolBackward (each element collects dy of the
// windows whose argmax it is, including overlapping windows, stride < kernel) and
// AvgPoolBackward (dy / the window's divisor) are written this way; FoldScatter keeps the
// scatter on the CPU for the benchmark only (benchmarks/bench_conv.cpp). When a max pool's
// windows do not overlap (stride >= the dilated kernel), each input element has at most one
// window, so the CPU lets the thread that owns a plane write 0 + dy at each window's argmax
// (cpu/window.cpp): the same one-term sums, still exclusive writes, in O(outputs).
#include <cmath>
#include <cstdint>

#include "backend/backend.hpp"

#ifdef __CUDACC__
#define TG_HD __host__ __device__
#else
#define TG_HD
#endif

namespace tg::backend::window {

/// The window that reads input position y (of n) with tap a: its index, or -1 when there is none
/// (the division is not exact or the window lies outside [0, count)).
TG_HD inline int64_t window_of(int64_t y, int64_t a, int64_t s, int64_t p, int64_t d,
                               int64_t count) {
    const int64_t t = y + p - a * d;
    if (t < 0 || t % s != 0)
        return -1;
    const int64_t i = t / s;
    return i < count ? i : -1;
}

/// Adaptive windows: window i of `count` over n positions covers [start, end).
TG_HD inline int64_t adaptive_start(int64_t i, int64_t n, int64_t count) {
    return (i * n) / count;
}
TG_HD inline int64_t adaptive_end(int64_t i, int64_t n, int64_t count) {
    return ((i + 1) * n + count - 1) / count;
}

/// Where row (plane p, tap k) of the unfolded buffer [C, kh*kw, samples, oh*ow] starts.
TG_HD inline int64_t col_row(const Window& g, int64_t p, int64_t k) {
    const int64_t C = g.planes / g.samples, n = p / C, c = p % C;
    return ((c * g.kh * g.kw + k) * g.samples + n) * g.oh * g.ow;
}

/// Unfold: col[c, a*kw + b, n, i*ow + j] = x[n*C + c, i*sh - ph + a*dh, j*sw - pw + b*dw], 0
/// outside. e is the linear index into col.
template <class T>
TG_HD inline T unfold_at(const Window& g, const T* x, int64_t e) {
    const int64_t L = g.oh * g.ow, K = g.kh * g.kw, C = g.planes / g.samples;
    const int64_t l = e % L, n = (e / L) % g.samples, k = (e / (L * g.samples)) % K,
                  c = e / (L * g.samples * K), p = n * C + c;
    const int64_t y = (l / g.ow) * g.sh - g.ph + (k / g.kw) * g.dh;
    const int64_t x0 = (l % g.ow) * g.sw - g.pw + (k % g.kw) * g.dw;
    if (y < 0 || y >= g.h || x0 < 0 || x0 >= g.w)
        return T(0);
    return x[(p * g.h + y) * g.w + x0];
}

/// Fold (gather): dx[p, y, x] = Σ over taps (a, b) of the col entry (p, a*kw + b, i*ow + j)
/// of the window (i, j) that reads (y, x) with that tap (Note [Gathering adjoints]). e indexes
/// dx.
template <class T>
TG_HD inline T fold_at(const Window& g, const T* col, int64_t e) {
    const int64_t x0 = e % g.w, y = (e / g.w) % g.h, p = e / (g.w * g.h);
    T s = T(0);
    for (int64_t a = 0; a < g.kh; ++a) {
        const int64_t i = window_of(y, a, g.sh, g.ph, g.dh, g.oh);
        if (i < 0)
            continue;
        for (int64_t b = 0; b < g.kw; ++b) {
            const int64_t j = window_of(x0, b, g.sw, g.pw, g.dw, g.ow);
            if (j >= 0)
                s += col[col_row(g, p, a * g.kw + b) + i * g.ow + j];
        }
    }
    return s;
}

/// MaxPool: the max of window (i, j) of plane p and its argmax y*w + x; NaN wins, as in
/// PyTorch. A window lying wholly in the padding gives -inf and index -1 (never for the
/// configurations the ops accept).
template <class T>
TG_HD inline T max_pool_at(const Window& g, const T* x, int64_t p, int64_t i, int64_t j,
                           int64_t* arg) {
    const T* xp = x + p * g.h * g.w;
    T best = -INFINITY;
    int64_t at = -1;
    for (int64_t a = 0; a < g.kh; ++a) {
        const int64_t y = i * g.sh - g.ph + a * g.dh;
        if (y < 0 || y >= g.h)
            continue;
        for (int64_t b = 0; b < g.kw; ++b) {
            const int64_t x0 = j * g.sw - g.pw + b * g.dw;
            if (x0 < 0 || x0 >= g.w)
                continue;
            const T v = xp[y * g.w + x0];
            if (v > best || v != v || at < 0) {
                best = v;
                at = y * g.w + x0;
                if (v != v)
                    return *arg = at, best;
            }
        }
    }
    *arg = at;
    return best;
}

/// MaxPoolBackward (gather): dx[p, y, x] = Σ dy over the windows that read (y, x) and whose
/// argmax it is.
template <class T>
TG_HD inline T max_pool_backward_at(const Window& g, const T* dy, const int64_t* arg, int64_t p,
                                    int64_t y, int64_t x0) {
    const int64_t self = y * g.w + x0, base = p * g.oh * g.ow;
    T s = T(0);
    for (int64_t a = 0; a < g.kh; ++a) {
        const int64_t i = window_of(y, a, g.sh, g.ph, g.dh, g.oh);
        if (i < 0)
            continue;
        for (int64_t b = 0; b < g.kw; ++b) {
            const int64_t j = window_of(x0, b, g.sw, g.pw, g.dw, g.ow);
            if (j >= 0 && arg[base + i * g.ow + j] == self)
                s += dy[base + i * g.ow + j];
        }
    }
    return s;
}

/// The rows [*lo, *hi) of window i along one axis of an average pool, and the length its
/// divisor counts (padding included or not, as PyTorch's avg_pool2d; windows that run past the
/// padding are cut there).
TG_HD inline void avg_span(const Window& g, bool rows, int64_t i, int64_t* lo, int64_t* hi,
                           int64_t* len) {
    const int64_t n = rows ? g.h : g.w;
    if (g.adaptive) {
        const int64_t count = rows ? g.oh : g.ow;
        *lo = adaptive_start(i, n, count);
        *hi = adaptive_end(i, n, count);
        *len = *hi - *lo;
        return;
    }
    const int64_t k = rows ? g.kh : g.kw, s = rows ? g.sh : g.sw, p = rows ? g.ph : g.pw;
    int64_t start = i * s - p, end = start + k;
    if (end > n + p)
        end = n + p;
    const int64_t padded = end - start;
    if (start < 0)
        start = 0;
    if (end > n)
        end = n;
    *lo = start;
    *hi = end;
    *len = g.count_include_pad ? padded : end - start;
}

/// AvgPool: the mean of window (i, j) of plane p.
template <class T>
TG_HD inline T avg_pool_at(const Window& g, const T* x, int64_t p, int64_t i, int64_t j) {
    int64_t y0, y1, ny, x0, x1, nx;
    avg_span(g, true, i, &y0, &y1, &ny);
    avg_span(g, false, j, &x0, &x1, &nx);
    const T* xp = x + p * g.h * g.w;
    T s = T(0);
    for (int64_t y = y0; y < y1; ++y)
        for (int64_t c = x0; c < x1; ++c)
            s += xp[y * g.w + c];
    return ny * nx > 0 ? s / T(ny * nx) : T(0);
}

/// Whether window i (along rows or columns) covers position y.
TG_HD inline bool avg_covers(const Window& g, bool rows, int64_t i, int64_t y) {
    int64_t lo, hi, len;
    avg_span(g, rows, i, &lo, &hi, &len);
    return lo <= y && y < hi;
}

/// The windows that may cover position y along one axis: [*first, *last).
TG_HD inline void avg_candidates(const Window& g, bool rows, int64_t y, int64_t* first,
                                 int64_t* last) {
    const int64_t n = rows ? g.h : g.w, count = rows ? g.oh : g.ow;
    if (g.adaptive) {
        *first = (y * count) / n;
        *last = ((y + 1) * count + n - 1) / n;
    } else {  // start = i*s - p <= y  and  y < i*s - p + k
        const int64_t k = rows ? g.kh : g.kw, s = rows ? g.sh : g.sw, p = rows ? g.ph : g.pw;
        const int64_t t = y + p - k + 1;
        *first = t <= 0 ? 0 : (t + s - 1) / s;
        *last = (y + p) / s + 1;
    }
    if (*first < 0)
        *first = 0;
    if (*last > count)
        *last = count;
}

/// AvgPoolBackward (gather): dx[p, y, x] = Σ over the windows covering (y, x) of dy / divisor.
template <class T>
TG_HD inline T avg_pool_backward_at(const Window& g, const T* dy, int64_t p, int64_t y,
                                    int64_t x0) {
    int64_t i0, i1, j0, j1;
    avg_candidates(g, true, y, &i0, &i1);
    avg_candidates(g, false, x0, &j0, &j1);
    const T* d = dy + p * g.oh * g.ow;
    T s = T(0);
    for (int64_t i = i0; i < i1; ++i) {
        if (!avg_covers(g, true, i, y))
            continue;
        int64_t lo, hi, ny;
        avg_span(g, true, i, &lo, &hi, &ny);
        for (int64_t j = j0; j < j1; ++j) {
            if (!avg_covers(g, false, j, x0))
                continue;
            int64_t lx, hx, nx;
            avg_span(g, false, j, &lx, &hx, &nx);
            s += d[i * g.ow + j] / T(ny * nx);
        }
    }
    return s;
}

}  // namespace tg::backend::window
