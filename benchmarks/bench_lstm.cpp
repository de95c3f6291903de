/// bench_lstm: the driver of the LSTM benchmark (bench_lstm.hpp). For each thread budget
/// (--threads-list, default "1,2") it runs, for --rounds rounds (default 3) with the order
/// rotating each round, one process per configuration, each --warmup steps then --reps timed
/// forward + backward steps (defaults 2 and 8):
///   bench_lstm_tg     plain, and with time checkpointing (--checkpoint-every 10)
///   bench_lstm_torch  torch::set_num_threads 1..budget x OPENBLAS_NUM_THREADS 1..budget (the
///                     best one is the peer)
/// with OPENBLAS_NUM_THREADS = the budget in tapegrad's children. Writes --csv FILE, --md FILE
/// and --plot FILE (step times, one row per thread budget, for scripts/plot_bars.gp); --tag NAME
/// names the host in the summary.
#include "bench_lstm.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "bench_env.hpp"

using namespace bench;
using namespace bench::lstm;

int main(int argc, char** argv) {
    try {
        const int rounds = std::stoi(arg_value(argc, argv, "--rounds", "3"));
        const std::string reps = arg_value(argc, argv, "--reps", "8");
        const std::string warmup = arg_value(argc, argv, "--warmup", "2");
        const std::vector<double> budgets =
            parse_list(arg_value(argc, argv, "--threads-list", "1,2"));
        const std::string tag = arg_value(argc, argv, "--tag", "");
        const std::string dir = self_dir(), common = " --reps " + reps + " --warmup " + warmup;
        const double wall0 = now_s();
        const long long steal0 = host_steal_jiffies();
        Table steps, plot;
        steps.header = {"threads",      "side",
                        "config",       "median_ms",
                        "min_ms",       "round_medians_ms",
                        "gflops_equiv", "ratio_vs_libtorch_best",
                        "loss"};
        plot.header = {"threads", "tapegrad", "tapegrad checkpointed (k=10)", "LibTorch best"};
        std::string bars, warnings, torch_version;
        for (double bd : budgets) {
            const int T_ = int(bd);
            const std::string t = std::to_string(T_),
                              env =
                                  "env -u OPENBLAS_THREAD_TIMEOUT OPENBLAS_NUM_THREADS=" + t + " ";
            std::vector<Config> cs;
            auto add = [&](std::string key, std::string side, std::string variant,
                           std::string cmd) {
                cs.push_back({std::move(key),
                              std::move(side),
                              "step",
                              std::move(variant),
                              std::move(cmd),
                              {}});
            };
            const std::string tgc = dir + "/bench_lstm_tg --threads " + t + common;
            add("tapegrad plain", "tapegrad", "plain", env + tgc);
            add("tapegrad checkpoint", "tapegrad", "checkpoint_every 10",
                env + tgc + " --checkpoint-every 10");
            for (int tt = 1; tt <= T_; ++tt)  // LibTorch's intra-op x OpenBLAS threads
                for (int bb = 1; bb <= T_; ++bb) {
                    const std::string b = std::to_string(bb);
                    add("libtorch " + std::to_string(tt) + "x" + b, "libtorch",
                        "torch_threads=" + std::to_string(tt) + " blas_threads=" + b,
                        "env -u OPENBLAS_THREAD_TIMEOUT OPENBLAS_NUM_THREADS=" + b + " " + dir +
                            "/bench_lstm_torch --threads " + b + " --torch-threads " +
                            std::to_string(tt) + common);
                }
            run_rounds(cs, rounds, "threads " + t);
            const Config* best = nullptr;
            for (const Config& c : cs)
                if (c.side == "libtorch" && (!best || c.med() < best->med()))
                    best = &c;
            torch_version = best->get("torch_version");
            for (const Config& c : cs)
                steps.add({t, c.side, c.variant, fmt(c.med(), 1),
                           fmt(min_of(c.pooled("step_ms")), 1), c.round_medians(),
                           fmt(step_flops() / (c.med() * 1e-3) * 1e-9, 1),
                           &c == best ? "1 (best)" : fmt(c.med() / best->med(), 3), c.get("loss")});
            plot.add({t + (T_ == 1 ? " thread" : " threads"), fmt(cs[0].med(), 1),
                      fmt(cs[1].med(), 1), fmt(best->med(), 1)});
            bars += "- " + t + " thread(s): tapegrad " + fmt(cs[0].med(), 1) +
                    " ms, LibTorch best (" + best->variant + ") " + fmt(best->med(), 1) +
                    " ms: ratio **" + fmt(cs[0].med() / best->med(), 3) +
                    "** (bar <= 1.0); with time checkpointing " + fmt(cs[1].med(), 1) + " ms\n";
            for (const Config& c : cs)
                if (!close_to(c.get("loss"), cs[0].get("loss"), 1e-3))
                    warnings += "- WARNING: the losses differ: " + c.key + " " + c.get("loss") +
                                ", tapegrad " + cs[0].get("loss") + "\n";
        }
        std::string md = "# bench_lstm: LSTM forward + backward, tapegrad vs LibTorch\n\n";
        if (!tag.empty())
            md += "- host tag: `" + tag + "`\n";
        md += machine_markdown();
        md += "- LibTorch " + torch_version +
              "; each configuration a process of its own per round, order rotating; " +
              std::to_string(rounds) + " rounds of " + warmup + " warm-up + " + reps +
              " timed steps; medians over all timed steps\n";
        md += "- model: tg::lstm / torch::lstm (what nn::LSTM calls), input " + std::to_string(I) +
              ", hidden " + std::to_string(H) + ", 1 layer, " + std::to_string(T) +
              " steps of a batch of " + std::to_string(N) +
              ", float32, biases; step = forward, loss sum(output * w), backward; " +
              fmt(step_flops() * 1e-9, 1) + " GFLOP of products per step\n";
        md += "- wall " + fmt(now_s() - wall0, 0) + " s, host steal " +
              std::to_string(host_steal_jiffies() - steal0) + " jiffies\n\n";
        md += "## Step time\n\n" + steps.markdown() + "\n## Bars\n\n" + bars + warnings;
        std::printf("%s", md.c_str());
        write_file(arg_value(argc, argv, "--md", ""), md);
        write_file(arg_value(argc, argv, "--csv", ""), steps.csv());
        write_file(arg_value(argc, argv, "--plot", ""), plot.csv());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_lstm: %s\n", e.what());
        return 1;
    }
    return 0;
}
