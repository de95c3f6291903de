// LibTorch's metadata, factory and arithmetic method spellings that tensor_methods.hpp declares
// (x.new_zeros({2}), x.add(y, 0.5), x.is_floating_point(), x.cpu()): each is one call of what
// tapegrad already has.
#include "ops/inplace.hpp"
#include "tapegrad/factories.hpp"
#include "tapegrad/logical.hpp"
#include "tapegrad/ops.hpp"

namespace tg::detail {

namespace {
/// LibTorch's self.options().merge_in(o): o's dtype if set, o's device unless the default CPU.
TensorOptions merged(const Tensor& x, const TensorOptions& o) {
    return TensorOptions(o.has_dtype() ? o.dtype() : x.dtype())
        .device(o.device().is_cpu() ? x.device() : o.device())
        .requires_grad(o.requires_grad());
}
/// alpha · s, integral when both are (x.add(2, 3) on an int tensor stays int).
Scalar times(Scalar s, Scalar alpha) {
    if (s.isIntegral(true) && alpha.isIntegral(true))
        return Scalar(s.toLong() * alpha.toLong());
    return Scalar(s.toDouble() * alpha.toDouble());
}
}  // namespace

// clang-format off
Tensor& TensorMethods::set_requires_grad(bool r) { return self().requires_grad_(r); }
bool TensorMethods::is_same(const Tensor& o) const { return self().impl() == o.impl(); }
bool TensorMethods::is_same_size(const Tensor& o) const { return self().sizes() == o.sizes(); }
int64_t TensorMethods::ndimension() const { return self().dim(); }
int64_t TensorMethods::element_size() const { return int64_t(tg::element_size(self().dtype())); }
size_t TensorMethods::nbytes() const { return size_t(self().numel()) * size_t(element_size()); }
bool TensorMethods::is_floating_point() const { return is_floating(self().dtype()); }
bool TensorMethods::is_complex() const { return self().dtype() != self().dtype(); }
bool TensorMethods::is_cpu() const { return self().device().is_cpu(); }
bool TensorMethods::is_cuda() const { return self().device().type == DeviceType::CUDA; }
Dtype TensorMethods::scalar_type() const { return self().dtype(); }
Tensor TensorMethods::cpu() const { return self().to(Device::cpu()); }
Tensor TensorMethods::cuda() const { return self().to(Device::cuda()); }
Tensor TensorMethods::new_zeros(const Shape& s) const { return new_zeros(s, {}); }
Tensor TensorMethods::new_ones(const Shape& s) const { return new_ones(s, {}); }
Tensor TensorMethods::new_empty(const Shape& s) const { return new_empty(s, {}); }
Tensor TensorMethods::new_full(const Shape& s, Scalar v) const { return new_full(s, v, {}); }
Tensor TensorMethods::new_zeros(const Shape& s, const TensorOptions& o) const { return tg::zeros(s, merged(self(), o)); }
Tensor TensorMethods::new_ones(const Shape& s, const TensorOptions& o) const { return tg::ones(s, merged(self(), o)); }
Tensor TensorMethods::new_empty(const Shape& s, const TensorOptions& o) const { return tg::empty(s, merged(self(), o)); }
Tensor TensorMethods::new_full(const Shape& s, Scalar v, const TensorOptions& o) const { return tg::full(s, v, merged(self(), o)); }
Tensor TensorMethods::mul(const Tensor& o) const { return tg::mul(self(), o); }
Tensor TensorMethods::mul(Scalar o) const { return tg::mul(self(), o); }
Tensor TensorMethods::div(const Tensor& o) const { return tg::div(self(), o); }
Tensor TensorMethods::div(Scalar o) const { return self() / o; }
Tensor TensorMethods::maximum(const Tensor& o) const { return tg::maximum(self(), o); }
Tensor TensorMethods::minimum(const Tensor& o) const { return tg::minimum(self(), o); }
Tensor TensorMethods::where(const Tensor& c, const Tensor& o) const { return tg::where(c, self(), o); }
Tensor TensorMethods::squeeze() const { return tg::squeeze(self()); }
Tensor TensorMethods::squeeze(int64_t d) const { return tg::squeeze(self(), d); }
Tensor TensorMethods::argwhere() const { return self().nonzero(); }
// clang-format on

bool TensorMethods::is_signed() const {
    const Dtype d = self().dtype();
    return d != Dtype::UInt8 && d != Dtype::Bool;
}
bool TensorMethods::is_set_to(const Tensor& o) const {
    const Tensor& x = self();
    return x.impl()->storage == o.impl()->storage && x.storage_offset() == o.storage_offset() &&
           x.sizes() == o.sizes() && x.strides() == o.strides();
}
Tensor TensorMethods::add(const Tensor& o, Scalar alpha) const {
    return double(alpha) == 1 ? tg::add(self(), o) : tg::add(self(), o * alpha);
}
Tensor TensorMethods::add(Scalar o, Scalar alpha) const {
    return tg::add(self(), times(o, alpha));
}
Tensor TensorMethods::sub(const Tensor& o, Scalar alpha) const {
    return double(alpha) == 1 ? tg::sub(self(), o) : tg::sub(self(), o * alpha);
}
Tensor TensorMethods::sub(Scalar o, Scalar alpha) const {
    return self() - (times(o, alpha));
}
Tensor TensorMethods::cumsum(int64_t dim, std::optional<Dtype> dtype) const {
    return tg::cumsum(dtype ? self().to(*dtype) : self(), dim);
}
Tensor& TensorMethods::cumsum_(int64_t dim) {
    return apply_inplace(
        self(), "cumsum_", {}, [dim](const Tensor& x) { return tg::cumsum(x, dim); }, false);
}
Tensor TensorMethods::softmax(int64_t dim, std::optional<Dtype> dtype) const {
    return tg::softmax(dtype ? self().to(*dtype) : self(), dim);
}
Tensor TensorMethods::log_softmax(int64_t dim, std::optional<Dtype> dtype) const {
    return tg::log_softmax(dtype ? self().to(*dtype) : self(), dim);
}
Tensor& TensorMethods::logical_not_() {
    return apply_inplace(self(), "logical_not_", {}, tg::logical_not, false);
}
Tensor& TensorMethods::logical_and_(const Tensor& o) {
    return apply_inplace(
        self(), "logical_and_", {&o}, [&o](const Tensor& x) { return tg::logical_and(x, o); },
        false);
}
Tensor& TensorMethods::logical_or_(const Tensor& o) {
    return apply_inplace(
        self(), "logical_or_", {&o}, [&o](const Tensor& x) { return tg::logical_or(x, o); }, false);
}
Tensor& TensorMethods::logical_xor_(const Tensor& o) {
    return apply_inplace(
        self(), "logical_xor_", {&o}, [&o](const Tensor& x) { return tg::logical_xor(x, o); },
        false);
}

}  // namespace tg::detail
