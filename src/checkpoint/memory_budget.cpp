// tg::autograd::MemoryBudget: installs a Budget (budget.cpp, Note [Dynamic rematerialization])
// on this thread, as the saved-tensor hook and as what record() tells of each op.
#include "tapegrad/memory_budget.hpp"

#include "checkpoint/budget.hpp"

namespace tg::autograd {

MemoryBudget::MemoryBudget(int64_t bytes) {
    if (bytes <= 0)
        throw value_error("MemoryBudget: the budget must be positive, got " +
                          std::to_string(bytes) + " bytes");
    // Note [Budgets do not nest]: a budget made while another is active on the thread would
    // take what is recorded from then on (the innermost saved-tensor hooks take the saves), and
    // the outer budget would no longer count it: its cap would silently stop holding. Inside a
    // non-reentrant checkpoint's function it would take the saves from the checkpoint's frame,
    // and the function's recomputation in backward would make a second budget. Both are errors
    // until a budget can count the ones nested in it.
    if (const detail::Budget* outer = detail::budget_slot())
        throw value_error("MemoryBudget(" + std::to_string(bytes) +
                          " bytes): another MemoryBudget (" + std::to_string(outer->limit) +
                          " bytes) is active on this thread, and budgets do not nest; lower "
                          "the outer budget, or end it before making this one");
    if (const detail::SavedHooks* h = detail::current_saved_hooks(); h && h->checkpoint_frame)
        throw value_error("MemoryBudget(" + std::to_string(bytes) +
                          " bytes): made inside the function of a non-reentrant checkpoint "
                          "(use_reentrant=false); make the budget around the checkpoint, where "
                          "it keeps the function's activations itself");
    budget_ = std::make_shared<detail::Budget>(bytes);
    scope_ = std::make_unique<detail::SavedHooksScope>(*budget_);
    prev_ = detail::budget_slot();
    detail::budget_slot() = budget_.get();
}

MemoryBudget::~MemoryBudget() {
    detail::budget_slot() = prev_;
    scope_.reset();
    std::lock_guard<std::recursive_mutex> lock(budget_->mu);
    budget_->prune();
}

MemoryBudgetReport MemoryBudget::report() const {
    std::lock_guard<std::recursive_mutex> lock(budget_->mu);
    budget_->prune();
    return budget_->report;
}

void MemoryBudget::reset_report() {
    std::lock_guard<std::recursive_mutex> lock(budget_->mu);
    budget_->prune();
    MemoryBudgetReport& r = budget_->report;
    r.evictions = r.rematerializations = 0;
    r.recompute_seconds = 0;
    r.recomputed_ops.clear();
    r.peak_saved_bytes = budget_->resident;
    r.min_feasible_bytes = 0;
}

}  // namespace tg::autograd
