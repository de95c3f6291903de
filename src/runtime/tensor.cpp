// The tensor and its storage: allocation through the device's backend, metadata, host reads.
#include "tapegrad/tensor.hpp"

#include <type_traits>

#include "backend/registry.hpp"
#include "tapegrad/autograd.hpp"

namespace tg {

// ---- storage
Storage::Storage(size_t n, Device d) : nbytes(n), device(d) {
    if (d.is_cpu() && n <= sizeof(small)) {
        backend::MemoryCounters& c = backend::cpu_backend().counters();
        c.admit(int64_t(n), d);
        data = small;
        c.on_alloc(int64_t(n));
    } else {
        data = backend::get(d).allocate(n);
    }
}
Storage::Storage(void* external, size_t n, Device d)
    : data(external), nbytes(n), device(d), owned(false) {}
Storage::~Storage() {
    if (!owned) {
        if (deleter)
            deleter(data);
        return;
    }
    if (data == small)
        backend::cpu_backend().counters().on_free(int64_t(nbytes));
    else
        backend::get(device).deallocate(data, nbytes);
}

// ---- metadata
void Tensor::throw_undefined() {
    throw value_error("operation on an undefined tensor");
}
int64_t Tensor::size(int64_t d) const {
    return sizes()[size_t(wrap_dim(d, dim(), "size"))];
}
int64_t Tensor::stride(int64_t d) const {
    return strides()[size_t(wrap_dim(d, dim(), "stride"))];
}
int64_t Tensor::numel() const {
    return numel_of(sizes());
}
bool Tensor::is_contiguous() const {
    const TensorImpl* i = check();
    int64_t expect = 1;
    for (size_t k = i->sizes.size(); k-- > 0;) {
        if (i->sizes[k] == 1)
            continue;
        if (i->strides[k] != expect)
            return false;
        expect *= i->sizes[k];
    }
    return true;
}

template <class T>
T* Tensor::data_ptr() const {
    const TensorImpl* i = check();
    if (!i->storage->device.is_cpu())
        throw device_error("data_ptr: tensor is on " + i->storage->device.str() +
                           "; copy it with .to(tg::Device::cpu()) first");
    if (dtype_of<T>() != i->dtype)
        throw dtype_error(std::string("data_ptr<") + dtype_name(dtype_of<T>()) + ">: tensor " +
                          shape_str(i->sizes) + " is " + dtype_name(i->dtype));
    return static_cast<T*>(i->storage->data) + i->offset;
}

namespace {
template <class T>
std::vector<T> to_vector_of(const Tensor& t) {
    Tensor c = t.detach().to(dtype_of<T>()).contiguous();
    std::vector<T> out(size_t(c.numel()));
    const TensorImpl* i = c.impl();
    backend::get(c.device())
        .to_host(out.data(), i->storage->data, size_t(i->offset) * sizeof(T),
                 out.size() * sizeof(T));
    return out;
}
}  // namespace

template <class T>
std::vector<T> Tensor::to_vector() const {
    if constexpr (std::is_same_v<T, bool>) {  // vector<bool> has no buffer: through bytes
        const std::vector<uint8_t> b = to(kBool).to_vector<uint8_t>();
        return std::vector<bool>(b.begin(), b.end());
    } else {
        return to_vector_of<T>(*this);
    }
}

template <class T>
T Tensor::item_as() const {
    if (numel() != 1)
        throw shape_error("item: tensor of shape " + shape_str(sizes()) + " has " +
                          std::to_string(numel()) + " elements, expected 1");
    return to_vector<T>()[0];
}

#define TG_TENSOR_ACCESSORS(T)                            \
    template T* Tensor::data_ptr<T>() const;              \
    template std::vector<T> Tensor::to_vector<T>() const; \
    template T Tensor::item_as<T>() const;
TG_TENSOR_ACCESSORS(float)
TG_TENSOR_ACCESSORS(double)
TG_TENSOR_ACCESSORS(int64_t)
TG_TENSOR_ACCESSORS(bool)
TG_TENSOR_ACCESSORS(uint8_t)
TG_TENSOR_ACCESSORS(int8_t)
TG_TENSOR_ACCESSORS(int16_t)
TG_TENSOR_ACCESSORS(int32_t)
TG_TENSOR_ACCESSORS(Half)
TG_TENSOR_ACCESSORS(BFloat16)
#undef TG_TENSOR_ACCESSORS

Scalar Tensor::item() const {
    return dispatch_all(dtype(), [&](auto tag) {  // read in its own dtype: element_size bytes
        using T = decltype(tag);
        const T v = item_as<T>();
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
            return Scalar(int64_t(v));
        else
            return Scalar(v);
    });
}

}  // namespace tg
