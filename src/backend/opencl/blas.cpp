// The OpenCL backend's BLAS: gemm and gemv through CLBlast, row-major, transposes as flags,
// offsets in elements.
#include <clblast.h>

#include <string>

#include "backend/opencl/backend.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::opencl {

namespace {
void check_blas(clblast::StatusCode s, const char* call) {
    if (s != clblast::StatusCode::kSuccess)
        throw error(std::string("CLBlast ") + call + " failed with status " +
                    std::to_string(int(s)));
}
}  // namespace

// Note [beta = 0 reads C]: CLBlast computes alpha·AB + beta·C and reads C even when beta is 0,
// so a fresh (uninitialised, possibly NaN) output gives NaN (0·NaN). BLAS on the host never
// reads C then; here the rows are zeroed first (callers hold the lock).
void OpenClBackend::zero_rows(const View& c, int64_t rows, int64_t cols, int64_t ld) {
    const size_t es = element_size(c.dtype);
    const double zero = 0;
    auto fill = [&](int64_t first, int64_t count) {
        check(clEnqueueFillBuffer(queue_, mem(c), &zero, es, size_t(c.offset + first) * es,
                                  size_t(count) * es, 0, nullptr, nullptr),
              "clEnqueueFillBuffer");
    };
    if (rows <= 0 || cols <= 0)
        return;
    if (ld == cols) {
        fill(0, rows * cols);
    } else {
        for (int64_t r = 0; r < rows; ++r)
            fill(r * ld, cols);
    }
}
void OpenClBackend::gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                         const View& a, int64_t lda, const View& b, int64_t ldb, double beta,
                         const View& c, int64_t ldc) {
    std::lock_guard<std::mutex> lock(mu_);
    live();
    need(c.dtype, "gemm");
    if (beta == 0)
        zero_rows(c, m, n, ldc);  // Note [beta = 0 reads C]
    const auto t1 = ta ? clblast::Transpose::kYes : clblast::Transpose::kNo;
    const auto t2 = tb ? clblast::Transpose::kYes : clblast::Transpose::kNo;
    clblast::StatusCode s;
    if (c.dtype == Dtype::Float32)
        s = clblast::Gemm<float>(clblast::Layout::kRowMajor, t1, t2, size_t(m), size_t(n),
                                 size_t(k), float(alpha), mem(a), size_t(a.offset), size_t(lda),
                                 mem(b), size_t(b.offset), size_t(ldb), float(beta), mem(c),
                                 size_t(c.offset), size_t(ldc), &queue_, nullptr);
    else
        s = clblast::Gemm<double>(clblast::Layout::kRowMajor, t1, t2, size_t(m), size_t(n),
                                  size_t(k), alpha, mem(a), size_t(a.offset), size_t(lda), mem(b),
                                  size_t(b.offset), size_t(ldb), beta, mem(c), size_t(c.offset),
                                  size_t(ldc), &queue_, nullptr);
    check_blas(s, "Gemm");
}
void OpenClBackend::gemv(bool ta, int64_t m, int64_t n, double alpha, const View& a, int64_t lda,
                         const View& x, int64_t incx, double beta, const View& y, int64_t incy) {
    std::lock_guard<std::mutex> lock(mu_);
    live();
    need(y.dtype, "gemv");
    if (beta == 0)
        zero_rows(y, ta ? n : m, 1, incy);
    const auto t = ta ? clblast::Transpose::kYes : clblast::Transpose::kNo;
    clblast::StatusCode s;
    if (y.dtype == Dtype::Float32)
        s = clblast::Gemv<float>(clblast::Layout::kRowMajor, t, size_t(m), size_t(n), float(alpha),
                                 mem(a), size_t(a.offset), size_t(lda), mem(x), size_t(x.offset),
                                 size_t(incx), float(beta), mem(y), size_t(y.offset), size_t(incy),
                                 &queue_, nullptr);
    else
        s = clblast::Gemv<double>(clblast::Layout::kRowMajor, t, size_t(m), size_t(n), alpha,
                                  mem(a), size_t(a.offset), size_t(lda), mem(x), size_t(x.offset),
                                  size_t(incx), beta, mem(y), size_t(y.offset), size_t(incy),
                                  &queue_, nullptr);
    check_blas(s, "Gemv");
}

}  // namespace tg::backend::opencl
