// Note [Version counter]: a storage carries a version that every in-place op bumps. A tensor
// saved for backward remembers the version it was saved at; reading it in backward at another
// version means the values the formula needs are gone, and the engine reports it instead of
// computing a wrong gradient (as PyTorch does).
#include "autograd/record.hpp"

namespace tg::autograd::detail {

namespace {
thread_local SmallVector<Node::SavedInfo, 4> t_pending;
}

void take_saved(Node& n) {
    for (const auto& s : t_pending)
        n.saved_.push_back(s);
    t_pending.clear();
}

Saved::Saved(const Tensor& t, bool is_output) : is_output_(is_output) {
    if (!t.defined())
        return;
    version_ = t._version();
    t_ = is_output ? t.detach() : t;
    t_pending.push_back({t.impl()->storage.get(), int64_t(t.impl()->storage->nbytes)});
}

Tensor Saved::get() const {
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
