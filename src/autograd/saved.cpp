// Note [Version counter]: a storage carries a version that every in-place op bumps. A tensor
// saved for backward remembers the version it was saved at; reading it in backward at another
// version means the values the formula needs are gone, and the engine reports it instead of
// computing a wrong gradient (as PyTorch does).
#include "autograd/record.hpp"
#include "backend/registry.hpp"

namespace tg::autograd::detail {

namespace {
thread_local SmallVector<Node::SavedInfo, 4> t_pending;
}

void discard_pending_saved() {
    t_pending.clear();
}

void take_saved(Node& n) {
    for (const auto& s : t_pending)
        n.saved_.push_back(s);
    t_pending.clear();
}

// Note [Activation memory]: memory::Stats::saved_bytes is the activation memory of the recorded
// graphs: the buffers ops keep for backward that exist only because something recorded, i.e.
// ops' outputs, the intermediates ops make for their backward (dropout's mask, cross_entropy's
// log-softmax) and inputs that are themselves results of recorded ops. Leaves an op is given
// (parameters, the input batch, targets) are left out: the caller holds them anyway; so are
// views of parameters (w.t()), whose storage requires_grad_ marks (Storage::grad_leaf). Each
// buffer counts once however many Saved hold it (Storage::saved_refs), from the first Saved that
// takes it to the release of the last. Recording is single-threaded per graph, like the version
// counter, so saved_refs is a plain integer.
Saved::Saved(const Tensor& t, bool is_output, bool intermediate) : is_output_(is_output) {
    if (!t.defined())
        return;
    const bool activation =
        (is_output || intermediate || t.grad_fn() != nullptr) && !t.impl()->storage->grad_leaf;
    if (activation && frame_claims(*this, t, is_output, intermediate))
        return;
    version_ = t._version();
    t_ = is_output ? t.detach() : t;
    t_pending.push_back({t.impl()->storage.get(), int64_t(t.impl()->storage->nbytes)});
    counted_ = activation;
    hold();
}

void Saved::hold() {
    if (!counted_)
        return;
    Storage& st = *t_.impl()->storage;
    if (st.saved_refs++ == 0)
        backend::get(st.device).counters().on_saved(int64_t(st.nbytes));
}

Saved::Saved(const Saved& o)
    : t_(o.t_),
      version_(o.version_),
      output_nr_(o.output_nr_),
      is_output_(o.is_output_),
      counted_(o.counted_),
      frame_(o.frame_),
      slot_(o.slot_) {
    hold();
    if (frame_)
        frame_ref(*frame_, slot_);
}

Saved::Saved(Saved&& o) noexcept
    : t_(std::move(o.t_)),
      version_(o.version_),
      output_nr_(o.output_nr_),
      is_output_(o.is_output_),
      counted_(o.counted_),
      frame_(std::move(o.frame_)),
      slot_(o.slot_) {
    o.counted_ = false;
}

Saved& Saved::operator=(Saved o) noexcept {
    std::swap(t_, o.t_);
    std::swap(version_, o.version_);
    std::swap(output_nr_, o.output_nr_);
    std::swap(is_output_, o.is_output_);
    std::swap(counted_, o.counted_);
    std::swap(frame_, o.frame_);
    std::swap(slot_, o.slot_);
    return *this;
}

Saved::~Saved() {
    if (frame_)
        frame_unref(*frame_, slot_);
    if (!counted_)
        return;
    Storage& st = *t_.impl()->storage;
    if (--st.saved_refs == 0)
        backend::get(st.device).counters().on_saved(-int64_t(st.nbytes));
}

Tensor Saved::get() const {
    if (frame_)
        return frame_get(*frame_, slot_);
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
        impl->output_nr = output_nr_;
        return Tensor(std::move(impl));
    }
    return t_;
}

}  // namespace tg::autograd::detail
