/// bench_conv: the driver of the convolution benchmark (bench_conv.hpp). For each thread
/// budget (--threads-list, default "1,2") it runs, for --rounds rounds (default 3) with the
/// order rotating each round, one process per configuration, each --warmup steps then --reps
/// timed steps (defaults 3 and 15):
///   bench_conv_tg    step, input gradient gather (default) and scatter (TG_CONV_SCATTER=1)
///   bench_conv_tg    --mode input_grad, gather and scatter
///   bench_conv_tg    --mode fold, the fold kernel alone, gather and scatter
///   bench_conv_torch torch::set_num_threads 1..budget x OPENBLAS_NUM_THREADS 1..budget x oneDNN
///                    on/off (when LibTorch has it)
///   bench_conv_gemm  the step's GEMMs alone (the GEMM-equivalent limit)
///   bench_peak       the host's SGEMM peak on the budget's threads (the yardstick: every step
///                    is also reported as a fraction of it)
/// with OPENBLAS_NUM_THREADS = the budget in the other children (tapegrad's kernels follow it).
/// Times are medians over the timed steps of all rounds. Writes --csv FILE and --md FILE, and
/// --plot FILE (one row per thread budget, for scripts/plot_bars.gp).
/// --tag NAME names the host in the summary (run.sh passes the CPU tag of the file name).
#include "bench_conv.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "bench_env.hpp"

using namespace bench;
using namespace bench::conv;

int main(int argc, char** argv) {
    try {
        const int rounds = std::stoi(arg_value(argc, argv, "--rounds", "3"));
        const int reps = std::stoi(arg_value(argc, argv, "--reps", "15"));
        const int warmup = std::stoi(arg_value(argc, argv, "--warmup", "3"));
        const std::vector<double> budgets_d =
            parse_list(arg_value(argc, argv, "--threads-list", "1,2"));
        const std::string csv_path = arg_value(argc, argv, "--csv", "");
        const std::string md_path = arg_value(argc, argv, "--md", "");
        const std::string tag = arg_value(argc, argv, "--tag", "");
        const std::string dir = self_dir();
        const std::string common =
            " --reps " + std::to_string(reps) + " --warmup " + std::to_string(warmup);
        long long steal0 = host_steal_jiffies();
        double wall0 = now_s();

        // LibTorch's build: does it have oneDNN (then its on/off is swept)?
        KV probe = run_child("env OPENBLAS_NUM_THREADS=1 " + dir +
                             "/bench_conv_torch --threads 1 --reps 1 --warmup 0");
        const bool has_mkldnn = probe["has_mkldnn"] == "1";

        std::vector<std::vector<Config>> per_budget;
        for (double bd : budgets_d) {
            const int T = int(bd);
            const std::string t = std::to_string(T);
            const std::string env = "env OPENBLAS_NUM_THREADS=" + t + " ";
            const std::string gather = "env -u TG_CONV_SCATTER ",
                              scatter = "env TG_CONV_SCATTER=1 ";
            std::vector<Config> cs;
            auto add = [&](std::string side, std::string what, std::string variant,
                           std::string cmd) {
                cs.push_back({side + " " + what + " " + variant, side, what, variant, cmd, {}});
            };
            const std::string tgc = dir + "/bench_conv_tg --threads " + t + common;
            add("tapegrad", "step", "gather", gather + env + tgc + " --mode step");
            add("tapegrad", "step", "scatter", scatter + env + tgc + " --mode step");
            add("tapegrad", "input_grad", "gather", gather + env + tgc + " --mode input_grad");
            add("tapegrad", "input_grad", "scatter", scatter + env + tgc + " --mode input_grad");
            add("tapegrad", "fold", "gather", gather + env + tgc + " --mode fold");
            add("tapegrad", "fold", "scatter", scatter + env + tgc + " --mode fold");
            for (int tt = 1; tt <= T; ++tt)  // LibTorch's intra-op x OpenBLAS threads
                for (int bb = 1; bb <= T; ++bb)
                    for (int mk : has_mkldnn ? std::vector<int>{1, 0} : std::vector<int>{1})
                        add("libtorch", "step",
                            "torch_threads=" + std::to_string(tt) +
                                " blas_threads=" + std::to_string(bb) +
                                (has_mkldnn ? (mk ? " mkldnn=on" : " mkldnn=off") : ""),
                            "env OPENBLAS_NUM_THREADS=" + std::to_string(bb) + " " + dir +
                                "/bench_conv_torch --threads " + std::to_string(bb) +
                                " --torch-threads " + std::to_string(tt) + " --mkldnn " +
                                std::to_string(mk) + common);
            add("gemm_limit", "step", "cblas_sgemm",
                env + dir + "/bench_conv_gemm --threads " + t + common);
            cs.push_back(peak_config(T, dir));
            run_rounds(cs, rounds, "threads " + t);
            per_budget.push_back(std::move(cs));
        }
        const double wall = now_s() - wall0;

        // ---- summary
        const double flops = step_flops();
        std::string md =
            "# bench_conv: two-convolution step, tapegrad vs LibTorch vs GEMM limit\n\n";
        if (!tag.empty())
            md += "- host tag: `" + tag + "`\n";
        md += machine_markdown();
        md += "- children: OPENBLAS_NUM_THREADS = the thread budget of the row; LibTorch " +
              probe["torch_version"] + ", at::hasMKLDNN() = " + (has_mkldnn ? "true" : "false") +
              ", conv backends selected (conv1,conv2): " + probe["backend"] +
              " (oneDNN on by default)\n";
        md += "- network: N=" + std::to_string(N) +
              ", input 1x28x28 -> conv2d 3x3 -> 32 (padding 1) "
              "-> relu -> conv2d 3x3 -> 64 (padding 1), loss = sum, float32; requires_grad on the "
              "weights and biases only; forward + backward, grads reset outside the timing\n";
        md += "- GEMM FLOPs per step " + fmt(flops * 1e-9, 3) +
              " GFLOP (conv1 fwd + dW, conv2 fwd + dW + dX; no dX for conv1)\n";
        md += "- " + std::to_string(rounds) +
              " rounds, each configuration a process of its own per "
              "round (order rotating), " +
              std::to_string(warmup) + " warm-up + " + std::to_string(reps) +
              " timed steps per process; medians over the " + std::to_string(rounds * reps) +
              " timed steps\n";
        md += "- wall " + fmt(wall, 1) + " s, host steal " +
              std::to_string(host_steal_jiffies() - steal0) + " jiffies\n\n";

        Table steps;
        steps.header = {"threads",
                        "side",
                        "config",
                        "fwd_ms",
                        "bwd_ms",
                        "step_ms",
                        "min_ms",
                        "round_medians_ms",
                        "gflops_equiv",
                        "fraction_of_peak",
                        "ratio_vs_gemm_limit",
                        "ratio_vs_libtorch_best",
                        "loss",
                        "grad_sums"};
        Table gemms;
        gemms.header = {"threads", "gemm", "shape_per_sample", "gflop", "ms", "gflops"};
        Table kern;
        kern.header = {"threads",     "kernel",           "input_grad_ms",
                       "min_ms",      "round_medians_ms", "bare_dx2_gemm_ms",
                       "fold_ms_est", "step_ms",          "grad_sum"};
        // The CSV: one row per measurement (step configurations, GEMM shapes, input gradients).
        Table all;
        all.header = {"threads",
                      "side",
                      "what",
                      "config",
                      "median_ms",
                      "min_ms",
                      "round_medians_ms",
                      "fwd_ms",
                      "bwd_ms",
                      "gflop",
                      "gflops",
                      "fraction_of_peak",
                      "ratio_vs_gemm_limit",
                      "ratio_vs_libtorch_best",
                      "check"};
        Table folds;
        folds.header = {"threads", "kernel", "fold_ms", "min_ms", "round_medians_ms", "sum"};
        Table plot;  // --plot: one row per thread budget (scripts/plot_bars.gp)
        plot.header = {"threads", "tapegrad", "bare GEMM", "LibTorch best"};
        std::map<int, double> tg_step, torch_best, limit, ig_gather, ig_scatter, peak;
        std::map<int, double> fold_alone_gather, fold_alone_scatter;
        std::map<int, std::string> torch_best_cfg;
        std::string warnings;
        for (size_t bi = 0; bi < per_budget.size(); ++bi) {
            const int T = int(budgets_d[bi]);
            auto& cs = per_budget[bi];
            const Config* gemm = nullptr;
            const Config* tgs = nullptr;
            const Config* best = nullptr;
            const Config* pk = nullptr;
            for (auto& c : cs) {
                if (c.side == "peak")
                    pk = &c;
                if (c.side == "gemm_limit")
                    gemm = &c;
                if (c.key == "tapegrad step gather")
                    tgs = &c;
                if (c.side == "libtorch" && (!best || c.med() < best->med()))
                    best = &c;
            }
            limit[T] = gemm->med();
            peak[T] = pk->med("gflops");
            tg_step[T] = tgs->med();
            torch_best[T] = best->med();
            torch_best_cfg[T] = best->variant + " (backend " + best->get("backend") + ")";
            plot.add({std::to_string(T) + (T == 1 ? " thread" : " threads"), fmt(tg_step[T], 3),
                      fmt(limit[T], 3), fmt(torch_best[T], 3)});
            for (auto& c : cs) {
                if (c.what != "step")
                    continue;
                const double st = c.med();
                const bool is_gemm = c.side == "gemm_limit";
                steps.add(
                    {std::to_string(T), c.side, c.variant, is_gemm ? "" : fmt(c.med("fwd_ms"), 2),
                     is_gemm ? "" : fmt(c.med("bwd_ms"), 2), fmt(st, 2),
                     fmt(min_of(c.pooled("step_ms")), 2), c.round_medians(),
                     fmt(flops / (st * 1e-3) * 1e-9, 1), fmt(fraction_of_peak(flops, st, *pk), 3),
                     fmt(st / limit[T], 3),
                     c.side == "libtorch" && &c == best ? "1 (best)" : fmt(st / torch_best[T], 3),
                     c.get("loss"), c.get("grad_sums")});
                all.add(
                    {std::to_string(T), c.side, "step", c.variant, fmt(st, 3),
                     fmt(min_of(c.pooled("step_ms")), 3), c.round_medians(),
                     is_gemm ? "" : fmt(c.med("fwd_ms"), 3), is_gemm ? "" : fmt(c.med("bwd_ms"), 3),
                     fmt(flops * 1e-9, 4), fmt(flops / (st * 1e-3) * 1e-9, 1),
                     fmt(fraction_of_peak(flops, st, *pk), 4), fmt(st / limit[T], 4),
                     fmt(st / torch_best[T], 4),
                     is_gemm ? "" : "loss " + c.get("loss") + " grad_sums " + c.get("grad_sums")});
                if (c.side == "libtorch" &&
                    !close_to(c.get("grad_sums"), tgs->get("grad_sums"), 1e-3))
                    warnings += "- WARNING: gradient sums differ: tapegrad " +
                                tgs->get("grad_sums") + ", LibTorch (" + c.variant + ") " +
                                c.get("grad_sums") + "\n";
            }
            for (const GemmShape& g : step_gemms()) {
                const double ms = gemm->med(std::string(g.name) + "_ms");
                gemms.add({std::to_string(T), g.name,
                           std::string(
                               g.ta ? "[" + std::to_string(g.k) + "," + std::to_string(g.m) + "]T"
                                    : "[" + std::to_string(g.m) + "," + std::to_string(g.k) + "]") +
                               " x " +
                               (g.tb ? "[" + std::to_string(g.n) + "," + std::to_string(g.k) + "]T"
                                     : "[" + std::to_string(g.k) + "," + std::to_string(g.n) + "]"),
                           fmt(g.flops() * 1e-9, 3), fmt(ms, 2),
                           fmt(g.flops() / (ms * 1e-3) * 1e-9, 1)});
                all.add({std::to_string(T), "gemm_limit", std::string("gemm_") + g.name,
                         "cblas_sgemm", fmt(ms, 3),
                         fmt(min_of(gemm->pooled(std::string(g.name) + "_ms")), 3), "", "", "",
                         fmt(g.flops() * 1e-9, 4), fmt(g.flops() / (ms * 1e-3) * 1e-9, 1),
                         fmt(fraction_of_peak(g.flops(), ms, *pk), 4), "", "", ""});
            }
            const double dx2 = gemm->med("dx2_ms");
            std::string gsum;
            for (const char* v : {"gather", "scatter"}) {
                const Config* ig = nullptr;
                const Config* st = nullptr;
                for (auto& c : cs) {
                    if (c.key == std::string("tapegrad input_grad ") + v)
                        ig = &c;
                    if (c.key == std::string("tapegrad step ") + v)
                        st = &c;
                }
                const double m = ig->med();
                (std::string(v) == "gather" ? ig_gather : ig_scatter)[T] = m;
                if (std::string(v) == "gather") {
                    gsum = ig->get("grad_sum");
                } else if (!close_to(ig->get("grad_sum"), gsum, 1e-4)) {
                    warnings += "- WARNING: input-gradient sums differ: gather " + gsum +
                                ", scatter " + ig->get("grad_sum") + "\n";
                }
                for (auto& c : cs)
                    if (c.key == std::string("tapegrad fold ") + v) {
                        (std::string(v) == "gather" ? fold_alone_gather : fold_alone_scatter)[T] =
                            c.med();
                        folds.add({std::to_string(T), v, fmt(c.med(), 3),
                                   fmt(min_of(c.pooled("step_ms")), 3), c.round_medians(),
                                   c.get("grad_sum")});
                        all.add({std::to_string(T), "tapegrad", "fold_conv2", v, fmt(c.med(), 3),
                                 fmt(min_of(c.pooled("step_ms")), 3), c.round_medians(), "", "", "",
                                 "", "", "", "", "sum " + c.get("grad_sum")});
                    }
                kern.add({std::to_string(T), v, fmt(m, 2), fmt(min_of(ig->pooled("step_ms")), 2),
                          ig->round_medians(), fmt(dx2, 2), fmt(m - dx2, 2), fmt(st->med(), 2),
                          ig->get("grad_sum")});
                all.add({std::to_string(T), "tapegrad", "input_grad_conv2", v, fmt(m, 3),
                         fmt(min_of(ig->pooled("step_ms")), 3), ig->round_medians(), "", "", "", "",
                         "", "", "",
                         "grad_sum " + ig->get("grad_sum") + " fold_ms_est " + fmt(m - dx2, 3)});
            }
        }

        md += "## Step (forward + backward)\n\n" + steps.markdown() + "\n";
        md +=
            "`config` of tapegrad: the input-gradient kernel (gather: default; scatter: "
            "TG_CONV_SCATTER=1). `gemm_limit`: the step's cblas_sgemm calls alone (table "
            "below). `ratio_vs_libtorch_best`: step_ms / the fastest LibTorch configuration "
            "of the same thread budget. `fraction_of_peak`: gflops_equiv / the host's SGEMM peak "
            "on the same threads (bench_peak, a 2048x2048x2048 cblas_sgemm, run in the same "
            "rounds as a process of its own).\n\n";
        md +=
            "## The GEMMs of the step (64 per shape, one per sample, as tapegrad calls them)\n\n" +
            gemms.markdown() + "\n";
        md +=
            "## Input gradient of conv2: gather vs scatter\n\n"
            "`input_grad_ms`: `tg::autograd::grad({y}, {h}, {ones})` of y = conv2d(h, w2, b2) "
            "(h [64,32,28,28] a leaf, w2 and b2 constants; the forward is recorded before the "
            "clock starts): 64 GEMMs [288,64]x[64,784] into the unfolded buffer, then the fold "
            "kernel. `fold_ms_est` = input_grad_ms - the bare dx2 GEMMs of the same run, a rough "
            "estimate (it can be negative: inside the op each sample's GEMM writes a buffer "
            "that stays in cache, faster than the bare GEMMs' strided one); the fold kernel is "
            "timed alone below. `step_ms`: the whole step with that kernel.\n\n" +
            kern.markdown() + "\n";
        md +=
            "## The fold kernel alone\n\n"
            "`fold_ms`: `tg::fold` of a [64, 288, 784] buffer (conv2's unfolded input gradient) "
            "into [64, 32, 28, 28], 3x3 windows, padding 1, not recorded: the gathering kernel "
            "(each thread owns whole rows of the result) or the scatter (atomic adds). `sum`: "
            "the result's sum, equal for both.\n\n" +
            folds.markdown() + "\n";
        md += "## Summary\n\n";
        for (auto& [T, v] : tg_step) {
            md += "- " + std::to_string(T) + " thread(s): tapegrad " + fmt(v, 2) +
                  " ms, LibTorch best " + fmt(torch_best[T], 2) + " ms (" + torch_best_cfg[T] +
                  "): tapegrad/LibTorch = **" + fmt(v / torch_best[T], 3) + "**; GEMM limit " +
                  fmt(limit[T], 2) + " ms: tapegrad/limit = **" + fmt(v / limit[T], 3) +
                  "**, LibTorch best/limit = " + fmt(torch_best[T] / limit[T], 3) + "\n";
            md += "- " + std::to_string(T) + " thread(s): SGEMM peak " + fmt(peak[T], 1) +
                  " GFLOP/s (bench_peak); tapegrad's step " +
                  fmt(flops / (v * 1e-3) * 1e-9 / peak[T], 3) + " of it, LibTorch best's " +
                  fmt(flops / (torch_best[T] * 1e-3) * 1e-9 / peak[T], 3) + "\n";
            md += "- " + std::to_string(T) + " thread(s): conv2 input gradient gather " +
                  fmt(ig_gather[T], 2) + " ms, scatter " + fmt(ig_scatter[T], 2) +
                  " ms (scatter/gather " + fmt(ig_scatter[T] / ig_gather[T], 3) + ")\n";
        }
        if (ig_gather.count(1) && ig_gather.count(2)) {
            md +=
                "- conv2's whole input gradient (its GEMMs and the fold), 1 -> 2 threads: "
                "gather " +
                fmt(ig_gather[1] / ig_gather[2], 3) + "x, scatter " +
                fmt(ig_scatter[1] / ig_scatter[2], 3) + "x\n";
        }
        if (fold_alone_gather.count(1) && fold_alone_gather.count(2)) {
            const double sg = fold_alone_gather[1] / fold_alone_gather[2];
            md += "- the fold kernel alone, 1 -> 2 threads: gather " +
                  fmt(fold_alone_gather[1], 2) + " -> " + fmt(fold_alone_gather[2], 2) +
                  " ms = **" + fmt(sg, 3) + "x** (bar >= 1.8: " + (sg >= 1.8 ? "PASS" : "FAIL") +
                  "), scatter " + fmt(fold_alone_scatter[1], 2) + " -> " +
                  fmt(fold_alone_scatter[2], 2) +
                  " ms = " + fmt(fold_alone_scatter[1] / fold_alone_scatter[2], 3) + "x\n";
        }
        md += warnings;

        const std::string csv = all.csv();
        std::cout << md;
        write_file(csv_path, csv);
        write_file(md_path, md);
        write_file(arg_value(argc, argv, "--plot", ""), plot.csv());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_conv: %s\n", e.what());
        return 1;
    }
    return 0;
}
