/// bench_gpt: the driver of the GPT step benchmark (bench_gpt.hpp). For each thread budget
/// (--threads-list, default "1,2") it runs, for --rounds rounds (default 3) with the order
/// rotating each round, one process per configuration, each --warmup steps then --reps timed
/// steps (defaults 2 and 8):
///   bench_gpt_tg     no checkpointing, and checkpointing per block
///   bench_gpt_torch  torch::set_num_threads 1..budget x OPENBLAS_NUM_THREADS 1..budget (the
///                    best one is the peer)
///   bench_peak       the host's SGEMM peak on the budget's threads (steps as a fraction of it)
/// with OPENBLAS_NUM_THREADS = the budget in tapegrad's children; with more than one thread, both
/// also with OPENBLAS_THREAD_TIMEOUT=4 (OpenBLAS's idle threads sleep at once instead of spinning
/// on sched_yield beside the other library's threads: the peer's best may need it). The bars
/// compare tapegrad without it to LibTorch's best. Then, at the largest budget, one memory process
/// per configuration (--mode memory: one step from a trimmed heap): tapegrad plain, per block and
/// the planner at --budgets (fractions of the plain step's measured peak, default "0.5,0.35"), and
/// LibTorch at its fastest thread count. Writes --csv FILE, --md FILE and
/// --plot FILE (step times, one row per thread budget, for scripts/plot_bars.gp);
/// --tag NAME names the host in the summary.
#include "bench_gpt.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "bench_env.hpp"

using namespace bench;
using namespace bench::gpt;

int main(int argc, char** argv) {
    try {
        const int rounds = std::stoi(arg_value(argc, argv, "--rounds", "3"));
        const std::string reps = arg_value(argc, argv, "--reps", "8");
        const std::string warmup = arg_value(argc, argv, "--warmup", "2");
        const std::vector<double> budgets =
            parse_list(arg_value(argc, argv, "--threads-list", "1,2"));
        const std::vector<double> fractions =
            parse_list(arg_value(argc, argv, "--budgets", "0.5,0.35"));
        const std::string csv_path = arg_value(argc, argv, "--csv", "");
        const std::string md_path = arg_value(argc, argv, "--md", "");
        const std::string tag = arg_value(argc, argv, "--tag", "");
        const std::string dir = self_dir(), common = " --reps " + reps + " --warmup " + warmup;
        const double wall0 = now_s();
        const long long steal0 = host_steal_jiffies();

        Table steps, mem, all;
        steps.header = {"threads",
                        "side",
                        "config",
                        "step_ms",
                        "min_ms",
                        "round_medians_ms",
                        "gflops_equiv",
                        "fraction_of_peak",
                        "ratio_vs_libtorch_best",
                        "loss",
                        "check_loss"};
        mem.header = {"config",          "peak_live_mib", "peak_saved_mib",     "peak_rss_mib",
                      "rss_vs_libtorch", "budget_mib",    "predicted_peak_mib", "within_budget"};
        all.header = {"threads",    "side",          "config",         "mode",
                      "median_ms",  "peak_live_mib", "peak_saved_mib", "peak_rss_mib",
                      "budget_mib", "loss",          "check_loss"};
        std::map<int, double> tg_plain, tg_ckpt, torch_best, peak;
        std::map<int, std::string> torch_best_cfg, torch_best_cmd, profiles;
        int top = 1;
        std::string torch_version, warnings;
        for (double bd : budgets) {
            const int T = int(bd);
            top = std::max(top, T);
            const std::string t = std::to_string(T),
                              env =
                                  "env -u OPENBLAS_THREAD_TIMEOUT OPENBLAS_NUM_THREADS=" + t + " ",
                              quick =
                                  "env OPENBLAS_THREAD_TIMEOUT=4 OPENBLAS_NUM_THREADS=" + t + " ";
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
            const std::string tgc = dir + "/bench_gpt_tg --threads " + t + common;
            add("tapegrad plain", "tapegrad", "plain", env + tgc + " --checkpoint 0");
            add("tapegrad per-block", "tapegrad", "checkpoint per block",
                env + tgc + " --checkpoint 1");
            if (T > 1)  // OpenBLAS's idle threads sleep at once instead of spinning (see the md)
                add("tapegrad plain timeout", "tapegrad", "plain, OPENBLAS_THREAD_TIMEOUT=4",
                    quick + tgc + " --checkpoint 0");
            for (int tt = 1; tt <= T; ++tt)  // LibTorch's intra-op x OpenBLAS threads
                for (int bb = 1; bb <= T; ++bb)
                    for (int q = 0; q < (T > 1 ? 2 : 1); ++q) {
                        const std::string b = std::to_string(bb);
                        add("libtorch " + std::to_string(tt) + "x" + b + (q ? " timeout" : ""),
                            "libtorch",
                            "torch_threads=" + std::to_string(tt) + " blas_threads=" + b +
                                (q ? " OPENBLAS_THREAD_TIMEOUT=4" : ""),
                            std::string(q ? "env OPENBLAS_THREAD_TIMEOUT=4"
                                          : "env -u OPENBLAS_THREAD_TIMEOUT") +
                                " OPENBLAS_NUM_THREADS=" + b + " " + dir +
                                "/bench_gpt_torch --threads " + b + " --torch-threads " +
                                std::to_string(tt) + common);
                    }
            cs.push_back(peak_config(T, dir));
            run_rounds(cs, rounds, "threads " + t);
            const Config* best = nullptr;
            const Config& pk = cs.back();
            peak[T] = pk.med("gflops");
            for (const Config& c : cs)
                if (c.side == "libtorch" && (!best || c.med() < best->med()))
                    best = &c;
            torch_best[T] = best->med();
            torch_best_cfg[T] = best->variant;
            torch_best_cmd[T] = best->cmd;
            torch_version = best->get("torch_version");
            for (const Config& c : cs) {
                if (c.side == "peak")
                    continue;
                if (c.key == "tapegrad plain") {
                    tg_plain[T] = c.med();
                    profiles[T] = profile_table(c.get("profile"), std::stod(c.get("profile_steps")))
                                      .markdown();
                }
                if (c.key == "tapegrad per-block")
                    tg_ckpt[T] = c.med();
                steps.add({t, c.side, c.variant, fmt(c.med(), 1),
                           fmt(min_of(c.pooled("step_ms")), 1), c.round_medians(),
                           fmt(step_flops() / (c.med() * 1e-3) * 1e-9, 1),
                           fmt(fraction_of_peak(step_flops(), c.med(), pk), 3),
                           &c == best ? "1 (best)" : fmt(c.med() / torch_best[T], 3), c.get("loss"),
                           c.get("check_loss")});
                all.add({t, c.side, c.variant, "step", fmt(c.med(), 2), "", "", "", "",
                         c.get("loss"), c.get("check_loss")});
            }
            if (!close_to(cs[0].get("check_loss"), best->get("check_loss"), 1e-4))
                warnings += "- WARNING: the losses without dropout differ: tapegrad " +
                            cs[0].get("check_loss") + ", LibTorch " + best->get("check_loss") +
                            "\n";
        }

        Table plot;  // --plot: one row per thread budget (scripts/plot_bars.gp)
        plot.header = {"threads", "tapegrad", "tapegrad checkpoint per block", "LibTorch best"};
        for (auto& [T, ms] : tg_plain)
            plot.add({std::to_string(T) + (T == 1 ? " thread" : " threads"), fmt(ms, 1),
                      fmt(tg_ckpt[T], 1), fmt(torch_best[T], 1)});

        // ---- memory, at the largest budget: one step per process
        const std::string t = std::to_string(top), env = "env OPENBLAS_NUM_THREADS=" + t + " ";
        const std::string tgm = env + dir + "/bench_gpt_tg --mode memory --threads " + t + common;
        KV torch_mem = run_child(torch_best_cmd[top] + " --mode memory");  // its fastest setting
        const double torch_rss = std::stod(torch_mem["peak_rss_mib"]);
        KV plain = run_child(tgm + " --checkpoint 0"),
           per_block = run_child(tgm + " --checkpoint 1");
        auto mem_row = [&](const std::string& name, KV& kv, double budget) {
            const double live = std::stod(kv["peak_live_mib"]);
            mem.add({name, kv["peak_live_mib"], kv["peak_saved_mib"], kv["peak_rss_mib"],
                     fmt(std::stod(kv["peak_rss_mib"]) / torch_rss, 3),
                     budget > 0 ? fmt(budget, 1) : "", budget > 0 ? kv["predicted_peak_mib"] : "",
                     budget > 0 ? (live <= budget ? "yes" : "NO") : ""});
            all.add({t, "tapegrad", name, "memory", "", kv["peak_live_mib"], kv["peak_saved_mib"],
                     kv["peak_rss_mib"], budget > 0 ? fmt(budget, 2) : "", kv["loss"],
                     kv["check_loss"]});
        };
        mem_row("tapegrad plain", plain, 0);
        mem_row("tapegrad checkpoint per block", per_block, 0);
        const double plain_live = std::stod(plain["peak_live_mib"]);
        bool planner_ok = true;
        for (double f : fractions) {
            const double budget = f * plain_live;
            try {
                KV kv = run_child(tgm + " --checkpoint 2 --budget-mib " + fmt(budget, 3));
                mem_row("tapegrad planner " + fmt(100 * f, 0) + "%", kv, budget);
                planner_ok = planner_ok && std::stod(kv["peak_live_mib"]) <= budget;
            } catch (const std::exception& e) {
                mem.add({"tapegrad planner " + fmt(100 * f, 0) + "%", "", "", "", "",
                         fmt(budget, 1), "", "infeasible"});
            }
        }
        mem.add({"libtorch " + torch_best_cfg[top], "", "", torch_mem["peak_rss_mib"], "1", "", "",
                 ""});
        all.add({t, "libtorch", torch_best_cfg[top], "memory", "", "", "",
                 torch_mem["peak_rss_mib"], "", torch_mem["loss"], torch_mem["check_loss"]});

        // ---- summary
        const double saved_cut =
            std::stod(plain["peak_saved_mib"]) / std::stod(per_block["peak_saved_mib"]);
        std::string md =
            "# bench_gpt: one training step of the char_gpt model, tapegrad vs LibTorch\n\n";
        if (!tag.empty())
            md += "- host tag: `" + tag + "`\n";
        md += machine_markdown();
        md += "- LibTorch " + torch_version +
              " (composed attention); each configuration a process of its own per round, order "
              "rotating; " +
              std::to_string(rounds) + " rounds of " + warmup + " warm-up + " + reps +
              " timed steps; medians over all timed steps\n";
        md += "- model: " + std::to_string(L) + " pre-norm causal blocks, d_model " +
              std::to_string(D) + ", " + std::to_string(H) + " heads, feed-forward " +
              std::to_string(F) + " (GELU), context " + std::to_string(T) + ", vocabulary " +
              std::to_string(V) + ", dropout 0.1, batch " + std::to_string(B) +
              ", float32; step = zero_grad, forward, cross-entropy, backward, AdamW; " +
              fmt(step_flops() * 1e-9, 1) + " GFLOP of products per step\n";
        md +=
            "- OPENBLAS_THREAD_TIMEOUT=4: OpenBLAS's idle threads sleep at once instead of "
            "spinning on sched_yield; the bars compare tapegrad without it to LibTorch's fastest "
            "row\n";
        md +=
            "- memory: one step per process after a trimmed heap (tapegrad's cache emptied); "
            "peak_live = tapegrad's allocator peak above the live bytes at the step's start, "
            "peak_saved = its activation memory, peak_rss = VmHWM above VmRSS at the start "
            "(both libraries)\n";
        md += "- wall " + fmt(now_s() - wall0, 0) + " s, host steal " +
              std::to_string(host_steal_jiffies() - steal0) + " jiffies\n\n";
        md += "## Step time\n\n" + steps.markdown() + "\n## Memory (" + t + " threads)\n\n" +
              mem.markdown() + "\n## Bars\n\n";
        for (auto& [T, ms] : tg_plain)
            md += "- " + std::to_string(T) + " thread(s): tapegrad " + fmt(ms, 1) +
                  " ms, LibTorch best (" + torch_best_cfg[T] + ") " + fmt(torch_best[T], 1) +
                  " ms: ratio **" + fmt(ms / torch_best[T], 3) + "** (bar <= 0.8 at 2 threads)\n" +
                  "- " + std::to_string(T) + " thread(s): SGEMM peak " + fmt(peak[T], 1) +
                  " GFLOP/s (bench_peak); tapegrad's step **" +
                  fmt(step_flops() / (ms * 1e-3) * 1e-9 / peak[T], 3) +
                  "** of it (bar >= 0.50), LibTorch best's " +
                  fmt(step_flops() / (torch_best[T] * 1e-3) * 1e-9 / peak[T], 3) + "\n";
        md += "- peak RSS of a step: tapegrad " + plain["peak_rss_mib"] + " MiB, LibTorch " +
              torch_mem["peak_rss_mib"] + " MiB: ratio **" +
              fmt(std::stod(plain["peak_rss_mib"]) / torch_rss, 3) + "** (bar <= 0.6)\n";
        md += "- checkpointing per block: activation memory " + plain["peak_saved_mib"] + " -> " +
              per_block["peak_saved_mib"] + " MiB (**" + fmt(saved_cut, 2) +
              "x** less, bar >= 4) at **" + fmt(tg_ckpt[top] / tg_plain[top], 3) +
              "x** the step time (bar <= 1.35)\n";
        md += "- planner: measured peak <= budget for every feasible budget: **" +
              std::string(planner_ok ? "PASS" : "FAIL") + "**\n";
        md += warnings;
        for (auto& [T, table] : profiles)
            md += "\n## Where tapegrad's step goes (" + std::to_string(T) +
                  " thread(s), tg::autograd::profiler, the plain step)\n\n" + table;
        std::printf("%s", md.c_str());
        write_file(md_path, md);
        write_file(csv_path, all.csv());
        write_file(arg_value(argc, argv, "--plot", ""), plot.csv());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_gpt: %s\n", e.what());
        return 1;
    }
    return 0;
}
