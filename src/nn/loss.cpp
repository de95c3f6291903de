#include "tapegrad/nn/loss.hpp"

namespace tg::nn {

void LossImpl::pretty_print(std::ostream& os) const {
    // LibTorch 1.13 prints these two without parentheses
    os << name() << (name() == "HuberLoss" || name() == "SmoothL1Loss" ? "" : "()");
}

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
    return mse_loss(input, target, options.reduction());
}
Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
    return l1_loss(input, target, options.reduction());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& logits, const Tensor& labels) {
    return cross_entropy(logits, labels, options.reduction(), options.weight(),
                         options.ignore_index(), options.label_smoothing());
}
Tensor NLLLossImpl::forward(const Tensor& logp, const Tensor& labels) {
    return nll_loss(logp, labels, options.reduction(), options.weight(), options.ignore_index());
}
Tensor BCELossImpl::forward(const Tensor& p, const Tensor& t) {
    return binary_cross_entropy(p, t, options.weight(), options.reduction());
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& x, const Tensor& y) {
    return binary_cross_entropy_with_logits(x, y, options.weight(), options.pos_weight(),
                                            options.reduction());
}
Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
    return smooth_l1_loss(input, target, options.reduction(), options.beta());
}
Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) {
    return huber_loss(input, target, options.reduction(), options.delta());
}

}  // namespace tg::nn
