// The memory-budget planner: the memory model of a checkpointed step, predictions and the public
// functions (docs/checkpointing.md); the dynamic program that picks the plan is in
// planner_dp.cpp (Note [Planner dynamic program]).
//
// Note [Checkpoint memory model]: a step over layers 0..n-1 with boundaries x_0 (the input)
// .. x_n (the output) is simulated as a list of events, each "live bytes = kept + local", where
// kept is what earlier layers keep for backward and local is what the event itself allocates.
//   - a plain layer i keeps its saved bytes, plus x_i / x_{i+1} if it saves its input / output;
//     its forward peaks at kept + x_i + forward_peak, its backward at kept(<= i) + dy +
//     backward_peak;
//   - a checkpointed segment [b,e) keeps x_b only; its backward recomputes it as plain layers on
//     top of kept(< b) + x_b + dy_e, then backpropagates them as plain layers, dy_e and the
//     recomputed output x_e' being freed with the segment's last layer (Note [Roots released]);
//   - a checkpointed segment with an inner plan recomputes by running that plan on top of
//     kept(< b) + x_b, with dy_e alive during its forward events only: the same simulation,
//     recursively (Model::run with top=false). Its inner checkpointed segments keep their own
//     first boundary and recompute in the inner backward, when dy_e has been freed; a recomputed
//     output is counted as kept while the layer that saves it lives (the caller does not hold
//     it, unlike x_n at the top);
//   - x_0 is the caller's (not counted), x_n is held by the caller's loss (counted).
// A buffer kept by two layers (a tanh output that the next linear saves as its input) is counted
// once; it is freed with the earlier of its two keepers, which is what the state flag tracks.
// Everything "local" is measured per layer by profile_sequential, so the model has no constants.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "checkpoint/planner_model.hpp"
#include "tapegrad/error.hpp"

namespace tg::nn {

namespace planner {

namespace {
constexpr int64_t kLossSlack = 128;
}  // namespace

Model::Model(const SequentialProfile& p, bool workspace) : p_(p), ws_(workspace) {
    ns_.assign(p.layers.size() + 1, 0);
    for (size_t i = 0; i < p.layers.size(); ++i)
        ns_[i + 1] = ns_[i] + std::llround(std::max(0.0, p.layers[i].forward_seconds) * 1e9);
}

int64_t Model::held() const {
    return ob(n()) + (ws_ ? kLossSlack : 0);
}

Step Model::plain(size_t i, State s, bool top, int64_t fwd_extra) const {
    const LayerProfile& l = p_.layers[i];
    const int64_t fwd =
        fwd_extra + s.kept + (s.top_counted ? 0 : live(i)) + (ws_ ? l.forward_peak : 0);
    State t;
    // x_n is held by the caller throughout (see held()): not kept twice. Inside a
    // recomputation the recomputed output is a buffer of its own, kept until the last layer's
    // backward has run (Note [Roots released] in src/autograd/engine.cpp)
    t.kept = s.kept + l.saved_bytes + (l.saves_input && !s.top_counted ? ob(i) : 0) +
             (l.saves_output && !(top && i + 1 == n()) ? ob(i + 1) : 0);
    t.top_counted = l.saves_output;
    const int64_t bwd = t.kept + dy(i + 1) + (ws_ ? l.backward_peak : 0);
    return {std::max(fwd, bwd), t};
}

int64_t Model::forward_local(size_t b, size_t e) const {
    int64_t peak = 0;
    for (size_t i = b; i < e; ++i)
        peak = std::max(peak, (i > b ? live(i) : 0) + (ws_ ? p_.layers[i].nograd_peak : 0));
    return peak;
}

int64_t Model::backward_local(size_t b, size_t e, const std::vector<Segment>& inner) const {
    if (inner.empty())
        return run({Segment{b, e, false, {}}}, State{0, true}, false, dy(e)).peak;
    return run(inner, State{0, true}, false, dy(e)).peak;
}

Step Model::run(const std::vector<Segment>& segs, State s, bool top, int64_t fwd_extra) const {
    int64_t peak = 0;
    for (const Segment& seg : segs) {
        if (seg.checkpointed) {
            const Step st = checkpointed(seg.begin, s, fwd_extra, forward_local(seg.begin, seg.end),
                                         backward_local(seg.begin, seg.end, seg.inner));
            peak = std::max(peak, st.peak);
            s = st.next;
            continue;
        }
        for (size_t i = seg.begin; i < seg.end; ++i) {
            const Step st = plain(i, s, top, fwd_extra);
            peak = std::max(peak, st.peak);
            s = st.next;
        }
    }
    return {peak, s};
}

int64_t Model::simulate(const std::vector<Segment>& segs) const {
    const Step st = run(segs, State{}, true, 0);
    return std::max(st.peak + held(), final_kept(st.next));
}

}  // namespace planner

namespace {

using planner::Model;

std::string mb(int64_t bytes) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << double(bytes) / (1 << 20) << " MB";
    return s.str();
}

std::vector<CheckpointPlan::Segment> whole(size_t n) {
    return {CheckpointPlan::Segment{0, n, false, {}}};
}

/// A checkpointed segment's layers run once more in backward, and an inner plan's checkpointed
/// segments once more again within that.
void add_costs(const SequentialProfile& p, const std::vector<CheckpointPlan::Segment>& segs,
               CheckpointPlan& plan) {
    for (const auto& s : segs)
        if (s.checkpointed) {
            for (size_t i = s.begin; i < s.end; ++i) {
                plan.recomputed_layers += 1;
                plan.predicted_recompute_seconds += p.layers[i].forward_seconds;
            }
            add_costs(p, s.inner, plan);
        }
}

int depth(const std::vector<CheckpointPlan::Segment>& segs) {
    int d = 0;
    for (const auto& s : segs)
        if (s.checkpointed)
            d = std::max(d, 1 + depth(s.inner));
    return d;
}

void print(std::ostream& os, const std::vector<CheckpointPlan::Segment>& segs) {
    for (size_t k = 0; k < segs.size(); ++k) {
        const auto& s = segs[k];
        os << (k ? " " : "") << "[" << s.begin << "," << s.end << ")"
           << (s.checkpointed ? "ckpt" : "plain");
        if (!s.inner.empty()) {
            os << "{";
            print(os, s.inner);
            os << "}";
        }
    }
}

}  // namespace

int64_t SequentialProfile::saved_bytes_total() const {
    return Model(*this, false).simulate(whole(layers.size()));
}

double CheckpointPlan::recompute_fraction() const {
    return num_layers == 0 ? 0.0 : double(recomputed_layers) / double(num_layers);
}

int CheckpointPlan::levels() const {
    return depth(segments);
}

std::vector<size_t> CheckpointPlan::boundaries() const {
    std::vector<size_t> b;
    for (const auto& s : segments)
        b.push_back(s.begin);
    return b;
}

std::ostream& operator<<(std::ostream& os, const CheckpointPlan& p) {
    os << "CheckpointPlan: " << p.num_layers << " layers in " << p.segments.size() << " segments";
    if (p.budget_bytes > 0)
        os << ", budget " << mb(p.budget_bytes);
    if (p.levels() > 1)
        os << ", " << p.levels() << " levels";
    os << "\n  segments: ";
    print(os, p.segments);
    os << "\n  predicted peak " << mb(p.predicted_peak_bytes) << " (saved activations "
       << mb(p.predicted_saved_bytes) << "); without checkpointing " << mb(p.unplanned_peak_bytes)
       << "\n  recomputed layers " << p.recomputed_layers << " (" << std::setprecision(3)
       << p.recompute_fraction() << " of a forward), " << std::setprecision(3)
       << p.predicted_recompute_seconds * 1e3 << " ms of " << p.forward_seconds * 1e3 << " ms\n";
    return os;
}

CheckpointPlan predict(const SequentialProfile& profile, CheckpointPlan plan) {
    plan.num_layers = profile.layers.size();
    plan.recomputed_layers = 0;
    plan.predicted_recompute_seconds = 0;
    plan.forward_seconds = 0;
    for (const auto& l : profile.layers)
        plan.forward_seconds += l.forward_seconds;
    add_costs(profile, plan.segments, plan);
    plan.predicted_peak_bytes = Model(profile, true).simulate(plan.segments);
    plan.predicted_saved_bytes = Model(profile, false).simulate(plan.segments);
    plan.unplanned_peak_bytes = Model(profile, true).simulate(whole(profile.layers.size()));
    return plan;
}

int64_t min_checkpoint_budget(const SequentialProfile& profile, int levels) {
    if (profile.layers.empty())
        throw value_error("min_checkpoint_budget: empty profile");
    if (levels < 0)
        throw value_error("min_checkpoint_budget: levels must be >= 0 (0: any), got " +
                          std::to_string(levels));
    const Model m(profile, true);
    planner::Solver solver(m, levels);
    // bisection on the feasibility DP (no cost dimension)
    int64_t lo = 0, hi = predict(profile, sqrt_plan(profile, 0)).predicted_peak_bytes;
    while (!solver.solve(hi, false).ok)
        hi *= 2;
    while (lo + 1 < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        (solver.solve(mid, false).ok ? hi : lo) = mid;
    }
    return hi;
}

CheckpointPlan plan_checkpoints(const SequentialProfile& profile, MemoryBudget budget, int levels) {
    if (profile.layers.empty())
        throw value_error("plan_checkpoints: empty profile");
    if (levels < 0)
        throw value_error("plan_checkpoints: levels must be >= 0 (0: any), got " +
                          std::to_string(levels));
    const Model m(profile, true);
    planner::Solution sol = planner::Solver(m, levels).solve(budget.bytes, true);
    if (!sol.ok) {
        const int64_t need = min_checkpoint_budget(profile, levels);
        throw value_error("plan_checkpoints: budget of " + std::to_string(budget.bytes) +
                          " bytes (" + mb(budget.bytes) + ") is infeasible for these " +
                          std::to_string(profile.layers.size()) +
                          " layers; the smallest feasible budget is " + std::to_string(need) +
                          " bytes (" + mb(need) + ")");
    }
    CheckpointPlan plan;
    plan.segments = std::move(sol.segments);
    plan.budget_bytes = budget.bytes;
    return predict(profile, plan);
}

}  // namespace tg::nn
