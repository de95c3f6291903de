#include "tapegrad/nn/loss.hpp"

namespace tg::nn {

void LossImpl::pretty_print(std::ostream& os) const {
    os << name() << "()";
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
    const Tensor& w = options.weight();
    const Tensor& pw = options.pos_weight();
    if (!w.defined() && !pw.defined())
        return binary_cross_entropy_with_logits(x, y, options.reduction());
    if (!x.defined() || !y.defined() || x.sizes() != y.sizes())
        throw shape_error("BCEWithLogitsLoss: input " +
                          (x.defined() ? shape_str(x.sizes()) : std::string("undefined")) +
                          " and target " +
                          (y.defined() ? shape_str(y.sizes()) : std::string("undefined")) +
                          " must have the same shape");
    // PyTorch's form: the log-sigmoid of -x, stable for every x, weighted by 1 + (pw - 1)·y
    const Tensor log_sig = log1p(exp(-abs(x))) + relu(-x);
    Tensor loss = pw.defined() ? (1 - y) * x + ((pw - 1) * y + 1) * log_sig : (1 - y) * x + log_sig;
    if (w.defined())
        loss = loss * w;
    switch (options.reduction()) {
        case Reduction::None:
            return loss;
        case Reduction::Sum:
            return loss.sum();
        default:
            return loss.mean();
    }
}
Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
    return smooth_l1_loss(input, target, options.reduction(), options.beta());
}
Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) {
    return huber_loss(input, target, options.reduction(), options.delta());
}

}  // namespace tg::nn
