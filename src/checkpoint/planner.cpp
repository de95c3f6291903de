// The memory-budget planner: the memory model of a checkpointed step and the dynamic program
// that picks the segments (docs/checkpointing.md).
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
//   - x_0 is the caller's (not counted), x_n is held by the caller's loss (counted).
// A buffer kept by two layers (a tanh output that the next linear saves as its input) is counted
// once; it is freed with the earlier of its two keepers, which is what the state flag tracks.
// Everything "local" is measured per layer by profile_sequential, so the model has no constants.
#include <algorithm>
#include <iomanip>
#include <limits>
#include <sstream>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/checkpoint_sequential.hpp"

namespace tg::nn {

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
constexpr int64_t kLossSlack = 128;

std::string mb(int64_t bytes) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << double(bytes) / (1 << 20) << " MB";
    return s.str();
}

/// Memory state at a boundary b: bytes kept by layers < b, and whether x_b is among them.
struct State {
    int64_t kept = 0;
    bool top_counted = true;
};
struct Step {
    int64_t peak;  // largest live bytes of the events
    State next;
};

/// The model of Note [Checkpoint memory model] over one profile. With workspace=false every
/// transient (forward/backward peaks, gradient buffers) is zero: the saved-activation model.
class Model {
public:
    Model(const SequentialProfile& p, bool workspace) : p_(p), ws_(workspace) {}
    size_t n() const { return p_.layers.size(); }
    int64_t ob(size_t j) const { return j == 0 ? 0 : p_.layers[j - 1].out_bytes; }
    int64_t dy(size_t j) const { return ws_ ? ob(j) : 0; }
    /// x_j alive as the input of the layer running forward (workspace, not saved).
    int64_t live(size_t j) const { return ws_ ? ob(j) : 0; }

    Step plain(size_t i, State s) const {
        const LayerProfile& l = p_.layers[i];
        const int64_t fwd = s.kept + (s.top_counted ? 0 : live(i)) + (ws_ ? l.forward_peak : 0);
        State t;
        // x_n is held by the caller throughout (see held()): not kept twice
        t.kept = s.kept + l.saved_bytes + (l.saves_input && !s.top_counted ? ob(i) : 0) +
                 (l.saves_output && i + 1 < n() ? ob(i + 1) : 0);
        t.top_counted = l.saves_output;
        const int64_t bwd = t.kept + dy(i + 1) + (ws_ ? l.backward_peak : 0);
        return {std::max(fwd, bwd), t};
    }

    /// Events of a checkpointed segment [b,e) relative to B = kept(< b) + x_b.
    int64_t checkpointed_local(size_t b, size_t e) const {
        int64_t peak = 0;
        for (size_t i = b; i < e; ++i)  // unrecorded forward
            peak = std::max(peak, (i > b ? live(i) : 0) + (ws_ ? p_.layers[i].nograd_peak : 0));
        // backward: recompute on top of dy_e, then backpropagate the private graph
        const int64_t base = dy(e);
        std::vector<int64_t> kept_upto(e - b);
        State s{0, true};
        for (size_t i = b; i < e; ++i) {
            Step st = plain(i, s);
            const bool is_last = i + 1 == e;
            // the recomputed output x_e' is counted apart below (plain() already leaves out
            // x_n, which is the caller's: a recomputed x_n' is a second buffer)
            if (is_last && p_.layers[i].saves_output && e < n())
                st.next.kept -= ob(e);
            const int64_t fwd = base + s.kept + (s.top_counted ? 0 : live(i)) +
                                (ws_ ? p_.layers[i].forward_peak : 0);
            peak = std::max(peak, fwd);
            kept_upto[i - b] = st.next.kept;
            s = st.next;
        }
        // dy_e and x_e' are handed to the inner backward and freed once the last layer's
        // backward has run (Note [Roots released]); x_e' is alive until then only if it saves it
        for (size_t i = b; i < e; ++i) {
            const bool is_last = i + 1 == e;
            const int64_t held_out = is_last && p_.layers[i].saves_output ? ob(e) : 0;
            const int64_t bwd =
                held_out + kept_upto[i - b] + dy(i + 1) + (ws_ ? p_.layers[i].backward_peak : 0);
            peak = std::max(peak, bwd);
        }
        return peak;
    }
    Step checkpointed(size_t b, size_t /*e*/, State s, int64_t local) const {
        const int64_t B = s.kept + (s.top_counted ? 0 : ob(b));
        return {B + local, State{B, false}};
    }
    Step checkpointed(size_t b, size_t e, State s) const {
        return checkpointed(b, e, s, checkpointed_local(b, e));
    }
    /// The caller's output x_n: alive from the end of the forward through the whole backward
    /// (`auto out = net(x); loss(out).backward();` holds it), so it is added to every event.
    /// Plus kLossSlack: the scalar loss and its gradient (up to 64 B each).
    int64_t held() const { return ob(n()) + (ws_ ? kLossSlack : 0); }
    int64_t final_kept(State s) const { return s.kept + held(); }

    /// Predicted peak of a plan.
    int64_t simulate(const CheckpointPlan& plan) const {
        State s;
        int64_t peak = 0;
        for (const auto& seg : plan.segments) {
            if (seg.checkpointed) {
                Step st = checkpointed(seg.begin, seg.end, s);
                peak = std::max(peak, st.peak);
                s = st.next;
            } else {
                for (size_t i = seg.begin; i < seg.end; ++i) {
                    Step st = plain(i, s);
                    peak = std::max(peak, st.peak);
                    s = st.next;
                }
            }
        }
        return std::max(peak + held(), final_kept(s));
    }

private:
    const SequentialProfile& p_;
    bool ws_;
};

/// Exact DP over segmentations: for each boundary b, flag and recompute cost c, the smallest
/// kept(< b) reachable with every event so far within budget (smaller kept never hurts later
/// events, so keeping the minimum is exact). Returns the plan with the fewest recomputed layers,
/// or an empty plan if none fits. With min_cost=false the cost dimension is dropped (feasibility).
CheckpointPlan solve(const Model& m, const std::vector<std::vector<int64_t>>& local, int64_t budget,
                     bool min_cost) {
    const size_t n = m.n(), C = min_cost ? n + 1 : 1;
    struct Cell {
        int64_t kept = kInf;
        size_t from_b = 0;
        int from_flag = 0;
        size_t from_c = 0;
        bool ckpt = false;
    };
    auto idx = [C](size_t b, int f, size_t c) { return (b * 2 + size_t(f)) * C + c; };
    std::vector<Cell> dp((n + 1) * 2 * C);
    const int64_t cap = budget - m.held();  // every event also has the caller's output
    dp[idx(0, 1, 0)].kept = 0;
    auto relax = [&](size_t e, const State& s, size_t c, size_t b, int f, size_t cb, bool ck) {
        Cell& cell = dp[idx(e, s.top_counted ? 1 : 0, c)];
        if (s.kept < cell.kept)
            cell = {s.kept, b, f, cb, ck};
    };
    for (size_t b = 0; b < n; ++b)
        for (int f = 0; f < 2; ++f)
            for (size_t c = 0; c < C; ++c) {
                const Cell& cell = dp[idx(b, f, c)];
                if (cell.kept >= kInf)
                    continue;
                const State s{cell.kept, f == 1};
                Step st = m.plain(b, s);
                if (st.peak <= cap)
                    relax(b + 1, st.next, c, b, f, c, false);
                for (size_t e = b + 1; e <= n; ++e) {
                    const size_t c2 = min_cost ? c + (e - b) : 0;
                    if (c2 >= C)
                        break;
                    st = m.checkpointed(b, e, s, local[b][e]);
                    if (st.peak <= cap)
                        relax(e, st.next, c2, b, f, c, true);
                }
            }
    CheckpointPlan plan;
    for (size_t c = 0; c < C && plan.segments.empty(); ++c) {
        int best_f = -1;
        int64_t best = kInf;
        for (int f = 0; f < 2; ++f) {
            const Cell& cell = dp[idx(n, f, c)];
            if (cell.kept >= kInf)
                continue;
            const int64_t fin = m.final_kept(State{cell.kept, f == 1});
            if (fin <= budget && fin < best)
                best = fin, best_f = f;
        }
        if (best_f < 0)
            continue;
        size_t b = n, cc = c;
        int f = best_f;
        std::vector<CheckpointPlan::Segment> rev;
        while (b > 0) {
            const Cell& cell = dp[idx(b, f, cc)];
            if (!rev.empty() && !cell.ckpt && !rev.back().checkpointed)
                rev.back().begin = cell.from_b;  // merge consecutive plain layers
            else
                rev.push_back({cell.from_b, b, cell.ckpt});
            b = cell.from_b, f = cell.from_flag, cc = cell.from_c;
        }
        plan.segments.assign(rev.rbegin(), rev.rend());
    }
    return plan;
}

std::vector<std::vector<int64_t>> local_table(const Model& m) {
    const size_t n = m.n();
    std::vector<std::vector<int64_t>> t(n + 1, std::vector<int64_t>(n + 1, 0));
    for (size_t b = 0; b < n; ++b)
        for (size_t e = b + 1; e <= n; ++e)
            t[b][e] = m.checkpointed_local(b, e);
    return t;
}

}  // namespace

int64_t SequentialProfile::saved_bytes_total() const {
    CheckpointPlan all;
    all.segments.push_back({0, layers.size(), false});
    return Model(*this, false).simulate(all);
}

double CheckpointPlan::recompute_fraction() const {
    return num_layers == 0 ? 0.0 : double(recomputed_layers) / double(num_layers);
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
    os << "\n  segments:";
    for (const auto& s : p.segments)
        os << " [" << s.begin << "," << s.end << ")" << (s.checkpointed ? "ckpt" : "plain");
    os << "\n  predicted peak " << mb(p.predicted_peak_bytes) << " (saved activations "
       << mb(p.predicted_saved_bytes) << "); without checkpointing " << mb(p.unplanned_peak_bytes)
       << "\n  recomputed layers " << p.recomputed_layers << " (" << std::setprecision(3)
       << p.recompute_fraction() << " of a forward)\n";
    return os;
}

CheckpointPlan predict(const SequentialProfile& profile, CheckpointPlan plan) {
    plan.num_layers = profile.layers.size();
    plan.recomputed_layers = 0;
    for (const auto& s : plan.segments)
        if (s.checkpointed)
            plan.recomputed_layers += int64_t(s.end - s.begin);
    plan.predicted_peak_bytes = Model(profile, true).simulate(plan);
    plan.predicted_saved_bytes = Model(profile, false).simulate(plan);
    CheckpointPlan all;
    all.segments.push_back({0, profile.layers.size(), false});
    plan.unplanned_peak_bytes = Model(profile, true).simulate(all);
    return plan;
}

int64_t min_checkpoint_budget(const SequentialProfile& profile) {
    if (profile.layers.empty())
        throw value_error("min_checkpoint_budget: empty profile");
    const Model m(profile, true);
    const auto local = local_table(m);
    // bisection on the feasibility DP (no cost dimension): O(n^2) per probe
    int64_t lo = 0, hi = predict(profile, sqrt_plan(profile, 0)).predicted_peak_bytes;
    while (solve(m, local, hi, false).segments.empty())
        hi *= 2;
    while (lo + 1 < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        (solve(m, local, mid, false).segments.empty() ? lo : hi) = mid;
    }
    return hi;
}

CheckpointPlan plan_checkpoints(const SequentialProfile& profile, MemoryBudget budget) {
    if (profile.layers.empty())
        throw value_error("plan_checkpoints: empty profile");
    const Model m(profile, true);
    CheckpointPlan plan = solve(m, local_table(m), budget.bytes, true);
    if (plan.segments.empty()) {
        const int64_t need = min_checkpoint_budget(profile);
        throw value_error("plan_checkpoints: budget of " + std::to_string(budget.bytes) +
                          " bytes (" + mb(budget.bytes) + ") is infeasible for these " +
                          std::to_string(profile.layers.size()) +
                          " layers; the smallest feasible budget is " + std::to_string(need) +
                          " bytes (" + mb(need) + ")");
    }
    plan.budget_bytes = budget.bytes;
    return predict(profile, plan);
}

}  // namespace tg::nn
