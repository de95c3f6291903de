/// bench_autograd: autograd overhead per op, tapegrad vs LibTorch, each in a process of its own.
///
/// A chain of 10,000 ops (y = y + a, y = y * b, y = tanh(y), repeated) on 1- and 16-element
/// float tensors; a and b are constants or leaves that require grad. For each configuration and
/// each of `--rounds` rounds (the side that goes first alternates), one process per library
/// (bench_autograd_side_tg, bench_autograd_side_torch: bench_autograd_side.cpp) runs 3 warm-up
/// chains and then `--reps` timed chains; the median per phase over every timed chain: forward
/// with recording, backward (y.sum().backward() and freeing the graph), and forward under
/// NoGradGuard.
/// Bar: tapegrad fwd+bwd per op <= 1/8 of LibTorch's.
///
/// Usage: bench_autograd [--rounds 3] [--reps 10] [--warmup 3] [--ops 10000] [--threads 1]
///                       [--csv FILE] [--md FILE]
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>

#include "bench_autograd.hpp"
#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "bench_env.hpp"

using namespace bench;

namespace {

/// One side's timed chains, pooled over its processes.
struct Phase {
    std::vector<double> fwd, bwd, nograd, total;
    double checksum = 0;
    void add(const KV& kv) {
        auto f = parse_list(kv.at("fwd_s")), b = parse_list(kv.at("bwd_s")),
             n = parse_list(kv.at("nograd_s"));
        fwd.insert(fwd.end(), f.begin(), f.end());
        bwd.insert(bwd.end(), b.begin(), b.end());
        nograd.insert(nograd.end(), n.begin(), n.end());
        for (size_t i = 0; i < f.size() && i < b.size(); ++i)
            total.push_back(f[i] + b[i]);
        checksum = std::stod(kv.at("checksum"));
    }
};

}  // namespace

int main(int argc, char** argv) try {
    const int rounds = std::stoi(arg_value(argc, argv, "--rounds", "3"));
    const std::string reps = arg_value(argc, argv, "--reps", "10");
    const std::string warmup = arg_value(argc, argv, "--warmup", "3");
    const int64_t ops = std::stoll(arg_value(argc, argv, "--ops", "10000"));
    const std::string threads = arg_value(argc, argv, "--threads", "1");
    const std::string csv_path = arg_value(argc, argv, "--csv", "");
    const std::string md_path = arg_value(argc, argv, "--md", "");
    const std::string common = " --ops " + std::to_string(ops) + " --threads " + threads +
                               " --warmup " + warmup + " --reps " + reps,
                      dir = self_dir(), env = "env OPENBLAS_NUM_THREADS=" + threads + " ";
    std::string torch_desc;
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
            Phase tp, gp;
            const std::string args =
                " --elements " + std::to_string(n) + " --leaves " + (leaves ? "1" : "0") + common;
            for (int r = 0; r < rounds; ++r)
                for (int k = 0; k < 2; ++k) {
                    if ((k + r) % 2 == 0) {
                        KV kv = run_child(env + dir + "/bench_autograd_side_torch" + args);
                        tp.add(kv);
                        torch_desc = kv["setup"];  // the child wrote '_' for spaces
                        for (char& ch : torch_desc)
                            ch = ch == '_' ? ' ' : ch;
                    } else {
                        gp.add(run_child(env + dir + "/bench_autograd_side_tg" + args));
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
            double ratio = median(gp.total) / median(tp.total);
            bool pass = ratio <= 0.125;
            all_pass = all_pass && pass;
            row("tapegrad", gp, fmt(ratio, 4), pass ? "PASS" : "FAIL");
            if (std::abs(gp.checksum - tp.checksum) > 1e-3 * (1 + std::abs(tp.checksum)))
                std::fprintf(stderr,
                             "WARNING: gradient checksums differ: tapegrad %.6f, "
                             "LibTorch %.6f (n=%lld)\n",
                             gp.checksum, tp.checksum, (long long)n);
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
    md += "- chain of " + std::to_string(ops) +
          " ops (add, mul, tanh); each library in a process " +
          "of its own per configuration and round, " + std::to_string(rounds) + " rounds (the " +
          "side going first alternates) of " + warmup + " warm-up + " + reps +
          " timed chains; medians over every timed chain\n";
    md += "- wall " + fmt(wall, 1) + " s, host steal during the run " + std::to_string(steal) +
          " jiffies\n\n";
    md += table.markdown();
    md += std::string("\nBar: tapegrad fwd+bwd per op <= 1/8 of LibTorch's: **") +
          (all_pass ? "PASS" : "FAIL") + "**\n";
    write_file(csv_path, csv);
    write_file(md_path, md);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_autograd: %s\n", e.what());
    return 1;
}
