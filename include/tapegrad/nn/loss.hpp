#pragma once
/// Loss modules: forward(input, target) over the loss ops of losses.hpp, with LibTorch's
/// options (reduction Mean by default, Sum or None; class weights, ignore_index,
/// label_smoothing, pos_weight where LibTorch has them):
///     nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().ignore_index(0).label_smoothing(0.1))
///     nn::MSELoss(tg::kSum)     // an options class converts from its reduction
/// Call them through the holder: `loss_fn(logits, labels)`. They print as LibTorch's, without
/// their options: "MSELoss()".
#include <cstdint>
#include <ostream>
#include <string>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/module.hpp"
#include "tapegrad/ops.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// Shared by the loss modules: forward(x) throws (losses take (input, target)); prints
/// "<Name>()".
class LossImpl : public Module {
public:
    explicit LossImpl(std::string name) : Module(std::move(name)) {}
    using Module::forward;
    void pretty_print(std::ostream& os) const override;
};

/// An options class holding only a reduction (MSELossOptions, L1LossOptions, ...).
struct ReductionOptions {
    ReductionOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(Reduction, reduction);
};
using MSELossOptions = ReductionOptions;
using L1LossOptions = ReductionOptions;

/// LibTorch's NLLLossOptions: weight ({}: none), ignore_index (-100), reduction (mean).
struct NLLLossOptions {
    NLLLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(Tensor, weight);
    TG_ARG(int64_t, ignore_index) = -100;
    TG_ARG(Reduction, reduction);
};
/// LibTorch's CrossEntropyLossOptions: NLLLossOptions' and label_smoothing (0).
struct CrossEntropyLossOptions {
    CrossEntropyLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(Tensor, weight);
    TG_ARG(int64_t, ignore_index) = -100;
    TG_ARG(Reduction, reduction);
    TG_ARG(double, label_smoothing) = 0.0;
};
/// LibTorch's BCELossOptions: weight, reduction.
struct BCELossOptions {
    BCELossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(Tensor, weight);
    TG_ARG(Reduction, reduction);
};
/// LibTorch's BCEWithLogitsLossOptions: weight, reduction, pos_weight (the weight of positive
/// targets, broadcast over the classes in the last dim).
struct BCEWithLogitsLossOptions {
    BCEWithLogitsLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(Tensor, weight);
    TG_ARG(Reduction, reduction);
    TG_ARG(Tensor, pos_weight);
};
/// LibTorch's SmoothL1LossOptions (reduction, beta 1) and HuberLossOptions (reduction, delta 1).
struct SmoothL1LossOptions {
    SmoothL1LossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(Reduction, reduction);
    TG_ARG(double, beta) = 1.0;
};
struct HuberLossOptions {
    HuberLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(Reduction, reduction);
    TG_ARG(double, delta) = 1.0;
};

/// Declares a loss module Name##Impl over Opts with forward(input, target) and an `options`
/// member, as LibTorch's.
#define TG_LOSS_MODULE(Name, Opts)                                               \
    class Name##Impl : public LossImpl {                                         \
    public:                                                                      \
        using Options = Opts;                                                    \
        explicit Name##Impl(const Opts& o = {}) : LossImpl(#Name), options(o) {} \
        Tensor forward(const Tensor& input, const Tensor& target);               \
        Reduction reduction() const { return options.reduction(); }              \
        Opts options;                                                            \
    };                                                                           \
    TG_MODULE(Name)

/// mean((x - y)²)
TG_LOSS_MODULE(MSELoss, MSELossOptions);
/// mean(|x - y|)
TG_LOSS_MODULE(L1Loss, L1LossOptions);
/// cross_entropy(logits, labels, reduction, weight, ignore_index, label_smoothing): logits
/// [N,C] (or [N,C,d...]), labels [N] int64
TG_LOSS_MODULE(CrossEntropyLoss, CrossEntropyLossOptions);
/// -w[label]·logp[i, label_i]: logp [N,C] log-probabilities, labels [N] int64
TG_LOSS_MODULE(NLLLoss, NLLLossOptions);
/// binary_cross_entropy(p, t, weight, reduction): probabilities p and targets t
TG_LOSS_MODULE(BCELoss, BCELossOptions);
/// max(x,0) - x·y + log(1 + e^-|x|), and with pos_weight pw and weight w as PyTorch:
/// w·((1 - y)·x + (1 + (pw - 1)·y)·(log(1 + e^-|x|) + max(-x, 0)))
TG_LOSS_MODULE(BCEWithLogitsLoss, BCEWithLogitsLossOptions);
/// smooth_l1_loss(x, y, reduction, beta)
TG_LOSS_MODULE(SmoothL1Loss, SmoothL1LossOptions);
/// huber_loss(x, y, reduction, delta)
TG_LOSS_MODULE(HuberLoss, HuberLossOptions);

}  // namespace tg::nn

#pragma GCC visibility pop
