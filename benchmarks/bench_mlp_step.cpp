/// bench_mlp_step: the MLP training step in tapegrad vs LibTorch vs the bare GEMMs.
///
///   (default)    2048x2048 input, 2048->1024 tanh ->256 sigmoid ->10 sigmoid, MSE,
///                SGD(0.05) + zero_grad; tapegrad, LibTorch and GEMM-only interleaved
///                rep by rep (the order rotates), --warmup 2 then --reps 10, medians.
///   --seed-size  the network of the Neanderthal article (10000x10000 input,
///   10000->5000->1000->10),
///                tapegrad and GEMM-only (--with-torch adds LibTorch), --warmup 1, --reps 3.
/// Options: --threads T (OpenBLAS and LibTorch threads), --csv FILE, --md FILE, --no-tg; for
/// profiling runs --no-torch / --no-gemm leave out those implementations.
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_mlp.hpp"

using namespace bench;

namespace {

/// Times steppers interleaved rep by rep (rotating which goes first) and returns per-impl samples.
std::vector<std::vector<StepTimes>> interleave(std::vector<Stepper*> impls, int warmup, int reps,
                                               std::vector<double>& first_loss) {
    std::vector<std::vector<StepTimes>> samples(impls.size());
    first_loss.assign(impls.size(), 0);
    for (int w = 0; w < warmup; ++w)
        for (size_t i = 0; i < impls.size(); ++i) {
            auto t = impls[i]->step();
            if (w == 0)
                first_loss[i] = t.loss;
        }
    for (int r = 0; r < reps; ++r)
        for (size_t k = 0; k < impls.size(); ++k) {
            size_t i = (k + size_t(r)) % impls.size();
            samples[i].push_back(impls[i]->step());
            std::fprintf(stderr, ".");
        }
    std::fprintf(stderr, "\n");
    return samples;
}

double med(const std::vector<StepTimes>& v, const std::function<double(const StepTimes&)>& f) {
    std::vector<double> x;
    for (auto& t : v)
        x.push_back(f(t));
    return median(x);
}

/// The step benchmark (default mode and --seed-size).
int run_steps(const MlpOptions& o, const MlpSpec& s, const std::string& title,
              const std::string& extra, const std::string& reference_md) {
    std::string md = mlp_header(title, o, extra);
    long long steal0 = host_steal_jiffies();
    double wall0 = now_s();
    std::vector<std::string> names;
    std::vector<std::unique_ptr<Stepper>> owned;
    {
        MlpInit init = make_mlp_init(s, 42);
        if (o.run_tg) {
            owned.push_back(make_tg_mlp(s, init));
            names.push_back("tapegrad");
        }
        if (o.with_torch) {
            owned.push_back(make_torch_mlp(s, init));
            names.push_back("libtorch");
        }
        if (o.with_gemm) {
            owned.push_back(make_gemm_mlp(s, init));
            names.push_back("gemm_only");
        }
    }
    std::vector<Stepper*> impls;
    for (auto& p : owned)
        impls.push_back(p.get());
    std::vector<double> first_loss;
    auto samples = interleave(impls, o.warmup, o.reps, first_loss);

    std::map<std::string, double> step_ms;
    for (size_t i = 0; i < impls.size(); ++i)
        step_ms[names[i]] = 1e3 * med(samples[i], [](const StepTimes& t) { return t.total(); });
    double flops = mlp_gemm_flops(s);
    Table table;
    table.header = {
        "threads",   "impl",        "fwd_ms",       "bwd_ms",        "update_ms",
        "step_ms",   "min_step_ms", "gflops_equiv", "ratio_vs_gemm", "ratio_vs_libtorch",
        "first_loss"};
    for (size_t i = 0; i < impls.size(); ++i) {
        auto& v = samples[i];
        std::vector<double> tot;
        for (auto& t : v)
            tot.push_back(1e3 * t.total());
        double st = step_ms[names[i]];
        std::string vs_torch = step_ms.count("libtorch") && names[i] != "libtorch"
                                   ? fmt(st / step_ms["libtorch"], 3)
                                   : "";
        table.add({std::to_string(o.threads), names[i],
                   fmt(1e3 * med(v, [](const StepTimes& t) { return t.fwd; }), 2),
                   fmt(1e3 * med(v, [](const StepTimes& t) { return t.bwd; }), 2),
                   fmt(1e3 * med(v, [](const StepTimes& t) { return t.upd; }), 2), fmt(st, 2),
                   fmt(min_of(tot), 2), fmt(flops / (st * 1e-3) * 1e-9, 1),
                   step_ms.count("gemm_only") ? fmt(st / step_ms["gemm_only"], 3) : "", vs_torch,
                   names[i] == "gemm_only" ? "" : fmt(first_loss[i], 6)});
    }
    double wall = now_s() - wall0;
    md += "- model: input " + std::to_string(s.in) + " features x batch " +
          std::to_string(s.batch) + ", GEMM-only FLOPs per step " + fmt(flops * 1e-9, 2) +
          " GFLOP; " + std::to_string(o.warmup) + " warm-up + " + std::to_string(o.reps) +
          " reps interleaved, medians\n";
    md += "- wall " + fmt(wall, 1) + " s, host steal " +
          std::to_string(host_steal_jiffies() - steal0) + " jiffies\n\n";
    md += table.markdown();
    md += reference_md;
    if (o.run_tg && o.with_gemm && reference_md.empty()) {
        double r_gemm = step_ms["tapegrad"] / step_ms["gemm_only"];
        md += "\nBar tapegrad <= 1.08 x GEMM-only (" + std::to_string(o.threads) +
              " thread(s)): " + fmt(r_gemm, 3) + " **" + (r_gemm <= 1.08 ? "PASS" : "FAIL") +
              "**\n";
        if (o.threads == 2 && o.with_torch) {
            double r_t = step_ms["tapegrad"] / step_ms["libtorch"];
            md += "\nBar tapegrad <= 0.85 x LibTorch (2 threads): " + fmt(r_t, 3) + " **" +
                  (r_t <= 0.85 ? "PASS" : "FAIL") + "**\n";
        }
    }
    std::string csv = table.csv();
    std::cout << md;
    write_file(o.csv, csv);
    write_file(o.md, md);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    MlpOptions o = parse_mlp_options(argc, argv);
    try {
        if (has_flag(argc, argv, "--seed-size")) {
            MlpSpec s;
            s.batch = 10000;
            s.in = 10000;
            s.widths = {5000, 1000, 10};
            o.with_torch = has_flag(argc, argv, "--with-torch");
            o.warmup = std::stoi(arg_value(argc, argv, "--warmup", "1"));
            o.reps = std::stoi(arg_value(argc, argv, "--reps", "3"));
            return run_steps(
                o, s, "bench_mlp_step --seed-size: the network of the Neanderthal article",
                "- 10000 x 10000 input, 10000->5000->1000->10 (tanh, sigmoid, sigmoid), MSE, SGD\n",
                "\nThe Neanderthal article reports **7.5 s** per step for this network on an "
                "i7-4790k "
                "CPU (4 cores, AVX2). Compare with the step_ms column (ms).\n");
        }
        return run_steps(o, MlpSpec{},
                         "bench_mlp_step: MLP training step, tapegrad vs LibTorch vs GEMM-only",
                         "- 2048 x 2048 input, 2048->1024 tanh ->256 sigmoid ->10 sigmoid, MSE vs "
                         "a uniform target, SGD(lr 0.05) step + zero_grad, float32\n",
                         "");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_mlp_step: %s\n", e.what());
        return 1;
    }
}
