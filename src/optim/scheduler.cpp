#include "tapegrad/optim/scheduler.hpp"

#include <cmath>
#include <string>

#include "tapegrad/error.hpp"

namespace tg::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
    for (auto& g : optimizer_.param_groups())
        base_lrs_.push_back(g.options().get_lr());
}

void LRScheduler::step() {
    ++epoch_;
    auto& groups = optimizer_.param_groups();
    // groups added after construction start from their lr at their first scheduled step
    for (size_t i = base_lrs_.size(); i < groups.size(); ++i)
        base_lrs_.push_back(groups[i].options().get_lr());
    for (size_t i = 0; i < groups.size(); ++i)
        groups[i].options().set_lr(lr_at(base_lrs_[i], epoch_));
}

std::vector<double> LRScheduler::get_last_lr() const {
    std::vector<double> out;
    for (auto& g : optimizer_.param_groups())
        out.push_back(g.options().get_lr());
    return out;
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
    if (step_size < 1)
        throw value_error("StepLR: step_size must be >= 1, got " + std::to_string(step_size));
    if (!(std::isfinite(gamma) && gamma >= 0))
        throw value_error("StepLR: gamma must be finite and >= 0, got " + std::to_string(gamma));
}

double StepLR::lr_at(double base_lr, int64_t epoch) const {
    return base_lr * std::pow(gamma_, double(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
    if (T_max < 1)
        throw value_error("CosineAnnealingLR: T_max must be >= 1, got " + std::to_string(T_max));
    if (!(std::isfinite(eta_min) && eta_min >= 0))
        throw value_error("CosineAnnealingLR: eta_min must be finite and >= 0, got " +
                          std::to_string(eta_min));
}

double CosineAnnealingLR::lr_at(double base_lr, int64_t epoch) const {
    const double pi = std::acos(-1.0);
    return eta_min_ +
           (base_lr - eta_min_) * (1 + std::cos(pi * double(epoch) / double(t_max_))) / 2;
}

}  // namespace tg::optim
