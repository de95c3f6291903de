#pragma once
/// The losses of tg::nn::functional (functional.hpp includes this header), LibTorch's spellings
/// with their options classes (the modules' ones, as in LibTorch: F::CTCLossFuncOptions is
/// nn::CTCLossOptions):
///     F::ctc_loss(log_probs, targets, input_lengths, target_lengths,
///                 F::CTCLossFuncOptions().zero_infinity(true));
///     F::triplet_margin_loss(a, p, n, F::TripletMarginLossFuncOptions().margin(0.3));
#include <cstdint>
#include <optional>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/loss_more.hpp"
#include "tapegrad/ops.hpp"
#pragma GCC visibility push(default)

namespace tg::nn::functional {

// ---- the losses tapegrad had before issue 30
struct MSELossFuncOptions {
    TG_ARG(Reduction, reduction) = kMean;
};
inline Tensor mse_loss(const Tensor& x, const Tensor& y, const MSELossFuncOptions& o = {}) {
    return tg::mse_loss(x, y, o.reduction());
}
struct L1LossFuncOptions {
    TG_ARG(Reduction, reduction) = kMean;
};
inline Tensor l1_loss(const Tensor& x, const Tensor& y, const L1LossFuncOptions& o = {}) {
    return tg::l1_loss(x, y, o.reduction());
}
struct NLLLossFuncOptions {
    TG_ARG(Tensor, weight) = {};
    TG_ARG(int64_t, ignore_index) = -100;
    TG_ARG(Reduction, reduction) = kMean;
};
inline Tensor nll_loss(const Tensor& logp, const Tensor& labels, const NLLLossFuncOptions& o = {}) {
    return tg::nll_loss(logp, labels, o.reduction(), o.weight(), o.ignore_index());
}
struct CrossEntropyFuncOptions {
    TG_ARG(Tensor, weight) = {};
    TG_ARG(int64_t, ignore_index) = -100;
    TG_ARG(Reduction, reduction) = kMean;
    TG_ARG(double, label_smoothing) = 0;
};
inline Tensor cross_entropy(const Tensor& logits, const Tensor& labels,
                            const CrossEntropyFuncOptions& o = {}) {
    return tg::cross_entropy(logits, labels, o.reduction(), o.weight(), o.ignore_index(),
                             o.label_smoothing());
}
struct BinaryCrossEntropyFuncOptions {
    TG_ARG(Tensor, weight) = {};
    TG_ARG(Reduction, reduction) = kMean;
};
inline Tensor binary_cross_entropy(const Tensor& p, const Tensor& t,
                                   const BinaryCrossEntropyFuncOptions& o = {}) {
    return tg::binary_cross_entropy(p, t, o.weight(), o.reduction());
}
/// LibTorch's BinaryCrossEntropyWithLogitsFuncOptions: BCEWithLogitsLossOptions (weight,
/// reduction, pos_weight).
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
inline Tensor binary_cross_entropy_with_logits(
    const Tensor& x, const Tensor& t, const BinaryCrossEntropyWithLogitsFuncOptions& o = {}) {
    return tg::binary_cross_entropy_with_logits(x, t, o.weight(), o.pos_weight(), o.reduction());
}
struct SmoothL1LossFuncOptions {
    TG_ARG(Reduction, reduction) = kMean;
    TG_ARG(double, beta) = 1;
};
/// beta: LibTorch 1.13 takes it as this fourth argument (and ignores the options' beta); later
/// versions take it in the options. Both work here: the argument, when given, wins.
inline Tensor smooth_l1_loss(const Tensor& x, const Tensor& y,
                             const SmoothL1LossFuncOptions& o = {},
                             std::optional<double> beta = std::nullopt) {
    return tg::smooth_l1_loss(x, y, o.reduction(), beta ? *beta : o.beta());
}
struct HuberLossFuncOptions {
    TG_ARG(Reduction, reduction) = kMean;
    TG_ARG(double, delta) = 1;
};
inline Tensor huber_loss(const Tensor& x, const Tensor& y, const HuberLossFuncOptions& o = {}) {
    return tg::huber_loss(x, y, o.reduction(), o.delta());
}
/// LibTorch's KLDivFuncOptions: KLDivLossOptions (reduction kMean, kSum, kNone or kBatchMean,
/// log_target).
using KLDivFuncOptions = KLDivLossOptions;
/// kl_div with LibTorch's F:: reductions: kBatchMean divides the sum by the batch size.
Tensor kl_div(const Tensor& logp, const Tensor& target, const KLDivFuncOptions& o = {});

// ---- the rest of LibTorch's losses (issue 30)
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
inline Tensor poisson_nll_loss(const Tensor& input, const Tensor& target,
                               const PoissonNLLLossFuncOptions& o = {}) {
    return tg::poisson_nll_loss(input, target, o.log_input(), o.full(), o.eps(), o.reduction());
}
using CTCLossFuncOptions = CTCLossOptions;
inline Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                       const Tensor& target_lengths, const CTCLossFuncOptions& o = {}) {
    return tg::ctc_loss(log_probs, targets, input_lengths, target_lengths, o.blank(), o.reduction(),
                        o.zero_infinity());
}
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
inline Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2,
                                    const Tensor& target,
                                    const CosineEmbeddingLossFuncOptions& o = {}) {
    return tg::cosine_embedding_loss(input1, input2, target, o.margin(), o.reduction());
}
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
inline Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                                   const HingeEmbeddingLossFuncOptions& o = {}) {
    return tg::hinge_embedding_loss(input, target, o.margin(), o.reduction());
}
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
inline Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                                  const MarginRankingLossFuncOptions& o = {}) {
    return tg::margin_ranking_loss(input1, input2, target, o.margin(), o.reduction());
}
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
inline Tensor multi_margin_loss(const Tensor& input, const Tensor& target,
                                const MultiMarginLossFuncOptions& o = {}) {
    return tg::multi_margin_loss(input, target, double(o.p()), o.margin(), o.weight(),
                                 o.reduction());
}
/// LibTorch spells these two "Multilabel"
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
inline Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                                     const MultilabelMarginLossFuncOptions& o = {}) {
    return tg::multilabel_margin_loss(input, target, o.reduction());
}
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
inline Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                          const MultilabelSoftMarginLossFuncOptions& o = {}) {
    return tg::multilabel_soft_margin_loss(input, target, o.weight(), o.reduction());
}
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
inline Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                               const SoftMarginLossFuncOptions& o = {}) {
    return tg::soft_margin_loss(input, target, o.reduction());
}
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
inline Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive,
                                  const Tensor& negative,
                                  const TripletMarginLossFuncOptions& o = {}) {
    return tg::triplet_margin_loss(anchor, positive, negative, o.margin(), o.p(), o.eps(), o.swap(),
                                   o.reduction());
}
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;
/// max(0, d(a, p) - d(a, n) + margin) with the options' distance function (default: the
/// pairwise distance ‖u - v + 1e-6‖₂ over the last dim), as LibTorch's
Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive,
                                         const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& o = {});

}  // namespace tg::nn::functional

#pragma GCC visibility pop
