#pragma once
/// bench_conv3d: a two-layer 3-D convolution network on video-like clips (N=8, 1x16x32x32 ->
/// conv3d 3x3x3 -> 16 (padding 1) -> relu -> conv3d 3x3x3 -> 32 (padding 1), loss = sum,
/// float32), forward + backward, tapegrad vs LibTorch. Each side runs in a process of its own
/// (bench_conv3d_tg, bench_conv3d_torch), started by the driver bench_conv3d, which alternates
/// them over rounds and sweeps LibTorch's thread settings. This header holds what they share.
/// Free of LibTorch and tapegrad headers.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench::conv3d {

constexpr int64_t N = 8, C0 = 1, T = 16, H = 32, W = 32, C1 = 16, C2 = 32, K = 3;
constexpr int64_t L = T * H * W;  // output positions per sample and channel (16384)

struct Init {
    std::vector<float> x, w1, b1, w2, b2;
};

/// Inputs and parameters shared by both sides: weights and biases uniform(±1/sqrt(fan_in)),
/// the input uniform in [0, 1).
inline Init make_init(uint64_t seed = 42) {
    Rng rng(seed);
    Init in;
    in.x = uniform_vec(rng, size_t(N * C0 * L), 0.f, 1.f);
    const float s1 = 1.f / float(std::sqrt(C0 * 27.0)), s2 = 1.f / float(std::sqrt(C1 * 27.0));
    in.w1 = uniform_vec(rng, size_t(C1 * C0 * 27), -s1, s1);
    in.b1 = uniform_vec(rng, size_t(C1), -s1, s1);
    in.w2 = uniform_vec(rng, size_t(C2 * C1 * 27), -s2, s2);
    in.b2 = uniform_vec(rng, size_t(C2), -s2, s2);
    return in;
}

/// The step's GEMM FLOPs: conv1 forward + dW, conv2 forward + dW + dX (the input needs none).
inline double step_flops() {
    const double k1 = C0 * 27.0, k2 = C1 * 27.0, n = double(N) * double(L);
    return 2.0 * n * (2 * C1 * k1 + 3 * C2 * k2);
}

/// --threads T (OpenBLAS threads; tapegrad's kernels follow them), --reps, --warmup;
/// bench_conv3d_torch: --torch-threads T, --mkldnn 0|1.
struct ChildOptions {
    int threads = 1, reps = 5, warmup = 2, torch_threads = 1, mkldnn = 1;
};

inline ChildOptions parse_child(int argc, char** argv) {
    ChildOptions o;
    o.threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
    o.reps = std::stoi(arg_value(argc, argv, "--reps", "5"));
    o.warmup = std::stoi(arg_value(argc, argv, "--warmup", "2"));
    o.torch_threads = std::stoi(arg_value(argc, argv, "--torch-threads", "1"));
    o.mkldnn = std::stoi(arg_value(argc, argv, "--mkldnn", "1"));
    return o;
}

/// Runs one side and prints its result line (bench_conv3d_tg.cpp, bench_conv3d_torch.cpp).
void run_side(const ChildOptions& o);

}  // namespace bench::conv3d
