// Conversions that record: clone, contiguous, to(dtype), to(device).
#include <vector>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "backend/registry.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

// ---- conversion
/// y = copy of x;  dx = dy
Tensor Tensor::clone() const {
    Tensor y = runtime::empty(sizes(), dtype(), device(), "clone");
    runtime::be(*this).copy(runtime::view(y), runtime::view(*this));
    trace_op("clone", {this}, y);
    if (should_record({this})) {
        record("clone", {this}, y, [](const Tensor& dy) { return Grads{dy}; });
        recipe(y, [](const std::vector<Tensor>& xs) { return xs[0].clone(); });
    }
    return y;
}
Tensor Tensor::contiguous() const {
    return is_contiguous() ? *this : clone();
}
/// y = x converted to d;  dx = dy converted back
Tensor Tensor::to(Dtype d) const {
    if (d == dtype())
        return *this;
    Tensor y = runtime::converted(*this, d);
    if (is_floating(d) && should_record({this})) {
        const Dtype from = dtype();
        record("to_dtype", {this}, y, [from](const Tensor& dy) { return Grads{dy.to(from)}; });
        recipe(y, [d](const std::vector<Tensor>& xs) { return runtime::converted(xs[0], d); });
    }
    return y;
}
/// y = x on device d (through host memory);  dx = dy moved back
Tensor Tensor::to(Device d) const {
    if (d == device())
        return *this;
    Tensor src = contiguous();
    Tensor y = runtime::empty(sizes(), dtype(), d, "to");
    const size_t n = nbytes_of(sizes(), dtype(), "to");
    std::vector<unsigned char> host(n);
    runtime::be(src).to_host(host.data(), src.impl()->storage->data,
                             size_t(src.storage_offset()) * tg::element_size(dtype()), n);
    backend::get(d).from_host(y.impl()->storage->data, 0, host.data(), n);
    if (should_record({this})) {
        const Device from = device();
        record("to_device", {this}, y, [from](const Tensor& dy) { return Grads{dy.to(from)}; });
    }
    return y;
}
Tensor Tensor::to(const TensorOptions& o) const {
    return to(o.dtype()).to(o.device());
}

}  // namespace tg
