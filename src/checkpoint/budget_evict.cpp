// Choosing what to evict (Budget::ensure_room): the score of each resident entry and, for a
// nested budget, its own entries first (Note [Nested budgets] in memory_budget.cpp).
//
// Note [Evicted neighbourhood]: the cost of evicting a resident entry is what recomputing it
// would take when something needs it again: its own measured time plus that of every evicted
// entry whose recomputation would have to (re)make it or that it would have to remake first,
// i.e. Kirisame et al.'s e* (DTR, ICLR 2021, section 4): evicted entries joined by an input edge
// form components (the union-find of the paper, rebuilt for each choice), and a resident entry
// costs its own time plus the summed time of each distinct component next to it, through its
// inputs or through the evicted entries that read it. A one-level form (its evicted inputs
// only) cannot see past an intermediate nobody saves: in x -> linear -> tanh -> linear -> ...
// the linear outputs go first, so every tanh output had the same cost, eviction degenerated to
// oldest-first, and backward recomputed the whole evicted prefix of the chain (the 32x1024 MLP
// at 1/2 of its peak: 25 layers recomputed where 16 suffice). A component of k entries counts
// k times its time: a backward that walks an evicted run back remakes it about once per node
// it reaches with little room (the run's first entry for each of its k nodes, in the worst
// case), so one long run costs more than two short ones of the same total time, and eviction
// leaves resident entries spread along the chain rather than bunched at its recent end (the
// 32-layer tanh chain at 1/5: 80-94 ops recomputed instead of 86-122; at 1/3 46 against 46-60).
#include <algorithm>
#include <numeric>

#include "checkpoint/budget.hpp"

namespace tg::autograd::detail {

std::vector<double> evicted_neighbourhood(const std::vector<std::shared_ptr<BudgetEntry>>& all) {
    const size_t n = all.size();
    for (size_t i = 0; i < n; ++i)
        all[i]->scratch = uint32_t(i);
    std::vector<uint32_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](uint32_t i) {
        while (parent[i] != i)
            i = parent[i] = parent[parent[i]];
        return i;
    };
    auto evicted = [](const BudgetEntry& e) { return !e.t.defined(); };
    // an input entry is always in `all` (entries are pruned only when nothing holds them); one
    // that were not would count as resident and alone
    auto listed = [&](const BudgetEntry::Input& in) {
        return in.entry && in.entry->scratch < n && all[in.entry->scratch] == in.entry;
    };
    for (size_t i = 0; i < n; ++i)
        if (evicted(*all[i]))
            for (const BudgetEntry::Input& in : all[i]->inputs)
                if (listed(in) && evicted(*in.entry))
                    parent[find(uint32_t(i))] = find(in.entry->scratch);
    std::vector<double> comp(n, 0), cost(n, 0), size(n, 0);
    for (size_t i = 0; i < n; ++i)
        if (evicted(*all[i])) {
            comp[find(uint32_t(i))] += all[i]->seconds();
            size[find(uint32_t(i))] += 1;
        }
    // a run of k evicted entries is remade about k times in a backward that walks it back
    // (Note [Evicted neighbourhood]): its cost counts k times
    for (size_t i = 0; i < n; ++i)
        comp[i] *= size[i];
    // (resident entry, neighbouring component) pairs, each counted once
    std::vector<std::pair<uint32_t, uint32_t>> next;
    for (size_t i = 0; i < n; ++i)
        for (const BudgetEntry::Input& in : all[i]->inputs) {
            if (!listed(in) || evicted(*all[i]) == evicted(*in.entry))
                continue;
            if (evicted(*all[i]))
                next.emplace_back(in.entry->scratch, find(uint32_t(i)));  // it reads a resident
            else
                next.emplace_back(uint32_t(i), find(in.entry->scratch));  // it needs an evicted
        }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    for (size_t i = 0; i < n; ++i)
        cost[i] = all[i]->seconds();
    for (const auto& [r, c] : next)
        cost[r] += comp[c];
    return cost;
}

void Budget::ensure_room(int64_t n, const std::string& what, BudgetCap* in) {
    auto fits = [&] {
        for (BudgetCap* c = in; c; c = c->outer.get())
            if (c->alive && c->resident + n > c->limit)
                return false;
        return resident + n <= limit;
    };
    if (fits())
        return;
    prune();
    if (fits())
        return;
    struct Candidate {
        double score;
        BudgetEntry* e;
    };
    std::vector<Candidate> cands;
    int64_t stuck = 0;
    const std::vector<double> cost = evicted_neighbourhood(entries_);
    for (size_t i = 0; i < entries_.size(); ++i) {
        BudgetEntry& e = *entries_[i];
        if (!e.t.defined())
            continue;
        const Storage& st = *e.t.impl()->storage;
        if (!e.pinned && e.recipe && st.version != e.version)
            pin(e, " (modified in place)");
        if (e.pinned || !e.recipe || e.t.impl()->storage.use_count() > 1) {
            stuck += e.nbytes;
            continue;
        }
        const double stale = staleness(e, clock_, backward_, frontier_);
        // what no backward reads (only a recomputation of another entry) goes first
        const double unread = e.handles.load(std::memory_order_relaxed) == 0 ? 1e-6 : 1;
        cands.push_back({unread * (cost[i] + 1e-9) / (double(e.nbytes) * stale), &e});
    }
    report.min_feasible_bytes = std::max(report.min_feasible_bytes, stuck + n);
    if (stuck + n > limit)
        throw out_of_memory("MemoryBudget: " + what + " needs " + std::to_string(n) +
                            " bytes, but " + std::to_string(stuck) +
                            " bytes of activations cannot be evicted (held by the caller, pinned "
                            "or in use), over the budget of " +
                            std::to_string(limit) +
                            " bytes; the smallest feasible budget seen is at least " +
                            std::to_string(report.min_feasible_bytes) + " bytes");
    std::sort(cands.begin(), cands.end(),
              [](const Candidate& a, const Candidate& b) { return a.score < b.score; });
    // each live nested budget, innermost first, from its own entries (Note [Nested budgets])
    for (BudgetCap* c = in; c; c = c->outer.get()) {
        if (!c->alive)
            continue;
        auto under = [c](const BudgetEntry& e) {
            for (BudgetCap* d = e.cap.get(); d; d = d->outer.get())
                if (d == c)
                    return true;
            return false;
        };
        int64_t evictable = 0;
        for (const Candidate& x : cands)
            if (x.e->t.defined() && under(*x.e))
                evictable += x.e->nbytes;
        const int64_t kept = c->resident - evictable;
        c->report.min_feasible_bytes = std::max(c->report.min_feasible_bytes, kept + n);
        if (kept + n > c->limit)
            throw out_of_memory("MemoryBudget: " + what + " needs " + std::to_string(n) +
                                " bytes, but " + std::to_string(kept) +
                                " bytes of activations recorded under the nested budget of " +
                                std::to_string(c->limit) +
                                " bytes cannot be evicted (held by the caller, pinned or in "
                                "use), over it (the budget it is nested in: " +
                                std::to_string(limit) + " bytes)");
        for (const Candidate& x : cands) {
            if (c->resident + n <= c->limit)
                break;
            if (x.e->t.defined() && under(*x.e))
                evict(*x.e);
        }
    }
    for (const Candidate& c : cands) {
        if (resident + n <= limit)
            break;
        if (c.e->t.defined())
            evict(*c.e);
    }
}

// Note [Looking ahead in backward]: in forward, an entry's staleness is the time since it was
// last used (the paper's). In backward that says little about what is needed next: backward
// runs back through the forward, so a tensor recomputed for the node it is at is needed again by
// the next nodes, and the checkpoints it has not reached yet are needed last. So from a
// backward's first read until the next save or recorded op, staleness is how long before the
// entry backward read last (the frontier) the entry was made, Belady's distance to its next use
// for a chain, weighed by its cost as before. An entry made after the frontier is still held for
// a node not run yet or for a recomputation: it counts as needed next. With it, and with the
// first op after a backward no longer timed across it (Budget::read_done: the first layer looked
// the costliest of all and the chain's evicted middle was recomputed from it for node after
// node), the 32x1024 MLP at 1/5 of its peak recomputes 128-156 ops instead of 246-308 (the
// timing fix alone: 170; the planner's nested plan: 82).
double staleness(const BudgetEntry& e, uint64_t clock, bool backward, uint64_t frontier) {
    if (!backward)
        return double(clock - e.last_use + 1);
    return double(frontier >= e.made ? frontier - e.made + 1 : 1);
}

// Note [Op cost]: an entry's cost is the mean of every time measured for its op at its size
// (the forward's, from the previous recorded op, and each recomputation's), not the one time it
// was made: a single measurement on a shared host swings by several times, and since eviction
// weighs costs against each other, the choice (and how much a backward recomputed) swung with
// it; the layers of a chain now cost alike, and only their place in it tells them apart.
void Budget::measured(BudgetEntry& e, double seconds) {
    e.cost = seconds;
    auto& m = op_cost_[e.name + ":" + std::to_string(e.nbytes)];
    m.first += seconds;
    m.second += 1;
    e.mean = &m;  // an unordered_map's elements stay where they are
}

}  // namespace tg::autograd::detail
