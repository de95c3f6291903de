#pragma once
/// bench_gpt: one training step of examples/char_gpt.cpp's model (6 pre-norm causal blocks,
/// d_model 256, 4 heads, feed-forward 1024 with GELU, context 128, vocabulary 96, dropout 0.1,
/// batch 16, AdamW), written with the same functional ops on both sides: tapegrad (the fused
/// O(T) attention) and LibTorch 1.13 (composed attention: 1.13 has no fused one).
///
/// Each side runs in a process of its own (bench_gpt_tg, bench_gpt_torch), started by the driver
/// bench_gpt, which alternates them over rounds. This header holds what they share: the sizes,
/// the parameters' shapes and seeded initial values, the tokens and the child's options. Free of
/// LibTorch and tapegrad headers.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench::gpt {

constexpr int64_t V = 96, D = 256, H = 4, T = 128, L = 6, F = 1024, B = 16;

/// One parameter: name, shape and its initial values' rule (uniform in ±bound, or a constant).
struct Param {
    std::string name;
    std::vector<int64_t> shape;
    float bound = 0, fill = 0;
    int64_t numel() const {
        int64_t n = 1;
        for (int64_t s : shape)
            n *= s;
        return n;
    }
};

/// Every parameter in a fixed order: tok, pos, then per block ln1.w ln1.b in_w in_b out_w out_b
/// ln2.w ln2.b fc1.w fc1.b fc2.w fc2.b, then lnf.w lnf.b head.w head.b (LibTorch-like bounds).
inline std::vector<Param> params() {
    const float emb = 0.02f * std::sqrt(3.f), d = 1 / std::sqrt(float(D)),
                f = 1 / std::sqrt(float(F)), xavier = std::sqrt(6.f / float(D + 3 * D));
    std::vector<Param> p = {{"tok", {V, D}, emb}, {"pos", {T, D}, emb}};
    for (int64_t i = 0; i < L; ++i) {
        const std::string b = "b" + std::to_string(i) + ".";
        p.push_back({b + "ln1.w", {D}, 0, 1});
        p.push_back({b + "ln1.b", {D}, 0, 0});
        p.push_back({b + "in_w", {3 * D, D}, xavier});
        p.push_back({b + "in_b", {3 * D}, 0, 0});
        p.push_back({b + "out_w", {D, D}, d});
        p.push_back({b + "out_b", {D}, 0, 0});
        p.push_back({b + "ln2.w", {D}, 0, 1});
        p.push_back({b + "ln2.b", {D}, 0, 0});
        p.push_back({b + "fc1.w", {F, D}, d});
        p.push_back({b + "fc1.b", {F}, d});
        p.push_back({b + "fc2.w", {D, F}, f});
        p.push_back({b + "fc2.b", {D}, f});
    }
    p.push_back({"lnf.w", {D}, 0, 1});
    p.push_back({"lnf.b", {D}, 0, 0});
    p.push_back({"head.w", {V, D}, d});
    p.push_back({"head.b", {V}, d});
    return p;
}
constexpr size_t kPerBlock = 12;  // parameters per block, from index 2 + 12·i

inline std::vector<std::vector<float>> initial_values(uint64_t seed = 7) {
    Rng rng(seed);
    std::vector<std::vector<float>> v;
    for (const Param& p : params())
        v.push_back(p.bound > 0 ? uniform_vec(rng, size_t(p.numel()), -p.bound, p.bound)
                                : std::vector<float>(size_t(p.numel()), p.fill));
    return v;
}

/// B sequences of T+1 tokens: inputs are the first T, targets the last T of each.
inline std::vector<int64_t> tokens(uint64_t seed = 11) {
    Rng rng(seed);
    std::vector<int64_t> t(size_t(B * (T + 1)));
    for (auto& x : t)
        x = int64_t(rng.next() % uint64_t(V));
    return t;
}

/// Matrix-multiply FLOPs of one step (forward + backward = 3x forward): the linear layers and
/// the causal attention's two products (half of the T x T scores).
inline double step_flops() {
    const double tokens = double(B * T);
    const double linear =
        2 * tokens * double(L) * double(3 * D * D + D * D + 2 * D * F) + 2 * tokens * double(D * V);
    const double attention = double(L) * 2 * 2 * double(B) * double(T) * double(T) * double(D) / 2;
    return 3 * (linear + attention);
}

/// The child's options: --threads T (OpenBLAS threads), --reps, --warmup; --mode step|memory;
/// --checkpoint 0 (none) | 1 (per block: every block but the last) | 2 (the planner, with
/// --budget-mib); bench_gpt_torch: --torch-threads.
struct ChildOptions {
    int threads = 1, reps = 8, warmup = 2, torch_threads = 1, checkpoint = 0;
    std::string mode = "step";
    double budget_mib = 0;
};

inline ChildOptions parse_child(int argc, char** argv) {
    ChildOptions o;
    o.threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
    o.reps = std::stoi(arg_value(argc, argv, "--reps", "8"));
    o.warmup = std::stoi(arg_value(argc, argv, "--warmup", "2"));
    o.mode = arg_value(argc, argv, "--mode", "step");
    o.torch_threads = std::stoi(arg_value(argc, argv, "--torch-threads", "1"));
    o.checkpoint = std::stoi(arg_value(argc, argv, "--checkpoint", "0"));
    o.budget_mib = std::stod(arg_value(argc, argv, "--budget-mib", "0"));
    return o;
}

/// Runs one side with o and prints its result line (bench_gpt_tg.cpp, bench_gpt_torch.cpp).
void run_side(const ChildOptions& o);

/// Resets the peak RSS (VmHWM) to the current RSS (Linux >= 4.0), so that a later VmHWM is the
/// peak since now; false where the kernel does not allow it.
inline bool reset_peak_rss() {
    std::ofstream f("/proc/self/clear_refs");
    f << "5";
    f.flush();
    return bool(f);
}

}  // namespace bench::gpt
