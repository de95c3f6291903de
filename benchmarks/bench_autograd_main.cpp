/// bench_autograd: autograd overhead per op, tapegrad vs LibTorch in the same process.
///
/// A chain of 10,000 ops (y = y + a, y = y * b, y = tanh(y), repeated) on 1- and 16-element
/// float tensors; a and b are constants or leaves that require grad. For each configuration:
/// 3 warm-up chains per library, then `--reps` chains interleaved rep by rep (the library that
/// goes first alternates), and the median per phase: forward with recording, backward
/// (y.sum().backward() and freeing the graph), and forward under NoGradGuard.
/// Bar: tapegrad fwd+bwd per op <= 1/8 of LibTorch's.
///
/// Usage: bench_autograd [--reps 25] [--warmup 3] [--ops 10000] [--threads 1]
///                       [--csv FILE] [--md FILE] [--no-tg]
#include <cmath>
#include <cstdio>
#include <iostream>

#include "bench_autograd.hpp"
#include "bench_common.hpp"
#include "bench_env.hpp"

using namespace bench;

namespace {

struct Phase {
    std::vector<double> fwd, bwd, nograd, total;
    double checksum = 0;
    void add(const ChainTimes& t) {
        fwd.push_back(t.fwd);
        bwd.push_back(t.bwd);
        nograd.push_back(t.fwd_nograd);
        total.push_back(t.fwd + t.bwd);
        checksum = t.checksum;
    }
};

}  // namespace

int main(int argc, char** argv) {
    int reps = std::stoi(arg_value(argc, argv, "--reps", "25"));
    int warmup = std::stoi(arg_value(argc, argv, "--warmup", "3"));
    int64_t ops = std::stoll(arg_value(argc, argv, "--ops", "10000"));
    int threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
    bool run_tg = !has_flag(argc, argv, "--no-tg");
    std::string csv_path = arg_value(argc, argv, "--csv", "");
    std::string md_path = arg_value(argc, argv, "--md", "");

    openblas_set_num_threads(threads);
    std::string torch_desc = torch_setup(threads);
    long long steal0 = host_steal_jiffies();
    double wall0 = now_s();

    Table table;
    table.header = {"elements",
                    "a_b",
                    "impl",
                    "fwd_ns_per_op",
                    "bwd_ns_per_op",
                    "fwd_bwd_ns_per_op",
                    "fwd_nograd_ns_per_op",
                    "record_overhead_ns_per_op",
                    "ratio_tg_over_torch_fwd_bwd",
                    "bar_le_0.125",
                    "grad_checksum"};
    bool all_pass = true;
    for (int64_t n : {int64_t(1), int64_t(16)}) {
        for (bool leaves : {false, true}) {
            ChainConfig c{n, ops, leaves};
            Phase tp, gp;
            for (int i = 0; i < warmup; ++i) {
                torch_chain(c);
                if (run_tg)
                    tg_chain(c);
            }
            for (int r = 0; r < reps; ++r) {
                if (r % 2 == 0) {
                    tp.add(torch_chain(c));
                    if (run_tg)
                        gp.add(tg_chain(c));
                } else {
                    if (run_tg)
                        gp.add(tg_chain(c));
                    tp.add(torch_chain(c));
                }
            }
            double per = 1e9 / double(ops);
            auto row = [&](const char* impl, const Phase& p, const std::string& ratio,
                           const std::string& pass) {
                double f = median(p.fwd) * per, b = median(p.bwd) * per;
                double fb = median(p.total) * per, ng = median(p.nograd) * per;
                table.add({std::to_string(n), leaves ? "requires_grad" : "const", impl, fmt(f),
                           fmt(b), fmt(fb), fmt(ng), fmt(f - ng), ratio, pass, fmt(p.checksum, 6)});
            };
            row("libtorch", tp, "", "");
            if (run_tg) {
                double ratio = median(gp.total) / median(tp.total);
                bool pass = ratio <= 0.125;
                all_pass = all_pass && pass;
                row("tapegrad", gp, fmt(ratio, 4), pass ? "PASS" : "FAIL");
                if (std::abs(gp.checksum - tp.checksum) > 1e-3 * (1 + std::abs(tp.checksum)))
                    std::fprintf(stderr,
                                 "WARNING: gradient checksums differ: tapegrad %.6f, "
                                 "LibTorch %.6f (n=%lld)\n",
                                 gp.checksum, tp.checksum, (long long)n);
            }
            std::fprintf(stderr, "done n=%lld %s\n", (long long)n,
                         leaves ? "requires_grad" : "const");
        }
    }
    double wall = now_s() - wall0;
    long long steal = host_steal_jiffies() - steal0;

    std::string csv = table.csv();
    std::cout << csv;
    std::string md = "# bench_autograd: autograd overhead per op (tapegrad vs LibTorch)\n\n";
    md += machine_markdown();
    md += "- " + torch_desc + "\n";
    md += "- chain of " + std::to_string(ops) + " ops (add, mul, tanh), " + std::to_string(warmup) +
          " warm-up chains, median of " + std::to_string(reps) +
          " chains per library, interleaved rep by rep\n";
    md += "- wall " + fmt(wall, 1) + " s, host steal during the run " + std::to_string(steal) +
          " jiffies\n\n";
    md += table.markdown();
    if (run_tg)
        md += std::string("\nBar: tapegrad fwd+bwd per op <= 1/8 of LibTorch's: **") +
              (all_pass ? "PASS" : "FAIL") + "**\n";
    write_file(csv_path, csv);
    write_file(md_path, md);
    return 0;
}
