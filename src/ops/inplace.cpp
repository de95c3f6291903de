// Note [In-place ops]: an in-place op writes into the tensor's storage and bumps its version
// (Note [Version counter]). With recording off, or on tensors that need no gradient, that is
// all. On a non-leaf that requires grad, the op records its out-of-place form and the tensor
// takes over that history ("rebase"), so gradients stay right. A leaf that requires grad may
// only be modified under NoGradGuard, as in PyTorch. Views of recorded tensors are not
// rebased: their base keeps its old history, so an in-place write through a view whose base
// is alive throws autograd_error instead of producing wrong gradients.
#include "ops/inplace.hpp"

#include "autograd/engine.hpp"
#include "autograd/record.hpp"
#include "ops/checks.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
/// rec: self or an operand requires grad and recording is on. copy_old: the recorded backward
/// reads self's old value (mul_, div_: d(a*b)/db = a), so the old value is copied before the
/// write destroys it, as PyTorch keeps the original self.
template <class OutOfPlace, class Kernel>
Tensor& inplace_as(Tensor& self, const char* name, bool rec, OutOfPlace oop, Kernel k,
                   bool copy_old) {
    if (rec) {
        if (self.is_leaf() && self.requires_grad())
            throw autograd_error(std::string(name) + ": a leaf tensor that requires grad (shape " +
                                 shape_str(self.sizes()) +
                                 ") cannot be modified in place while recording; use "
                                 "tg::NoGradGuard or an out-of-place op");
        // Views are not rebased (see the Note): writing into storage that another tensor
        // shares (a view of it, or its base while a view is alive) would leave that tensor with
        // a stale history and silently wrong gradients, so it throws instead.
        const Storage* st = self.impl()->storage.get();
        if (self.impl()->storage.use_count() > 1 + autograd::detail::budget_refs(st))
            throw autograd_error(std::string(name) + ": in-place write to a tensor of shape " +
                                 shape_str(self.sizes()) +
                                 " whose storage is shared with another recorded tensor (a view "
                                 "or the base of a view) is not supported: that tensor would get "
                                 "wrong gradients; clone() first or use an out-of-place op");
        // The out-of-place op records on a separate header for the old value: if it saved self
        // itself, self's new grad_fn would hold self (a reference cycle that never frees).
        const Tensor old(std::make_shared<TensorImpl>(*self.impl()));
        if (copy_old) {
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
        const std::shared_ptr<Node> old_fn = self.impl()->grad_fn;
        self.impl()->grad_fn = r.grad_fn();
        self.impl()->output_nr = r.output_nr();
        autograd::detail::move_retained_grad(self.impl_ptr(), old_fn.get(), old.output_nr());
    } else {
        k();
    }
    runtime::mark_modified(self);
    return self;
}

/// reads_old: copy self's old value when `other` requires grad (see inplace_as).
template <class OutOfPlace, class Kernel>
Tensor& inplace(Tensor& self, const char* name, const Tensor* other, OutOfPlace oop, Kernel k,
                bool reads_old = false) {
    if (!self.defined())  // with recording off nothing else looks at self before the kernel
        throw value_error(std::string(name) + ": undefined tensor");
    const bool rec =
        GradMode::is_enabled() && (self.requires_grad() || (other && other->requires_grad()));
    return inplace_as(self, name, rec, oop, k, rec && reads_old && other->requires_grad());
}
}  // namespace

Tensor& detail::apply_inplace(Tensor& self, const char* name,
                              std::initializer_list<const Tensor*> others,
                              const std::function<Tensor(const Tensor&)>& f, bool keep_old) {
    if (!self.defined())
        throw value_error(std::string(name) + ": undefined tensor");
    bool rec = GradMode::is_enabled() && self.requires_grad();
    for (const Tensor* o : others)
        rec = rec || (GradMode::is_enabled() && o->defined() && o->requires_grad());
    // f's result, checked before anything is written: self's shape, a dtype self can hold
    const auto result = [&](const Tensor& x) {
        Tensor r = f(x);
        if (r.sizes() != self.sizes())
            throw shape_error(std::string(name) + ": the result's shape " + shape_str(r.sizes()) +
                              " differs from the in-place tensor's " + shape_str(self.sizes()));
        promote::check_can_cast(name, r.dtype(), self);
        return r.dtype() == self.dtype() ? r : r.to(self.dtype());
    };
    return inplace_as(
        self, name, rec, result, [&] { runtime::copy_into(self, result(self)); }, rec && keep_old);
}

// Note [In-place promotion]: self op= other computes in result_type(self, other) (Note [Type
// promotion]) and writes the result back into self's dtype, which must be able to hold it
// (can_cast: an int tensor's mul_(0.5) or div_ throws dtype_error, as LibTorch's).
namespace {
/// self op= o for the binary kernel k with parameter p (axpy: self + p * o); oop is the
/// out-of-place form, used when recording and when self's dtype is not the result's.
template <class OutOfPlace>
Tensor& inplace_binary(Tensor& self, const char* name, const Tensor& o_in, OutOfPlace oop,
                       runtime::BinaryOp k, Dtype rt, double p, bool reads_old) {
    promote::check_can_cast(name, rt, self);
    const Dtype d = self.dtype();
    if (rt != d)  // u8 += i8 computes in int16 and wraps into uint8
        return inplace(
            self, name, &o_in, [&](const Tensor& old) { return oop(old).to(d); },
            [&] { runtime::copy_into(self, oop(self)); });
    const Tensor o = promote::to(o_in, rt);
    return inplace(
        self, name, &o, oop, [&] { runtime::binary_into(k, self, self, o, name, p, 0); },
        reads_old);
}
}  // namespace

Tensor& Tensor::add_(const Tensor& o, Scalar alpha) {
    checks::defined("add_", *this);
    const Dtype rt = result_type(*this, o);
    if (is_integral(rt, true) && alpha.isFloatingPoint())
        throw dtype_error(
            "add_: for integral input tensors, argument alpha must not be a "
            "floating point number (alpha = " +
            runtime::scalar_str(alpha) + ")");
    return inplace_binary(
        *this, "add_", o, [&](const Tensor& old) { return old + o * alpha; },
        runtime::BinaryOp::axpy, rt, promote::value_in(kernel_dtype(rt), alpha), false);
}
Tensor& Tensor::sub_(const Tensor& o, Scalar alpha) {
    return add_(o, -alpha);
}
Tensor& Tensor::add_(Scalar s) {
    checks::defined("add_", *this);
    promote::check_can_cast("add_", result_type(*this, s), *this);
    return inplace(
        *this, "add_", nullptr, [&](const Tensor& old) { return old + s; },
        [&] {
            runtime::unary_into(runtime::UnaryOp::add_scalar, *this, *this,
                                promote::value_in(dtype(), s), 0);
        });
}
Tensor& Tensor::mul_(const Tensor& o) {
    checks::defined("mul_", *this);
    return inplace_binary(
        *this, "mul_", o, [&](const Tensor& old) { return old * o; }, runtime::BinaryOp::mul,
        result_type(*this, o), 0, true);
}
Tensor& Tensor::mul_(Scalar s) {
    checks::defined("mul_", *this);
    promote::check_can_cast("mul_", result_type(*this, s), *this);
    return inplace(
        *this, "mul_", nullptr, [&](const Tensor& old) { return old * s; },
        [&] {
            runtime::unary_into(runtime::UnaryOp::mul_scalar, *this, *this,
                                promote::value_in(dtype(), s), 0);
        });
}
Tensor& Tensor::div_(const Tensor& o) {
    checks::defined("div_", *this);
    const Dtype rt = result_type(*this, o);
    return inplace_binary(
        *this, "div_", o, [&](const Tensor& old) { return old / o; }, runtime::BinaryOp::div,
        is_floating(rt) ? rt : kFloat32, 0, true);
}
Tensor& Tensor::div_(Scalar s) {
    checks::defined("div_", *this);
    const Dtype rt = result_type(*this, s);
    promote::check_can_cast("div_", is_floating(rt) ? rt : kFloat32, *this);
    const double v = promote::value_in(dtype(), s);  // times the reciprocal, as operator/
    const double r = dtype() == kFloat64 ? 1.0 / v : double(1.0f / float(v));
    return inplace(
        *this, "div_", nullptr, [&](const Tensor& old) { return old / s; },
        [&] { runtime::unary_into(runtime::UnaryOp::mul_scalar, *this, *this, r, 0); });
}
Tensor& Tensor::fill_(Scalar s) {
    checks::defined("fill_", *this);
    const double v = promote::checked_in(dtype(), s, "fill_");  // 256 into uint8 throws
    return inplace(
        *this, "fill_", nullptr, [&](const Tensor&) { return full(sizes(), s, options()); },
        [&] {
            if (is_integral(dtype()))  // exactly, not through a double
                runtime::copy_into(*this, promote::scalar_tensor(s, options()));
            else
                runtime::fill(*this, v);
        });
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
