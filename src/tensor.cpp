// Tensor basics: storage, metadata, conversion, factories and printing.
#include "tapegrad/tensor.hpp"

#include <cmath>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "autograd/record.hpp"
#include "backend/registry.hpp"
#include "core/random.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

// ---- storage
Storage::Storage(size_t n, Device d) : nbytes(n), device(d) {
    if (d.is_cpu() && n <= sizeof(small)) {
        data = small;
        backend::cpu_backend().counters().on_alloc(int64_t(n));
    } else {
        data = backend::get(d).allocate(n);
    }
}
Storage::Storage(void* external, size_t n, Device d)
    : data(external), nbytes(n), device(d), owned(false) {}
Storage::~Storage() {
    if (!owned)
        return;
    if (data == small)
        backend::cpu_backend().counters().on_free(int64_t(nbytes));
    else
        backend::get(device).deallocate(data, nbytes);
}

// ---- metadata
void Tensor::throw_undefined() {
    throw error("operation on an undefined tensor");
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

template <class T>
std::vector<T> Tensor::to_vector() const {
    Tensor c = detach().to(dtype_of<T>()).contiguous();
    std::vector<T> out(size_t(c.numel()));
    const TensorImpl* i = c.impl();
    backend::get(c.device())
        .to_host(out.data(), i->storage->data, size_t(i->offset) * sizeof(T),
                 out.size() * sizeof(T));
    return out;
}

template <class T>
T Tensor::item() const {
    if (numel() != 1)
        throw shape_error("item: tensor of shape " + shape_str(sizes()) + " has " +
                          std::to_string(numel()) + " elements, expected 1");
    return to_vector<T>()[0];
}

template float* Tensor::data_ptr<float>() const;
template double* Tensor::data_ptr<double>() const;
template int64_t* Tensor::data_ptr<int64_t>() const;
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template int64_t Tensor::item<int64_t>() const;

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

// ---- conversion
/// y = copy of x;  dx = dy
Tensor Tensor::clone() const {
    Tensor y = runtime::empty(sizes(), dtype(), device());
    runtime::be(*this).copy(runtime::view(y), runtime::view(*this));
    if (should_record({this}))
        record("clone", {this}, y, [](const Tensor& dy) { return Grads{dy}; });
    return y;
}
Tensor Tensor::contiguous() const {
    return is_contiguous() ? *this : clone();
}
/// y = x converted to d;  dx = dy converted back
Tensor Tensor::to(Dtype d) const {
    if (d == dtype())
        return *this;
    Tensor y = runtime::empty(sizes(), d, device());
    runtime::be(*this).copy(runtime::view(y), runtime::view(*this));
    if (is_floating(d) && should_record({this})) {
        const Dtype from = dtype();
        record("to_dtype", {this}, y, [from](const Tensor& dy) { return Grads{dy.to(from)}; });
    }
    return y;
}
/// y = x on device d (through host memory);  dx = dy moved back
Tensor Tensor::to(Device d) const {
    if (d == device())
        return *this;
    Tensor src = contiguous();
    Tensor y = runtime::empty(sizes(), dtype(), d);
    const size_t n = size_t(numel()) * element_size(dtype());
    std::vector<unsigned char> host(n);
    runtime::be(src).to_host(host.data(), src.impl()->storage->data,
                             size_t(src.storage_offset()) * element_size(dtype()), n);
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

// ---- factories
static Tensor finish(Tensor t, const TensorOptions& o) {
    if (o.requires_grad())
        t.requires_grad_(true);
    return t;
}
Tensor empty(const Shape& s, const TensorOptions& o) {
    return finish(runtime::empty(s, o.dtype(), o.device()), o);
}
Tensor full(const Shape& s, Scalar v, const TensorOptions& o) {
    Tensor t = runtime::empty(s, o.dtype(), o.device());
    runtime::fill(t, v);
    return finish(t, o);
}
Tensor zeros(const Shape& s, const TensorOptions& o) {
    return full(s, 0, o);
}
Tensor ones(const Shape& s, const TensorOptions& o) {
    return full(s, 1, o);
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

template <class T>
static Tensor from_host_vector(const std::vector<T>& v, const Shape& s, const TensorOptions& o) {
    Tensor t = runtime::empty(s, o.dtype(), o.device());
    dispatch(o.dtype(), [&](auto tag) {
        using U = decltype(tag);
        std::vector<U> conv(v.begin(), v.end());
        runtime::be(t).from_host(t.impl()->storage->data, 0, conv.data(), conv.size() * sizeof(U));
    });
    return finish(t, o);
}
Tensor tensor(const std::vector<double>& v, const TensorOptions& o) {
    return from_host_vector(v, {int64_t(v.size())}, o);
}
Tensor tensor(std::initializer_list<double> v, const TensorOptions& o) {
    return tensor(std::vector<double>(v), o);
}
Tensor tensor(const std::vector<float>& v, const TensorOptions& o) {
    return from_host_vector(v, {int64_t(v.size())}, o);
}
Tensor tensor(const std::vector<int64_t>& v, const TensorOptions& o) {
    return from_host_vector(v, {int64_t(v.size())}, o);
}
Tensor scalar_tensor(Scalar v, const TensorOptions& o) {
    return from_host_vector(std::vector<double>{v}, {}, o);
}
Tensor arange(Scalar end, const TensorOptions& o) {
    return arange(0, end, 1, o);
}
Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& o) {
    if (step == 0 || (end - start) / step < 0)
        throw shape_error("arange: invalid range start=" + std::to_string(start) +
                          " end=" + std::to_string(end) + " step=" + std::to_string(step));
    const int64_t n = int64_t(std::ceil((end - start) / step));
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        v[size_t(i)] = start + double(i) * step;
    return from_host_vector(v, {n}, o);
}
Tensor from_blob(void* data, const Shape& s, const TensorOptions& o) {
    if (!o.device().is_cpu())
        throw device_error("from_blob: only CPU memory can be wrapped");
    auto impl = std::make_shared<TensorImpl>();
    impl->storage =
        std::make_shared<Storage>(data, size_t(numel_of(s)) * element_size(o.dtype()), o.device());
    impl->sizes = s;
    impl->strides = contiguous_strides(s);
    impl->dtype = o.dtype();
    return finish(Tensor(std::move(impl)), o);
}

static Tensor random_tensor(const Shape& s, bool normal, const TensorOptions& o) {
    if (!is_floating(o.dtype()))
        throw dtype_error(std::string(normal ? "randn" : "rand") + ": dtype " +
                          dtype_name(o.dtype()) + " is not floating-point");
    Tensor t = runtime::empty(s, o.dtype(), o.device());
    runtime::fill_random(t, normal, normal ? 0 : 0, 1);
    return finish(t, o);
}
Tensor randn(const Shape& s, const TensorOptions& o) {
    return random_tensor(s, true, o);
}
Tensor rand(const Shape& s, const TensorOptions& o) {
    return random_tensor(s, false, o);
}
Tensor randint(int64_t low, int64_t high, const Shape& s, const TensorOptions& o) {
    if (high <= low)
        throw shape_error("randint: empty range [" + std::to_string(low) + ", " +
                          std::to_string(high) + ")");
    std::vector<int64_t> v(size_t(numel_of(s)));
    std::uniform_int_distribution<int64_t> dist(low, high - 1);
    for (auto& x : v)
        x = dist(detail::generator());
    return from_host_vector(v, s, o);
}

Tensor& Tensor::uniform_(double lo, double hi) {
    NoGradGuard g;
    Tensor r = runtime::empty(sizes(), dtype(), device());
    runtime::fill_random(r, false, lo, hi);
    return copy_(r);
}
Tensor& Tensor::normal_(double mean, double std) {
    NoGradGuard g;
    Tensor r = runtime::empty(sizes(), dtype(), device());
    runtime::fill_random(r, true, mean, std);
    return copy_(r);
}

// ---- printing
std::ostream& operator<<(std::ostream& os, const Tensor& t) {
    if (!t.defined())
        return os << "[ undefined tensor ]";
    const std::vector<double> v = t.to_vector<double>();
    const Shape& s = t.sizes();
    std::ostringstream out;
    out << std::setprecision(6);
    std::vector<int64_t> st = contiguous_strides(s);
    // prints dim d starting at flat index base, eliding the middle of long dims
    std::function<void(size_t, int64_t)> rec = [&](size_t d, int64_t base) {
        if (d == s.size()) {
            out << v[size_t(base)];
            return;
        }
        out << "[";
        for (int64_t i = 0; i < s[d]; ++i) {
            if (s[d] > 8 && i == 3) {
                out << "..., ";
                i = s[d] - 3;
            }
            rec(d + 1, base + i * st[d]);
            if (i + 1 < s[d])
                out << (d + 1 == s.size() ? ", " : ",\n ");
        }
        out << "]";
    };
    if (t.numel() > 0)
        rec(0, 0);
    os << out.str() << "\n[ " << dtype_name(t.dtype()) << " " << shape_str(s) << " on "
       << t.device().str();
    if (t.grad_fn())
        os << ", grad_fn=" << t.grad_fn()->name();
    else if (t.requires_grad())
        os << ", requires_grad";
    return os << " ]";
}

}  // namespace tg
