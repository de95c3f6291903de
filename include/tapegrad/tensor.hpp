#pragma once
/// tg::Tensor: a strided view of a device buffer that records the ops applied to it.
#include <atomic>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tapegrad/device.hpp"
#include "tapegrad/dtype.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/generator.hpp"
#include "tapegrad/scalar.hpp"
#include "tapegrad/shape.hpp"
#include "tapegrad/tensor_methods.hpp"
#pragma GCC visibility push(default)

namespace tg {

struct Node;
class Tensor;
struct GradChunks;  // src/autograd/hooks.hpp
namespace indexing {
class TensorIndex;  // tapegrad/indexing.hpp
}

/// A device buffer. Views share it, and with it the version counter that in-place ops bump
/// (Note [Version counter] in src/autograd/saved.cpp).
struct Storage {
    void* data = nullptr;
    size_t nbytes = 0;
    Device device;
    bool owned = true;                   // false for from_blob
    std::function<void(void*)> deleter;  // from_blob's: called with data when the storage dies
    uint32_t version = 0;
    uint32_t saved_refs = 0;  // Saved objects holding it as an activation (memory::Stats)
    // held by a leaf that requires grad (a parameter): not an activation; atomic, as two threads
    // may mark views of one parameter at once (w.detach().requires_grad_() in each)
    std::atomic<bool> grad_leaf{false};
    alignas(16) unsigned char small[64];    // CPU buffers of up to 64 bytes live here (no malloc)
    Storage(size_t nbytes, Device device);  // allocates through the device's allocator
    Storage(void* external, size_t nbytes, Device device);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
};

/// What a tensor is. Users hold it through Tensor.
struct TensorImpl {
    std::shared_ptr<Storage> storage;
    Shape sizes, strides;
    int64_t offset = 0;  // in elements
    Dtype dtype = Dtype::Float32;
    bool requires_grad = false;            // leaves only; non-leaves require grad through grad_fn
    std::shared_ptr<Node> grad_fn;         // producer, null for leaves
    uint32_t output_nr = 0;                // which output of grad_fn this is
    std::shared_ptr<TensorImpl> grad;      // .grad(): a leaf's sum, a retain_grad() non-leaf's
    std::weak_ptr<Node> grad_accumulator;  // leaves: their AccumulateGrad node
    std::vector<std::function<Tensor(const Tensor&)>> hooks;  // leaves: gradient hooks
    std::vector<std::function<void(const Tensor&)>> post_accumulate_hooks;  // leaves
    std::shared_ptr<GradChunks> grad_chunks;  // leaves: Note [Gradient chunks] (internal)
    TensorImpl() = default;
    TensorImpl(const TensorImpl&) = default;
    ~TensorImpl();  // releases grad_fn without recursion (Note [Graph destruction])
};

/// Options for factories: tg::TensorOptions().dtype(tg::kFloat64).requires_grad(true).
class TensorOptions {
public:
    TensorOptions() = default;
    TensorOptions(Dtype d) : dtype_(d) {}    // NOLINT: implicit, as in LibTorch
    TensorOptions(Device d) : device_(d) {}  // NOLINT
    TensorOptions dtype(Dtype d) const {
        auto o = *this;
        o.dtype_ = d;
        return o;
    }
    TensorOptions device(Device d) const {
        auto o = *this;
        o.device_ = d;
        return o;
    }
    TensorOptions requires_grad(bool r) const {
        auto o = *this;
        o.requires_grad_ = r;
        return o;
    }
    /// The dtype set, else the default, float32.
    Dtype dtype() const { return dtype_.value_or(Dtype::Float32); }
    /// Whether a dtype was set: factories that infer one (full, arange, tensor) infer it only
    /// when not, as LibTorch's.
    bool has_dtype() const { return dtype_.has_value(); }
    Device device() const { return device_; }
    bool requires_grad() const { return requires_grad_; }

private:
    std::optional<Dtype> dtype_;
    Device device_ = Device::cpu();
    bool requires_grad_ = false;
};
/// LibTorch's free spellings of options: tg::ones({2, 2}, tg::requires_grad()),
/// tg::zeros(3, tg::dtype(tg::kFloat64).requires_grad(true)), tg::device(tg::kCPU).
inline TensorOptions requires_grad(bool r = true) {
    return TensorOptions().requires_grad(r);
}
inline TensorOptions dtype(Dtype d) {
    return TensorOptions(d);
}
inline TensorOptions device(Device d) {
    return TensorOptions(d);
}

class Tensor : public detail::TensorMethods {  // in-place ops: tensor_methods.hpp
public:
    Tensor() = default;  // undefined tensor (e.g. a leaf's grad before backward)
    explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

    bool defined() const { return impl_ != nullptr; }
    TensorImpl* impl() const { return impl_.get(); }
    const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

    // ---- metadata
    const Shape& sizes() const { return check()->sizes; }
    const Shape& strides() const { return check()->strides; }
    int64_t size(int64_t dim) const;
    int64_t stride(int64_t dim) const;
    int64_t dim() const { return int64_t(check()->sizes.size()); }
    int64_t numel() const;
    Dtype dtype() const { return check()->dtype; }
    Device device() const { return check()->storage->device; }
    TensorOptions options() const { return TensorOptions(dtype()).device(device()); }
    int64_t storage_offset() const { return check()->offset; }
    bool is_contiguous() const;
    /// Address of the first element (CPU tensors only; throws device_error otherwise).
    template <class T>
    T* data_ptr() const;
    /// The single element's value as T (any arithmetic type, Half, BFloat16), converted as
    /// Scalar::to<T> (bool is "nonzero"; a value T cannot hold throws value_error, as LibTorch's
    /// item<T> does); throws shape_error for tensors with more than one element.
    template <class T>
    T item() const {
        try {
            return item().to<T>();
        } catch (const value_error& e) {
            throw value_error(std::string("item: ") + e.what());
        }
    }
    /// The single element without a type, as LibTorch's item(): a Scalar holding an integral
    /// element exactly, a floating one as a double, a bool as a bool.
    Scalar item() const;
    /// The single element as T, any element type (converted as a copy converts: Note
    /// [Conversions]).
    template <class T>
    T item_as() const;
    /// Copies all elements to a host vector (any device, any layout).
    template <class T>
    std::vector<T> to_vector() const;

    // ---- autograd (see autograd.hpp)
    bool requires_grad() const { return check()->requires_grad || impl_->grad_fn != nullptr; }
    Tensor& requires_grad_(bool r = true);
    bool is_leaf() const { return check()->grad_fn == nullptr; }
    /// The accumulated gradient of a leaf (or of a non-leaf that called retain_grad());
    /// undefined before the first backward or after zero_grad.
    Tensor grad() const;
    /// Replaces grad() with g (undefined: none). g must have this tensor's shape, dtype and device
    /// and no elements sharing memory (not an expand() view); autograd_error otherwise.
    void set_grad(const Tensor& g) const;
    const std::shared_ptr<Node>& grad_fn() const { return check()->grad_fn; }
    uint32_t output_nr() const { return check()->output_nr; }
    /// Backpropagates from this tensor, adding into every leaf's grad().
    void backward(const Tensor& gradient = {}, bool retain_graph = false,
                  bool create_graph = false) const;
    /// hook(grad) runs when this tensor's gradient is computed; a defined return replaces it and
    /// must have the gradient's shape, dtype and device (else backward throws autograd_error
    /// naming the hook). Throws autograd_error if this tensor does not require grad, value_error
    /// for an empty function.
    void register_hook(std::function<Tensor(const Tensor&)> hook) const;
    /// hook(leaf) runs once per backward pass, after the last gradient of that pass has been
    /// added into this leaf's grad() (PyTorch's register_post_accumulate_grad_hook; data
    /// parallelism launches communication from it). Not in autograd::grad, which leaves grad()
    /// alone. Throws autograd_error unless this is a leaf that
    /// requires grad, value_error for an empty function.
    void register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const;
    /// Shares storage, records nothing: the result is a leaf that does not require grad.
    Tensor detach() const;
    /// LibTorch's x.data(): detach() (in-place writes through it still bump the version that
    /// backward checks, where LibTorch's would go unseen: a stale saved tensor throws here).
    Tensor data() const { return detach(); }
    uint32_t _version() const { return check()->storage->version; }

    // ---- conversion (differentiable where it makes sense)
    Tensor clone() const;
    Tensor contiguous() const;
    Tensor to(Dtype d) const;
    Tensor to(Device d) const;
    Tensor to(const TensorOptions& o) const;

    // ---- in-place (Note [In-place ops] in src/ops/inplace.cpp); each bumps the version
    Tensor& add_(const Tensor& other, Scalar alpha = 1);
    Tensor& add_(Scalar s);
    Tensor& sub_(const Tensor& other, Scalar alpha = 1);
    Tensor& mul_(const Tensor& other);
    Tensor& mul_(Scalar s);
    Tensor& div_(const Tensor& other);
    Tensor& div_(Scalar s);
    Tensor& zero_();
    Tensor& fill_(Scalar s);
    Tensor& copy_(const Tensor& src);
    /// Fills with samples from the thread's default generator (Note [Per-thread generators] in
    /// tapegrad/generator.hpp), or from g.
    Tensor& uniform_(double lo = 0, double hi = 1);
    Tensor& uniform_(double lo, double hi, const Generator& g);
    Tensor& normal_(double mean = 0, double std = 1);
    Tensor& normal_(double mean, double std, const Generator& g);
    /// 1 with probability p, else 0 (any dtype; value_error unless 0 <= p <= 1).
    Tensor& bernoulli_(double p = 0.5);
    Tensor& bernoulli_(double p, const Generator& g);
    /// In-place draws of Exp(lambd): -log(1 - u)/lambd from a 53-bit uniform u, as LibTorch's CPU
    Tensor& exponential_(double lambd = 1);
    Tensor& exponential_(double lambd, const Generator& g);

    // ---- method spellings of ops.hpp functions, as LibTorch has them
    Tensor sum() const;
    Tensor sum(std::vector<int64_t> dims, bool keepdim = false) const;
    Tensor mean() const;
    Tensor mean(std::vector<int64_t> dims, bool keepdim = false) const;
    Tensor max() const;
    Tensor min() const;
    std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;  // (values, indices)
    std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
    Tensor max(const Tensor& other) const;  // elementwise, as maximum
    Tensor min(const Tensor& other) const;
    Tensor amax(std::vector<int64_t> dims = {}, bool keepdim = false) const;
    Tensor amin(std::vector<int64_t> dims = {}, bool keepdim = false) const;
    Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
    Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
    Tensor reshape(Shape s) const;
    Tensor view(Shape s) const;
    Tensor flatten(int64_t start = 0, int64_t end = -1) const;
    Tensor unsqueeze(int64_t dim) const;
    Tensor expand(Shape s) const;
    Tensor t() const;
    Tensor transpose(int64_t d0, int64_t d1) const;
    Tensor permute(std::vector<int64_t> dims) const;
    Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
    Tensor matmul(const Tensor& other) const;
    Tensor pow(Scalar e) const;
    Tensor sqrt() const;
    Tensor exp() const;
    Tensor log() const;
    Tensor abs() const;
    Tensor tanh() const;
    Tensor sigmoid() const;
    Tensor relu() const;
    // comparisons and logic (tapegrad/logical.hpp): bool results
    Tensor eq(const Tensor& o) const;
    Tensor ne(const Tensor& o) const;
    Tensor gt(const Tensor& o) const;
    Tensor lt(const Tensor& o) const;
    Tensor ge(const Tensor& o) const;
    Tensor le(const Tensor& o) const;
    Tensor eq(Scalar s) const;
    Tensor ne(Scalar s) const;
    Tensor gt(Scalar s) const;
    Tensor lt(Scalar s) const;
    Tensor ge(Scalar s) const;
    Tensor le(Scalar s) const;
    Tensor logical_not() const;
    Tensor logical_and(const Tensor& o) const;
    Tensor logical_or(const Tensor& o) const;
    Tensor logical_xor(const Tensor& o) const;
    Tensor any() const;
    Tensor all() const;
    Tensor any(int64_t dim, bool keepdim = false) const;
    Tensor all(int64_t dim, bool keepdim = false) const;
    Tensor nonzero() const;
    Tensor masked_select(const Tensor& mask) const;
    // ordering (ops.hpp)
    std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
    Tensor argsort(int64_t dim = -1, bool descending = false) const;
    Tensor argsort(int dim, bool descending = false) const;  // x.argsort(1): dim 1
    Tensor argsort(bool stable, int64_t dim = -1, bool descending = false) const;  // LibTorch's
    std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true,
                                    bool sorted = true) const;
    // one dim, as x.sum(1) in LibTorch (templates, so that x.sum({}) still means all dims)
    template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
    Tensor sum(Int dim, bool keepdim = false) const {
        return sum(std::vector<int64_t>{int64_t(dim)}, keepdim);
    }
    template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
    Tensor mean(Int dim, bool keepdim = false) const {
        return mean(std::vector<int64_t>{int64_t(dim)}, keepdim);
    }
    Tensor logsumexp(std::vector<int64_t> dims, bool keepdim = false) const;
    template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
    Tensor logsumexp(Int dim, bool keepdim = false) const {
        return logsumexp(std::vector<int64_t>{int64_t(dim)}, keepdim);
    }
    Tensor norm(Scalar p = 2) const;
    Tensor norm(Scalar p, std::vector<int64_t> dims, bool keepdim = false) const;
    template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
    Tensor norm(Scalar p, Int dim, bool keepdim = false) const {  // x.norm(2, 1), as LibTorch
        return norm(p, std::vector<int64_t>{int64_t(dim)}, keepdim);
    }
    // closeness (tapegrad/logical.hpp)
    Tensor isclose(const Tensor& o, double rtol = 1e-05, double atol = 1e-08,
                   bool equal_nan = false) const;
    bool allclose(const Tensor& o, double rtol = 1e-05, double atol = 1e-08,
                  bool equal_nan = false) const;
    bool equal(const Tensor& o) const;
    Tensor mm(const Tensor& other) const;
    Tensor bmm(const Tensor& other) const;
    Tensor square() const;
    Tensor rsqrt() const;
    Tensor sin() const;
    Tensor cos() const;
    Tensor log1p() const;
    Tensor expm1() const;
    Tensor floor() const;
    Tensor ceil() const;
    Tensor round() const;
    Tensor sign() const;
    Tensor expand_as(const Tensor& other) const;
    Tensor view_as(const Tensor& other) const;
    Tensor reshape_as(const Tensor& other) const;
    Tensor type_as(const Tensor& other) const;
    Tensor masked_fill(const Tensor& mask, Scalar value) const;
    Tensor clamp(std::optional<Scalar> lo, std::optional<Scalar> hi = std::nullopt) const;
    Tensor clamp_min(Scalar lo) const;
    Tensor clamp_max(Scalar hi) const;
    Tensor var(bool unbiased = true) const;
    Tensor var(std::vector<int64_t> dims, bool unbiased = true, bool keepdim = false) const;
    // (so that x.var({1}) means dim 1, not unbiased = true)
    Tensor var(int dim) const;  // x.var(1): dim 1, as LibTorch's overload (not unbiased)
    Tensor var(std::initializer_list<int64_t> dims, bool unbiased = true,
               bool keepdim = false) const;
    Tensor index_select(int64_t dim, const Tensor& index) const;
    Tensor gather(int64_t dim, const Tensor& index) const;
    Tensor pow(const Tensor& e) const;
    Tensor remainder(const Tensor& b) const;  // x.remainder(2), x.fmod(y): ops.hpp's
    Tensor remainder(Scalar b) const;
    Tensor fmod(const Tensor& b) const;
    Tensor fmod(Scalar b) const;
    Tensor triu(int64_t diagonal = 0) const;
    Tensor tril(int64_t diagonal = 0) const;
    // indexing (tapegrad/indexing.hpp): x[i], select, slice, index({...}), index_put_
    Tensor operator[](int64_t i) const;
    Tensor select(int64_t dim, int64_t index) const;
    Tensor slice(int64_t dim, std::optional<int64_t> start = std::nullopt,
                 std::optional<int64_t> stop = std::nullopt, int64_t step = 1) const;
    Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
    Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& value,
                       bool accumulate = false);
    Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar value,
                       bool accumulate = false);

private:
    TensorImpl* check() const {
        if (!impl_)
            throw_undefined();
        return impl_.get();
    }
    [[noreturn]] static void throw_undefined();
    std::shared_ptr<TensorImpl> impl_;
};

/// Prints the values in LibTorch 1.13's layout (fixed or scientific columns chosen from the
/// values, one matrix per leading index, "Columns a to b" past `linesize`), then its footer:
/// "[ CPUFloatType{2,2} ]" (CUDA..., OpenCL...; Long, Double, Bool).
std::ostream& operator<<(std::ostream& os, const Tensor& t);
std::ostream& print(std::ostream& os, const Tensor& t, int64_t linesize = 80);
/// tapegrad's short form: nested brackets with long dims elided, then dtype, shape, device and
/// grad_fn or requires_grad.
std::string repr(const Tensor& t);

/// Compound assignment, as LibTorch has it: the in-place ops add_, sub_, mul_, div_ (recorded
/// and version-checked, Note [In-place ops] in src/ops/inplace.cpp).
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, Scalar s);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, Scalar s);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, Scalar s);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, Scalar s);

}  // namespace tg

#pragma GCC visibility pop
#include "tapegrad/factories.hpp"  // zeros, ones, randn, tensor, ...: in a header of their own
#include "tapegrad/promotion.hpp"  // result_type, can_cast
