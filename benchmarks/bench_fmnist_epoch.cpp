/// bench_fmnist_epoch: one Fashion-MNIST epoch (784-256-128-10 ReLU, Adam, batch 128) in tapegrad
/// vs LibTorch, interleaved epoch by epoch after a 20-batch warm-up, medians over --reps epochs.
/// Needs the dataset (tg::data::FashionMNIST). Options: --threads T (OpenBLAS and LibTorch
/// threads), --reps N (default 10), --csv FILE, --md FILE.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_mlp.hpp"

using namespace bench;

namespace {

int run_fmnist(const MlpOptions& o) {
    std::string md = mlp_header(
        "bench_fmnist_epoch: one Fashion-MNIST epoch, tapegrad vs LibTorch", o,
        "- 60,000 training images (tg::data::FashionMNIST, normalised; LibTorch gets copies of the "
        "same tensors), MLP 784-256-128-10 ReLU, Adam(1e-3), batch 128 (469 batches, in order), "
        "cross_entropy, loss.item() per batch in both\n");
    FmnistData d = tg_load_fmnist();
    const int64_t batch = 128;
    auto tgr = make_tg_fmnist(d, batch);
    auto tr = make_torch_fmnist(d, batch);
    tgr->epoch(20);  // warm-up
    tr->epoch(20);
    int reps = std::max(1, o.reps);
    std::vector<double> tg_s, t_s;
    double tg_loss = 0, t_loss = 0;
    for (int r = 0; r < reps; ++r) {
        if (r % 2 == 0) {
            auto a = tgr->epoch();
            auto b = tr->epoch();
            tg_s.push_back(a.seconds), t_s.push_back(b.seconds);
            tg_loss = a.mean_loss, t_loss = b.mean_loss;
        } else {
            auto b = tr->epoch();
            auto a = tgr->epoch();
            tg_s.push_back(a.seconds), t_s.push_back(b.seconds);
            tg_loss = a.mean_loss, t_loss = b.mean_loss;
        }
        std::fprintf(stderr, "epoch rep %d: tapegrad %.2f s, LibTorch %.2f s\n", r, tg_s.back(),
                     t_s.back());
    }
    double ratio = median(tg_s) / median(t_s);
    Table table;
    table.header = {"threads",
                    "impl",
                    "epoch_s_median",
                    "epoch_s_min",
                    "images_per_s",
                    "last_epoch_mean_loss",
                    "ratio_tg_over_libtorch",
                    "bar_le_0.8"};
    table.add({std::to_string(o.threads), "tapegrad", fmt(median(tg_s), 3), fmt(min_of(tg_s), 3),
               fmt(double(d.n) / median(tg_s), 0), fmt(tg_loss, 4), fmt(ratio, 3),
               ratio <= 0.8 ? "PASS" : "FAIL"});
    table.add({std::to_string(o.threads), "libtorch", fmt(median(t_s), 3), fmt(min_of(t_s), 3),
               fmt(double(d.n) / median(t_s), 0), fmt(t_loss, 4), "", ""});
    md += "- " + std::to_string(reps) +
          " epochs per library after a 20-batch warm-up, "
          "interleaved; the models keep training across epochs\n\n" +
          table.markdown();
    md += std::string("\nBar tapegrad epoch <= 0.8 x LibTorch: **") +
          (ratio <= 0.8 ? "PASS" : "FAIL") + "**\n";
    std::cout << md;
    write_file(o.csv, table.csv());
    write_file(o.md, md);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const MlpOptions o = parse_mlp_options(argc, argv);
    try {
        return run_fmnist(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_fmnist_epoch: %s\n", e.what());
        return 1;
    }
}
