#pragma once
/// tg::nn::functional, LibTorch's functional spellings with their options classes:
///
///     namespace F = tg::nn::functional;
///     auto loss = F::cross_entropy(logits, labels,
///                                  F::CrossEntropyFuncOptions().label_smoothing(0.1).reduction(tg::kSum));
///     auto h = F::dropout(F::relu(x), F::DropoutFuncOptions().p(0.2).training(is_training()));
///
/// Each calls the tg:: function of the same name (ops.hpp), so it records, checks its arguments
/// and runs on every device as that function does. The defaults are LibTorch's.
#include <cstdint>
#include <optional>
#include <vector>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/functional_activation.hpp"
#include "tapegrad/nn/functional_loss.hpp"
#include "tapegrad/nn/instancenorm.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn::functional {

// ---- activations: tapegrad/nn/functional_activation.hpp

// ---- dropout, linear, embedding, normalisation
struct DropoutFuncOptions {
    TG_ARG(double, p) = 0.5;
    TG_ARG(bool, training) = true;
    TG_ARG(bool, inplace) = false;
};
/// With inplace, x itself is dropped out (a recorded copy_ into it) and returned, as LibTorch's
/// dropout_ (autograd_error for a leaf that requires grad, as there).
inline Tensor dropout(Tensor x, const DropoutFuncOptions& o = {}) {
    if (!o.inplace())
        return tg::dropout(x, o.p(), o.training());
    x.copy_(tg::dropout(x, o.p(), o.training()));
    return x;
}
inline Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {}) {
    return tg::linear(x, weight, bias);
}
struct EmbeddingFuncOptions {
    TG_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
    TG_ARG(bool, scale_grad_by_freq) = false;
    TG_ARG(bool, sparse) = false;
};
/// tg::embedding, a negative padding_idx counted from the end (value_error below -V), as
/// LibTorch's F::embedding.
Tensor embedding(const Tensor& indices, const Tensor& weight, const EmbeddingFuncOptions& o = {});
struct LayerNormFuncOptions {
    LayerNormFuncOptions(std::vector<int64_t> normalized_shape)  // NOLINT: implicit
        : normalized_shape_(std::move(normalized_shape)) {}
    TG_ARG(std::vector<int64_t>, normalized_shape);
    TG_ARG(Tensor, weight) = {};
    TG_ARG(Tensor, bias) = {};
    TG_ARG(double, eps) = 1e-5;
};
inline Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& o) {
    const std::vector<int64_t>& s = o.normalized_shape();
    return tg::layer_norm(x, Shape(s.data(), s.data() + s.size()), o.weight(), o.bias(), o.eps());
}

// ---- convolution and pooling
struct Conv2dFuncOptions {
    TG_ARG(Tensor, bias) = {};
    TG_ARG(IntArg, stride) = 1;
    TG_ARG(IntArg, padding) = 0;
    TG_ARG(IntArg, dilation) = 1;
    TG_ARG(int64_t, groups) = 1;
};
inline Tensor conv2d(const Tensor& x, const Tensor& weight, const Conv2dFuncOptions& o = {}) {
    return tg::conv2d(x, weight, o.bias(), o.stride(), o.padding(), o.dilation(), o.groups());
}
struct MaxPool2dFuncOptions {
    MaxPool2dFuncOptions(IntArg kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
    TG_ARG(IntArg, kernel_size);
    TG_ARG(IntArg, stride) = {};  // empty: the kernel size, as LibTorch's default
    TG_ARG(IntArg, padding) = 0;
    TG_ARG(IntArg, dilation) = 1;
    TG_ARG(bool, ceil_mode) = false;
};
inline Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& o) {
    return tg::max_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
struct AvgPool2dFuncOptions {
    AvgPool2dFuncOptions(IntArg kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
    TG_ARG(IntArg, kernel_size);
    TG_ARG(IntArg, stride) = {};
    TG_ARG(IntArg, padding) = 0;
    TG_ARG(bool, ceil_mode) = false;
    TG_ARG(bool, count_include_pad) = true;
};
inline Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& o) {
    return tg::avg_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                          o.count_include_pad());
}

struct AdaptiveAvgPool2dFuncOptions {
    AdaptiveAvgPool2dFuncOptions(IntArg output_size)  // NOLINT: implicit, as LibTorch's
        : output_size_(std::move(output_size)) {}
    TG_ARG(IntArg, output_size);
};
inline Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveAvgPool2dFuncOptions& o) {
    return tg::adaptive_avg_pool2d(x, o.output_size());
}

// ---- normalisation and padding
struct BatchNormFuncOptions {
    TG_ARG(Tensor, weight) = {};
    TG_ARG(Tensor, bias) = {};
    TG_ARG(bool, training) = false;
    TG_ARG(double, momentum) = 0.1;
    TG_ARG(double, eps) = 1e-5;
};
inline Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                         const BatchNormFuncOptions& o = {}) {
    return tg::batch_norm(x, o.weight(), o.bias(), running_mean, running_var, o.training(),
                          o.momentum(), o.eps(), false);
}
struct GroupNormFuncOptions {
    GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT
    TG_ARG(int64_t, num_groups);
    TG_ARG(Tensor, weight) = {};
    TG_ARG(Tensor, bias) = {};
    TG_ARG(double, eps) = 1e-5;
};
inline Tensor group_norm(const Tensor& x, const GroupNormFuncOptions& o) {
    return tg::group_norm(x, o.num_groups(), o.weight(), o.bias(), o.eps());
}
/// LibTorch's InstanceNormFuncOptions: running_mean, running_var, weight, bias (all none),
/// use_input_stats (true), momentum (0.1), eps (1e-5).
struct InstanceNormFuncOptions {
    TG_ARG(Tensor, running_mean) = {};
    TG_ARG(Tensor, running_var) = {};
    TG_ARG(Tensor, weight) = {};
    TG_ARG(Tensor, bias) = {};
    TG_ARG(bool, use_input_stats) = true;
    TG_ARG(double, momentum) = 0.1;
    TG_ARG(double, eps) = 1e-5;
};
inline Tensor instance_norm(const Tensor& x, const InstanceNormFuncOptions& o = {}) {
    return tg::instance_norm(x, o.weight(), o.bias(), o.running_mean(), o.running_var(),
                             o.use_input_stats(), o.momentum(), o.eps());
}
using LocalResponseNormFuncOptions = LocalResponseNormOptions;
inline Tensor local_response_norm(const Tensor& x, const LocalResponseNormFuncOptions& o) {
    return tg::local_response_norm(x, o.size(), o.alpha(), o.beta(), o.k());
}
/// x / max(‖x‖_p along dim, eps)
struct NormalizeFuncOptions {
    TG_ARG(double, p) = 2.0;
    TG_ARG(int64_t, dim) = 1;
    TG_ARG(double, eps) = 1e-12;
};
inline Tensor normalize(const Tensor& x, const NormalizeFuncOptions& o = {}) {
    return x / clamp_min(norm(x, o.p(), {o.dim()}, true), o.eps());
}
/// F::pad: tg::pad with LibTorch's options (mode kConstant by default)
struct PadFuncOptions {
    PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT
    TG_ARG(std::vector<int64_t>, pad);
    TG_ARG(PadMode, mode) = kConstant;
    TG_ARG(double, value) = 0;
};
inline Tensor pad(const Tensor& x, const PadFuncOptions& o) {
    return tg::pad(x, o.pad(), o.mode(), o.value());
}
/// F::interpolate: tg::interpolate with LibTorch's options (mode kNearest by default)
struct InterpolateFuncOptions {
    TG_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
    TG_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
    TG_ARG(InterpolateMode, mode) = kNearest;
    TG_ARG(std::optional<bool>, align_corners) = std::nullopt;
};
inline Tensor interpolate(const Tensor& x, const InterpolateFuncOptions& o = {}) {
    return tg::interpolate(x, o.size().value_or(std::vector<int64_t>{}),
                           o.scale_factor().value_or(std::vector<double>{}), o.mode(),
                           o.align_corners());
}
inline Tensor one_hot(const Tensor& labels, int64_t num_classes = -1) {
    return tg::one_hot(labels, num_classes);
}

// ---- losses: tapegrad/nn/functional_loss.hpp

}  // namespace tg::nn::functional
#include "tapegrad/nn/functional_pooling.hpp"  // convolutions, pools and sampling beyond 2-D
