/// Bad-input catalogue (tests/bad_inputs.hpp): the losses of issue 30 (tapegrad/losses.hpp), their
/// modules (nn/loss_more.hpp, nn/adaptive.hpp) and F:: functions. The same tables are in
/// docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_losses
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/nn.hpp"

using tgtest::check_table;
namespace nn = tg::nn;
namespace F = tg::nn::functional;

namespace {
struct Fixtures {
    tg::Tensor x = tg::zeros({3, 4});                // float32 [N,C]
    tg::Tensor d = tg::zeros({3, 4}, tg::kFloat64);  // float64
    tg::Tensor y = tg::ones({3});                    // float32 ±1 targets
    tg::Tensor lab = tg::tensor(std::vector<int64_t>{0, 1, 3});
    tg::Tensor lp = tg::zeros({5, 2, 4});  // log_probs [T,N,C]
    tg::Tensor tgt = tg::tensor(std::vector<int64_t>{1, 2, 3, 1}).reshape({2, 2});
    tg::Tensor il = tg::tensor(std::vector<int64_t>{5, 4});
    tg::Tensor tl = tg::tensor(std::vector<int64_t>{2, 1});
    tg::Tensor wg = tg::ones({4}, tg::TensorOptions().requires_grad(true));
    tg::Tensor u;
    tg::Tensor i64(std::vector<int64_t> v) { return tg::tensor(v); }
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(loss_ops, Fixtures) {
    check_table(
        "More losses",
        {
            TG_BAD(tg::poisson_nll_loss(x, d), dtype_error, "poisson_nll_loss", "float64"),
            TG_BAD(tg::poisson_nll_loss(lab, lab), dtype_error, "poisson_nll_loss", "int64"),
            TG_BAD(tg::cosine_embedding_loss(x, x, tg::ones({3, 1})), shape_error,
                   "cosine_embedding_loss", "[3,1]"),
            TG_BAD(tg::cosine_embedding_loss(x, x, tg::ones({})), shape_error,
                   "cosine_embedding_loss", "[3,4]", "1-D inputs"),
            TG_BAD(tg::cosine_embedding_loss(x, d, y), dtype_error, "cosine_embedding_loss"),
            TG_BAD(tg::margin_ranking_loss(x, x, y), shape_error, "margin_ranking_loss", "[3,4]",
                   "[3]"),
            TG_BAD(tg::hinge_embedding_loss(lab, lab), dtype_error, "hinge_embedding_loss",
                   "int64"),
            TG_BAD(tg::multi_margin_loss(x, y), dtype_error, "multi_margin_loss", "int64",
                   "float32"),
            TG_BAD(tg::multi_margin_loss(x, i64({0, 1})), shape_error, "multi_margin_loss", "[2]",
                   "[3,4]"),
            TG_BAD(tg::multi_margin_loss(x, i64({0, 1, 4})), value_error, "multi_margin_loss",
                   "target 4", "[0, 4)"),
            TG_BAD(tg::multi_margin_loss(x, lab, 3), value_error, "multi_margin_loss", "p"),
            TG_BAD(tg::multi_margin_loss(x, lab, 1, 1, tg::ones({3})), shape_error,
                   "multi_margin_loss", "weight", "[3]"),
            TG_BAD(tg::multi_margin_loss(x, lab, 1, 1, wg), autograd_error, "multi_margin_loss",
                   "weight", "not differentiable"),
            TG_BAD(tg::multi_margin_loss(tg::zeros({2, 3, 4}), lab), shape_error,
                   "multi_margin_loss", "[2,3,4]"),
            TG_BAD(tg::multilabel_margin_loss(x, lab), shape_error, "multilabel_margin_loss", "[3]",
                   "[3,4]"),
            TG_BAD(tg::multilabel_margin_loss(x, tg::full({3, 4}, 7.0).to(tg::kInt64)), value_error,
                   "multilabel_margin_loss", "target 7"),
            TG_BAD(tg::multilabel_soft_margin_loss(x, tg::zeros({3, 5})), shape_error,
                   "multilabel_soft_margin_loss", "[3,5]"),
            TG_BAD(tg::soft_margin_loss(x, y), shape_error, "soft_margin_loss", "[3,4]", "[3]"),
            TG_BAD(tg::soft_margin_loss(x, x.detach().requires_grad_(true)), autograd_error,
                   "soft_margin_loss", "target"),
            TG_BAD(tg::triplet_margin_loss(x, x, y), shape_error, "triplet_margin_loss", "[3,4]",
                   "[3]"),
            TG_BAD(tg::binary_cross_entropy_with_logits(x, x, wg), autograd_error,
                   "binary_cross_entropy_with_logits", "weight"),
            TG_BAD(tg::binary_cross_entropy_with_logits(x, x, {}, tg::ones({5})), shape_error,
                   "binary_cross_entropy_with_logits", "pos_weight", "[5]"),
            TG_BAD(tg::nll_loss(x, lab, tg::kMean, wg), autograd_error, "nll_loss", "weight"),
            TG_BAD(tg::ctc_loss(tg::zeros({5, 2, 4, 1}), tgt, il, tl), shape_error, "ctc_loss",
                   "[T,N,C]", "[5,2,4,1]"),
            TG_BAD(tg::ctc_loss(lp, tgt, i64({5}), tl), shape_error, "ctc_loss", "batch 2"),
            TG_BAD(tg::ctc_loss(lp, tgt, i64({6, 4}), tl), value_error, "ctc_loss",
                   "input_lengths[0] = 6", "[1, 5]"),
            TG_BAD(tg::ctc_loss(lp, tgt, il, i64({3, 1})), shape_error, "ctc_loss", "targets",
                   "[2,2]"),
            TG_BAD(tg::ctc_loss(lp, tgt, il, tl, 4), value_error, "ctc_loss", "blank 4"),
            TG_BAD(tg::ctc_loss(lp, tgt.to(tg::kFloat32), il, tl), dtype_error, "ctc_loss",
                   "float32"),
            TG_BAD(tg::ctc_loss(lp, i64({1, 9, 3}), il, tl), value_error, "ctc_loss", "target 9"),
            TG_BAD(tg::ctc_loss(lp, tgt, il.to(tg::kFloat32), tl), dtype_error, "ctc_loss",
                   "input_lengths"),
            TG_BAD(tg::ctc_loss(lp.to(tg::kInt64), tgt, il, tl), dtype_error, "ctc_loss", "int64"),
        });
}

BOOST_FIXTURE_TEST_CASE(loss_modules, Fixtures) {
    check_table(
        "More loss modules and F:: losses",
        {
            TG_BAD(nn::MultiMarginLoss(nn::MultiMarginLossOptions().p(3)), value_error,
                   "MultiMarginLoss", "p 3"),
            TG_BAD(nn::KLDivLoss()(x, tg::zeros({3})), shape_error, "kl_div", "[3,4]", "[3]"),
            TG_BAD(nn::CTCLoss()(lp, tgt, il, i64({2})), shape_error, "ctc_loss", "target_lengths"),
            TG_BAD(nn::TripletMarginLoss()(x, x, u), value_error, "triplet_margin_loss",
                   "undefined"),
            TG_BAD(F::triplet_margin_with_distance_loss(x, u, x), value_error,
                   "triplet_margin_with_distance_loss", "undefined"),
            TG_BAD(nn::AdaptiveLogSoftmaxWithLoss(
                       nn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {4, 2})),
                   value_error, "AdaptiveLogSoftmaxWithLoss", "cutoffs"),
            TG_BAD(nn::AdaptiveLogSoftmaxWithLoss(
                       nn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {4, 10})),
                   value_error, "AdaptiveLogSoftmaxWithLoss", "n_classes-1"),
            TG_BAD(nn::AdaptiveLogSoftmaxWithLoss(nn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {})),
                   value_error, "AdaptiveLogSoftmaxWithLoss", "length"),
            TG_BAD(nn::AdaptiveLogSoftmaxWithLoss(
                       nn::AdaptiveLogSoftmaxWithLossOptions(4, 10, {4, 8})),
                   value_error, "AdaptiveLogSoftmaxWithLoss", "hidden size of 0"),
            TG_BAD(nn::AdaptiveLogSoftmaxWithLoss(
                       nn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {4}).div_value(0)),
                   value_error, "AdaptiveLogSoftmaxWithLoss", "div_value"),
            TG_BAD(nn::AdaptiveLogSoftmaxWithLoss(nn::AdaptiveLogSoftmaxWithLossOptions(4, 6, {2}))(
                       x, i64({0, 1, 6})),
                   value_error, "AdaptiveLogSoftmaxWithLoss", "[0, 5]", "[0, 6]"),
            TG_BAD(nn::AdaptiveLogSoftmaxWithLoss(nn::AdaptiveLogSoftmaxWithLossOptions(4, 6, {2}))(
                       x, i64({0, 1})),
                   shape_error, "AdaptiveLogSoftmaxWithLoss", "[3,4]", "[2]"),
            TG_BAD(nn::AdaptiveLogSoftmaxWithLoss(nn::AdaptiveLogSoftmaxWithLossOptions(4, 6, {2}))(
                       x, lab.reshape({3, 1})),
                   shape_error, "AdaptiveLogSoftmaxWithLoss", "[3,1]"),
            TG_BAD(nn::AdaptiveLogSoftmaxWithLoss(nn::AdaptiveLogSoftmaxWithLossOptions(4, 6, {2}))(
                       x, y),
                   dtype_error, "AdaptiveLogSoftmaxWithLoss", "int64"),
        });
}
