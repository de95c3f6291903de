// Note [In-place ops]: an in-place op writes into the tensor's storage and bumps its version
// (Note [Version counter]). With recording off, or on tensors that need no gradient, that is
// all. On a non-leaf that requires grad, the op records its out-of-place form and the tensor
// takes over that history ("rebase"), so gradients stay right. A leaf that requires grad may
// only be modified under NoGradGuard, as in PyTorch. Views of recorded tensors are not
// rebased: their base keeps its old history, so an in-place write through a view whose base
// is alive throws autograd_error instead of producing wrong gradients.
#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
/// reads_old: the recorded backward reads self's old value when `other` requires grad (mul_,
/// div_: d(a*b)/db = a), so the old value is copied before the write destroys it, as PyTorch
/// keeps the original self.
template <class OutOfPlace, class Kernel>
Tensor& inplace(Tensor& self, const char* name, const Tensor* other, OutOfPlace oop, Kernel k,
                bool reads_old = false) {
    if (!self.defined())  // with recording off nothing else looks at self before the kernel
        throw value_error(std::string(name) + ": undefined tensor");
    const bool rec =
        GradMode::is_enabled() && (self.requires_grad() || (other && other->requires_grad()));
    if (rec) {
        if (self.is_leaf() && self.requires_grad())
            throw autograd_error(std::string(name) + ": a leaf tensor that requires grad (shape " +
                                 shape_str(self.sizes()) +
                                 ") cannot be modified in place while recording; use "
                                 "tg::NoGradGuard or an out-of-place op");
        // Views are not rebased (see the Note): writing into storage that another tensor
        // shares (a view of it, or its base while a view is alive) would leave that tensor with
        // a stale history and silently wrong gradients, so it throws instead.
        if (self.impl()->storage.use_count() > 1)
            throw autograd_error(std::string(name) + ": in-place write to a tensor of shape " +
                                 shape_str(self.sizes()) +
                                 " whose storage is shared with another recorded tensor (a view "
                                 "or the base of a view) is not supported: that tensor would get "
                                 "wrong gradients; clone() first or use an out-of-place op");
        // The out-of-place op records on a separate header for the old value: if it saved self
        // itself, self's new grad_fn would hold self (a reference cycle that never frees).
        const Tensor old(std::make_shared<TensorImpl>(*self.impl()));
        if (reads_old && other->requires_grad()) {
            Tensor copy;
            {
                NoGradGuard g;
                copy = self.detach().clone();
            }
            old.impl()->storage = copy.impl()->storage;  // same history, a buffer of its own
            old.impl()->strides = copy.impl()->strides;
            old.impl()->offset = copy.impl()->offset;
        }
        Tensor r = oop(old);
        {
            NoGradGuard g;
            runtime::copy_into(self, r);
        }
        self.impl()->grad_fn = r.grad_fn();
        self.impl()->output_nr = r.output_nr();
    } else {
        k();
    }
    runtime::mark_modified(self);
    return self;
}
}  // namespace

Tensor& Tensor::add_(const Tensor& o, Scalar alpha) {
    return inplace(
        *this, "add_", &o, [&](const Tensor& old) { return old + o * alpha; },
        [&] { runtime::binary_into(runtime::BinaryOp::axpy, *this, *this, o, "add_", alpha, 0); });
}
Tensor& Tensor::sub_(const Tensor& o, Scalar alpha) {
    return add_(o, -alpha);
}
Tensor& Tensor::add_(Scalar s) {
    return inplace(
        *this, "add_", nullptr, [&](const Tensor& old) { return old + s; },
        [&] { runtime::unary_into(runtime::UnaryOp::add_scalar, *this, *this, s, 0); });
}
Tensor& Tensor::mul_(const Tensor& o) {
    return inplace(
        *this, "mul_", &o, [&](const Tensor& old) { return old * o; },
        [&] { runtime::binary_into(runtime::BinaryOp::mul, *this, *this, o, "mul_", 0, 0); }, true);
}
Tensor& Tensor::mul_(Scalar s) {
    return inplace(
        *this, "mul_", nullptr, [&](const Tensor& old) { return old * s; },
        [&] { runtime::unary_into(runtime::UnaryOp::mul_scalar, *this, *this, s, 0); });
}
Tensor& Tensor::div_(const Tensor& o) {
    return inplace(
        *this, "div_", &o, [&](const Tensor& old) { return old / o; },
        [&] { runtime::binary_into(runtime::BinaryOp::div, *this, *this, o, "div_", 0, 0); }, true);
}
Tensor& Tensor::div_(Scalar s) {
    if (is_floating(dtype()))
        return mul_(1.0 / s);
    return inplace(  // int64, as operator/
        *this, "div_", nullptr, [&](const Tensor& old) { return old / s; },
        [&] { runtime::unary_into(runtime::UnaryOp::div_scalar, *this, *this, s, 0); });
}
Tensor& Tensor::fill_(Scalar s) {
    return inplace(
        *this, "fill_", nullptr, [&](const Tensor&) { return full(sizes(), s, options()); },
        [&] { runtime::fill(*this, s); });
}
Tensor& Tensor::zero_() {
    return fill_(0);
}
Tensor& Tensor::copy_(const Tensor& src) {
    return inplace(
        *this, "copy_", &src,
        [&](const Tensor&) {
            const ComposedName named;
            return named(tg::expand(src.to(dtype()), sizes()).clone(), "copy_",
                         "torch::autograd::CopyBackwards");
        },
        [&] { runtime::copy_into(*this, src); });
}

}  // namespace tg
