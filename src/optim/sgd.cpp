#include "tapegrad/optim/sgd.hpp"

#include <string>
#include <vector>

#include "backend/cpu/optim_kernels.hpp"
#include "optim/check_options.hpp"
#include "optim/fused.hpp"
#include "runtime/dispatch.hpp"
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

namespace {

// Note [Optimizer updates are tensor ops] (optimizer.hpp). Without momentum and weight decay
// the update is a single p.add_(grad, -lr): no temporary at all. On the CPU the update is one
// pass instead (Note [Multi-tensor optimizer steps] in cpu/optim_kernels.cpp, the same bits),
// and on OpenCL and CUDA one kernel per parameter (sgd_device); these tensor ops run for the
// others (float16, strided state).
void sgd_composed(const Tensor& p, const Tensor& grad, SGDParamState& st, const SGDOptions& o) {
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
    Tensor(p).add_(d_p, -o.lr());
}

/// The fused kernel's item for p's update (allocating the momentum buffer at its first step).
backend::cpu::SgdItem sgd_item(const Tensor& p, const Tensor& grad, SGDParamState& st,
                               const SGDOptions& o) {
    backend::cpu::SgdItem it;
    it.dtype = p.dtype();
    it.p = detail::host_data(p);
    it.g = detail::host_data(grad);
    it.n = p.numel();
    it.weight_decay = o.weight_decay();
    it.momentum = o.momentum();
    it.dampening_c = 1 - o.dampening();
    it.neg_lr = -o.lr();
    it.nesterov = o.nesterov();
    if (o.momentum() != 0) {
        it.first = !st.momentum_buffer.defined();
        if (it.first)
            st.momentum_buffer = empty_like(p);
        it.buf = detail::host_data(st.momentum_buffer);
    }
    return it;
}

/// p's update on its device's fused kernel (backend.hpp's OptimOp), one kernel, the momentum
/// buffer on the device (allocated at its first step).
void sgd_device(const Tensor& p, const Tensor& grad, SGDParamState& st, const SGDOptions& o) {
    backend::OptimStep s;
    s.n = p.numel();
    s.weight_decay = o.weight_decay();
    s.momentum = o.momentum();
    s.dampening_c = 1 - o.dampening();
    s.neg_lr = -o.lr();
    s.nesterov = o.nesterov();
    // A first step's buffer joins the state only once the kernel has filled it: were it kept
    // after a failed launch, the next step would read it as momentum.
    Tensor buf = o.momentum() != 0 ? st.momentum_buffer : Tensor();
    s.first = o.momentum() != 0 && !buf.defined();
    if (s.first)
        buf = empty_like(p);
    const auto v = detail::device_views({&p, &grad, &buf});
    runtime::be(p).optim_step(backend::OptimOp::Sgd, s, v.data());
    runtime::mark_modified(p);
    if (buf.defined()) {
        runtime::mark_modified(buf);
        st.momentum_buffer = buf;
    }
}

}  // namespace

Tensor SGD::step(LossClosure closure) {
    autograd::profiler::RecordFunction timed("Optimizer.step#SGD.step");
    Tensor loss;
    if (closure) {
        AutoGradMode enable(true);
        loss = closure();
    }
    NoGradGuard guard;
    std::vector<backend::cpu::SgdItem> items;
    std::vector<Tensor> written;
    auto run_fused = [&] {
        backend::cpu::sgd_steps(items);
        for (const Tensor& t : written)
            runtime::mark_modified(t);
    };
    try {
        for (auto& group : param_groups_) {
            const SGDOptions& o = options_of<SGDOptions>(group);
            o.validate(type_name());
            for (auto& p : group.params()) {
                Tensor grad = p.grad();
                if (!grad.defined())
                    continue;
                auto& st = static_cast<SGDParamState&>(state_of(p));
                st.step(st.step() + 1);
                const Tensor none;
                const Tensor* buf = o.momentum() != 0 ? &st.momentum_buffer : &none;
                if (detail::fusable({&p, &grad, buf})) {
                    items.push_back(sgd_item(p, grad, st, o));
                    written.push_back(p);
                    if (o.momentum() != 0)
                        written.push_back(st.momentum_buffer);
                } else if (detail::device_fusable({&p, &grad, buf})) {
                    sgd_device(p, grad, st, o);
                } else {
                    sgd_composed(p, grad, st, o);
                }
            }
        }
    } catch (...) {  // the parameters before the one that threw are updated, as before
        run_fused();
        throw;
    }
    run_fused();
    return loss;
}

}  // namespace tg::optim
