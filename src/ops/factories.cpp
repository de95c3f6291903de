// Factories: empty, zeros, ones, full, tensor, arange, from_blob, randn, rand, randint, and the
// in-place random fills.
#include <cmath>
#include <random>

#include "core/random.hpp"
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

void manual_seed(uint64_t seed) {
    detail::seed_default(seed);
}

static Tensor random_tensor(const Shape& s, bool normal, const TensorOptions& o,
                            const Generator* g) {
    if (!is_floating(o.dtype()))
        throw dtype_error(std::string(normal ? "randn" : "rand") + ": dtype " +
                          dtype_name(o.dtype()) + " is not floating-point");
    Tensor t = runtime::empty(s, o.dtype(), o.device());
    runtime::fill_random(t, normal, 0, 1, g);
    return finish(t, o);
}
Tensor randn(const Shape& s, const TensorOptions& o) {
    return random_tensor(s, true, o, nullptr);
}
Tensor randn(const Shape& s, const Generator& g, const TensorOptions& o) {
    return random_tensor(s, true, o, &g);
}
Tensor rand(const Shape& s, const TensorOptions& o) {
    return random_tensor(s, false, o, nullptr);
}
Tensor rand(const Shape& s, const Generator& g, const TensorOptions& o) {
    return random_tensor(s, false, o, &g);
}

static Tensor random_ints(int64_t low, int64_t high, const Shape& s, const TensorOptions& o,
                          const Generator* g) {
    if (high <= low)
        throw shape_error("randint: empty range [" + std::to_string(low) + ", " +
                          std::to_string(high) + ")");
    std::vector<int64_t> v(size_t(numel_of(s)));
    std::uniform_int_distribution<int64_t> dist(low, high - 1);
    {
        detail::Draw draw(g);
        for (auto& x : v)
            x = dist(draw.engine());
    }
    return from_host_vector(v, s, o);
}
Tensor randint(int64_t low, int64_t high, const Shape& s, const TensorOptions& o) {
    return random_ints(low, high, s, o, nullptr);
}
Tensor randint(int64_t low, int64_t high, const Shape& s, const Generator& g,
               const TensorOptions& o) {
    return random_ints(low, high, s, o, &g);
}

static Tensor& fill_random_(Tensor& t, bool normal, double a, double b, const Generator* g) {
    NoGradGuard no_grad;
    Tensor r = runtime::empty(t.sizes(), t.dtype(), t.device());
    runtime::fill_random(r, normal, a, b, g);
    return t.copy_(r);
}
Tensor& Tensor::uniform_(double lo, double hi) {
    return fill_random_(*this, false, lo, hi, nullptr);
}
Tensor& Tensor::uniform_(double lo, double hi, const Generator& g) {
    return fill_random_(*this, false, lo, hi, &g);
}
Tensor& Tensor::normal_(double mean, double std) {
    return fill_random_(*this, true, mean, std, nullptr);
}
Tensor& Tensor::normal_(double mean, double std, const Generator& g) {
    return fill_random_(*this, true, mean, std, &g);
}

}  // namespace tg
