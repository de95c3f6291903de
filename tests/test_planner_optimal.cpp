// The planner minimises measured recompute time: synthetic profiles (chosen layer times, so
// nothing here depends on timing) checked against brute force, and the measured profile's times.
#define BOOST_TEST_MODULE planner_optimal
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <tapegrad/nn.hpp>
#include <tapegrad/tapegrad.hpp>

#include "planner_plans.hpp"

using tg::Tensor;
namespace nn = tg::nn;

namespace {

/// A chain whose layer i takes secs[i] and keeps its input; sizes vary with `bytes`.
nn::SequentialProfile synthetic(const std::vector<double>& secs,
                                const std::function<int64_t(size_t)>& bytes) {
    nn::SequentialProfile p;
    p.input_bytes = bytes(0);
    for (size_t i = 0; i < secs.size(); ++i) {
        nn::LayerProfile l;
        l.name = "L" + std::to_string(i);
        l.out_bytes = bytes(i + 1);
        l.saves_input = true;
        l.saved_bytes = bytes(i + 1) / 2;  // e.g. a mask
        l.forward_peak = l.nograd_peak = l.out_bytes;
        l.backward_peak = bytes(i) + 64;  // the input's gradient and a temporary
        l.forward_seconds = secs[i];
        p.layers.push_back(l);
    }
    return p;
}

using planner_test::all_plans;

}  // namespace

/// Two expensive layers among cheap ones: under every budget the planner's plan has the least
/// recompute time of all single-level plans that fit (brute force over 3^9·2 plans), and at
/// some budgets that means recomputing more layers than the fewest possible, around them.
BOOST_AUTO_TEST_CASE(planner_minimises_recompute_time_not_layers) {
    std::vector<double> secs(10, 1e-3);
    secs[3] = secs[7] = 50e-3;
    const auto prof = synthetic(secs, [](size_t i) { return int64_t(1000 + 300 * (i % 3)); });
    const auto all = all_plans(prof);
    BOOST_TEST_REQUIRE(all.size() == 39366u);
    int64_t lo = all[0].predicted_peak_bytes, hi = lo;
    for (const auto& p : all) {
        lo = std::min(lo, p.predicted_peak_bytes);
        hi = std::max(hi, p.predicted_peak_bytes);
    }
    int more_layers = 0;
    for (int k = 0; k <= 16; ++k) {
        const int64_t budget = lo + (hi - lo) * k / 16;
        double best_time = 1e9;
        int64_t fewest = 1 << 30, layers_of_best = 1 << 30;
        for (const auto& p : all) {
            if (p.predicted_peak_bytes > budget)
                continue;
            fewest = std::min(fewest, p.recomputed_layers);
            if (p.predicted_recompute_seconds < best_time - 1e-12 ||
                (std::abs(p.predicted_recompute_seconds - best_time) <= 1e-12 &&
                 p.recomputed_layers < layers_of_best)) {
                best_time = p.predicted_recompute_seconds;
                layers_of_best = p.recomputed_layers;
            }
        }
        const auto plan = nn::plan_checkpoints(prof, tg::MemoryBudget{budget}, /*levels=*/1);
        BOOST_TEST_MESSAGE("budget " << budget << ": " << plan);
        BOOST_TEST(plan.predicted_peak_bytes <= budget);
        BOOST_TEST(plan.predicted_recompute_seconds == best_time,
                   boost::test_tools::tolerance(1e-9));
        BOOST_TEST(plan.recomputed_layers == layers_of_best);  // ties: the fewest layers
        if (plan.recomputed_layers > fewest)
            ++more_layers;
        const auto nested = nn::plan_checkpoints(prof, tg::MemoryBudget{budget});
        BOOST_TEST(nested.predicted_recompute_seconds <= plan.predicted_recompute_seconds + 1e-12);
        BOOST_TEST(nested.predicted_peak_bytes <= budget);
    }
    BOOST_TEST(more_layers > 0);  // the time objective chose differently from the layer count
}

/// With equal times the planner is the old one: the fewest recomputed layers.
BOOST_AUTO_TEST_CASE(equal_times_give_the_fewest_layers) {
    const auto prof = synthetic(std::vector<double>(8, 0.0), [](size_t) { return int64_t(4096); });
    const auto all = all_plans(prof);
    const int64_t budget = nn::sqrt_plan(prof).predicted_peak_bytes;
    int64_t fewest = 1 << 30;
    for (const auto& p : all)
        if (p.predicted_peak_bytes <= budget)
            fewest = std::min(fewest, p.recomputed_layers);
    const auto plan = nn::plan_checkpoints(prof, tg::MemoryBudget{budget}, 1);
    BOOST_TEST(plan.recomputed_layers == fewest);
    BOOST_TEST(plan.predicted_recompute_seconds == 0.0);
}

/// profile_sequential measures each layer's forward time; predict sums the checkpointed ones.
BOOST_AUTO_TEST_CASE(profile_measures_forward_time) {
    tg::manual_seed(4);
    nn::Sequential s(nn::Linear(64, 64), nn::Tanh(), nn::Linear(64, 64), nn::Dropout(0.2));
    const Tensor x = tg::randn({32, 64});
    tg::manual_seed(21);
    const Tensor r0 = tg::rand({4});
    tg::manual_seed(21);
    const auto prof = nn::profile_sequential(s, x);
    BOOST_TEST(tg::equal(tg::rand({4}), r0));  // the generator is put back after the timed runs
    double sum = 0;
    for (const auto& l : prof.layers) {
        BOOST_TEST(l.forward_seconds > 0.0, l.name);
        sum += l.forward_seconds;
    }
    nn::CheckpointPlan plan;
    plan.segments = {{0, 2, true}, {2, 4, false}};
    plan = nn::predict(prof, plan);
    BOOST_TEST(plan.forward_seconds == sum, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(plan.predicted_recompute_seconds ==
                   prof.layers[0].forward_seconds + prof.layers[1].forward_seconds,
               boost::test_tools::tolerance(1e-12));
    BOOST_TEST(plan.recomputed_layers == 2);
}

namespace {

using Segs = std::vector<nn::CheckpointPlan::Segment>;

/// Every plan of layers [lo, hi) with nested checkpoints: plain layers one by one, checkpointed
/// segments recomputed plainly or with any inner plan (not one checkpointed segment of it all).
std::vector<Segs> nested_plans(size_t lo, size_t hi, bool top) {
    std::vector<Segs> out;
    std::function<void(size_t, Segs)> rec = [&](size_t at, Segs p) {
        if (at == hi) {
            out.push_back(p);
            return;
        }
        auto q = p;
        q.push_back({at, at + 1, false});
        rec(at + 1, q);
        for (size_t e = at + 1; e <= hi; ++e) {
            if (!top && at == lo && e == hi)
                continue;
            q = p;
            q.push_back({at, e, true});
            rec(e, q);
            if (e - at < 2)
                continue;
            for (const Segs& in : nested_plans(at, e, false)) {
                bool any = false;
                for (const auto& s : in)
                    any = any || s.checkpointed;
                if (!any)
                    continue;  // the same as the plain recomputation
                q = p;
                q.push_back({at, e, true, in});
                rec(e, q);
            }
        }
    };
    rec(lo, {});
    return out;
}

/// 64 layers alternating "linear" (slow, keeps its input) and "activation" (fast, keeps its
/// output), widths varying: a heterogeneous chain.
nn::SequentialProfile heterogeneous(size_t n) {
    std::vector<double> secs;
    for (size_t i = 0; i < n; ++i)
        secs.push_back(i % 2 == 0 ? 2e-3 * double(1 + i % 5) : 0.1e-3);
    auto p = synthetic(secs, [](size_t i) { return int64_t(4096 * (1 + (i / 2) % 4)); });
    for (size_t i = 1; i < n; i += 2) {
        p.layers[i].saves_input = false;
        p.layers[i].saves_output = true;
        p.layers[i].saved_bytes = 0;
    }
    return p;
}

}  // namespace

/// The nested dynamic program against brute force over every nested plan of a 6-layer chain:
/// the least recompute time at every budget, down to the nested minimum, which is below the
/// single-level one.
BOOST_AUTO_TEST_CASE(nested_dynamic_program_matches_brute_force) {
    std::vector<double> secs = {3e-3, 1e-3, 4e-3, 1e-3, 5e-3, 2e-3};
    const auto prof = synthetic(secs, [](size_t i) { return int64_t(1000 + 700 * (i % 3)); });
    std::vector<nn::CheckpointPlan> all;
    for (Segs& s : nested_plans(0, secs.size(), true)) {
        nn::CheckpointPlan p;
        p.segments = std::move(s);
        all.push_back(nn::predict(prof, p));
    }
    BOOST_TEST_MESSAGE(all.size() << " nested plans");
    int64_t lo = all[0].predicted_peak_bytes, hi = lo;
    for (const auto& p : all) {
        lo = std::min(lo, p.predicted_peak_bytes);
        hi = std::max(hi, p.predicted_peak_bytes);
    }
    BOOST_TEST(nn::min_checkpoint_budget(prof) == lo);
    BOOST_TEST(nn::min_checkpoint_budget(prof, 1) > lo);  // nesting goes lower
    BOOST_CHECK_THROW(nn::plan_checkpoints(prof, tg::MemoryBudget{lo - 1}), tg::error);
    int nested_used = 0;
    for (int k = 0; k <= 24; ++k) {
        const int64_t budget = lo + (hi - lo) * k / 24;
        double best = 1e9;
        for (const auto& p : all)
            if (p.predicted_peak_bytes <= budget)
                best = std::min(best, p.predicted_recompute_seconds);
        const auto plan = nn::plan_checkpoints(prof, tg::MemoryBudget{budget});
        BOOST_TEST_MESSAGE("budget " << budget << ": " << plan);
        BOOST_TEST(plan.predicted_peak_bytes <= budget);
        BOOST_TEST(plan.predicted_recompute_seconds == best, boost::test_tools::tolerance(1e-9));
        nested_used += plan.levels() > 1;
    }
    BOOST_TEST(nested_used > 0);
}

/// On a 64-layer heterogeneous chain nested plans are never dearer than single-level ones,
/// cheaper at tight budgets, and fit budgets no single-level plan fits.
BOOST_AUTO_TEST_CASE(nested_beats_single_level_at_tight_budgets) {
    const auto prof = heterogeneous(64);
    const int64_t single_min = nn::min_checkpoint_budget(prof, 1);
    const int64_t nested_min = nn::min_checkpoint_budget(prof);
    BOOST_TEST_MESSAGE("smallest budget: single-level " << single_min << ", nested " << nested_min);
    BOOST_TEST(nested_min < single_min);
    const auto low = nn::plan_checkpoints(prof, tg::MemoryBudget{nested_min});
    BOOST_TEST_MESSAGE(low);
    BOOST_TEST(low.levels() >= 2);
    BOOST_TEST(low.predicted_peak_bytes <= nested_min);
    const int64_t full = low.unplanned_peak_bytes;
    int cheaper = 0;
    for (int k = 0; k <= 5; ++k) {
        const int64_t budget = single_min + (full - single_min) * k / 10;
        const auto one = nn::plan_checkpoints(prof, tg::MemoryBudget{budget}, 1);
        const auto any = nn::plan_checkpoints(prof, tg::MemoryBudget{budget});
        BOOST_TEST(any.predicted_peak_bytes <= budget);
        BOOST_TEST(any.predicted_recompute_seconds <= one.predicted_recompute_seconds + 1e-12);
        cheaper += any.predicted_recompute_seconds < one.predicted_recompute_seconds - 1e-9;
    }
    BOOST_TEST(cheaper > 0);
}

BOOST_AUTO_TEST_CASE(inner_plans_are_checked) {
    nn::Sequential s(nn::Linear(4, 4), nn::Tanh(), nn::Linear(4, 4));
    const Tensor x = tg::randn({2, 4});
    nn::CheckpointPlan bad;
    bad.segments = {{0, 2, false, {{0, 1, true}, {1, 2, false}}}, {2, 3, false}};
    BOOST_CHECK_THROW(nn::checkpoint_sequential(s, bad, x), tg::value_error);
    bad.segments = {{0, 2, true, {{0, 1, true}}}, {2, 3, false}};
    std::string msg;
    try {
        nn::checkpoint_sequential(s, bad, x);
    } catch (const tg::value_error& e) {
        msg = e.what();
    }
    BOOST_TEST(msg.find("inner plan of segment [0,2) covers layers [0,1)") != std::string::npos,
               msg);
    BOOST_CHECK_THROW(
        nn::plan_checkpoints(nn::profile_sequential(s, x), tg::MemoryBudget{1 << 20}, -1),
        tg::value_error);
}

/// A real 64-module heterogeneous chain (Linear of varying widths, Tanh, ReLU and Dropout):
/// under budgets from the nested minimum (below any single-level plan) up to the single-level
/// minimum, the nested plan's measured step peak is within its prediction and the budget, and
/// its gradients equal the plain run's bit for bit (Dropout's masks included).
BOOST_AUTO_TEST_CASE(nested_plans_run_within_prediction_and_bit_identical) {
    tg::manual_seed(6);
    const int widths[] = {16, 48, 96, 32};
    nn::Sequential s;
    for (int i = 0; i < 32; ++i) {
        s->push_back(nn::Linear(widths[i % 4], widths[(i + 1) % 4]));
        if (i % 3 == 0)
            s->push_back(nn::Tanh());
        else if (i % 3 == 1)
            s->push_back(nn::ReLU());
        else
            s->push_back(nn::Dropout(0.2));
    }
    s->to(tg::kFloat64);
    BOOST_TEST_REQUIRE(s->size() == 64u);
    const Tensor x = tg::randn({16, 16}, tg::kFloat64), target = tg::randn({16, 16}, tg::kFloat64);
    auto step = [&](const std::function<Tensor(const Tensor&)>& fwd, int64_t* peak) {
        for (const Tensor& p : s->parameters())
            p.set_grad(tg::zeros_like(p));  // allocated, as in a step after zero_grad(false)
        tg::manual_seed(13);
        const int64_t before = tg::memory::stats().current_bytes;
        tg::memory::reset_peak();
        tg::mse_loss(fwd(x), target).backward();
        if (peak)
            *peak = tg::memory::stats().peak_bytes - before;
        std::vector<double> g;
        for (const Tensor& p : s->parameters()) {
            auto v = p.grad().to_vector<double>();
            g.insert(g.end(), v.begin(), v.end());
        }
        return g;
    };
    const auto ref = step([&](const Tensor& in) { return s->forward(in); }, nullptr);
    const auto prof = nn::profile_sequential(s, x);
    const int64_t single_min = nn::min_checkpoint_budget(prof, 1);
    const int64_t nested_min = nn::min_checkpoint_budget(prof);
    BOOST_TEST_MESSAGE("smallest budget: single-level " << single_min << ", nested " << nested_min);
    BOOST_TEST(nested_min < single_min);
    for (int64_t budget : {nested_min, (nested_min + single_min) / 2, single_min}) {
        const auto plan = nn::plan_checkpoints(prof, tg::MemoryBudget{budget});
        int64_t measured = 0;
        const auto g = step(
            [&](const Tensor& in) { return nn::checkpoint_sequential(s, plan, in); }, &measured);
        BOOST_TEST_MESSAGE("measured " << measured << " ("
                                       << double(measured) / double(plan.predicted_peak_bytes)
                                       << " of predicted)\n"
                                       << plan);
        if (budget < single_min)
            BOOST_TEST(plan.levels() >= 2);
        BOOST_TEST(measured <= plan.predicted_peak_bytes);
        BOOST_TEST(measured <= budget);
        BOOST_TEST(g == ref);
    }
}
