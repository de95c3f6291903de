/// bench_memory: training under a tg::autograd::MemoryBudget (dynamic rematerialization, issue
/// 34): step time under budgets of 1/2, 1/3 and 1/5 of the unconstrained peak of saved
/// activation bytes over the unconstrained step time, for the deep MLP (32 x (Linear(1024,1024)
/// + tanh), batch 512) and char_gpt (6 pre-norm blocks, d=256, 4 heads, T=128, batch 16,
/// dropout 0.1), float32. Each configuration is a process of its own (this executable with
/// --child MODEL F; F = 0 is unconstrained), the configurations alternating over rounds.
///
///   bench_memory [--rounds 3] [--steps 5] [--csv FILE] [--md FILE]
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"

using namespace bench;
using tg::Tensor;

namespace {

struct Gpt {
    static constexpr int64_t V = 96, T = 128, D = 256, H = 4, B = 16;
    tg::nn::Embedding tok{nullptr}, pos{nullptr};
    std::vector<tg::nn::TransformerEncoderLayer> blocks;
    tg::nn::LayerNorm ln_f{nullptr};
    tg::nn::Linear head{nullptr};
    std::vector<Tensor> params;
    Tensor ids, targets;
    Gpt() {
        namespace nn = tg::nn;
        tg::manual_seed(3);
        tok = nn::Embedding(V, D);
        pos = nn::Embedding(T, D);
        std::vector<std::shared_ptr<nn::Module>> modules = {tok.ptr(), pos.ptr()};
        for (int i = 0; i < 6; ++i) {
            blocks.emplace_back(nn::TransformerEncoderLayerOptions(D, H)
                                    .dim_feedforward(4 * D)
                                    .dropout(0.1)
                                    .activation(tg::kGELU)
                                    .norm_first(true)
                                    .batch_first(true));
            modules.push_back(blocks.back().ptr());
        }
        ln_f = nn::LayerNorm(nn::LayerNormOptions({D}));
        head = nn::Linear(D, V);
        modules.push_back(ln_f.ptr());
        modules.push_back(head.ptr());
        for (const auto& m : modules)
            for (const Tensor& t : m->parameters())
                params.push_back(t);
        ids = tg::randint(0, V, {B, T});
        targets = tg::randint(0, V, {B * T});
    }
    void step() {
        for (Tensor t : params)
            t.set_grad({});
        Tensor h = tok(ids) + pos(tg::arange(T, tg::kInt64));
        for (auto& b : blocks)
            h = b->forward(h, {}, {}, /*is_causal=*/true);
        const Tensor logits = head(ln_f(h));
        tg::cross_entropy(logits.reshape({-1, V}), targets).backward();
    }
};

struct Mlp {
    std::vector<Tensor> w, b;
    Tensor x;
    Mlp() {
        tg::manual_seed(3);
        for (int i = 0; i < 32; ++i) {
            w.push_back((tg::randn({1024, 1024}) * 0.03).requires_grad_());
            b.push_back(tg::zeros({1024}).requires_grad_());
        }
        x = tg::randn({512, 1024});
    }
    void step() {
        for (auto* v : {&w, &b})
            for (Tensor t : *v)
                t.set_grad({});
        Tensor h = x;
        for (size_t i = 0; i < w.size(); ++i)
            h = tg::tanh(tg::linear(h, w[i], b[i]));
        (h * h).mean().backward();
    }
};

/// One configuration: a plain step gives the peak, then `steps` timed steps (after one warm-up)
/// under peak / f (none for f = 0); prints the result line.
template <class M>
int child(const std::string& model, int f, int steps) {
    M m;
    tg::memory::reset_peak();
    m.step();
    const int64_t peak = tg::memory::stats().peak_saved_bytes;
    std::unique_ptr<tg::autograd::MemoryBudget> budget;
    if (f > 0)
        budget = std::make_unique<tg::autograd::MemoryBudget>(peak / f);
    m.step();
    std::vector<double> t;
    int64_t held = 0, remat = 0;
    for (int s = 0; s < steps; ++s) {
        if (budget)
            budget->reset_report();
        tg::memory::reset_peak();
        const double t0 = now_s();
        m.step();
        t.push_back(now_s() - t0);
        held = std::max(held, budget ? budget->report().peak_saved_bytes
                                     : tg::memory::stats().peak_saved_bytes);
        remat = std::max<int64_t>(remat, budget ? budget->report().rematerializations : 0);
    }
    print_result({{"model", model},
                  {"f", std::to_string(f)},
                  {"plain_peak", std::to_string(peak)},
                  {"held", std::to_string(held)},
                  {"remat", std::to_string(remat)},
                  {"step_s", fmt(median(t), 5)}});
    return 0;
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc >= 5 && std::string(argv[1]) == "--child") {
        const std::string model = argv[2];
        const int f = std::stoi(argv[3]), steps = std::stoi(argv[4]);
        return model == "gpt" ? child<Gpt>(model, f, steps) : child<Mlp>(model, f, steps);
    }
    int rounds = 3, steps = 5;
    std::string csv, md_path;
    parse_args(argc, argv,
               {{"--rounds", [&](const std::string& v) { rounds = std::stoi(v); }},
                {"--steps", [&](const std::string& v) { steps = std::stoi(v); }},
                {"--csv", [&](const std::string& v) { csv = v; }},
                {"--md", [&](const std::string& v) { md_path = v; }}});
    const std::vector<std::string> models = {"mlp", "gpt"};
    const std::vector<int> fractions = {0, 2, 3, 5};
    std::map<std::string, std::vector<double>> times;
    std::map<std::string, KV> last;
    for (int r = 0; r < rounds; ++r)
        for (const std::string& m : models)
            for (int f : fractions) {
                const std::string key = m + "/" + std::to_string(f);
                const KV kv = run_child(self_dir() + "/bench_memory --child " + m + " " +
                                        std::to_string(f) + " " + std::to_string(steps));
                times[key].push_back(std::stod(kv.at("step_s")));
                last[key] = kv;
                std::fprintf(stderr, "round %d %s: %s s\n", r, key.c_str(),
                             kv.at("step_s").c_str());
            }
    Table table;
    table.header = {"model",   "budget",     "plain_peak_B", "held_peak_B", "recomputed_per_step",
                    "step_ms", "over_plain", "bar"};
    for (const std::string& m : models) {
        const double plain = median(times[m + "/0"]);
        for (int f : fractions) {
            const std::string key = m + "/" + std::to_string(f);
            const double t = median(times[key]);
            const double ratio = t / plain;
            const std::string bar = f == 2   ? (ratio <= 1.15 ? "<= 1.15: PASS" : "<= 1.15: FAIL")
                                    : f == 3 ? (ratio <= 1.35 ? "<= 1.35: PASS" : "<= 1.35: FAIL")
                                             : "";
            table.add({m == "gpt" ? "char_gpt 6x256 T=128" : "MLP 32x1024 batch 512",
                       f == 0 ? "none" : "1/" + std::to_string(f), last[key].at("plain_peak"),
                       last[key].at("held"), last[key].at("remat"), fmt(t * 1e3, 1), fmt(ratio, 3),
                       bar});
        }
    }
    std::string md =
        "# bench_memory: step time under a MemoryBudget over the unconstrained step\n\n"
        "- float32, 1 thread (OPENBLAS_NUM_THREADS=1), medians of " +
        std::to_string(rounds) + " rounds, each the median of " + std::to_string(steps) +
        " steps in a process of its own; held_peak_B is the most bytes the budget held (or "
        "the plain peak), recomputed_per_step the most rematerializations in a step\n\n" +
        table.markdown();
    std::cout << md;
    write_file(csv, table.csv());
    write_file(md_path, md);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_memory: %s\n", e.what());
    return 1;
}
