// The planner minimises measured recompute time: synthetic profiles (chosen layer times, so
// nothing here depends on timing) checked against brute force, and the measured profile's times.
#define BOOST_TEST_MODULE planner_optimal
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <tapegrad/nn.hpp>
#include <tapegrad/tapegrad.hpp>

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

/// Every single-level plan of an n-layer chain, predicted.
std::vector<nn::CheckpointPlan> all_plans(const nn::SequentialProfile& prof) {
    const size_t n = prof.layers.size();
    std::vector<nn::CheckpointPlan> all;
    std::function<void(size_t, nn::CheckpointPlan)> rec = [&](size_t at, nn::CheckpointPlan p) {
        if (at == n) {
            all.push_back(nn::predict(prof, p));
            return;
        }
        for (size_t e = at + 1; e <= n; ++e)
            for (bool ck : {false, true}) {
                auto q = p;
                q.segments.push_back({at, e, ck});
                rec(e, q);
            }
    };
    rec(0, {});
    return all;
}

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
        const auto plan = nn::plan_checkpoints(prof, tg::MemoryBudget{budget});
        BOOST_TEST_MESSAGE("budget " << budget << ": " << plan);
        BOOST_TEST(plan.predicted_peak_bytes <= budget);
        BOOST_TEST(plan.predicted_recompute_seconds == best_time,
                   boost::test_tools::tolerance(1e-9));
        BOOST_TEST(plan.recomputed_layers == layers_of_best);  // ties: the fewest layers
        if (plan.recomputed_layers > fewest)
            ++more_layers;
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
    const auto plan = nn::plan_checkpoints(prof, tg::MemoryBudget{budget});
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
