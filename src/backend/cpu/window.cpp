// The CPU's window kernels (backend.hpp's WindowOp): the element bodies of
// device_common/window.hpp, split over the kernel threads by output element. Every kernel but
// FoldScatter writes only the elements of its own slice (Note [Gathering adjoints]).
#include <cstring>
#include <string>

#include "backend/cpu/backend.hpp"
#include "backend/cpu/iterate.hpp"
#include "backend/cpu/threads.hpp"
#include "backend/device_common/window.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::cpu {

namespace {

/// Runs body(begin, end) over [0, n) in one slice per kernel thread (one slice below
/// kParallelMin / 8: window elements cost several loads each).
template <class F>
void slices(int64_t n, const F& body) {
    const int threads = n >= kParallelMin / 8 ? cpu_threads() : 1;
    if (threads < 2) {
        body(int64_t(0), n);
        return;
    }
    const int parts = threads;
    cpu_parallel(parts, [&](int t) { body(n * t / parts, n * (t + 1) / parts); });
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
    const int64_t L = g.oh * g.ow, K = g.kh * g.kw;
    std::memset(dx, 0, size_t(g.planes * g.h * g.w) * sizeof(T));
    slices(g.planes * K, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t p = r / K, a = (r % K) / g.kw, b = r % g.kw;
            T* out = dx + p * g.h * g.w;
            const T* c = col + r * L;
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

template <class T>
void window_loop(WindowOp op, const Window& g, const View& outv, const View& inv,
                 const View& auxv) {
    T* out = ptr<T>(outv);
    const T* in = ptr<T>(inv);
    switch (op) {
    case WindowOp::Unfold:
        slices(g.planes * g.kh * g.kw * g.oh * g.ow, [&](int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e)
                out[e] = window::unfold_at(g, in, e);
        });
        return;
    case WindowOp::Fold:
        slices(g.planes * g.h * g.w, [&](int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e)
                out[e] = window::fold_at(g, in, e);
        });
        return;
    case WindowOp::FoldScatter:
        fold_scatter(g, out, in);
        return;
    case WindowOp::MaxPool: {
        int64_t* arg = ptr<int64_t>(auxv);
        slices(g.planes * g.oh * g.ow, [&](int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e)
                out[e] = window::max_pool_at(g, in, e, arg + e);
        });
        return;
    }
    case WindowOp::MaxPoolBackward: {
        const int64_t* arg = ptr<int64_t>(auxv);
        slices(g.planes * g.h * g.w, [&](int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e)
                out[e] = window::max_pool_backward_at(g, in, arg, e);
        });
        return;
    }
    case WindowOp::AvgPool:
        slices(g.planes * g.oh * g.ow, [&](int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e)
                out[e] = window::avg_pool_at(g, in, e);
        });
        return;
    case WindowOp::AvgPoolBackward:
        slices(g.planes * g.h * g.w, [&](int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e)
                out[e] = window::avg_pool_backward_at(g, in, e);
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
