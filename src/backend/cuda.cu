// The CUDA backend (DESIGN.md §5): kernels generated from kernels.def as device functors,
// cuBLAS for gemm/gemv, a caching allocator over cudaMalloc. Same structure as opencl.cpp
// (Note [Device geometry] in opencl_geo.hpp, Note [Deferred index errors] in opencl.cpp).
// Everything runs on the legacy default stream, so kernels, cuBLAS calls and the blocking
// cudaMemcpy of to_host/from_host are ordered without extra synchronisation.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "backend/block_cache.hpp"
#include "backend/opencl_backend.hpp"
#include "backend/opencl_geo.hpp"
#include "memory_internal.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend {

namespace kd {
// The math of kernels.def for every element type; int64 goes through double. Declared here so
// unqualified calls in the functors below find these overloads and nothing else.
#define TG_MATH1(f, ff)                              \
    __device__ inline float f(float x) {             \
        return ::ff(x);                              \
    }                                                \
    __device__ inline double f(double x) {           \
        return ::f(x);                               \
    }                                                \
    __device__ inline int64_t f(int64_t x) {         \
        return static_cast<int64_t>(::f(double(x))); \
    }
TG_MATH1(exp, expf)
TG_MATH1(log, logf)
TG_MATH1(sqrt, sqrtf)
TG_MATH1(tanh, tanhf)
TG_MATH1(erf, erff)
TG_MATH1(log1p, log1pf)
#undef TG_MATH1
__device__ inline float pow(float a, float b) {
    return ::powf(a, b);
}
__device__ inline double pow(double a, double b) {
    return ::pow(a, b);
}
__device__ inline int64_t pow(int64_t a, int64_t b) {
    return static_cast<int64_t>(::pow(double(a), double(b)));
}

#define TG_UNARY(name, expr)                   \
    struct U_##name {                          \
        template <class T>                     \
        __device__ static T f(T x, T p, T q) { \
            (void)p;                           \
            (void)q;                           \
            return static_cast<T>(expr);       \
        }                                      \
    };
#define TG_BINARY(name, expr)                       \
    struct B_##name {                               \
        template <class T>                          \
        __device__ static T f(T a, T b, T p, T q) { \
            (void)p;                                \
            (void)q;                                \
            return static_cast<T>(expr);            \
        }                                           \
    };
#include "backend/kernels.def"
}  // namespace kd

namespace {

void check(cudaError_t e, const char* call) {
    if (e != cudaSuccess)
        throw error(std::string("CUDA ") + call + " failed: " + cudaGetErrorString(e));
}
void check_blas(cublasStatus_t s, const char* call) {
    if (s != CUBLAS_STATUS_SUCCESS)
        throw error(std::string("cuBLAS ") + call + " failed with status " +
                    std::to_string(int(s)));
}

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
    o[off[0]] = static_cast<T>(a[off[1]]);
}
template <class T>
__global__ void fill_s(T* o, T v, int64_t n, Geo<1> g) {
    const int64_t i = gid();
    if (i >= n)
        return;
    int64_t off[1] = {0};
    offsets(g, i, off);
    o[off[0]] = v;
}
template <class T, class C>
__global__ void where_s(T* o, const C* c, const T* a, const T* b, int64_t n, Geo<4> g) {
    const int64_t i = gid();
    if (i >= n)
        return;
    int64_t off[4] = {0, 0, 0, 0};
    offsets(g, i, off);
    o[off[0]] = c[off[1]] != C(0) ? a[off[2]] : b[off[3]];
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
    const T* p = a + off[1];
    int64_t best = 0;
    T bv = p[0];
    for (int64_t j = 1; j < len; ++j) {
        const T x = p[j * sd];
        if (is_max ? x > bv : x < bv)
            bv = x, best = j;
    }
    o[off[0]] = best;
}
template <class T>
__global__ void softmax_rows_k(T* o, const T* a, int64_t cols, bool lg, int64_t rows) {
    const int64_t i = gid();
    if (i >= rows)
        return;
    const T* x = a + i * cols;
    T* y = o + i * cols;
    T m = x[0];
    for (int64_t j = 1; j < cols; ++j)
        m = x[j] > m ? x[j] : m;
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) {
        const T e = kd::exp(T(x[j] - m));
        sum += e;
        if (!lg)
            y[j] = e;
    }
    if (lg) {
        const T lse = m + T(::log(sum));
        for (int64_t j = 0; j < cols; ++j)
            y[j] = x[j] - lse;
    } else {
        const T inv = T(1.0 / sum);
        for (int64_t j = 0; j < cols; ++j)
            y[j] *= inv;
    }
}
template <class T>
__global__ void finite_k(const T* a, int64_t* flag, int64_t n, Geo<1> g) {
    const int64_t i = gid();
    if (i >= n)
        return;
    int64_t off[1] = {0};
    offsets(g, i, off);
    if (!isfinite(double(a[off[0]])))
        flag[0] = 1;
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

unsigned blocks(int64_t n) {
    return unsigned((n + kThreads - 1) / kThreads);
}

template <class T>
T* ptr(const View& v) {
    return static_cast<T*>(v.data) + v.offset;
}

template <class F>
void for_dtype(Dtype d, F&& f) {
    dispatch(d, [&](auto tag) { f(tag); });
}

class CudaBackend final : public Backend {
public:
    explicit CudaBackend(int index) : dev_(Device::cuda(index)), index_(index) {
        check(cudaSetDevice(index_), "cudaSetDevice");
        check_blas(cublasCreate(&blas_), "cublasCreate");
        check(cudaMalloc(&status_, 4 * sizeof(int64_t)), "cudaMalloc");
        check(cudaMalloc(&flag_, sizeof(int64_t)), "cudaMalloc");
        check(cudaMemset(status_, 0, 4 * sizeof(int64_t)), "cudaMemset");
        pending_.resize(kRing);
    }

    void* allocate(size_t nbytes) override {  // a caching allocator (block_cache.hpp)
        memory::detail::on_alloc(dev_, int64_t(nbytes));
        const size_t cap = BlockCache<void*>::capacity_for(nbytes);
        std::lock_guard<std::mutex> lock(mu_);
        void* p = nullptr;
        if (blocks_.take(cap, p))
            return p;
        use();
        cudaError_t e = cudaMalloc(&p, cap);
        if (e != cudaSuccess && !blocks_.empty()) {
            cudaGetLastError();
            release_cache_locked();
            e = cudaMalloc(&p, cap);
        }
        if (e != cudaSuccess)
            memory::detail::on_free(dev_, int64_t(nbytes));
        check(e, "cudaMalloc");
        blocks_.created(p, cap);
        return p;
    }
    void deallocate(void* p, size_t nbytes) override {
        memory::detail::on_free(dev_, int64_t(nbytes));
        std::lock_guard<std::mutex> lock(mu_);
        blocks_.give_back(p);
    }
    int64_t cached_bytes() {
        std::lock_guard<std::mutex> lock(mu_);
        return blocks_.cached_bytes();
    }
    void empty_cache() {
        std::lock_guard<std::mutex> lock(mu_);
        release_cache_locked();
    }

    void to_host(void* dst, const void* src, size_t off, size_t n) override {
        std::lock_guard<std::mutex> lock(mu_);
        use();
        check_index_status();
        read(dst, static_cast<const char*>(src) + off, n);
    }
    void from_host(void* dst, size_t off, const void* src, size_t n) override {
        std::lock_guard<std::mutex> lock(mu_);
        use();
        write(static_cast<char*>(dst) + off, src, n);
    }
    void synchronize() override {
        std::lock_guard<std::mutex> lock(mu_);
        use();
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        check_index_status();
    }

    void copy(const View& out, const View& in) override {
        use();
        const View* v[2] = {&out, &in};
        const Geo<2> g = geo_of<2>(v);
        const int64_t n = numel(g);
        if (n == 0)
            return;
        for_dtype(out.dtype, [&](auto to) {
            for_dtype(in.dtype, [&](auto ti) {
                using T = decltype(to);
                using S = decltype(ti);
                copy_s<T, S><<<blocks(n), kThreads>>>(ptr<T>(out), ptr<S>(in), n, g);
            });
        });
        launched("copy");
    }
    void fill(const View& out, double value) override {
        use();
        const View* v[1] = {&out};
        const Geo<1> g = geo_of<1>(v);
        const int64_t n = numel(g);
        if (n == 0)
            return;
        for_dtype(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            fill_s<T><<<blocks(n), kThreads>>>(ptr<T>(out), T(value), n, g);
        });
        launched("fill");
    }
    void unary(UnaryOp op, const View& out, const View& x, double p, double q) override {
        use();
        const View* v[2] = {&out, &x};
        const Geo<2> g = geo_of<2>(v);
        const int64_t n = numel(g);
        if (n == 0)
            return;
        const bool flat = is_flat(g);
        for_dtype(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            T *o = ptr<T>(out), *a = ptr<T>(x);
            const T tp = T(p), tq = T(q);
            switch (op) {
#define TG_UNARY(name, expr)                                                       \
    case UnaryOp::name:                                                            \
        if (flat)                                                                  \
            unary_c<kd::U_##name, T><<<blocks(n), kThreads>>>(o, a, tp, tq, n);    \
        else                                                                       \
            unary_s<kd::U_##name, T><<<blocks(n), kThreads>>>(o, a, tp, tq, n, g); \
        break;
#include "backend/kernels.def"
            }
        });
        launched(unary_name(op));
    }
    void binary(BinaryOp op, const View& out, const View& a, const View& b, double p,
                double q) override {
        use();
        const View* v[3] = {&out, &a, &b};
        const Geo<3> g = geo_of<3>(v);
        const int64_t n = numel(g);
        if (n == 0)
            return;
        const bool flat = is_flat(g);
        for_dtype(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            T *o = ptr<T>(out), *pa = ptr<T>(a), *pb = ptr<T>(b);
            const T tp = T(p), tq = T(q);
            switch (op) {
#define TG_BINARY(name, expr)                                                            \
    case BinaryOp::name:                                                                 \
        if (flat)                                                                        \
            binary_c<kd::B_##name, T><<<blocks(n), kThreads>>>(o, pa, pb, tp, tq, n);    \
        else                                                                             \
            binary_s<kd::B_##name, T><<<blocks(n), kThreads>>>(o, pa, pb, tp, tq, n, g); \
        break;
#include "backend/kernels.def"
            }
        });
        launched(binary_name(op));
    }
    void where(const View& out, const View& cond, const View& a, const View& b) override {
        use();
        const View* v[4] = {&out, &cond, &a, &b};
        const Geo<4> g = geo_of<4>(v);
        const int64_t n = numel(g);
        if (n == 0)
            return;
        for_dtype(out.dtype, [&](auto tag) {
            for_dtype(cond.dtype, [&](auto ctag) {
                using T = decltype(tag);
                using C = decltype(ctag);
                where_s<T, C><<<blocks(n), kThreads>>>(ptr<T>(out), ptr<C>(cond), ptr<T>(a),
                                                       ptr<T>(b), n, g);
            });
        });
        launched("where");
    }
    void reduce(ReduceOp op, const View& out, const View& in) override {
        use();
        const ReduceGeo r = make_reduce_geo(out, in);
        if (r.n_out == 0)
            return;
        for_dtype(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            using A = typename Acc<T>::type;
            if (r.n_red <= 64 || r.n_out >= 1024) {
                reduce_s<T, A><<<blocks(r.n_out), kThreads>>>(op, ptr<T>(out), ptr<T>(in), r.n_red,
                                                              r.n_out, r.kept, r.red);
            } else {
                unsigned l = 1;
                while (l < unsigned(kThreads) && int64_t(l) < r.n_red)
                    l *= 2;
                if (op == ReduceOp::Sum)
                    reduce_g<T, A><<<unsigned(r.n_out), l, l * sizeof(A)>>>(
                        op, ptr<T>(out), ptr<T>(in), r.n_red, r.kept, r.red);
                else
                    reduce_g<T, T><<<unsigned(r.n_out), l, l * sizeof(T)>>>(
                        op, ptr<T>(out), ptr<T>(in), r.n_red, r.kept, r.red);
            }
        });
        launched("reduce");
    }
    void arg_reduce(bool is_max, const View& out, const View& in, int dim) override {
        use();
        int64_t sz[kMaxDims];
        std::copy(in.sizes, in.sizes + in.ndim, sz);
        const int64_t len = sz[dim];
        sz[dim] = 1;
        const View* v[2] = {&out, &in};
        const Geo<2> g = make_geo<2>(v, sz, in.ndim);
        const int64_t n = numel(g);
        if (n == 0)
            return;
        for_dtype(in.dtype, [&](auto tag) {
            using T = decltype(tag);
            argreduce<T><<<blocks(n), kThreads>>>(ptr<int64_t>(out), ptr<T>(in), len,
                                                  in.strides[dim], is_max, n, g);
        });
        launched("arg_reduce");
    }
    void softmax_rows(const View& out, const View& in, int64_t rows, int64_t cols,
                      bool log) override {
        use();
        if (rows == 0 || cols == 0)
            return;
        if (in.dtype == Dtype::Float32)
            softmax_rows_k<float>
                <<<blocks(rows), kThreads>>>(ptr<float>(out), ptr<float>(in), cols, log, rows);
        else
            softmax_rows_k<double>
                <<<blocks(rows), kThreads>>>(ptr<double>(out), ptr<double>(in), cols, log, rows);
        launched("softmax_rows");
    }

    // Note [Row-major cuBLAS]: cuBLAS is column-major, and a row-major matrix read column-major
    // is its transpose. So the row-major C = op(A)·op(B) is computed as the column-major
    // Cᵀ = op(B)ᵀ·op(A)ᵀ: swap the operands (B first), keep each one's transpose flag, and swap
    // m and n. No data moves. gemv likewise flips the transpose flag of A and swaps m and n.
    void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const View& a,
              int64_t lda, const View& b, int64_t ldb, double beta, const View& c,
              int64_t ldc) override {
        use();
        const auto t1 = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
        const auto t2 = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        if (c.dtype == Dtype::Float32) {
            const float al = float(alpha), be = float(beta);
            check_blas(cublasSgemm(blas_, t2, t1, int(n), int(m), int(k), &al, ptr<float>(b),
                                   int(ldb), ptr<float>(a), int(lda), &be, ptr<float>(c), int(ldc)),
                       "cublasSgemm");
        } else {
            check_blas(
                cublasDgemm(blas_, t2, t1, int(n), int(m), int(k), &alpha, ptr<double>(b), int(ldb),
                            ptr<double>(a), int(lda), &beta, ptr<double>(c), int(ldc)),
                "cublasDgemm");
        }
    }
    void gemv(bool ta, int64_t m, int64_t n, double alpha, const View& a, int64_t lda,
              const View& x, int64_t incx, double beta, const View& y, int64_t incy) override {
        use();
        const auto t = ta ? CUBLAS_OP_N : CUBLAS_OP_T;  // Note [Row-major cuBLAS]
        if (y.dtype == Dtype::Float32) {
            const float al = float(alpha), be = float(beta);
            check_blas(cublasSgemv(blas_, t, int(n), int(m), &al, ptr<float>(a), int(lda),
                                   ptr<float>(x), int(incx), &be, ptr<float>(y), int(incy)),
                       "cublasSgemv");
        } else {
            check_blas(cublasDgemv(blas_, t, int(n), int(m), &alpha, ptr<double>(a), int(lda),
                                   ptr<double>(x), int(incx), &beta, ptr<double>(y), int(incy)),
                       "cublasDgemv");
        }
    }

    void index(IndexOp op, const View& out, const View& src, int dim, const View& idx,
               const char* opname) override {
        use();
        auto prod = [](const int64_t* s, int from, int to) {
            int64_t p = 1;
            for (int d = from; d < to; ++d)
                p *= s[d];
            return p;
        };
        const int64_t nidx = prod(idx.sizes, 0, idx.ndim);
        const bool by_row = op == IndexOp::Select || op == IndexOp::Add;
        const View& big = op == IndexOp::Select || op == IndexOp::Gather ? src : out;
        const int64_t lim = big.sizes[dim];
        const int64_t inner =
            by_row ? prod(big.sizes, dim + 1, big.ndim) : prod(idx.sizes, dim + 1, idx.ndim);
        const int64_t nj = by_row ? nidx : idx.sizes[dim];
        if (nidx > 0) {
            std::lock_guard<std::mutex> lock(mu_);
            const int64_t id = ++launch_id_;
            pending_[size_t(id % kRing)] = {id, opname, dim};
            unchecked_ = true;
            idx_check<<<blocks(nidx), kThreads>>>(ptr<int64_t>(idx), lim, id, dim, status_, nidx);
        }
        const int64_t n = numel(out);
        if (n == 0 || inner == 0)
            return;
        for_dtype(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            idx_k<T><<<blocks(n), kThreads>>>(op, ptr<T>(out), ptr<T>(src), ptr<int64_t>(idx), nj,
                                              lim, inner, n);
        });
        launched(opname);
    }
    bool all_finite(const View& v) override {
        if (v.dtype == Dtype::Int64)
            return true;
        use();
        const View* vs[1] = {&v};
        const Geo<1> g = geo_of<1>(vs);
        const int64_t n = numel(g);
        check(cudaMemset(flag_, 0, sizeof(int64_t)), "cudaMemset");
        if (n > 0) {
            if (v.dtype == Dtype::Float32)
                finite_k<float><<<blocks(n), kThreads>>>(ptr<float>(v), flag_, n, g);
            else
                finite_k<double><<<blocks(n), kThreads>>>(ptr<double>(v), flag_, n, g);
            launched("all_finite");
        }
        int64_t bad = 0;
        std::lock_guard<std::mutex> lock(mu_);
        read(&bad, flag_, sizeof bad);
        return bad == 0;
    }
    /// Host-generated samples, uploaded (as the OpenCL backend: same streams as the CPU).
    void random(const View& out, bool normal, double a, double b, std::mt19937_64& gen) override {
        const int64_t n = numel(out);
        std::vector<unsigned char> host(size_t(n) * element_size(out.dtype));
        View h = out;
        h.data = host.data();
        h.offset = 0;
        cpu().random(h, normal, a, b, gen);
        std::lock_guard<std::mutex> lock(mu_);
        use();
        write(static_cast<char*>(out.data) + size_t(out.offset) * element_size(out.dtype),
              host.data(), host.size());
    }

private:
    static constexpr int64_t kRing = 256;
    struct Pending {
        int64_t id = 0;
        std::string op;
        int dim = 0;
    };

    void use() {
        check(cudaSetDevice(index_), "cudaSetDevice");
    }
    static void launched(const char* what) {
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            throw error(std::string("CUDA kernel launch (") + what +
                        ") failed: " + cudaGetErrorString(e));
    }
    void read(void* dst, const void* src, size_t n) {
        if (n == 0)
            return;
        check(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), "cudaMemcpy");
        memory::detail::on_transfer(dev_, false, int64_t(n));
    }
    void write(void* dst, const void* src, size_t n) {
        if (n == 0)
            return;
        check(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), "cudaMemcpy");
        memory::detail::on_transfer(dev_, true, int64_t(n));
    }
    void check_index_status() {
        if (!unchecked_)
            return;
        unchecked_ = false;
        int64_t st[4] = {};
        read(st, status_, sizeof st);
        if (st[0] == 0)
            return;
        check(cudaMemset(status_, 0, sizeof st), "cudaMemset");
        const Pending& p = pending_[size_t(st[0] % kRing)];
        const std::string op = p.id == st[0] ? p.op : std::string("index op");
        throw shape_error(op + ": index " + std::to_string(st[1]) + " is out of bounds for dim " +
                          std::to_string(st[3]) + " with size " + std::to_string(st[2]) +
                          " (detected on " + dev_.str() + " at the next synchronisation)");
    }
    void release_cache_locked() {
        blocks_.release_all([](void* p) { cudaFree(p); });
    }

    Device dev_;
    int index_;
    cublasHandle_t blas_ = nullptr;
    std::mutex mu_;
    BlockCache<void*> blocks_;
    int64_t* status_ = nullptr;
    int64_t* flag_ = nullptr;
    std::vector<Pending> pending_;
    int64_t launch_id_ = 0;
    bool unchecked_ = false;
};

CudaBackend* instance(int index, bool create) {
    static std::mutex mu;
    static std::vector<CudaBackend*> inst;  // never destroyed: tensors may outlive statics
    std::lock_guard<std::mutex> lock(mu);
    const int n = cuda_device_count();
    if (index < 0 || index >= n)
        return nullptr;
    if (inst.empty())
        inst.resize(size_t(n), nullptr);
    if (!inst[size_t(index)] && create) {
        inst[size_t(index)] = new CudaBackend(index);
        memory::detail::set_cache_hooks(DeviceType::CUDA, {[](int i) {
                                                               auto* b = instance(i, false);
                                                               return b ? b->cached_bytes()
                                                                        : int64_t(0);
                                                           },
                                                           [](int i) {
                                                               if (auto* b = instance(i, false))
                                                                   b->empty_cache();
                                                           }});
    }
    return inst[size_t(index)];
}

}  // namespace

int cuda_device_count() {
    static const int n = [] {
        int c = 0;
        if (cudaGetDeviceCount(&c) != cudaSuccess) {
            cudaGetLastError();
            return 0;
        }
        return c;
    }();
    return n;
}

Backend& cuda(int index) {
    if (CudaBackend* b = instance(index, true))
        return *b;
    const int n = cuda_device_count();
    throw backend_unavailable(Device::cuda(index).str() + ": " +
                              (n == 0
                                   ? std::string("no CUDA device found (driver missing or no GPU)")
                                   : "only " + std::to_string(n) + " CUDA device(s) found"));
}

}  // namespace tg::backend
