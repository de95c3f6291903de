/// bench_cnn_epoch: the driver of the CNN epoch benchmark (bench_cnn.hpp). For each thread
/// budget (--threads-list, default "2") it runs, for --rounds rounds (default 2) with the order
/// rotating each round, one process per configuration, each --warmup batches then --reps epochs
/// of --batches batches (defaults 10, 1, 469):
///   bench_cnn_epoch_tg     OPENBLAS_NUM_THREADS = the budget
///   bench_cnn_epoch_torch  torch::set_num_threads 1..budget x OPENBLAS_NUM_THREADS 1..budget x
///                          oneDNN on/off
///   bench_peak             the host's SGEMM peak on the budget's threads (the epoch's products,
///                          cnn::step_flops_per_image() per image, as a fraction of it)
/// and compares tapegrad with LibTorch's fastest configuration of the budget (bar: <= 0.8).
/// Writes --csv FILE, --md FILE and --plot FILE (one row per thread budget, for
/// scripts/plot_bars.gp); --tag NAME names the host.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench_cnn.hpp"
#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "bench_env.hpp"

using namespace bench;

int main(int argc, char** argv) {
    try {
        const int rounds = std::stoi(arg_value(argc, argv, "--rounds", "2"));
        const std::string batches = arg_value(argc, argv, "--batches", "469");
        const std::string reps = arg_value(argc, argv, "--reps", "1");
        const std::string warmup = arg_value(argc, argv, "--warmup", "10");
        const std::vector<double> budgets =
            parse_list(arg_value(argc, argv, "--threads-list", "2"));
        const std::string csv_path = arg_value(argc, argv, "--csv", "");
        const std::string md_path = arg_value(argc, argv, "--md", "");
        const std::string tag = arg_value(argc, argv, "--tag", "");
        const std::string dir = self_dir();
        const std::string common =
            " --batches " + batches + " --reps " + reps + " --warmup " + warmup;
        const long long steal0 = host_steal_jiffies();
        const double wall0 = now_s();

        Table table;
        table.header = {"threads",          "side",
                        "config",           "epoch_s",
                        "images_per_s",     "round_medians_s",
                        "last_loss",        "gflops_equiv",
                        "fraction_of_peak", "ratio_vs_libtorch_best"};
        Table plot;  // --plot: one row per thread budget (scripts/plot_bars.gp)
        plot.header = {"threads", "tapegrad", "LibTorch best"};
        Table csv;
        csv.header = {"threads",
                      "side",
                      "config",
                      "epoch_s",
                      "min_s",
                      "round_medians_s",
                      "last_loss",
                      "gflops_equiv",
                      "fraction_of_peak",
                      "ratio_vs_libtorch_best"};
        std::string summary, torch_version, profiles;
        const double images = std::stod(batches) * 128;
        for (double bd : budgets) {
            const int T = int(bd);
            const std::string t = std::to_string(T), env = "env OPENBLAS_NUM_THREADS=" + t + " ";
            std::vector<Config> cs;
            auto add = [&](std::string side, std::string variant, std::string cmd) {
                cs.push_back({side + " " + variant, side, "epoch", variant, cmd, {}});
            };
            add("tapegrad", "blas_threads=" + t,
                env + dir + "/bench_cnn_epoch_tg --threads " + t + common);
            for (int tt = 1; tt <= T; ++tt)  // LibTorch's intra-op x OpenBLAS threads
                for (int bb = 1; bb <= T; ++bb)
                    for (int mk : {1, 0})
                        add("libtorch",
                            "torch_threads=" + std::to_string(tt) + " blas_threads=" +
                                std::to_string(bb) + (mk ? " mkldnn=on" : " mkldnn=off"),
                            "env OPENBLAS_NUM_THREADS=" + std::to_string(bb) + " " + dir +
                                "/bench_cnn_epoch_torch --threads " + std::to_string(bb) +
                                " --torch-threads " + std::to_string(tt) + " --mkldnn " +
                                std::to_string(mk) + common);
            cs.push_back(peak_config(T, dir));
            run_rounds(cs, rounds, "threads " + t, "epoch_ms", 1e-3, "s");
            const Config pk = cs.back();
            cs.pop_back();
            const double flops = images * cnn::step_flops_per_image(), peak = pk.med("gflops");
            auto secs = [](const Config& c) { return c.med("epoch_ms") / 1e3; };
            auto gflops = [&](const Config& c) { return flops / secs(c) * 1e-9; };
            auto round_meds = [](const Config& c) {
                std::string s;
                for (auto& r : c.rounds)
                    s +=
                        (s.empty() ? "" : ";") + fmt(median(parse_list(r.at("epoch_ms"))) / 1e3, 2);
                return s;
            };
            const Config* best = nullptr;
            const Config* tgc = nullptr;
            for (auto& c : cs) {
                if (c.side == "libtorch" && (!best || secs(c) < secs(*best)))
                    best = &c;
                if (c.side == "tapegrad")
                    tgc = &c;
                if (c.side == "libtorch")
                    torch_version = c.get("torch_version");
            }
            for (auto& c : cs) {
                const std::string ratio = &c == best ? "1 (best)" : fmt(secs(c) / secs(*best), 3);
                table.add({t, c.side, c.variant, fmt(secs(c), 2), fmt(images / secs(c), 0),
                           round_meds(c), c.get("loss"), fmt(gflops(c), 1),
                           fmt(gflops(c) / peak, 3), ratio});
                csv.add({t, c.side, c.variant, fmt(secs(c), 3),
                         fmt(min_of(c.pooled("epoch_ms")) / 1e3, 3), round_meds(c), c.get("loss"),
                         fmt(gflops(c), 2), fmt(gflops(c) / peak, 4),
                         fmt(secs(c) / secs(*best), 4)});
            }
            plot.add(
                {t + (T == 1 ? " thread" : " threads"), fmt(secs(*tgc), 3), fmt(secs(*best), 3)});
            profiles +=
                "\n## Where tapegrad's step goes (" + t +
                " thread(s), tg::autograd::profiler over " + tgc->get("profile_steps") +
                " batches after the timed epoch)\n\n" +
                profile_table(tgc->get("profile"), std::stod(tgc->get("profile_steps"))).markdown();
            const double ratio = secs(*tgc) / secs(*best);
            summary += "- " + t + " thread(s): tapegrad " + fmt(secs(*tgc), 2) +
                       " s per epoch, LibTorch best " + fmt(secs(*best), 2) + " s (" +
                       best->variant + "): tapegrad/LibTorch = **" + fmt(ratio, 3) +
                       "** (bar <= 0.8: " + (ratio <= 0.8 ? "PASS" : "FAIL") + ")\n";
            summary += "- " + t + " thread(s): SGEMM peak " + fmt(peak, 1) +
                       " GFLOP/s (bench_peak); tapegrad's epoch **" + fmt(gflops(*tgc) / peak, 3) +
                       "** of it (bar >= 0.55 at 2 threads, 0.50 at 1), LibTorch best's " +
                       fmt(gflops(*best) / peak, 3) + "\n";
        }
        std::string md =
            "# bench_cnn_epoch: the example CNN's training epoch, tapegrad vs LibTorch\n\n";
        if (!tag.empty())
            md += "- host tag: `" + tag + "`\n";
        md += machine_markdown();
        md += "- LibTorch " + torch_version +
              "; each configuration a process of its own per round (order rotating), " +
              std::to_string(rounds) + " rounds, " + warmup + " warm-up batches then " + reps +
              " epoch(s) of " + batches + " batches of 128 per process\n";
        md +=
            "- network (examples/fashion_mnist_cnn.cpp): conv 3x3 1->32 pad 1, BatchNorm2d, "
            "ReLU, MaxPool2d(2), conv 3x3 32->64 pad 1, BatchNorm2d, ReLU, MaxPool2d(2), "
            "Flatten, Dropout(0.25), Linear(3136,128), ReLU, Linear(128,10); Adam(1e-3), "
            "cross_entropy; Fashion-MNIST training images in file order, the same normalised "
            "floats on both sides; per step: forward, loss, zero_grad, backward, step, "
            "loss.item() and the correct count\n";
        md += "- wall " + fmt(now_s() - wall0, 1) + " s, host steal " +
              std::to_string(host_steal_jiffies() - steal0) + " jiffies\n\n";
        md += table.markdown() +
              "\n`epoch_s`: median over the rounds; `last_loss`: the mean "
              "training loss of the first round's timed epoch (both sides should agree in the "
              "first digits).\n\n## Summary\n\n" +
              summary + profiles;
        std::cout << md;
        if (!csv_path.empty())
            write_file(csv_path, csv.csv());
        if (!md_path.empty())
            write_file(md_path, md);
        write_file(arg_value(argc, argv, "--plot", ""), plot.csv());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_cnn_epoch: %s\n", e.what());
        return 1;
    }
    return 0;
}
