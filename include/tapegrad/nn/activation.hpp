#pragma once
/// Activation modules: thin layers over the ops of ops.hpp (which hold the derivatives), with
/// LibTorch's options: nn::ReLU(nn::ReLUOptions().inplace(true)), nn::ReLU(true),
/// nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)), nn::GELU(nn::GELUOptions()
/// .approximate("tanh")), nn::Softmax(nn::SoftmaxOptions(1)) or nn::Softmax(1).
/// inplace(true) writes the result into the input and returns it, as LibTorch's in-place
/// activations do (the input must not be a leaf that requires grad; backward stays exact:
/// ReLU and LeakyReLU with a slope >= 0 keep their output for it, not the overwritten input).
#include <cstdint>
#include <ostream>
#include <string>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// LibTorch's ReLUOptions: inplace (false).
struct ReLUOptions {
    ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(bool, inplace);
};

/// y = max(x, 0)
class ReLUImpl : public Module {
public:
    using Options = ReLUOptions;
    explicit ReLUImpl(const ReLUOptions& o = {}) : Module("ReLU"), options(o) {}
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;
    ReLUOptions options;
};
TG_MODULE(ReLU);

/// y = tanh x
class TanhImpl : public Module {
public:
    TanhImpl() : Module("Tanh") {}
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override { os << "Tanh()"; }
};
TG_MODULE(Tanh);

/// y = 1 / (1 + e⁻ˣ)
class SigmoidImpl : public Module {
public:
    SigmoidImpl() : Module("Sigmoid") {}
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override { os << "Sigmoid()"; }
};
TG_MODULE(Sigmoid);

/// LibTorch's GELUOptions: approximate "none" (the exact erf form) or "tanh".
struct GELUOptions {
    TG_ARG(std::string, approximate) = "none";
};

/// y = x Φ(x) (exact erf form), or with approximate "tanh"
/// 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))) (composed); value_error for another string.
class GELUImpl : public Module {
public:
    using Options = GELUOptions;
    explicit GELUImpl(const GELUOptions& options = {});
    Tensor forward(const Tensor& x) override;
    /// "GELU()", whatever the approximation, as LibTorch 1.13 prints it
    void pretty_print(std::ostream& os) const override { os << "GELU()"; }
    GELUOptions options;
};
TG_MODULE(GELU);

/// LibTorch's LeakyReLUOptions: negative_slope (0.01), inplace (false).
struct LeakyReLUOptions {
    TG_ARG(double, negative_slope) = 0.01;
    TG_ARG(bool, inplace) = false;
};

/// y = x > 0 ? x : slope·x
class LeakyReLUImpl : public Module {
public:
    using Options = LeakyReLUOptions;
    /// Throws value_error unless negative_slope is finite (and >= 0 with inplace, as PyTorch's
    /// in-place leaky_relu_ needs for backward).
    explicit LeakyReLUImpl(const LeakyReLUOptions& options = {});
    /// tapegrad's earlier spelling: LeakyReLU(0.2).
    explicit LeakyReLUImpl(double negative_slope)
        : LeakyReLUImpl(LeakyReLUOptions().negative_slope(negative_slope)) {}
    Tensor forward(const Tensor& x) override;
    double negative_slope() const { return options.negative_slope(); }
    void pretty_print(std::ostream& os) const override;
    LeakyReLUOptions options;
};
TG_MODULE(LeakyReLU);

/// LibTorch's SoftmaxOptions and LogSoftmaxOptions: dim.
struct SoftmaxOptions {
    SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(int64_t, dim);
};
struct LogSoftmaxOptions {
    LogSoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(int64_t, dim);
};

/// y = softmax(x) along dim
class SoftmaxImpl : public Module {
public:
    using Options = SoftmaxOptions;
    explicit SoftmaxImpl(const SoftmaxOptions& o) : Module("Softmax"), options(o) {}
    Tensor forward(const Tensor& x) override;
    int64_t dim() const { return options.dim(); }
    void pretty_print(std::ostream& os) const override;
    SoftmaxOptions options;
};
TG_MODULE(Softmax);

/// y = log_softmax(x) along dim
class LogSoftmaxImpl : public Module {
public:
    using Options = LogSoftmaxOptions;
    explicit LogSoftmaxImpl(const LogSoftmaxOptions& o) : Module("LogSoftmax"), options(o) {}
    Tensor forward(const Tensor& x) override;
    int64_t dim() const { return options.dim(); }
    void pretty_print(std::ostream& os) const override;
    LogSoftmaxOptions options;
};
TG_MODULE(LogSoftmax);

}  // namespace tg::nn

#pragma GCC visibility pop
