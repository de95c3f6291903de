// Note [Dynamic rematerialization]: a MemoryBudget (include/tapegrad/memory_budget.hpp) is
// Kirisame et al.'s DTR over the tape. While it is active on a thread:
//   - every output of a recorded op (record() tells budget_recorded) becomes an entry: the
//     budget's own alias of the buffer, the op's name, its inputs (their entries, or leaves held
//     as they are) and the time since the previous recorded op (the op's measured cost). An op
//     that can recompute its output calls recipe() right after record(); one that does not is
//     pinned (its output is never evicted, and it keeps no inputs). A view or an in-place result
//     of a buffer that has an entry is that entry.
//   - the budget is the installed saved-tensor hook (Note [Saved tensor hooks]): every Saved of an
//     activation becomes a handle to its buffer's entry (a buffer without one, e.g. an op's own
//     intermediate, gets a pinned entry), so Saved no longer keeps buffers alive; entries do.
//   - resident entries are the activation bytes (memory::Stats::saved_bytes); before an entry
//     is added or recomputed past the budget, entries nothing needs are dropped, then resident
//     ones are evicted, lowest cost / (bytes × staleness) first, where cost counts the evicted
//     entries next to it too (the paper's evicted neighbourhood, Note [Evicted neighbourhood]),
//     those no Saved holds (kept only to recompute others, e.g. a linear output under its tanh)
//     before any other. Only an entry whose buffer nothing else holds (no tensor of the caller's,
//     no unpacked copy, no recomputation using it) and that is at the version it was made at can be
//     evicted. When nothing more can go, out_of_memory says how much could not.
//   - a handle's unpack recomputes an evicted entry from its recipe without recording, its
//     inputs first (recursively), under RecomputeScope (batch norm does not update its running
//     statistics again, Note [Side effects of a recomputation]) and the op's own random state
//     (dropout keeps the generator state it drew from). The buffer is remade at the version it
//     had, so the version check of in-place modifications still fires.
#include "checkpoint/budget.hpp"

#include <algorithm>

#include "backend/registry.hpp"
#include "core/pool.hpp"
#include "tapegrad/autograd.hpp"

namespace tg::autograd::detail {

Tensor alias(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset) {
    auto impl = tg::detail::make_pooled<TensorImpl>();
    impl->storage = t.impl()->storage;
    impl->sizes = sizes;
    impl->strides = strides;
    impl->offset = offset;
    impl->dtype = t.dtype();
    return Tensor(std::move(impl));
}
Tensor alias(const Tensor& t) {
    return alias(t, t.sizes(), t.strides(), t.storage_offset());
}

namespace {

bool whole_buffer(const Tensor& t) {
    return t.storage_offset() == 0 && t.is_contiguous() &&
           size_t(t.numel()) * element_size(t.dtype()) == t.impl()->storage->nbytes;
}

void count(const Tensor& t, int64_t bytes) {
    backend::get(t.device()).counters().on_saved(bytes);
}

/// What a Saved of an activation holds under a budget: its buffer's entry, and its view of it.
struct BudgetHandle final : PackedSaved {
    std::shared_ptr<Budget> budget;
    std::shared_ptr<BudgetEntry> entry;
    Shape sizes, strides;
    int64_t offset = 0;
    uint32_t version = 0;
    SavedKind kind = SavedKind::Input;
    std::shared_ptr<TensorImpl> history;  // for create_graph (saved_history)
    ~BudgetHandle() override {
        if (entry)
            entry->handles.fetch_sub(1, std::memory_order_relaxed);
    }
    Tensor unpack() override {
        std::lock_guard<std::recursive_mutex> lock(budget->mu);
        budget->reading(*entry);
        const Tensor base = budget->materialize(*entry);
        budget->read_done();
        const uint32_t now = base.impl()->storage->version;
        if (now != version)
            throw autograd_error(
                "a tensor it saved (the " +
                std::string(kind == SavedKind::Output ? "output" : "input") + " of shape " +
                shape_str(sizes) + ") was modified by an in-place operation: it is at version " +
                std::to_string(now) + ", the backward needs version " + std::to_string(version));
        return with_history(alias(base, sizes, strides, offset), kind, history);
    }
};

}  // namespace

Budget::Budget(int64_t bytes) : limit(bytes) {
    report.budget_bytes = bytes;
}

Budget::~Budget() {
    for (auto& e : entries_)
        if (e && e->t.defined())
            count(e->t, -e->nbytes);
}

void Budget::pin(BudgetEntry& e, const std::string& why) {
    e.pinned = true;
    e.inputs.clear();
    const std::string what = e.name.empty() ? why : e.name + why;
    if (!what.empty() && std::find(report.pinned_ops.begin(), report.pinned_ops.end(), what) ==
                             report.pinned_ops.end())
        report.pinned_ops.push_back(what);
}

void Budget::settle() {
    if (last_made_ && !last_made_->recipe)
        pin(*last_made_, "");
    last_made_ = nullptr;
}

void Budget::name_pending(const char* name) {
    for (BudgetEntry* e : unnamed_) {
        e->name = name;
        pin(*e, e->awaiting_op ? " (an output of a multi-output op)" : " (a buffer it keeps)");
        e->awaiting_op = false;
    }
    unnamed_.clear();
}

void Budget::add_resident(BudgetEntry& e, const Tensor& t) {
    e.t = alias(t, e.sizes, e.strides, e.offset);
    by_storage_[t.impl()->storage.get()] = &e;
    resident += e.nbytes;
    count(t, e.nbytes);
    report.peak_saved_bytes = std::max(report.peak_saved_bytes, resident);
    for_caps(e, [&](BudgetCap& c) {
        c.resident += e.nbytes;
        c.report.peak_saved_bytes = std::max(c.report.peak_saved_bytes, c.resident);
    });
    e.last_use = ++clock_;
}

void Budget::drop_resident(BudgetEntry& e) {
    by_storage_.erase(e.t.impl()->storage.get());
    resident -= e.nbytes;
    for_caps(e, [&](BudgetCap& c) { c.resident -= e.nbytes; });
    count(e.t, -e.nbytes);
    e.t = Tensor();
}

void Budget::evict(BudgetEntry& e) {
    drop_resident(e);
    ++report.evictions;
    for_caps(e, [](BudgetCap& c) { ++c.report.evictions; });
}

void Budget::prune() {
    settle();
    // newest first: dropping an entry lets go of its inputs' entries, which come before it
    for (size_t i = entries_.size(); i-- > 0;) {
        BudgetEntry& e = *entries_[i];
        if (entries_[i].use_count() > 1 || (e.t.defined() && e.t.impl()->storage.use_count() > 1))
            continue;
        if (e.t.defined())
            drop_resident(e);
        unnamed_.erase(std::remove(unnamed_.begin(), unnamed_.end(), &e), unnamed_.end());
        entries_[i].reset();
    }
    entries_.erase(std::remove(entries_.begin(), entries_.end(), nullptr), entries_.end());
    prune_at_ = std::max<size_t>(64, 2 * entries_.size());
}

BudgetEntry* Budget::new_entry(const Tensor& out, const char* name) {
    if (entries_.size() >= prune_at_)
        prune();
    const int64_t n = int64_t(out.impl()->storage->nbytes);
    ensure_room(n, std::string("the output of ") + name + " (" + shape_str(out.sizes()) + ")",
                cap.get());
    entries_.push_back(std::make_shared<BudgetEntry>());
    BudgetEntry* e = entries_.back().get();
    e->cap = cap;
    e->sizes = out.sizes();
    e->strides = out.strides();
    e->offset = out.storage_offset();
    e->dtype = out.dtype();
    e->nbytes = n;
    e->version = out.impl()->storage->version;
    add_resident(*e, out);
    e->made = e->last_use;
    return e;
}

void Budget::recorded(const char* name, std::initializer_list<const Tensor*> inputs,
                      const Tensor& out) {
    const Clock::time_point now = Clock::now();
    const double cost = std::chrono::duration<double>(now - last_record_).count();
    last_record_ = now;
    backward_ = false;
    settle();
    // an output the op saved before recording (save_output) already has its entry: this op's
    BudgetEntry* e = nullptr;
    auto it = out.defined() ? by_storage_.find(out.impl()->storage.get()) : by_storage_.end();
    if (it != by_storage_.end() && it->second->awaiting_op) {
        e = it->second;
        unnamed_.erase(std::remove(unnamed_.begin(), unnamed_.end(), e), unnamed_.end());
        e->awaiting_op = false;
    }
    name_pending(name);
    if (!e) {
        if (it != by_storage_.end() || !out.defined() ||
            out.impl()->storage->grad_leaf.load(std::memory_order_relaxed))
            return;  // a view or an in-place result of a kept buffer, or of a parameter
        e = new_entry(out, name);
    }
    e->name = name;
    measured(*e, cost);
    if (!whole_buffer(out)) {
        pin(*e, " (a view of its buffer)");
        return;
    }
    for (const Tensor* t : inputs) {
        BudgetEntry::Input in;
        auto at = t->defined() ? by_storage_.find(t->impl()->storage.get()) : by_storage_.end();
        if (at != by_storage_.end()) {
            in.entry = at->second->shared_from_this();
            in.sizes = t->sizes();
            in.strides = t->strides();
            in.offset = t->storage_offset();
            in.version = t->_version();
        } else if (t->defined()) {
            in.plain = alias(*t);
            in.version = t->_version();
        }
        e->inputs.push_back(std::move(in));
    }
    last_made_ = e;
}

void Budget::set_recipe(const Tensor& out, Recipe r) {
    if (last_made_ && by_storage_.count(out.impl()->storage.get()) &&
        by_storage_[out.impl()->storage.get()] == last_made_)
        last_made_->recipe = std::move(r);
}

std::shared_ptr<PackedSaved> Budget::pack(const Tensor& t, SavedKind kind) {
    std::lock_guard<std::recursive_mutex> lock(mu);
    settle();
    backward_ = false;  // a save: a forward
    std::shared_ptr<BudgetEntry> e;
    auto it = by_storage_.find(t.impl()->storage.get());
    if (it != by_storage_.end()) {
        e = it->second->shared_from_this();
        e->last_use = ++clock_;
        if (!e->pinned && t._version() != e->version)
            pin(*e, " (modified in place)");
    } else {
        const int64_t n = int64_t(t.impl()->storage->nbytes);
        try {
            ensure_room(n, "a tensor saved for backward (" + shape_str(t.sizes()) + ")", cap.get());
        } catch (...) {
            discard_pending_saved();
            throw;
        }
        e = std::make_shared<BudgetEntry>();
        e->cap = cap;
        e->sizes = t.sizes();
        e->strides = t.strides();
        e->offset = t.storage_offset();
        e->dtype = t.dtype();
        e->nbytes = n;
        e->version = t._version();
        if (kind == SavedKind::Output) {
            e->awaiting_op = true;  // its op records next (Budget::recorded)
            unnamed_.push_back(e.get());
        } else if (t.grad_fn()) {
            pin(*e, std::string(t.grad_fn()->op()) + " (no recipe)");
        } else {
            e->pinned = true;
            unnamed_.push_back(e.get());
        }
        add_resident(*e, t);
        e->made = e->last_use;
        entries_.push_back(e);
    }
    auto h = std::make_shared<BudgetHandle>();
    h->budget = shared_from_this();
    e->handles.fetch_add(1, std::memory_order_relaxed);
    h->entry = std::move(e);
    h->sizes = t.sizes();
    h->strides = t.strides();
    h->offset = t.storage_offset();
    h->version = t._version();
    h->kind = kind;
    h->history = saved_history(t, kind);
    return h;
}

void budget_recorded(Budget& b, const char* name, std::initializer_list<const Tensor*> inputs,
                     const Tensor& out) {
    std::lock_guard<std::recursive_mutex> lock(b.mu);
    b.recorded(name, inputs, out);
}

void budget_recorded_list(Budget& b, const char* name) {
    std::lock_guard<std::recursive_mutex> lock(b.mu);
    b.name_pending(name);
}

void budget_recipe(Budget& b, const Tensor& out, Recipe r) {
    std::lock_guard<std::recursive_mutex> lock(b.mu);
    b.set_recipe(out, std::move(r));
}

bool budget_keeps(Budget& b, const Storage* st) {
    std::lock_guard<std::recursive_mutex> lock(b.mu);
    return b.keeps(st);
}

}  // namespace tg::autograd::detail
