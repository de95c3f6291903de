#pragma once
/// The MLP benchmarks: the fully-connected training step in tapegrad, in LibTorch and
/// as the bare cblas_sgemm sequence it needs (bench_mlp: each in a process of its own), the
/// deep-MLP memory runs (bench_mlp_memory, bench_mlp_rss) and the Fashion-MNIST epoch. Each
/// implementation lives in its own translation unit behind this interface; the programs share
/// their options and summary header below.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_env.hpp"

namespace bench {

enum class Act { Tanh, Sigmoid, ReLU, None };

/// An MLP: `in` features, then one Linear per entry of `widths`, each followed by acts[i].
struct MlpSpec {
    int64_t batch = 2048;
    int64_t in = 2048;
    std::vector<int64_t> widths{1024, 256, 10};
    std::vector<Act> acts{Act::Tanh, Act::Sigmoid, Act::Sigmoid};
    float lr = 0.05f;
};

/// Inputs, target and initial parameters (row-major; weight i is [widths[i], fan_in]) shared
/// by all implementations, so their losses can be compared.
struct MlpInit {
    std::vector<float> x, y;
    std::vector<std::vector<float>> w, b;
};

/// Makes x, y (uniform in [0,1)) and LibTorch-like uniform(-1/sqrt(fan_in), 1/sqrt(fan_in))
/// weights and biases; `zero_target` makes y zeros.
MlpInit make_mlp_init(const MlpSpec& s, uint64_t seed, bool zero_target = false);

/// Phase times of one training step in seconds, and the loss it computed.
struct StepTimes {
    double fwd = 0, bwd = 0, upd = 0;
    double loss = 0;
    double total() const { return fwd + bwd + upd; }
};

/// One implementation of the training step: forward + MSE, backward, SGD step + zero_grad.
class Stepper {
public:
    virtual ~Stepper() = default;
    virtual StepTimes step() = 0;
};

std::unique_ptr<Stepper> make_torch_mlp(const MlpSpec& s, const MlpInit& init);
std::unique_ptr<Stepper> make_tg_mlp(const MlpSpec& s, const MlpInit& init);
/// The GEMMs of the step only (forward: one per layer; backward: dW per layer, dX per layer
/// but the first): the limit no implementation can beat.
std::unique_ptr<Stepper> make_gemm_mlp(const MlpSpec& s, const MlpInit& init);
/// FLOPs of the GEMM-only step.
inline double mlp_gemm_flops(const MlpSpec& s) {
    double f = 0;
    int64_t fan_in = s.in;
    for (size_t i = 0; i < s.widths.size(); ++i) {
        double layer = 2.0 * double(s.batch) * double(fan_in) * double(s.widths[i]);
        f += layer * (i == 0 ? 2 : 3);  // forward, dW, and dX except for the first layer
        fan_in = s.widths[i];
    }
    return f;
}

/// Sets OpenBLAS threads (and LibTorch's intra-op threads); returns a description.
std::string set_blas_threads(int threads);
std::string set_torch_threads(int threads);
/// tg::set_num_threads (OpenBLAS's threads and tapegrad's pool together); returns a description.
std::string set_tg_threads(int threads);
/// The OpenBLAS core name in use (e.g. "SkylakeX").
std::string blas_core();

/// Live-byte peaks (tg::memory::stats) of the deep MLP, one entry per step.
struct DeepMemory {
    int64_t param_bytes = 0;      // parameters
    int64_t input_bytes = 0;      // X and Y
    std::vector<int64_t> before;  // current bytes before each step
    std::vector<int64_t> peak;    // peak bytes during each step (reset_peak before it)
    std::vector<double> loss;
};
/// Runs `steps` SGD steps of the deep MLP in tapegrad, reading tg::memory::stats.
DeepMemory tg_deep_memory(const MlpSpec& s, const MlpInit& init, int steps);

/// Child-process modes for peak RSS: "libs" (library loaded + 1 tiny op), "params" (model,
/// optimizer, X, Y), "step" (1 training step), "steps3" (3 steps). Each prints one line
/// `impl=... mode=... VmHWM_kB=... RssAnon_kB=... RssFile_kB=... loss=...` on stdout.
void torch_rss_child(const std::string& mode, int threads);
void tg_rss_child(const std::string& mode, int threads);
/// The deep-MLP spec: 32 x (Linear(1024,1024) + tanh), batch 512, target zeros.
inline MlpSpec deep_mlp_spec() {
    MlpSpec s;
    s.batch = 512;
    s.in = 1024;
    s.widths.assign(32, 1024);
    s.acts.assign(32, Act::Tanh);
    return s;
}
/// params + grads + one activation of the deep MLP: 270,794,752 B (baselines.md §4d).
inline int64_t deep_mlp_minimum_bytes() {
    MlpSpec s = deep_mlp_spec();
    int64_t params = 0;
    int64_t fan_in = s.in;
    for (int64_t w : s.widths) {
        params += w * fan_in + w;
        fan_in = w;
    }
    return 4 * (2 * params + s.batch * s.widths.back());
}

/// Fashion-MNIST training set as host arrays (bench_cnn.hpp's load_train reads it).
struct FmnistData {
    std::vector<float> images;  // [n, 784], normalised
    std::vector<int64_t> labels;
    int64_t n = 0;
};

/// One epoch of the example model (784-256-128-10 ReLU, Adam 1e-3, batch 128, cross_entropy).
struct EpochResult {
    double seconds = 0;
    double mean_loss = 0;
};
class EpochRunner {
public:
    virtual ~EpochRunner() = default;
    /// Trains over the first `batches` batches (all if < 0).
    virtual EpochResult epoch(int64_t batches = -1) = 0;
};
std::unique_ptr<EpochRunner> make_tg_fmnist(const FmnistData& d, int64_t batch);
std::unique_ptr<EpochRunner> make_torch_fmnist(const FmnistData& d, int64_t batch);

/// The options the MLP programs share: --threads T (OpenBLAS and LibTorch threads), --reps N,
/// --warmup N, --csv FILE, --md FILE, --no-tg; for profiling runs --no-torch / --no-gemm leave
/// out those implementations. bench_mlp_opencl reads only --reps, --warmup, --csv and --md.
struct MlpOptions {
    int threads = 1;
    int reps = 10;
    int warmup = 2;
    bool run_tg = true;
    bool with_torch = true;
    bool with_gemm = true;
    std::string csv, md;
};

inline MlpOptions parse_mlp_options(int argc, char** argv) {
    MlpOptions o;
    o.threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
    o.reps = std::stoi(arg_value(argc, argv, "--reps", "10"));
    o.warmup = std::stoi(arg_value(argc, argv, "--warmup", "2"));
    o.run_tg = !has_flag(argc, argv, "--no-tg");
    o.with_torch = !has_flag(argc, argv, "--no-torch");
    o.with_gemm = !has_flag(argc, argv, "--no-gemm");  // profiling runs only; ratios need it
    o.csv = arg_value(argc, argv, "--csv", "");
    o.md = arg_value(argc, argv, "--md", "");
    return o;
}

/// The start of a summary: the title, the machine, and the thread counts, which it sets
/// (OpenBLAS's and LibTorch's, to o.threads), then `extra` (markdown lines).
inline std::string mlp_header(const std::string& title, const MlpOptions& o,
                              const std::string& extra) {
    std::string md = "# " + title + "\n\n" + machine_markdown();
    md += "- threads: " + std::to_string(o.threads) + " (" + set_blas_threads(o.threads) + "; " +
          set_torch_threads(o.threads) + ")\n";
    md += extra;
    return md + "\n";
}

}  // namespace bench
