// LibTorch's in-place view ops (tapegrad/tensor_methods.hpp): x.unsqueeze_(d), x.squeeze_(),
// x.squeeze_(d), x.t_(), x.transpose_(d0, d1).
//
// Note [In-place views]: the view is taken out of place (its checks and, recording, its node on
// x's history), then x's header takes the view's sizes, strides and offset, so every handle of x
// sees the new shape, as LibTorch's metadata change does. Recording, x also takes the view's node
// (x was a non-leaf: a leaf that requires grad throws autograd_error, as LibTorch's "a leaf
// Variable that requires grad is being used in an in-place operation"). The version is bumped,
// so a node that saved x before the change throws in backward instead of reading the new shape.
#include <functional>
#include <string>

#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
/// torch: LibTorch's name for the node of the in-place spelling (TBackward1 for t_).
Tensor& view_inplace(Tensor& self, const char* name, const char* torch,
                     const std::function<Tensor(const Tensor&)>& view) {
    if (!self.defined())
        throw value_error(std::string(name) + ": undefined tensor");
    const bool rec = GradMode::is_enabled() && self.requires_grad();
    if (rec && self.is_leaf())
        throw autograd_error(std::string(name) + ": a leaf tensor that requires grad (shape " +
                             shape_str(self.sizes()) +
                             ") cannot be modified in place while recording; use "
                             "tg::NoGradGuard or the out-of-place view");
    const ComposedName named;  // renames only a node this call recorded
    const Tensor v = named(view(self), name, torch);
    TensorImpl* impl = self.impl();
    impl->storage = v.impl()->storage;  // the same storage: these views never copy
    impl->sizes = v.sizes();
    impl->strides = v.strides();
    impl->offset = v.storage_offset();
    if (rec) {
        impl->grad_fn = v.grad_fn();
        impl->output_nr = v.output_nr();
    }
    runtime::mark_modified(self);
    return self;
}
}  // namespace

namespace detail {
Tensor& TensorMethods::unsqueeze_(int64_t dim) {
    return view_inplace(self(), "unsqueeze_", "UnsqueezeBackward1",
                        [dim](const Tensor& x) { return tg::unsqueeze(x, dim); });
}
Tensor& TensorMethods::squeeze_() {
    return view_inplace(self(), "squeeze_", "SqueezeBackward2",
                        [](const Tensor& x) { return tg::squeeze(x); });
}
Tensor& TensorMethods::squeeze_(int64_t dim) {
    return view_inplace(self(), "squeeze_", "SqueezeBackward3",
                        [dim](const Tensor& x) { return tg::squeeze(x, dim); });
}
Tensor& TensorMethods::t_() {
    return view_inplace(self(), "t_", "TBackward1", [](const Tensor& x) { return tg::t(x); });
}
Tensor& TensorMethods::transpose_(int64_t d0, int64_t d1) {
    return view_inplace(self(), "transpose_", "TransposeBackward1",
                        [d0, d1](const Tensor& x) { return tg::transpose(x, d0, d1); });
}
}  // namespace detail
}  // namespace tg
