// BLAS products through the backends: every size, including empty ones (Note [Empty products]).
#include <cstdint>
#include <initializer_list>
#include <string>

#include "runtime/dispatch.hpp"
#include "tapegrad/error.hpp"

namespace tg::runtime {

// Note [Empty products]: BLAS returns at once when a dimension is 0, which is right for m or
// n = 0 (there is nothing to write) but not for an empty inner dimension (k = 0, or gemv's
// summed dimension), where the result must still become beta * C: with beta = 0 BLAS would
// leave a fresh buffer's garbage in C. So the backends are called only with every dimension
// >= 1, and the empty cases are done here, for all of them. BLAS also takes 32-bit ints, so
// larger dimensions throw instead of being truncated.
namespace {
void scale_result(const Tensor& c, double beta) {
    if (beta == 0)
        fill(c, 0);
    else if (beta != 1)
        unary_into(UnaryOp::mul_scalar, c, c, beta, 0);
}
void check_blas_range(const char* op, std::initializer_list<int64_t> dims) {
    for (int64_t d : dims)
        if (d > INT32_MAX)
            throw shape_error(std::string(op) + ": a matrix dimension of " + std::to_string(d) +
                              " exceeds the 32-bit range BLAS takes");
}
/// The backends' products take float32 and float64 (the ops check first; this is the last guard).
void check_blas_dtype(const char* op, const Tensor& c) {
    if (c.dtype() != kFloat32 && c.dtype() != kFloat64)
        throw dtype_error(std::string(op) + ": matrix products take float32 or float64, got " +
                          shape_str(c.sizes()) + " " + dtype_name(c.dtype()) +
                          " (convert with .to(tg::kFloat32) first)");
}
}  // namespace

void gemm(const char* op, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
          const backend::View& a, int64_t lda, const backend::View& b, int64_t ldb, double beta,
          const Tensor& c) {
    check_blas_dtype(op, c);
    if (m == 0 || n == 0)
        return;
    if (k == 0)
        return scale_result(c, beta);
    const int64_t ldc = c.stride(0);
    check_blas_range(op, {m, n, k, lda, ldb, ldc});
    be(c).gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, view(c), ldc);
}

void gemv(const char* op, bool ta, int64_t m, int64_t n, double alpha, const backend::View& a,
          int64_t lda, const backend::View& x, int64_t incx, double beta, const Tensor& y) {
    check_blas_dtype(op, y);
    if ((ta ? n : m) == 0)  // y is empty
        return;
    if ((ta ? m : n) == 0)
        return scale_result(y, beta);
    const int64_t incy = y.stride(0);
    check_blas_range(op, {m, n, lda, incx, incy});
    be(y).gemv(ta, m, n, alpha, a, lda, x, incx, beta, view(y), incy);
}

}  // namespace tg::runtime
