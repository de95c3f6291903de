// tg::autograd::MemoryBudget: installs a Budget (budget.cpp, Note [Dynamic rematerialization])
// on this thread, as the saved-tensor hook and as what record() tells of each op.
#include "tapegrad/memory_budget.hpp"

#include "checkpoint/budget.hpp"

namespace tg::autograd {

MemoryBudget::MemoryBudget(int64_t bytes) {
    if (bytes <= 0)
        throw value_error("MemoryBudget: the budget must be positive, got " +
                          std::to_string(bytes) + " bytes");
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
