#pragma once
/// The rest of ATen's activations (ops.hpp includes this header; tanh, sigmoid, relu, leaky_relu,
/// gelu, softplus and the softmaxes are in ops.hpp). One `///` line each: forward, then the
/// vector-Jacobian product of its backward. elu, silu, mish and log_sigmoid are one fused kernel
/// each way (kernels.def); the rest are composed. The in-place forms (elu_, hardtanh_, ...) write
/// the result into x with a recorded copy_ and return x, as LibTorch's.
#include <optional>
#include <string>

#include "tapegrad/generator.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// gelu(x) for approximate "none"; for "tanh" 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
/// (composed); value_error for another string
Tensor gelu(const Tensor& x, const std::string& approximate);
/// y = scale·x where x > 0, else scale·alpha·(e^(input_scale·x) - 1) (ATen's elu);
/// dx = dy·scale where x > 0, else dy·scale·alpha·input_scale·e^(input_scale·x)
Tensor elu(const Tensor& x, Scalar alpha = 1, Scalar scale = 1, Scalar input_scale = 1);
Tensor& elu_(Tensor& x, Scalar alpha = 1, Scalar scale = 1, Scalar input_scale = 1);
/// elu with alpha 1.6732632423543772 and scale 1.0507009873554805 (self-normalising)
Tensor selu(const Tensor& x);
Tensor& selu_(Tensor& x);
/// elu(x, alpha, 1, 1/alpha): max(0, x) + min(0, alpha·(e^(x/alpha) - 1)); alpha != 0
Tensor celu(const Tensor& x, Scalar alpha = 1);
Tensor& celu_(Tensor& x, Scalar alpha = 1);
/// y = x·sigmoid(x);  dx = dy·s·(1 + x·(1 - s)), s = sigmoid(x)
Tensor silu(const Tensor& x);
/// y = x·tanh(softplus(x));  dx = dy·(t + x·sigmoid(x)·(1 - t²)), t = tanh(softplus(x))
Tensor mish(const Tensor& x);
/// y = log sigmoid(x) = min(x, 0) - log(1 + e^-|x|) (stable);  dx = dy·sigmoid(-x)
Tensor log_sigmoid(const Tensor& x);
/// y = min(max(x, min_val), max_val);  dx = dy where min_val < x < max_val (strictly, as
/// ATen's hardtanh_backward), else 0
Tensor hardtanh(const Tensor& x, Scalar min_val = -1, Scalar max_val = 1);
Tensor& hardtanh_(Tensor& x, Scalar min_val = -1, Scalar max_val = 1);
/// hardtanh(x, 0, 6)
Tensor relu6(const Tensor& x);
Tensor& relu6_(Tensor& x);
/// y = x where |x| > lambd, else 0;  dx = dy there, else 0
Tensor hardshrink(const Tensor& x, Scalar lambd = 0.5);
/// y = x - clamp(x, -lambd, lambd);  dx = dy where |x| > lambd, else 0 (lambd >= 0)
Tensor softshrink(const Tensor& x, Scalar lambd = 0.5);
/// y = x where x > threshold, else value;  dx = dy where x > threshold, else 0
Tensor threshold(const Tensor& x, Scalar threshold, Scalar value);
Tensor& threshold_(Tensor& x, Scalar threshold, Scalar value);
/// The gated linear unit: a·sigmoid(b), a and b the two halves of x along dim (of even size)
Tensor glu(const Tensor& x, int64_t dim = -1);
/// y = x where x > 0, else w·x: weight [1] or [C] (one slope per channel, dim 1 of x)
Tensor prelu(const Tensor& x, const Tensor& weight);
/// Randomized leaky ReLU. training: y = x where x > 0, else r·x with r ~ U(lower, upper) drawn
/// for each element x <= 0 in index order, as LibTorch's CPU kernel draws it (float32: the bounds
/// and r rounded to float); dx = dy·(1 or r). Not training: leaky_relu(x, (lower + upper)/2).
Tensor rrelu(const Tensor& x, Scalar lower = 1.0 / 8.0, Scalar upper = 1.0 / 3.0,
             bool training = false, std::optional<Generator> generator = std::nullopt);
Tensor& rrelu_(Tensor& x, Scalar lower = 1.0 / 8.0, Scalar upper = 1.0 / 3.0, bool training = false,
               std::optional<Generator> generator = std::nullopt);

}  // namespace tg

#pragma GCC visibility pop
