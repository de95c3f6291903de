#pragma once
// TG_SIMD_CLONES, for the hot loops of the CPU backend (cpu/elementwise.cpp, cpu/max_pool.cpp)
// and of the random generators (core/mt19937.cpp, core/distributions.cpp).
//
// Note [Wider SIMD]: the library is built for baseline x86-64 (SSE2) so that one binary runs on
// any x86-64 CPU. The contiguous float32 loops of the table kernels are also compiled for AVX2
// and AVX-512, and the loader picks the widest the CPU has (GCC's target_clones: an ifunc
// resolved once). The compute-bound kernels (exp, tanh, sigmoid, adam_direction) gain most.
// The CPU backend and the samplers are compiled with -ffp-contract=off, so no clone fuses a*b+c
// into an FMA: every clone rounds exactly as the SSE2 loop does and results do not depend on the
// CPU.
// Not under ThreadSanitizer: the loader runs the ifunc resolvers while it relocates the program,
// before the TSan runtime is set up, and the instrumented resolver then crashes at start-up.
// Since every clone computes the same bits, the TSan build (scripts/tsan.sh) checks the same
// code paths with the default clone alone.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define TG_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TG_SIMD_CLONES
#endif
