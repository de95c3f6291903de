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
//
// Note [Nested checkpoint plans]: a checkpointed segment [b, e) whose plain recomputation does
// not fit on top of B = kept(< b) + x_b may be recomputed with a plan of its own (Beaumont et al.
// 2019's rotor, Griewank's revolve), which is the same problem over [b, e) with the room left,
// cap - B: its events are relative to B, with dy_e alive during its forward events
// (Model::backward_local). So the program calls itself on [b, e) for that room (cheapest_inner);
// an inner plan is never one checkpointed segment of all of [b, e). What it learns is kept per
// segment and reused for every room it answers, all exact:
//   - the cheapest plan found for room r, of peak p, is the cheapest for every room in [p, r]
//     (it fits them, and less room never makes the cheapest cheaper);
//   - between two known rooms whose cheapest cost the same, that plan is the cheapest;
//   - whether any inner plan fits is monotone in the room (a feasibility-only program, one
//     point per boundary, answers it and is what the bisection of min_checkpoint_budget uses);
//   - "everything fitting r costs more than c" (a search cut by a bound) holds for less room.
// The plain recomputation is always tried first, a nested one only where it does not fit, and
// a point dearer than the best single-level plan is not extended: the result is never worse than
// the single-level plan, and the search stays small (64 layers: tens of milliseconds a plan).
#include <algorithm>
#include <iterator>
#include <limits>
#include <map>

#include "checkpoint/planner_model.hpp"

namespace tg::nn::planner {

namespace {
constexpr Cost kNoBound{std::numeric_limits<int64_t>::max() / 4, 0};
}  // namespace

struct Solver::Impl {
    const Model& m;
    int levels;
    std::vector<std::vector<int64_t>> fwd, bwd;  // local peaks of plainly recomputed segments

    /// The cheapest inner plan for every room in [peak, room]: the cheapest under `room` fits
    /// any smaller room down to its own peak, and nothing is cheaper there.
    struct Known {
        int64_t peak = 0;
        Cost cost;
        std::shared_ptr<const std::vector<Segment>> inner;
    };
    /// What is known of a segment's inner plans, room by room (every fact holds for less room
    /// too, or for more: whether any fits is monotone, and so is the cheapest's cost).
    struct Curve {
        std::map<int64_t, Known> known;                      // by the room it was solved for
        int64_t fits = std::numeric_limits<int64_t>::max();  // some inner plan fits this room
        int64_t fails = -1;                                  // none fits this room
        // room -> c: every inner plan that fits the room costs more than c; a staircase (more
        // room, smaller c), so the first entry at or above a room has the largest c there
        std::map<int64_t, Cost> dearer;
    };
    std::vector<Curve> curves;  // by (level, b, e); one level when any depth is allowed

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
        const std::vector<Segment>* inner = nullptr;  // its inner plan (null: plainly)
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

    Curve& curve(size_t b, size_t e, int level) {
        const size_t n = m.n(), l = levels == 0 ? 0 : size_t(level);
        if (curves.empty())
            curves.resize((n + 1) * (n + 1) * size_t(levels + 1));
        return curves[(l * (n + 1) + b) * (n + 1) + e];
    }

    /// The cheapest inner plan of segment [b, e) at `level` whose events fit `room` above
    /// kept(< b) + x_b, or null if none fits or all cost more than `bound` (Note [Nested
    /// checkpoint plans]). The pointer is good until the next call.
    const Known* cheapest_inner(size_t b, size_t e, int64_t room, int level, Cost bound) {
        Curve& c = curve(b, e, level);
        if (room <= c.fails)
            return nullptr;
        // the cheapest under the next larger known room, if it fits, or if the one below costs
        // as little (it fits: its room is smaller), is the cheapest here
        auto it = c.known.lower_bound(room);
        if (it != c.known.end() && it->second.peak <= room)
            return &it->second;
        const Known* below = it == c.known.begin() ? nullptr : &std::prev(it)->second;
        if (it != c.known.end()) {
            if (below && !(it->second.cost < below->cost))
                return below;
            if (bound < it->second.cost)
                return nullptr;  // nothing here is cheaper than there
        }
        if (below && below->cost < bound)
            bound = below->cost;  // that one fits: search only what is at most as dear
        if (!fits_inner(b, e, room, level))
            return nullptr;
        auto d = c.dearer.lower_bound(room);
        if (d != c.dearer.end() && !(d->second < bound))
            return nullptr;
        Solution s = solve(b, e, room, false, true, level, bound);
        if (!s.ok) {
            // (room, bound) is not below the staircase (checked above): drop what it covers
            auto first = c.dearer.upper_bound(room);
            while (first != c.dearer.begin() && !(bound < std::prev(first)->second))
                first = c.dearer.erase(std::prev(first));
            c.dearer[room] = bound;
            return nullptr;
        }
        c.fits = std::min(c.fits, room);
        const int64_t peak = m.backward_local(b, e, s.segments);
        Known& k = c.known[room];
        k = {peak, s.cost, std::make_shared<const std::vector<Segment>>(std::move(s.segments))};
        return &k;
    }

    /// Whether some inner plan of [b, e) at `level` fits `room` (feasibility only).
    bool fits_inner(size_t b, size_t e, int64_t room, int level) {
        Curve& c = curve(b, e, level);
        if (room >= c.fits)
            return true;
        if (room <= c.fails)
            return false;
        const bool ok = solve(b, e, room, false, false, level, kNoBound).ok;
        (ok ? c.fits : c.fails) = room;
        return ok;
    }

    /// The cheapest plan of layers [lo, hi), its segments at `level`, whose events fit `cap`,
    /// from state {0, x_lo counted}. top: the whole chain; else the recomputation of a
    /// checkpointed segment [lo, hi) (dy_hi alive in forward events; not one segment of it all).
    /// Points dearer than `bound` are dropped (a cheaper plan is known). With min_cost=false
    /// only ok is meaningful (inner plans are not filled in).
    Solution solve(size_t lo, size_t hi, int64_t cap, bool top, bool min_cost, int level,
                   Cost bound) {
        const bool nest = levels == 0 || level < levels;
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
                    const Point& p = here[k];
                    const State s{p.kept, f == 1};
                    const Step st = m.plain(b, s, top, fwd_extra);
                    if (st.peak <= cap)
                        at(b + 1, st.next.top_counted)
                            .push_back({p.cost, st.next.kept, b, k, f, false, nullptr});
                    const int64_t B = s.kept + (s.top_counted ? 0 : m.ob(b));
                    for (size_t e = b + 1; e <= hi; ++e) {
                        if (fwd_extra + B + fwd[b][e] > cap)
                            break;  // the unrecorded forward only grows with e
                        if (!top && b == lo && e == hi)
                            continue;
                        const Cost c = min_cost ? p.cost + m.cost(b, e) : Cost{};
                        if (bound < c)
                            continue;
                        if (B + bwd[b][e] <= cap) {
                            at(e, 0).push_back({c, B, b, k, f, true, nullptr});
                        } else if (nest && e - b >= 2 && !min_cost) {
                            if (fits_inner(b, e, cap - B, level + 1))
                                at(e, 0).push_back({c, B, b, k, f, true, nullptr});
                        } else if (nest && e - b >= 2) {
                            const Known* in =
                                cheapest_inner(b, e, cap - B, level + 1,
                                               Cost{bound.ns - c.ns, bound.layers - c.layers});
                            if (in && !(bound < c + in->cost))
                                at(e, 0).push_back(
                                    {c + in->cost, B, b, k, f, true, in->inner.get()});
                        }
                    }
                }
            }
        Solution sol;
        const Point* best = nullptr;
        for (int f = 0; f < 2; ++f) {
            prune(at(hi, f));
            for (const Point& p : at(hi, f))
                if ((!top || m.final_kept(State{p.kept, f == 1}) <= cap + m.held()) &&
                    (!best || p.cost < best->cost)) {
                    best = &p;
                    break;  // sorted by cost
                }
        }
        if (!best)
            return sol;
        sol.ok = true;
        sol.cost = best->cost;
        std::vector<Segment> rev;
        size_t b = hi;
        const Point* p = best;
        while (b > lo) {
            if (!rev.empty() && !p->ckpt && !rev.back().checkpointed)
                rev.back().begin = p->from_b;  // merge consecutive plain layers
            else
                rev.push_back(
                    Segment{p->from_b, b, p->ckpt, p->inner ? *p->inner : std::vector<Segment>{}});
            const size_t nb = p->from_b;
            p = &at(nb, p->from_f)[p->from_idx];
            b = nb;
        }
        sol.segments.assign(rev.rbegin(), rev.rend());
        return sol;
    }
};

Solver::Solver(const Model& m, int levels) : impl_(std::make_unique<Impl>(m, levels)) {}
Solver::~Solver() = default;

Solution Solver::solve(int64_t budget, bool min_cost) {
    // every event of the outermost chain also has the caller's output (Model::held); the
    // single-level plan first: nested ones dearer than it need not be searched
    const int64_t cap = budget - impl_->m.held();
    const int levels = impl_->levels;
    impl_->levels = 1;  // for this solve only: no segment has an inner plan
    Solution single = impl_->solve(0, impl_->m.n(), cap, true, min_cost, 1, kNoBound);
    impl_->levels = levels;
    if (levels == 1 || (single.ok && !min_cost))
        return single;
    Solution nested =
        impl_->solve(0, impl_->m.n(), cap, true, min_cost, 1, single.ok ? single.cost : kNoBound);
    return nested.ok && (!single.ok || nested.cost < single.cost) ? nested : single;
}

}  // namespace tg::nn::planner
