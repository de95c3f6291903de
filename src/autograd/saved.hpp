#pragma once
// Tensors an op keeps for its backward (saved.cpp): version-checked, counted as activation
// memory, and offered to the saved-tensor hooks (hooks.hpp).
#include <memory>

#include "autograd/hooks.hpp"
#include "tapegrad/tensor.hpp"

namespace tg::autograd::detail {

/// A tensor saved for backward. Inputs are kept as they are; outputs are kept as a detached
/// alias (an output that held its own grad_fn would be a cycle) and re-attached to the node
/// when a create_graph backward needs them. Either way the storage version is checked when the
/// backward reads it (Note [Version counter] in saved.cpp). Every Saved that holds an activation
/// counts its buffer in memory::Stats::saved_bytes (Note [Activation memory] in saved.cpp), or
/// hands it to the installed saved-tensor hooks (Note [Saved tensor hooks] in hooks.hpp).
class Saved {
public:
    Saved() = default;
    Saved(const Tensor& t, SavedKind kind);
    Saved(const Saved& o);
    Saved(Saved&& o) noexcept;
    Saved& operator=(Saved o) noexcept;
    ~Saved();
    /// The saved tensor; throws autograd_error if it was modified in place since it was saved.
    Tensor get() const;
    bool defined() const { return t_.defined() || packed_ != nullptr; }
    /// Whether the tensor required grad when it was saved (what a hook's unpack, such as a
    /// MemoryBudget's, may not say: its tensor has no history).
    bool requires_grad() const { return requires_grad_; }

private:
    void hold();
    Tensor t_;
    uint32_t version_ = 0;
    bool is_output_ = false;
    bool requires_grad_ = false;
    bool counted_ = false;                 // t_ is activation memory (not a leaf the op was given)
    std::shared_ptr<PackedSaved> packed_;  // set: a hook keeps the tensor
};

/// Saves one of the op's inputs.
inline Saved save(const Tensor& t) {
    return Saved(t, SavedKind::Input);
}
/// Saves the op's output.
inline Saved save_output(const Tensor& t) {
    return Saved(t, SavedKind::Output);
}
/// Saves a buffer the op computed for its backward alone (not an input or output).
inline Saved save_intermediate(const Tensor& t) {
    return Saved(t, SavedKind::Intermediate);
}

}  // namespace tg::autograd::detail
