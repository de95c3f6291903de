// The public saved-tensor hooks: tg::autograd::SavedTensorsHooks and save_on_cpu.
//
// Note [Public saved-tensor hooks]: a SavedTensorsHooks is a SavedHooks (Note [Saved tensor
// hooks] in hooks.hpp) that asks for every Saved (all_saved), not only activations: PyTorch's
// pack_hook sees every saved tensor, parameters and the input batch included, and so does ours.
// The checkpoint's frame, also a SavedHooks, still takes only activations. Only the innermost
// hooks are asked, so:
//   - hooks installed around tg::checkpoint(fn, ..., use_reentrant=false) see what is saved
//     outside fn (the checkpoint keeps fn's inputs itself, as PyTorch's does, and hands fn's
//     activations to its frame);
//   - hooks installed inside fn see what fn saves in their scope, both in the forward (their
//     handles are then what backward reads: the checkpoint drops nothing there) and again in
//     each recomputation of fn (those handles belong to the recomputation's own nodes, which
//     never run backward, so unpack is not called for them).
// A handle keeps the hooks (unpack works after the scope has ended), the value pack returned
// and what it needs to check and re-attach the tensor: size, dtype, device, a weak reference
// to the buffer and its version, and for an input that requires grad its history (its grad_fn,
// or a leaf's AccumulateGrad). The unpacked tensor gets that history back (an output, in a
// create_graph backward: the node being run, as Saved::get does), so a reentrant checkpoint's
// replay and double backward through hooks reach the same leaves. The history holds no buffer, so
// save_on_cpu frees the device's activations.
#include "tapegrad/saved_hooks.hpp"

#include <utility>

#include "autograd/engine.hpp"
#include "autograd/graph.hpp"
#include "autograd/hooks.hpp"
#include "core/pool.hpp"
#include "tapegrad/autograd.hpp"

namespace tg::autograd {

namespace detail {

struct UserSavedHooks final : SavedHooks, std::enable_shared_from_this<UserSavedHooks> {
    SavedTensorsHooks::PackHook pack_fn;
    SavedTensorsHooks::UnpackHook unpack_fn;
    std::shared_ptr<PackedSaved> pack(const Tensor& t, SavedKind kind) override;
};

namespace {

struct UserPacked final : PackedSaved {
    std::shared_ptr<UserSavedHooks> hooks;
    std::any value;
    Shape sizes;
    Dtype dtype = Dtype::Float32;
    Device device;
    std::weak_ptr<Storage> storage;
    uint32_t version = 0;
    SavedKind kind = SavedKind::Input;
    std::shared_ptr<Node> grad_fn;  // an input's history, if it requires grad
    uint32_t output_nr = 0;
    Tensor unpack() override;
};

std::string what_saved(SavedKind kind) {
    return kind == SavedKind::Input    ? "an input"
           : kind == SavedKind::Output ? "the output"
                                       : "an intermediate";
}

}  // namespace

std::shared_ptr<PackedSaved> UserSavedHooks::pack(const Tensor& t, SavedKind kind) {
    auto h = std::make_shared<UserPacked>();
    h->hooks = shared_from_this();
    h->sizes = t.sizes();
    h->dtype = t.dtype();
    h->device = t.device();
    h->storage = t.impl()->storage;
    h->version = t._version();
    h->kind = kind;
    if (kind == SavedKind::Input && t.requires_grad()) {
        h->grad_fn = t.grad_fn() ? t.grad_fn() : grad_accumulator(t);
        h->output_nr = t.grad_fn() ? t.impl()->output_nr : 0;
    }
    try {
        NoGradGuard plain;
        h->value = pack_fn(kind == SavedKind::Input ? t : t.detach());
    } catch (...) {
        discard_pending_saved();  // the op is abandoned: its node is never recorded
        throw;
    }
    if (t._version() != h->version) {
        discard_pending_saved();
        throw autograd_error("saved_tensors_hooks: pack modified " + what_saved(kind) +
                             " of shape " + shape_str(t.sizes()) +
                             " in place; a pack hook must not modify the tensor it is given");
    }
    return h;
}

namespace {

Tensor UserPacked::unpack() {
    Tensor r;
    {
        NoGradGuard plain;
        r = hooks->unpack_fn(value);
    }
    Node* n = current_node();
    auto op = [&] {  // only when it throws
        return "saved_tensors_hooks: unpack of " + what_saved(kind) + " of " +
               (n ? n->op() : std::string("an op")) + " (shape " + shape_str(sizes) + ")";
    };
    if (!r.defined())
        throw value_error(op() + " returned an undefined tensor");
    if (r.sizes() != sizes)
        throw shape_error(op() + " returned a tensor of shape " + shape_str(r.sizes()) +
                          "; it must return the saved tensor's shape");
    if (r.dtype() != dtype)
        throw dtype_error(op() + " (" + dtype_name(dtype) + ") returned a " +
                          dtype_name(r.dtype()) + " tensor; it must return the saved dtype");
    if (r.device() != device)
        throw device_error(op() + " (on " + device.str() + ") returned a tensor on " +
                           r.device().str() + "; it must return it on the saved device");
    const std::shared_ptr<Storage> st = storage.lock();
    if (st && st == r.impl()->storage && st->version != version)
        throw autograd_error(op() +
                             " returned the saved buffer, which was modified by an in-place "
                             "operation: it is at version " +
                             std::to_string(st->version) + ", the backward needs version " +
                             std::to_string(version));
    // the saved tensor's history, as PyTorch gives it back: an input's always (a reentrant
    // checkpoint's replay reads requires_grad), an output's when a create_graph backward records
    // through it (the node being run, as Saved::get does)
    std::shared_ptr<Node> fn = kind != SavedKind::Output     ? grad_fn
                               : n && GradMode::is_enabled() ? n->shared_from_this()
                                                             : nullptr;
    if (!fn)
        return r.requires_grad() ? r.detach() : r;
    auto impl = tg::detail::make_pooled<TensorImpl>();
    impl->storage = r.impl()->storage;
    impl->sizes = r.sizes();
    impl->strides = r.strides();
    impl->offset = r.storage_offset();
    impl->dtype = r.dtype();
    impl->grad_fn = std::move(fn);
    impl->output_nr = kind == SavedKind::Output ? 0 : output_nr;
    return Tensor(std::move(impl));
}

}  // namespace

}  // namespace detail

SavedTensorsHooks::SavedTensorsHooks(PackHook pack, UnpackHook unpack) {
    if (!pack || !unpack)
        throw value_error(std::string("saved_tensors_hooks: the ") + (pack ? "unpack" : "pack") +
                          " hook is empty");
    hooks_ = std::make_shared<detail::UserSavedHooks>();
    hooks_->all_saved = true;
    hooks_->pack_fn = std::move(pack);
    hooks_->unpack_fn = std::move(unpack);
    scope_ = std::make_unique<detail::SavedHooksScope>(*hooks_);
}

SavedTensorsHooks::~SavedTensorsHooks() = default;

namespace {
struct OnHost {
    Tensor t;  // on the CPU
    Device device;
};
}  // namespace

save_on_cpu::save_on_cpu(bool /*pin_memory: no backend has pinned host buffers yet*/)
    : SavedTensorsHooks(
          [](const Tensor& t) -> std::any {
              return OnHost{t.device().is_cpu() ? t : t.to(Device::cpu()), t.device()};
          },
          [](const std::any& p) {
              const auto& h = std::any_cast<const OnHost&>(p);
              return h.device.is_cpu() ? h.t : h.t.to(h.device);
          }) {}

}  // namespace tg::autograd
