// The CPU's BLAS: gemm and gemv through xtensor-blas (cxxblas over OpenBLAS), transposes as
// flags. The only translation unit that includes xtensor.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <xtensor-blas/xblas.hpp>

#include "backend/cpu/backend.hpp"
#include "backend/cpu/iterate.hpp"

extern "C" char* openblas_get_corename(void);

namespace tg::backend::cpu {

namespace {

void check_blas_kernel() {
    static bool checked = false;
    if (checked)
        return;
    checked = true;
    const char* name = openblas_get_corename();
    const std::string core = name ? name : "";
    const bool slow = core == "Prescott" || core == "Core2" || core == "Nehalem" ||
                      core == "Sandybridge" || core == "Katmai" || core == "Atom";
    __builtin_cpu_init();
    const bool fast_cpu = __builtin_cpu_supports("avx2");
    if (slow && fast_cpu && !std::getenv("TG_NO_BLAS_WARNING"))
        std::fprintf(stderr,
                     "tapegrad: OpenBLAS chose its slow '%s' kernel on this %s CPU; run with "
                     "OPENBLAS_CORETYPE=%s for the fast one (about 4x faster GEMM)\n",
                     core.c_str(), __builtin_cpu_supports("avx512f") ? "AVX-512" : "AVX2",
                     __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell");
}

}  // namespace

void CpuBackend::gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                      const View& a, int64_t lda, const View& b, int64_t ldb, double beta,
                      const View& c, int64_t ldc) {
    check_blas_kernel();
    const auto t1 = ta ? cxxblas::Trans : cxxblas::NoTrans;
    const auto t2 = tb ? cxxblas::Trans : cxxblas::NoTrans;
    using I = int;
    if (c.dtype == Dtype::Float32)
        cxxblas::gemm<I>(cxxblas::RowMajor, t1, t2, I(m), I(n), I(k), float(alpha), ptr<float>(a),
                         I(lda), ptr<float>(b), I(ldb), float(beta), ptr<float>(c), I(ldc));
    else
        cxxblas::gemm<I>(cxxblas::RowMajor, t1, t2, I(m), I(n), I(k), alpha, ptr<double>(a), I(lda),
                         ptr<double>(b), I(ldb), beta, ptr<double>(c), I(ldc));
}
void CpuBackend::gemv(bool ta, int64_t m, int64_t n, double alpha, const View& a, int64_t lda,
                      const View& x, int64_t incx, double beta, const View& y, int64_t incy) {
    check_blas_kernel();
    const auto t = ta ? cxxblas::Trans : cxxblas::NoTrans;
    using I = int;
    if (y.dtype == Dtype::Float32)
        cxxblas::gemv<I>(cxxblas::RowMajor, t, I(m), I(n), float(alpha), ptr<float>(a), I(lda),
                         ptr<float>(x), I(incx), float(beta), ptr<float>(y), I(incy));
    else
        cxxblas::gemv<I>(cxxblas::RowMajor, t, I(m), I(n), alpha, ptr<double>(a), I(lda),
                         ptr<double>(x), I(incx), beta, ptr<double>(y), I(incy));
}

}  // namespace tg::backend::cpu
