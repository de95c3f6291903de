// Factories: empty, zeros, ones, full, tensor, arange, from_blob (the random ones: random.cpp).
#include <algorithm>
#include <cmath>
#include <new>
#include <string>
#include <type_traits>

#include "backend/convert.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

// ---- factories
static Tensor finish(Tensor t, const TensorOptions& o) {
    if (o.requires_grad())
        t.requires_grad_(true);
    return t;
}
Tensor empty(const Shape& s, const TensorOptions& o) {
    return finish(runtime::empty(s, o.dtype(), o.device(), "empty"), o);
}
/// v checked into o's dtype as LibTorch's full checks it (300 into uint8 throws value_error).
static Tensor filled(const Shape& s, Scalar v, const TensorOptions& o, const char* op) {
    Tensor t = runtime::empty(s, o.dtype(), o.device(), op);
    const double value = promote::checked_in(o.dtype(), v, op);
    if (is_integral(o.dtype()) && t.numel() > 0)  // exactly, not through a double
        runtime::copy_into(t, promote::scalar_tensor(v, o));
    else
        runtime::fill(t, value);
    return finish(t, o);
}
Tensor full(const Shape& s, Scalar v, const TensorOptions& o) {
    if (!o.has_dtype())  // LibTorch infers it from the value: full({2}, 3) is int64
        return filled(s, v,
                      o.dtype(v.isBoolean()    ? kBool
                              : v.isIntegral() ? kInt64
                                               : kFloat32),
                      "full");
    return filled(s, v, o, "full");
}
Tensor zeros(const Shape& s, const TensorOptions& o) {
    return filled(s, 0, o, "zeros");
}
Tensor ones(const Shape& s, const TensorOptions& o) {
    return filled(s, 1, o, "ones");
}
Tensor zeros_like(const Tensor& t, const TensorOptions& o) {
    return zeros(t.sizes(), o);
}
Tensor zeros_like(const Tensor& t) {
    return zeros(t.sizes(), t.options());
}
Tensor ones_like(const Tensor& t) {
    return ones(t.sizes(), t.options());
}
Tensor empty_like(const Tensor& t) {
    return empty(t.sizes(), t.options());
}

/// A host buffer of n elements for a factory that fills one on the host; out_of_memory, not
/// std::bad_alloc, when the host has no room.
template <class T>
static std::vector<T> host_buffer(size_t n, const char* op) {
    try {
        return std::vector<T>(n);
    } catch (const std::bad_alloc&) {
        throw out_of_memory(std::string(op) + ": out of host memory for " + std::to_string(n) +
                            " elements");
    }
}

/// Copies v, converted to t's dtype, into contiguous t (any device): checked as LibTorch's
/// tensor() checks (a value the dtype cannot hold throws value_error naming op), or converted as
/// a copy converts (Note [Conversions]; arange, as LibTorch's, wraps).
template <class T>
static void upload(const Tensor& t, const std::vector<T>& v, const char* op, bool checked = true) {
    dispatch_all(t.dtype(), [&](auto tag) {
        using U = decltype(tag);
        using Byte = std::conditional_t<std::is_same_v<U, bool>, uint8_t, U>;  // no vector<bool>
        std::vector<Byte> conv = host_buffer<Byte>(v.size(), op);
        for (size_t i = 0; i < v.size(); ++i) {
            if (!checked) {
                conv[i] = Byte(backend::convert<U>(v[i]));
                continue;
            }
            try {
                conv[i] = Byte(Scalar(v[i]).to<U>());
            } catch (const value_error& e) {
                throw value_error(std::string(op) + ": " + e.what() + " (element " +
                                  std::to_string(i) + " of a " + dtype_name(t.dtype()) +
                                  " tensor)");
            }
        }
        runtime::be(t).from_host(t.impl()->storage->data, 0, conv.data(),
                                 conv.size() * sizeof(Byte));
    });
}
template <class T>
static Tensor from_host_vector(const std::vector<T>& v, const Shape& s, const TensorOptions& o,
                               const char* op) {
    Tensor t = runtime::empty(s, o.dtype(), o.device(), op);
    upload(t, v, op);
    return finish(t, o);
}
Tensor tensor(const std::vector<double>& v, const TensorOptions& o) {
    return from_host_vector(v, {int64_t(v.size())}, o, "tensor");
}
TensorDataContainer::TensorDataContainer(std::initializer_list<TensorDataContainer> items)
    : kind_(Kind::List), items_(items) {
    for (const TensorDataContainer& item : items_) {
        if (item.sizes_ != items_.front().sizes_)
            throw value_error("tensor: the braced lists have unequal shapes " +
                              shape_str(items_.front().sizes_) + " and " + shape_str(item.sizes_));
        if (item.dtype_ != items_.front().dtype_)  // LibTorch's TensorDataContainer check
            throw value_error(std::string("tensor: expected all elements to be of one scalar "
                                          "type: ") +
                              dtype_name(items_.front().dtype_) + ", but got one of type " +
                              dtype_name(item.dtype_) + " (write 1.0 for 1)");
    }
    sizes_ = {int64_t(items_.size())};
    if (!items_.empty()) {
        sizes_.insert(sizes_.end(), items_.front().sizes_.begin(), items_.front().sizes_.end());
        dtype_ = items_.front().dtype_;
    }
}
void TensorDataContainer::flatten(std::vector<double>& doubles, std::vector<int64_t>& ints) const {
    if (kind_ == Kind::List)
        for (const TensorDataContainer& item : items_)
            item.flatten(doubles, ints);
    else if (kind_ == Kind::Float)
        doubles.push_back(d_);
    else
        ints.push_back(i_);
}
Tensor tensor(std::initializer_list<TensorDataContainer> values, const TensorOptions& o_in) {
    const TensorDataContainer data(values);
    const TensorOptions o = o_in.has_dtype() ? o_in : o_in.dtype(data.dtype());
    std::vector<double> doubles;
    std::vector<int64_t> ints;
    data.flatten(doubles, ints);  // one of them, all elements being of one kind
    return doubles.empty() ? from_host_vector(ints, data.sizes(), o, "tensor")
                           : from_host_vector(doubles, data.sizes(), o, "tensor");
}
Tensor tensor(const std::vector<float>& v, const TensorOptions& o) {
    return from_host_vector(v, {int64_t(v.size())}, o, "tensor");
}
Tensor tensor(const std::vector<int64_t>& v, const TensorOptions& o) {
    return from_host_vector(v, {int64_t(v.size())}, o, "tensor");
}
Tensor tensor(const std::vector<int>& v, const TensorOptions& o) {
    return tensor(std::vector<int64_t>(v.begin(), v.end()), o);
}
Tensor scalar_tensor(Scalar v, const TensorOptions& o) {
    if (v.isFloatingPoint())
        return from_host_vector(std::vector<double>{v.toDouble()}, {}, o, "scalar_tensor");
    return from_host_vector(std::vector<int64_t>{v.toLong()}, {}, o, "scalar_tensor");
}
Tensor arange(Scalar end, const TensorOptions& o) {
    return arange(0, end, 1, o);
}
/// As torch.arange: ceil((end - start) / step) values start + i*step. The count is computed in
/// double and converted only once it is known to be a valid size (converting NaN or a double
/// beyond int64 is undefined behaviour).
Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& o_in) {
    // LibTorch infers the dtype: int64 when start, end and step are all integers
    const TensorOptions o =
        o_in.has_dtype() || !(start.isIntegral() && end.isIntegral() && step.isIntegral())
            ? o_in
            : o_in.dtype(kInt64);
    auto range = [&] {
        return "start=" + runtime::scalar_str(start) + " end=" + runtime::scalar_str(end) +
               " step=" + runtime::scalar_str(step);
    };
    if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
        throw value_error("arange: " + range() + ": start, end and step must be finite");
    if (step == 0)
        throw value_error("arange: " + range() + ": step must be nonzero");
    if ((end - start) / step < 0)
        throw value_error("arange: " + range() + ": the step goes away from end");
    const double count = std::ceil((end - start) / step);
    // converting a double to int64 is defined below 2^63 only (exact in double); this also
    // catches an (end - start) that overflowed to infinity. runtime::empty checks the rest.
    if (!(count < 9223372036854775808.0))
        throw shape_error("arange: " + range() + " would have " + runtime::scalar_str(count) +
                          " elements, more than int64 can count");
    const int64_t n = int64_t(count);
    Tensor t = runtime::empty({n}, o.dtype(), o.device(), "arange");  // before the host buffer
    std::vector<double> v = host_buffer<double>(size_t(n), "arange");
    for (int64_t i = 0; i < n; ++i)
        v[size_t(i)] = start + double(i) * step;
    upload(t, v, "arange", false);
    return finish(t, o);
}
Tensor linspace(Scalar start, Scalar end, int64_t steps, const TensorOptions& o) {
    if (steps < 0)
        throw value_error("linspace: number of steps must be non-negative, got " +
                          std::to_string(steps));
    if (!std::isfinite(start) || !std::isfinite(end))
        throw value_error("linspace: start=" + runtime::scalar_str(start) +
                          " end=" + runtime::scalar_str(end) + " must be finite");
    if (!is_floating(o.dtype()))
        throw dtype_error(std::string("linspace: dtype ") + dtype_name(o.dtype()) +
                          " (a floating dtype is needed)");
    if (is_reduced_floating(o.dtype()))  // LibTorch rounds each step in the dtype: not replicated
        throw dtype_error(std::string("linspace: dtype ") + dtype_name(o.dtype()) +
                          " is not implemented; make it in float32 and convert with .to()");
    Tensor t = runtime::empty({steps}, o.dtype(), o.device(), "linspace");
    std::vector<double> v = host_buffer<double>(size_t(steps), "linspace");
    // in the element type: float32's step and products round as LibTorch's float kernel's
    dispatch(o.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T a = T(start), b = T(end);
        const T step = steps > 1 ? (b - a) / T(steps - 1) : T(0);
        const int64_t halfway = steps / 2;
        for (int64_t i = 0; i < steps; ++i)
            v[size_t(i)] = double(i < halfway ? a + step * T(i) : b - step * T(steps - i - 1));
    });
    upload(t, v, "linspace");
    return finish(t, o);
}
Tensor from_blob(void* data, const Shape& s, const TensorOptions& o) {
    return from_blob(data, s, nullptr, o);
}

Tensor from_blob(void* data, const Shape& s, const std::function<void(void*)>& deleter,
                 const TensorOptions& o) {
    if (!o.device().is_cpu())
        throw device_error("from_blob: only CPU memory can be wrapped");
    runtime::check_dims(s, "from_blob");
    if (!data && numel_of(s, "from_blob") > 0)
        throw value_error("from_blob: null data for " + shape_str(s) + " " + dtype_name(o.dtype()));
    auto impl = std::make_shared<TensorImpl>();
    impl->storage =
        std::make_shared<Storage>(data, nbytes_of(s, o.dtype(), "from_blob"), o.device());
    impl->sizes = s;
    impl->strides = contiguous_strides(s, "from_blob");
    impl->dtype = o.dtype();
    Storage& storage = *impl->storage;
    Tensor t = finish(Tensor(std::move(impl)), o);
    storage.deleter = deleter;  // only now: when from_blob throws, the memory stays the caller's
    return t;
}

}  // namespace tg
