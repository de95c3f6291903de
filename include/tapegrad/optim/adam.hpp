#pragma once
/// Adam (Kingma & Ba 2015) and AdamW (Loshchilov & Hutter 2019), following torch.optim.Adam and
/// torch.optim.AdamW. At step t (counted per parameter from 1):
///
///     Adam:   g = grad + weight_decay·p             AdamW:   p = p·(1 - lr·weight_decay), g = grad
///     m = β₁·m + (1 - β₁)·g
///     v = β₂·v + (1 - β₂)·g²
///     v̂max = max(v̂max, v)                          (amsgrad; then v̂max replaces v below)
///     denom = √v / √(1 - β₂ᵗ) + eps
///     p = p - lr / (1 - β₁ᵗ) · m / denom
#include <memory>
#include <tuple>
#include <vector>

#include "tapegrad/optim/optimizer.hpp"
#pragma GCC visibility push(default)

namespace tg::optim {

/// (β₁, β₂): decay rates of the first and second moment estimates.
using Betas = std::tuple<double, double>;

struct AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
    AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as in LibTorch
    TG_ARG(double, lr);
    TG_ARG(Betas, betas) = std::make_tuple(0.9, 0.999);
    TG_ARG(double, eps) = 1e-8;
    TG_ARG(double, weight_decay) = 0;
    TG_ARG(bool, amsgrad) = false;

public:
    double get_lr() const override { return lr_; }
    void set_lr(double lr) override { lr_ = lr; }
};

/// As AdamOptions, with decoupled weight decay defaulting to 1e-2.
struct AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
    AdamWOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as in LibTorch
    TG_ARG(double, lr);
    TG_ARG(Betas, betas) = std::make_tuple(0.9, 0.999);
    TG_ARG(double, eps) = 1e-8;
    TG_ARG(double, weight_decay) = 1e-2;
    TG_ARG(bool, amsgrad) = false;

public:
    double get_lr() const override { return lr_; }
    void set_lr(double lr) override { lr_ = lr; }
};

/// exp_avg (m) and exp_avg_sq (v) are allocated at the first step, max_exp_avg_sq with amsgrad.
struct AdamParamState : public OptimizerParamState {
    Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;
    std::unique_ptr<OptimizerParamState> clone() const override;
    std::vector<std::pair<std::string, Tensor*>> tensors() override {
        return {{"exp_avg", &exp_avg},
                {"exp_avg_sq", &exp_avg_sq},
                {"max_exp_avg_sq", &max_exp_avg_sq}};
    }
};

class Adam : public Optimizer {
public:
    Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
    Adam(std::vector<Tensor> params, AdamOptions defaults = {});
    /// One Adam update of every parameter with a gradient. Throws value_error for options outside
    /// their domain (as the constructor does): lr, eps, weight_decay finite and >= 0, betas in
    /// [0, 1).
    Tensor step(LossClosure closure = nullptr) override;
    std::string type_name() const override { return "Adam"; }
    std::unique_ptr<OptimizerParamState> make_state() const override {
        return std::make_unique<AdamParamState>();
    }
};

class AdamW : public Optimizer {
public:
    AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = {});
    AdamW(std::vector<Tensor> params, AdamWOptions defaults = {});
    /// One AdamW update of every parameter with a gradient. Throws value_error for options
    /// outside their domain, as Adam.
    Tensor step(LossClosure closure = nullptr) override;
    std::string type_name() const override { return "AdamW"; }
    std::unique_ptr<OptimizerParamState> make_state() const override {
        return std::make_unique<AdamParamState>();
    }
};

}  // namespace tg::optim

#pragma GCC visibility pop
