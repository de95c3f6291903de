#pragma once
/// Op table rows (op_cases.hpp says how to add one): mse, l1, nll, cross_entropy,
/// binary_cross_entropy_with_logits, and the rest of ATen's losses (poisson_nll, the margin
/// losses, triplet_margin, ctc). Included by op_cases.hpp.

namespace opcases {

inline std::vector<OpCase> loss_cases() {
    const tg::Tensor target = tgtest::make_const({4, 3}, 77);
    const tg::Tensor prob = tgtest::make_const({4, 3}, 78, 0.1, 0.9);
    const tg::Tensor hard = tg::gt(tgtest::make_const({4, 3}, 79), 0.0).to(tg::kFloat64);
    const tg::Tensor lab = labels({0, 2, 1, 2});
    const tg::Tensor no_labels = labels({});  // an empty batch
    const tg::Tensor lab_ignored = labels({0, -100, 1, 2});
    const tg::Tensor lab_ignore1 = labels({0, 2, 1, 1});
    const tg::Tensor class_w = tgtest::make_const({3}, 80, 0.5, 2.0);
    using R = tg::Reduction;
    const tg::Tensor pm = tgtest::make_const({4, 3}, 83);  // ±1 targets
    const tg::Tensor pm1 = tg::where(tg::gt(pm, 0.0), tg::ones_like(pm), -tg::ones_like(pm));
    const tg::Tensor pm_rows = tg::narrow(pm1, 1, 0, 1).squeeze(1);  // [4]
    const tg::Tensor counts = tg::floor(tgtest::make_const({4, 3}, 84, 0.0, 4.0));
    const tg::Tensor cls = labels({2, 0, 1, 2});
    const tg::Tensor multi = labels({2, 0, -1, 1, -1, 0, 0, 1, 2, -1, 0, 0}).reshape({4, 3});
    const tg::Tensor ctc_targets = labels({1, 2, 2, 3, 1, 0}).reshape({2, 3});
    const std::vector<int64_t> ctc_il{5, 4}, ctc_tl{3, 2};
    return {
        {"mse_mean", {U({4, 3})}, F(tg::mse_loss(x[0], on(target, x[0])))},
        {"mse_sum", {U({4, 3})}, F(tg::mse_loss(x[0], on(target, x[0]), R::Sum))},
        {"mse_none", {U({4, 3})}, F(tg::mse_loss(x[0], on(target, x[0]), R::None))},
        {"mse_both_inputs", {U({4, 3}), UT({4, 3})}, F(tg::mse_loss(x[0], x[1]))},
        {"l1_mean", {U({4, 3})}, F(tg::l1_loss(x[0], on(target, x[0])))},
        {"l1_sum", {U({4, 3})}, F(tg::l1_loss(x[0], on(target, x[0]), R::Sum))},
        {"l1_none", {U({4, 3})}, F(tg::l1_loss(x[0], on(target, x[0]), R::None))},
        {"l1_both_inputs", {U({4, 3}), UT({4, 3})}, F(tg::l1_loss(x[0], x[1], R::Sum))},
        {"nll_mean", {U({4, 3})}, F(tg::nll_loss(x[0], on(lab, x[0])))},
        {"nll_sum", {U({4, 3})}, F(tg::nll_loss(x[0], on(lab, x[0]), R::Sum))},
        {"nll_none", {U({4, 3})}, F(tg::nll_loss(x[0], on(lab, x[0]), R::None))},
        {"nll_of_log_softmax",
         {U({4, 3})},
         F(tg::nll_loss(tg::log_softmax(x[0], 1), on(lab, x[0])))},
        {"cross_entropy_mean", {U({4, 3})}, F(tg::cross_entropy(x[0] * 2.0, on(lab, x[0])))},
        {"cross_entropy_sum", {U({4, 3})}, F(tg::cross_entropy(x[0], on(lab, x[0]), R::Sum))},
        {"cross_entropy_none", {U({4, 3})}, F(tg::cross_entropy(x[0], on(lab, x[0]), R::None))},
        {"cross_entropy_transposed", {UT({4, 3})}, F(tg::cross_entropy(x[0], on(lab, x[0])))},
        {"cross_entropy_large_logits",
         {U({4, 3})},
         F(tg::cross_entropy(x[0] + 800.0, on(lab, x[0])))},
        {"cross_entropy_after_linear",
         {U({4, 5}), U({3, 5}), U({3})},
         F(tg::cross_entropy(tg::linear(x[0], x[1], x[2]), on(lab, x[0])))},
        {"bce_logits_mean",
         {U({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0] * 3.0, on(prob, x[0])))},
        {"bce_logits_sum",
         {U({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0], on(hard, x[0]), R::Sum))},
        {"bce_logits_none",
         {U({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0], on(prob, x[0]), R::None))},
        {"bce_logits_large",
         {NZ({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0] * 40.0, on(hard, x[0])))},
        {"bce_logits_strided",
         {US({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0], on(prob, x[0])))},
        {"bce_logits_target_grad",
         {U({4, 3}), U({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0] * 4.0, tg::sigmoid(x[1])))},
        // zero-size dims (op_cases.hpp): an empty batch has loss 0 (sum) and no gradient
        {"mse_sum_empty", {U({0, 3}), U({0, 3})}, F(tg::mse_loss(x[0], x[1], R::Sum))},
        {"mse_none_empty", {U({2, 0}), UT({2, 0})}, F(tg::mse_loss(x[0], x[1], R::None))},
        {"l1_sum_empty", {U({0, 3}), U({0, 3})}, F(tg::l1_loss(x[0], x[1], R::Sum))},
        {"nll_sum_empty", {U({0, 3})}, F(tg::nll_loss(x[0], on(no_labels, x[0]), R::Sum))},
        {"cross_entropy_sum_empty",
         {U({0, 3})},
         F(tg::cross_entropy(x[0], on(no_labels, x[0]), R::Sum))},
        {"cross_entropy_none_empty",
         {UT({0, 3})},
         F(tg::cross_entropy(x[0], on(no_labels, x[0]), R::None))},
        {"bce_logits_sum_empty",
         {U({0, 3}), U({0, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0], tg::sigmoid(x[1]), R::Sum))},
        // LibTorch's options and losses (issue 16)
        {"nll_weight_ignore",
         {U({4, 3})},
         F(tg::nll_loss(x[0], on(lab_ignored, x[0]), R::Mean, on(class_w, x[0])))},
        {"nll_ignore_index_1",
         {U({4, 3})},
         F(tg::nll_loss(x[0], on(lab_ignore1, x[0]), R::Sum, tg::Tensor(), 1))},
        {"cross_entropy_weight",
         {U({4, 3})},
         F(tg::cross_entropy(x[0] * 2.0, on(lab, x[0]), R::Mean, on(class_w, x[0])))},
        {"cross_entropy_ignore_smooth",
         {U({4, 3})},
         F(tg::cross_entropy(x[0], on(lab_ignored, x[0]), R::Mean, tg::Tensor(), -100, 0.2))},
        {"cross_entropy_all_options",
         {U({4, 3})},
         F(tg::cross_entropy(x[0] * 3.0, on(lab_ignored, x[0]), R::Mean, on(class_w, x[0]), -100,
                             0.1))},
        {"cross_entropy_smooth_sum_none",
         {U({4, 3})},
         F(tg::cross_entropy(x[0], on(lab, x[0]), R::Sum, on(class_w, x[0]), -100, 0.3) +
           tg::cross_entropy(x[0], on(lab_ignored, x[0]), R::None, tg::Tensor(), -100, 0.3).sum())},
        {"smooth_l1", {U({4, 3})}, F(tg::smooth_l1_loss(x[0], on(target, x[0]), R::Mean, 0.5))},
        {"smooth_l1_beta0_none",
         {U({4, 3}), UT({4, 3})},
         F(tg::smooth_l1_loss(x[0], x[1], R::None, 0.0))},
        {"huber", {U({4, 3})}, F(tg::huber_loss(x[0] * 2.0, on(target, x[0]), R::Sum, 0.7))},
        {"kl_div", {U({4, 3}), Q({4, 3})}, F(tg::kl_div(tg::log_softmax(x[0], 1), x[1], R::Sum))},
        {"kl_div_zero_target", {U({4, 3})}, F(tg::kl_div(x[0], on(hard, x[0]), R::Mean))},
        {"kl_div_log_target", {U({4, 3}), U({4, 3})}, F(tg::kl_div(x[0], x[1], R::None, true))},
        {"binary_cross_entropy",
         {Q({4, 3}), UT({4, 3})},
         F(tg::binary_cross_entropy(x[0], x[1] * 0.5 + 0.5))},
        {"binary_cross_entropy_weight",
         {Q({4, 3})},
         F(tg::binary_cross_entropy(x[0], on(hard, x[0]), on(prob, x[0]), R::Sum))},
        // the rest of ATen's losses (issue 30)
        {"bce_logits_weight_pos_weight",
         {U({4, 3}), U({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0] * 3.0, tg::sigmoid(x[1]), on(class_w, x[0]),
                                                on(class_w, x[0]) * 0.7))},
        {"poisson_nll_log_input", {U({4, 3}), P({4, 3})}, F(tg::poisson_nll_loss(x[0], x[1]))},
        {"poisson_nll_full",
         {P({4, 3})},
         F(tg::poisson_nll_loss(x[0], on(counts, x[0]), false, true, 1e-8, R::Sum))},
        {"cosine_embedding",
         {U({4, 3}), UT({4, 3})},
         F(tg::cosine_embedding_loss(x[0], x[1], on(pm_rows, x[0]), 0.1))},
        {"hinge_embedding",
         {U({4, 3})},
         F(tg::hinge_embedding_loss(x[0] * 2.0, on(pm1, x[0]), 0.6, R::Sum))},
        {"margin_ranking",
         {U({4, 3}), U({4, 3})},
         F(tg::margin_ranking_loss(x[0], x[1], on(pm1, x[0]), 0.2))},
        {"multi_margin", {U({4, 3})}, F(tg::multi_margin_loss(x[0], on(cls, x[0])))},
        {"multi_margin_p2_weight",
         {US({4, 3})},
         F(tg::multi_margin_loss(x[0] * 2.0, on(cls, x[0]), 2, 0.7, on(class_w, x[0]), R::None))},
        {"multilabel_margin",
         {U({4, 3})},
         F(tg::multilabel_margin_loss(x[0] * 2.0, on(multi, x[0])))},
        {"multilabel_soft_margin",
         {U({4, 3}), P({3})},
         F(tg::multilabel_soft_margin_loss(x[0] * 2.0, on(hard, x[0]), x[1]))},
        {"soft_margin", {U({4, 3})}, F(tg::soft_margin_loss(x[0] * 3.0, on(pm1, x[0])))},
        {"triplet_margin",
         {U({4, 3}), U({4, 3}), U({4, 3})},
         F(tg::triplet_margin_loss(x[0], x[1], x[2], 1.5))},
        {"triplet_margin_p1_swap",
         {U({4, 3}), UT({4, 3}), U({4, 3})},
         F(tg::triplet_margin_loss(x[0], x[1], x[2], 0.9, 1, 1e-6, true, R::None))},
        // CTC (double backward throws, as LibTorch's): through a log_softmax, the finite
        // differences see its gradient; in the log-probabilities, its formula is not theirs
        {"ctc_through_log_softmax",
         {U({5, 2, 4})},
         F(tg::ctc_loss(tg::log_softmax(x[0] * 2.0, 2), on(ctc_targets, x[0]), ctc_il, ctc_tl)),
         kNoGG},
        {"ctc_sum_blank3",
         {UT({5, 2, 4})},
         F(tg::ctc_loss(tg::log_softmax(x[0], 2), on(ctc_targets, x[0]), ctc_il, ctc_tl, 3,
                        R::Sum)),
         kNoGG},
        {"ctc_log_probs",
         {U({5, 2, 4})},
         F(tg::ctc_loss(x[0] - 1.5, on(ctc_targets, x[0]), ctc_il, ctc_tl, 0, R::None)),
         kNoFD | kNoGG},
    };
}

}  // namespace opcases
