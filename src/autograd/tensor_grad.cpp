// The tensor's autograd accessors: requires_grad_, grad, hooks, detach.
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
        i->storage->grad_leaf = true;  // Note [Activation memory] in src/autograd/saved.cpp
    return *this;
}
Tensor Tensor::grad() const {
    return Tensor(check()->grad);
}
void Tensor::set_grad(const Tensor& g) const {
    check()->grad = g.impl_ptr();
}
void Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
    TensorImpl* i = check();
    if (!requires_grad())
        throw autograd_error("register_hook: tensor of shape " + shape_str(i->sizes) +
                             " does not require grad");
    if (i->grad_fn)
        i->grad_fn->pre_hooks_.emplace_back(i->output_nr, std::move(hook));
    else
        i->hooks.push_back(std::move(hook));
}
Tensor Tensor::detach() const {
    const TensorImpl* i = check();
    return runtime::alias(*this, i->sizes, i->strides, i->offset);
}

}  // namespace tg
