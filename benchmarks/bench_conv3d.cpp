/// bench_conv3d: the driver of the 3-D convolution benchmark (bench_conv3d.hpp). For each thread
/// budget (--threads-list, default "1,2") it runs, for --rounds rounds (default 3) with the order
/// rotating each round, one process per configuration, each --warmup steps then --reps timed
/// steps (defaults 2 and 5):
///   bench_conv3d_tg     OPENBLAS_NUM_THREADS = the budget (tapegrad's kernels follow it)
///   bench_conv3d_torch  torch::set_num_threads 1..budget x OPENBLAS_NUM_THREADS 1..budget x
///                       oneDNN on/off (when LibTorch has it)
/// Times are medians over the timed steps of all rounds. Writes --csv, --md and --plot (one row
/// per thread budget, for scripts/plot_bars.gp); --tag names the host.
#include "bench_conv3d.hpp"

#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "bench_env.hpp"

using namespace bench;
using namespace bench::conv3d;

int main(int argc, char** argv) {
    try {
        const int rounds = std::stoi(arg_value(argc, argv, "--rounds", "3"));
        const int reps = std::stoi(arg_value(argc, argv, "--reps", "5"));
        const int warmup = std::stoi(arg_value(argc, argv, "--warmup", "2"));
        const std::vector<double> budgets =
            parse_list(arg_value(argc, argv, "--threads-list", "1,2"));
        const std::string tag = arg_value(argc, argv, "--tag", "");
        const std::string dir = self_dir();
        const std::string common =
            " --reps " + std::to_string(reps) + " --warmup " + std::to_string(warmup);
        const long long steal0 = host_steal_jiffies();
        const double wall0 = now_s();
        KV probe = run_child("env OPENBLAS_NUM_THREADS=1 " + dir +
                             "/bench_conv3d_torch --threads 1 --reps 1 --warmup 0");
        const bool has_mkldnn = probe["has_mkldnn"] == "1";
        std::vector<std::vector<Config>> per_budget;
        for (double bd : budgets) {
            const std::string t = std::to_string(int(bd));
            std::vector<Config> cs;
            cs.push_back({"tapegrad",
                          "tapegrad",
                          "step",
                          "",
                          "env OPENBLAS_NUM_THREADS=" + t + " " + dir +
                              "/bench_conv3d_tg --threads " + t + common,
                          {}});
            for (int tt = 1; tt <= int(bd); ++tt)
                for (int bb = 1; bb <= int(bd); ++bb)
                    for (int mk : has_mkldnn ? std::vector<int>{1, 0} : std::vector<int>{1}) {
                        const std::string v =
                            "torch_threads=" + std::to_string(tt) +
                            " blas_threads=" + std::to_string(bb) +
                            (has_mkldnn ? (mk ? " mkldnn=on" : " mkldnn=off") : "");
                        cs.push_back({"libtorch " + v,
                                      "libtorch",
                                      "step",
                                      v,
                                      "env OPENBLAS_NUM_THREADS=" + std::to_string(bb) + " " + dir +
                                          "/bench_conv3d_torch --threads " + std::to_string(bb) +
                                          " --torch-threads " + std::to_string(tt) + " --mkldnn " +
                                          std::to_string(mk) + common,
                                      {}});
                    }
            run_rounds(cs, rounds, "threads " + t);
            per_budget.push_back(std::move(cs));
        }
        const double wall = now_s() - wall0, flops = step_flops();
        std::string md = "# bench_conv3d: two 3-D convolutions, tapegrad vs LibTorch\n\n";
        if (!tag.empty())
            md += "- host tag: `" + tag + "`\n";
        md += machine_markdown();
        md += "- LibTorch " + probe["torch_version"] +
              ", at::hasMKLDNN() = " + (has_mkldnn ? "true" : "false") + "\n";
        md += "- network: N=" + std::to_string(N) +
              ", input 1x16x32x32 -> conv3d 3x3x3 -> 16 (padding 1) -> relu -> conv3d 3x3x3 -> "
              "32 (padding 1), loss = sum, float32; requires_grad on the weights and biases "
              "only; forward + backward, grads reset outside the timing; GEMM-equivalent " +
              fmt(flops * 1e-9, 2) + " GFLOP per step\n";
        md += "- " + std::to_string(rounds) +
              " rounds, each configuration a process of its own per round (order rotating), " +
              std::to_string(warmup) + " warm-up + " + std::to_string(reps) +
              " timed steps per process; medians over the " + std::to_string(rounds * reps) +
              " timed steps\n";
        md += "- wall " + fmt(wall, 1) + " s, host steal " +
              std::to_string(host_steal_jiffies() - steal0) + " jiffies\n\n";
        Table steps, plot;
        steps.header = {
            "threads", "side",     "config",           "fwd_ms", "bwd_ms",
            "step_ms", "min_ms",   "round_medians_ms", "gflops", "ratio_vs_libtorch_best",
            "loss",    "grad_sums"};
        plot.header = {"threads", "tapegrad", "LibTorch best"};
        std::string summary, warnings;
        for (size_t bi = 0; bi < per_budget.size(); ++bi) {
            const int T_ = int(budgets[bi]);
            const auto& cs = per_budget[bi];
            const Config* tgc = &cs[0];
            const Config* best = nullptr;
            for (const Config& c : cs)
                if (c.side == "libtorch" && (!best || c.med() < best->med()))
                    best = &c;
            for (const Config& c : cs) {
                steps.add({std::to_string(T_), c.side, c.variant, fmt(c.med("fwd_ms"), 2),
                           fmt(c.med("bwd_ms"), 2), fmt(c.med(), 2),
                           fmt(min_of(c.pooled("step_ms")), 2), c.round_medians(),
                           fmt(flops / (c.med() * 1e-3) * 1e-9, 1),
                           &c == best ? "1 (best)" : fmt(c.med() / best->med(), 3), c.get("loss"),
                           c.get("grad_sums")});
                if (c.side == "libtorch" &&
                    !close_to(c.get("grad_sums"), tgc->get("grad_sums"), 1e-3))
                    warnings += "- WARNING: gradient sums differ: tapegrad " +
                                tgc->get("grad_sums") + ", LibTorch (" + c.variant + ") " +
                                c.get("grad_sums") + "\n";
            }
            plot.add({std::to_string(T_) + (T_ == 1 ? " thread" : " threads"), fmt(tgc->med(), 2),
                      fmt(best->med(), 2)});
            summary += "- " + std::to_string(T_) + " thread(s): tapegrad " + fmt(tgc->med(), 1) +
                       " ms (forward " + fmt(tgc->med("fwd_ms"), 1) + ", backward " +
                       fmt(tgc->med("bwd_ms"), 1) + "), LibTorch best " + fmt(best->med(), 1) +
                       " ms (" + best->variant + "): tapegrad/LibTorch = **" +
                       fmt(tgc->med() / best->med(), 3) + "**\n";
        }
        md += "## Step (forward + backward)\n\n" + steps.markdown() + "\n## Summary\n\n" + summary +
              warnings;
        std::cout << md;
        write_file(arg_value(argc, argv, "--csv", ""), steps.csv());
        write_file(arg_value(argc, argv, "--md", ""), md);
        write_file(arg_value(argc, argv, "--plot", ""), plot.csv());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_conv3d: %s\n", e.what());
        return 1;
    }
    return 0;
}
