/// bench_memory: training under a tg::autograd::MemoryBudget (dynamic rematerialization, issue
/// 34): step time under budgets of 1/2, 1/3 and 1/5 of the unconstrained peak of saved
/// activation bytes, and under the smallest feasible budget, over the unconstrained step time,
/// for the deep MLP (32 x (Linear(1024,1024) + tanh), batch 512) and char_gpt (6 pre-norm blocks,
/// d=256, 4 heads, T=128, batch 16, dropout 0.1), float32. Each configuration is a process of its
/// own (this executable with --child MODEL F; F = 0 is unconstrained, F = -1 the smallest
/// feasible budget), the configurations alternating over rounds. On the chains (the MLP and
/// bench_planner's 64-module heterogeneous chain, batch 64) the optimal planner's plan at the same
/// budgets too (MODEL mlp-plan, chain-plan), and the MemoryBudget's step time over the planner's
/// (bar: within 10%).
///
///   bench_memory [--rounds 3] [--steps 5] [--csv FILE] [--md FILE]
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_char_gpt_model.hpp"
#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"

using namespace bench;
using tg::Tensor;

namespace {

struct Gpt : CharGptModel {
    Gpt() : CharGptModel(3) {}
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
        // h * h is let go of before backward, as the planner's chain (MlpChain::loss) does: a
        // temporary held across backward is an activation the budget can never evict (2 MiB,
        // a sixth of the budget at 1/5)
        const Tensor loss = (h * h).mean();
        loss.backward();
    }
};

/// The chains as Sequentials, for the planner and for the budget alike: the MLP's 32 x
/// (Linear(1024,1024) + Tanh), batch 512, loss mean(y^2); bench_planner's 64-module heterogeneous
/// chain (32 x (Linear + Tanh/ReLU/GELU/Dropout(0.1)), widths 256/1024/512/2048), batch 64, loss
/// mse against zeros.
struct Chain {
    tg::nn::Sequential net;
    Tensor x, y;
    std::vector<Tensor> params;
    explicit Chain(bool mlp) {
        namespace nn = tg::nn;
        tg::manual_seed(3);
        const int widths[] = {256, 1024, 512, 2048};
        for (int i = 0; i < 32; ++i) {
            if (mlp) {
                net->push_back(nn::Linear(1024, 1024));
                net->push_back(nn::Tanh());
                continue;
            }
            net->push_back(nn::Linear(widths[i % 4], widths[(i + 1) % 4]));
            if (i % 4 == 0)
                net->push_back(nn::Tanh());
            else if (i % 4 == 1)
                net->push_back(nn::ReLU());
            else if (i % 4 == 2)
                net->push_back(nn::GELU());
            else
                net->push_back(nn::Dropout(0.1));
        }
        x = mlp ? tg::randn({512, 1024}) : tg::randn({64, widths[0]});
        y = mlp ? Tensor() : tg::zeros({64, widths[0]});
        params = net->parameters();
    }
    Tensor loss(const Tensor& out) const {
        return y.defined() ? tg::mse_loss(out, y) : (out * out).mean();
    }
    void zero() {
        for (Tensor t : params)
            t.set_grad({});
    }
};
struct MlpChain : Chain {
    MlpChain() : Chain(true) {}
    void step() {
        zero();
        loss(net->forward(x)).backward();
    }
};
struct HetChain : Chain {
    HetChain() : Chain(false) {}
    void step() {
        zero();
        loss(net->forward(x)).backward();
    }
};

/// The planner at the budget a MemoryBudget of peak / f would have: plan_checkpoints' budget is a
/// step peak, so it is given the plain step's predicted peak less the bytes the MemoryBudget
/// takes off the saved activations (peak - peak / f). Runs the plan through
/// checkpoint_sequential; prints the same line as child() and the plan's prediction.
template <class M>
int plan_child(const std::string& model, int f, int steps) {
    M m;
    tg::memory::reset_peak();
    m.step();
    const int64_t peak = tg::memory::stats().peak_saved_bytes;
    const auto prof = tg::nn::profile_sequential(m.net, m.x);
    tg::nn::CheckpointPlan none;
    none.segments.push_back({0, prof.layers.size(), false});
    none = tg::nn::predict(prof, none);
    const int64_t cut = peak - peak / f;
    const auto plan = tg::nn::plan_checkpoints(
        prof, tg::MemoryBudget{none.predicted_peak_bytes - cut}, /*levels=*/0);
    auto step = [&] {
        m.zero();
        m.loss(tg::nn::checkpoint_sequential(m.net, plan, m.x)).backward();
    };
    step();
    std::vector<double> t;
    int64_t held = 0;
    for (int s = 0; s < steps; ++s) {
        tg::memory::reset_peak();
        const double t0 = now_s();
        step();
        t.push_back(now_s() - t0);
        held = std::max(held, tg::memory::stats().peak_saved_bytes);
    }
    print_result({{"model", model},
                  {"f", std::to_string(f)},
                  {"plain_peak", std::to_string(peak)},
                  {"held", std::to_string(held)},
                  {"remat", std::to_string(plan.recomputed_layers)},
                  {"recompute_s", fmt(plan.predicted_recompute_seconds, 5)},
                  {"levels", std::to_string(plan.levels())},
                  {"forward_s", fmt(plan.forward_seconds, 5)},
                  {"step_s", fmt(median(t), 5)}});
    return 0;
}

/// The smallest budget a step of m fits under, to 5%: from peak / 64 up, each out_of_memory
/// raising the budget to the larger of its report's lower bound and 1.05 times the last try.
template <class M>
int64_t smallest_feasible(M& m, int64_t peak) {
    int64_t b = std::max<int64_t>(1, peak / 64);
    for (int tries = 0; tries < 100; ++tries) {
        tg::autograd::MemoryBudget budget(b);
        try {
            m.step();
            return b;
        } catch (const tg::out_of_memory&) {
            b = std::max(budget.report().min_feasible_bytes, b + b / 20 + 1);
        }
    }
    throw std::runtime_error("no feasible budget found below " + std::to_string(b) + " bytes");
}

/// One configuration: a plain step gives the peak, then `steps` timed steps (after one warm-up)
/// under peak / f (none for f = 0; the smallest feasible budget for f = -1); prints the result
/// line.
template <class M>
int child(const std::string& model, int f, int steps) {
    M m;
    tg::memory::reset_peak();
    m.step();
    const int64_t peak = tg::memory::stats().peak_saved_bytes;
    std::unique_ptr<tg::autograd::MemoryBudget> budget;
    int64_t bytes = 0;
    if (f > 0)
        bytes = peak / f;
    else if (f < 0)
        bytes = smallest_feasible(m, peak);
    std::vector<double> t, rs;
    int64_t held = 0, remat = 0;
    for (;;) {
        if (bytes > 0)
            budget = std::make_unique<tg::autograd::MemoryBudget>(bytes);
        t.clear();
        rs.clear();
        held = remat = 0;
        try {
            m.step();
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
                rs.push_back(budget ? budget->report().recompute_seconds : 0);
            }
            break;
        } catch (const tg::out_of_memory&) {
            // at the smallest budget a later step may choose other victims (the costs are
            // measured) and not fit: 5% more, and the steps again
            if (f >= 0)
                throw;
            budget.reset();
            bytes += bytes / 20 + 1;
        }
    }
    std::string ops;  // the last step's recomputed ops: name:count:seconds
    if (budget)
        for (const auto& [name, op] : budget->report().recomputed_ops)
            ops += (ops.empty() ? "" : ",") + name + ":" + std::to_string(op.count) + ":" +
                   fmt(op.seconds, 4);
    print_result({{"model", model},
                  {"f", std::to_string(f)},
                  {"plain_peak", std::to_string(peak)},
                  {"budget", std::to_string(bytes)},
                  {"held", std::to_string(held)},
                  {"remat", std::to_string(remat)},
                  {"recompute_s", fmt(median(rs), 5)},
                  {"ops", ops.empty() ? "-" : ops},
                  {"step_s", fmt(median(t), 5)}});
    return 0;
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc >= 5 && std::string(argv[1]) == "--child") {
        const std::string model = argv[2];
        const int f = std::stoi(argv[3]), steps = std::stoi(argv[4]);
        if (model == "gpt")
            return child<Gpt>(model, f, steps);
        if (model == "chain")
            return child<HetChain>(model, f, steps);
        if (model == "mlp-plan")
            return plan_child<MlpChain>(model, f, steps);
        if (model == "chain-plan")
            return plan_child<HetChain>(model, f, steps);
        return child<Mlp>(model, f, steps);
    }
    int rounds = 3, steps = 5;
    std::string csv, md_path;
    parse_args(argc, argv,
               {{"--rounds", [&](const std::string& v) { rounds = std::stoi(v); }},
                {"--steps", [&](const std::string& v) { steps = std::stoi(v); }},
                {"--csv", [&](const std::string& v) { csv = v; }},
                {"--md", [&](const std::string& v) { md_path = v; }}});
    // a MemoryBudget on each model (f = 0: none), the planner's plan on the chains
    std::vector<std::pair<std::string, int>> configs;
    for (const std::string m : {"mlp", "chain", "gpt"})
        for (int f : {0, 2, 3, 5, -1})  // -1: the smallest feasible budget
            configs.push_back({m, f});
    for (const std::string m : {"mlp-plan", "chain-plan"})
        for (int f : {2, 3, 5})
            configs.push_back({m, f});
    std::map<std::string, std::vector<double>> times;
    std::map<std::string, KV> last;
    for (int r = 0; r < rounds; ++r)
        for (const auto& [m, f] : configs) {
            const std::string key = m + "/" + std::to_string(f);
            const KV kv = run_child(self_dir() + "/bench_memory --child " + m + " " +
                                    std::to_string(f) + " " + std::to_string(steps));
            times[key].push_back(std::stod(kv.at("step_s")));
            last[key] = kv;
            std::fprintf(stderr, "round %d %s: %s s\n", r, key.c_str(), kv.at("step_s").c_str());
        }
    const std::map<std::string, std::string> names = {{"mlp", "MLP 32x1024 batch 512"},
                                                      {"chain", "64-module chain batch 64"},
                                                      {"gpt", "char_gpt 6x256 T=128"}};
    Table table;
    table.header = {"model",       "method",     "budget",       "plain_peak_B",
                    "held_peak_B", "recomputed", "recompute_ms", "step_ms",
                    "over_plain",  "bar",        "over_planner", "bar_planner"};
    for (const auto& [m, f] : configs) {
        const bool plan = m.size() > 5 && m.substr(m.size() - 5) == "-plan";
        const std::string base = plan ? m.substr(0, m.size() - 5) : m;
        const std::string key = m + "/" + std::to_string(f);
        const double plain = median(times[base + "/0"]);
        const double t = median(times[key]);
        const double ratio = t / plain;
        const std::string bar = plan     ? ""
                                : f == 2 ? (ratio <= 1.15 ? "<= 1.15: PASS" : "<= 1.15: FAIL")
                                : f == 3 ? (ratio <= 1.35 ? "<= 1.35: PASS" : "<= 1.35: FAIL")
                                         : "";
        std::string vs, vs_bar;
        const std::string pkey = base + "-plan/" + std::to_string(f);
        if (!plan && f > 0 && times.count(pkey)) {
            const double q = t / median(times[pkey]);
            vs = fmt(q, 3);
            vs_bar = q <= 1.10 ? "<= 1.10: PASS" : "<= 1.10: FAIL";
        }
        const KV& kv = last[key];
        table.add(
            {names.at(base),
             plan     ? "planner (predicted)"
             : f == 0 ? "plain"
                      : "MemoryBudget",
             f == 0  ? "none"
             : f < 0 ? "smallest: " + kv.at("budget") + " B (1/" +
                           fmt(std::stod(kv.at("plain_peak")) / std::stod(kv.at("budget")), 1) + ")"
                     : "1/" + std::to_string(f),
             kv.at("plain_peak"), kv.at("held"),
             kv.at("remat") + (plan     ? " modules"
                               : f == 0 ? ""
                                        : " ops"),
             fmt(std::stod(kv.at("recompute_s")) * 1e3, 1), fmt(t * 1e3, 1), fmt(ratio, 3), bar, vs,
             vs_bar});
    }
    std::string md =
        "# bench_memory: step time under a MemoryBudget over the unconstrained step\n\n"
        "- float32, 1 thread (OPENBLAS_NUM_THREADS=1), medians of " +
        std::to_string(rounds) + " rounds, each the median of " + std::to_string(steps) +
        " steps in a process of its own; held_peak_B is the most bytes the budget held (or "
        "the plain peak), recomputed the most rematerializations in a step (MemoryBudget: "
        "ops, each a linear, tanh, ...) or the plan's recomputed modules (planner: "
        "plan_checkpoints + checkpoint_sequential at a step-peak budget cut by the same bytes "
        "as the MemoryBudget cuts the saved activations, peak - peak / f; recompute_ms is then "
        "its prediction from the profile), over_planner the MemoryBudget's step over the "
        "planner's at the same f; smallest: the smallest budget a step fits under, to 5% (from "
        "peak / 64 up, each out_of_memory raising it to its lower bound or by 5%)\n\n" +
        table.markdown();
    std::cout << md;
    write_file(csv, table.csv());
    write_file(md_path, md);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_memory: %s\n", e.what());
    return 1;
}
