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
/// returns when all have finished. f must not throw.
void cpu_parallel(int parts, const std::function<void(int)>& f);

}  // namespace tg::backend::cpu
