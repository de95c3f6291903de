#pragma once
// Threads for the CPU backend's elementwise kernels (Note [Elementwise threads] in
// cpu/threads.cpp).
#include <cstdint>
#include <functional>

namespace tg::backend::cpu {

/// Kernels with fewer elements than this run on the calling thread alone.
constexpr int64_t kParallelMin = int64_t(1) << 16;

/// Threads an elementwise kernel may use: OpenBLAS's thread count (openblas_set_num_threads,
/// OPENBLAS_NUM_THREADS), capped by the hardware.
int cpu_threads();

/// Runs f(0), ..., f(parts - 1), possibly on several threads (the caller runs parts too), and
/// returns when all have finished. f must not throw. Inside a part, kernels run on their
/// thread alone (cpu_threads() is 1 there).
void cpu_parallel(int parts, const std::function<void(int)>& f);

/// cpu_parallel for parts that call BLAS themselves: each part's BLAS calls run single-threaded
/// (OpenBLAS is set to one thread for the duration and set back after), so the parts' GEMMs run
/// side by side instead of each being split over all threads (Note [Sample-parallel
/// convolutions] in ops/conv_gemm.cpp). The first exception a part throws is rethrown here after
/// every part has finished.
void cpu_parallel_blas(int parts, const std::function<void(int)>& f);

}  // namespace tg::backend::cpu
