#pragma once
/// Op table rows (op_cases.hpp says how to add one): views and copies of shape (reshape, squeeze,
/// expand, cat, narrow, transpose, ...) and the index ops (index_select, gather, index_add,
/// scatter_add). Included by op_cases.hpp.

namespace opcases {

inline std::vector<OpCase> shape_cases() {
    const tg::Tensor idx_rows = labels({2, 0, 2});  // repeated index: gradients add
    const tg::Tensor idx_gather = index_of({3, 0, 1, 1, 2, 2}, {3, 2});
    const tg::Tensor idx_gather0 = index_of({2, 0, 1, 0}, {1, 4});
    const tg::Tensor idx_add = labels({1, 1, 0});
    const tg::Tensor idx_none = labels({});  // an empty index
    const tg::Tensor fill_mask =
        index_of({1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1}, {3, 4}).to(tg::kBool);
    const tg::Tensor row_mask = index_of({0, 1, 1, 0}, {4}).to(tg::kBool);
    return {
        {"reshape", {U({3, 4})}, F(tg::reshape(x[0], {2, 6}))},
        {"reshape_method_infer", {U({3, 4})}, F(x[0].reshape({4, -1}))},
        {"reshape_transposed_copy", {UT({3, 4})}, F(x[0].reshape({12}))},
        {"view", {U({3, 4})}, F(tg::view(x[0], {2, 6})), kNoTransposedStorage},
        {"view_method", {U({2, 3, 4})}, F(x[0].view({6, 4})), kNoTransposedStorage},
        {"flatten_all", {U({2, 3, 4})}, F(tg::flatten(x[0]))},
        {"flatten_from1", {U({2, 3, 4})}, F(x[0].flatten(1))},
        {"flatten_transposed", {UT({3, 4})}, F(tg::flatten(x[0]))},
        {"squeeze_all", {U({3, 1, 4})}, F(tg::squeeze(x[0]))},
        {"squeeze_dim", {U({3, 1, 4})}, F(tg::squeeze(x[0], 1))},
        {"squeeze_method", {U({1, 4})}, F(x[0].squeeze(0))},
        {"unsqueeze", {U({3, 4})}, F(tg::unsqueeze(x[0], 1))},
        {"inplace_views",
         {U({3, 4}), UT({1, 2, 3})},
         F(inplace_on(x[0] * 1.0,
                      [](tg::Tensor& t) { t.unsqueeze_(-1).transpose_(0, 2).squeeze_(0).t_(); }) +
           inplace_on(x[1] * 2.0, [](tg::Tensor& t) { t.squeeze_().t_(); }).sum(1, true) *
               inplace_on(x[0] * 1.0, [](tg::Tensor& t) { t.t_().squeeze_(1); }).t())},
        {"unsqueeze_neg", {U({3, 4})}, F(x[0].unsqueeze(-1))},
        {"expand", {U({3, 1})}, F(tg::expand(x[0], {2, 3, 4}))},
        {"expand_method", {U({1, 4})}, F(x[0].expand({3, 4}) * 2.0)},
        {"cat_dim0", {U({2, 3}), U({4, 3})}, F(tg::cat({x[0], x[1]}, 0))},
        {"cat_dim1", {U({2, 3}), U({2, 1}), U({2, 2})}, F(tg::cat({x[0], x[1], x[2]}, 1))},
        {"cat_neg_dim_transposed", {UT({3, 2}), U({3, 4})}, F(tg::cat({x[0], x[1]}, -1))},
        {"cat_same_input", {U({2, 3})}, F(tg::cat({x[0], x[0]}, 0))},
        {"stack_dim0", {U({2, 3}), U({2, 3})}, F(tg::stack({x[0], x[1]}, 0))},
        {"stack_dim_last", {U({2, 3}), UT({2, 3}), U({2, 3})}, F(tg::stack({x[0], x[1], x[2]}, 2))},
        {"narrow", {U({4, 5})}, F(tg::narrow(x[0], 1, 1, 3))},
        {"narrow_method_dim0", {U({4, 5})}, F(x[0].narrow(0, 2, 2))},
        {"narrow_of_narrow", {U({4, 6})}, F(x[0].narrow(1, 1, 4).narrow(0, 1, 2))},
        {"narrow_transposed", {UT({4, 5})}, F(tg::narrow(x[0], 0, 1, 2))},
        {"index_select_dim0", {U({4, 3})}, F(tg::index_select(x[0], 0, on(idx_rows, x[0])))},
        {"index_select_dim1", {U({3, 4})}, F(tg::index_select(x[0], 1, on(idx_rows, x[0])))},
        {"index_select_transposed", {UT({4, 3})}, F(tg::index_select(x[0], 0, on(idx_rows, x[0])))},
        {"gather_dim1", {U({3, 4})}, F(tg::gather(x[0], 1, on(idx_gather, x[0])))},
        {"gather_dim0", {U({3, 4})}, F(tg::gather(x[0], 0, on(idx_gather0, x[0])))},
        {"gather_transposed", {UT({3, 4})}, F(tg::gather(x[0], 1, on(idx_gather, x[0])))},
        {"narrow_scatter", {U({2, 3})}, F(tg::narrow_scatter(x[0], {5, 3}, 0, 2))},
        {"narrow_scatter_dim1", {U({2, 3})}, F(tg::narrow_scatter(x[0], {2, 6}, 1, 1))},
        {"index_add", {U({3, 4})}, F(tg::index_add(x[0], {2, 4}, 0, on(idx_add, x[0])))},
        {"scatter_add", {U({3, 2})}, F(tg::scatter_add(x[0], {3, 4}, 1, on(idx_gather, x[0])))},
        // chunk, split, unbind, repeat, tile, flip, roll, movedim (tapegrad/split_ops.hpp)
        {"chunk_split_unbind", {U({3, 5})}, F(([&] {
             const auto c = tg::chunk(x[0], 2, 1);
             const auto s = x[0].split({1, 2}, 0);
             const auto u = x[0].unbind(1);
             const auto p = tg::split(x[0], 2, 1);
             return tg::cat({c[0].sum(1) * 2.0, c[1].sum(1), s[0].reshape({-1}) * 3.0, s[1].sum(0),
                             u[0] * u[4], p[2].reshape({-1})},
                            0);
         }()))},
        {"chunk_empty",
         {U({0, 4})},
         F(tg::cat(tg::chunk(x[0], 3, 0), 0) + tg::cat(x[0].chunk(2, 1), 1))},
        {"repeat_tile", {U({2, 3})}, F(x[0].repeat({2, 1, 2}) * 1.5 + tg::tile(x[0], {2}))},
        {"flip_roll",
         {UT({3, 4})},
         F(tg::flip(x[0], {0, 1}) * 2.0 + x[0].roll({1, -3}, {0, 1}) + tg::roll(x[0], {5}))},
        {"movedim",
         {U({2, 3, 4})},
         F(tg::movedim(x[0], {0, 2}, {2, 0}) + x[0].movedim(1, 0).permute({2, 0, 1}))},
        // LibTorch's forms on a tensor self (tapegrad/inplace_ops.hpp) and their in-place methods
        {"index_add_self",
         {U({3, 4}), U({3, 4})},
         F(tg::index_add(x[0], 0, on(idx_add, x[0]), x[1], 0.5))},
        {"index_fill", {U({3, 4})}, F(x[0].index_fill(1, on(labels({3, 0, 3}), x[0]), -2.0))},
        {"index_copy",
         {U({3, 4}), U({3, 2})},
         F(tg::index_copy(x[0], 1, on(labels({3, 1}), x[0]), x[1]))},
        {"scatter_src",
         {U({3, 4}), U({3, 3})},
         F(tg::scatter(x[0], 1, on(index_of({0, 2, 3, 1, 2, 0}, {3, 2}), x[0]), x[1]))},
        {"scatter_value", {U({3, 4})}, F(x[0].scatter(1, on(idx_gather, x[0]), 1.5))},
        {"scatter_add_self",
         {U({3, 4}), U({3, 2})},
         F(x[0].scatter_add(1, on(idx_gather, x[0]), x[1]))},
        {"index_writes_inplace",
         {U({3, 4}), U({3, 4}), U({3, 2})},
         F(inplace_on(x[0] * 1.0,
                      [&](tg::Tensor& t) {
                          t.index_add_(0, on(idx_add, x[0]), x[1])
                              .index_fill_(1, on(labels({2}), x[0]), 0.5);
                          t.index_copy_(1, on(labels({0, 3}), x[0]), x[2]);
                          t.scatter_(1, on(index_of({1, 2, 0, 3, 3, 0}, {3, 2}), x[0]), x[2] * 2.0);
                          t.scatter_(0, on(index_of({0, 2}, {1, 2}), x[0]), -1.0);
                          t.scatter_add_(1, on(idx_gather, x[0]), x[2]);
                      }))},
        {"t", {U({3, 4})}, F(tg::t(x[0]))},
        {"t_method_then_mul", {U({3, 4}), U({4, 3})}, F(x[0].t() * x[1])},
        {"transpose", {U({2, 3, 4})}, F(tg::transpose(x[0], 0, 2))},
        {"transpose_method_neg", {U({2, 3, 4})}, F(x[0].transpose(-1, -2))},
        {"permute", {U({2, 3, 4})}, F(tg::permute(x[0], {2, 0, 1}))},
        {"permute_method", {U({2, 3, 4})}, F(x[0].permute({1, 2, 0}) * 3.0)},
        {"contiguous", {UT({3, 4})}, F(x[0].contiguous())},
        {"clone", {U({3, 4})}, F(x[0].clone())},
        {"to_float64", {U({3, 4})}, F(x[0].to(tg::kFloat64) * 2.0), kNoF32},  // output always f64
        {"views_chain",
         {U({2, 3, 4})},
         F(x[0].permute({2, 0, 1}).narrow(0, 1, 2).reshape({2, 6}).t())},
        // zero-size dims (op_cases.hpp)
        {"reshape_empty", {U({0, 4})}, F(x[0].reshape({4, 0}) + x[0].reshape({-1, 2}).sum())},
        {"view_empty", {U({2, 0, 3})}, F(tg::view(x[0], {0, 6})), kNoTransposedStorage},
        {"flatten_squeeze_empty",
         {U({2, 0, 1, 3})},
         F(tg::flatten(x[0], 1) * 2.0 + tg::squeeze(x[0]).unsqueeze(1).reshape({2, 0}))},
        {"expand_empty", {U({0, 1})}, F(x[0].expand({2, 0, 4}))},
        {"expand_to_empty", {U({3, 1})}, F(x[0].expand({3, 0}) + x[0].expand({0, 3, 1}).sum())},
        {"cat_empty", {U({2, 3}), U({0, 3}), UT({2, 3})}, F(tg::cat({x[0], x[1], x[2]}, 0))},
        {"cat_all_empty", {U({0, 3}), U({0, 2})}, F(tg::cat({x[0], x[1]}, 1))},
        {"stack_empty", {U({0, 3}), U({0, 3})}, F(tg::stack({x[0], x[1]}, 1))},
        {"narrow_to_empty", {U({4, 5})}, F(tg::narrow(x[0], 1, 5, 0) + x[0].narrow(0, 1, 0).sum())},
        {"narrow_of_empty", {U({0, 5})}, F(tg::narrow(x[0], 1, 1, 3))},
        {"index_select_empty_index", {U({4, 3})}, F(tg::index_select(x[0], 0, on(idx_none, x[0])))},
        {"index_select_empty_dim", {U({3, 0})}, F(tg::index_select(x[0], 0, on(idx_rows, x[0])))},
        {"gather_empty_index",
         {U({3, 4})},
         F(tg::gather(x[0], 1, on(idx_none.reshape({1, 0}).expand({3, 0}), x[0])))},
        {"index_add_empty", {U({0, 4})}, F(tg::index_add(x[0], {2, 4}, 0, on(idx_none, x[0])))},
        {"scatter_add_empty",
         {U({0, 2})},
         F(tg::scatter_add(x[0], {0, 4}, 1, on(idx_none.reshape({0, 1}).expand({0, 2}), x[0])))},
        {"narrow_scatter_empty", {U({0, 3})}, F(tg::narrow_scatter(x[0], {5, 3}, 0, 2))},
        {"transpose_permute_empty",
         {UT({0, 3})},
         F(x[0].t().contiguous() + tg::permute(x[0].unsqueeze(2), {1, 0, 2}).squeeze(2))},
        {"clone_to_empty",
         {U({3, 0})},
         F(x[0].clone().to(tg::kFloat64) * 2.0 + x[0].to(tg::kFloat64)),
         kNoF32},
        // LibTorch's spellings (issue 16)
        {"expand_as", {U({3, 1}), U({3, 4})}, F(tg::expand_as(x[0], x[1]) * x[1])},
        {"view_as_reshape_as",
         {U({3, 4}), U({2, 6})},
         F(x[0].view_as(x[1]) + x[0].reshape_as(x[1]) * x[1]),
         kNoTransposedStorage},
        {"type_as", {U({3, 4}), U({2})}, F(x[0].type_as(x[1]) * 2.0 + x[1].sum())},
        {"masked_fill", {U({3, 4})}, F(tg::masked_fill(x[0], on(fill_mask, x[0]), -2.0))},
        {"masked_fill_broadcast", {UT({3, 4})}, F(x[0].masked_fill(on(row_mask, x[0]), 0.5) * 3.0)},
        {"triu", {U({4, 5})}, F(tg::triu(x[0], 1))},
        {"tril_batched", {U({2, 3, 4})}, F(x[0].tril(-1))},
        {"triu_method", {UT({4, 4})}, F(x[0].triu() + tg::tril(x[0], 2))},
        {"triu_empty", {U({0, 3})}, F(tg::triu(x[0]))},
        {"select_and_subscript", {U({3, 4, 5})}, F(x[0][1] * 2.0 + x[0].select(2, -1).sum())},
        {"slice_step", {U({4, 6})}, F(tg::slice(x[0], 1, 1, std::nullopt, 2))},
        {"slice_negative_ends", {UT({5, 4})}, F(x[0].slice(0, -4, -1) * 3.0)},
        {"index_mixed",
         {UT({3, 4, 5})},
         F(x[0].index({tg::indexing::Slice(), tg::indexing::None, 1,
                       tg::indexing::Slice(tg::indexing::None, -1)}))},
        {"index_ellipsis_step",
         {U({2, 3, 6})},
         F(x[0].index({tg::indexing::Ellipsis, tg::indexing::Slice(1, tg::indexing::None, 2)}))},
        {"index_tensor", {U({3, 4})}, F(x[0].index({tg::indexing::Slice(), on(idx_rows, x[0])}))},
        // advanced indexing: pairs broadcast together (repeats add), a bool mask, 2-D indices
        {"index_pairs",
         {U({3, 4})},
         F(x[0].index({on(idx_rows, x[0]), on(labels({1, 3, 1}), x[0])}) * 2.0)},
        {"index_mask", {U({3, 4})}, F(x[0].index({on(fill_mask, x[0])}))},
        {"index_2d", {U({4, 3})}, F(x[0].index({on(idx_gather, x[0])}))},
        {"index_separated",  // a slice between: the broadcast dims go first
         {U({3, 2, 4})},
         F(x[0].index({on(idx_rows, x[0]), tg::indexing::Slice(), on(labels({1, 3, 1}), x[0])}))},
        // index_put_ through a mask and through a step: a copy written into x (Note [Putting
        // through a copy]); both the kept elements and the values get gradients
        {"index_put_mask", {U({3, 4}), U({3})}, F([&] {
             tg::Tensor y = x[0] * 1.0;
             y.index_put_({tg::indexing::Slice(), on(row_mask, x[0]) > 0.5},
                          x[1].reshape({3, 1}).expand({3, 2}));
             return y;
         }())},
        {"index_put_step", {U({4, 3}), U({3})}, F([&] {
             tg::Tensor y = x[0] * 1.0;
             y.index_put_({tg::indexing::Slice(tg::indexing::None, tg::indexing::None, 2)}, x[1]);
             return y;
         }())},
        {"index_put_accumulate", {U({4, 3}), U({3})}, F([&] {
             tg::Tensor y = x[0] * 1.0;
             const tg::Tensor rows = tg::tensor(std::vector<int64_t>{2, 0, 2}).to(x[0].device());
             y.index_put_({rows}, x[1].reshape({1, 3}) * x[1].reshape({3, 1}), true);
             return y;
         }())},
        {"constant_pad", {U({2, 3})}, F(tg::constant_pad_nd(x[0], {1, 2, -1, 0}, 0.5))},
        {"constant_pad_empty", {U({0, 3})}, F(tg::constant_pad_nd(x[0], {1, 1, 1, 0}))},
        {"reflect_pad_1d", {U({2, 2, 5})}, F(tg::pad(x[0], {3, -1}, tg::kReflect))},
        {"reflect_pad_2d", {U({1, 3, 4})}, F(tg::pad(x[0], {1, 2, 2, 1}, tg::kReflect))},
        {"replicate_pad_3d",
         {U({1, 1, 2, 3, 2})},
         F(tg::pad(x[0], {1, 0, 2, -1, 0, 1}, tg::kReplicate))},
        {"circular_pad_2d", {U({2, 1, 3, 3})}, F(tg::pad(x[0], {3, 1, -1, 2}, tg::kCircular))},
    };
}

}  // namespace opcases
