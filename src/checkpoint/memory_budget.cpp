// tg::autograd::MemoryBudget: installs a Budget (budget.cpp, Note [Dynamic rematerialization])
// on this thread, as the saved-tensor hook and as what record() tells of each op.
#include "tapegrad/memory_budget.hpp"

#include "checkpoint/budget.hpp"

namespace tg::autograd {

MemoryBudget::MemoryBudget(int64_t bytes) {
    if (bytes <= 0)
        throw value_error("MemoryBudget: the budget must be positive, got " +
                          std::to_string(bytes) + " bytes");
    // Note [Nested budgets]: a budget made while another is active on the thread is a cap
    // inside it (detail::BudgetCap), not a budget of its own: what is recorded (and saved) from
    // then on is the outer budget's entries as before, tagged with the innermost cap alive, and
    // making room for one (or recomputing it) checks each live cap it is under, innermost first,
    // evicting that cap's own entries, and then the outer budget, evicting any. So the outer cap
    // holds over everything (the inner one's entries are its entries), the inner one over what
    // was recorded under it while it is alive; once it ends, its entries stay, under the outer
    // budget alone. Its report() counts its entries. PyTorch has no such budget; this is what a
    // nested scope's limit means elsewhere (a tighter limit for what runs inside it). A budget
    // made inside a non-reentrant checkpoint's function would take the saves from the
    // checkpoint's frame, and the function's recomputation in backward would make it again: an
    // error (under a budget the checkpoint installs no frame, so a nested one is fine there).
    if (detail::Budget* outer = detail::budget_slot()) {
        std::lock_guard<std::recursive_mutex> lock(outer->mu);
        budget_ = outer->shared_from_this();
        cap_ = std::make_shared<detail::BudgetCap>();
        cap_->limit = bytes;
        cap_->report.budget_bytes = bytes;
        cap_->outer = outer->cap;
        outer->cap = cap_;
        prev_ = outer;
        return;
    }
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
    if (cap_) {
        std::lock_guard<std::recursive_mutex> lock(budget_->mu);
        cap_->alive = false;
        if (budget_->cap == cap_)
            budget_->cap = cap_->outer;
        budget_->prune();
        return;
    }
    detail::budget_slot() = prev_;
    scope_.reset();
    std::lock_guard<std::recursive_mutex> lock(budget_->mu);
    budget_->prune();
}

MemoryBudgetReport MemoryBudget::report() const {
    std::lock_guard<std::recursive_mutex> lock(budget_->mu);
    budget_->prune();
    return cap_ ? cap_->report : budget_->report;
}

void MemoryBudget::reset_report() {
    std::lock_guard<std::recursive_mutex> lock(budget_->mu);
    budget_->prune();
    MemoryBudgetReport& r = cap_ ? cap_->report : budget_->report;
    r.evictions = r.rematerializations = 0;
    r.recompute_seconds = 0;
    r.recomputed_ops.clear();
    r.peak_saved_bytes = cap_ ? cap_->resident : budget_->resident;
    r.min_feasible_bytes = 0;
}

}  // namespace tg::autograd
