#pragma once
// What the CPU's window kernels share (window.cpp: unfold, fold, average pooling; max_pool.cpp:
// max pooling): slices of output rows over the kernel threads, each tap's valid columns, and the
// max pooling kernels window.cpp dispatches to.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cpu/threads.hpp"

namespace tg::backend::cpu {

/// Runs body(begin, end) over [0, n) units of `per_unit` elements each, in one slice per kernel
/// thread (one slice below kParallelMin / 8 elements: window elements cost several loads each).
template <class F>
inline void slices(int64_t n, const F& body, int64_t per_unit = 1) {
    const int threads = n * per_unit >= kParallelMin / 8 ? cpu_threads() : 1;
    if (threads < 2) {
        body(int64_t(0), n);
        return;
    }
    const int parts = threads;
    cpu_parallel(parts, [&](int t) { body(n * t / parts, n * (t + 1) / parts); });
}

/// The depthwise convolution kernels (cpu/depthwise.cpp): op one of WindowOp::Depthwise*.
template <class T>
void depthwise(WindowOp op, const Window& g, T* out, const T* in, const T* aux);

/// The valid output columns of tap b: [*j0, *j1) with 0 <= j*sw - pw + b*dw < w.
inline void tap_columns(const Window& g, int64_t b, int64_t* j0, int64_t* j1) {
    const int64_t off = b * g.dw - g.pw;  // x = j*sw + off
    *j0 = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
    *j1 = g.w - off <= 0 ? 0 : std::min(g.ow, (g.w - off + g.sw - 1) / g.sw);
    if (*j1 < *j0)
        *j1 = *j0;
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

/// MaxPool: y and arg (each window's max and its argmax within the plane) from x, by
/// device_common/window.hpp's max_pool_at rule (the first maximum; a NaN wins and stays).
template <class T>
void max_pool(const Window& g, T* y, int64_t* arg, const T* x);

/// MaxPoolBackward: dx from dy and the argmax of each window.
template <class T>
void max_pool_backward(const Window& g, T* dx, const T* dy, const int64_t* arg);

}  // namespace tg::backend::cpu
