// The tensor's autograd accessors: requires_grad_, grad, hooks, detach.
#include "autograd/engine.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/autograd.hpp"

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
Tensor Tensor::detach() const {
    const TensorImpl* i = check();
    return runtime::alias(*this, i->sizes, i->strides, i->offset);
}

}  // namespace tg
