// The CPU's window kernels (backend.hpp's WindowOp): the element bodies of
// device_common/window.hpp, split over the kernel threads by output element; max pooling's are
// in max_pool.cpp. Every kernel but FoldScatter writes only the elements of its own slice
// (Note [Gathering adjoints]).
#include "backend/device_common/window.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "backend/cpu/backend.hpp"
#include "backend/cpu/iterate.hpp"
#include "backend/cpu/window_parts.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::cpu {

namespace {

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
    const int64_t K = window::taps(g), V = window::volume(g);
    std::memset(dx, 0, size_t(g.planes * V) * sizeof(T));
    slices(g.planes * K, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t p = r / K, q = (r % K) / (g.kh * g.kw), a = (r % (g.kh * g.kw)) / g.kw,
                          b = r % g.kw;
            const T* c = col + window::col_row(g, p, r % K);
            for (int64_t z = 0; z < g.ot; ++z) {
                const int64_t zz = z * g.st - g.pt + q * g.dt;
                if (zz < 0 || zz >= g.t)
                    continue;
                T* out = dx + (p * g.t + zz) * g.h * g.w;
                for (int64_t i = 0; i < g.oh; ++i) {
                    const int64_t y = i * g.sh - g.ph + a * g.dh;
                    if (y < 0 || y >= g.h)
                        continue;
                    for (int64_t j = 0; j < g.ow; ++j) {
                        const int64_t x = j * g.sw - g.pw + b * g.dw;
                        if (x >= 0 && x < g.w)
                            atomic_add(out + y * g.w + x, c[(z * g.oh + i) * g.ow + j]);
                    }
                }
            }
        }
    });
}

/// Unfold of tap (a, b) of one [h, w] slice xp into out [oh, ow] when rows keep their width
/// (ow == w) and both strides are 1: output element (i, j) reads x element (i, j) shifted by a
/// constant, so the tap's valid rows are one block of x, copied at once (a row at a time, a 3x3
/// unfold of 28-wide rows spent more in memmove calls than in copying). The columns of each
/// valid row outside [j0, j1) read the neighbouring rows and are zeroed after, a column at a
/// time.
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

/// Unfold of tap (a, b) of one [h, w] slice xp into out [oh, ow] a row at a time: output row i
/// reads x row i*sh - ph + a*dh.
template <class T>
void unfold_slice(const Window& g, int64_t a, int64_t j0, int64_t j1, int64_t off, bool block,
                  const T* xp, T* out) {
    if (block) {
        unfold_block(g, a, j0, j1, off, xp, out);
        return;
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

/// Unfold a (plane, tap) row of col at a time: for tap (q, a, b), output depth z reads the x
/// slice at depth z*st - pt + q*dt (zeros outside), each slice as unfold_slice. A row's plane
/// and tap are stepped along, not divided out, and each tap column's valid range is computed
/// once: rows of a tile of a 3-D window are a few hundred elements, and the divisions cost as
/// much as the copy (bench_conv3d).
template <class T>
void unfold_rows(const Window& g, T* col, const T* x) {
    const int64_t K = window::taps(g), S = g.oh * g.ow, C = g.planes / g.samples,
                  P = window::positions(g);
    const bool block = g.sw == 1 && g.sh == 1 && g.ow == g.w;
    const TapColumns tc(g);
    slices(
        g.planes * K,
        [&](int64_t r0, int64_t r1) {
            int64_t p = r0 / K, k = r0 % K;
            int64_t q = k / (g.kh * g.kw), a = (k / g.kw) % g.kh, b = k % g.kw;
            for (int64_t r = r0; r < r1; ++r) {
                const size_t bb = size_t(b);
                const int64_t j0 = tc.j0[bb], j1 = tc.j1[bb], off = tc.off[bb];
                T* out = col + ((p % C * K + k) * g.samples + p / C) * P;  // col_row(g, p, k)
                const T* xp = x + p * g.t * g.h * g.w;
                for (int64_t z = 0; z < g.ot; ++z, out += S) {
                    const int64_t zz = z * g.st - g.pt + q * g.dt;
                    if (zz < 0 || zz >= g.t)
                        std::fill(out, out + S, T(0));
                    else
                        unfold_slice(g, a, j0, j1, off, block, xp + zz * g.h * g.w, out);
                }
                if (++b == g.kw) {
                    b = 0;
                    if (++a == g.kh) {
                        a = 0;
                        ++q;
                    }
                }
                if (++k == K)
                    k = 0, q = 0, ++p;
            }
        },
        window::positions(g));
}

/// Fold (the gather, Note [Gathering adjoints]) a row at a time: each dx row (p, z, y) is owned
/// by one thread and sums, tap (q, a, b) by tap in the per-element order of window::fold_at,
/// the col row of the window row (r, i) that reads it. Each tap column's valid range and the
/// plane's first col row are computed once, not per tap (they took most of the time of a tile's
/// fold in bench_conv3d).
template <class T>
void fold_rows(const Window& g, T* dx, const T* col) {
    const int64_t K = window::taps(g), C = g.planes / g.samples, P = window::positions(g),
                  tap = g.samples * P;  // from one tap's col row to the next
    const TapColumns tc(g);
    slices(
        g.planes * g.t * g.h,
        [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t p = r / (g.t * g.h), z = (r / g.h) % g.t, y = r % g.h;
                const T* base = col + (p % C * K * g.samples + p / C) * P;  // col_row(g, p, 0)
                T* out = dx + r * g.w;
                std::fill(out, out + g.w, T(0));
                for (int64_t q = 0; q < g.kt; ++q) {
                    const int64_t rz = window::window_of(z, q, g.st, g.pt, g.dt, g.ot);
                    if (rz < 0)
                        continue;
                    for (int64_t a = 0; a < g.kh; ++a) {
                        const int64_t i = window::window_of(y, a, g.sh, g.ph, g.dh, g.oh);
                        if (i < 0)
                            continue;
                        const T* row = base + (q * g.kh + a) * g.kw * tap + (rz * g.oh + i) * g.ow;
                        for (int64_t b = 0; b < g.kw; ++b) {
                            const size_t bb = size_t(b);
                            const int64_t j0 = tc.j0[bb], j1 = tc.j1[bb], off = tc.off[bb];
                            const T* c = row + b * tap;  // column j reads x column j*sw + off
                            if (g.sw == 1)
                                for (int64_t j = j0; j < j1; ++j)
                                    out[j + off] += c[j];
                            else
                                for (int64_t j = j0; j < j1; ++j)
                                    out[j * g.sw + off] += c[j];
                        }
                    }
                }
            }
        },
        g.w * window::taps(g));
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
            max_pool(g, out, ptr<int64_t>(auxv), in);
            return;
        case WindowOp::MaxPoolBackward:
            max_pool_backward(g, out, in, ptr<int64_t>(auxv));
            return;
        case WindowOp::AvgPool:
            rows(g.planes * g.ot, g.oh, g.ow, [&](int64_t p, int64_t i, int64_t j, int64_t e) {
                out[e] = window::avg_pool_at(g, in, p / g.ot, p % g.ot, i, j);
            });
            return;
        case WindowOp::AvgPoolBackward:
            rows(g.planes * g.t, g.h, g.w, [&](int64_t p, int64_t y, int64_t x, int64_t e) {
                out[e] = window::avg_pool_backward_at(g, in, p / g.t, p % g.t, y, x);
            });
            return;
        case WindowOp::DepthwiseForward:
        case WindowOp::DepthwiseInput:
        case WindowOp::DepthwiseWeight:
            depthwise(op, g, out, in, ptr<T>(auxv));
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
