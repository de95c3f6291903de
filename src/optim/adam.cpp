#include "tapegrad/optim/adam.hpp"

#include <cmath>
#include <initializer_list>
#include <vector>

#include "backend/cpu/optim_kernels.hpp"
#include "optim/check_options.hpp"
#include "optim/fused.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"
#include "tapegrad/profiler.hpp"

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

void AdamParamState::validate() const {
    for (const Tensor* t : {&exp_avg_sq, &max_exp_avg_sq})
        if (t->defined() && t->numel() > 0 && lt(*t, 0).sum().item<int64_t>() > 0)
            throw value_error(std::string("optimizer state: ") +
                              (t == &exp_avg_sq ? "exp_avg_sq" : "max_exp_avg_sq") +
                              " has negative elements (it is an average of squares)");
}

namespace {

using backend::BinaryOp;

/// The options Adam and AdamW share, read from either options type.
struct AdamHyper {
    double lr, beta1, beta2, eps, weight_decay;
    bool amsgrad, decoupled;  // decoupled: AdamW's weight decay
};

template <class Options>
AdamHyper hyper_of(const Options& o, bool decoupled) {
    o.validate(decoupled ? "AdamW" : "Adam");
    return {o.lr(),   std::get<0>(o.betas()), std::get<1>(o.betas()),
            o.eps(),  o.weight_decay(),       o.amsgrad(),
            decoupled};
}

/// out = op(a, b) written in place (out may be a), bumping out's version as in-place ops do.
void update(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, double p, double q) {
    runtime::binary_into(op, out, a, b, "Adam", p, q);
    runtime::mark_modified(out);
}

/// Counts p's step and allocates its state at the first; the bias corrections of this step.
struct StepScalars {
    double bias_correction1, bias_correction2, step_size;
};
StepScalars begin_step(const Tensor& p, AdamParamState& st, const AdamHyper& h) {
    st.step(st.step() + 1);
    if (!st.exp_avg.defined())
        st.exp_avg = zeros_like(p);
    if (!st.exp_avg_sq.defined())
        st.exp_avg_sq = zeros_like(p);
    if (h.amsgrad && !st.max_exp_avg_sq.defined())
        st.max_exp_avg_sq = zeros_like(p);
    const double t = double(st.step());
    const double bc1 = 1 - std::pow(h.beta1, t), bc2 = 1 - std::pow(h.beta2, t);
    return {bc1, bc2, h.lr / bc1};
}

// Note [Optimizer updates are tensor ops] (optimizer.hpp). The update is four passes over
// memory with fused kernels from kernels.def (it was ten single-op passes):
//   m = β1·m + (1-β1)·g              axpby
//   v = β2·v + (1-β2)·g²             axpby_square
//   d = m / (√v · 1/√bc2 + eps)      adam_direction (the one temporary)
//   p = p - lr/bc1 · d               axpy (add_)
// Each kernel rounds exactly as the unfused ops did (mul_, add_, sqrt, div_ by a scalar, which
// multiplies by its inverse, add_(eps), div), so results are bit-identical to them. On the CPU
// the four are one pass (Note [Multi-tensor optimizer steps] in cpu/optim_kernels.cpp, the same
// bits), and on OpenCL and CUDA one kernel per parameter (adam_device); these tensor ops run
// for the others (float16, strided state).
void adam_composed(const Tensor& p, const Tensor& grad, AdamParamState& st, const AdamHyper& h,
                   const StepScalars& s) {
    Tensor g = grad;
    if (h.weight_decay != 0) {
        if (h.decoupled)
            Tensor(p).mul_(1 - h.lr * h.weight_decay);
        else  // g = grad + wd·p, leaving .grad untouched
            g = runtime::binary(BinaryOp::axpy, grad, p, "Adam", h.weight_decay);
    }
    update(BinaryOp::axpby, st.exp_avg, st.exp_avg, g, h.beta1, 1 - h.beta1);
    update(BinaryOp::axpby_square, st.exp_avg_sq, st.exp_avg_sq, g, h.beta2, 1 - h.beta2);
    Tensor v = st.exp_avg_sq;
    if (h.amsgrad) {
        update(BinaryOp::maximum, st.max_exp_avg_sq, st.max_exp_avg_sq, st.exp_avg_sq, 0, 0);
        v = st.max_exp_avg_sq;
    }
    const Tensor d = runtime::binary(BinaryOp::adam_direction, st.exp_avg, v, "Adam",
                                     1.0 / std::sqrt(s.bias_correction2), h.eps);
    Tensor(p).add_(d, -s.step_size);
}

/// The scalars adam_composed passes its kernels, for the fused kernels (no pointers set).
backend::cpu::AdamItem adam_scalars(const Tensor& p, const AdamHyper& h, const StepScalars& s) {
    using backend::cpu::AdamItem;
    AdamItem it;
    it.dtype = p.dtype();
    it.n = p.numel();
    if (h.weight_decay != 0) {
        it.decay = h.decoupled ? AdamItem::decoupled : AdamItem::coupled;
        it.decay_factor = h.decoupled ? 1 - h.lr * h.weight_decay : h.weight_decay;
    }
    it.beta1 = h.beta1;
    it.beta1c = 1 - h.beta1;
    it.beta2 = h.beta2;
    it.beta2c = 1 - h.beta2;
    it.rsqrt_bc2 = 1.0 / std::sqrt(s.bias_correction2);
    it.eps = h.eps;
    it.neg_step = -s.step_size;
    return it;
}

/// The fused CPU kernel's item for p's update.
backend::cpu::AdamItem adam_item(const Tensor& p, const Tensor& grad, AdamParamState& st,
                                 const AdamHyper& h, const StepScalars& s) {
    backend::cpu::AdamItem it = adam_scalars(p, h, s);
    it.p = detail::host_data(p);
    it.g = detail::host_data(grad);
    it.m = detail::host_data(st.exp_avg);
    it.v = detail::host_data(st.exp_avg_sq);
    it.vmax = h.amsgrad ? detail::host_data(st.max_exp_avg_sq) : nullptr;
    return it;
}

/// p's update on its device's fused kernel (backend.hpp's OptimOp), one kernel, the state on
/// the device; the scalars are the CPU kernel's.
void adam_device(const Tensor& p, const Tensor& grad, AdamParamState& st, const AdamHyper& h,
                 const StepScalars& s) {
    const backend::cpu::AdamItem it = adam_scalars(p, h, s);
    backend::OptimStep o;
    o.n = p.numel();
    o.decay = int(it.decay);
    o.f = it.decay_factor;
    o.beta1 = it.beta1;
    o.beta1c = it.beta1c;
    o.beta2 = it.beta2;
    o.beta2c = it.beta2c;
    o.rsqrt_bc2 = it.rsqrt_bc2;
    o.eps = it.eps;
    o.neg_step = it.neg_step;
    const Tensor none, *vmax = h.amsgrad ? &st.max_exp_avg_sq : &none;
    const auto v = detail::device_views({&p, &grad, &st.exp_avg, &st.exp_avg_sq, vmax});
    runtime::be(p).optim_step(backend::OptimOp::Adam, o, v.data());
    for (const Tensor* t :
         std::initializer_list<const Tensor*>{&p, &st.exp_avg, &st.exp_avg_sq, vmax})
        if (t->defined())
            runtime::mark_modified(*t);
}

/// Runs the fused updates collected so far and bumps the versions of what they wrote.
struct FusedAdam {
    std::vector<backend::cpu::AdamItem> items;
    std::vector<Tensor> written;
    void run() {
        backend::cpu::adam_steps(items);
        items.clear();
        for (const Tensor& t : written)
            runtime::mark_modified(t);
        written.clear();
    }
};

template <class Options>
Tensor adam_step(std::vector<OptimizerParamGroup>& groups, bool decoupled,
                 const std::function<Tensor()>& closure,
                 const std::function<Options&(OptimizerParamGroup&)>& options_of,
                 const std::function<OptimizerParamState&(const Tensor&)>& state_of) {
    Tensor loss;
    if (closure) {
        AutoGradMode enable(true);
        loss = closure();
    }
    NoGradGuard guard;
    FusedAdam fused;
    try {
        for (auto& group : groups) {
            AdamHyper h = hyper_of(options_of(group), decoupled);
            for (auto& p : group.params()) {
                Tensor grad = p.grad();
                if (!grad.defined())
                    continue;
                auto& st = static_cast<AdamParamState&>(state_of(p));
                const StepScalars s = begin_step(p, st, h);
                const Tensor none, *vmax = h.amsgrad ? &st.max_exp_avg_sq : nullptr;
                if (detail::fusable(
                        {&p, &grad, &st.exp_avg, &st.exp_avg_sq, vmax ? vmax : &none})) {
                    fused.items.push_back(adam_item(p, grad, st, h, s));
                    fused.written.insert(fused.written.end(), {p, st.exp_avg, st.exp_avg_sq});
                    if (vmax)
                        fused.written.push_back(*vmax);
                } else if (detail::device_fusable(
                               {&p, &grad, &st.exp_avg, &st.exp_avg_sq, vmax ? vmax : &none})) {
                    adam_device(p, grad, st, h, s);
                } else {
                    adam_composed(p, grad, st, h, s);
                }
            }
        }
    } catch (...) {  // the parameters before the one that threw are updated, as before
        fused.run();
        throw;
    }
    fused.run();
    return loss;
}

}  // namespace

void AdamOptions::validate(const std::string& optimizer) const {
    detail::check_adam_options(*this, optimizer);
}

void AdamWOptions::validate(const std::string& optimizer) const {
    detail::check_adam_options(*this, optimizer);
}

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamOptions>(defaults)) {
    defaults.validate(type_name());
    for (auto& g : param_groups_)
        options_of<AdamOptions>(g).validate(type_name());
}

Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Tensor Adam::step(LossClosure closure) {
    autograd::profiler::RecordFunction timed("Optimizer.step#Adam.step");
    return adam_step<AdamOptions>(
        param_groups_, false, closure,
        [this](OptimizerParamGroup& g) -> AdamOptions& { return options_of<AdamOptions>(g); },
        [this](const Tensor& p) -> OptimizerParamState& { return state_of(p); });
}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamWOptions>(defaults)) {
    defaults.validate(type_name());
    for (auto& g : param_groups_)
        options_of<AdamWOptions>(g).validate(type_name());
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Tensor AdamW::step(LossClosure closure) {
    autograd::profiler::RecordFunction timed("Optimizer.step#AdamW.step");
    return adam_step<AdamWOptions>(
        param_groups_, true, closure,
        [this](OptimizerParamGroup& g) -> AdamWOptions& { return options_of<AdamWOptions>(g); },
        [this](const Tensor& p) -> OptimizerParamState& { return state_of(p); });
}

}  // namespace tg::optim
