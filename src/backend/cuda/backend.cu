// The CUDA backend (DESIGN.md §5): kernels from kernels.def (kernels.cuh), cuBLAS for gemm/gemv,
// the caching allocator over cudaMalloc (Note [Caching allocator]). Everything runs on the legacy
// default stream, so kernels, cuBLAS calls and the blocking cudaMemcpy of to_host/from_host are
// ordered without extra synchronisation.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "backend/backend.hpp"
#include "backend/cuda/fused.hpp"
#include "backend/cuda/kernels.cuh"
#include "backend/device_common/deferred_errors.hpp"
#include "backend/device_common/geometry.hpp"
#include "backend/registry.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend {
namespace cuda {

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

template <class T>
T* ptr(const View& v) {
    return static_cast<T*>(v.data) + v.offset;
}

class CudaBackend final : public Backend {
public:
    explicit CudaBackend(int index)
        : Backend(Device::cuda(index), CachePolicy{0, 512}), index_(index) {
        check(cudaSetDevice(index_), "cudaSetDevice");
        check_blas(cublasCreate(&blas_), "cublasCreate");
        check(cudaMalloc(&status_, 4 * sizeof(int64_t)), "cudaMalloc");
        check(cudaMemset(status_, 0, 4 * sizeof(int64_t)), "cudaMemset");
    }

    void* raw_allocate(size_t nbytes) override {
        use();
        void* p = nullptr;
        const cudaError_t e = cudaMalloc(&p, nbytes);
        if (e != cudaSuccess)
            cudaGetLastError();  // clear it: the allocator may free its cache and try again
        if (e == cudaErrorMemoryAllocation)
            throw out_of_memory(device().str() + ": out of memory allocating " +
                                std::to_string(nbytes) +
                                " bytes (cudaMalloc: " + cudaGetErrorString(e) + ")");
        check(e, "cudaMalloc");
        return p;
    }
    void raw_free(void* p) override { cudaFree(p); }
    bool fuses_optim_step() const override { return true; }
    void optim_step(OptimOp op, const OptimStep& s, const View* v) override {
        launch_optim(index_, op, s, v);  // optim.cu
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
        auto run = [&](auto to, auto ti) {
            using T = decltype(to);
            using S = decltype(ti);
            copy_s<T, S><<<blocks(n), kThreads>>>(ptr<T>(out), ptr<S>(in), n, g);
        };
        if (out.dtype == in.dtype)  // Note [Byte moves]
            dispatch_word(element_size(out.dtype), [&](auto w) { run(w, w); });
        else  // Note [Direct conversions]
            dispatch_conversion(out.dtype, in.dtype, run);
        launched("copy");
    }
    void unary(UnaryOp op, const View& out, const View& x, double p, double q) override {
        use();
        const View* v[2] = {&out, &x};
        const Geo<2> g = geo_of<2>(v);
        const int64_t n = numel(g);
        if (n == 0)
            return;
        const bool flat = is_flat(g);
        dispatch(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            T *o = ptr<T>(out), *a = ptr<T>(x);
            const T tp = convert<T>(p), tq = convert<T>(q);
            switch (op) {
#define TG_UNARY(name, expr)                                                               \
    case UnaryOp::name:                                                                    \
        if (flat)                                                                          \
            unary_c<cuda_table::U_##name, T><<<blocks(n), kThreads>>>(o, a, tp, tq, n);    \
        else                                                                               \
            unary_s<cuda_table::U_##name, T><<<blocks(n), kThreads>>>(o, a, tp, tq, n, g); \
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
        dispatch(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            T *o = ptr<T>(out), *pa = ptr<T>(a), *pb = ptr<T>(b);
            const T tp = convert<T>(p), tq = convert<T>(q);
            switch (op) {
#define TG_BINARY(name, expr)                                                                    \
    case BinaryOp::name:                                                                         \
        if (flat)                                                                                \
            binary_c<cuda_table::B_##name, T><<<blocks(n), kThreads>>>(o, pa, pb, tp, tq, n);    \
        else                                                                                     \
            binary_s<cuda_table::B_##name, T><<<blocks(n), kThreads>>>(o, pa, pb, tp, tq, n, g); \
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
        dispatch_word(element_size(out.dtype), [&](auto word) {  // Note [Byte moves]
            using W = decltype(word);
            where_s<W><<<blocks(n), kThreads>>>(ptr<W>(out), ptr<uint8_t>(cond), ptr<W>(a),
                                                ptr<W>(b), n, g);
        });
        launched("where");
    }
    void reduce(ReduceOp op, const View& out, const View& in, int dim) override {
        if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin)
            return arg_reduce(op == ReduceOp::ArgMax, out, in, dim);
        use();
        const ReduceGeo r = make_reduce_geo(out, in);
        if (r.n_out == 0)
            return;
        dispatch(out.dtype, [&](auto tag) {
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
    void arg_reduce(bool is_max, const View& out, const View& in, int dim) {
        use();
        const ArgGeo a = make_arg_geo(out, in, dim);
        if (a.n == 0)
            return;
        dispatch(in.dtype, [&](auto tag) {
            using T = decltype(tag);
            argreduce<T><<<blocks(a.n), kThreads>>>(ptr<int64_t>(out), ptr<T>(in), a.len, a.stride,
                                                    is_max, a.n, a.g);
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
        const IndexGeo g = make_index_geo(op, out, src, dim, idx);
        if (g.nidx > 0) {
            std::lock_guard<std::mutex> lock(mu_);
            const int64_t id = errors_.launch(opname, dim);
            idx_check<<<blocks(g.nidx), kThreads>>>(ptr<int64_t>(idx), g.lim, id, dim, status_,
                                                    g.nidx);
        }
        const int64_t n = numel(out);
        if (n == 0 || g.inner == 0)
            return;
        if (op == IndexOp::Add && g.inner >= kGroupedIndexAdd && g.nidx > 0) {
            grouped_index_add(out, src, idx, g, n);  // Note [Gathering by segments]
            launched(opname);
            return;
        }
        dispatch(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            idx_k<T><<<blocks(n), kThreads>>>(op, ptr<T>(out), ptr<T>(src), ptr<int64_t>(idx), g.nj,
                                              g.lim, g.inner, n);
        });
        launched(opname);
    }
    void window(WindowOp op, const Window& g, const View& out, const View& in,
                const View& aux) override {
        use();
        if (cpu_only(op))
            throw error(
                "window kernel: the scatter fold and the depthwise kernels run on the CPU only");
        if (out.dtype != Dtype::Float32 && out.dtype != Dtype::Float64)
            throw dtype_error(std::string("window kernel: dtype ") + dtype_name(out.dtype) +
                              " is not floating");
        const int64_t n = op == WindowOp::Fold ? g.x_elements() : numel(out);
        if (n == 0)
            return;
        int64_t* arg = aux.data ? ptr<int64_t>(aux) : nullptr;
        if (out.dtype == Dtype::Float32)
            window_k<float>
                <<<blocks(n), kThreads>>>(op, g, ptr<float>(out), ptr<float>(in), arg, n);
        else
            window_k<double>
                <<<blocks(n), kThreads>>>(op, g, ptr<double>(out), ptr<double>(in), arg, n);
        launched("window");
    }

    void cell(CellOp op, const Cell& g, const View* v) override {
        use();
        launch_cell(op, g, v);
    }

private:
    void use() {
        check(cudaSetDevice(index_), "cudaSetDevice");
    }
    /// index_add by groups of indices (Note [Gathering by segments]); the scratch buffers go
    /// back to the cache at once: later users run after these kernels on the same stream.
    void grouped_index_add(const View& out, const View& src, const View& idx, const IndexGeo& g,
                           int64_t n) {
        const size_t seg_bytes = size_t(g.lim + 1) * sizeof(int64_t),
                     perm_bytes = size_t(g.nidx) * sizeof(int64_t);
        auto* seg = static_cast<int64_t*>(allocate(seg_bytes));
        int64_t* perm = nullptr;
        try {
            perm = static_cast<int64_t*>(allocate(perm_bytes));
        } catch (...) {
            deallocate(seg, seg_bytes);
            throw;
        }
        const int64_t* ix = ptr<int64_t>(idx);
        idx_count_k<<<blocks(g.lim), kThreads>>>(ix, g.nidx, seg, g.lim);
        idx_offsets_k<<<1, 1>>>(seg, g.lim);
        idx_fill_k<<<blocks(g.lim), kThreads>>>(ix, g.nidx, seg, perm, g.lim);
        dispatch(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            idx_add_seg_k<T><<<blocks(n), kThreads>>>(ptr<T>(out), ptr<T>(src), perm, seg, g.nidx,
                                                      g.lim, g.inner, n);
        });
        deallocate(perm, perm_bytes);
        deallocate(seg, seg_bytes);
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
        counters().on_transfer(false, int64_t(n));
    }
    void write(void* dst, const void* src, size_t n) {
        if (n == 0)
            return;
        check(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), "cudaMemcpy");
        counters().on_transfer(true, int64_t(n));
    }
    void check_index_status() {  // Note [Deferred index errors]
        if (!errors_.unchecked())
            return;
        errors_.checked();
        int64_t st[4] = {};
        read(st, status_, sizeof st);
        if (st[0] == 0)
            return;
        check(cudaMemset(status_, 0, sizeof st), "cudaMemset");
        errors_.raise(device(), st);
    }

    int index_;
    cublasHandle_t blas_ = nullptr;
    std::mutex mu_;
    int64_t* status_ = nullptr;
    DeferredErrors errors_;
};

}  // namespace

int device_count() {
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

}  // namespace cuda

extern const Family cuda_family = {
    "cuda", cuda::device_count, [](int index) -> Backend* { return new cuda::CudaBackend(index); },
    "no CUDA device found (driver missing or no GPU)", nullptr};

}  // namespace tg::backend
