#pragma once
/// Op table rows (op_cases.hpp says how to add one) of the ops behind the rest of torch::nn
/// (issue 30): bilinear, cosine_similarity, pairwise_distance (p = 2, 1, 3, 1.5, 0.5, ±inf, 0),
/// pdist, alpha_dropout and feature_alpha_dropout (masks from a fixed generator), embedding_bag
/// (sum, mean, max, per-sample weights, padding, empty bags). Included by
/// op_cases.hpp. tests/test_nn_distance.cpp and test_nn_dropout.cpp compare the same ops with
/// LibTorch's values, at zero distances and ties too (which finite differences cannot check).

namespace opcases {

inline std::vector<OpCase> nn_more_cases() {
    const double inf = std::numeric_limits<double>::infinity();
    const tg::Tensor bag_idx = labels({4, 0, 2, 2, 5, 1, 0, 3, 2}), bag_off = labels({0, 3, 3, 6});
    auto bag = [bag_idx, bag_off](const tg::Tensor& w, int64_t mode, const tg::Tensor& psw = {},
                                  std::optional<int64_t> padding = std::nullopt) {
        return tg::embedding_bag(w, on(bag_idx, w), on(bag_off, w), false, mode, false, psw, false,
                                 padding);
    };
    return {
        {"bilinear",
         {U({4, 3}), U({4, 2}), U({5, 3, 2}), U({5})},
         F(tg::bilinear(x[0], x[1], x[2], x[3]))},
        {"bilinear_no_bias_3d",
         {UT({2, 3, 2}), U({2, 3, 4}), U({2, 2, 4})},
         F(tg::bilinear(x[0], x[1], x[2]))},
        {"bilinear_1d",
         {U({3}), US({2}), U({4, 3, 2}), U({4})},
         F(tg::bilinear(x[0], x[1], x[2], x[3]))},
        {"bilinear_empty_batch",
         {U({0, 3}), U({0, 2}), U({2, 3, 2}), U({2})},
         F(tg::bilinear(x[0], x[1], x[2], x[3]))},
        {"cosine_similarity", {U({3, 4}), U({3, 4})}, F(tg::cosine_similarity(x[0], x[1]))},
        {"cosine_similarity_bcast_dim0",
         {UT({4, 3}), U({4, 1})},
         F(tg::cosine_similarity(x[0], x[1], 0))},
        {"cosine_similarity_3d_last",
         {U({2, 1, 5}), U({3, 5})},
         F(tg::cosine_similarity(x[0], x[1], -1, 1e-6))},
        {"pairwise_distance", {U({3, 4}), U({3, 4})}, F(tg::pairwise_distance(x[0], x[1]))},
        {"pairwise_distance_p1", {U({3, 4}), UT({3, 4})}, F(tg::pairwise_distance(x[0], x[1], 1))},
        {"pairwise_distance_p3_keepdim",
         {U({2, 3, 4}), U({4})},
         F(tg::pairwise_distance(x[0], x[1], 3, 1e-6, true))},
        {"pairwise_distance_p1.5",
         {US({3, 4}), U({3, 4})},
         F(tg::pairwise_distance(x[0], x[1], 1.5))},
        {"pairwise_distance_p0.5",
         {U({2, 5}), U({2, 5})},
         F(tg::pairwise_distance(x[0], x[1], 0.5))},
        {"pairwise_distance_inf",
         {U({3, 4}), U({3, 4})},
         F(tg::pairwise_distance(x[0], x[1], inf)),
         kNoGG},
        {"pairwise_distance_minus_inf",
         {U({3, 4}), U({3, 4})},
         F(tg::pairwise_distance(x[0], x[1], -inf)),
         kNoGG},
        {"pairwise_distance_p0", {U({3, 4}), U({3, 4})}, F(tg::pairwise_distance(x[0], x[1], 0))},
        {"pairwise_distance_1d", {U({5}), U({5})}, F(tg::pairwise_distance(x[0], x[1]))},
        {"pairwise_distance_empty", {U({0, 4}), U({0, 4})}, F(tg::pairwise_distance(x[0], x[1]))},
        {"pdist", {U({4, 3})}, F(tg::pdist(x[0]))},
        {"pdist_p1", {UT({4, 3})}, F(tg::pdist(x[0], 1))},
        {"pdist_p3", {US({5, 2})}, F(tg::pdist(x[0], 3))},
        {"pdist_p1.5", {U({3, 4})}, F(tg::pdist(x[0], 1.5))},
        {"pdist_inf", {U({4, 3})}, F(tg::pdist(x[0], inf)), kNoGG},
        {"pdist_one_row", {U({1, 3})}, F(tg::pdist(x[0]))},
        {"pdist_empty_features", {U({3, 0})}, F(tg::pdist(x[0]))},
        {"alpha_dropout", {U({3, 4})}, F(tg::alpha_dropout(x[0], 0.3, true, tg::Generator(5)))},
        {"alpha_dropout_strided",
         {US({2, 5})},
         F(tg::alpha_dropout(x[0], 0.6, true, tg::Generator(6)))},
        {"feature_alpha_dropout",
         {U({2, 3, 2, 2})},
         F(tg::feature_alpha_dropout(x[0], 0.4, true, tg::Generator(7)))},
        {"feature_alpha_dropout_transposed",
         {UT({3, 4})},
         F(tg::feature_alpha_dropout(x[0], 0.5, true, tg::Generator(8)))},
        {"alpha_dropout_empty", {U({0, 3})}, F(tg::alpha_dropout(x[0], 0.3, true))},
        {"embedding_bag_sum", {U({6, 3})}, F(bag(x[0], 0))},
        {"embedding_bag_mean_padding", {UT({6, 3})}, F(bag(x[0], 1, {}, 2))},
        {"embedding_bag_max", {U({6, 3})}, F(bag(x[0], 2)), kNoGG},
        {"embedding_bag_weighted", {U({6, 3}), U({9})}, F(bag(x[0], 0, x[1]))},
        {"embedding_bag_2d_rows",
         {US({6, 4})},
         F(tg::nn::functional::embedding_bag(on(bag_idx.reshape({3, 3}), x[0]), x[0]))},
    };
}

}  // namespace opcases
