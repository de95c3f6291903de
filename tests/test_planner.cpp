// checkpoint_sequential (√n segments) and the memory-budget planner: bit-identical gradients,
// predicted vs measured peak, optimality of the plan, infeasible budgets.
#define BOOST_TEST_MODULE planner
#include <boost/test/unit_test.hpp>
#include <functional>
#include <string>
#include <tapegrad/nn.hpp>
#include <tapegrad/optim.hpp>
#include <tapegrad/tapegrad.hpp>

#include "planner_plans.hpp"

using tg::Tensor;
namespace nn = tg::nn;

namespace {

nn::Sequential mlp(int layers, int width, double dropout, tg::Dtype dt) {
    tg::manual_seed(5);
    nn::Sequential s;
    for (int i = 0; i < layers; ++i) {
        s->push_back(nn::Linear(width, width));
        s->push_back(nn::Tanh());
        if (dropout > 0)
            s->push_back(nn::Dropout(dropout));
    }
    s->to(dt);
    return s;
}

std::vector<double> grads(const nn::Sequential& s) {
    std::vector<double> g;
    for (const Tensor& p : s->parameters()) {
        auto v = p.grad().to(tg::kFloat64).to_vector<double>();
        g.insert(g.end(), v.begin(), v.end());
    }
    return g;
}

/// Gradients of mean(f(x)²) with the forward given, drawn from seed 11.
std::vector<double> grads_of(const nn::Sequential& s, const std::function<Tensor()>& fwd) {
    s->zero_grad();
    tg::manual_seed(11);
    Tensor y = fwd();
    (y * y).mean().backward();
    return grads(s);
}

struct StepMemory {
    int64_t peak = 0;         // peak bytes above the live bytes at the start of the step
    int64_t activations = 0;  // peak of the activation memory (saved_bytes) during the step
};
/// What one training step allocates (gradients allocated beforehand).
StepMemory measure_step(const nn::Sequential& s, const Tensor& x, const Tensor& target,
                        const std::function<Tensor(const Tensor&)>& fwd) {
    for (Tensor& p : s->parameters())
        if (!p.grad().defined())
            p.set_grad(tg::zeros_like(p));
    const tg::memory::Stats before = tg::memory::stats();
    tg::memory::reset_peak();
    tg::mse_loss(fwd(x), target).backward();
    const tg::memory::Stats after = tg::memory::stats();
    return {after.peak_bytes - before.current_bytes, after.peak_saved_bytes - before.saved_bytes};
}

}  // namespace

BOOST_AUTO_TEST_CASE(sqrt_segments_bit_identical_with_dropout) {
    auto s = mlp(6, 16, 0.3, tg::kFloat64);  // 18 modules: round(√18) = 4 segments
    const Tensor x = tg::randn({8, 16}, tg::kFloat64).requires_grad_();
    const auto ref = grads_of(s, [&] { return s->forward(x); });
    x.set_grad({});
    for (int64_t k : {0, 1, 3, 18}) {
        const auto got = grads_of(s, [&] { return nn::checkpoint_sequential(s, k, x); });
        BOOST_TEST_REQUIRE(got.size() == ref.size());
        BOOST_TEST(got == ref);  // exact: same kernels, same order, same dropout masks
    }
    // the input's gradient too
    s->zero_grad();
    x.set_grad({});
    tg::manual_seed(11);
    Tensor y = s->forward(x);
    (y * y).mean().backward();
    const auto dx_ref = x.grad().to_vector<double>();
    x.set_grad({});
    tg::manual_seed(11);
    y = nn::checkpoint_sequential(s, 0, x);
    (y * y).mean().backward();
    BOOST_TEST(x.grad().to_vector<double>() == dx_ref);
}

BOOST_AUTO_TEST_CASE(planned_segments_bit_identical_with_dropout) {
    auto s = mlp(8, 16, 0.2, tg::kFloat64);  // 24 modules
    const Tensor x = tg::randn({8, 16}, tg::kFloat64);
    const auto prof = nn::profile_sequential(s, x);
    const auto ref = grads_of(s, [&] { return s->forward(x); });
    const int64_t lo = nn::min_checkpoint_budget(prof);
    for (int64_t budget : {lo, (lo + nn::sqrt_plan(prof).unplanned_peak_bytes) / 2}) {
        const auto plan = nn::plan_checkpoints(prof, tg::MemoryBudget{budget});
        BOOST_TEST(plan.recomputed_layers > 0);
        BOOST_TEST(grads_of(s, [&] { return nn::checkpoint_sequential(s, plan, x); }) == ref);
    }
}

BOOST_AUTO_TEST_CASE(bad_segment_counts_throw) {
    auto s = mlp(2, 4, 0, tg::kFloat32);
    const Tensor x = tg::randn({2, 4});
    BOOST_CHECK_THROW(nn::checkpoint_sequential(s, 5, x), tg::error);
    BOOST_CHECK_THROW(nn::checkpoint_sequential(s, -1, x), tg::error);
    nn::CheckpointPlan bad;
    bad.segments.push_back({0, 3, true});
    BOOST_CHECK_THROW(nn::checkpoint_sequential(s, bad, x), tg::error);
}

BOOST_AUTO_TEST_CASE(profile_sees_what_layers_save) {
    auto s = mlp(2, 32, 0, tg::kFloat32);
    const Tensor x = tg::randn({16, 32});
    const auto p = nn::profile_sequential(s, x);
    BOOST_TEST_REQUIRE(p.layers.size() == 4u);
    BOOST_TEST(p.layers[0].name == "Linear[0]");
    BOOST_TEST(p.layers[0].out_bytes == 16 * 32 * 4);
    BOOST_TEST(p.layers[0].saves_input);  // linear keeps x for dW (the weight is excluded)
    BOOST_TEST(p.layers[0].saved_bytes == 0);
    BOOST_TEST(p.layers[1].saves_output);  // tanh keeps its output
    BOOST_TEST(!p.layers[1].saves_input);
    // x (the caller's), then tanh outputs shared with the next linear: each counted once
    BOOST_TEST(p.saved_bytes_total() == 2 * 16 * 32 * 4);
    // gradients left untouched
    for (const Tensor& w : s->parameters())
        BOOST_TEST(!w.grad().defined());
}

BOOST_AUTO_TEST_CASE(planner_measured_peak_within_budget_and_prediction) {
    auto s = mlp(24, 64, 0, tg::kFloat32);  // 48 modules
    const Tensor x = tg::randn({64, 64}), target = tg::randn({64, 64});
    const auto prof = nn::profile_sequential(s, x);
    auto check = [&](const nn::CheckpointPlan& plan, const char* what) {
        const StepMemory m = measure_step(
            s, x, target, [&](const Tensor& in) { return nn::checkpoint_sequential(s, plan, in); });
        const int64_t measured = m.peak;
        BOOST_TEST_MESSAGE(what << ": measured " << measured << ", predicted "
                                << plan.predicted_peak_bytes << "; activations " << m.activations
                                << ", predicted " << plan.predicted_saved_bytes << "\n"
                                << plan);
        BOOST_TEST(double(measured) <= 1.10 * double(plan.predicted_peak_bytes));
        BOOST_TEST(double(measured) >= 0.90 * double(plan.predicted_peak_bytes));
        // the activation memory the planner predicts is what the graph measurably keeps, but
        // for the network's output: the model counts it throughout (the caller holds it), the
        // graph lets go of it once the last layer's backward has run
        BOOST_TEST(m.activations <= plan.predicted_saved_bytes);
        BOOST_TEST(m.activations >= plan.predicted_saved_bytes - prof.layers.back().out_bytes);
        if (plan.budget_bytes > 0)
            BOOST_TEST(measured <= plan.budget_bytes);
        return measured;
    };
    nn::CheckpointPlan none;
    none.segments.push_back({0, s->size(), false});
    const int64_t full = check(nn::predict(prof, none), "no checkpointing");
    const int64_t sq = check(nn::sqrt_plan(prof), "sqrt(n)");
    nn::CheckpointPlan all_ckpt;  // the last segment checkpointed too
    for (size_t b = 0; b < s->size(); b += 8)
        all_ckpt.segments.push_back({b, b + 8, true});
    check(nn::predict(prof, all_ckpt), "every segment checkpointed");
    nn::CheckpointPlan tail_ckpt;
    tail_ckpt.segments = {{0, 40, false}, {40, 48, true}};
    check(nn::predict(prof, tail_ckpt), "plain, then a checkpointed tail");
    BOOST_TEST(sq * 10 < full * 6);
    for (double frac : {0.8, 0.6, 0.45}) {
        const tg::MemoryBudget budget{int64_t(frac * double(full))};
        const auto plan = nn::plan_checkpoints(prof, budget);
        check(plan, "budget");
        if (frac < 0.6)
            BOOST_TEST(plan.recomputed_layers > 0);
    }
    // a generous budget needs no recomputation
    BOOST_TEST(nn::plan_checkpoints(prof, tg::MemoryBudget{2 * full}).recomputed_layers == 0);
}

BOOST_AUTO_TEST_CASE(infeasible_budget_names_the_smallest_feasible_one) {
    auto s = mlp(8, 32, 0, tg::kFloat32);
    const Tensor x = tg::randn({32, 32});
    const auto prof = nn::profile_sequential(s, x);
    std::string msg;
    try {
        nn::plan_checkpoints(prof, tg::MemoryBudget{1000});
    } catch (const tg::error& e) {
        msg = e.what();
    }
    BOOST_TEST_MESSAGE(msg);
    const auto at = msg.find("smallest feasible budget is ");
    BOOST_TEST_REQUIRE(at != std::string::npos);
    const int64_t min_ok = std::stoll(msg.substr(at + 28));
    BOOST_TEST(min_ok > 1000);
    BOOST_CHECK_NO_THROW(nn::plan_checkpoints(prof, tg::MemoryBudget{min_ok}));
    BOOST_CHECK_THROW(nn::plan_checkpoints(prof, tg::MemoryBudget{min_ok - 1}), tg::error);
    // and the convenience form runs the plan
    BOOST_TEST(nn::checkpoint_sequential(s, x, tg::MemoryBudget{min_ok}).sizes() == x.sizes());
}

BOOST_AUTO_TEST_CASE(dynamic_program_matches_brute_force) {
    auto s = mlp(3, 32, 0.1, tg::kFloat32);  // 9 modules
    auto prof = nn::profile_sequential(s, tg::randn({32, 32}));
    // equal layer times: the least recompute time is the fewest layers (not timing-dependent;
    // measured times are planned in test_planner_optimal.cpp)
    for (auto& l : prof.layers)
        l.forward_seconds = 1e-3;
    // every segmentation with every choice of checkpointed segments
    const std::vector<nn::CheckpointPlan> all = planner_test::all_plans(prof);
    int64_t lo = all[0].predicted_peak_bytes, hi = lo;
    for (const auto& p : all) {
        lo = std::min(lo, p.predicted_peak_bytes);
        hi = std::max(hi, p.predicted_peak_bytes);
    }
    for (int k = 0; k <= 8; ++k) {
        const int64_t budget = lo + (hi - lo) * k / 8;
        int64_t best = -1;
        for (const auto& p : all)
            if (p.predicted_peak_bytes <= budget && (best < 0 || p.recomputed_layers < best))
                best = p.recomputed_layers;
        const auto plan = nn::plan_checkpoints(prof, tg::MemoryBudget{budget}, /*levels=*/1);
        BOOST_TEST(plan.recomputed_layers == best);
        BOOST_TEST(plan.predicted_peak_bytes <= budget);
        // nested plans include these: never dearer
        const auto nested = nn::plan_checkpoints(prof, tg::MemoryBudget{budget});
        BOOST_TEST(nested.recomputed_layers <= best);
        BOOST_TEST(nested.predicted_peak_bytes <= budget);
    }
    BOOST_CHECK_THROW(nn::plan_checkpoints(prof, tg::MemoryBudget{lo - 1}, 1), tg::error);
    BOOST_TEST(nn::min_checkpoint_budget(prof, 1) == lo);
    BOOST_TEST(nn::min_checkpoint_budget(prof) <= lo);
}

/// The planner over a ModuleList of transformer blocks and over a chain of callables (causal
/// blocks, whose forward takes more than the input): gradients bit-identical to the plain run
/// with dropout, and the measured peak within the budget.
BOOST_AUTO_TEST_CASE(planner_over_module_list_and_callables) {
    tg::manual_seed(8);
    nn::ModuleList blocks;
    for (int i = 0; i < 4; ++i)
        blocks->push_back(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(32, 4)
                                                          .dim_feedforward(64)
                                                          .dropout(0.2)
                                                          .norm_first(true)
                                                          .batch_first(true)));
    std::vector<nn::Stage> causal;
    for (const auto& m : *blocks) {
        auto* b = static_cast<nn::TransformerEncoderLayerImpl*>(m.get());
        causal.push_back(
            {b->label(), [b](const Tensor& h) { return b->forward(h, {}, {}, true); }});
    }
    const Tensor x = tg::randn({4, 24, 32}), target = tg::randn({4, 24, 32});
    auto grads_with = [&](const std::function<Tensor(const Tensor&)>& fwd) {
        blocks->zero_grad();
        tg::manual_seed(12);
        tg::mse_loss(fwd(x), target).backward();
        std::vector<double> g;
        for (const Tensor& p : blocks->parameters()) {
            auto v = p.grad().to(tg::kFloat64).to_vector<double>();
            g.insert(g.end(), v.begin(), v.end());
        }
        return g;
    };
    auto plain = [&](const std::vector<nn::Stage>& st) {
        return [&st](const Tensor& h) {
            Tensor y = h;
            for (const nn::Stage& s : st)
                y = s.fn(y);
            return y;
        };
    };
    const std::vector<nn::Stage> modules = nn::stages(*blocks);
    BOOST_TEST(modules.size() == 4u);
    BOOST_TEST(grads_with(plain(modules)) == grads_with([&](const Tensor& h) {
                   return nn::checkpoint_sequential(blocks, 0, h);
               }));
    BOOST_TEST(grads_with(plain(causal)) ==
               grads_with([&](const Tensor& h) { return nn::checkpoint_stages(causal, 2, h); }));
    // the planner's budget holds for the causal chain, measured (gradients allocated)
    for (const Tensor& p : blocks->parameters())
        p.set_grad(tg::zeros_like(p));
    const auto prof = nn::profile_stages(causal, blocks->parameters(), x);
    BOOST_TEST(prof.layers.size() == 4u);
    BOOST_TEST(prof.layers[0].name == causal[0].name);
    nn::CheckpointPlan none;
    none.segments.push_back({0, causal.size(), false});
    const int64_t full = nn::predict(prof, none).predicted_peak_bytes;
    const auto plan = nn::plan_checkpoints(prof, tg::MemoryBudget{full * 6 / 10});
    BOOST_TEST(plan.recomputed_layers > 0);
    const tg::memory::Stats before = tg::memory::stats();
    tg::memory::reset_peak();
    tg::mse_loss(nn::checkpoint_stages(causal, plan, x), target).backward();
    const int64_t measured = tg::memory::stats().peak_bytes - before.current_bytes;
    BOOST_TEST_MESSAGE("measured " << measured << ", budget " << plan.budget_bytes << "\n" << plan);
    BOOST_TEST(measured <= plan.budget_bytes);
    // a ModuleList plans like a Sequential of the same modules
    BOOST_TEST(nn::plan_checkpoints(blocks, x, tg::MemoryBudget{full}).num_layers == 4u);
}

/// saved_report's by_scope: what each block keeps, every buffer once, summing to the total.
BOOST_AUTO_TEST_CASE(saved_report_per_block) {
    tg::manual_seed(9);
    nn::ModuleList blocks(nn::Linear(16, 16), nn::Tanh(), nn::Linear(16, 16));
    Tensor h = tg::randn({8, 16}).requires_grad_();
    {
        tg::autograd::RecordScope model("net");
        for (const auto& m : *blocks)
            h = (*m)(h);
    }
    const Tensor loss = (h * h).sum();
    const auto r = tg::autograd::saved_report(loss);
    const auto top = r.by_scope(1), per_block = r.by_scope(2);
    int64_t sum = 0;
    for (const auto& [scope, bytes] : per_block)
        sum += bytes;
    BOOST_TEST(sum == r.total_bytes);
    BOOST_TEST(top.size() == 2u);  // "net" and the loss's ops outside any scope ("-")
    BOOST_TEST(top[0].first == "net");
    BOOST_TEST(per_block.size() == 4u);
    BOOST_TEST(per_block[0].first == "net.Linear[0]");
    BOOST_TEST(per_block[1].first == "net.Tanh[1]");
    for (const auto& [scope, bytes] : per_block)
        BOOST_TEST(bytes > 0, scope);
}
