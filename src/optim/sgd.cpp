#include "tapegrad/optim/sgd.hpp"

#include <string>

#include "optim/check_options.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"
#include "tapegrad/profiler.hpp"

namespace tg::optim {

std::unique_ptr<OptimizerParamState> SGDParamState::clone() const {
    auto s = std::make_unique<SGDParamState>();
    s->step(step());
    if (momentum_buffer.defined())
        s->momentum_buffer = momentum_buffer.clone();
    return s;
}

void SGDOptions::validate(const std::string& optimizer) const {
    detail::check_sgd_options(*this, optimizer);
}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<SGDOptions>(defaults)) {
    defaults.validate(type_name());
    for (auto& g : param_groups_)
        options_of<SGDOptions>(g).validate(type_name());
}

SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

// Note [Optimizer updates are tensor ops] (optimizer.hpp). Without momentum and weight decay
// the update is a single p.add_(grad, -lr): no temporary at all.
Tensor SGD::step(LossClosure closure) {
    autograd::profiler::RecordFunction timed("Optimizer.step#SGD.step");
    Tensor loss;
    if (closure) {
        AutoGradMode enable(true);
        loss = closure();
    }
    NoGradGuard guard;
    for (auto& group : param_groups_) {
        const SGDOptions& o = options_of<SGDOptions>(group);
        o.validate(type_name());
        for (auto& p : group.params()) {
            Tensor grad = p.grad();
            if (!grad.defined())
                continue;
            auto& st = static_cast<SGDParamState&>(state_of(p));
            st.step(st.step() + 1);
            Tensor d_p = grad;
            if (o.weight_decay() != 0) {  // g + wd·p, in one temporary (.grad stays untouched)
                d_p = mul(p.detach(), o.weight_decay());
                d_p.add_(grad);
            }
            if (o.momentum() != 0) {
                Tensor& buf = st.momentum_buffer;
                if (!buf.defined()) {
                    buf = d_p.detach().clone();
                } else {
                    buf.mul_(o.momentum()).add_(d_p, 1 - o.dampening());
                }
                if (o.nesterov()) {
                    if (d_p.impl() == grad.impl())
                        d_p = add(d_p, mul(buf, o.momentum()));  // do not write into .grad
                    else
                        d_p.add_(buf, o.momentum());
                } else {
                    d_p = buf;
                }
            }
            p.add_(d_p, -o.lr());
        }
    }
    return loss;
}

}  // namespace tg::optim
