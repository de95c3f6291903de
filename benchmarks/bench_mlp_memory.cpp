/// bench_mlp_memory: tapegrad's live-byte peak per training step of the deep MLP,
/// 32 x (Linear(1024,1024)+tanh), batch 512 (tg::memory::stats), vs the minimum (params + grads
/// + one activation). Options: --threads T (OpenBLAS and LibTorch threads), --csv FILE, --md FILE.
#include <cstdio>
#include <iostream>
#include <string>

#include "bench_common.hpp"
#include "bench_mlp.hpp"

using namespace bench;

namespace {

int run_deep_memory(const MlpOptions& o) {
    std::string md = mlp_header("bench_mlp_memory: live bytes of the deep MLP (tapegrad)", o,
                                "- 32 x (Linear(1024,1024)+tanh), batch 512, MSE vs zeros, "
                                "SGD(0.05); tg::memory::reset_peak before each step\n");
    MlpSpec s = deep_mlp_spec();
    MlpInit init = make_mlp_init(s, 7, true);
    DeepMemory m = tg_deep_memory(s, init, 3);
    const double minimum = double(deep_mlp_minimum_bytes());
    Table table;
    table.header = {"step",
                    "live_before_B",
                    "peak_B",
                    "minimum_B",
                    "peak_over_minimum",
                    "peak_minus_XY_over_minimum",
                    "bar_le_1.05",
                    "loss"};
    bool pass = true;
    for (size_t i = 0; i < m.peak.size(); ++i) {
        double r = double(m.peak[i]) / minimum;
        double r2 = double(m.peak[i] - m.input_bytes) / minimum;
        bool p = r <= 1.05;
        if (i == 0 || i + 1 == m.peak.size())
            pass = pass && p;
        table.add({std::to_string(i + 1), std::to_string(m.before[i]), std::to_string(m.peak[i]),
                   std::to_string(int64_t(minimum)), fmt(r, 4), fmt(r2, 4), p ? "PASS" : "FAIL",
                   fmt(m.loss[i], 6)});
    }
    md += "- parameters " + std::to_string(m.param_bytes) + " B, X + Y " +
          std::to_string(m.input_bytes) + " B, minimum (params + grads + one activation) " +
          std::to_string(int64_t(minimum)) + " B\n\n" + table.markdown();
    md +=
        "\nLibTorch reference (baselines.md §4d): live bytes ~1.0x minimum in the first step, "
        "~1.32x in steady state (zero_grad keeps zeroed grads allocated).\n";
    md += std::string(
              "\nBar peak live bytes <= 1.05 x minimum in step 1 and in steady state "
              "(step 3): **") +
          (pass ? "PASS" : "FAIL") + "**\n";
    std::cout << md;
    write_file(o.csv, table.csv());
    write_file(o.md, md);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const MlpOptions o = parse_mlp_options(argc, argv);
    try {
        return run_deep_memory(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_mlp_memory: %s\n", e.what());
        return 1;
    }
}
