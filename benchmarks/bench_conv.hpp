#pragma once
/// bench_conv: the two-convolution network of the conv2d issue (N=64, 1x28x28 -> conv 3x3 32
/// (padding 1) -> relu -> conv 3x3 64 (padding 1), loss = sum, float32), forward + backward,
/// tapegrad vs LibTorch vs the bare cblas_sgemm calls of the same shapes.
///
/// Each side runs in a process of its own (bench_conv_tg, bench_conv_torch, bench_conv_gemm:
/// each links one of tapegrad, LibTorch, raw OpenBLAS), started by the driver bench_conv, which
/// alternates them over rounds and collects their `result ...` lines. This header holds what
/// they share: the sizes, the seeded inputs, the FLOP count and the child's output line.
/// Free of LibTorch, tapegrad and BLAS headers.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench::conv {

// The network. Both convolutions are 3x3, stride 1, padding 1, so every activation is 28x28.
constexpr int64_t N = 64, C0 = 1, H = 28, W = 28, C1 = 32, C2 = 64, K = 3;
constexpr int64_t L = H * W;  // output positions per sample and channel (784)

/// Inputs and parameters, shared by the three sides (LibTorch-like uniform(±1/sqrt(fan_in))
/// weights and biases, input uniform in [0, 1)), so the tapegrad and LibTorch losses agree.
struct Init {
    std::vector<float> x, w1, b1, w2, b2;
};

inline Init make_init(uint64_t seed = 42) {
    Rng rng(seed);
    Init in;
    in.x = uniform_vec(rng, size_t(N * C0 * H * W), 0.f, 1.f);
    const float s1 = 1.f / 3.f;                         // 1/sqrt(C0*9)
    const float s2 = 1.f / float(std::sqrt(C1 * 9.0));  // 1/sqrt(C1*9)
    in.w1 = uniform_vec(rng, size_t(C1 * C0 * K * K), -s1, s1);
    in.b1 = uniform_vec(rng, size_t(C1), -s1, s1);
    in.w2 = uniform_vec(rng, size_t(C2 * C1 * K * K), -s2, s2);
    in.b2 = uniform_vec(rng, size_t(C2), -s2, s2);
    return in;
}

/// One GEMM shape of the step, as tapegrad calls it once per sample (row-major, C = A·B + beta·C).
struct GemmShape {
    const char* name;
    bool ta, tb;
    int64_t m, n, k;
    double flops() const { return 2.0 * double(N) * double(m) * double(n) * double(k); }
};

/// The GEMMs both libraries compute for one step (the input needs no gradient, so conv1 has
/// no input-gradient GEMM): per sample, forward y = w·unfold(x), dW += dy·unfold(x)ᵀ, and for
/// conv2 the unfolded input gradient wᵀ·dy (then folded; the fold is not a GEMM).
inline std::vector<GemmShape> step_gemms() {
    const int64_t k1 = C0 * K * K, k2 = C1 * K * K;
    return {
        {"fwd1", false, false, C1, L, k1},  // [32,9] x [9,784]
        {"fwd2", false, false, C2, L, k2},  // [64,288] x [288,784]
        {"dx2", true, false, k2, L, C2},    // [64,288]ᵀ x [64,784]
        {"dw2", false, true, C2, k2, L},    // [64,784] x [288,784]ᵀ
        {"dw1", false, true, C1, k1, L},    // [32,784] x [9,784]ᵀ
    };
}

inline double step_flops() {
    double f = 0;
    for (auto& g : step_gemms())
        f += g.flops();
    return f;
}

/// The child's options: --threads T (OpenBLAS threads: tapegrad's kernels follow them),
/// --reps N, --warmup N; bench_conv_tg: --mode step|input_grad; bench_conv_torch:
/// --torch-threads T, --mkldnn 0|1.
struct ChildOptions {
    int threads = 1, reps = 15, warmup = 3;
    std::string mode = "step";
    int torch_threads = 1;
    int mkldnn = 1;
};

inline ChildOptions parse_child(int argc, char** argv) {
    ChildOptions o;
    o.threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
    o.reps = std::stoi(arg_value(argc, argv, "--reps", "15"));
    o.warmup = std::stoi(arg_value(argc, argv, "--warmup", "3"));
    o.mode = arg_value(argc, argv, "--mode", "step");
    o.torch_threads = std::stoi(arg_value(argc, argv, "--torch-threads", "1"));
    o.mkldnn = std::stoi(arg_value(argc, argv, "--mkldnn", "1"));
    return o;
}

/// Runs one side with o and prints its result line; defined once per side (bench_conv_tg.cpp,
/// bench_conv_torch.cpp, bench_conv_gemm.cpp), each linked into its own child executable.
void run_side(const ChildOptions& o);

}  // namespace bench::conv
