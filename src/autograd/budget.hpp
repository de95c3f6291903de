#pragma once
// What the tape tells an active MemoryBudget (include/tapegrad/memory_budget.hpp, Note [Dynamic
// rematerialization] in budget.cpp): each recorded op's output, and, from the ops that can
// recompute it, how. With no budget active on the thread each is one thread-local load.
#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

#include "tapegrad/tensor.hpp"

namespace tg::autograd::detail {

struct Budget;
/// The active budget of this thread, or null.
inline Budget*& budget_slot() {
    static thread_local Budget* b = nullptr;
    return b;
}

/// How an op computes its output again from the inputs it recorded (in record()'s order; an
/// undefined input stays undefined). It runs without recording and must give the same bits.
using Recipe = std::function<Tensor(const std::vector<Tensor>&)>;

/// record() made `out` the output of op `name` with these inputs.
void budget_recorded(Budget& b, const char* name, std::initializer_list<const Tensor*> inputs,
                     const Tensor& out);
/// record_list() recorded op `name` (its outputs are pinned).
void budget_recorded_list(Budget& b, const char* name);
void budget_recipe(Budget& b, const Tensor& out, Recipe r);
bool budget_keeps(Budget& b, const Storage* st);

/// A buffer an op over a list of inputs made (cat's output; a custom Function's outputs and the
/// tensors it saved), and how it is made again (empty: pinned).
struct BudgetMade {
    const Tensor* t;
    Recipe recipe;
    const char* pinned_why = "";  // with an empty recipe: why, for report().pinned_ops
};
/// Op `name` (record_list) ran on `inputs` (in order; undefined ones too) and made these buffers
/// (budget_custom.cpp). A custom Function calls it before its node records, cat after.
void budget_recorded_outputs(Budget& b, const char* name, const std::vector<Tensor>& inputs,
                             std::vector<BudgetMade> made);

/// References to st that the active budget holds (0 or 1): an in-place op discounts them.
inline long budget_refs(const Storage* st) {
    Budget* b = budget_slot();
    return b && budget_keeps(*b, st) ? 1 : 0;
}

/// Whether a budget is active on this thread: an op whose recipe captures anything costly to
/// copy builds it only then.
inline bool recipes_wanted() {
    return budget_slot() != nullptr;
}

/// Called right after record(): how `out` is recomputed. Ops that do not call it are pinned
/// under a budget (their outputs are never evicted).
template <class R>
void recipe(const Tensor& out, R&& r) {
    if (Budget* b = budget_slot())
        budget_recipe(*b, out, Recipe(std::forward<R>(r)));
}

}  // namespace tg::autograd::detail
