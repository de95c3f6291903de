#pragma once
/// The activations of tg::nn::functional (functional.hpp includes this header), LibTorch's
/// spellings with their options classes, which are the modules' (F::ELUFuncOptions is
/// nn::ELUOptions, as in LibTorch):
///     F::elu(x, F::ELUFuncOptions().alpha(0.5).inplace(true)), F::glu(x, 1),
///     F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0.5).hard(true))
/// inplace(true) writes the result into x and returns it, as LibTorch's.
#include <cstdint>
#include <optional>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/activation.hpp"
#include "tapegrad/nn/activation_more.hpp"
#include "tapegrad/ops.hpp"
#pragma GCC visibility push(default)

namespace tg::nn::functional {

using ELUFuncOptions = ELUOptions;
using SELUFuncOptions = SELUOptions;
using CELUFuncOptions = CELUOptions;
using GLUFuncOptions = GLUOptions;
using GELUFuncOptions = GELUOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;
using HardtanhFuncOptions = HardtanhOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLU6Options;
using SoftplusFuncOptions = SoftplusOptions;
using ThresholdFuncOptions = ThresholdOptions;

/// LibTorch's RReLUFuncOptions: lower (1/8), upper (1/3), training (false), inplace (false).
struct RReLUFuncOptions {
    TG_ARG(double, lower) = 1.0 / 8.0;
    TG_ARG(double, upper) = 1.0 / 3.0;
    TG_ARG(bool, training) = false;
    TG_ARG(bool, inplace) = false;
};
/// LibTorch's SoftmaxFuncOptions, SoftminFuncOptions and LogSoftmaxFuncOptions: dim, and dtype
/// (the input is converted to it first; none: kept).
struct SoftmaxFuncOptions {
    SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(int64_t, dim);
    TG_ARG(std::optional<Dtype>, dtype) = std::nullopt;
};
struct SoftminFuncOptions {
    SoftminFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(int64_t, dim);
    TG_ARG(std::optional<Dtype>, dtype) = std::nullopt;
};
struct LogSoftmaxFuncOptions {
    LogSoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(int64_t, dim);
    TG_ARG(std::optional<Dtype>, dtype) = std::nullopt;
};
/// LibTorch's GumbelSoftmaxFuncOptions: tau (1), hard (false), dim (-1).
struct GumbelSoftmaxFuncOptions {
    TG_ARG(double, tau) = 1.0;
    TG_ARG(bool, hard) = false;
    TG_ARG(int, dim) = -1;
};

namespace detail {
/// y, written into x when inplace (a recorded copy_), as LibTorch's in-place forms.
inline Tensor maybe_into(Tensor x, const Tensor& y, bool inplace) {
    if (!inplace)
        return y;
    x.copy_(y);
    return x;
}
inline Tensor as_dtype(const Tensor& x, const std::optional<Dtype>& d) {
    return d ? x.to(*d) : x;
}
}  // namespace detail

inline Tensor relu(Tensor x, const ReLUFuncOptions& o = {}) {
    return detail::maybe_into(x, tg::relu(x), o.inplace());
}
inline Tensor relu6(Tensor x, const ReLU6FuncOptions& o = {}) {
    return o.inplace() ? tg::relu6_(x) : tg::relu6(x);
}
/// value_error for inplace with a negative slope (backward would need the input).
Tensor leaky_relu(Tensor x, const LeakyReLUFuncOptions& o = {});
inline Tensor gelu(const Tensor& x, const GELUFuncOptions& o = {}) {
    return tg::gelu(x, o.approximate());
}
inline Tensor sigmoid(const Tensor& x) {
    return tg::sigmoid(x);
}
inline Tensor tanh(const Tensor& x) {
    return tg::tanh(x);
}
inline Tensor elu(Tensor x, const ELUFuncOptions& o = {}) {
    return o.inplace() ? tg::elu_(x, o.alpha()) : tg::elu(x, o.alpha());
}
inline Tensor selu(Tensor x, const SELUFuncOptions& o = {}) {
    return o.inplace() ? tg::selu_(x) : tg::selu(x);
}
inline Tensor celu(Tensor x, const CELUFuncOptions& o = {}) {
    return o.inplace() ? tg::celu_(x, o.alpha()) : tg::celu(x, o.alpha());
}
inline Tensor silu(const Tensor& x) {
    return tg::silu(x);
}
inline Tensor mish(const Tensor& x) {
    return tg::mish(x);
}
inline Tensor prelu(const Tensor& x, const Tensor& weight) {
    return tg::prelu(x, weight);
}
inline Tensor rrelu(Tensor x, const RReLUFuncOptions& o = {}) {
    return o.inplace() ? tg::rrelu_(x, o.lower(), o.upper(), o.training())
                       : tg::rrelu(x, o.lower(), o.upper(), o.training());
}
inline Tensor hardtanh(Tensor x, const HardtanhFuncOptions& o = {}) {
    return o.inplace() ? tg::hardtanh_(x, o.min_val(), o.max_val())
                       : tg::hardtanh(x, o.min_val(), o.max_val());
}
inline Tensor hardshrink(const Tensor& x, const HardshrinkFuncOptions& o = {}) {
    return tg::hardshrink(x, o.lambda());
}
inline Tensor softshrink(const Tensor& x, const SoftshrinkFuncOptions& o = {}) {
    return tg::softshrink(x, o.lambda());
}
/// x - tanh(x)
inline Tensor tanhshrink(const Tensor& x) {
    return x - tg::tanh(x);
}
/// x / (|x| + 1)
inline Tensor softsign(const Tensor& x) {
    return x / (tg::abs(x) + 1);
}
inline Tensor softplus(const Tensor& x, const SoftplusFuncOptions& o = {}) {
    return tg::softplus(x, o.beta(), o.threshold());
}
inline Tensor logsigmoid(const Tensor& x) {
    return tg::log_sigmoid(x);
}
inline Tensor threshold(Tensor x, const ThresholdFuncOptions& o) {
    return o.inplace() ? tg::threshold_(x, o.threshold(), o.value())
                       : tg::threshold(x, o.threshold(), o.value());
}
inline Tensor glu(const Tensor& x, const GLUFuncOptions& o = {}) {
    return tg::glu(x, o.dim());
}
inline Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& o) {
    return tg::softmax(detail::as_dtype(x, o.dtype()), o.dim());
}
/// softmax(-x, dim)
inline Tensor softmin(const Tensor& x, const SoftminFuncOptions& o) {
    return tg::softmax(-detail::as_dtype(x, o.dtype()), o.dim());
}
inline Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& o) {
    return tg::log_softmax(detail::as_dtype(x, o.dtype()), o.dim());
}
/// softmax((logits + g)/tau, dim) with g = -log(e), e ~ Exp(1) drawn by exponential_ on a tensor
/// like logits (LibTorch's draws); hard: the one-hot of each argmax along dim in the forward,
/// with the soft sample's gradient (straight through: y_hard - y_soft.detach() + y_soft).
Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& o = {});

}  // namespace tg::nn::functional

#pragma GCC visibility pop
