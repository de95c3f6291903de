// The margin losses and the rest of ATen's composed losses: cosine_embedding_loss,
// hinge_embedding_loss, margin_ranking_loss, multi_margin_loss, multilabel_margin_loss,
// multilabel_soft_margin_loss, soft_margin_loss, triplet_margin_loss and poisson_nll_loss, each
// written as ATen 1.13 composes it (or as its CPU kernel computes it: multi_margin_loss and
// multilabel_margin_loss count z > 0 strictly), so the gradients come from the parts.
#include <cmath>
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "ops/loss_checks.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

std::string shape_of(const Tensor& t) {
    return t.defined() ? shape_str(t.sizes()) : "undefined";
}
void defined(const char* op, std::initializer_list<const Tensor*> ts) {
    for (const Tensor* t : ts)
        if (!t->defined())
            throw value_error(std::string(op) + ": undefined tensor");
}
}  // namespace

namespace loss {
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps) {
    const int64_t dims = std::max(x1.dim(), x2.dim());
    return norm(x1 - x2 + eps, p, {dims - 1});
}
}  // namespace loss

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, Reduction r) {
    const char* op = "cosine_embedding_loss";
    defined(op, {&input1, &input2, &target});
    const int64_t td = target.dim();
    if (td > 1)
        throw shape_error(std::string(op) + ": 0-D or 1-D target expected, got " +
                          shape_of(target));
    if (input1.dim() != td + 1 || input2.dim() != td + 1)
        throw shape_error(std::string(op) + ": a " + std::to_string(td) + "-D target " +
                          shape_of(target) + " needs " + std::to_string(td + 1) +
                          "-D inputs, got " + shape_of(input1) + " and " + shape_of(input2));
    runtime::check_same(op, input1, input2);
    const double eps = 1e-12;  // ATen's EPSILON
    const Tensor prod = sum(input1 * input2, {td});
    const Tensor denom =
        sqrt((sum(input1 * input1, {td}) + eps) * (sum(input2 * input2, {td}) + eps));
    const Tensor cos = prod / denom;
    const Tensor zero = zeros_like(cos);
    const Tensor out = where(eq(target, 1.0), 1 - cos, zero) +
                       where(eq(target, -1.0), clamp_min(cos - margin, 0.0), zero);
    return loss::reduce(out, r);
}

Tensor hinge_embedding_loss(const Tensor& x, const Tensor& target, double margin, Reduction r) {
    defined("hinge_embedding_loss", {&x, &target});
    runtime::check_floating("hinge_embedding_loss", x);
    const Tensor zero = zeros_like(x);
    const Tensor out =
        where(ne(target, 1.0), clamp_min(margin - x, 0.0), zero) + where(ne(target, -1.0), x, zero);
    return loss::reduce(out, r);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin, Reduction r) {
    const char* op = "margin_ranking_loss";
    defined(op, {&input1, &input2, &target});
    if (input1.dim() != input2.dim() || input1.dim() != target.dim())
        throw shape_error(std::string(op) +
                          ": all inputs should have the same number of dims, "
                          "got input1 " +
                          shape_of(input1) + ", input2 " + shape_of(input2) + ", target " +
                          shape_of(target));
    return loss::reduce(clamp_min(-target * (input1 - input2) + margin, 0.0), r);
}

namespace {

/// x as [N,C] and its target as [N] (ATen's multi_margin / multilabel_margin accept [C] with a
/// 0-D or [1] target, and [N,C]); false when x had no batch dim.
bool batch_of(const char* op, const Tensor& x, const Tensor& target, bool same_shape, Tensor& x2,
              Tensor& t2) {
    defined(op, {&x, &target});
    runtime::check_floating(op, x);
    if (target.dtype() != kInt64)
        throw dtype_error(std::string(op) + ": target must be int64 class indices, got " +
                          dtype_name(target.dtype()) + " " + shape_of(target));
    if (target.device() != x.device())
        throw device_error(std::string(op) + ": input on " + x.device().str() + ", target on " +
                           target.device().str());
    if (x.dim() > 2 || (x.dim() >= 1 && x.size(-1) == 0))
        throw shape_error(std::string(op) + ": expected a non-empty vector or matrix [N,C], got " +
                          shape_of(x));
    const bool batched = x.dim() == 2;
    x2 = x.dim() == 2 ? x : x.reshape({1, x.numel()});
    const int64_t n = x2.size(0);
    const bool ok = same_shape ? target.numel() == x2.numel() && target.dim() <= 2
                               : target.dim() <= 1 && target.numel() == n;
    if (!ok)
        throw shape_error(std::string(op) + ": inconsistent target size " + shape_of(target) +
                          " for input " + shape_of(x));
    t2 = same_shape ? target.reshape(x2.sizes()) : target.reshape({n});
    return batched;
}

/// l [N] reduced; unbatched with reduction None: 0-D, as ATen's.
Tensor reduce_batch(const Tensor& l, Reduction r, bool keep_batch) {
    if (r == Reduction::None)
        return keep_batch ? l : l.reshape({});
    return loss::reduce(l, r);
}

}  // namespace

Tensor multi_margin_loss(const Tensor& x, const Tensor& target, Scalar p, Scalar margin,
                         const Tensor& weight, Reduction r) {
    const char* op = "multi_margin_loss";
    Tensor x2, t2;
    const bool batched = batch_of(op, x, target, false, x2, t2);
    if (p != 1 && p != 2)
        throw value_error(std::string(op) + ": only p 1 and 2 are supported, got " +
                          runtime::scalar_str(p));
    const int64_t C = x2.size(1);
    if (weight.defined()) {
        loss::not_differentiable(op, "weight", weight);
        runtime::check_same(op, x, weight);
        if (weight.dim() != 1 || weight.numel() != C)
            throw shape_error(std::string(op) + ": weight " + shape_of(weight) +
                              " must have one entry per class (" + std::to_string(C) + ")");
    }
    for (int64_t y : t2.to(kCPU).contiguous().to_vector<int64_t>())
        if (y < 0 || y >= C)
            throw value_error(std::string(op) + ": target " + std::to_string(y) +
                              " out of range [0, " + std::to_string(C) + ") for input " +
                              shape_of(x));
    const Tensor idx = t2.unsqueeze(1);
    const Tensor z = (x2 - gather(x2, 1, idx)) + margin;  // margin - x[y] + x[j]
    Tensor h = relu(z);                                   // z > 0 only, as ATen's kernel
    if (p == 2)
        h = h * h;
    const Tensor is_y = eq(one_hot(t2, C), 1.0);
    h = where(is_y, zeros({}, h.options()), h);
    if (weight.defined())
        h = h * index_select(weight, 0, t2).unsqueeze(1);
    return reduce_batch(sum(h, {1}) / double(C), r, batched || target.dim() == 1);
}

Tensor multilabel_margin_loss(const Tensor& x, const Tensor& target, Reduction r) {
    const char* op = "multilabel_margin_loss";
    Tensor x2, t2;
    const bool batched = batch_of(op, x, target, true, x2, t2);
    const int64_t N = x2.size(0), C = x2.size(1);
    // the classes of each sample: target's entries before its first -1 (host side)
    const std::vector<int64_t> tv = t2.to(kCPU).contiguous().to_vector<int64_t>();
    std::vector<int64_t> j_index, j_row;  // (sample, class) pairs, repeats kept, as ATen's loop
    std::vector<double> is_target(size_t(N * C), 0.0);
    int64_t jmax = 0;
    std::vector<std::vector<int64_t>> js(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t k = 0; k < C; ++k) {
            const int64_t y = tv[size_t(n * C + k)];
            if (y < -1 || y >= C)
                throw value_error(std::string(op) + ": target " + std::to_string(y) +
                                  " out of range [-1, " + std::to_string(C) + ") for input " +
                                  shape_of(x));
            if (y < 0)
                break;
            js[size_t(n)].push_back(y);
            is_target[size_t(n * C + y)] = 1;
        }
        jmax = std::max<int64_t>(jmax, int64_t(js[size_t(n)].size()));
    }
    Tensor l;
    if (jmax == 0) {
        l = sum(x2 * 0.0, {1});
    } else {
        // x[j] for each sample's target classes, padded to jmax (the pads weigh 0)
        std::vector<int64_t> cls(size_t(N * jmax), 0);
        std::vector<double> valid(size_t(N * jmax), 0.0);
        for (int64_t n = 0; n < N; ++n)
            for (size_t q = 0; q < js[size_t(n)].size(); ++q) {
                cls[size_t(n * jmax) + q] = js[size_t(n)][q];
                valid[size_t(n * jmax) + q] = 1;
            }
        const TensorOptions o = x2.options();
        const Tensor xj = gather(x2, 1, tensor(cls).reshape({N, jmax}).to(x.device()));
        const Tensor w = tensor(valid, TensorOptions(kFloat64))
                             .reshape({N, jmax, 1})
                             .to(o.dtype())
                             .to(x.device());
        const Tensor others = 1.0 - tensor(is_target, TensorOptions(kFloat64))
                                        .reshape({N, 1, C})
                                        .to(o.dtype())
                                        .to(x.device());
        // [N, jmax, C]: max(0, 1 - x[j] + x[k]) over the non-target k
        const Tensor z = relu(x2.unsqueeze(1) - xj.unsqueeze(2) + 1.0) * others * w;
        l = sum(z, {1, 2});
    }
    return reduce_batch(l / double(C), r, batched);
}

Tensor multilabel_soft_margin_loss(const Tensor& x, const Tensor& target, const Tensor& weight,
                                   Reduction r) {
    const char* op = "multilabel_soft_margin_loss";
    defined(op, {&x, &target});
    if (x.dim() == 0)
        throw shape_error(std::string(op) + ": input [] has no class dim");
    loss::check_pair(op, x, target);
    Tensor l = -(target * log_sigmoid(x) + (1 - target) * log_sigmoid(-x));
    if (weight.defined())
        l = l * weight;
    const int64_t class_dim = x.dim() - 1;
    l = sum(l, {class_dim}) / double(x.size(class_dim));
    return loss::reduce(l, r);
}

Tensor soft_margin_loss(const Tensor& x, const Tensor& target, Reduction r) {
    defined("soft_margin_loss", {&x, &target});
    loss::check_pair("soft_margin_loss", x, target);
    runtime::check_floating("soft_margin_loss", x);
    loss::not_differentiable("soft_margin_loss", "target", target);
    return loss::reduce(log1p(exp(-x * target)), r);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, Reduction r) {
    const char* op = "triplet_margin_loss";
    defined(op, {&anchor, &positive, &negative});
    if (anchor.dim() != positive.dim() || positive.dim() != negative.dim())
        throw shape_error(std::string(op) +
                          ": all inputs should have the same number of dims, "
                          "got " +
                          shape_of(anchor) + ", " + shape_of(positive) + " and " +
                          shape_of(negative));
    if (anchor.dim() == 0)
        throw shape_error(std::string(op) + ": inputs [] have no dim to measure distances along");
    const Tensor d_pos = loss::pairwise_distance(anchor, positive, p, eps);
    Tensor d_neg = loss::pairwise_distance(anchor, negative, p, eps);
    if (swap)
        d_neg = minimum(d_neg, loss::pairwise_distance(positive, negative, p, eps));
    return loss::reduce(clamp_min(d_pos - d_neg + margin, 0.0), r);
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, Reduction r) {
    const char* op = "poisson_nll_loss";
    defined(op, {&input, &target});
    runtime::check_floating(op, input);
    runtime::check_same(op, input, target);
    Tensor l = log_input ? exp(input) - target * input : input - target * log(input + eps);
    if (full) {
        const Tensor stirling = target * log(target) - target + 0.5 * log(target * (2 * M_PI));
        l = l + masked_fill(stirling, le(target, 1.0), 0.0);
    }
    return loss::reduce(l, r);
}

}  // namespace tg
