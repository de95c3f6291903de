/// bench_conv_suite: the convolution shape suite (bench_conv_suite.hpp) on each thread budget of
/// --threads-list (default "1,2"), --rounds rounds (default 3), the order rotating each round,
/// each configuration a process of its own running every row (--warmup then --reps steps per
/// row, defaults 2 and 5):
///   bench_conv_suite_tg     tapegrad as it chooses; with --strategies also forced per-sample
///                           GEMMs (TG_CONV_BATCHED=0), chunked GEMMs (TG_CONV_BATCHED=1),
///                           whole-batch GEMMs (TG_CONV_CHUNK_BYTES=1 GiB, TG_CONV_BATCHED=1),
///                           these three with TG_CONV_DIRECT=0, and the default choice without
///                           the direct paths (TG_CONV_DIRECT=0), without oneDNN
///                           (TG_CONV_DNNL=0) and oneDNN for every row (TG_CONV_DNNL=1; both
///                           the same as the default in a build without TG_DNNL)
///   bench_conv_suite_torch  torch::set_num_threads 1..budget x oneDNN on/off
///   bench_peak              the host's SGEMM peak on the budget's threads
/// LibTorch's best is taken per row over its configurations. Times are medians over the timed
/// steps of all rounds; a step is a forward plus its backward (dx and dw). Writes --csv FILE and
/// --md FILE; --tag NAME names the host; --rows a,b,... runs those rows only.
#include "bench_conv_suite.hpp"

#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bench_driver.hpp"
#include "bench_env.hpp"

using namespace bench;
using namespace bench::suite;

namespace {

/// A row's pooled steps (fwd + bwd, step by step) in configuration c.
std::vector<double> steps_of(const Config& c, const Row& r) {
    const auto f = c.pooled(std::string("fwd_ms_") + r.name),
               b = c.pooled(std::string("bwd_ms_") + r.name);
    std::vector<double> s;
    for (size_t i = 0; i < f.size() && i < b.size(); ++i)
        s.push_back(f[i] + b[i]);
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const int rounds = std::stoi(arg_value(argc, argv, "--rounds", "3"));
        const std::string reps = arg_value(argc, argv, "--reps", "5");
        const std::string warmup = arg_value(argc, argv, "--warmup", "2");
        const std::string only = arg_value(argc, argv, "--rows", "");
        const bool strategies = has_flag(argc, argv, "--strategies");
        const std::vector<double> budgets =
            parse_list(arg_value(argc, argv, "--threads-list", "1,2"));
        const std::string tag = arg_value(argc, argv, "--tag", "");
        const std::string dir = self_dir();
        const std::string common =
            " --reps " + reps + " --warmup " + warmup + (only.empty() ? "" : " --rows " + only);
        const long long steal0 = host_steal_jiffies();
        const double wall0 = now_s();
        std::vector<Row> rs;
        for (const Row& r : rows())
            if (only.empty() ||
                ("," + only + ",").find("," + std::string(r.name) + ",") != std::string::npos)
                rs.push_back(r);

        KV probe = run_child("env OPENBLAS_NUM_THREADS=1 " + dir +
                             "/bench_conv_suite_torch --reps 1 --warmup 0 --rows dcgan_g4");
        const bool has_mkldnn = probe["has_mkldnn"] == "1";
        std::vector<std::vector<Config>> per_budget;
        for (double bd : budgets) {
            const std::string t = std::to_string(int(bd));
            const std::string env =
                "env -u TG_CONV_BATCHED -u TG_CONV_CHUNK_BYTES -u "
                "TG_CONV_DIRECT -u TG_CONV_DNNL OPENBLAS_NUM_THREADS=" +
                t + " ";
            const std::string tgc = dir + "/bench_conv_suite_tg --threads " + t + common;
            std::vector<Config> cs;
            cs.push_back({"tapegrad default", "tapegrad", "step", "default", env + tgc, {}});
            if (strategies) {
                cs.push_back({"tapegrad per_sample",
                              "tapegrad",
                              "strategy",
                              "per_sample",
                              env + "TG_CONV_BATCHED=0 TG_CONV_DIRECT=0 " + tgc,
                              {}});
                cs.push_back({"tapegrad chunked",
                              "tapegrad",
                              "strategy",
                              "chunked",
                              env + "TG_CONV_BATCHED=1 TG_CONV_DIRECT=0 " + tgc,
                              {}});
                cs.push_back({"tapegrad whole_batch",
                              "tapegrad",
                              "strategy",
                              "whole_batch",
                              env + "TG_CONV_BATCHED=1 TG_CONV_DIRECT=0 TG_CONV_CHUNK_BYTES=" +
                                  "1073741824 " + tgc,
                              {}});
                cs.push_back({"tapegrad no_direct",
                              "tapegrad",
                              "strategy",
                              "no_direct",
                              env + "TG_CONV_DIRECT=0 " + tgc,
                              {}});
                cs.push_back({"tapegrad no_dnnl",
                              "tapegrad",
                              "strategy",
                              "no_dnnl",
                              env + "TG_CONV_DNNL=0 " + tgc,
                              {}});
                cs.push_back({"tapegrad all_dnnl",
                              "tapegrad",
                              "strategy",
                              "all_dnnl",
                              env + "TG_CONV_DNNL=1 " + tgc,
                              {}});
            }
            for (int tt = 1; tt <= int(bd); ++tt)
                for (int mk : has_mkldnn ? std::vector<int>{1, 0} : std::vector<int>{1}) {
                    const std::string v = "torch_threads=" + std::to_string(tt) +
                                          (has_mkldnn ? (mk ? " mkldnn=on" : " mkldnn=off") : "");
                    cs.push_back({"libtorch " + v,
                                  "libtorch",
                                  "step",
                                  v,
                                  "env OPENBLAS_NUM_THREADS=" + t + " " + dir +
                                      "/bench_conv_suite_torch --threads " + t +
                                      " --torch-threads " + std::to_string(tt) + " --mkldnn " +
                                      std::to_string(mk) + common,
                                  {}});
                }
            cs.push_back(peak_config(int(bd), dir));
            run_rounds(cs, rounds, "threads " + t);
            per_budget.push_back(std::move(cs));
        }
        const double wall = now_s() - wall0;

        std::string md = "# bench_conv_suite: every common convolution, tapegrad vs LibTorch\n\n";
        if (!tag.empty())
            md += "- host tag: `" + tag + "`\n";
        md += machine_markdown();
        md += "- LibTorch " + probe["torch_version"] +
              ", at::hasMKLDNN() = " + (has_mkldnn ? "true" : "false") +
              "; its best per row over torch::set_num_threads 1..budget x oneDNN on/off\n";
        md +=
            "- each row: one layer's forward + backward (dx and dw, no bias) from a fixed dy, "
            "float32; GFLOP/s count 3x the forward's multiply-adds x 2\n";
        md += "- " + std::to_string(rounds) + " rounds, " + warmup + " warm-up + " + reps +
              " timed steps per row and process; medians over the timed steps of all rounds\n";
        md += "- wall " + fmt(wall, 1) + " s, host steal " +
              std::to_string(host_steal_jiffies() - steal0) + " jiffies\n\n";
        Table t;
        t.header = {"threads",  "row",          "shape",    "tg_fwd_ms", "tg_bwd_ms", "tg_ms",
                    "torch_ms", "torch_config", "tg/torch", "tg_gflops", "tg_peak",   "torch_peak"};
        Table st;  // --strategies
        st.header = {"threads",        "row",         "default_ms", "per_sample_ms", "chunked_ms",
                     "whole_batch_ms", "no_direct_ms"};
        Table all;
        all.header = {"threads", "row",     "side",   "config",           "fwd_ms",
                      "bwd_ms",  "step_ms", "gflops", "fraction_of_peak", "check"};
        int wins = 0, total = 0;
        for (size_t bi = 0; bi < per_budget.size(); ++bi) {
            const std::string T = std::to_string(int(budgets[bi]));
            const auto& cs = per_budget[bi];
            const Config& peak = cs.back();
            for (const Row& r : rs) {
                const Config* tgc = nullptr;
                const Config* best = nullptr;
                std::map<std::string, double> strat;
                for (const Config& c : cs) {
                    if (c.side == "peak")
                        continue;
                    const double ms = median(steps_of(c, r));
                    all.add({T, r.name, c.side, c.variant,
                             fmt(c.med(std::string("fwd_ms_") + r.name), 3),
                             fmt(c.med(std::string("bwd_ms_") + r.name), 3), fmt(ms, 3),
                             fmt(r.step_flops() / (ms * 1e-3) * 1e-9, 1),
                             fmt(fraction_of_peak(r.step_flops(), ms, peak), 3),
                             c.get(std::string("check_") + r.name)});
                    if (c.side == "tapegrad")
                        strat[c.variant] = ms;
                    if (c.variant == "default")
                        tgc = &c;
                    if (c.side == "libtorch" && (!best || ms < median(steps_of(*best, r))))
                        best = &c;
                }
                const double tms = median(steps_of(*tgc, r)), bms = median(steps_of(*best, r));
                ++total;
                wins += tms <= bms;
                t.add({T, r.name, r.shape(), fmt(tgc->med(std::string("fwd_ms_") + r.name), 2),
                       fmt(tgc->med(std::string("bwd_ms_") + r.name), 2), fmt(tms, 2), fmt(bms, 2),
                       best->variant, "**" + fmt(tms / bms, 3) + "**",
                       fmt(r.step_flops() / (tms * 1e-3) * 1e-9, 1),
                       fmt(fraction_of_peak(r.step_flops(), tms, peak), 3),
                       fmt(fraction_of_peak(r.step_flops(), bms, peak), 3)});
                if (strategies)
                    st.add({T, r.name, fmt(strat["default"], 2), fmt(strat["per_sample"], 2),
                            fmt(strat["chunked"], 2), fmt(strat["whole_batch"], 2),
                            fmt(strat["no_direct"], 2)});
            }
            md += "- " + T + " thread(s): SGEMM peak " + fmt(peak.med("gflops"), 1) +
                  " GFLOP/s (bench_peak)\n";
        }
        md += "- tapegrad <= LibTorch-best at " + std::to_string(wins) + " of " +
              std::to_string(total) + " rows (bar: every row)\n\n";
        md +=
            "## Rows\n\n`tg_peak`, `torch_peak`: the step's GFLOP/s as a fraction of the SGEMM "
            "peak on the same threads.\n\n" +
            t.markdown() + "\n";
        if (strategies)
            md +=
                "## tapegrad's GEMM strategies (ms per step)\n\n`per_sample`: a GEMM per "
                "sample, `chunked`: one GEMM per chunk of samples (chunks as tapegrad cuts them: "
                "1 MiB of columns, at least 512 columns up to 16 MiB), `whole_batch`: one GEMM "
                "over the whole batch, all three without the direct paths; `no_direct`: the "
                "default choice without the 1x1 and depthwise direct paths.\n\n" +
                st.markdown() + "\n";
        std::cout << md;
        write_file(arg_value(argc, argv, "--csv", ""), all.csv());
        write_file(arg_value(argc, argv, "--md", ""), md);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_conv_suite: %s\n", e.what());
        return 1;
    }
    return 0;
}
