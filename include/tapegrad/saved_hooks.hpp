#pragma once
/// Saved-tensor hooks (PyTorch's torch.autograd.graph.saved_tensors_hooks and save_on_cpu):
/// decide how the tensors an op keeps for its backward are stored.
///
///     tg::autograd::SavedTensorsHooks hooks(
///         [](const tg::Tensor& t) -> std::any { return t.clone(); },        // pack
///         [](const std::any& p) { return std::any_cast<tg::Tensor>(p); });  // unpack
///     auto loss = model->forward(x).sum();   // every tensor saved for backward goes to pack
///     loss.backward();                       // backward asks unpack for it
#include <any>
#include <functional>
#include <memory>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::autograd {

namespace detail {
class SavedHooksScope;
struct UserSavedHooks;
}  // namespace detail

/// Installs pack and unpack on this thread for its scope (RAII; scopes nest, the innermost
/// wins; destroy them in reverse order, on the thread that made them). While it is installed,
/// every tensor an op saves for backward on this thread is given to pack, and what pack returns
/// (any value: a tensor, an index, a file name) is kept instead of the tensor; when backward
/// needs the tensor it calls unpack with that value. As in PyTorch:
///   - every saved tensor is offered: the op's inputs (parameters and the input batch too),
///     outputs and the buffers it makes for its own backward (Note [Public saved-tensor hooks]);
///   - the hooks a tensor was packed with unpack it, even after the scope has ended;
///   - pack and unpack run without hooks and without recording: their own ops save nothing;
///   - pack gets an op's input as it is, an output or an intermediate as a detached alias (its
///     history is the node that saves it), and must not modify it in place (autograd_error);
///   - unpack must return a tensor of the saved tensor's size, dtype and device (else
///     shape_error, dtype_error, device_error naming the op); the unpacked tensor gets the
///     saved tensor's history back, so a reentrant checkpoint's replay and create_graph
///     (double backward) work through hooks;
///   - an exception from pack or unpack propagates unchanged; the hooks stay installed until
///     the scope ends.
/// Unlike PyTorch, an unpacked tensor that is the saved buffer itself (identity hooks) is still
/// version-checked: modified in place since it was saved, backward throws autograd_error.
/// Inside tg::checkpoint(fn, ..., use_reentrant=false) the checkpoint's own hooks are
/// innermost; hooks installed inside fn take what fn saves in their scope (Note [Public
/// saved-tensor hooks] in src/autograd/saved_hooks.cpp).
class SavedTensorsHooks {
public:
    using PackHook = std::function<std::any(const Tensor&)>;
    using UnpackHook = std::function<Tensor(const std::any&)>;
    /// value_error if pack or unpack is empty.
    SavedTensorsHooks(PackHook pack, UnpackHook unpack);
    ~SavedTensorsHooks();
    SavedTensorsHooks(const SavedTensorsHooks&) = delete;
    SavedTensorsHooks& operator=(const SavedTensorsHooks&) = delete;

private:
    std::shared_ptr<detail::UserSavedHooks> hooks_;
    std::unique_ptr<detail::SavedHooksScope> scope_;
};

/// PyTorch's save_on_cpu: in its scope, a saved tensor on a device is copied to host memory
/// when saved and copied back to its device when backward needs it; CPU tensors are kept as
/// they are. Gradients are bit-identical to a plain step; the device keeps only what the
/// program itself still holds. pin_memory is accepted and does nothing: no backend has
/// pinned or mapped host buffers yet, so the copies are plain host memory either way.
class save_on_cpu : public SavedTensorsHooks {
public:
    explicit save_on_cpu(bool pin_memory = false);
};

}  // namespace tg::autograd

#pragma GCC visibility pop
