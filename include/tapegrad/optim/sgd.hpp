#pragma once
/// SGD with momentum, dampening, Nesterov momentum and weight decay, following torch.optim.SGD:
///
///     g = grad + weight_decay·p
///     b = g                                 (first step)
///     b = momentum·b + (1 - dampening)·g     (later steps)
///     g = g + momentum·b   (nesterov)   or   g = b   (momentum ≠ 0)
///     p = p - lr·g
#include <memory>
#include <vector>

#include "tapegrad/optim/optimizer.hpp"
#pragma GCC visibility push(default)

namespace tg::optim {

struct SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
    SGDOptions(double lr) : lr_(lr) {}  // NOLINT: implicit, as in LibTorch
    TG_ARG(double, lr);
    TG_ARG(double, momentum) = 0;
    TG_ARG(double, dampening) = 0;
    TG_ARG(double, weight_decay) = 0;
    TG_ARG(bool, nesterov) = false;

public:
    double get_lr() const override { return lr_; }
    void set_lr(double lr) override { lr_ = lr; }
};

/// momentum_buffer is allocated at the first step with momentum ≠ 0.
struct SGDParamState : public OptimizerParamState {
    Tensor momentum_buffer;
    std::unique_ptr<OptimizerParamState> clone() const override;
    std::vector<std::pair<std::string, Tensor*>> tensors() override {
        return {{"momentum_buffer", &momentum_buffer}};
    }
};

class SGD : public Optimizer {
public:
    SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);
    SGD(std::vector<Tensor> params, SGDOptions defaults);
    /// One SGD update of every parameter with a gradient. Throws value_error (as the constructor
    /// does) unless lr, momentum and weight_decay are finite and >= 0 and dampening is in [0, 1],
    /// or for nesterov with momentum <= 0 or dampening ≠ 0.
    Tensor step(LossClosure closure = nullptr) override;
    std::string type_name() const override { return "SGD"; }
    std::unique_ptr<OptimizerParamState> make_state() const override {
        return std::make_unique<SGDParamState>();
    }
};

}  // namespace tg::optim

#pragma GCC visibility pop
