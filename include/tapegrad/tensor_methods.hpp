#pragma once
/// LibTorch's in-place method spellings of the pointwise and index-writing ops, and the method
/// spellings of inplace_ops.hpp's functions, as a base of tg::Tensor (tensor.hpp holds the rest):
///
///     x.relu_();  x.clamp_(0, 1);  scores.masked_fill_(mask, -1e9);  p.addcmul_(g, g, 0.1);
///     onehot.scatter_(1, labels.unsqueeze(1), 1);  acc.index_add_(0, rows, src);
///
/// Each in-place op is its out-of-place op written into x (tg::detail::apply_inplace, Note
/// [In-place ops] in src/ops/inplace.cpp): it bumps x's version, records as LibTorch's does (a
/// non-leaf takes over the op's history; a leaf that requires grad throws autograd_error while
/// recording) and throws as LibTorch's: dtype_error where the result's dtype cannot be written
/// into x's (an integer tensor's sqrt_()), shape_error where the result does not have x's shape
/// (a mask that broadcasts x to a larger shape).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <vector>

#include "tapegrad/dtype.hpp"
#include "tapegrad/scalar.hpp"
#include "tapegrad/shape.hpp"
#pragma GCC visibility push(default)

namespace tg {

class Tensor;
class Generator;
class TensorOptions;

namespace detail {

class TensorMethods {
public:
    // ---- in-place pointwise ops (their functions: ops.hpp, inplace_ops.hpp)
    Tensor& relu_();
    Tensor& sigmoid_();
    Tensor& tanh_();
    Tensor& exp_();
    Tensor& log_();
    Tensor& sqrt_();
    Tensor& rsqrt_();
    Tensor& abs_();
    Tensor& neg_();
    Tensor& sign_();
    Tensor& floor_();
    Tensor& ceil_();
    Tensor& round_();
    Tensor& trunc_();
    Tensor& frac_();
    Tensor& reciprocal_();
    Tensor& square_();
    Tensor& sin_();
    Tensor& cos_();
    Tensor& log1p_();
    Tensor& expm1_();
    Tensor& clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi = std::nullopt);
    Tensor& clamp_min_(Scalar lo);
    Tensor& clamp_max_(Scalar hi);
    Tensor& pow_(Scalar e);
    Tensor& pow_(const Tensor& e);
    Tensor& fmod_(Scalar b);
    Tensor& fmod_(const Tensor& b);
    Tensor& remainder_(Scalar b);
    Tensor& remainder_(const Tensor& b);
    Tensor& masked_fill_(const Tensor& mask, Scalar value);
    Tensor& masked_fill_(const Tensor& mask, const Tensor& value);
    Tensor& addcmul_(const Tensor& t1, const Tensor& t2, Scalar value = 1);
    Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, Scalar value = 1);
    Tensor& lerp_(const Tensor& end, Scalar weight);
    Tensor& lerp_(const Tensor& end, const Tensor& weight);
    // ---- in-place index writes (inplace_ops.hpp)
    Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1);
    Tensor& index_fill_(int64_t dim, const Tensor& index, Scalar value);
    Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source);
    Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
    Tensor& scatter_(int64_t dim, const Tensor& index, Scalar value);
    Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);

    // ---- method spellings of functions (ops.hpp, inplace_ops.hpp)
    Tensor neg() const;
    Tensor trunc() const;
    Tensor frac() const;
    Tensor reciprocal() const;
    Tensor addcmul(const Tensor& t1, const Tensor& t2, Scalar value = 1) const;
    Tensor addcdiv(const Tensor& t1, const Tensor& t2, Scalar value = 1) const;
    Tensor lerp(const Tensor& end, Scalar weight) const;
    Tensor lerp(const Tensor& end, const Tensor& weight) const;
    Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source,
                     Scalar alpha = 1) const;
    Tensor index_fill(int64_t dim, const Tensor& index, Scalar value) const;
    Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
    Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
    Tensor scatter(int64_t dim, const Tensor& index, Scalar value) const;
    Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;

    // ---- split_ops.hpp and numeric_ops.hpp
    std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
    std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
    std::vector<Tensor> split(const std::vector<int64_t>& split_sizes, int64_t dim = 0) const;
    std::vector<Tensor> unbind(int64_t dim = 0) const;
    /// x repeated along each dim (repeats at least as long as x's dims, shape_error otherwise;
    /// tg::tile pads shorter ones)
    Tensor repeat(const std::vector<int64_t>& repeats) const;
    Tensor tile(const std::vector<int64_t>& dims) const;
    Tensor flip(const std::vector<int64_t>& dims) const;
    Tensor roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {}) const;
    Tensor movedim(const std::vector<int64_t>& source,
                   const std::vector<int64_t>& destination) const;
    Tensor movedim(int64_t source, int64_t destination) const;
    Tensor std(bool unbiased = true) const;
    Tensor std(const std::vector<int64_t>& dims, bool unbiased = true, bool keepdim = false) const;
    Tensor std(std::initializer_list<int64_t> dims, bool unbiased = true,
               bool keepdim = false) const;
    Tensor std(int dim) const;  // x.std(1): dim 1, as LibTorch's C++ overload
    Tensor isnan() const;
    Tensor isinf() const;
    Tensor isfinite() const;
    Tensor nan_to_num(std::optional<double> nan = std::nullopt,
                      std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt) const;
    Tensor& nan_to_num_(std::optional<double> nan = std::nullopt,
                        std::optional<double> posinf = std::nullopt,
                        std::optional<double> neginf = std::nullopt);
    Tensor count_nonzero(std::optional<int64_t> dim = std::nullopt) const;
    Tensor dot(const Tensor& other) const;
    Tensor mv(const Tensor& vec) const;
    Tensor outer(const Tensor& vec2) const;
    Tensor ger(const Tensor& vec2) const;
    Tensor diag(int64_t diagonal = 0) const;
    Tensor trace() const;
    Tensor clip(std::optional<Scalar> lo, std::optional<Scalar> hi = std::nullopt) const;
    Tensor& clip_(std::optional<Scalar> lo, std::optional<Scalar> hi = std::nullopt);
    Tensor sgn() const;

    // ---- math_ops.hpp
    Tensor tan() const;
    Tensor sinh() const;
    Tensor cosh() const;
    Tensor asin() const;
    Tensor acos() const;
    Tensor atan() const;
    Tensor log2() const;
    Tensor log10() const;
    Tensor exp2() const;
    Tensor erf() const;
    Tensor erfc() const;
    Tensor& tan_();
    Tensor& sinh_();
    Tensor& cosh_();
    Tensor& asin_();
    Tensor& acos_();
    Tensor& atan_();
    Tensor& log2_();
    Tensor& log10_();
    Tensor& exp2_();
    Tensor& erf_();
    Tensor& erfc_();
    Tensor atan2(const Tensor& other) const;
    Tensor hypot(const Tensor& other) const;
    Tensor& atan2_(const Tensor& other);
    Tensor& hypot_(const Tensor& other);

    // ---- reduce_ops.hpp
    Tensor prod(std::optional<Dtype> dtype = std::nullopt) const;
    Tensor prod(int64_t dim, bool keepdim = false, std::optional<Dtype> dtype = std::nullopt) const;
    Tensor cumprod(int64_t dim, std::optional<Dtype> dtype = std::nullopt) const;
    Tensor median() const;
    std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
    std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
    Tensor bincount() const;
    Tensor bincount(const Tensor& weights, int64_t minlength = 0) const;

    // ---- random draws (tapegrad/factories.hpp, docs/random.md), as LibTorch 1.13's CPU kernels
    /// ceil(log(u) / log(1 - p)) from a 53-bit uniform u (value_error unless 0 < p < 1)
    Tensor& geometric_(double p);
    Tensor& geometric_(double p, const Generator& g);
    /// median + sigma·tan(π·(u - 0.5)) from a 53-bit uniform u (float32, float64)
    Tensor& cauchy_(double median = 0, double sigma = 1);
    Tensor& cauchy_(double median, double sigma, const Generator& g);
    /// exp of normal_distribution<double>(mean, std), one element at a time (float32, float64)
    Tensor& log_normal_(double mean = 1, double std = 2);
    Tensor& log_normal_(double mean, double std, const Generator& g);
    /// Integers in [0, 2^digits] (floating types) or [0, max] (integer types), bool: 0 or 1
    Tensor& random_();
    Tensor& random_(const Generator& g);
    /// Integers in [0, to) / [from, to), drawn as randint
    Tensor& random_(int64_t to);
    Tensor& random_(int64_t to, const Generator& g);
    Tensor& random_(int64_t from, int64_t to);
    Tensor& random_(int64_t from, int64_t to, const Generator& g);
    Tensor multinomial(int64_t num_samples, bool replacement = false) const;
    Tensor multinomial(int64_t num_samples, bool replacement, const Generator& g) const;

    // ---- autograd and metadata spellings (src/autograd/tensor_grad.cpp, src/ops/methods_api.cpp)
    /// A non-leaf that requires grad keeps the gradient flowing into it in grad() from then on,
    /// a copy accumulated over backwards (Note [Retained gradients]); a no-op on a leaf;
    /// autograd_error on a tensor that does not require grad.
    void retain_grad() const;
    /// Whether retain_grad() was called on this non-leaf (false for leaves, as LibTorch's).
    bool retains_grad() const;
    Tensor& set_requires_grad(bool r);  // requires_grad_(r)
    /// The same TensorImpl (a copy of the handle), as LibTorch's.
    bool is_same(const Tensor& other) const;
    /// The same storage, offset, sizes and strides.
    bool is_set_to(const Tensor& other) const;
    bool is_same_size(const Tensor& other) const;
    int64_t ndimension() const;
    int64_t element_size() const;
    size_t nbytes() const;  // numel() * element_size()
    bool is_floating_point() const;
    bool is_complex() const;  // false: tapegrad has no complex dtypes
    bool is_signed() const;
    bool is_cpu() const;
    bool is_cuda() const;
    Dtype scalar_type() const;
    Tensor cpu() const;
    Tensor cuda() const;
    /// Fresh tensors of x's dtype and device unless o sets a dtype or a device other than the
    /// CPU (TensorOptions cannot tell an explicit kCPU from the default), requiring grad as o.
    Tensor new_zeros(const Shape& size) const;
    Tensor new_zeros(const Shape& size, const TensorOptions& o) const;
    Tensor new_ones(const Shape& size) const;
    Tensor new_ones(const Shape& size, const TensorOptions& o) const;
    Tensor new_empty(const Shape& size) const;
    Tensor new_empty(const Shape& size, const TensorOptions& o) const;
    /// x's dtype unless o sets one (not the value's kind, as LibTorch's).
    Tensor new_full(const Shape& size, Scalar value) const;
    Tensor new_full(const Shape& size, Scalar value, const TensorOptions& o) const;

    // ---- method spellings of ops.hpp's arithmetic (x.add(y, alpha) is x + alpha * y)
    Tensor add(const Tensor& other, Scalar alpha = 1) const;
    Tensor add(Scalar other, Scalar alpha = 1) const;
    Tensor sub(const Tensor& other, Scalar alpha = 1) const;
    Tensor sub(Scalar other, Scalar alpha = 1) const;
    Tensor mul(const Tensor& other) const;
    Tensor mul(Scalar other) const;
    Tensor div(const Tensor& other) const;
    Tensor div(Scalar other) const;
    Tensor maximum(const Tensor& other) const;
    Tensor minimum(const Tensor& other) const;
    Tensor where(const Tensor& condition, const Tensor& other) const;  // where(c, x, other)
    Tensor squeeze() const;
    Tensor squeeze(int64_t dim) const;
    Tensor argwhere() const;  // nonzero()
    /// With a dtype, x is converted to it first, as LibTorch's.
    Tensor cumsum(int64_t dim, std::optional<Dtype> dtype = std::nullopt) const;
    Tensor& cumsum_(int64_t dim);
    Tensor softmax(int64_t dim, std::optional<Dtype> dtype = std::nullopt) const;
    Tensor log_softmax(int64_t dim, std::optional<Dtype> dtype = std::nullopt) const;
    Tensor& logical_not_();
    Tensor& logical_and_(const Tensor& other);
    Tensor& logical_or_(const Tensor& other);
    Tensor& logical_xor_(const Tensor& other);

    // ---- in-place views: x takes the view's sizes and strides (and, recording, its history)
    Tensor& unsqueeze_(int64_t dim);
    Tensor& squeeze_();
    Tensor& squeeze_(int64_t dim);
    Tensor& t_();
    Tensor& transpose_(int64_t d0, int64_t d1);

private:
    Tensor& self();
    const Tensor& self() const;
};

}  // namespace detail
}  // namespace tg

#pragma GCC visibility pop
