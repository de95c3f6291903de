#pragma once
// The internal backend interface (DESIGN.md §5). Backends provide buffers, copies, the
// table-generated elementwise kernels, a few reductions, gemm/gemv and a few structural kernels.
// They never know about differentiable ops.
#include <cstdint>
#include <random>

#include "tapegrad/device.hpp"
#include "tapegrad/dtype.hpp"

namespace tg::backend {

enum class UnaryOp : uint8_t {
#define TG_UNARY(name, expr) name,
#include "backend/kernels.def"
};
enum class BinaryOp : uint8_t {
#define TG_BINARY(name, expr) name,
#include "backend/kernels.def"
};
const char* unary_name(UnaryOp op);
const char* binary_name(BinaryOp op);

enum class ReduceOp : uint8_t { Sum, Max, Min };
enum class IndexOp : uint8_t { Select, Add, Gather, ScatterAdd };

constexpr int kMaxDims = 16;

/// A strided operand: element (i0..in) lives at data + (offset + Σ ik*strides[k]) elements.
/// Broadcast operands carry stride 0 on broadcast dims; all operands of one call share `sizes`.
struct View {
    void* data = nullptr;  // backend buffer handle
    int64_t offset = 0;    // elements
    const int64_t* sizes = nullptr;
    const int64_t* strides = nullptr;
    int ndim = 0;
    Dtype dtype = Dtype::Float32;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual void* allocate(size_t nbytes) = 0;
    virtual void deallocate(void* p, size_t nbytes) = 0;
    /// Byte copies between host memory and a buffer (offsets in bytes).
    virtual void to_host(void* dst, const void* src, size_t src_offset, size_t n) = 0;
    virtual void from_host(void* dst, size_t dst_offset, const void* src, size_t n) = 0;
    /// out = in, strided, converting dtypes.
    virtual void copy(const View& out, const View& in) = 0;
    virtual void fill(const View& out, double value) = 0;
    virtual void unary(UnaryOp op, const View& out, const View& x, double p, double q) = 0;
    virtual void binary(BinaryOp op, const View& out, const View& a, const View& b, double p,
                        double q) = 0;
    /// out = cond != 0 ? a : b
    virtual void where(const View& out, const View& cond, const View& a, const View& b) = 0;
    /// out (strides 0 on the reduced dims) = reduction of in; out is overwritten.
    virtual void reduce(ReduceOp op, const View& out, const View& in) = 0;
    /// out[int64] = index of the max (min) along dim; out has in's sizes with stride 0 on dim.
    virtual void arg_reduce(bool is_max, const View& out, const View& in, int dim) = 0;
    /// Row-wise (log-)softmax of contiguous [rows, cols] data.
    virtual void softmax_rows(const View& out, const View& in, int64_t rows, int64_t cols,
                              bool log) = 0;
    /// Row-major BLAS gemm: C = alpha * op(A) op(B) + beta * C (views give data and offset).
    virtual void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                      const View& a, int64_t lda, const View& b, int64_t ldb, double beta,
                      const View& c, int64_t ldc) = 0;
    /// Row-major BLAS gemv: y = alpha * op(A) x + beta * y; A is [m,n].
    virtual void gemv(bool ta, int64_t m, int64_t n, double alpha, const View& a, int64_t lda,
                      const View& x, int64_t incx, double beta, const View& y, int64_t incy) = 0;
    /// Contiguous index kernels along dim (index is int64; src/out contiguous):
    /// Select: out = src.index_select(dim, idx); Add: out.index_add_(dim, idx, src);
    /// Gather: out = src.gather(dim, idx); ScatterAdd: out.scatter_add_(dim, idx, src).
    /// Out-of-range indices throw shape_error naming `op`.
    virtual void index(IndexOp op, const View& out, const View& src, int dim, const View& idx,
                       const char* opname) = 0;
    virtual bool all_finite(const View& v) = 0;
    /// Fills with uniform [a,b) (normal=false) or normal(a, b) samples from gen.
    virtual void random(const View& out, bool normal, double a, double b, std::mt19937_64& gen) = 0;
    virtual void synchronize() {}
};

/// The backend serving a device; throws backend_unavailable for devices not built or present.
Backend& get(Device d);
Backend& cpu();

}  // namespace tg::backend
