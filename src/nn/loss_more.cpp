#include "tapegrad/nn/loss_more.hpp"

#include <string>

#include "ops/loss_checks.hpp"
#include "tapegrad/nn/functional_loss.hpp"

namespace tg::nn {

namespace {
const char* reduction_name(Reduction r) {
    return r == Reduction::None ? "kNone" : r == Reduction::Sum ? "kSum" : "kMean";
}
const char* tf(bool b) {
    return b ? "true" : "false";
}
}  // namespace

KLDivLossImpl::KLDivLossImpl(const KLDivLossOptions& o) : LossImpl("KLDivLoss"), options(o) {}
Tensor KLDivLossImpl::forward(const Tensor& input, const Tensor& target) {
    return functional::kl_div(input, target, options);
}
void KLDivLossImpl::pretty_print(std::ostream& os) const {
    os << "KLDivLoss()";
}

PoissonNLLLossImpl::PoissonNLLLossImpl(const PoissonNLLLossOptions& o)
    : LossImpl("PoissonNLLLoss"), options(o) {}
Tensor PoissonNLLLossImpl::forward(const Tensor& input, const Tensor& target) {
    return functional::poisson_nll_loss(input, target, options);
}
void PoissonNLLLossImpl::pretty_print(std::ostream& os) const {
    os << "PoissonNLLLoss()";
}

CTCLossImpl::CTCLossImpl(const CTCLossOptions& o) : LossImpl("CTCLoss"), options(o) {}
Tensor CTCLossImpl::forward(const Tensor& log_probs, const Tensor& targets,
                            const Tensor& input_lengths, const Tensor& target_lengths) {
    return functional::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
}
void CTCLossImpl::pretty_print(std::ostream& os) const {
    os << "CTCLoss()";
}

CosineEmbeddingLossImpl::CosineEmbeddingLossImpl(const CosineEmbeddingLossOptions& o)
    : LossImpl("CosineEmbeddingLoss"), options(o) {}
Tensor CosineEmbeddingLossImpl::forward(const Tensor& input1, const Tensor& input2,
                                        const Tensor& target) {
    return functional::cosine_embedding_loss(input1, input2, target, options);
}
void CosineEmbeddingLossImpl::pretty_print(std::ostream& os) const {
    os << "CosineEmbeddingLoss(margin=" << options.margin() << ")";
}

HingeEmbeddingLossImpl::HingeEmbeddingLossImpl(const HingeEmbeddingLossOptions& o)
    : LossImpl("HingeEmbeddingLoss"), options(o) {}
Tensor HingeEmbeddingLossImpl::forward(const Tensor& input, const Tensor& target) {
    return functional::hinge_embedding_loss(input, target, options);
}
void HingeEmbeddingLossImpl::pretty_print(std::ostream& os) const {
    os << "HingeEmbeddingLoss(margin=" << options.margin() << ")";
}

MarginRankingLossImpl::MarginRankingLossImpl(const MarginRankingLossOptions& o)
    : LossImpl("MarginRankingLoss"), options(o) {}
Tensor MarginRankingLossImpl::forward(const Tensor& input1, const Tensor& input2,
                                      const Tensor& target) {
    return functional::margin_ranking_loss(input1, input2, target, options);
}
void MarginRankingLossImpl::pretty_print(std::ostream& os) const {
    os << "MarginRankingLoss()";
}

MultiMarginLossImpl::MultiMarginLossImpl(const MultiMarginLossOptions& o)
    : LossImpl("MultiMarginLoss"), options(o) {
    if (o.p() != 1 && o.p() != 2)
        throw value_error("MultiMarginLoss: p " + std::to_string(o.p()) +
                          ": only 1 and 2 are supported");
    if (o.weight().defined() && o.weight().dim() != 1)
        throw shape_error("MultiMarginLoss: weight " + shape_str(o.weight().sizes()) +
                          " must be 1-D");
}
Tensor MultiMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
    return functional::multi_margin_loss(input, target, options);
}
void MultiMarginLossImpl::pretty_print(std::ostream& os) const {
    os << "MultiMarginLoss(p=" << options.p() << ", margin=" << options.margin() << ", weight=";
    if (options.weight().defined())
        os << options.weight();
    else
        os << "[ Tensor (undefined) ]";
    os << ", reduction=" << reduction_name(options.reduction()) << ")";
}

MultiLabelMarginLossImpl::MultiLabelMarginLossImpl(const MultiLabelMarginLossOptions& o)
    : LossImpl("MultiLabelMarginLoss"), options(o) {}
Tensor MultiLabelMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
    return multilabel_margin_loss(input, target, options.reduction());
}
void MultiLabelMarginLossImpl::pretty_print(std::ostream& os) const {
    os << "MultiLabelMarginLoss()";
}

MultiLabelSoftMarginLossImpl::MultiLabelSoftMarginLossImpl(const MultiLabelSoftMarginLossOptions& o)
    : LossImpl("MultiLabelSoftMarginLoss"), options(o) {}
Tensor MultiLabelSoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
    return multilabel_soft_margin_loss(input, target, options.weight(), options.reduction());
}
void MultiLabelSoftMarginLossImpl::pretty_print(std::ostream& os) const {
    os << "MultiLabelSoftMarginLoss()";
}

SoftMarginLossImpl::SoftMarginLossImpl(const SoftMarginLossOptions& o)
    : LossImpl("SoftMarginLoss"), options(o) {}
Tensor SoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
    return soft_margin_loss(input, target, options.reduction());
}
void SoftMarginLossImpl::pretty_print(std::ostream& os) const {
    os << "SoftMarginLoss()";
}

TripletMarginLossImpl::TripletMarginLossImpl(const TripletMarginLossOptions& o)
    : LossImpl("TripletMarginLoss"), options(o) {}
Tensor TripletMarginLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                      const Tensor& negative) {
    return functional::triplet_margin_loss(anchor, positive, negative, options);
}
void TripletMarginLossImpl::pretty_print(std::ostream& os) const {
    os << "TripletMarginLoss(margin=" << options.margin() << ", p=" << options.p()
       << ", eps=" << options.eps() << ", swap=" << tf(options.swap()) << ")";
}

TripletMarginWithDistanceLossImpl::TripletMarginWithDistanceLossImpl(
    const TripletMarginWithDistanceLossOptions& o)
    : LossImpl("TripletMarginWithDistanceLoss"), options(o) {}
Tensor TripletMarginWithDistanceLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                                  const Tensor& negative) {
    return functional::triplet_margin_with_distance_loss(anchor, positive, negative, options);
}
void TripletMarginWithDistanceLossImpl::pretty_print(std::ostream& os) const {
    os << "TripletMarginWithDistanceLoss(margin=" << options.margin()
       << ", swap=" << tf(options.swap()) << ")";
}

}  // namespace tg::nn

namespace tg::nn::functional {

Tensor kl_div(const Tensor& logp, const Tensor& target, const KLDivFuncOptions& o) {
    const KLDivReduction& r = o.reduction();
    Tensor y = tg::kl_div(logp, target, r.reduction(), o.log_target());
    if (r.batch_mean() && logp.dim() != 0)
        y = y / double(logp.size(0));
    return y;
}

Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive,
                                         const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& o) {
    for (const Tensor* t : {&anchor, &positive, &negative})
        if (!t->defined())
            throw value_error("triplet_margin_with_distance_loss: undefined tensor");
    const auto d = [&o](const Tensor& u, const Tensor& v) {
        return o.distance_function() ? (*o.distance_function())(u, v)
                                     : loss::pairwise_distance(u, v);
    };
    const Tensor d_pos = d(anchor, positive);
    Tensor d_neg = d(anchor, negative);
    if (o.swap())
        d_neg = minimum(d_neg, d(positive, negative));
    return loss::reduce(clamp_min(d_pos - d_neg + o.margin(), 0.0), o.reduction());
}

}  // namespace tg::nn::functional
