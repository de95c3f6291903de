#pragma once
/// Learning-rate schedulers with LibTorch's C++ interface (torch::optim::LRScheduler): step()
/// sets every group's lr to get_lrs() and then counts the step, so the k-th call (k = 0, 1, ...)
/// applies the lr of epoch k, and the first call leaves the lr as constructed. (PyTorch's Python
/// schedulers step once at construction, so each of their changes comes one call earlier: a
/// ported Python schedule lags by one step() here, as it does in LibTorch.)
///
///     StepLR:             at every step_size-th call after the first, lr *= γ (LibTorch's;
///                         multiplies the group's current lr, so a changed lr carries on)
///     CosineAnnealingLR:  lr = η_min + (base_lr - η_min) · (1 + cos(π · k / T_max)) / 2 at the
///                         k-th call (not in LibTorch 1.13's C++ API: PyTorch's closed form,
///                         on LibTorch's step convention)
///
/// A scheduler of your own derives from LRScheduler and overrides get_lrs(), as in LibTorch.
#include <cstdint>
#include <vector>

#include "tapegrad/optim/optimizer.hpp"
#pragma GCC visibility push(default)

namespace tg::optim {

class LRScheduler {
public:
    explicit LRScheduler(Optimizer& optimizer);
    virtual ~LRScheduler() = default;
    /// Sets every group's lr to get_lrs(), then counts the step.
    void step();
    /// Every group's lr now (PyTorch's get_last_lr).
    std::vector<double> get_last_lr() const { return get_current_lrs(); }
    /// step() calls so far.
    unsigned step_count() const { return step_count_; }

protected:
    /// The lr of every group for the step_count_-th call of step(), one per group; value_error
    /// from step() if the count is not the number of groups.
    virtual std::vector<double> get_lrs() = 0;
    /// Every group's lr now.
    std::vector<double> get_current_lrs() const;

    unsigned step_count_ = 0;  // NOLINT: protected as in LibTorch, for schedulers of your own

private:
    void set_optimizer_lrs(const std::vector<double>& lrs);
    Optimizer& optimizer_;
};

class StepLR : public LRScheduler {
public:
    /// Multiplies every group's lr by gamma at every step_size-th step() after the first
    /// (LibTorch's rule); throws value_error if step_size < 1 or gamma is negative or not
    /// finite.
    StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

protected:
    std::vector<double> get_lrs() override;

private:
    int64_t step_size_;
    double gamma_;
};

class CosineAnnealingLR : public LRScheduler {
public:
    /// Anneals each group from its lr at construction (base_lr) to eta_min over T_max steps
    /// (and back up after, as PyTorch's closed form); throws value_error if T_max < 1 or
    /// eta_min is negative or not finite. Groups added later anneal from their lr at their
    /// first step().
    CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

protected:
    std::vector<double> get_lrs() override;

private:
    int64_t t_max_;
    double eta_min_;
    std::vector<double> base_lrs_;
};

}  // namespace tg::optim

#pragma GCC visibility pop
