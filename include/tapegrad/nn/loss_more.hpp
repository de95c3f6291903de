#pragma once
/// The rest of LibTorch 1.13's loss modules, over the losses of tapegrad/losses.hpp, with their
/// options, defaults and printing (without LibTorch's "torch::nn::" prefix):
///     nn::KLDivLoss(nn::KLDivLossOptions().reduction(tg::kBatchMean).log_target(true))
///     nn::CTCLoss(nn::CTCLossOptions().blank(0).zero_infinity(true))
///     nn::TripletMarginLoss(nn::TripletMarginLossOptions().margin(0.5).swap(true))
/// Like LibTorch's, each options class converts from its reduction: nn::SoftMarginLoss(tg::kSum).
/// AdaptiveLogSoftmaxWithLoss is in tapegrad/nn/adaptive.hpp, the F:: functions in
/// tapegrad/nn/functional_loss.hpp.
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/loss.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// LibTorch's KLDivLossOptions: reduction (kMean; also kBatchMean), log_target (false).
struct KLDivLossOptions {
    KLDivLossOptions(KLDivReduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    KLDivLossOptions(Reduction r) : reduction_(r) {}               // NOLINT: implicit
    KLDivLossOptions(BatchMean r) : reduction_(r) {}               // NOLINT: implicit
    TG_ARG(KLDivReduction, reduction);
    TG_ARG(bool, log_target) = false;
};
/// LibTorch's PoissonNLLLossOptions: log_input (true), full (false), eps (1e-8), reduction.
struct PoissonNLLLossOptions {
    PoissonNLLLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(bool, log_input) = true;
    TG_ARG(bool, full) = false;
    TG_ARG(double, eps) = 1e-8;
    TG_ARG(Reduction, reduction);
};
/// LibTorch's CTCLossOptions: blank (0), reduction, zero_infinity (false).
struct CTCLossOptions {
    CTCLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(int64_t, blank) = 0;
    TG_ARG(Reduction, reduction);
    TG_ARG(bool, zero_infinity) = false;
};
/// LibTorch's options with a margin: CosineEmbeddingLossOptions (margin 0),
/// HingeEmbeddingLossOptions (margin 1), MarginRankingLossOptions (margin 0).
struct CosineEmbeddingLossOptions {
    CosineEmbeddingLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(double, margin) = 0.0;
    TG_ARG(Reduction, reduction);
};
struct HingeEmbeddingLossOptions {
    HingeEmbeddingLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(double, margin) = 1.0;
    TG_ARG(Reduction, reduction);
};
struct MarginRankingLossOptions {
    MarginRankingLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(double, margin) = 0.0;
    TG_ARG(Reduction, reduction);
};
/// LibTorch's MultiMarginLossOptions: p (1; 1 or 2), margin (1), weight (none), reduction.
struct MultiMarginLossOptions {
    MultiMarginLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(int64_t, p) = 1;
    TG_ARG(double, margin) = 1.0;
    TG_ARG(Tensor, weight) = {};
    TG_ARG(Reduction, reduction);
};
/// LibTorch's MultiLabelMarginLossOptions and SoftMarginLossOptions: reduction.
using MultiLabelMarginLossOptions = ReductionOptions;
using SoftMarginLossOptions = ReductionOptions;
/// LibTorch's MultiLabelSoftMarginLossOptions: weight (none), reduction.
struct MultiLabelSoftMarginLossOptions {
    MultiLabelSoftMarginLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(Tensor, weight) = {};
    TG_ARG(Reduction, reduction);
};
/// LibTorch's TripletMarginLossOptions: margin (1), p (2), eps (1e-6), swap (false), reduction.
struct TripletMarginLossOptions {
    TripletMarginLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT: implicit
    TG_ARG(double, margin) = 1.0;
    TG_ARG(double, p) = 2.0;
    TG_ARG(double, eps) = 1e-6;
    TG_ARG(bool, swap) = false;
    TG_ARG(Reduction, reduction);
};
/// LibTorch's TripletMarginWithDistanceLossOptions: distance_function (none: the pairwise
/// distance ‖u - v + 1e-6‖₂ over the last dim), margin (1), swap (false), reduction.
struct TripletMarginWithDistanceLossOptions {
    using distance_function_t = std::function<Tensor(const Tensor&, const Tensor&)>;
    TripletMarginWithDistanceLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT
    TG_ARG(std::optional<distance_function_t>, distance_function) = std::nullopt;
    TG_ARG(double, margin) = 1.0;
    TG_ARG(bool, swap) = false;
    TG_ARG(Reduction, reduction);
};

/// A loss module over options Opts whose forward takes Args (Tensor input, target, ...).
#define TG_LOSS_MORE(Name, Opts, ...)                       \
    class Name##Impl : public LossImpl {                    \
    public:                                                 \
        using Options = Opts;                               \
        explicit Name##Impl(const Opts& o = {});            \
        Tensor forward(__VA_ARGS__);                        \
        void pretty_print(std::ostream& os) const override; \
        Opts options;                                       \
    };                                                      \
    TG_MODULE(Name)

/// kl_div(input, target) as LibTorch's F::kl_div (kBatchMean: the sum over the batch size)
TG_LOSS_MORE(KLDivLoss, KLDivLossOptions, const Tensor& input, const Tensor& target);
/// poisson_nll_loss(input, target, log_input, full, eps)
TG_LOSS_MORE(PoissonNLLLoss, PoissonNLLLossOptions, const Tensor& input, const Tensor& target);
/// ctc_loss(log_probs [T,N,C], targets, input_lengths, target_lengths, blank, zero_infinity)
TG_LOSS_MORE(CTCLoss, CTCLossOptions, const Tensor& log_probs, const Tensor& targets,
             const Tensor& input_lengths, const Tensor& target_lengths);
/// cosine_embedding_loss(input1, input2, target, margin)
TG_LOSS_MORE(CosineEmbeddingLoss, CosineEmbeddingLossOptions, const Tensor& input1,
             const Tensor& input2, const Tensor& target);
/// hinge_embedding_loss(input, target, margin)
TG_LOSS_MORE(HingeEmbeddingLoss, HingeEmbeddingLossOptions, const Tensor& input,
             const Tensor& target);
/// margin_ranking_loss(input1, input2, target, margin)
TG_LOSS_MORE(MarginRankingLoss, MarginRankingLossOptions, const Tensor& input1,
             const Tensor& input2, const Tensor& target);
/// multi_margin_loss(input, target, p, margin, weight); value_error for p other than 1 and 2
TG_LOSS_MORE(MultiMarginLoss, MultiMarginLossOptions, const Tensor& input, const Tensor& target);
/// multilabel_margin_loss(input, target)
TG_LOSS_MORE(MultiLabelMarginLoss, MultiLabelMarginLossOptions, const Tensor& input,
             const Tensor& target);
/// multilabel_soft_margin_loss(input, target, weight)
TG_LOSS_MORE(MultiLabelSoftMarginLoss, MultiLabelSoftMarginLossOptions, const Tensor& input,
             const Tensor& target);
/// soft_margin_loss(input, target)
TG_LOSS_MORE(SoftMarginLoss, SoftMarginLossOptions, const Tensor& input, const Tensor& target);
/// triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap)
TG_LOSS_MORE(TripletMarginLoss, TripletMarginLossOptions, const Tensor& anchor,
             const Tensor& positive, const Tensor& negative);
/// max(0, d(a, p) - d(a, n) + margin) with the options' distance function d (swap: d(a, n) is
/// min(d(a, n), d(p, n))), reduced
TG_LOSS_MORE(TripletMarginWithDistanceLoss, TripletMarginWithDistanceLossOptions,
             const Tensor& anchor, const Tensor& positive, const Tensor& negative);

#undef TG_LOSS_MORE

}  // namespace tg::nn

#pragma GCC visibility pop
