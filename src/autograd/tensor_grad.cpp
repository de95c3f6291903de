// The tensor's autograd accessors: requires_grad_, grad, hooks, retain_grad, detach.
#include "autograd/engine.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

// ---- autograd accessors
Tensor& Tensor::requires_grad_(bool r) {
    TensorImpl* i = check();
    if (r && !is_floating(i->dtype))
        throw dtype_error(
            "requires_grad_: only floating-point tensors can require gradients, "
            "got " +
            shape_str(i->sizes) + " " + dtype_name(i->dtype));
    if (i->grad_fn && !r)
        throw autograd_error(
            "requires_grad_(false): only leaf tensors can change requires_grad; "
            "use detach() on a tensor with a grad_fn");
    i->requires_grad = r;
    if (r && i->storage)
        i->storage->grad_leaf.store(true, std::memory_order_relaxed);  // Note [Activation memory]
    return *this;
}
Tensor Tensor::grad() const {
    return Tensor(check()->grad);
}
void Tensor::set_grad(const Tensor& g) const {
    TensorImpl* i = check();
    if (g.defined()) {  // Note [Checked gradients] in src/autograd/engine.hpp
        autograd::detail::check_grad(g, {i->sizes, i->dtype, i->storage->device}, [&] {
            return "set_grad: invalid gradient for a tensor of shape " + shape_str(i->sizes);
        });
        if (autograd::detail::has_aliased_elements(g))
            throw autograd_error("set_grad: the gradient " + shape_str(g.sizes()) +
                                 " has elements that share memory (strides " +
                                 shape_str(g.strides()) +
                                 ", an expand() view); pass g.contiguous()");
    }
    i->grad = g.impl_ptr();
}
void Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
    TensorImpl* i = check();
    if (!hook)
        throw value_error("register_hook: empty hook function (tensor of shape " +
                          shape_str(i->sizes) + ")");
    if (!requires_grad())
        throw autograd_error("register_hook: tensor of shape " + shape_str(i->sizes) +
                             " does not require grad");
    if (i->grad_fn)
        i->grad_fn->pre_hooks_.emplace_back(i->output_nr, std::move(hook));
    else
        i->hooks.push_back(std::move(hook));
}
void Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const {
    TensorImpl* i = check();
    if (!hook)
        throw value_error(
            "register_post_accumulate_grad_hook: empty hook function (tensor of "
            "shape " +
            shape_str(i->sizes) + ")");
    if (!i->requires_grad || i->grad_fn)
        throw autograd_error("register_post_accumulate_grad_hook: tensor of shape " +
                             shape_str(i->sizes) + " is not a leaf that requires grad");
    i->post_accumulate_hooks.push_back(std::move(hook));
}

// Note [Retained gradients]: retain_grad() adds a hook on the non-leaf's output of its grad_fn
// (among its other hooks, in registration order, as LibTorch 1.13's: it sees what hooks
// registered before it returned, not what later ones do) that keeps a contiguous copy of the
// gradient in the tensor's grad, or adds the gradient to it (a fresh sum, never in place) on later
// backwards. A copy, not a reference: backwards that write their dx over a dy nothing else holds
// (Note [Gradients written in place] in src/ops/overwritable.hpp) may then still overwrite the
// dy, and nothing a later backward does reaches the retained values. The hook holds the tensor
// weakly (a tensor that dies keeps nothing). An in-place op that gives the tensor a new grad_fn
// moves the hook there (move_retained_grad), so grad() is the gradient of the tensor's current
// value; an in-place view op (unsqueeze_, t_) leaves it on the old one: LibTorch 1.13's both.
// (retains_grad() then says false where LibTorch's flag still says true.)
namespace {
struct RetainGrad {
    std::weak_ptr<TensorImpl> self;
    Tensor operator()(const Tensor& g) const {
        const std::shared_ptr<TensorImpl> t = self.lock();
        if (!t || !g.defined())
            return {};
        if (!t->grad)
            t->grad = (g.is_contiguous() ? g.clone() : g.contiguous()).impl_ptr();
        else
            t->grad = (Tensor(t->grad) + g).impl_ptr();
        return {};
    }
};
/// The index of impl's retain_grad() hook among fn's pre-hooks, or -1.
int64_t retain_hook(const Node& fn, uint32_t nr, const TensorImpl* impl) {
    for (size_t k = 0; k < fn.pre_hooks_.size(); ++k) {
        const auto* r = fn.pre_hooks_[k].second.target<RetainGrad>();
        if (r && fn.pre_hooks_[k].first == nr && r->self.lock().get() == impl)
            return int64_t(k);
    }
    return -1;
}
}  // namespace

void autograd::detail::move_retained_grad(const std::shared_ptr<TensorImpl>& impl, Node* old_fn,
                                          uint32_t old_nr) {
    if (!old_fn || !impl->grad_fn || old_fn == impl->grad_fn.get())
        return;
    const int64_t k = retain_hook(*old_fn, old_nr, impl.get());
    if (k < 0)
        return;
    old_fn->pre_hooks_.erase(old_fn->pre_hooks_.begin() + k);
    impl->grad_fn->pre_hooks_.emplace_back(impl->output_nr, RetainGrad{impl});
}
void detail::TensorMethods::retain_grad() const {
    const Tensor& x = self();
    if (!x.requires_grad())
        throw autograd_error("retain_grad: can't retain_grad on a tensor of shape " +
                             shape_str(x.sizes()) + " that does not require grad");
    if (x.is_leaf() || retains_grad())
        return;
    x.grad_fn()->pre_hooks_.emplace_back(x.output_nr(), RetainGrad{x.impl_ptr()});
}
bool detail::TensorMethods::retains_grad() const {
    const Tensor& x = self();
    return x.grad_fn() && retain_hook(*x.grad_fn(), x.output_nr(), x.impl()) >= 0;
}
Tensor Tensor::detach() const {
    const TensorImpl* i = check();
    return runtime::alias(*this, i->sizes, i->strides, i->offset);
}

}  // namespace tg
