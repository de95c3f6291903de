#pragma once
/// Learning-rate schedulers, as torch.optim.lr_scheduler. Each remembers every group's lr at
/// construction (base_lr) and, on step(), sets every group's lr from the closed form of its
/// epoch counter (which starts at 0 and step() increments):
///
///     StepLR:             lr = base_lr · γ^⌊epoch / step_size⌋
///     CosineAnnealingLR:  lr = η_min + (base_lr - η_min) · (1 + cos(π · epoch / T_max)) / 2
#include <cstdint>
#include <vector>

#include "tapegrad/optim/optimizer.hpp"
#pragma GCC visibility push(default)

namespace tg::optim {

class LRScheduler {
public:
    explicit LRScheduler(Optimizer& optimizer);
    virtual ~LRScheduler() = default;
    /// Advances the epoch counter and sets every group's lr.
    void step();
    /// The lr of every group after the last step (or at construction).
    std::vector<double> get_last_lr() const;
    int64_t last_epoch() const { return epoch_; }
    const std::vector<double>& base_lrs() const { return base_lrs_; }

protected:
    /// The lr of a group whose initial lr was base_lr, at `epoch`.
    virtual double lr_at(double base_lr, int64_t epoch) const = 0;

private:
    Optimizer& optimizer_;
    std::vector<double> base_lrs_;
    int64_t epoch_ = 0;
};

class StepLR : public LRScheduler {
public:
    /// Multiplies the lr by gamma every step_size steps; throws value_error if step_size < 1 or
    /// gamma is negative or not finite.
    StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

protected:
    double lr_at(double base_lr, int64_t epoch) const override;

private:
    int64_t step_size_;
    double gamma_;
};

class CosineAnnealingLR : public LRScheduler {
public:
    /// Anneals from base_lr to eta_min over T_max steps (and back up after, as PyTorch's
    /// closed form); throws value_error if T_max < 1 or eta_min is negative or not finite.
    CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

protected:
    double lr_at(double base_lr, int64_t epoch) const override;

private:
    int64_t t_max_;
    double eta_min_;
};

}  // namespace tg::optim

#pragma GCC visibility pop
