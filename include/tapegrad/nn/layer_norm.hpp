#pragma once
/// LayerNorm and RMSNorm over the last dims, as LibTorch's (and PyTorch 2.4's RMSNorm):
///     tg::nn::LayerNorm ln(tg::nn::LayerNormOptions({256}));
///     tg::nn::RMSNorm rms(tg::nn::RMSNormOptions({256}).eps(1e-6));
/// Each is one node (tg::layer_norm, tg::rms_norm) that saves two numbers per row besides x.
#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class LayerNormOptions {
public:
    LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT: implicit, as LibTorch's
        : shape_(std::move(normalized_shape)) {}
    LayerNormOptions& eps(double v) { return eps_ = v, *this; }
    /// Whether it has weight (ones) and bias (zeros) of normalized_shape.
    LayerNormOptions& elementwise_affine(bool v) { return affine_ = v, *this; }
    /// With elementwise_affine: whether it has a bias (PyTorch 2.1's bias=False).
    LayerNormOptions& bias(bool v) { return bias_ = v, *this; }
    const std::vector<int64_t>& normalized_shape() const { return shape_; }
    double eps() const { return eps_; }
    bool elementwise_affine() const { return affine_; }
    bool bias() const { return bias_; }

private:
    std::vector<int64_t> shape_;
    double eps_ = 1e-5;
    bool affine_ = true, bias_ = true;
};

class LayerNormImpl : public Module {
public:
    using Options = LayerNormOptions;
    /// Throws shape_error for an empty or non-positive normalized_shape, value_error for a
    /// negative eps.
    explicit LayerNormImpl(const LayerNormOptions& options);
    /// tg::layer_norm(x, normalized_shape, weight, bias, eps).
    Tensor forward(const Tensor& x) override;
    void reset_parameters();
    LayerNormOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;

    Tensor weight, bias;  // normalized_shape, undefined without elementwise_affine (and bias)
};
TG_MODULE(LayerNorm);

class RMSNormOptions {
public:
    RMSNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT: implicit
        : shape_(std::move(normalized_shape)) {}
    /// nullopt: the input dtype's epsilon, as PyTorch.
    RMSNormOptions& eps(std::optional<double> v) { return eps_ = v, *this; }
    RMSNormOptions& elementwise_affine(bool v) { return affine_ = v, *this; }
    const std::vector<int64_t>& normalized_shape() const { return shape_; }
    const std::optional<double>& eps() const { return eps_; }
    bool elementwise_affine() const { return affine_; }

private:
    std::vector<int64_t> shape_;
    std::optional<double> eps_;
    bool affine_ = true;
};

class RMSNormImpl : public Module {
public:
    using Options = RMSNormOptions;
    explicit RMSNormImpl(const RMSNormOptions& options);
    /// tg::rms_norm(x, normalized_shape, weight, eps).
    Tensor forward(const Tensor& x) override;
    void reset_parameters();
    RMSNormOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;

    Tensor weight;  // normalized_shape, undefined without elementwise_affine
};
TG_MODULE(RMSNorm);

}  // namespace tg::nn

#pragma GCC visibility pop
