// The dynamic program that picks a plan under a byte budget (docs/checkpointing.md).
//
// Note [Planner dynamic program]: every event of the model (Note [Checkpoint memory model] in
// planner.cpp) is "kept bytes of the layers before + something local", so whether the rest of a
// chain fits depends on its prefix only through kept(< b) and whether x_b is already counted.
// For each boundary b and that flag, the program keeps the Pareto front of (recompute cost,
// kept(< b)) over the prefixes [0, b) whose events all fit: a prefix with a larger cost and
// larger kept bytes can be dropped, since a smaller prefix never makes a later event larger.
// A prefix is extended by one plain layer (cost 0) or one checkpointed segment [b, e) (cost: its
// layers' measured forward time, then its layer count). The answer is the cheapest point at n.
#include <algorithm>

#include "checkpoint/planner_model.hpp"

namespace tg::nn::planner {

struct Solver::Impl {
    const Model& m;
    int levels;
    std::vector<std::vector<int64_t>> fwd, bwd;  // local peaks of plainly recomputed segments

    Impl(const Model& model, int lv) : m(model), levels(lv) {
        const size_t n = m.n();
        fwd.assign(n + 1, std::vector<int64_t>(n + 1, 0));
        bwd = fwd;
        for (size_t b = 0; b < n; ++b)
            for (size_t e = b + 1; e <= n; ++e) {
                fwd[b][e] = m.forward_local(b, e);
                bwd[b][e] = m.backward_local(b, e, {});
            }
    }

    struct Point {
        Cost cost;
        int64_t kept = 0;
        size_t from_b = 0, from_idx = 0;
        int from_f = 0;
        bool ckpt = false;
    };

    /// Keeps the Pareto front of (cost, kept): sorted by cost, kept strictly falling.
    static void prune(std::vector<Point>& f) {
        std::sort(f.begin(), f.end(), [](const Point& a, const Point& b) {
            return a.cost < b.cost || (!(b.cost < a.cost) && a.kept < b.kept);
        });
        std::vector<Point> out;
        for (const Point& p : f)
            if (out.empty() || p.kept < out.back().kept)
                out.push_back(p);
        f.swap(out);
    }

    /// The cheapest plan of layers [lo, hi) whose events (plus `extra`) fit `cap`, from state
    /// {0, x_lo counted}.
    Solution solve(size_t lo, size_t hi, int64_t cap, bool top, bool min_cost) const {
        const int64_t fwd_extra = top ? 0 : m.dy(hi);
        const size_t len = hi - lo;
        std::vector<std::vector<Point>> front((len + 1) * 2);
        auto at = [&](size_t b, int f) -> std::vector<Point>& {
            return front[(b - lo) * 2 + size_t(f)];
        };
        at(lo, 1).push_back(Point{});
        for (size_t b = lo; b < hi; ++b)
            for (int f = 0; f < 2; ++f) {
                std::vector<Point>& here = at(b, f);
                prune(here);
                for (size_t k = 0; k < here.size(); ++k) {
                    const Point p = here[k];
                    const State s{p.kept, f == 1};
                    const Step st = m.plain(b, s, top, fwd_extra);
                    if (st.peak <= cap)
                        at(b + 1, st.next.top_counted)
                            .push_back({p.cost, st.next.kept, b, k, f, false});
                    const int64_t B = s.kept + (s.top_counted ? 0 : m.ob(b));
                    for (size_t e = b + 1; e <= hi; ++e) {
                        if (fwd_extra + B + fwd[b][e] > cap || B + bwd[b][e] > cap)
                            continue;
                        const Cost c = min_cost ? p.cost + m.cost(b, e) : Cost{};
                        at(e, 0).push_back({c, B, b, k, f, true});
                    }
                }
            }
        Solution sol;
        const Point* best = nullptr;
        int best_f = 0;
        for (int f = 0; f < 2; ++f) {
            prune(at(hi, f));
            for (const Point& p : at(hi, f))
                if ((!top || m.final_kept(State{p.kept, f == 1}) <= cap + m.held()) &&
                    (!best || p.cost < best->cost)) {
                    best = &p;
                    best_f = f;
                    break;  // sorted by cost
                }
        }
        if (!best)
            return sol;
        sol.ok = true;
        sol.cost = best->cost;
        std::vector<Segment> rev;
        size_t b = hi;
        int f = best_f;
        const Point* p = best;
        while (b > lo) {
            if (!rev.empty() && !p->ckpt && !rev.back().checkpointed)
                rev.back().begin = p->from_b;  // merge consecutive plain layers
            else
                rev.push_back(Segment{p->from_b, b, p->ckpt});
            const size_t nb = p->from_b;
            const int nf = p->from_f;
            p = &at(nb, nf)[p->from_idx];
            b = nb, f = nf;
        }
        (void)f;
        sol.segments.assign(rev.rbegin(), rev.rend());
        return sol;
    }
};

Solver::Solver(const Model& m, int levels) : impl_(std::make_unique<Impl>(m, levels)) {}
Solver::~Solver() = default;

Solution Solver::solve(int64_t budget, bool min_cost) {
    // every event of the outermost chain also has the caller's output (Model::held)
    return impl_->solve(0, impl_->m.n(), budget - impl_->m.held(), true, min_cost);
}

}  // namespace tg::nn::planner
