#pragma once
/// What the planner tests (test_planner, test_planner_optimal) compare plan_checkpoints with:
/// every single-level plan of a chain, each predicted from the profile.
#include <functional>
#include <tapegrad/nn.hpp>
#include <vector>

namespace planner_test {

/// Every segmentation of the profile's chain with every choice of checkpointed segments.
inline std::vector<tg::nn::CheckpointPlan> all_plans(const tg::nn::SequentialProfile& prof) {
    const size_t n = prof.layers.size();
    std::vector<tg::nn::CheckpointPlan> all;
    std::function<void(size_t, tg::nn::CheckpointPlan)> rec = [&](size_t at,
                                                                  tg::nn::CheckpointPlan p) {
        if (at == n) {
            all.push_back(tg::nn::predict(prof, p));
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

}  // namespace planner_test
