// bench_planner: the memory-budget planner against no checkpointing, √n equal segments and the
// single-level plan, at equal budgets, on a 64-module heterogeneous chain (docs/checkpointing.md,
// "Nested plans"; issue 34's planner bar).
//
//   bench_planner [--blocks 32] [--batch 64] [--reps 5] [--out DIR] [--tag HOST] [--model gpt]
//
// --model gpt plans char_gpt (bench_memory's: token + position embedding, 6 pre-norm causal
// TransformerEncoderLayers d=256, 4 heads, GELU, dropout 0.1, final LayerNorm, head; T=128, batch
// 16) as a chain of 9 stages (embedding, blocks, norm, head; plan_checkpoints over stages) and
// writes planner_gpt_HOST.*.
//
// The chain: `blocks` x (Linear(w_i, w_{i+1}) + an activation), widths cycling 256, 1024, 512,
// 2048 and activations Tanh, ReLU, GELU, Dropout(0.1): layers whose forward times differ by 100x
// and whose outputs differ by 8x. float32, one thread, SGD. Per row: the plan's predicted
// recompute time (the profile's forward_seconds), the step time (median of `reps` steps), the
// predicted and the measured step peak (tg::memory::stats: peak_bytes during a step minus
// current_bytes at its start, gradients allocated: the quantity the budget bounds), and the time
// plan_checkpoints took.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <tapegrad/nn.hpp>
#include <tapegrad/optim.hpp>
#include <tapegrad/tapegrad.hpp>

#include "bench_char_gpt_model.hpp"
#include "bench_env.hpp"

namespace {

namespace nn = tg::nn;
using Clock = std::chrono::steady_clock;

struct Args {
    int blocks = 32, batch = 64, reps = 5;
    std::string out = "benchmarks/results", name = "planner", tag, model = "chain";
};

/// char_gpt as planner stages: the embedding (token ids to h), each block, the final norm, the
/// head; the loss (cross_entropy over the logits) stays outside the chain.
struct Gpt : bench::CharGptModel {
    std::vector<nn::Stage> stages;
    Gpt() {
        stages.push_back({"embedding", [this](const tg::Tensor& x) {
                              return tok(x) + pos(tg::arange(T, tg::kInt64));
                          }});
        for (size_t i = 0; i < blocks.size(); ++i)
            stages.push_back({"block" + std::to_string(i), [this, i](const tg::Tensor& h) {
                                  return blocks[i]->forward(h, {}, {}, /*is_causal=*/true);
                              }});
        stages.push_back({"ln_f", [this](const tg::Tensor& h) { return ln_f(h); }});
        stages.push_back({"head", [this](const tg::Tensor& h) { return head(h); }});
    }
};

double mib(int64_t b) {
    return double(b) / (1 << 20);
}
double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Measured {
    int64_t peak = 0;
    double seconds = 0;
};

struct Row {
    std::string config;
    int64_t budget = 0;
    nn::CheckpointPlan plan;
    double plan_ms = 0;
    Measured m;
};

}  // namespace

int main(int argc, char** argv) {
    Args a;
    bench::parse_args(argc, argv,
                      {{"--blocks", [&](const std::string& v) { a.blocks = std::stoi(v); }},
                       {"--batch", [&](const std::string& v) { a.batch = std::stoi(v); }},
                       {"--reps", [&](const std::string& v) { a.reps = std::stoi(v); }},
                       {"--out", [&](const std::string& v) { a.out = v; }},
                       {"--tag", [&](const std::string& v) { a.tag = v; }},
                       {"--model", [&](const std::string& v) { a.model = v; }}});
    if (a.model != "chain" && a.model != "gpt") {
        std::cerr << "bench_planner: --model is chain or gpt, got " << a.model << "\n";
        return 1;
    }
    const bool gpt = a.model == "gpt";
    a.name = std::string(gpt ? "planner_gpt" : "planner") + (a.tag.empty() ? "" : "_" + a.tag);
    tg::set_num_threads(1);
    tg::manual_seed(0);
    const int widths[] = {256, 1024, 512, 2048};
    nn::Sequential net;
    for (int i = 0; i < a.blocks; ++i) {
        net->push_back(nn::Linear(widths[i % 4], widths[(i + 1) % 4]));
        switch (i % 4) {
            case 0:
                net->push_back(nn::Tanh());
                break;
            case 1:
                net->push_back(nn::ReLU());
                break;
            case 2:
                net->push_back(nn::GELU());
                break;
            default:
                net->push_back(nn::Dropout(0.1));
        }
    }
    const tg::Tensor x = tg::randn({a.batch, widths[0]});
    const tg::Tensor y = tg::zeros({a.batch, widths[a.blocks % 4]});
    const std::unique_ptr<Gpt> g = gpt ? std::make_unique<Gpt>() : nullptr;
    const std::vector<tg::Tensor> params = gpt ? g->params : net->parameters();
    tg::optim::SGD opt(params, tg::optim::SGDOptions(1e-4));
    for (tg::Tensor p : params)
        p.set_grad(tg::zeros_like(p));
    const auto prof =
        gpt ? nn::profile_stages(g->stages, g->params, g->ids) : nn::profile_sequential(net, x);
    const size_t n = prof.layers.size();
    auto loss = [&](const nn::CheckpointPlan& plan) {
        if (gpt)
            return tg::cross_entropy(
                nn::checkpoint_stages(g->stages, plan, g->ids).reshape({-1, Gpt::V}), g->targets);
        return tg::mse_loss(nn::checkpoint_sequential(net, plan, x), y);
    };

    auto step = [&](const nn::CheckpointPlan& plan) {
        opt.zero_grad(false);
        const int64_t before = tg::memory::stats().current_bytes;
        tg::memory::reset_peak();
        const auto t0 = Clock::now();
        loss(plan).backward();
        opt.step();
        Measured m;
        m.seconds = since(t0);
        m.peak = tg::memory::stats().peak_bytes - before;
        return m;
    };
    auto run = [&](Row& r) {
        step(r.plan);  // warm-up
        std::vector<double> t;
        for (int k = 0; k < a.reps; ++k) {
            const Measured m = step(r.plan);
            r.m.peak = std::max(r.m.peak, m.peak);
            t.push_back(m.seconds);
        }
        std::nth_element(t.begin(), t.begin() + long(t.size() / 2), t.end());
        r.m.seconds = t[t.size() / 2];
    };
    auto planned = [&](const char* what, int64_t budget, int levels) {
        Row r{what, budget, {}, 0, {}};
        const auto t0 = Clock::now();
        r.plan = nn::plan_checkpoints(prof, tg::MemoryBudget{budget}, levels);
        r.plan_ms = 1e3 * since(t0);
        return r;
    };

    std::vector<Row> rows;
    Row none{"none", 0, {}, 0, {}};
    none.plan.segments.push_back({0, n, false});
    none.plan = nn::predict(prof, none.plan);
    rows.push_back(none);
    Row sq{"sqrt(n) equal segments", 0, nn::sqrt_plan(prof), 0, {}};
    rows.push_back(sq);
    const int64_t unplanned = none.plan.predicted_peak_bytes;
    auto t0 = Clock::now();
    const int64_t single_min = nn::min_checkpoint_budget(prof, 1);
    const double single_min_ms = 1e3 * since(t0);
    t0 = Clock::now();
    const int64_t nested_min = nn::min_checkpoint_budget(prof);
    const double nested_min_ms = 1e3 * since(t0);
    std::vector<std::pair<std::string, int64_t>> budgets = {
        {"50%", unplanned / 2},
        {"sqrt(n)'s peak", sq.plan.predicted_peak_bytes},
        {"single-level minimum", single_min},
        {"halfway to the nested minimum", (single_min + nested_min) / 2},
        {"nested minimum", nested_min},
    };
    for (const auto& [label, budget] : budgets) {
        if (budget >= single_min)
            rows.push_back(planned(("single-level, " + label).c_str(), budget, 1));
        rows.push_back(planned(("nested, " + label).c_str(), budget, 0));
    }
    for (Row& r : rows) {
        run(r);
        std::cerr << r.config << ": " << r.m.seconds * 1e3 << " ms\n";
    }

    const double plain_s = rows[0].m.seconds;
    std::ostringstream md;
    md << "# Planner: recompute time against memory (bench_planner)\n\n"
       << bench::machine_markdown() << "- chain: "
       << (gpt ? "char_gpt 6x256 T=128 batch 16 as 9 stages (embedding, 6 blocks, norm, head)"
               : std::to_string(a.blocks) + " x (Linear + activation) = " + std::to_string(n) +
                     " modules, widths 256/1024/512/2048, batch " + std::to_string(a.batch))
       << ", float32, one thread, median of " << a.reps << " steps\n"
       << "- one forward of every layer, profiled: " << std::fixed << std::setprecision(2)
       << rows[0].plan.forward_seconds * 1e3 << " ms; smallest budget " << mib(single_min)
       << " MiB single-level (found in " << single_min_ms << " ms), " << mib(nested_min)
       << " MiB nested (" << nested_min_ms << " ms)\n\n"
       << "| config | budget MiB | levels | recomputed layers | predicted recompute ms | step ms "
          "| step / plain | predicted peak MiB | measured peak MiB | measured / predicted | plan "
          "ms |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
    std::ofstream csv(a.out + "/" + a.name + ".csv");
    csv << "config,budget_B,levels,recomputed_layers,predicted_recompute_s,step_s,predicted_peak_"
           "B,measured_peak_B,plan_ms\n";
    for (const Row& r : rows) {
        md << "| " << r.config << " | ";
        if (r.budget > 0)
            md << mib(r.budget);
        else
            md << "-";
        md << " | " << r.plan.levels() << " | " << r.plan.recomputed_layers << " | "
           << r.plan.predicted_recompute_seconds * 1e3 << " | " << r.m.seconds * 1e3 << " | "
           << std::setprecision(3) << r.m.seconds / plain_s << std::setprecision(2) << " | "
           << mib(r.plan.predicted_peak_bytes) << " | " << mib(r.m.peak) << " | "
           << std::setprecision(4) << double(r.m.peak) / double(r.plan.predicted_peak_bytes)
           << std::setprecision(2) << " | " << r.plan_ms << " |\n";
        csv << '"' << r.config << "\"," << r.budget << "," << r.plan.levels() << ","
            << r.plan.recomputed_layers << "," << r.plan.predicted_recompute_seconds << ","
            << r.m.seconds << "," << r.plan.predicted_peak_bytes << "," << r.m.peak << ","
            << r.plan_ms << "\n";
    }
    // for scripts/plot_planner.gp: method (none, sqrt, single, nested), measured peak, step
    std::ofstream plot(a.out + "/" + a.name + ".plot.csv");
    plot << "method,measured_peak_MiB,step_ms,predicted_peak_MiB\n";
    for (const Row& r : rows) {
        const std::string m = r.config.rfind("none", 0) == 0     ? "none"
                              : r.config.rfind("sqrt", 0) == 0   ? "sqrt"
                              : r.config.rfind("single", 0) == 0 ? "single"
                                                                 : "nested";
        plot << m << "," << mib(r.m.peak) << "," << r.m.seconds * 1e3 << ","
             << mib(r.plan.predicted_peak_bytes) << "\n";
    }
    std::cout << md.str();
    std::ofstream(a.out + "/" + a.name + ".md") << md.str();
    return 0;
}
