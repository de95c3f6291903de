// The CUDA backend's fused optimizer updates (backend.hpp's OptimOp), the twins of
// opencl/optim_source.cpp: one thread per element reads p, g and the state once and writes them
// once, each step the table functor (kernel_table.hpp) the composed update runs, in its order,
// on scalars of T; the options are template arguments. nvcc contracts multiply-adds (--fmad)
// across what the composed update stores between kernels, so the results are expected within
// rounding of the composed path, not its bits. Compiled here, never run: the machines that build
// tapegrad have no GPU, and the device tests skip without one.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "backend/cuda/fused.hpp"
#include "backend/kernel_table.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::cuda {

namespace {

constexpr int kOptimThreads = 256;
namespace k = cuda_table;

template <int V>
using Int = std::integral_constant<int, V>;

__device__ inline int64_t element() {
    return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// Decay: 0 none, 1 coupled (g + f·p), 2 decoupled (p·f).
template <class T, int Decay, bool Ams>
__global__ void adam_k(T* p, const T* g, T* m, T* v, T* vm, T f, T b1, T b1c, T b2, T b2c, T rb,
                       T eps, T step, int64_t n) {
    const int64_t i = element();
    if (i >= n)
        return;
    const T z = T(0);
    T pv = p[i], gv = g[i];
    if (Decay == 2)
        pv = k::U_mul_scalar::f(pv, f, z);
    if (Decay == 1)
        gv = k::B_axpy::f(gv, pv, f, z);
    const T mv = k::B_axpby::f(m[i], gv, b1, b1c);
    T vv = k::B_axpby_square::f(v[i], gv, b2, b2c);
    m[i] = mv;
    v[i] = vv;
    if (Ams) {
        vv = k::B_maximum::f(vm[i], vv, z, z);
        vm[i] = vv;
    }
    p[i] = k::B_axpy::f(pv, k::B_adam_direction::f(mv, vv, rb, eps), step, z);
}

/// Mom: 0 none, 1 the first step (buf = d), 2 later; Nest: 0 no, 1 d is the gradient
/// (add(d, mul(buf, momentum))), 2 d is a temporary (d.add_(buf, momentum)).
template <class T, bool Wd, int Mom, int Nest>
__global__ void sgd_k(T* p, const T* g, T* buf, T wd, T mu, T dc, T lr, int64_t n) {
    const int64_t i = element();
    if (i >= n)
        return;
    const T z = T(0);
    T d = g[i];
    if (Wd)
        d = k::B_axpy::f(k::U_mul_scalar::f(p[i], wd, z), d, T(1), z);
    if (Mom) {
        T bv = d;
        if (Mom == 2)
            bv = k::B_axpy::f(k::U_mul_scalar::f(buf[i], mu, z), d, dc, z);
        buf[i] = bv;
        if (Nest == 1)
            d = k::B_add::f(d, k::U_mul_scalar::f(bv, mu, z), z, z);
        else if (Nest == 2)
            d = k::B_axpy::f(d, bv, mu, z);
        else
            d = bv;
    }
    p[i] = k::B_axpy::f(p[i], d, lr, z);
}

template <class T>
T* at(const View& v) {
    return v.data ? static_cast<T*>(v.data) + v.offset : nullptr;
}

template <class T>
void launch(OptimOp op, const OptimStep& s, const View* v) {
    const unsigned blocks = unsigned((s.n + kOptimThreads - 1) / kOptimThreads);
    if (op == OptimOp::Adam) {
        auto run = [&](auto decay, auto ams) {
            adam_k<T, decltype(decay)::value, bool(decltype(ams)::value)>
                <<<blocks, kOptimThreads>>>(at<T>(v[0]), at<T>(v[1]), at<T>(v[2]), at<T>(v[3]),
                                            at<T>(v[4]), T(s.f), T(s.beta1), T(s.beta1c),
                                            T(s.beta2), T(s.beta2c), T(s.rsqrt_bc2), T(s.eps),
                                            T(s.neg_step), s.n);
        };
        auto with_decay = [&](auto ams) {
            if (s.decay == 1)
                run(Int<1>{}, ams);
            else if (s.decay == 2)
                run(Int<2>{}, ams);
            else
                run(Int<0>{}, ams);
        };
        if (v[4].data)
            with_decay(Int<1>{});
        else
            with_decay(Int<0>{});
        return;
    }
    auto run = [&](auto wd, auto mom, auto nest) {
        sgd_k<T, bool(decltype(wd)::value), decltype(mom)::value, decltype(nest)::value>
            <<<blocks, kOptimThreads>>>(at<T>(v[0]), at<T>(v[1]), at<T>(v[2]), T(s.weight_decay),
                                        T(s.momentum), T(s.dampening_c), T(s.neg_lr), s.n);
    };
    auto with_nest = [&](auto wd, auto mom) {
        if (!s.nesterov)
            run(wd, mom, Int<0>{});
        else if (s.weight_decay == 0)
            run(wd, mom, Int<1>{});
        else
            run(wd, mom, Int<2>{});
    };
    auto with_mom = [&](auto wd) {
        if (!v[2].data)
            run(wd, Int<0>{}, Int<0>{});
        else if (s.first)
            with_nest(wd, Int<1>{});
        else
            with_nest(wd, Int<2>{});
    };
    if (s.weight_decay != 0)
        with_mom(Int<1>{});
    else
        with_mom(Int<0>{});
}

}  // namespace

void launch_optim(int index, OptimOp op, const OptimStep& s, const View* v) {
    if (s.n == 0)
        return;
    const cudaError_t set = cudaSetDevice(index);
    if (set != cudaSuccess)
        throw error(std::string("CUDA cudaSetDevice failed: ") + cudaGetErrorString(set));
    if (v[0].dtype == Dtype::Float32)
        launch<float>(op, s, v);
    else if (v[0].dtype == Dtype::Float64)
        launch<double>(op, s, v);
    else
        throw dtype_error(std::string("optimizer step: dtype ") + dtype_name(v[0].dtype) +
                          " is not floating");
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        throw error(std::string("CUDA kernel launch (optimizer step) failed: ") +
                    cudaGetErrorString(e));
}

}  // namespace tg::backend::cuda
