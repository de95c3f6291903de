#pragma once
/// Activation modules: thin layers over the ops of ops.hpp (which hold the derivatives).
#include <cstdint>
#include <ostream>

#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// y = max(x, 0)
class ReLUImpl : public Module {
public:
    ReLUImpl() : Module("ReLU") {}
    Tensor forward(const Tensor& x) override;
};
TG_MODULE(ReLU);

/// y = tanh x
class TanhImpl : public Module {
public:
    TanhImpl() : Module("Tanh") {}
    Tensor forward(const Tensor& x) override;
};
TG_MODULE(Tanh);

/// y = 1 / (1 + e⁻ˣ)
class SigmoidImpl : public Module {
public:
    SigmoidImpl() : Module("Sigmoid") {}
    Tensor forward(const Tensor& x) override;
};
TG_MODULE(Sigmoid);

/// y = x Φ(x) (exact erf form)
class GELUImpl : public Module {
public:
    GELUImpl() : Module("GELU") {}
    Tensor forward(const Tensor& x) override;
};
TG_MODULE(GELU);

/// y = x > 0 ? x : slope·x
class LeakyReLUImpl : public Module {
public:
    /// Throws value_error unless negative_slope is finite.
    explicit LeakyReLUImpl(double negative_slope = 0.01);
    Tensor forward(const Tensor& x) override;
    double negative_slope() const { return negative_slope_; }
    void pretty_print(std::ostream& os) const override;

private:
    double negative_slope_;
};
TG_MODULE(LeakyReLU);

/// y = softmax(x) along dim
class SoftmaxImpl : public Module {
public:
    explicit SoftmaxImpl(int64_t dim) : Module("Softmax"), dim_(dim) {}
    Tensor forward(const Tensor& x) override;
    int64_t dim() const { return dim_; }
    void pretty_print(std::ostream& os) const override;

private:
    int64_t dim_;
};
TG_MODULE(Softmax);

/// y = log_softmax(x) along dim
class LogSoftmaxImpl : public Module {
public:
    explicit LogSoftmaxImpl(int64_t dim) : Module("LogSoftmax"), dim_(dim) {}
    Tensor forward(const Tensor& x) override;
    int64_t dim() const { return dim_; }
    void pretty_print(std::ostream& os) const override;

private:
    int64_t dim_;
};
TG_MODULE(LogSoftmax);

}  // namespace tg::nn

#pragma GCC visibility pop
