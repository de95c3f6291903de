#include "tapegrad/nn/loss.hpp"

namespace tg::nn {

void LossImpl::pretty_print(std::ostream& os) const {
    const char* r = reduction_ == Reduction::Mean  ? "mean"
                    : reduction_ == Reduction::Sum ? "sum"
                                                   : "none";
    os << name() << "(reduction=" << r << ")";
}

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
    return mse_loss(input, target, reduction_);
}
Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
    return l1_loss(input, target, reduction_);
}
Tensor CrossEntropyLossImpl::forward(const Tensor& logits, const Tensor& labels) {
    return cross_entropy(logits, labels, reduction_);
}
Tensor NLLLossImpl::forward(const Tensor& logp, const Tensor& labels) {
    return nll_loss(logp, labels, reduction_);
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& logits, const Tensor& targets) {
    return binary_cross_entropy_with_logits(logits, targets, reduction_);
}

}  // namespace tg::nn
