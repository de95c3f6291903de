/// Bad-input catalogue (tests/bad_inputs.hpp): shape and index ops. The same tables are in
/// docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_shape
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"

using tgtest::check_table;

namespace {
struct Fixtures {
    tg::Tensor x = tg::zeros({2, 3});
    tg::Tensor l = tg::tensor(std::vector<int64_t>{0, 1});
    tg::Tensor i64(std::vector<int64_t> v) { return tg::tensor(v); }
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(shape_ops, Fixtures) {
    check_table(
        "Shape ops",
        {
            TG_BAD(tg::reshape(x, {5, 2}), shape_error, "reshape", "[2,3]", "[5,2]"),
            TG_BAD(tg::reshape(x, {-1, -1}), shape_error, "reshape", "-1"),
            TG_BAD(tg::reshape(x, {4, -1}), shape_error, "reshape", "[2,3]"),
            TG_BAD(tg::reshape(x, {-2, 3}), shape_error, "reshape", "[-2,3]"),
            TG_BAD(tg::view(x, {7}), shape_error, "view", "[2,3]", "[7]"),
            TG_BAD(tg::view(x.t(), {6}), shape_error, "view", "[3,2]"),
            TG_BAD(tg::flatten(x, 0, 5), shape_error, "flatten", "dim 5"),
            TG_BAD(tg::flatten(x, 1, 0), shape_error, "flatten", "start dim 1", "end dim 0"),
            TG_BAD(tg::squeeze(x, 4), shape_error, "squeeze", "dim 4"),
            TG_BAD(tg::unsqueeze(x, 4), shape_error, "unsqueeze", "dim 4"),
            TG_BAD(tg::expand(x, {3}), shape_error, "expand", "[2,3]", "[3]"),
            TG_BAD(tg::expand(x, {2, 4}), shape_error, "expand", "[2,3]", "[2,4]"),
            TG_BAD(tg::expand(tg::zeros({1}), {-2}), shape_error, "expand", "[-2]"),
            TG_BAD(tg::cat({x, tg::zeros({2, 4})}, 0), shape_error, "cat", "[2,3]", "[2,4]"),
            TG_BAD(tg::cat({x, tg::zeros({2})}, 0), shape_error, "cat", "[2]"),
            TG_BAD(tg::cat({}, 0), shape_error, "cat"),
            TG_BAD(tg::cat({x, x}, 3), shape_error, "cat", "dim 3"),
            TG_BAD(tg::stack({x, tg::zeros({3, 2})}, 0), shape_error, "[2,3]", "[3,2]"),
            TG_BAD(tg::stack({}, 0), shape_error, "stack"),
            TG_BAD(tg::stack({x}, 4), shape_error, "stack", "dim 4"),
            TG_BAD(tg::narrow(x, 1, 2, 2), shape_error, "narrow", "[2,3]"),
            TG_BAD(tg::narrow(x, 0, 0, -1), shape_error, "narrow", "[2,3]"),
            TG_BAD(tg::narrow(x, 3, 0, 1), shape_error, "narrow", "dim 3"),
            TG_BAD(tg::narrow_scatter(x, {2, 2}, 1, 0), shape_error, "narrow", "[2,2]"),
            TG_BAD(tg::broadcast_shapes({2, 3}, {4}, "myop"), shape_error, "myop", "[2,3]", "[4]"),
            TG_BAD(tg::wrap_dim(3, 2, "myop"), shape_error, "myop", "dim 3"),
        });
}

BOOST_FIXTURE_TEST_CASE(products_order_statistics_einsum, Fixtures) {
    check_table(
        "Products, order statistics, counts and einsum",
        {
            TG_BAD(tg::prod(x, 2), shape_error, "prod", "dim 2"),
            TG_BAD(tg::cumprod(x, -3), shape_error, "cumprod", "-3"),
            TG_BAD(tg::median(x, 2), shape_error, "median", "dim 2"),
            TG_BAD(tg::median(tg::zeros({2, 0}), 1), shape_error, "median", "size 0", "[2,0]"),
            TG_BAD(tg::kthvalue(x, 4), value_error, "kthvalue", "k 4", "[1, 3]", "[2,3]"),
            TG_BAD(tg::kthvalue(x, 0, 0), value_error, "kthvalue", "k 0", "[1, 2]"),
            TG_BAD(tg::atan2(x, tg::zeros({4})), shape_error, "atan2", "[2,3]", "[4]"),
            TG_BAD(tg::hypot(l, l), dtype_error, "hypot", "int64", "[2]"),
            TG_BAD(tg::bincount(x), dtype_error, "bincount", "float32", "[2,3]"),
            TG_BAD(tg::bincount(l.reshape({1, 2})), shape_error, "bincount", "1-D", "[1,2]"),
            TG_BAD(tg::bincount(i64({1, -1})), value_error, "bincount", "non-negative"),
            TG_BAD(tg::bincount(l, tg::zeros({3})), shape_error, "bincount", "[3]", "[2]"),
            TG_BAD(tg::bincount(l, {}, -1), value_error, "bincount", "minlength -1"),
            TG_BAD(tg::einsum("ij,jk->ik", {x}), value_error, "einsum", "2 terms", "1 operands"),
            TG_BAD(tg::einsum("ijk", {x}), shape_error, "einsum", "ijk", "[2,3]"),
            TG_BAD(tg::einsum("ij,jk", {x, x}), shape_error, "einsum", "ij,jk", "3 and 2"),
            TG_BAD(tg::einsum("ii", {x}), shape_error, "einsum", "2 and 3", "[2,3]"),
            TG_BAD(tg::einsum("i2", {x}), value_error, "einsum", "'2'"),
            TG_BAD(tg::einsum("ij->k", {x}), value_error, "einsum", "output"),
            TG_BAD(tg::einsum("ij", {}), value_error, "einsum", "no operands"),
            TG_BAD(tg::zeros({2, 3, 4}).t_(), shape_error, "t", "[2,3,4]"),
            TG_BAD(x.unsqueeze_(3), shape_error, "unsqueeze", "dim 3"),
            TG_BAD(tg::zeros({2}, tg::requires_grad()).unsqueeze_(0), autograd_error, "unsqueeze_",
                   "leaf", "[2]"),
        });
}

BOOST_FIXTURE_TEST_CASE(index_ops, Fixtures) {
    check_table(
        "Index ops",
        {
            TG_BAD(tg::index_select(x, 0, i64({0, 2})), shape_error, "index_select", "index 2"),
            TG_BAD(tg::index_select(x, 1, i64({-1})), shape_error, "index_select", "-1"),
            TG_BAD(tg::index_select(x, 2, l), shape_error, "index_select", "dim 2"),
            TG_BAD(tg::index_select(x, 0, l.reshape({1, 2})), shape_error, "index_select", "1-D",
                   "[1,2]"),
            TG_BAD(tg::index_select(x, 0, tg::zeros({2})), dtype_error, "index_select"),
            TG_BAD(tg::gather(x, 1, i64({0, 3, 1, 1}).reshape({2, 2})), shape_error, "gather",
                   "index 3"),
            TG_BAD(tg::gather(x, 1, l), shape_error, "gather", "[2]", "[2,3]"),
            TG_BAD(tg::gather(x, 5, l.reshape({1, 2})), shape_error, "gather", "dim 5"),
            TG_BAD(tg::gather(x, 1, tg::zeros({2, 1})), dtype_error, "gather"),
            TG_BAD(tg::index_add(x, {2, 3}, 0, i64({0, 5})), shape_error, "index_add", "index 5"),
            TG_BAD(tg::index_add(x, {2, 4}, 0, l), shape_error, "index_add", "[2,3]", "[2,4]"),
            TG_BAD(tg::scatter_add(x, {2, 3}, 1, i64({0, 1, 9, 0, 1, 2}).reshape({2, 3})),
                   shape_error, "scatter_add", "index 9"),
            TG_BAD(tg::scatter_add(x, {2, 3}, 1, x), dtype_error, "scatter_add", "int64"),
            // LibTorch's forms on a tensor self (tapegrad/inplace_ops.hpp)
            TG_BAD(tg::scatter(x, 1, i64({0, 0}).reshape({1, 2}), x), value_error, "scatter",
                   "more than once"),
            TG_BAD(tg::scatter(x, 1, i64({0, 0, 0}).reshape({3, 1}), 1.0), shape_error, "scatter",
                   "larger than self"),
            TG_BAD(tg::scatter(x, 1, i64({0, 1}), 1.0), shape_error, "scatter", "as many dims"),
            TG_BAD(tg::index_copy(x, 1, i64({2, 2}), x.narrow(1, 0, 2)), value_error, "index_copy",
                   "more than once"),
            TG_BAD(tg::index_fill(x, 1, l.reshape({1, 2}), 0.0), shape_error, "index_fill",
                   "0-D or 1-D"),
            TG_BAD(tg::index_add(x, 0, i64({0}), tg::zeros({1, 3}, tg::kFloat64)), dtype_error,
                   "index_add", "same scalar type"),
            TG_BAD(tg::scatter_add(tg::zeros({}), 0, l, x), shape_error, "scatter_add", "0-dim"),
            TG_BAD(tg::lerp(x, x, tg::ones({2, 3}, tg::kFloat64)), dtype_error, "lerp", "weight"),
            TG_BAD(tg::zeros({2}, tg::kInt64).sqrt_(), dtype_error, "sqrt_", "int64"),
            TG_BAD(tg::zeros({2}).masked_fill_(tg::ones({3, 2}, tg::kBool), 1.0), shape_error,
                   "masked_fill", "[3,2]"),
        });
}
