#pragma once
/// How many threads tapegrad's CPU work uses, with LibTorch's spelling (at::set_num_threads).
///
///     tg::set_num_threads(2);   // OpenBLAS's GEMMs and tapegrad's elementwise kernels, together
///
/// One count governs both: OpenBLAS's threads (the GEMMs) and tapegrad's own pool (elementwise
/// kernels and reductions above 64k elements), so setting it here, with
/// openblas_set_num_threads or with OPENBLAS_NUM_THREADS before start-up are the same thing.
/// The pool's workers sleep on a condition variable between kernels and never spin, so a
/// program that also runs other thread pools (LibTorch, OpenMP code) loses no core to tapegrad
/// while tapegrad is idle (Note [Elementwise threads] in src/backend/cpu/threads.cpp).
#pragma GCC visibility push(default)

namespace tg {

/// Sets the CPU thread count (n >= 1; at most the hardware's threads are used by the pool).
/// Throws tg::value_error for n < 1. Safe to call from any thread; a kernel already running
/// finishes with the count it started with.
void set_num_threads(int n);

/// The thread count CPU kernels use now: the value set (by set_num_threads, OpenBLAS or the
/// environment), capped by the hardware's threads; 1 inside a part of a parallel kernel.
int get_num_threads();

}  // namespace tg

#pragma GCC visibility pop
