#pragma once
// The CUDA backend's kernels: the table's elementwise kernels as templates over kernels.def's
// functors (kernel_table.hpp), copies, where, reductions, arg-reductions, softmax rows and the
// index kernels. One thread per output element; strided operands through the Geo of
// device_common/geometry.hpp (Note [Device geometry]).
#include <cstdint>

#include "backend/convert.hpp"
#include "backend/device_common/geometry.hpp"
#include "backend/device_common/window.hpp"
#include "backend/kernel_table.hpp"

namespace tg::backend::cuda {
namespace {  // included by backend.cu alone

constexpr int kThreads = 256;

template <int K>
__device__ inline void offsets(const Geo<K>& g, int64_t i, int64_t* off) {
    for (int d = int(g.nd) - 1; d >= 0; --d) {
        const int64_t c = i % g.size[d];
        i /= g.size[d];
        for (int k = 0; k < K; ++k)
            off[k] += c * g.st[k][d];
    }
}
__device__ inline int64_t gid() {
    return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}

template <class F, class T>
__global__ void unary_c(T* o, const T* a, T p, T q, int64_t n) {
    const int64_t i = gid();
    if (i < n)
        o[i] = F::f(a[i], p, q);
}
template <class F, class T>
__global__ void unary_s(T* o, const T* a, T p, T q, int64_t n, Geo<2> g) {
    const int64_t i = gid();
    if (i >= n)
        return;
    int64_t off[2] = {0, 0};
    offsets(g, i, off);
    o[off[0]] = F::f(a[off[1]], p, q);
}
template <class F, class T>
__global__ void binary_c(T* o, const T* a, const T* b, T p, T q, int64_t n) {
    const int64_t i = gid();
    if (i < n)
        o[i] = F::f(a[i], b[i], p, q);
}
template <class F, class T>
__global__ void binary_s(T* o, const T* a, const T* b, T p, T q, int64_t n, Geo<3> g) {
    const int64_t i = gid();
    if (i >= n)
        return;
    int64_t off[3] = {0, 0, 0};
    offsets(g, i, off);
    o[off[0]] = F::f(a[off[1]], b[off[2]], p, q);
}
template <class T, class S>
__global__ void copy_s(T* o, const S* a, int64_t n, Geo<2> g) {
    const int64_t i = gid();
    if (i >= n)
        return;
    int64_t off[2] = {0, 0};
    offsets(g, i, off);
    o[off[0]] = convert<T>(a[off[1]]);  // Note [Conversions]
}
/// where per element size (Note [Byte moves]): W is an unsigned word, the condition bool bytes.
template <class W>
__global__ void where_s(W* o, const uint8_t* c, const W* a, const W* b, int64_t n, Geo<4> g) {
    const int64_t i = gid();
    if (i >= n)
        return;
    int64_t off[4] = {0, 0, 0, 0};
    offsets(g, i, off);
    o[off[0]] = c[off[1]] ? a[off[2]] : b[off[3]];
}

template <class T>
struct Acc {
    using type = T;
};
template <>
struct Acc<float> {
    using type = double;
};
template <class T>
__device__ T lowest();
template <>
__device__ float lowest<float>() {
    return -3.402823466e38f;
}
template <>
__device__ double lowest<double>() {
    return -1.7976931348623157e308;
}
template <>
__device__ int64_t lowest<int64_t>() {
    return INT64_MIN;
}
template <class T>
__device__ T highest();
template <>
__device__ float highest<float>() {
    return 3.402823466e38f;
}
template <>
__device__ double highest<double>() {
    return 1.7976931348623157e308;
}
template <>
__device__ int64_t highest<int64_t>() {
    return INT64_MAX;
}

template <class A, class T>
__device__ A combine(ReduceOp op, A x, A y) {
    return op == ReduceOp::Sum ? x + y : op == ReduceOp::Max ? (y > x ? y : x) : (y < x ? y : x);
}
template <class A, class T>
__device__ A reduce_init(ReduceOp op) {
    return op == ReduceOp::Sum ? A(0) : op == ReduceOp::Max ? A(lowest<T>()) : A(highest<T>());
}
/// One block per output: strided partial results, then a tree in shared memory.
template <class T, class A>
__global__ void reduce_g(ReduceOp op, T* o, const T* a, int64_t n_red, Geo<2> kept, Geo<1> red) {
    extern __shared__ unsigned char smem[];
    A* sc = reinterpret_cast<A*>(smem);
    int64_t off[2] = {0, 0};
    offsets(kept, int64_t(blockIdx.x), off);
    A acc = reduce_init<A, T>(op);
    for (int64_t r = threadIdx.x; r < n_red; r += blockDim.x) {
        int64_t ro[1] = {off[1]};
        offsets(red, r, ro);
        acc = combine<A, T>(op, acc, A(a[ro[0]]));
    }
    sc[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h)
            sc[threadIdx.x] = combine<A, T>(op, sc[threadIdx.x], sc[threadIdx.x + h]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        o[off[0]] = static_cast<T>(sc[0]);
}
/// One thread per output looping over the reduced elements.
template <class T, class A>
__global__ void reduce_s(ReduceOp op, T* o, const T* a, int64_t n_red, int64_t n, Geo<2> kept,
                         Geo<1> red) {
    const int64_t i = gid();
    if (i >= n)
        return;
    int64_t off[2] = {0, 0};
    offsets(kept, i, off);
    A acc = reduce_init<A, T>(op);
    for (int64_t r = 0; r < n_red; ++r) {
        int64_t ro[1] = {off[1]};
        offsets(red, r, ro);
        acc = combine<A, T>(op, acc, A(a[ro[0]]));
    }
    o[off[0]] = static_cast<T>(acc);
}
template <class T>
__global__ void argreduce(int64_t* o, const T* a, int64_t len, int64_t sd, bool is_max, int64_t n,
                          Geo<2> g) {
    const int64_t i = gid();
    if (i >= n)
        return;
    int64_t off[2] = {0, 0};
    offsets(g, i, off);
    o[off[0]] = cuda_table::arg_best(a + off[1], len, sd, is_max);
}
template <class T>
__global__ void softmax_rows_k(T* o, const T* a, int64_t cols, bool lg, int64_t rows) {
    const int64_t i = gid();
    if (i < rows)
        cuda_table::softmax_row(o + i * cols, a + i * cols, cols, lg);
}
// Index kernels: the same gathering formulation as the OpenCL ones (no atomics).
__global__ void idx_check(const int64_t* idx, int64_t lim, int64_t id, int64_t dim, int64_t* st,
                          int64_t n) {
    const int64_t i = gid();
    if (i >= n)
        return;
    const int64_t t = idx[i];
    if (t < 0 || t >= lim)
        st[1] = t, st[2] = lim, st[3] = dim, st[0] = id;
}
template <class T>
__global__ void idx_k(IndexOp op, T* o, const T* s, const int64_t* idx, int64_t nj, int64_t lim,
                      int64_t inner, int64_t n) {
    const int64_t i = gid();
    if (i >= n)
        return;
    const int64_t k = i % inner;
    if (op == IndexOp::Select || op == IndexOp::Gather) {
        const int64_t r = i / (inner * nj);
        const int64_t t = op == IndexOp::Select ? idx[(i / inner) % nj] : idx[i];
        o[i] = (t >= 0 && t < lim) ? s[(r * lim + t) * inner + k] : T(0);
        return;
    }
    const int64_t t = (i / inner) % lim, r = i / (inner * lim);
    T acc = T(0);
    for (int64_t j = 0; j < nj; ++j) {
        if (op == IndexOp::Add) {
            if (idx[j] == t)
                acc += s[(r * nj + j) * inner + k];
        } else {
            const int64_t q = (r * nj + j) * inner + k;
            if (idx[q] == t)
                acc += s[q];
        }
    }
    o[i] += acc;
}

/// index_add grouped by output row (Note [Gathering by segments] in device_common/geometry.hpp):
/// the count of each row's indices, where each row's group starts, the groups, then the sums.
__global__ void idx_count_k(const int64_t* idx, int64_t nidx, int64_t* seg, int64_t lim) {
    const int64_t t = gid();
    if (t >= lim)
        return;
    int64_t c = 0;
    for (int64_t j = 0; j < nidx; ++j)
        c += idx[j] == t;
    seg[t + 1] = c;
}
__global__ void idx_offsets_k(int64_t* seg, int64_t lim) {
    if (gid() != 0)
        return;
    seg[0] = 0;
    for (int64_t t = 1; t <= lim; ++t)
        seg[t] += seg[t - 1];
}
__global__ void idx_fill_k(const int64_t* idx, int64_t nidx, const int64_t* seg, int64_t* perm,
                           int64_t lim) {
    const int64_t t = gid();
    if (t >= lim)
        return;
    int64_t at = seg[t];
    for (int64_t j = 0; j < nidx; ++j)
        if (idx[j] == t)
            perm[at++] = j;
}
template <class T>
__global__ void idx_add_seg_k(T* o, const T* s, const int64_t* perm, const int64_t* seg,
                              int64_t nidx, int64_t lim, int64_t inner, int64_t n) {
    const int64_t i = gid();
    if (i >= n)
        return;
    const int64_t k = i % inner, t = (i / inner) % lim, r = i / (inner * lim);
    T acc = T(0);
    for (int64_t p = seg[t]; p < seg[t + 1]; ++p)
        acc += s[(r * nidx + perm[p]) * inner + k];
    o[i] += acc;
}

/// One thread per output element of a window kernel (Note [Gathering adjoints] in
/// device_common/window.hpp); FoldScatter is not built for devices.
template <class T>
__global__ void window_k(WindowOp op, Window g, T* o, const T* a, int64_t* arg, int64_t n) {
    const int64_t e = gid();
    if (e >= n)
        return;
    // e as (plane, depth, row, column) of the output (pooling) or of x (the backwards)
    const int64_t ow = g.ow, oh = g.oh, ot = g.ot, w = g.w, h = g.h, t = g.t;
    switch (op) {
        case WindowOp::Unfold:
            o[e] = window::unfold_at(g, a, e);
            break;
        case WindowOp::Fold:
            o[e] = window::fold_at(g, a, e);
            break;
        case WindowOp::MaxPool:
            o[e] = window::max_pool_at(g, a, e / (ow * oh * ot), (e / (ow * oh)) % ot,
                                       (e / ow) % oh, e % ow, arg + e);
            break;
        case WindowOp::MaxPoolBackward:
            o[e] = window::max_pool_backward_at(g, a, arg, e / (w * h * t), (e / (w * h)) % t,
                                                (e / w) % h, e % w);
            break;
        case WindowOp::AvgPool:
            o[e] = window::avg_pool_at(g, a, e / (ow * oh * ot), (e / (ow * oh)) % ot,
                                       (e / ow) % oh, e % ow);
            break;
        case WindowOp::AvgPoolBackward:
            o[e] = window::avg_pool_backward_at(g, a, e / (w * h * t), (e / (w * h)) % t,
                                                (e / w) % h, e % w);
            break;
        default:
            break;
    }
}

inline unsigned blocks(int64_t n) {
    return unsigned((n + kThreads - 1) / kThreads);
}

}  // namespace
}  // namespace tg::backend::cuda
