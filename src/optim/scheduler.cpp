#include "tapegrad/optim/scheduler.hpp"

#include <cmath>
#include <string>

#include "tapegrad/error.hpp"

namespace tg::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {}

void LRScheduler::step() {
    set_optimizer_lrs(get_lrs());
    ++step_count_;
}

std::vector<double> LRScheduler::get_current_lrs() const {
    std::vector<double> out;
    for (auto& g : optimizer_.param_groups())
        out.push_back(g.options().get_lr());
    return out;
}

void LRScheduler::set_optimizer_lrs(const std::vector<double>& lrs) {
    auto& groups = optimizer_.param_groups();
    if (lrs.size() != groups.size())
        throw value_error("LRScheduler: get_lrs() gave " + std::to_string(lrs.size()) +
                          " learning rates for " + std::to_string(groups.size()) +
                          " parameter groups");
    for (size_t i = 0; i < groups.size(); ++i)
        groups[i].options().set_lr(lrs[i]);
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
    if (step_size < 1)
        throw value_error("StepLR: step_size must be >= 1, got " + std::to_string(step_size));
    if (!(std::isfinite(gamma) && gamma >= 0))
        throw value_error("StepLR: gamma must be finite and >= 0, got " + std::to_string(gamma));
}

std::vector<double> StepLR::get_lrs() {
    std::vector<double> lrs = get_current_lrs();
    if (step_count_ == 0 || step_count_ % uint64_t(step_size_) != 0)
        return lrs;
    for (double& lr : lrs)
        lr *= gamma_;
    return lrs;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min), base_lrs_(get_current_lrs()) {
    if (T_max < 1)
        throw value_error("CosineAnnealingLR: T_max must be >= 1, got " + std::to_string(T_max));
    if (!(std::isfinite(eta_min) && eta_min >= 0))
        throw value_error("CosineAnnealingLR: eta_min must be finite and >= 0, got " +
                          std::to_string(eta_min));
}

std::vector<double> CosineAnnealingLR::get_lrs() {
    std::vector<double> lrs = get_current_lrs();
    for (size_t i = base_lrs_.size(); i < lrs.size(); ++i)  // groups added since
        base_lrs_.push_back(lrs[i]);
    const double pi = std::acos(-1.0), k = double(step_count_);
    for (size_t i = 0; i < lrs.size(); ++i)
        lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) * (1 + std::cos(pi * k / double(t_max_))) / 2;
    return lrs;
}

}  // namespace tg::optim
