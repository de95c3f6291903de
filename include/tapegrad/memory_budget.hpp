#pragma once
/// Training under a memory budget: dynamic tensor rematerialization (Kirisame et al., "Dynamic
/// Tensor Rematerialization", ICLR 2021).
///
///     tg::autograd::MemoryBudget budget(64 << 20);  // this thread: activations <= 64 MiB
///     auto loss = model->forward(x, y);              // any code: branches, loops
///     loss.backward();                               // evicted activations recomputed
///     auto r = budget.report();                      // evictions, recomputed ops, peak
///
/// While it is installed, every activation a recorded op makes or saves (Note [Activation
/// memory]) is kept by the budget, counted in memory::Stats::saved_bytes, and may be evicted
/// when a new one would push the count over the budget: the one with the lowest
/// cost / (bytes × staleness) among those nothing but autograd holds (a tensor the caller holds
/// is never touched). A backward that needs an evicted tensor recomputes it from the op's
/// recipe, recursively. Ops without a recipe are pinned (never evicted; report().pinned_ops).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#pragma GCC visibility push(default)

namespace tg::autograd {

namespace detail {
struct Budget;
struct BudgetCap;
class SavedHooksScope;
}  // namespace detail

struct MemoryBudgetReport {
    int64_t budget_bytes = 0;
    int64_t evictions = 0;
    int64_t rematerializations = 0;  // tensors recomputed for a backward
    double recompute_seconds = 0;    // measured time of those recomputations
    struct Op {
        int64_t count = 0;
        double seconds = 0;
    };
    std::map<std::string, Op> recomputed_ops;  // by op name
    /// The most activation bytes the budget held at once (<= budget_bytes).
    int64_t peak_saved_bytes = 0;
    /// A lower bound on a feasible budget: the most bytes seen that could not be evicted (held
    /// by the caller, pinned, or in use) plus the tensor being added.
    int64_t min_feasible_bytes = 0;
    std::vector<std::string> pinned_ops;  // ops whose outputs were kept: no recipe, or in place
};

/// Keeps the activation memory of what this thread records under `bytes` for its scope (RAII;
/// destroy on the thread that made it). A graph recorded under it still rematerializes after
/// the scope ends. out_of_memory when a tensor cannot be kept within the budget (naming the
/// budget and the smallest feasible value seen); value_error for a budget <= 0.
/// Custom autograd::Functions are replayed (their forward runs again), tg::checkpoint's
/// recomputation runs under the budget, and create_graph works through recomputed tensors.
/// A budget made while another is active on the thread is a tighter cap, while it is alive, on
/// what is recorded under it; the outer budget still holds over everything (its report() is
/// about what was recorded under it). value_error inside a non-reentrant checkpoint's function
/// (make the budget around the checkpoint instead).
class MemoryBudget {
public:
    explicit MemoryBudget(int64_t bytes);
    ~MemoryBudget();
    MemoryBudget(const MemoryBudget&) = delete;
    MemoryBudget& operator=(const MemoryBudget&) = delete;
    MemoryBudgetReport report() const;
    /// Starts the report's counters and peak again (the budget and what it holds stay).
    void reset_report();

private:
    std::shared_ptr<detail::Budget> budget_;
    std::shared_ptr<detail::BudgetCap> cap_;  // a nested budget's
    std::unique_ptr<detail::SavedHooksScope> scope_;
    detail::Budget* prev_;
};

}  // namespace tg::autograd

#pragma GCC visibility pop
