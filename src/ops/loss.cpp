// Losses. cross_entropy and binary_cross_entropy_with_logits are primitives for numerical
// stability, mse_loss for memory; the rest are compositions.
#include "autograd/record.hpp"
#include "ops/loss_checks.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace loss {
Tensor reduce(const Tensor& l, Reduction r) {
    if (r == Reduction::None)
        return l;
    return r == Reduction::Sum ? sum(l) : mean(l);
}

void check_pair(const char* op, const Tensor& x, const Tensor& y) {
    runtime::check_same(op, x, y);
    if (x.sizes() != y.sizes())
        throw shape_error(std::string(op) + ": input " + shape_str(x.sizes()) + " and target " +
                          shape_str(y.sizes()) + " must have the same shape");
}

void check_labels(const char* op, const Tensor& x, const Tensor& labels) {
    if (labels.dtype() != kInt64)
        throw dtype_error(std::string(op) + ": labels must be int64 class indices, got " +
                          dtype_name(labels.dtype()) + " " + shape_str(labels.sizes()));
    if (x.dim() != 2 || labels.dim() != 1 || labels.size(0) != x.size(0))
        throw shape_error(std::string(op) + ": expected input [N,C] and labels [N], got " +
                          shape_str(x.sizes()) + " and " + shape_str(labels.sizes()));
    if (labels.device() != x.device())  // a backend must never see another device's buffer
        throw device_error(std::string(op) + ": input " + shape_str(x.sizes()) + " on " +
                           x.device().str() + " and labels " + shape_str(labels.sizes()) + " on " +
                           labels.device().str() + ": tensors are on different devices");
    runtime::check_float_kernels(op, x);
}

void not_differentiable(const char* op, const char* what, const Tensor& t) {
    if (t.defined() && t.requires_grad() && GradMode::is_enabled())
        throw autograd_error(std::string(op) + ": not differentiable with respect to argument '" +
                             what + "' " + shape_str(t.sizes()) +
                             ", which cannot require grad (as in LibTorch)");
}
}  // namespace loss

using loss::check_labels;
using loss::check_pair;
using loss::reduce;

/// loss = reduce((x - y)²);  dx = s·(x - y)·dl, dy = -dx, s = 2 (2/N for mean). One node that
/// saves x and y (alive anyway), not x - y: the loss keeps nothing of its own, and its backward
/// allocates one buffer (the composite kept x - y and made three in backward).
Tensor mse_loss(const Tensor& x, const Tensor& y, Reduction r) {
    check_pair("mse_loss", x, y);
    Tensor out;
    {
        NoGradGuard no_grad;
        Tensor d = runtime::binary(backend::BinaryOp::sub, x, y, "mse_loss");
        runtime::unary_into(backend::UnaryOp::square, d, d, 0, 0);
        out = reduce(d, r);
    }
    if (should_record({&x, &y})) {
        const double s = r == Reduction::Mean && x.numel() > 0 ? 2.0 / double(x.numel()) : 2.0;
        record("mse_loss", {&x, &y}, out,
               [sx = save(x), sy = save(y), s](const Tensor& dl, const Node& n) {
                   const Tensor xx = sx.get(), yy = sy.get();
                   Tensor dx;
                   if (GradMode::is_enabled()) {  // create_graph: the same formula, recorded
                       dx = (xx - yy) * dl * s;
                   } else {
                       dx = runtime::binary(backend::BinaryOp::sub, xx, yy, "mse_loss");
                       runtime::binary_into(backend::BinaryOp::mul_scaled, dx, dx, dl, "mse_loss",
                                            s, 0);
                   }
                   return Grads{needs(n, 0) ? dx : Tensor(), needs(n, 1) ? -dx : Tensor()};
               });
    }
    return out;
}

Tensor l1_loss(const Tensor& x, const Tensor& y, Reduction r) {
    check_pair("l1_loss", x, y);
    return reduce(abs(x - y), r);
}

Tensor nll_loss(const Tensor& logp, const Tensor& labels, Reduction r) {
    check_labels("nll_loss", logp, labels);
    const ComposedName named;
    Tensor picked;
    try {
        picked = gather(logp, 1, labels.unsqueeze(1));
    } catch (const shape_error& e) {  // name the op the user called, not the one it is made of
        throw shape_error(std::string("nll_loss: ") + e.what());
    }
    return named(reduce(-picked.squeeze(1), r), "nll_loss", "NllLossBackward0");
}

namespace {
/// cross_entropy's loss and log-probabilities lp, unrecorded: the forward, and a MemoryBudget's
/// recomputation of the loss.
Tensor cross_entropy_forward(const Tensor& logits, const Tensor& labels, Reduction r, Tensor& lp) {
    NoGradGuard g;
    const int64_t N = logits.size(0);
    lp = log_softmax(logits, 1);
    const Tensor picked = runtime::empty({N, 1}, lp.dtype(), lp.device());
    const Tensor idx = labels.reshape({N, 1}).contiguous();
    runtime::be(lp).index(backend::IndexOp::Gather, runtime::view(picked), runtime::view(lp), 1,
                          runtime::view(idx), "cross_entropy");
    const Tensor loss = runtime::unary(runtime::UnaryOp::neg, picked.reshape({N}));
    return r == Reduction::None ? loss : r == Reduction::Sum ? sum(loss) : mean(loss);
}
}  // namespace

/// loss_i = logsumexp(x_i) - x_i[label_i];  dx = (softmax(x) - onehot) * dy_i  (/N for mean)
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Reduction r) {
    check_labels("cross_entropy", logits, labels);
    const int64_t N = logits.size(0), C = logits.size(1);
    Tensor lp;
    Tensor loss = cross_entropy_forward(logits, labels, r, lp);
    if (should_record({&logits}))
        record("cross_entropy", {&logits}, loss,
               [slp = save_intermediate(lp), sx = save(logits), labels, r, N, C](const Tensor& dy) {
                   const Tensor w = r == Reduction::None  ? dy.reshape({N, 1})
                                    : r == Reduction::Sum ? dy
                                                          : dy * (1.0 / double(N));
                   const Tensor p = GradMode::is_enabled() ? softmax(sx.get(), 1) : exp(slp.get());
                   const Tensor onehot =
                       scatter_add(ones({N, 1}, p.options()), {N, C}, 1, labels.reshape({N, 1}));
                   return Grads{(p - onehot) * w};
               });
    if (recipes_wanted())  // under a MemoryBudget: the loss again from the same logits
        recipe(loss, [labels, r](const std::vector<Tensor>& xs) {
            Tensor lp_again;
            return cross_entropy_forward(xs[0], labels, r, lp_again);
        });
    return loss;
}

/// l = max(x,0) - x*t + log(1 + e^-|x|);  dx = dy * (sigmoid(x) - t), dt = -dy * x
Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& t, Reduction r) {
    check_pair("binary_cross_entropy_with_logits", x, t);
    runtime::check_float_kernels("binary_cross_entropy_with_logits", x);
    const ComposedName named;
    Tensor l;
    {
        NoGradGuard g;
        l = relu(x) - x * t + softplus(-abs(x));
    }
    if (should_record({&x, &t}))
        record("binary_cross_entropy_with_logits", {&x, &t}, l,
               [sx = save(x), st = save(t)](const Tensor& dy, const Node& n) {
                   const Tensor xx = sx.get();
                   return Grads{needs(n, 0) ? dy * (sigmoid(xx) - st.get()) : Tensor(),
                                needs(n, 1) ? -dy * xx : Tensor()};
               });
    return named(reduce(l, r), "binary_cross_entropy_with_logits",
                 "BinaryCrossEntropyWithLogitsBackward0");
}

}  // namespace tg
