// The rest of LibTorch's everyday losses, as compositions of recorded ops (their gradients come
// from the parts): smooth_l1_loss, huber_loss, kl_div, binary_cross_entropy, and nll_loss /
// cross_entropy with class weights, ignore_index and label smoothing. Each follows PyTorch 1.13's
// definition, including its reductions: a weighted mean divides by the summed weights of the
// samples that count, and a sample whose label is ignore_index counts for nothing.
#include <cmath>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
#include "ops/loss_checks.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

using loss::check_labels;
using loss::check_pair;

namespace {

/// check_pair, and a floating input.
void check_same_shape(const char* op, const Tensor& x, const Tensor& y) {
    check_pair(op, x, y);
    runtime::check_float_kernels(op, x);
}

/// A scalar constant like x (dtype and device), for where().
Tensor constant(double v, const Tensor& like) {
    return full({}, v, like.options());
}

}  // namespace

Tensor smooth_l1_loss(const Tensor& x, const Tensor& y, Reduction r, double beta) {
    check_same_shape("smooth_l1_loss", x, y);
    if (!(beta >= 0))
        throw value_error("smooth_l1_loss: beta " + std::to_string(beta) + " must be >= 0");
    const ComposedName named;
    const Tensor z = abs(x - y);
    return named(beta == 0
                     ? loss::reduce(z, r)
                     : loss::reduce(where(lt(z, beta), z * z * (0.5 / beta), z - 0.5 * beta), r),
                 "smooth_l1_loss", "SmoothL1LossBackward0");
}

Tensor huber_loss(const Tensor& x, const Tensor& y, Reduction r, double delta) {
    check_same_shape("huber_loss", x, y);
    if (!(delta > 0))
        throw value_error("huber_loss: delta " + std::to_string(delta) + " must be > 0");
    const ComposedName named;
    const Tensor z = abs(x - y);
    return named(loss::reduce(where(lt(z, delta), z * z * 0.5, (z - 0.5 * delta) * delta), r),
                 "huber_loss", "HuberLossBackward0");
}

Tensor kl_div(const Tensor& logp, const Tensor& target, Reduction r, bool log_target) {
    check_same_shape("kl_div", logp, target);
    if (log_target)
        return loss::reduce(exp(target) * (target - logp), r);
    // target * (log target - logp), with 0 where target is 0 (xlogy(0, 0) = 0)
    const Tensor pos = gt(target, 0.0);
    const Tensor safe = where(pos, target, constant(1, target));
    return loss::reduce(where(pos, target * (log(safe) - logp), -target * logp), r);
}

Tensor binary_cross_entropy(const Tensor& p, const Tensor& t, const Tensor& weight, Reduction r) {
    check_same_shape("binary_cross_entropy", p, t);
    const ComposedName named;
    // PyTorch clamps the logs at -100, so p = 0 or 1 gives a finite loss
    Tensor l = -(t * clamp_min(log(p), -100) + (1.0 - t) * clamp_min(log1p(-p), -100));
    if (weight.defined()) {
        loss::not_differentiable("binary_cross_entropy", "weight", weight);
        runtime::check_same("binary_cross_entropy", p, weight);
        checks::broadcasts_to("binary_cross_entropy", "weight", weight, p.sizes(), "input");
        l = l * weight;
    }
    return named(loss::reduce(l, r), "binary_cross_entropy", "BinaryCrossEntropyBackward0");
}

namespace {

/// The per-sample terms of a weighted nll_loss with ignore_index: -w[y_n] * logp[n, y_n] and
/// w[y_n] (both 0 for an ignored sample). Labels are checked on the host: each in [0, C) or
/// ignore_index.
std::pair<Tensor, Tensor> weighted_nll(const char* op, const Tensor& logp, const Tensor& labels,
                                       const Tensor& weight, int64_t ignore_index) {
    const int64_t C = logp.size(1);
    if (weight.defined()) {
        loss::not_differentiable(op, "weight", weight);
        runtime::check_same(op, logp, weight);
        if (weight.dim() != 1 || weight.size(0) != C)
            throw shape_error(std::string(op) + ": weight " + shape_str(weight.sizes()) +
                              " must have one entry per class (" + std::to_string(C) + ")");
    }
    for (int64_t y : labels.to(kCPU).contiguous().to_vector<int64_t>())
        if ((y < 0 || y >= C) && y != ignore_index)
            throw value_error(std::string(op) + ": label " + std::to_string(y) + " outside [0, " +
                              std::to_string(C) + ") for input " + shape_str(logp.sizes()));
    const Tensor valid = ne(labels, full_like(labels, ignore_index));
    const Tensor safe = where(valid, labels, zeros_like(labels));
    const Tensor picked = gather(logp, 1, safe.unsqueeze(1)).squeeze(1);
    Tensor w = valid.to(logp.dtype());
    if (weight.defined())
        w = index_select(weight, 0, safe) * w;
    return {-(w * picked), w};
}

Tensor reduce_weighted(const Tensor& l, const Tensor& w, Reduction r) {
    if (r == Reduction::None)
        return l;
    return r == Reduction::Sum ? sum(l) : sum(l) / sum(w);
}

}  // namespace

Tensor nll_loss(const Tensor& logp, const Tensor& labels, Reduction r, const Tensor& weight,
                int64_t ignore_index) {
    check_labels("nll_loss", logp, labels);
    const ComposedName named;
    const auto [l, w] = weighted_nll("nll_loss", logp, labels, weight, ignore_index);
    return named(reduce_weighted(l, w, r), "nll_loss", "NllLossBackward0");
}

Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Reduction r, const Tensor& weight,
                     int64_t ignore_index, double label_smoothing) {
    check_labels("cross_entropy", logits, labels);
    if (!(label_smoothing >= 0 && label_smoothing <= 1))
        throw value_error("cross_entropy: label_smoothing " + std::to_string(label_smoothing) +
                          " must be in [0, 1]");
    const int64_t C = logits.size(1);
    // the one-node form when nothing is weighted, smoothed or can be ignored
    if (!weight.defined() && label_smoothing == 0 &&
        (ignore_index >= C ||
         (ignore_index < 0 && (labels.numel() == 0 || min(labels).item<int64_t>() >= 0))))
        return cross_entropy(logits, labels, r);
    const ComposedName named;
    const Tensor logp = log_softmax(logits, 1);
    const auto [nll, w] = weighted_nll("cross_entropy", logp, labels, weight, ignore_index);
    const Tensor loss = reduce_weighted(nll, w, r);
    if (label_smoothing == 0)  // as LibTorch's: the smoothed loss ends in an add there too
        return named(loss, "cross_entropy", "NllLossBackward0");
    // PyTorch's smoothing term: -Σ_c w_c logp[n, c] per sample (0 when ignored), reduced as the
    // nll term is (a mean divides by the same summed weights)
    const Tensor valid = ne(labels, full_like(labels, ignore_index)).to(logits.dtype());
    Tensor smooth = -sum(weight.defined() ? logp * weight.reshape({1, C}) : logp, {1}) * valid;
    if (r == Reduction::Sum)
        smooth = sum(smooth);
    else if (r == Reduction::Mean)
        smooth = sum(smooth) / (weight.defined() ? sum(w) : sum(valid));
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / double(C));
}

Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& t, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction r) {
    if (!weight.defined() && !pos_weight.defined())
        return binary_cross_entropy_with_logits(x, t, r);
    const char* op = "binary_cross_entropy_with_logits";
    check_same_shape(op, x, t);
    const ComposedName named;
    // ATen's form: log(1 + e^-x) as max(-x, 0) + log(1 + e^-|x|), stable for every x
    const Tensor log_sig = log1p(exp(-abs(x))) + relu(-x);
    Tensor l;
    loss::not_differentiable(op, "weight", weight);
    loss::not_differentiable(op, "pos_weight", pos_weight);
    if (pos_weight.defined()) {
        runtime::check_same(op, x, pos_weight);
        checks::broadcasts_to(op, "pos_weight", pos_weight, x.sizes(), "input");
        l = (1 - t) * x + ((pos_weight - 1) * t + 1) * log_sig;
    } else {
        l = (1 - t) * x + log_sig;
    }
    if (weight.defined()) {
        runtime::check_same(op, x, weight);
        checks::broadcasts_to(op, "weight", weight, x.sizes(), "input");
        l = l * weight;
    }
    return named(loss::reduce(l, r), op, "BinaryCrossEntropyWithLogitsBackward0");
}

Tensor nll_loss(const Tensor& logp, const Tensor& labels, const Tensor& weight, Reduction r,
                int64_t ignore_index) {
    return nll_loss(logp, labels, r, weight, ignore_index);
}
Tensor cross_entropy_loss(const Tensor& logits, const Tensor& labels, const Tensor& weight,
                          Reduction r, int64_t ignore_index, double label_smoothing) {
    return cross_entropy(logits, labels, r, weight, ignore_index, label_smoothing);
}

}  // namespace tg
