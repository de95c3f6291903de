#pragma once
// The dispatch layer between tensors and backends, below ops and autograd: allocation, views for
// the backend, and elementwise launches with broadcasting and the dtype/device checks every op
// needs.
#include <functional>

#include "backend/backend.hpp"
#include "core/pool.hpp"
#include "tapegrad/tensor.hpp"

namespace tg::runtime {

using backend::BinaryOp;
using backend::UnaryOp;

/// A new contiguous tensor (uninitialised). Throws shape_error naming `op` for a shape that is
/// invalid (Note [Checked sizes]) or has more than backend::kMaxDims dims, out_of_memory when the
/// device cannot hold it.
Tensor empty(const Shape& s, Dtype d, Device dev, const char* op = "empty");
/// Throws shape_error naming `op` when s has more dims than the backends take (kMaxDims).
void check_dims(const Shape& s, const char* op);
inline Tensor empty_as(const Tensor& t) {
    return empty(t.sizes(), t.dtype(), t.device());
}
backend::Backend& be(const Tensor& t);
backend::View view(const Tensor& t);
/// view(t) starting `offset` elements further into its storage (a sub-matrix for gemm).
backend::View view(const Tensor& t, int64_t offset);
/// t read as `shape` by broadcasting: stride 0 on broadcast dims; `st` holds the strides.
backend::View broadcast_view(const Tensor& t, const Shape& shape, Shape& st);
/// A tensor sharing base's storage with new geometry (no autograd). The caller has checked that
/// the geometry lies within base's (Note [Checked sizes]); the dims are checked here, naming op.
Tensor alias(const Tensor& base, Shape sizes, Shape strides, int64_t offset,
             const char* op = "view");
/// t's values as dtype d (Note [Conversions] in backend/convert.hpp), a new contiguous tensor, or
/// t itself when it has d. Records nothing (Tensor::to records).
Tensor converted(const Tensor& t, Dtype d);
/// A scalar as error messages show it: "3", "0.5", "1e+30", "nan".
std::string scalar_str(double v);
/// Throws dtype_error / device_error naming op unless a and b agree.
void check_same(const char* op, const Tensor& a, const Tensor& b);
void check_floating(const char* op, const Tensor& t);
/// check_floating for the ops whose kernels take float32 and float64 only (products,
/// convolutions, pooling, normalisation, the losses, attention): float16 and bfloat16 throw
/// dtype_error with LibTorch-style advice (.to(tg::kFloat32) first).
void check_float_kernels(const char* op, const Tensor& t);
/// Throws dtype_error naming op for a bool tensor (Note [Bool tensors] in dispatch.cpp).
void check_not_bool(const char* op, const Tensor& t);

Tensor unary(UnaryOp op, const Tensor& x, double p = 0, double q = 0);
/// Elementwise with numpy broadcasting; `name` is the op named in errors.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const char* name, double p = 0,
              double q = 0);
/// out = op(a, b) with a and b broadcast to out's shape (out may alias a).
void binary_into(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const char* name,
                 double p, double q);
void unary_into(UnaryOp op, const Tensor& out, const Tensor& x, double p, double q);
/// dst = src broadcast to dst's shape, converting dtype.
void copy_into(const Tensor& dst, const Tensor& src);
/// Records that t's storage was written in place: bumps the version that saved tensors check
/// (Note [Version counter] in autograd/saved.cpp). Every in-place write goes through here.
inline void mark_modified(const Tensor& t) {
    ++t.impl()->storage->version;
}
/// t = value everywhere (any layout).
void fill(const Tensor& t, double value);
/// Whether t holds no NaN or Inf (reads one element back from a device).
bool all_finite(const Tensor& t);
/// c = alpha * op(a) op(b) + beta * c for row-major [m,k]·[k,n] into c [m,n] (c.stride(1) == 1,
/// leading dimension c.stride(0)): Backend::gemm, for every size including zero (Note [Empty
/// products]); throws shape_error naming op when a dimension exceeds BLAS's int range.
void gemm(const char* op, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
          const backend::View& a, int64_t lda, const backend::View& b, int64_t ldb, double beta,
          const Tensor& c);
/// y = alpha * op(a) x + beta * y, a [m,n] row-major, y 1-D: Backend::gemv, for every size
/// including zero (Note [Empty products]).
void gemv(const char* op, bool ta, int64_t m, int64_t n, double alpha, const backend::View& a,
          int64_t lda, const backend::View& x, int64_t incx, double beta, const Tensor& y);
/// Runs f(i) for every i in [0, n): for tensors on the CPU with more than one kernel thread,
/// [0, n) is split into one contiguous range per thread and each range's BLAS calls run
/// single-threaded (cpu_parallel_blas; Note [Sample-parallel convolutions] in ops/conv_gemm.cpp);
/// otherwise in order on the calling thread. f may throw: the first exception is rethrown.
void parallel_parts(const Tensor& like, int64_t n, const std::function<void(int64_t)>& f);
/// The comparison as a bool tensor (a bool operand compares as a number: Note [Bool tensors]).
Tensor compare(BinaryOp op, const Tensor& a, const Tensor& b, const char* name);

}  // namespace tg::runtime
