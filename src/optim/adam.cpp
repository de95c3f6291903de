#include "tapegrad/optim/adam.hpp"

#include <cmath>
#include <string>

#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::optim {

std::unique_ptr<OptimizerParamState> AdamParamState::clone() const {
    auto s = std::make_unique<AdamParamState>();
    s->step(step());
    if (exp_avg.defined())
        s->exp_avg = exp_avg.clone();
    if (exp_avg_sq.defined())
        s->exp_avg_sq = exp_avg_sq.clone();
    if (max_exp_avg_sq.defined())
        s->max_exp_avg_sq = max_exp_avg_sq.clone();
    return s;
}

namespace {

/// The options Adam and AdamW share, read from either options type.
struct AdamHyper {
    double lr, beta1, beta2, eps, weight_decay;
    bool amsgrad, decoupled;  // decoupled: AdamW's weight decay
};

template <class Options>
AdamHyper hyper_of(const Options& o, bool decoupled, const char* name) {
    AdamHyper h{o.lr(),   std::get<0>(o.betas()), std::get<1>(o.betas()),
                o.eps(),  o.weight_decay(),       o.amsgrad(),
                decoupled};
    auto bad = [&](const std::string& what) { throw error(std::string(name) + ": " + what); };
    if (h.lr < 0)
        bad("invalid learning rate " + std::to_string(h.lr));
    if (h.eps < 0)
        bad("invalid eps " + std::to_string(h.eps));
    if (!(h.beta1 >= 0 && h.beta1 < 1))
        bad("invalid beta1 " + std::to_string(h.beta1));
    if (!(h.beta2 >= 0 && h.beta2 < 1))
        bad("invalid beta2 " + std::to_string(h.beta2));
    if (h.weight_decay < 0)
        bad("invalid weight_decay " + std::to_string(h.weight_decay));
    return h;
}

// Note [Optimizer updates are tensor ops] (optimizer.hpp). Temporaries per parameter: g² (then
// freed), √v (reused in place as denom) and m/denom; at most two parameter-sized ones at once.
void adam_update(const Tensor& p, const Tensor& grad, AdamParamState& st, const AdamHyper& h) {
    st.step(st.step() + 1);
    if (!st.exp_avg.defined())
        st.exp_avg = zeros_like(p);
    if (!st.exp_avg_sq.defined())
        st.exp_avg_sq = zeros_like(p);
    if (h.amsgrad && !st.max_exp_avg_sq.defined())
        st.max_exp_avg_sq = zeros_like(p);

    Tensor g = grad;
    if (h.weight_decay != 0) {
        if (h.decoupled) {
            Tensor(p).mul_(1 - h.lr * h.weight_decay);
        } else {
            g = mul(p, h.weight_decay);  // g = grad + wd·p, leaving .grad untouched
            g.add_(grad);
        }
    }
    st.exp_avg.mul_(h.beta1).add_(g, 1 - h.beta1);
    st.exp_avg_sq.mul_(h.beta2).add_(mul(g, g), 1 - h.beta2);

    const double t = double(st.step());
    const double bias_correction1 = 1 - std::pow(h.beta1, t);
    const double bias_correction2 = 1 - std::pow(h.beta2, t);
    const double step_size = h.lr / bias_correction1;
    Tensor v = st.exp_avg_sq;
    if (h.amsgrad) {
        st.max_exp_avg_sq.copy_(maximum(st.max_exp_avg_sq, st.exp_avg_sq));
        v = st.max_exp_avg_sq;
    }
    Tensor denom = sqrt(v);
    denom.div_(std::sqrt(bias_correction2)).add_(h.eps);
    Tensor(p).add_(div(st.exp_avg, denom), -step_size);
}

template <class Options>
Tensor adam_step(std::vector<OptimizerParamGroup>& groups, bool decoupled, const char* name,
                 const std::function<Tensor()>& closure,
                 const std::function<Options&(OptimizerParamGroup&)>& options_of,
                 const std::function<OptimizerParamState&(const Tensor&)>& state_of) {
    Tensor loss;
    if (closure) {
        AutoGradMode enable(true);
        loss = closure();
    }
    NoGradGuard guard;
    for (auto& group : groups) {
        AdamHyper h = hyper_of(options_of(group), decoupled, name);
        for (auto& p : group.params()) {
            Tensor grad = p.grad();
            if (!grad.defined())
                continue;
            adam_update(p, grad, static_cast<AdamParamState&>(state_of(p)), h);
        }
    }
    return loss;
}

}  // namespace

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamOptions>(defaults)) {
    hyper_of(defaults, false, "Adam");
    for (auto& g : param_groups_)
        hyper_of(options_of<AdamOptions>(g), false, "Adam");
}

Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Tensor Adam::step(LossClosure closure) {
    return adam_step<AdamOptions>(
        param_groups_, false, "Adam", closure,
        [this](OptimizerParamGroup& g) -> AdamOptions& { return options_of<AdamOptions>(g); },
        [this](const Tensor& p) -> OptimizerParamState& { return state_of(p); });
}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamWOptions>(defaults)) {
    hyper_of(defaults, true, "AdamW");
    for (auto& g : param_groups_)
        hyper_of(options_of<AdamWOptions>(g), true, "AdamW");
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Tensor AdamW::step(LossClosure closure) {
    return adam_step<AdamWOptions>(
        param_groups_, true, "AdamW", closure,
        [this](OptimizerParamGroup& g) -> AdamWOptions& { return options_of<AdamWOptions>(g); },
        [this](const Tensor& p) -> OptimizerParamState& { return state_of(p); });
}

}  // namespace tg::optim
