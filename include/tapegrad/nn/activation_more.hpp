#pragma once
/// The rest of LibTorch's activation modules, over the ops of tapegrad/activation_ops.hpp, with
/// LibTorch 1.13's options, defaults and printing (without its "torch::nn::" prefix):
///     nn::ELU(nn::ELUOptions().alpha(0.5)), nn::SELU(true), nn::PReLU(nn::PReLUOptions()
///     .num_parameters(16)), nn::RReLU(), nn::Hardtanh(nn::HardtanhOptions().min_val(-2)),
///     nn::Threshold(0.1, 20), nn::GLU(1), nn::Softmin(1), ...
/// inplace(true) writes the result into the input and returns it, as LibTorch's (ELU, SELU and
/// CELU with alpha >= 0, Hardtanh and ReLU6 save their output for backward, so it stays exact).
/// The F:: functions are in tapegrad/nn/functional_activation.hpp.
#include <cstdint>
#include <ostream>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// LibTorch's ELUOptions: alpha (1), inplace (false).
struct ELUOptions {
    TG_ARG(double, alpha) = 1.0;
    TG_ARG(bool, inplace) = false;
};
/// LibTorch's SELUOptions: inplace (false).
struct SELUOptions {
    SELUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(bool, inplace);
};
/// LibTorch's CELUOptions: alpha (1), inplace (false).
struct CELUOptions {
    TG_ARG(double, alpha) = 1.0;
    TG_ARG(bool, inplace) = false;
};
/// LibTorch's GLUOptions: dim (-1).
struct GLUOptions {
    GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(int64_t, dim);
};
/// LibTorch's HardshrinkOptions and SoftshrinkOptions: lambda (0.5).
struct HardshrinkOptions {
    HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT: implicit
    TG_ARG(double, lambda);
};
struct SoftshrinkOptions {
    SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT: implicit
    TG_ARG(double, lambda);
};
/// LibTorch's HardtanhOptions: min_val (-1), max_val (1), inplace (false).
struct HardtanhOptions {
    TG_ARG(double, min_val) = -1.0;
    TG_ARG(double, max_val) = 1.0;
    TG_ARG(bool, inplace) = false;
};
/// LibTorch's PReLUOptions: num_parameters (1), init (0.25).
struct PReLUOptions {
    TG_ARG(int64_t, num_parameters) = 1;
    TG_ARG(double, init) = 0.25;
};
/// LibTorch's ReLU6Options: inplace (false).
struct ReLU6Options {
    ReLU6Options(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit
    TG_ARG(bool, inplace);
};
/// LibTorch's RReLUOptions: lower (1/8), upper (1/3), inplace (false).
struct RReLUOptions {
    TG_ARG(double, lower) = 1.0 / 8.0;
    TG_ARG(double, upper) = 1.0 / 3.0;
    TG_ARG(bool, inplace) = false;
};
/// LibTorch's SoftplusOptions: beta (1), threshold (20).
struct SoftplusOptions {
    TG_ARG(double, beta) = 1.0;
    TG_ARG(double, threshold) = 20.0;
};
/// LibTorch's SoftminOptions: dim.
struct SoftminOptions {
    SoftminOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(int64_t, dim);
};
/// LibTorch's ThresholdOptions: threshold, value, inplace (false).
struct ThresholdOptions {
    ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
    TG_ARG(double, threshold);
    TG_ARG(double, value);
    TG_ARG(bool, inplace) = false;
};

/// Declares an activation module Name##Impl with LibTorch's options class Opts, an `options`
/// member, forward(x) and LibTorch's printing.
#define TG_ACTIVATION(Name, Opts, ...)                                                          \
    class Name##Impl : public Module {                                                          \
    public:                                                                                     \
        using Options = Opts;                                                                   \
        explicit Name##Impl(const Opts& o __VA_ARGS__) : Module(#Name), options(o) { reset(); } \
        Tensor forward(const Tensor& x) override;                                               \
        void reset();                                                                           \
        void pretty_print(std::ostream& os) const override;                                     \
        Opts options;                                                                           \
    };                                                                                          \
    TG_MODULE(Name)
/// The same for a module without options ("SiLU()").
#define TG_ACTIVATION_PLAIN(Name)                                                \
    class Name##Impl : public Module {                                           \
    public:                                                                      \
        Name##Impl() : Module(#Name) {}                                          \
        Tensor forward(const Tensor& x) override;                                \
        void reset() {}                                                          \
        void pretty_print(std::ostream& os) const override { os << #Name "()"; } \
    };                                                                           \
    TG_MODULE(Name)

/// elu(x, alpha)
TG_ACTIVATION(ELU, ELUOptions, = {});
/// selu(x)
TG_ACTIVATION(SELU, SELUOptions, = {});
/// celu(x, alpha); value_error for alpha 0
TG_ACTIVATION(CELU, CELUOptions, = {});
/// hardtanh(x, min_val, max_val); value_error unless max_val > min_val (as LibTorch's)
TG_ACTIVATION(Hardtanh, HardtanhOptions, = {});
/// hardtanh(x, 0, 6)
TG_ACTIVATION(ReLU6, ReLU6Options, = {});
/// hardshrink(x, lambda)
TG_ACTIVATION(Hardshrink, HardshrinkOptions, = {});
/// softshrink(x, lambda); value_error for lambda < 0
TG_ACTIVATION(Softshrink, SoftshrinkOptions, = {});
/// softplus(x, beta, threshold)
TG_ACTIVATION(Softplus, SoftplusOptions, = {});
/// glu(x, dim)
TG_ACTIVATION(GLU, GLUOptions, = {});
/// rrelu(x, lower, upper, is_training()): random slopes in training, (lower + upper)/2 in eval
TG_ACTIVATION(RReLU, RReLUOptions, = {});
/// softmax(-x, dim)
TG_ACTIVATION(Softmin, SoftminOptions, );
/// x·sigmoid(x)
TG_ACTIVATION_PLAIN(SiLU);
/// x·tanh(softplus(x))
TG_ACTIVATION_PLAIN(Mish);
/// x - tanh(x)
TG_ACTIVATION_PLAIN(Tanhshrink);
/// x / (1 + |x|)
TG_ACTIVATION_PLAIN(Softsign);
/// log sigmoid(x)
TG_ACTIVATION_PLAIN(LogSigmoid);
/// softmax over the channels (dim -3) of a [C,H,W] or [N,C,H,W] input; shape_error otherwise
TG_ACTIVATION_PLAIN(Softmax2d);

/// x > threshold ? x : value: Threshold(0.1, 20) or Threshold(ThresholdOptions(0.1, 20))
class ThresholdImpl : public Module {
public:
    using Options = ThresholdOptions;
    explicit ThresholdImpl(const ThresholdOptions& o) : Module("Threshold"), options(o) {}
    ThresholdImpl(double threshold, double value)
        : ThresholdImpl(ThresholdOptions(threshold, value)) {}
    Tensor forward(const Tensor& x) override;
    void reset() {}
    void pretty_print(std::ostream& os) const override;
    ThresholdOptions options;
};
TG_MODULE(Threshold);

/// prelu(x, weight): weight a parameter [num_parameters] filled with init (no random draw, as
/// LibTorch's); num_parameters 1 or the input's channel count (dim 1).
class PReLUImpl : public Module {
public:
    using Options = PReLUOptions;
    explicit PReLUImpl(const PReLUOptions& o = {});
    Tensor forward(const Tensor& x) override;
    /// weight filled with init again.
    void reset();
    void pretty_print(std::ostream& os) const override;
    PReLUOptions options;
    Tensor weight;
};
TG_MODULE(PReLU);

#undef TG_ACTIVATION
#undef TG_ACTIVATION_PLAIN

}  // namespace tg::nn

#pragma GCC visibility pop
