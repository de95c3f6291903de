/// bench_mlp: the driver of the MLP comparisons, each implementation a process of its own
/// (bench_mlp_side.cpp). For each thread budget T of --threads-list (default "1,2") it runs, for
/// --rounds rounds (default 3) with the order rotating each round, one process per
/// configuration:
///   tapegrad          tg::set_num_threads(T)
///   bare GEMM         OpenBLAS on T threads (--what step only): the limit nobody beats
///   bench_peak        the host's SGEMM peak on T threads (--what step only): steps are also
///                     reported as a fraction of it
///   LibTorch          every intra-op threads t x OpenBLAS threads b with t, b in 1..T, and with
///                     T > 1 each also with OPENBLAS_THREAD_TIMEOUT=4 (OpenBLAS's idle threads
///                     sleep at once instead of spinning on sched_yield): the fastest is the peer;
///                     t = b = T is LibTorch's default, shown labelled
///   tapegrad next to LibTorch   (--what step, T > 1) one process running a LibTorch step
///                     (default threads) before each tapegrad step and before each bare-GEMM
///                     step: what another library's thread pools cost the next step
/// --what step: the MLP step (2048x2048 input, 2048->1024->256->10, MSE, SGD), --warmup 2 and
/// --reps 10 per process; --what epoch: one Fashion-MNIST epoch per process after a 20-batch
/// warm-up. --seed-size: the step of the Neanderthal article's network (10000 x 10000 input,
/// 10000->5000->1000->10), tapegrad and bare GEMM only, --warmup 1 --reps 3, on 2 threads.
/// Writes --md, --csv (every configuration) and --plot (one row per thread budget, one
/// column per implementation, for scripts/plot_bars.gp); --tag names the host.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "bench_env.hpp"
#include "bench_mlp.hpp"

using namespace bench;

namespace {

struct Run {
    Config c;
    int torch_threads = 0, blas_threads = 0;
    bool timeout = false;
};

std::string pass(bool ok) {
    return ok ? "PASS" : "FAIL";
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string what = arg_value(argc, argv, "--what", "step");
        const bool step = what == "step", seed = has_flag(argc, argv, "--seed-size");
        if (!step && what != "epoch")
            throw std::runtime_error("--what step|epoch, not " + what);
        const int rounds = std::stoi(arg_value(argc, argv, "--rounds", "3"));
        if (seed && !step)
            throw std::runtime_error("--seed-size times the step only");
        const std::string reps = arg_value(argc, argv, "--reps", seed ? "3" : step ? "10" : "1");
        const std::string warmup = arg_value(argc, argv, "--warmup",
                                             seed   ? "1"
                                             : step ? "2"
                                                    : "20");
        const std::vector<double> budgets =
            parse_list(arg_value(argc, argv, "--threads-list", seed ? "2" : "1,2"));
        const std::string tag = arg_value(argc, argv, "--tag", "");
        const std::string field = step ? "step_ms" : "epoch_s", unit = step ? "ms" : "s";
        const std::string dir = self_dir(), common = " --what " + what + " --reps " + reps +
                                                     " --warmup " + warmup +
                                                     (seed ? " --seed-size" : "");
        const double wall0 = now_s();
        const long long steal0 = host_steal_jiffies();

        Table table, all, plot;
        table.header = {"threads",        "implementation", "configuration",
                        "median_" + unit, "min_" + unit,    "round_medians_" + unit};
        if (step) {
            table.header.push_back("ratio_vs_gemm");
            table.header.push_back("fraction_of_peak");
        }
        table.header.push_back("ratio_vs_libtorch_best");
        table.header.push_back("loss");
        all.header = {"threads",     "implementation",        "configuration", "median_" + unit,
                      "min_" + unit, "round_medians_" + unit, "loss"};
        plot.header = {"threads", "tapegrad"};
        if (step)
            plot.header.push_back("bare GEMM");
        if (!seed) {  // --seed-size runs tapegrad and the bare GEMMs only
            plot.header.push_back("LibTorch best");
            plot.header.push_back("LibTorch default");
        }
        std::string bars, mixed_md;
        for (double bd : budgets) {
            const int T = int(bd);
            const std::string t = std::to_string(T);
            auto env = [](int blas, bool timeout) {
                return std::string(timeout ? "env OPENBLAS_THREAD_TIMEOUT=4"
                                           : "env -u OPENBLAS_THREAD_TIMEOUT") +
                       " OPENBLAS_NUM_THREADS=" + std::to_string(blas) + " ";
            };
            std::vector<Run> runs;
            auto add = [&](const std::string& key, const std::string& side,
                           const std::string& variant, const std::string& cmd) {
                Run r;
                r.c = {key, side, what, variant, cmd, {}};
                runs.push_back(r);
                return &runs.back();
            };
            add("tapegrad", "tapegrad", "tg::set_num_threads(" + t + ")",
                env(T, false) + dir + "/bench_mlp_side_tg --threads " + t + common);
            if (step)
                add("gemm", "bare GEMM", "OpenBLAS " + t,
                    env(T, false) + dir + "/bench_mlp_side_gemm --threads " + t + common);
            if (T > 1 && !seed) {  // the same with OpenBLAS's idle threads sleeping at once
                add("tapegrad timeout", "tapegrad",
                    "tg::set_num_threads(" + t + "), OPENBLAS_THREAD_TIMEOUT=4",
                    env(T, true) + dir + "/bench_mlp_side_tg --threads " + t + common);
                if (step)
                    add("gemm timeout", "bare GEMM",
                        "OpenBLAS " + t + ", OPENBLAS_THREAD_TIMEOUT=4",
                        env(T, true) + dir + "/bench_mlp_side_gemm --threads " + t + common);
            }
            for (int q = 0; q < (seed ? 0 : T > 1 ? 2 : 1); ++q)
                for (int tt = 1; tt <= T; ++tt)
                    for (int bb = 1; bb <= T; ++bb) {
                        const std::string v = "intra-op " + std::to_string(tt) + " x OpenBLAS " +
                                              std::to_string(bb) +
                                              (q ? ", OPENBLAS_THREAD_TIMEOUT=4" : "") +
                                              (tt == T && bb == T && !q ? " (default)" : "");
                        Run* r = add("libtorch " + v, "LibTorch", v,
                                     env(bb, q) + dir + "/bench_mlp_side_torch --threads " +
                                         std::to_string(bb) + " --torch-threads " +
                                         std::to_string(tt) + common);
                        r->torch_threads = tt, r->blas_threads = bb, r->timeout = q;
                    }
            if (step && T > 1 && !seed)
                add("mixed", "tapegrad after a LibTorch step", "one process, LibTorch default",
                    env(T, false) + dir + "/bench_mlp_side_mixed --threads " + t +
                        " --torch-threads " + t + common);
            std::vector<Config*> configs;
            for (Run& r : runs)
                configs.push_back(&r.c);
            Config pk = peak_config(T, dir);
            if (step)
                configs.push_back(&pk);
            run_rounds(configs, rounds, what + " threads " + t, field, 1, unit.c_str());
            MlpSpec spec;
            if (seed) {  // the Neanderthal article's network (bench_mlp_side.cpp's run_step)
                spec.batch = spec.in = 10000;
                spec.widths = {5000, 1000, 10};
            }
            const double flops = mlp_gemm_flops(spec);
            auto of_peak = [&](const Config& c) {
                return fmt(fraction_of_peak(flops, c.med(field), pk), 3);
            };
            const Run *best = nullptr, *dflt = nullptr, *tg = nullptr, *gemm = nullptr,
                      *mixed = nullptr;
            for (const Run& r : runs) {
                if (r.c.side == "LibTorch" && (!best || r.c.med(field) < best->c.med(field)))
                    best = &r;
                if (r.c.side == "LibTorch" && r.torch_threads == T && r.blas_threads == T &&
                    !r.timeout)
                    dflt = &r;
                if (r.c.key == "tapegrad")
                    tg = &r;
                if (r.c.key == "gemm")
                    gemm = &r;
                if (r.c.key == "mixed")
                    mixed = &r;
            }
            const double tgm = tg->c.med(field);
            if (seed) {  // tapegrad and the bare GEMMs only
                for (const Run* r : {tg, gemm}) {
                    table.add({t, r->c.side, r->c.variant, fmt(r->c.med(field), 1),
                               fmt(min_of(r->c.pooled(field)), 1), r->c.round_medians(field),
                               fmt(r->c.med(field) / gemm->c.med(field), 3), of_peak(r->c), "",
                               r->c.get("loss")});
                    all.add({t, r->c.side, r->c.variant, fmt(r->c.med(field), 4),
                             fmt(min_of(r->c.pooled(field)), 4), r->c.round_medians(field),
                             r->c.get("loss")});
                }
                plot.add({t + " threads", fmt(tgm, 3), fmt(gemm->c.med(field), 3)});
                bars += "- " + t + " threads: tapegrad " + fmt(tgm, 0) + " ms per step, " +
                        fmt(tgm / gemm->c.med(field), 3) +
                        "x its bare GEMMs. The Neanderthal article reports 7.5 s per step for "
                        "this network on an i7-4790k (4 cores, AVX2). SGEMM peak " +
                        fmt(pk.med("gflops"), 1) + " GFLOP/s: tapegrad's step " + of_peak(tg->c) +
                        " of it.\n";
                continue;
            }
            const double tb = best->c.med(field);
            for (const Run& r : runs) {
                if (&r == mixed)
                    continue;
                const Config& c = r.c;
                const double m = c.med(field);
                std::vector<std::string> row = {t,
                                                c.side + (&r == best ? " **best**" : ""),
                                                c.variant,
                                                fmt(m, step ? 2 : 3),
                                                fmt(min_of(c.pooled(field)), step ? 2 : 3),
                                                c.round_medians(field)};
                if (step) {
                    row.push_back(fmt(m / gemm->c.med(field), 3));
                    row.push_back(of_peak(c));
                }
                row.push_back(&r == best ? "1" : fmt(m / tb, 3));
                row.push_back(c.get("loss"));
                table.add(row);
                all.add({t, c.side, c.variant, fmt(m, 4), fmt(min_of(c.pooled(field)), 4),
                         c.round_medians(field), c.get("loss")});
            }
            std::vector<std::string> prow = {t + (T == 1 ? " thread" : " threads"), fmt(tgm, 3)};
            if (step)
                prow.push_back(fmt(gemm->c.med(field), 3));
            prow.push_back(fmt(tb, 3));
            prow.push_back(fmt(dflt->c.med(field), 3));
            plot.add(prow);
            if (step) {
                const double rg = tgm / gemm->c.med(field), rt = tgm / tb;
                bars += "- " + t + " thread(s): tapegrad " + fmt(tgm, 2) + " ms = **" + fmt(rg, 3) +
                        "x bare GEMM** (bar <= 1.05: " + pass(rg <= 1.05) + "), **" + fmt(rt, 3) +
                        "x LibTorch at its best** (" + best->c.variant + ", " + fmt(tb, 2) + " ms" +
                        (T == 2 ? "; bar <= 0.85: " + pass(rt <= 0.85) : "") + "); LibTorch's " +
                        "default " + fmt(dflt->c.med(field), 2) + " ms\n";
                bars += "- " + t + " thread(s): SGEMM peak " + fmt(pk.med("gflops"), 1) +
                        " GFLOP/s (bench_peak): tapegrad's step " + of_peak(tg->c) +
                        " of it, its bare GEMMs " + of_peak(gemm->c) + ", LibTorch best's " +
                        of_peak(best->c) + "\n";
            } else {
                const double rt = tgm / tb, bar = T == 1 ? 1.0 : 0.8;
                bars += "- " + t + " thread(s): tapegrad " + fmt(tgm, 3) + " s per epoch = **" +
                        fmt(rt, 3) + "x LibTorch at its best** (" + best->c.variant + ", " +
                        fmt(tb, 3) + " s; bar <= " + fmt(bar, 1) + ": " + pass(rt <= bar) +
                        "); LibTorch's default " + fmt(dflt->c.med(field), 3) + " s\n";
            }
            if (mixed) {
                const double a = mixed->c.med("step_ms"), g = mixed->c.med("gemm_ms");
                mixed_md += "| " + t + " | " + fmt(tgm, 2) + " | " + fmt(gemm->c.med(field), 2) +
                            " | " + fmt(tgm / gemm->c.med(field), 3) + " | " + fmt(a, 2) + " | " +
                            fmt(g, 2) + " | " + fmt(a / g, 3) + " | " +
                            fmt(mixed->c.med("torch_ms"), 2) + " |\n";
                all.add({t, mixed->c.side, "tapegrad, " + mixed->c.variant, fmt(a, 4),
                         fmt(min_of(mixed->c.pooled("step_ms")), 4), mixed->c.round_medians(),
                         mixed->c.get("loss")});
                all.add({t, mixed->c.side, "bare GEMM, " + mixed->c.variant, fmt(g, 4),
                         fmt(min_of(mixed->c.pooled("gemm_ms")), 4),
                         mixed->c.round_medians("gemm_ms"), ""});
            }
        }

        std::string md = seed   ? "# bench_mlp --seed-size: the Neanderthal article's network, "
                                  "each implementation in its own process\n\n"
                         : step ? "# bench_mlp --what step: the MLP training step, each "
                                  "implementation in its own process\n\n"
                                : "# bench_mlp --what epoch: one Fashion-MNIST epoch, each "
                                  "implementation in its own process\n\n";
        if (!tag.empty())
            md += "- host tag: `" + tag + "`\n";
        md += machine_markdown();
        md += seed ? "- 10000 x 10000 input, 10000->5000->1000->10 (tanh, sigmoid, sigmoid), MSE, "
                     "SGD; " +
                         warmup + " warm-up + " + reps + " timed steps per process\n"
              : step ? "- 2048 x 2048 input, 2048->1024 tanh ->256 sigmoid ->10 sigmoid, MSE vs a "
                       "uniform target, SGD(lr 0.05) step + zero_grad, float32; " +
                           warmup + " warm-up + " + reps + " timed steps per process\n"
                     : "- 60,000 training images of Debian's dataset-fashion-mnist (the same bytes "
                       "and normalisation in both), MLP 784-256-128-10 ReLU, Adam(1e-3), batch 128 "
                       "(469 batches, in order), cross_entropy, loss.item() per batch; " +
                           warmup + " warm-up batches, then " + reps + " epoch(s) per process\n";
        md += "- each configuration a process of its own, " + std::to_string(rounds) +
              " rounds, order rotating each round; medians over every timed " +
              (step ? std::string("step") : std::string("epoch")) +
              " of every round; LibTorch swept over intra-op x OpenBLAS threads (with "
              "OPENBLAS_THREAD_TIMEOUT=4 too), its fastest configuration is the peer\n";
        md += "- wall " + fmt(now_s() - wall0, 0) + " s, host steal " +
              std::to_string(host_steal_jiffies() - steal0) + " jiffies\n\n";
        md += table.markdown() + "\n## Bars\n\n" + bars;
        if (!mixed_md.empty())
            md +=
                "\n## Next to another library's thread pools\n\nOne process runs a LibTorch "
                "step (default threads) right before each tapegrad step and before each "
                "bare-GEMM step. LibTorch's OpenMP workers spin after their step and OpenBLAS's "
                "idle threads spin on sched_yield, taking cores from whatever runs next; "
                "tapegrad's own workers sleep between kernels. If its ratio to the bare GEMMs "
                "stays what it is alone, tapegrad's pool adds nothing to that cost.\n\n"
                "| threads | tapegrad alone, ms | bare GEMM alone, ms | ratio | tapegrad after "
                "LibTorch, ms | bare GEMM after LibTorch, ms | ratio | LibTorch step, ms |\n"
                "|---|---|---|---|---|---|---|---|\n" +
                mixed_md;
        std::printf("%s", md.c_str());
        write_file(arg_value(argc, argv, "--md", ""), md);
        write_file(arg_value(argc, argv, "--csv", ""), all.csv());
        write_file(arg_value(argc, argv, "--plot", ""), plot.csv());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_mlp: %s\n", e.what());
        return 1;
    }
    return 0;
}
