/// bench_mlp_side_{tg,torch,gemm,mixed} [options]: one side of the bench_mlp driver in a process
/// of its own. Compiled once per side (TG_BENCH_SIDE_TG, _TORCH, _GEMM, _MIXED), each linking
/// only that side's translation units, so a LibTorch process never loads tapegrad and the other
/// way round; prints one `result key=value ...` line (bench_driver.hpp reads it).
///
///   --what step    the MLP step of bench_mlp.hpp's MlpSpec: --warmup steps, then --reps timed
///                  steps: result step_ms=..,.. fwd_ms bwd_ms upd_ms loss (the first step's)
///                  (--seed-size: the Neanderthal article's 10000 x 10000 network)
///   --what epoch   one Fashion-MNIST epoch (784-256-128-10, Adam, batch 128) after --warmup
///                  batches, --reps times: result epoch_s=..,.. loss (mean of the last epoch)
///   --threads T        this process's thread count: OpenBLAS's (and tapegrad's, through
///                      tg::set_num_threads)
///   --torch-threads T  LibTorch's intra-op threads (torch and mixed sides)
/// The mixed side (--what step only) links all three and times, in one process, a tapegrad step
/// and a bare-GEMM step each right after a LibTorch step: how tapegrad behaves next to another
/// library's thread pools. result step_ms (tapegrad) gemm_ms torch_ms.
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "bench_cnn.hpp"
#include "bench_common.hpp"
#include "bench_mlp.hpp"

using namespace bench;

namespace {

std::string join_ms(const std::vector<double>& s, double scale = 1e3) {
    std::string out;
    for (double x : s)
        out += (out.empty() ? "" : ",") + fmt(x * scale, 3);
    return out;
}

void set_threads(int threads, int torch_threads) {
#if defined(TG_BENCH_SIDE_TG) || defined(TG_BENCH_SIDE_MIXED)
    set_tg_threads(threads);
#else
    set_blas_threads(threads);
#endif
#if defined(TG_BENCH_SIDE_TORCH) || defined(TG_BENCH_SIDE_MIXED)
    set_torch_threads(torch_threads);
#else
    (void)torch_threads;
#endif
}

#if !defined(TG_BENCH_SIDE_MIXED)
std::unique_ptr<Stepper> make_side(const MlpSpec& s, const MlpInit& init) {
#if defined(TG_BENCH_SIDE_TG)
    return make_tg_mlp(s, init);
#elif defined(TG_BENCH_SIDE_TORCH)
    return make_torch_mlp(s, init);
#else
    return make_gemm_mlp(s, init);
#endif
}
#endif

void run_step(int warmup, int reps, bool seed_size) {
    MlpSpec s;
    if (seed_size) {  // the Neanderthal article's network
        s.batch = s.in = 10000;
        s.widths = {5000, 1000, 10};
    }
    const MlpInit init = make_mlp_init(s, 42);
    std::vector<double> step, fwd, bwd, upd;
    double loss = 0;
#if defined(TG_BENCH_SIDE_MIXED)
    auto tgs = make_tg_mlp(s, init), torch = make_torch_mlp(s, init), gemm = make_gemm_mlp(s, init);
    std::vector<double> gemm_ms, torch_ms;
    for (int r = 0; r < warmup + reps; ++r) {
        const StepTimes a = torch->step();
        const StepTimes t = tgs->step();  // right after LibTorch's step
        const StepTimes b = torch->step();
        const StepTimes g = gemm->step();  // the same, for the bare GEMMs
        if (r == 0)
            loss = t.loss;
        if (r < warmup)
            continue;
        step.push_back(t.total()), fwd.push_back(t.fwd), bwd.push_back(t.bwd);
        upd.push_back(t.upd), gemm_ms.push_back(g.total());
        torch_ms.push_back(a.total()), torch_ms.push_back(b.total());
    }
    std::printf(
        "result step_ms=%s fwd_ms=%s bwd_ms=%s upd_ms=%s gemm_ms=%s torch_ms=%s loss=%.6f\n",
        join_ms(step).c_str(), join_ms(fwd).c_str(), join_ms(bwd).c_str(), join_ms(upd).c_str(),
        join_ms(gemm_ms).c_str(), join_ms(torch_ms).c_str(), loss);
#else
    auto side = make_side(s, init);
    for (int r = 0; r < warmup + reps; ++r) {
        const StepTimes t = side->step();
        if (r == 0)
            loss = t.loss;
        if (r < warmup)
            continue;
        step.push_back(t.total()), fwd.push_back(t.fwd), bwd.push_back(t.bwd);
        upd.push_back(t.upd);
    }
    std::printf("result step_ms=%s fwd_ms=%s bwd_ms=%s upd_ms=%s loss=%.6f\n",
                join_ms(step).c_str(), join_ms(fwd).c_str(), join_ms(bwd).c_str(),
                join_ms(upd).c_str(), loss);
#endif
}

#if defined(TG_BENCH_SIDE_TG) || defined(TG_BENCH_SIDE_TORCH)
void run_epoch(int warmup, int reps, const std::string& data) {
    const cnn::Data d = cnn::load_train(data);  // the same bytes and normalisation on both sides
    FmnistData f;
    f.n = d.n;
    f.images = d.images;  // [n, 1, 28, 28] row-major is [n, 784]
    f.labels = d.labels;
#if defined(TG_BENCH_SIDE_TG)
    auto runner = make_tg_fmnist(f, cnn::kBatch);
#else
    auto runner = make_torch_fmnist(f, cnn::kBatch);
#endif
    runner->epoch(warmup);
    std::vector<double> secs;
    double loss = 0;
    for (int r = 0; r < reps; ++r) {
        const EpochResult e = runner->epoch();
        secs.push_back(e.seconds);
        loss = e.mean_loss;
    }
    std::printf("result epoch_s=%s loss=%.6f\n", join_ms(secs, 1).c_str(), loss);
}
#endif

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string what = arg_value(argc, argv, "--what", "step");
        const int threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
        set_threads(threads, std::stoi(arg_value(argc, argv, "--torch-threads", "1")));
        const int reps = std::stoi(arg_value(argc, argv, "--reps", what == "step" ? "10" : "1"));
        const int warmup =
            std::stoi(arg_value(argc, argv, "--warmup", what == "step" ? "2" : "20"));
        if (what == "step") {
            run_step(warmup, reps, has_flag(argc, argv, "--seed-size"));
#if defined(TG_BENCH_SIDE_TG) || defined(TG_BENCH_SIDE_TORCH)
        } else if (what == "epoch") {
            run_epoch(warmup, reps,
                      arg_value(argc, argv, "--data", "/usr/share/datasets/fashion-mnist"));
#endif
        } else {
            throw std::runtime_error("this side has no --what " + what);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return 0;
}
