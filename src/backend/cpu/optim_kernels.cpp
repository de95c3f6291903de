// Note [Multi-tensor optimizer steps]: Adam's update written as tensor ops (Note [Optimizer
// updates are tensor ops] in optimizer.hpp) is four passes over memory per parameter (axpby,
// axpby_square, adam_direction into a temporary, axpy) plus one for weight decay, and every
// pass of every parameter is a kernel launch of its own: a model with many small parameters
// (biases, norms' weights) pays a thread-pool dispatch per pass per parameter. Here a parameter's
// whole update is one pass that reads p, g, m, v (and v̂max) once and writes p, m, v, with no
// temporary, and all parameters of a step are one job: their elements, parameter after
// parameter, split into one range per thread (PyTorch's _foreach / fused=True). Each element is
// computed with the very expressions of the table kernels the composed update runs (kernels.def),
// in the same order, on scalars rounded to the dtype as those kernels round them, and this file
// is compiled like the table's (-ffp-contract=off): the results are the composed update's bits,
// at any thread count and on any SIMD clone.
#include "backend/cpu/optim_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "backend/cpu/threads.hpp"
#include "core/simd.hpp"

namespace tg::backend::cpu {

namespace {

template <int V>
using Int = std::integral_constant<int, V>;

template <class T, int Decay, bool Ams>
TG_SIMD_CLONES void adam_range(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ m,
                               T* __restrict__ v, T* __restrict__ vmax, int64_t n, T f, T b1, T b1c,
                               T b2, T b2c, T rb, T eps, T step) {
    for (int64_t i = 0; i < n; ++i) {
        T pv = p[i], gv = g[i];
        if constexpr (Decay == AdamItem::decoupled)
            pv = pv * f;  // mul_scalar
        if constexpr (Decay == AdamItem::coupled)
            gv = gv + f * pv;               // axpy(grad, p, wd)
        const T mv = m[i] * b1 + gv * b1c;  // axpby
        T vv = v[i] * b2 + gv * gv * b2c;   // axpby_square
        m[i] = mv;
        v[i] = vv;
        if constexpr (Ams) {
            const T a = vmax[i];
            vv = (a != a || a > vv) ? a : vv;  // maximum
            vmax[i] = vv;
        }
        p[i] = pv + step * (mv / (std::sqrt(vv) * rb + eps));  // axpy(p, adam_direction)
    }
}

template <class T>
void adam_item(const AdamItem& it, int64_t b, int64_t e) {
    T* p = static_cast<T*>(it.p) + b;
    const T* g = static_cast<const T*>(it.g) + b;
    T* m = static_cast<T*>(it.m) + b;
    T* v = static_cast<T*>(it.v) + b;
    T* vmax = it.vmax ? static_cast<T*>(it.vmax) + b : nullptr;
    auto run = [&](auto decay, auto ams) {
        adam_range<T, decltype(decay)::value, bool(decltype(ams)::value)>(
            p, g, m, v, vmax, e - b, T(it.decay_factor), T(it.beta1), T(it.beta1c), T(it.beta2),
            T(it.beta2c), T(it.rsqrt_bc2), T(it.eps), T(it.neg_step));
    };
    auto with_decay = [&](auto ams) {
        switch (it.decay) {
            case AdamItem::none:
                return run(Int<AdamItem::none>{}, ams);
            case AdamItem::coupled:
                return run(Int<AdamItem::coupled>{}, ams);
            case AdamItem::decoupled:
                return run(Int<AdamItem::decoupled>{}, ams);
        }
    };
    if (vmax)
        with_decay(Int<1>{});
    else
        with_decay(Int<0>{});
}

/// Mom: 0 no momentum, 1 the first step with momentum (buf = d), 2 later steps.
template <class T, bool WD, int Mom, bool Nest>
TG_SIMD_CLONES void sgd_range(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ buf,
                              int64_t n, T wd, T mom, T dc, T neg_lr) {
    for (int64_t i = 0; i < n; ++i) {
        T d = g[i];
        if constexpr (WD)
            d = p[i] * wd + T(1) * d;  // mul(p, wd), then add_(grad)
        if constexpr (Mom != 0) {
            T bv = d;  // the first step: buf = d.clone()
            if constexpr (Mom == 2) {
                bv = buf[i] * mom;  // mul_(momentum)
                bv = bv + dc * d;   // add_(d, 1 - dampening)
            }
            buf[i] = bv;
            if constexpr (Nest)
                d = d + mom * bv;
            else
                d = bv;
        }
        p[i] = p[i] + neg_lr * d;  // add_(d, -lr)
    }
}

template <class T>
void sgd_item(const SgdItem& it, int64_t b, int64_t e) {
    T* p = static_cast<T*>(it.p) + b;
    const T* g = static_cast<const T*>(it.g) + b;
    T* buf = it.buf ? static_cast<T*>(it.buf) + b : nullptr;
    auto run = [&](auto wd, auto mom, auto nest) {
        sgd_range<T, bool(decltype(wd)::value), decltype(mom)::value, bool(decltype(nest)::value)>(
            p, g, buf, e - b, T(it.weight_decay), T(it.momentum), T(it.dampening_c), T(it.neg_lr));
    };
    auto with_mom = [&](auto wd) {
        if (!buf)
            run(wd, Int<0>{}, Int<0>{});
        else if (it.first)
            it.nesterov ? run(wd, Int<1>{}, Int<1>{}) : run(wd, Int<1>{}, Int<0>{});
        else
            it.nesterov ? run(wd, Int<2>{}, Int<1>{}) : run(wd, Int<2>{}, Int<0>{});
    };
    if (it.weight_decay != 0)
        with_mom(Int<1>{});
    else
        with_mom(Int<0>{});
}

/// f(item, begin, end) over the items' elements, parameter after parameter, as one job split
/// into one range of the concatenation per thread (ranges start on 64-byte lines).
template <class Item, class F>
void for_pieces(const std::vector<Item>& items, F f) {
    int64_t total = 0;
    for (const Item& it : items)
        total += it.n;
    const int parts = total >= kParallelMin ? cpu_threads() : 1;
    auto range = [&](int64_t lo, int64_t hi) {
        int64_t base = 0;
        for (const Item& it : items) {
            const int64_t b = std::max(lo - base, int64_t(0)), e = std::min(hi - base, it.n);
            if (b < e)
                f(it, b, e);
            base += it.n;
            if (base >= hi)
                break;
        }
    };
    if (parts < 2) {
        range(0, total);
        return;
    }
    auto start = [&](int i) { return i >= parts ? total : (total * i / parts + 15) / 16 * 16; };
    cpu_parallel(parts, [&](int i) { range(std::min(start(i), total), start(i + 1)); });
}

}  // namespace

void adam_steps(const std::vector<AdamItem>& items) {
    for_pieces(items, [](const AdamItem& it, int64_t b, int64_t e) {
        if (it.dtype == Dtype::Float64)
            adam_item<double>(it, b, e);
        else
            adam_item<float>(it, b, e);
    });
}

void sgd_steps(const std::vector<SgdItem>& items) {
    for_pieces(items, [](const SgdItem& it, int64_t b, int64_t e) {
        if (it.dtype == Dtype::Float64)
            sgd_item<double>(it, b, e);
        else
            sgd_item<float>(it, b, e);
    });
}

}  // namespace tg::backend::cpu
