// Note [Version counter]: a storage carries a version that every in-place op bumps
// (runtime::mark_modified). A tensor saved for backward remembers the version it was saved at;
// reading it in backward at another version means the values the formula needs are gone, and the
// engine reports it instead of computing a wrong gradient (as PyTorch does).
#include "autograd/saved.hpp"

#include "autograd/engine.hpp"
#include "autograd/graph.hpp"
#include "backend/registry.hpp"
#include "core/pool.hpp"

namespace tg::autograd::detail {

namespace {
thread_local SmallVector<Node::SavedInfo, 4> t_pending;  // what take_saved hands the next node
thread_local SavedHooks* t_hooks = nullptr;
thread_local int t_hooks_disabled = 0;
thread_local UseObserver* t_observer = nullptr;

void count_saved(const Storage& st, int64_t sign) {
    backend::get(st.device).counters().on_saved(sign * int64_t(st.nbytes));
}
}  // namespace

void discard_pending_saved() {
    t_pending.clear();
}

void take_saved(Node& n) {
    for (const auto& s : t_pending)
        n.saved_.push_back(s);
    t_pending.clear();
}

SavedHooksScope::SavedHooksScope(SavedHooks& hooks)
    : prev_(t_hooks), prev_disabled_(t_hooks_disabled) {
    t_hooks = &hooks;
    t_hooks_disabled = 0;
}
SavedHooksScope::~SavedHooksScope() {
    t_hooks = prev_;
    t_hooks_disabled = prev_disabled_;
}
SavedHooksDisabled::SavedHooksDisabled() {
    ++t_hooks_disabled;
}
SavedHooksDisabled::~SavedHooksDisabled() {
    --t_hooks_disabled;
}
SavedHooks* current_saved_hooks() {
    return t_hooks_disabled > 0 ? nullptr : t_hooks;
}

UseObserverScope::UseObserverScope(UseObserver& observer) : prev_(t_observer) {
    t_observer = &observer;
}
UseObserverScope::~UseObserverScope() {
    t_observer = prev_;
}
bool observing_unrecorded() {
    return t_observer != nullptr;
}
void note_unrecorded(std::initializer_list<const Tensor*> inputs) {
    for (const Tensor* t : inputs)
        if (t->defined() && t->requires_grad())
            t_observer->used(*t);
}

// Note [Activation memory]: memory::Stats::saved_bytes is the activation memory of the recorded
// graphs: the buffers ops keep for backward that exist only because something recorded, i.e.
// ops' outputs, the intermediates ops make for their backward (dropout's mask, cross_entropy's
// log-softmax) and inputs that are themselves results of recorded ops. Leaves an op is given
// (parameters, the input batch, targets) are left out: the caller holds them anyway; so are
// views of parameters (w.t()), whose storage requires_grad_ marks (Storage::grad_leaf). Each
// buffer counts once however many Saved hold it (Storage::saved_refs), from the first Saved that
// takes it to the release of the last. Recording is single-threaded per graph, like the version
// counter, so saved_refs is a plain integer. Activations are what saved-tensor hooks are offered
// (the public ones, every Saved: Note [Public saved-tensor hooks] in saved_hooks.cpp).
Saved::Saved(const Tensor& t, SavedKind kind) : is_output_(kind == SavedKind::Output) {
    if (!t.defined())
        return;
    requires_grad_ = t.requires_grad();
    const bool activation = (kind != SavedKind::Input || t.grad_fn() != nullptr) &&
                            !t.impl()->storage->grad_leaf.load(std::memory_order_relaxed);
    if (SavedHooks* hooks = current_saved_hooks())
        if (activation || hooks->all_saved) {
            SavedHooksDisabled plain;  // what the hook saves for itself is plain
            packed_ = hooks->pack(t, kind);
            if (packed_)
                return;
        }
    version_ = t._version();
    t_ = is_output_ ? t.detach() : t;
    t_pending.push_back({t.impl()->storage.get(), int64_t(t.impl()->storage->nbytes)});
    counted_ = activation;
    hold();
}

void Saved::hold() {
    if (counted_ && t_.impl()->storage->saved_refs++ == 0)
        count_saved(*t_.impl()->storage, 1);
}

Saved::Saved(const Saved& o)
    : t_(o.t_),
      version_(o.version_),
      is_output_(o.is_output_),
      requires_grad_(o.requires_grad_),
      counted_(o.counted_),
      packed_(o.packed_) {
    hold();
}

Saved::Saved(Saved&& o) noexcept
    : t_(std::move(o.t_)),
      version_(o.version_),
      is_output_(o.is_output_),
      requires_grad_(o.requires_grad_),
      counted_(o.counted_),
      packed_(std::move(o.packed_)) {
    o.counted_ = false;
}

Saved& Saved::operator=(Saved o) noexcept {
    std::swap(t_, o.t_);
    std::swap(version_, o.version_);
    std::swap(is_output_, o.is_output_);
    std::swap(requires_grad_, o.requires_grad_);
    std::swap(counted_, o.counted_);
    std::swap(packed_, o.packed_);
    return *this;
}

Saved::~Saved() {
    if (counted_ && --t_.impl()->storage->saved_refs == 0)
        count_saved(*t_.impl()->storage, -1);
}

Tensor Saved::get() const {
    if (packed_) {
        SavedHooksDisabled plain;
        return packed_->unpack();
    }
    if (!t_.defined())
        return t_;
    const uint32_t now = t_._version();
    if (now != version_)
        throw autograd_error(
            "a tensor it saved (the " + std::string(is_output_ ? "output" : "input") +
            " of shape " + shape_str(t_.sizes()) +
            ") was modified by an in-place operation: it is at version " + std::to_string(now) +
            ", the backward needs version " + std::to_string(version_));
    if (is_output_ && GradMode::is_enabled() && current_node()) {
        // create_graph: the output must carry its history so the formula records through it
        auto impl = tg::detail::make_pooled<TensorImpl>(*t_.impl());
        impl->grad_fn = current_node()->shared_from_this();
        impl->output_nr = 0;
        return Tensor(std::move(impl));
    }
    return t_;
}

}  // namespace tg::autograd::detail
