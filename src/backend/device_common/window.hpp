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

/// Taps per window, output positions and input elements per plane.
TG_HD inline int64_t taps(const Window& g) {
    return g.kt * g.kh * g.kw;
}
TG_HD inline int64_t positions(const Window& g) {
    return g.ot * g.oh * g.ow;
}
TG_HD inline int64_t volume(const Window& g) {
    return g.t * g.h * g.w;
}

/// Where row (plane p, tap k) of the unfolded buffer [C, taps, samples, positions] starts.
TG_HD inline int64_t col_row(const Window& g, int64_t p, int64_t k) {
    const int64_t C = g.planes / g.samples, n = p / C, c = p % C;
    return ((c * taps(g) + k) * g.samples + n) * positions(g);
}

/// One axis of a window: its input size, output count, taps, stride, padding and dilation
/// (axis 0 depth, 1 rows, 2 columns).
struct Axis {
    int64_t n, count, k, s, p, d;
};
TG_HD inline Axis axis(const Window& g, int ax) {
    if (ax == 0)
        return {g.t, g.ot, g.kt, g.st, g.pt, g.dt};
    if (ax == 1)
        return {g.h, g.oh, g.kh, g.sh, g.ph, g.dh};
    return {g.w, g.ow, g.kw, g.sw, g.pw, g.dw};
}

/// Unfold: col[c, (q*kh + a)*kw + b, n, (z*oh + i)*ow + j] = x[n*C + c, z*st - pt + q*dt,
/// i*sh - ph + a*dh, j*sw - pw + b*dw], 0 outside. e is the linear index into col.
template <class T>
TG_HD inline T unfold_at(const Window& g, const T* x, int64_t e) {
    const int64_t L = positions(g), K = taps(g), C = g.planes / g.samples;
    const int64_t l = e % L, n = (e / L) % g.samples, k = (e / (L * g.samples)) % K,
                  c = e / (L * g.samples * K), p = n * C + c;
    const int64_t z = (l / (g.ow * g.oh)) * g.st - g.pt + (k / (g.kw * g.kh)) * g.dt;
    const int64_t y = ((l / g.ow) % g.oh) * g.sh - g.ph + ((k / g.kw) % g.kh) * g.dh;
    const int64_t x0 = (l % g.ow) * g.sw - g.pw + (k % g.kw) * g.dw;
    if (z < 0 || z >= g.t || y < 0 || y >= g.h || x0 < 0 || x0 >= g.w)
        return T(0);
    return x[((p * g.t + z) * g.h + y) * g.w + x0];
}

/// Fold (gather): dx[p, z, y, x] = Σ over taps (q, a, b) of the col entry of the window that
/// reads (z, y, x) with that tap (Note [Gathering adjoints]). e indexes dx.
template <class T>
TG_HD inline T fold_at(const Window& g, const T* col, int64_t e) {
    const int64_t x0 = e % g.w, y = (e / g.w) % g.h, z = (e / (g.w * g.h)) % g.t, p = e / volume(g);
    T s = T(0);
    for (int64_t q = 0; q < g.kt; ++q) {
        const int64_t r = window_of(z, q, g.st, g.pt, g.dt, g.ot);
        if (r < 0)
            continue;
        for (int64_t a = 0; a < g.kh; ++a) {
            const int64_t i = window_of(y, a, g.sh, g.ph, g.dh, g.oh);
            if (i < 0)
                continue;
            for (int64_t b = 0; b < g.kw; ++b) {
                const int64_t j = window_of(x0, b, g.sw, g.pw, g.dw, g.ow);
                if (j >= 0)
                    s += col[col_row(g, p, (q * g.kh + a) * g.kw + b) + (r * g.oh + i) * g.ow + j];
            }
        }
    }
    return s;
}

/// The positions [*lo, *hi) that window i reads along one axis of a pooling, and for an
/// average the length its divisor counts (padding included or not, as PyTorch's avg_pool;
/// windows that run past the padding are cut there). Max pooling's windows are dilated and
/// read every d-th position from *lo; adaptive windows are [floor(i*n/count),
/// ceil((i+1)*n/count)).
TG_HD inline void pool_span(const Window& g, int ax, int64_t i, int64_t* lo, int64_t* hi,
                            int64_t* len) {
    const Axis A = axis(g, ax);
    if (g.adaptive) {
        *lo = adaptive_start(i, A.n, A.count);
        *hi = adaptive_end(i, A.n, A.count);
        *len = *hi - *lo;
        return;
    }
    int64_t start = i * A.s - A.p, end = start + A.k;
    if (end > A.n + A.p)
        end = A.n + A.p;
    const int64_t padded = end - start;
    if (start < 0)
        start = 0;
    if (end > A.n)
        end = A.n;
    *lo = start;
    *hi = end;
    *len = g.count_include_pad ? padded : end - start;
}

/// MaxPool: the max of window (z, i, j) of plane p and its argmax (z*h + y)*w + x; NaN wins, as
/// in PyTorch. A window lying wholly in the padding gives -inf and index -1 (never for the
/// configurations the ops accept).
template <class T>
TG_HD inline T max_pool_at(const Window& g, const T* x, int64_t p, int64_t z, int64_t i, int64_t j,
                           int64_t* arg) {
    const T* xp = x + p * volume(g);
    T best = -INFINITY;
    int64_t at = -1;
    if (g.adaptive) {
        int64_t z0, z1, y0, y1, x0, x1, len;
        pool_span(g, 0, z, &z0, &z1, &len);
        pool_span(g, 1, i, &y0, &y1, &len);
        pool_span(g, 2, j, &x0, &x1, &len);
        for (int64_t zz = z0; zz < z1; ++zz)
            for (int64_t y = y0; y < y1; ++y)
                for (int64_t c = x0; c < x1; ++c) {
                    const int64_t e = (zz * g.h + y) * g.w + c;
                    const T v = xp[e];
                    if (v > best || v != v || at < 0) {
                        best = v;
                        at = e;
                        if (v != v)
                            return *arg = at, best;
                    }
                }
        *arg = at;
        return best;
    }
    for (int64_t q = 0; q < g.kt; ++q) {
        const int64_t zz = z * g.st - g.pt + q * g.dt;
        if (zz < 0 || zz >= g.t)
            continue;
        for (int64_t a = 0; a < g.kh; ++a) {
            const int64_t y = i * g.sh - g.ph + a * g.dh;
            if (y < 0 || y >= g.h)
                continue;
            for (int64_t b = 0; b < g.kw; ++b) {
                const int64_t x0 = j * g.sw - g.pw + b * g.dw;
                if (x0 < 0 || x0 >= g.w)
                    continue;
                const int64_t e = (zz * g.h + y) * g.w + x0;
                const T v = xp[e];
                if (v > best || v != v || at < 0) {
                    best = v;
                    at = e;
                    if (v != v)
                        return *arg = at, best;
                }
            }
        }
    }
    *arg = at;
    return best;
}

/// The windows that may cover position y along one axis of a pooling: [*first, *last).
TG_HD inline void pool_candidates(const Window& g, int ax, int64_t y, int64_t* first,
                                  int64_t* last) {
    const Axis A = axis(g, ax);
    if (g.adaptive) {
        *first = (y * A.count) / A.n;
        *last = ((y + 1) * A.count + A.n - 1) / A.n;
    } else {  // start = i*s - p <= y  and  y < i*s - p + (k-1)*d + 1
        const int64_t t = y + A.p - A.d * (A.k - 1);
        *first = t <= 0 ? 0 : (t + A.s - 1) / A.s;
        *last = (y + A.p) / A.s + 1;
    }
    if (*first < 0)
        *first = 0;
    if (*last > A.count)
        *last = A.count;
}

/// MaxPoolBackward (gather): dx[p, z, y, x] = Σ dy over the windows that read (z, y, x) and
/// whose argmax it is, tap by tap (adaptive windows: window by window).
template <class T>
TG_HD inline T max_pool_backward_at(const Window& g, const T* dy, const int64_t* arg, int64_t p,
                                    int64_t z, int64_t y, int64_t x0) {
    const int64_t self = (z * g.h + y) * g.w + x0, base = p * positions(g);
    T s = T(0);
    if (g.adaptive) {
        int64_t r0, r1, i0, i1, j0, j1;
        pool_candidates(g, 0, z, &r0, &r1);
        pool_candidates(g, 1, y, &i0, &i1);
        pool_candidates(g, 2, x0, &j0, &j1);
        for (int64_t r = r0; r < r1; ++r)
            for (int64_t i = i0; i < i1; ++i)
                for (int64_t j = j0; j < j1; ++j) {
                    const int64_t o = base + (r * g.oh + i) * g.ow + j;
                    if (arg[o] == self)
                        s += dy[o];
                }
        return s;
    }
    for (int64_t q = 0; q < g.kt; ++q) {
        const int64_t r = window_of(z, q, g.st, g.pt, g.dt, g.ot);
        if (r < 0)
            continue;
        for (int64_t a = 0; a < g.kh; ++a) {
            const int64_t i = window_of(y, a, g.sh, g.ph, g.dh, g.oh);
            if (i < 0)
                continue;
            for (int64_t b = 0; b < g.kw; ++b) {
                const int64_t j = window_of(x0, b, g.sw, g.pw, g.dw, g.ow);
                const int64_t o = base + (r * g.oh + i) * g.ow + j;
                if (j >= 0 && arg[o] == self)
                    s += dy[o];
            }
        }
    }
    return s;
}

/// An average pool's divisor for a window of lengths nz x ny x nx (divisor_override first).
TG_HD inline int64_t avg_divisor(const Window& g, int64_t nz, int64_t ny, int64_t nx) {
    return g.divisor ? g.divisor : nz * ny * nx;
}

/// AvgPool: the mean of window (z, i, j) of plane p.
template <class T>
TG_HD inline T avg_pool_at(const Window& g, const T* x, int64_t p, int64_t z, int64_t i,
                           int64_t j) {
    int64_t z0, z1, nz, y0, y1, ny, x0, x1, nx;
    pool_span(g, 0, z, &z0, &z1, &nz);
    pool_span(g, 1, i, &y0, &y1, &ny);
    pool_span(g, 2, j, &x0, &x1, &nx);
    const T* xp = x + p * volume(g);
    T s = T(0);
    for (int64_t zz = z0; zz < z1; ++zz)
        for (int64_t y = y0; y < y1; ++y)
            for (int64_t c = x0; c < x1; ++c)
                s += xp[(zz * g.h + y) * g.w + c];
    const int64_t div = avg_divisor(g, nz, ny, nx);
    return div != 0 ? s / T(div) : T(0);
}

/// AvgPoolBackward (gather): dx[p, z, y, x] = Σ over the windows covering (z, y, x) of
/// dy / divisor.
template <class T>
TG_HD inline T avg_pool_backward_at(const Window& g, const T* dy, int64_t p, int64_t z, int64_t y,
                                    int64_t x0) {
    int64_t r0, r1, i0, i1, j0, j1;
    pool_candidates(g, 0, z, &r0, &r1);
    pool_candidates(g, 1, y, &i0, &i1);
    pool_candidates(g, 2, x0, &j0, &j1);
    const T* d = dy + p * positions(g);
    T s = T(0);
    for (int64_t r = r0; r < r1; ++r) {
        int64_t lz, hz, nz;
        pool_span(g, 0, r, &lz, &hz, &nz);
        if (z < lz || z >= hz)
            continue;
        for (int64_t i = i0; i < i1; ++i) {
            int64_t lo, hi, ny;
            pool_span(g, 1, i, &lo, &hi, &ny);
            if (y < lo || y >= hi)
                continue;
            for (int64_t j = j0; j < j1; ++j) {
                int64_t lx, hx, nx;
                pool_span(g, 2, j, &lx, &hx, &nx);
                if (lx <= x0 && x0 < hx)
                    s += d[(r * g.oh + i) * g.ow + j] / T(avg_divisor(g, nz, ny, nx));
            }
        }
    }
    return s;
}

}  // namespace tg::backend::window
