#pragma once
/// Factories: tensors made from a shape, a range, random draws or host values. Included by
/// tensor.hpp.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

// ---- factories. A shape with a negative size, more than 16 dims, or whose element or byte
// count overflows int64 throws shape_error naming the factory and the shape; one the device
// cannot hold throws out_of_memory.
Tensor empty(const Shape& s, const TensorOptions& o = {});
Tensor zeros(const Shape& s, const TensorOptions& o = {});
Tensor ones(const Shape& s, const TensorOptions& o = {});
// LibTorch's 1-D spellings with a bare size: zeros(3) is zeros({3}). Templates, so that a braced
// list ({} or {3}) still means a Shape.
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Tensor empty(Int n, const TensorOptions& o = {}) {
    return empty(Shape{int64_t(n)}, o);
}
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Tensor zeros(Int n, const TensorOptions& o = {}) {
    return zeros(Shape{int64_t(n)}, o);
}
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Tensor ones(Int n, const TensorOptions& o = {}) {
    return ones(Shape{int64_t(n)}, o);
}
Tensor full(const Shape& s, Scalar value, const TensorOptions& o = {});
Tensor zeros_like(const Tensor& t, const TensorOptions& o);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor empty_like(const Tensor& t);
/// ceil((end - start) / step) values start + i*step. A NaN or infinite bound or step throws
/// value_error; a zero step or one pointing away from end, or too many values, shape_error.
Tensor arange(Scalar end, const TensorOptions& o = {});
Tensor arange(Scalar start, Scalar end, Scalar step = 1, const TensorOptions& o = {});
/// steps values from start to end, evenly spaced, computed as LibTorch's CPU kernel does (the
/// first half from start, the second from end, in the element type), so they agree bit for bit;
/// value_error for a negative steps or a NaN or infinite bound.
Tensor linspace(Scalar start, Scalar end, int64_t steps, const TensorOptions& o = {});
/// Standard normal samples from the calling thread's default generator (see manual_seed), or
/// from g.
Tensor randn(const Shape& s, const TensorOptions& o = {});
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Tensor randn(Int n, const TensorOptions& o = {}) {
    return randn(Shape{int64_t(n)}, o);
}
Tensor randn(const Shape& s, const Generator& g, const TensorOptions& o = {});
/// Uniform samples in [0, 1).
Tensor rand(const Shape& s, const TensorOptions& o = {});
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Tensor rand(Int n, const TensorOptions& o = {}) {
    return rand(Shape{int64_t(n)}, o);
}
Tensor rand(const Shape& s, const Generator& g, const TensorOptions& o = {});
/// Uniform integers in [low, high), int64 unless o says otherwise.
Tensor randint(int64_t low, int64_t high, const Shape& s, const TensorOptions& o = kInt64);
Tensor randint(int64_t low, int64_t high, const Shape& s, const Generator& g,
               const TensorOptions& o = kInt64);
/// randint(0, high, s, o).
Tensor randint(int64_t high, const Shape& s, const TensorOptions& o = kInt64);
/// A random permutation of 0..n-1 (int64 unless o says otherwise), as LibTorch 1.13's CPU
/// randperm draws it: n - 1 swaps, each from one 32-bit draw.
Tensor randperm(int64_t n, const TensorOptions& o = kInt64);
Tensor randperm(int64_t n, const Generator& g, const TensorOptions& o = kInt64);
/// 1 with probability p[i], else 0, in p's dtype (p floating, each p[i] in [0, 1]: value_error).
/// In-place with one probability: Tensor::bernoulli_(p).
Tensor bernoulli(const Tensor& p);
Tensor bernoulli(const Tensor& p, const Generator& g);
/// num_samples category indices (int64) per row of probs (1-D [n] or 2-D [rows, n]: a [num_samples]
/// or [rows, num_samples] result), drawn with the weights of the row (any non-negative finite
/// numbers, not all zero), as LibTorch 1.13's CPU multinomial draws them: without replacement,
/// the top num_samples of probs / exponential_(1); with replacement (even for one sample), a
/// search of the row's normalised cumulative sums for one 53-bit uniform per sample
/// (docs/random.md).
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false);
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, const Generator& g);
/// Wraps caller-owned CPU memory without copying; the memory must outlive the tensor.
Tensor from_blob(void* data, const Shape& s, const TensorOptions& o = {});
/// The same, and deleter(data) is called once the last tensor viewing the memory is gone (on the
/// thread that drops it), as LibTorch's from_blob with a deleter. When from_blob throws, the
/// deleter is not called: the memory stays the caller's.
Tensor from_blob(void* data, const Shape& s, const std::function<void(void*)>& deleter,
                 const TensorOptions& o = {});
/// A braced list of numbers, or of such lists, as LibTorch's detail::TensorDataContainer reads it
/// for tensor({...}): its shape, and the dtype its literals give (bool: bool; floating point:
/// float32, the default dtype; integers: int64). Lists of unequal lengths, or of numbers of
/// different kinds (tensor({1, 2.5}), as LibTorch), throw value_error.
class TensorDataContainer {
public:
    TensorDataContainer(bool v) : kind_(Kind::Bool), i_(v), dtype_(kBool) {}  // NOLINT: implicit
    TensorDataContainer(double v) : kind_(Kind::Float), d_(v) {}              // NOLINT
    TensorDataContainer(float v) : kind_(Kind::Float), d_(double(v)) {}       // NOLINT
    template <class Int,
              std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
    TensorDataContainer(Int v) : kind_(Kind::Int), i_(int64_t(v)), dtype_(kInt64) {}  // NOLINT
    TensorDataContainer(std::initializer_list<TensorDataContainer> items);            // NOLINT
    /// The shape ([] for a number) and the inferred dtype.
    const Shape& sizes() const { return sizes_; }
    Dtype dtype() const { return dtype_; }
    /// Appends the numbers in row-major order: floating ones to doubles, integers and bools to
    /// ints (exactly).
    void flatten(std::vector<double>& doubles, std::vector<int64_t>& ints) const;

private:
    enum class Kind { Bool, Int, Float, List };
    Kind kind_;
    int64_t i_ = 0;
    double d_ = 0;
    std::vector<TensorDataContainer> items_;
    Shape sizes_;
    Dtype dtype_ = kFloat32;
};

/// A tensor holding a copy of a braced list (nested for more dims: tensor({{1, 2}, {3, 4}})), of
/// the dtype LibTorch gives it (tensor({1, 2}) int64, tensor({1.5}) float32, tensor({true})
/// bool) unless o sets one; every value checked into the dtype as LibTorch's tensor() checks it:
/// tensor({1, 300}, kUInt8) throws value_error.
Tensor tensor(std::initializer_list<TensorDataContainer> values, const TensorOptions& o = {});
/// A 1-D tensor holding a copy of values (float32 unless o says otherwise).
Tensor tensor(const std::vector<double>& values, const TensorOptions& o = {});
Tensor tensor(const std::vector<float>& values, const TensorOptions& o = {});
Tensor tensor(const std::vector<int64_t>& values, const TensorOptions& o = kInt64);
Tensor tensor(const std::vector<int>& values, const TensorOptions& o = kInt64);  // int64
/// A 0-dim tensor.
Tensor scalar_tensor(Scalar v, const TensorOptions& o = {});
/// LibTorch's tensor(3.5), tensor(7) and tensor(true): a 0-dim float32 (int64 for an integer,
/// bool for a bool) tensor.
inline Tensor tensor(double v, const TensorOptions& o = {}) {
    return scalar_tensor(v, o);
}
inline Tensor tensor(bool v, const TensorOptions& o = kBool) {
    return scalar_tensor(v, o);
}
template <class Int,
          std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
Tensor tensor(Int v, const TensorOptions& o = kInt64) {
    return scalar_tensor(Scalar(v), o);
}

/// Seeds the calling thread's default generator (randn, rand, randint, randperm, bernoulli,
/// normal_, uniform_, dropout, the modules' initialisations, RandomSampler) and the one of every
/// thread that has not drawn yet (Note [Per-thread generators] in tapegrad/generator.hpp). What
/// they draw after manual_seed(s) is what LibTorch draws after torch::manual_seed(s).
void manual_seed(uint64_t seed);

}  // namespace tg

#pragma GCC visibility pop
