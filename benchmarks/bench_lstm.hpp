#pragma once
/// bench_lstm: an LSTM's forward and backward over a sequence (tg::lstm / torch::lstm, ATen's
/// function behind nn::LSTM, with the same arguments on both sides): input 128, hidden 512, one
/// layer, 100 steps of a batch of 32, float32, loss Σ output·w with a fixed w.
///
/// Each side runs in a process of its own (bench_lstm_tg, bench_lstm_torch), started by the
/// driver bench_lstm, which alternates them over rounds. This header holds what they share: the
/// sizes, the seeded weights and inputs and the child's options. Free of LibTorch and tapegrad
/// headers.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench::lstm {

constexpr int64_t I = 128, H = 512, T = 100, N = 32;

/// w_ih [4H, I], w_hh [4H, H], b_ih, b_hh [4H], drawn U(±1/√H) (LibTorch's bounds), then the
/// input x [T, N, I] and the loss weights w [T, N, H], U(±1).
struct Data {
    std::vector<std::vector<float>> params;
    std::vector<float> x, w;
};

inline Data data(uint64_t seed = 7) {
    Rng rng(seed);
    const float b = 1 / std::sqrt(float(H));
    Data d;
    d.params.push_back(uniform_vec(rng, size_t(4 * H * I), -b, b));
    d.params.push_back(uniform_vec(rng, size_t(4 * H * H), -b, b));
    d.params.push_back(uniform_vec(rng, size_t(4 * H), -b, b));
    d.params.push_back(uniform_vec(rng, size_t(4 * H), -b, b));
    d.x = uniform_vec(rng, size_t(T * N * I), -1, 1);
    d.w = uniform_vec(rng, size_t(T * N * H), -1, 1);
    return d;
}

/// Matrix-multiply FLOPs of forward + backward (3x the forward's 2·T·N·4H·(I + H)).
inline double step_flops() {
    return 3.0 * 2.0 * double(T * N) * double(4 * H) * double(I + H);
}

/// --threads (OpenBLAS), --reps, --warmup; bench_lstm_torch: --torch-threads; bench_lstm_tg:
/// --checkpoint-every k.
struct ChildOptions {
    int threads = 1, reps = 8, warmup = 2, torch_threads = 1;
    int64_t checkpoint_every = 0;
};

inline ChildOptions parse_child(int argc, char** argv) {
    ChildOptions o;
    o.threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
    o.reps = std::stoi(arg_value(argc, argv, "--reps", "8"));
    o.warmup = std::stoi(arg_value(argc, argv, "--warmup", "2"));
    o.torch_threads = std::stoi(arg_value(argc, argv, "--torch-threads", "1"));
    o.checkpoint_every = std::stoll(arg_value(argc, argv, "--checkpoint-every", "0"));
    return o;
}

/// Runs one side with o and prints its result line (bench_lstm_tg.cpp, bench_lstm_torch.cpp):
/// step_ms (each timed forward + backward), loss.
void run_side(const ChildOptions& o);

}  // namespace bench::lstm
