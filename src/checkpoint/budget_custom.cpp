// What a MemoryBudget does beyond single-output ops (Note [Dynamic rematerialization] in
// budget.cpp): the outputs of an op over a list (cat, tg::checkpoint) and a custom
// autograd::Function's outputs and the buffers it saved for itself (Note [Replaying a custom
// forward] in src/autograd/custom_function.cpp) become entries like any op's output, each with
// the recipe the op gives; and create_graph through a kept tensor.
#include <algorithm>

#include "autograd/engine.hpp"
#include "backend/registry.hpp"
#include "checkpoint/budget.hpp"
#include "core/pool.hpp"

namespace tg::autograd::detail {

namespace {

bool whole(const Tensor& t) {
    return t.storage_offset() == 0 && t.is_contiguous() &&
           size_t(t.numel()) * element_size(t.dtype()) == t.impl()->storage->nbytes;
}

}  // namespace

void Budget::recorded_outputs(const char* name, const std::vector<Tensor>& inputs,
                              std::vector<BudgetMade> made) {
    const Clock::time_point now = Clock::now();
    const double cost = std::chrono::duration<double>(now - last_record_).count();
    last_record_ = now;
    settle();
    for (BudgetMade& m : made) {
        const Tensor& out = *m.t;
        if (!out.defined())
            continue;
        const Storage* st = out.impl()->storage.get();
        const bool of_input = std::any_of(inputs.begin(), inputs.end(), [st](const Tensor& x) {
            return x.defined() && x.impl()->storage.get() == st;
        });
        if (of_input || out.impl()->storage->grad_leaf.load(std::memory_order_relaxed))
            continue;  // an input's buffer (returned, or a view of it): not this op's
        BudgetEntry* e = nullptr;
        auto it = by_storage_.find(st);
        if (it != by_storage_.end()) {
            auto u = std::find(unnamed_.begin(), unnamed_.end(), it->second);
            if (u == unnamed_.end())
                continue;  // a buffer kept already (a view of an input, or saved twice)
            e = it->second;
            unnamed_.erase(u);
            e->awaiting_op = false;
        } else {
            e = new_entry(out, name);
        }
        e->name = name;
        measured(*e, cost);
        if (!m.recipe || !whole(out)) {
            pin(*e, m.recipe ? " (a view of its buffer)" : m.pinned_why);
            continue;
        }
        e->pinned = false;
        e->inputs.clear();
        for (const Tensor& t : inputs) {
            BudgetEntry::Input in;
            auto at = t.defined() ? by_storage_.find(t.impl()->storage.get()) : by_storage_.end();
            if (at != by_storage_.end()) {
                in.entry = at->second->shared_from_this();
                in.sizes = t.sizes();
                in.strides = t.strides();
                in.offset = t.storage_offset();
            } else if (t.defined()) {
                in.plain = t.detach();
            }
            in.version = t.defined() ? t._version() : 0;
            e->inputs.push_back(std::move(in));
        }
        e->recipe = std::move(m.recipe);
    }
}

// Note [create_graph through a kept tensor]: a budget's handle unpacks a new alias of the buffer
// (recomputed or not), which has no history. A create_graph backward records its formula through
// the saved tensors, so there the alias is given the history the saved tensor had: an input's
// grad_fn and output number (kept by the handle in a TensorImpl without a buffer, so that it
// is released as tensors release theirs), or, for an output, the node running backward, as
// Saved::get does. Its values are the first run's bit for bit, so the second-order graph is the
// plain one.
std::shared_ptr<TensorImpl> saved_history(const Tensor& t, SavedKind kind) {
    if (kind == SavedKind::Output || !t.grad_fn())
        return nullptr;
    auto h = tg::detail::make_pooled<TensorImpl>();
    h->grad_fn = t.grad_fn();
    h->output_nr = t.impl()->output_nr;
    return h;
}

Tensor with_history(Tensor t, SavedKind kind, const std::shared_ptr<TensorImpl>& history) {
    if (!GradMode::is_enabled())
        return t;
    Node* at = current_node();
    if (kind == SavedKind::Output && at) {
        t.impl()->grad_fn = at->shared_from_this();
        t.impl()->output_nr = 0;
    } else if (history) {
        t.impl()->grad_fn = history->grad_fn;
        t.impl()->output_nr = history->output_nr;
    }
    return t;
}

void budget_recorded_outputs(Budget& b, const char* name, const std::vector<Tensor>& inputs,
                             std::vector<BudgetMade> made) {
    std::lock_guard<std::recursive_mutex> lock(b.mu);
    b.recorded_outputs(name, inputs, std::move(made));
}

}  // namespace tg::autograd::detail
