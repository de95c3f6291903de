#include "tapegrad/optim/optimizer.hpp"

#include <cmath>
#include <string>
#include <unordered_set>

#include "optim/check_options.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/profiler.hpp"

namespace tg::optim {

void OptimizerOptions::validate(const std::string& optimizer) const {
    detail::require_option(detail::non_negative(get_lr()), optimizer, "lr", get_lr(),
                           "finite and >= 0");
}

void OptimizerParamState::step(int64_t s) {
    if (s < 0 || s > kMaxStep)
        throw value_error("optimizer state: invalid step count " + std::to_string(s) +
                          " (0 to 2^53)");
    step_ = s;
}

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params,
                                         std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
    if (this != &other) {
        params_ = other.params_;
        options_ = other.options_ ? other.options_->clone() : nullptr;
    }
    return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
    if (!options_)
        throw error("OptimizerParamGroup: the group has no options yet");
    return *options_;
}

const OptimizerOptions& OptimizerParamGroup::options() const {
    if (!options_)
        throw error("OptimizerParamGroup: the group has no options yet");
    return *options_;
}

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
    for (auto& g : param_groups)
        add_param_group(g);
}

Optimizer::~Optimizer() = default;

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
    std::unordered_set<const TensorImpl*> seen;
    for (auto& g : param_groups_)
        for (auto& p : g.params())
            seen.insert(p.impl());
    for (auto& p : group.params()) {
        if (!p.defined())
            throw value_error("Optimizer::add_param_group: undefined parameter");
        if (!p.is_leaf())
            throw value_error("Optimizer::add_param_group: parameter of shape " +
                              shape_str(p.sizes()) +
                              " is not a leaf (optimize leaves, e.g. model->parameters())");
        if (!is_floating(p.dtype()))
            throw dtype_error("Optimizer::add_param_group: parameter of shape " +
                              shape_str(p.sizes()) + " has dtype " + dtype_name(p.dtype()));
        if (!seen.insert(p.impl()).second)
            throw value_error("Optimizer::add_param_group: a parameter of shape " +
                              shape_str(p.sizes()) +
                              " appears in more than one group (or twice in one)");
    }
    OptimizerParamGroup g(group.params());
    g.set_options(group.has_options() ? group.options().clone() : defaults_->clone());
    param_groups_.push_back(std::move(g));
}

void Optimizer::zero_grad(bool set_to_none) {
    autograd::profiler::RecordFunction timed("Optimizer.zero_grad");
    NoGradGuard guard;
    for (auto& g : param_groups_)
        for (auto& p : g.params()) {
            Tensor grad = p.grad();
            if (!grad.defined())
                continue;
            if (set_to_none)
                p.impl()->grad.reset();
            else
                grad.zero_();
        }
}

std::vector<Tensor> Optimizer::parameters() const {
    std::vector<Tensor> out;
    for (auto& g : param_groups_)
        out.insert(out.end(), g.params().begin(), g.params().end());
    return out;
}

OptimizerParamState& Optimizer::state_of(const Tensor& p) {
    auto& s = state_[p.impl()];
    if (!s)
        s = make_state();
    return *s;
}

void Optimizer::throw_wrong_options(const std::string& optimizer) {
    throw value_error(optimizer + ": a parameter group has another optimizer's options type");
}

}  // namespace tg::optim
