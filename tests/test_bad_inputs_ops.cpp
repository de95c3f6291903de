/// Bad-input catalogue (tests/bad_inputs.hpp): the ops of ops.hpp other than shape and index ops
/// (test_bad_inputs_shape.cpp). The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_ops
#include <cmath>
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"

using tgtest::check_table;

namespace {
struct Fixtures {
    tg::Tensor x = tg::zeros({2, 3});                // float32
    tg::Tensor d = tg::zeros({2, 3}, tg::kFloat64);  // float64
    tg::Tensor l = tg::tensor(std::vector<int64_t>{0, 1});
    tg::Tensor logits = tg::zeros({3, 4});  // 3 rows, 4 classes
    tg::Tensor labels = tg::tensor(std::vector<int64_t>{0, 1, 2});
    tg::Tensor i64(std::vector<int64_t> v) { return tg::tensor(v); }
    const double nan = std::nan("");
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(arithmetic, Fixtures) {
    check_table(
        "Arithmetic",
        {
            TG_BAD(tg::add(x, tg::zeros({4})), shape_error, "add", "[2,3]", "[4]"),
            TG_BAD(x - tg::zeros({3, 3}), shape_error, "sub", "[2,3]", "[3,3]"),
            TG_BAD(x * tg::zeros({2, 2}), shape_error, "mul", "[2,3]", "[2,2]"),
            TG_BAD(x / tg::zeros({4}), shape_error, "div", "[2,3]", "[4]"),
            TG_BAD(tg::minimum(x, tg::zeros({5})), shape_error, "minimum", "[5]"),
            TG_BAD(tg::div(i64({1}), i64({0}), "trunc"), value_error, "div",
                   "integer division by zero"),
            TG_BAD(tg::div(x, x, "floor"), dtype_error, "div", "floor", "float32"),
            TG_BAD(tg::div(x, x, "round"), value_error, "div", "rounding_mode"),
            TG_BAD(tg::pow(l, -1), value_error, "pow", "int64", "negative integer"),
            TG_BAD(tg::clamp(x, {}, {}), value_error, "clamp", "at least one"),
            TG_BAD(tg::clamp(x, nan, 1), value_error, "clamp", "nan"),
            TG_BAD(tg::clamp_min(x, nan), value_error, "clamp", "nan"),
            TG_BAD(tg::clamp_max(x, nan), value_error, "clamp", "nan"),
            TG_BAD(tg::where(tg::ones({2}, tg::kBool), tg::ones({3}), tg::ones({3})), shape_error,
                   "where", "[2]", "[3]"),
            // LibTorch: "where expected condition to be a boolean tensor"
            TG_BAD(tg::where(tg::ones({3}), x, x), dtype_error, "where", "condition", "bool",
                   "float32 [3]"),
            TG_BAD(tg::where(tg::ones({3}, tg::kInt64), x, x), dtype_error, "where", "int64 [3]"),
        });
}

BOOST_FIXTURE_TEST_CASE(activations, Fixtures) {
    check_table("Activations",
                {
                    TG_BAD(tg::gelu(l), dtype_error, "gelu", "int64"),
                    TG_BAD(tg::leaky_relu(x, nan), value_error, "leaky_relu", "nan"),
                    TG_BAD(tg::softplus(x, 0), value_error, "softplus", "beta"),
                    TG_BAD(tg::softplus(x, 1, nan), value_error, "softplus", "threshold"),
                    TG_BAD(tg::softplus(l), dtype_error, "softplus", "int64"),
                    TG_BAD(tg::softmax(x, 2), shape_error, "softmax", "dim 2"),
                    TG_BAD(tg::log_softmax(x, -3), shape_error, "log_softmax", "dim -3"),
                    TG_BAD(tg::softmax(l, 0), dtype_error, "softmax", "int64"),
                    TG_BAD(tg::dropout(x, 1.5, true), value_error, "dropout", "1.5"),
                    TG_BAD(tg::dropout(x, -0.1, false), value_error, "dropout", "-0.1"),
                    TG_BAD(tg::dropout(x, nan, true), value_error, "dropout", "nan"),
                    TG_BAD(tg::dropout(l, 0.5, true), dtype_error, "dropout", "int64"),
                });
}

BOOST_FIXTURE_TEST_CASE(linear_algebra, Fixtures) {
    check_table(
        "Linear algebra",
        {
            TG_BAD(tg::matmul(x, tg::zeros({4, 5})), shape_error, "matmul", "[2,3] x [4,5]",
                   "3 != 4"),
            TG_BAD(tg::matmul(x, tg::zeros({4})), shape_error, "matmul", "[2,3]", "[4]"),
            TG_BAD(tg::matmul(tg::zeros({3}), tg::zeros({4})), shape_error, "matmul", "[3]", "[4]"),
            TG_BAD(tg::matmul(tg::zeros({2, 2, 3}), tg::zeros({3, 3, 4})), shape_error, "matmul",
                   "[2,2,3]", "[3,3,4]"),
            TG_BAD(tg::matmul(tg::zeros({}), tg::zeros({})), shape_error, "matmul", "1, 2 or 3"),
            TG_BAD(tg::matmul(tg::zeros({1, 1, 2, 2}), tg::zeros({1, 1, 2, 2})), shape_error,
                   "matmul", "[1,1,2,2]"),
            TG_BAD(tg::matmul(x, d.t()), dtype_error, "matmul", "float64"),
            TG_BAD(tg::matmul(l, l), dtype_error, "matmul", "int64"),
            TG_BAD(tg::linear(tg::zeros({4, 5}), x), shape_error, "linear", "[4,5]", "[2,3]"),
            TG_BAD(tg::linear(x, x, tg::zeros({7})), shape_error, "linear", "[7]"),
            TG_BAD(tg::linear(x, tg::zeros({3})), shape_error, "linear", "weight", "[3]"),
            TG_BAD(tg::linear(x, d), dtype_error, "linear", "float64"),
            TG_BAD(tg::t(tg::zeros({2, 2, 2})), shape_error, "t", "[2,2,2]"),
            TG_BAD(tg::transpose(x, 0, 2), shape_error, "transpose", "dim 2"),
            TG_BAD(tg::permute(x, {0, 0}), shape_error, "permute", "repeated"),
            TG_BAD(tg::permute(x, {0}), shape_error, "permute", "[2,3]"),
        });
}

BOOST_FIXTURE_TEST_CASE(reductions_and_comparisons, Fixtures) {
    check_table(
        "Reductions and comparisons",
        {
            TG_BAD(tg::sum(x, {2}), shape_error, "sum", "dim 2"),
            TG_BAD(tg::sum(x, {-3}), shape_error, "sum", "dim -3"),
            TG_BAD(tg::sum(x, {0, 0}), shape_error, "sum", "repeated", "[2,3]"),
            TG_BAD(tg::mean(x, {7}), shape_error, "mean", "dim 7"),
            TG_BAD(tg::mean(l), dtype_error, "mean", "int64"),
            TG_BAD(tg::var(l), dtype_error, "var", "int64"),
            TG_BAD(tg::max(x, 5), shape_error, "max", "dim 5"),
            TG_BAD(tg::min(x, -4), shape_error, "min", "dim -4"),
            TG_BAD(tg::max(tg::zeros({0})), shape_error, "max", "empty", "[0]"),
            TG_BAD(tg::argmax(tg::zeros({0})), shape_error, "argmax", "[0]"),
            TG_BAD(tg::argmax(x, 5), shape_error, "argmax", "dim 5"),
            TG_BAD(tg::argmin(x, 2), shape_error, "dim 2"),
            TG_BAD(tg::argmin(x, 2), shape_error, "argmin", "dim 2"),
            TG_BAD(tg::sum_to(tg::zeros({3}), {2, 3}), shape_error, "sum_to", "[3]", "[2,3]"),
            TG_BAD(tg::eq(x, tg::zeros({4})), shape_error, "eq", "[2,3]", "[4]"),
            TG_BAD(tg::cumsum(x, 2), shape_error, "cumsum", "2"),
            TG_BAD(tg::sort(x, -3), shape_error, "sort", "-3"),
            TG_BAD(tg::topk(x, 4), value_error, "topk", "k 4", "dim 1 of size 3", "[2,3]"),
            TG_BAD(tg::topk(x, -1, 0), value_error, "topk", "k -1", "dim 0 of size 2"),
        });
}

BOOST_FIXTURE_TEST_CASE(losses, Fixtures) {
    check_table(
        "Losses",
        {
            TG_BAD(tg::mse_loss(x, tg::zeros({3, 2})), shape_error, "mse_loss", "[2,3]", "[3,2]"),
            TG_BAD(tg::mse_loss(x, d), dtype_error, "mse_loss", "float64"),
            TG_BAD(tg::mse_loss(l, l), dtype_error, "int64"),
            TG_BAD(tg::l1_loss(x, tg::zeros({3})), shape_error, "l1_loss", "[2,3]", "[3]"),
            TG_BAD(tg::binary_cross_entropy_with_logits(x, tg::zeros({3, 2})), shape_error,
                   "binary_cross_entropy_with_logits", "[2,3]", "[3,2]"),
            TG_BAD(tg::binary_cross_entropy_with_logits(l, l), dtype_error, "int64"),
            TG_BAD(tg::cross_entropy(logits, i64({0, 1, 4})), shape_error, "cross_entropy",
                   "index 4"),
            TG_BAD(tg::cross_entropy(logits, i64({0, -1, 2})), shape_error, "cross_entropy",
                   "index -1"),
            TG_BAD(tg::cross_entropy(logits, l), shape_error, "cross_entropy", "[3,4]", "[2]"),
            TG_BAD(tg::cross_entropy(tg::zeros({4}), l), shape_error, "cross_entropy", "[4]"),
            TG_BAD(tg::cross_entropy(logits, tg::zeros({3})), dtype_error, "cross_entropy",
                   "int64"),
            TG_BAD(tg::cross_entropy(tg::zeros({3, 4}, tg::kInt64), labels), dtype_error,
                   "cross_entropy", "int64"),
            TG_BAD(tg::nll_loss(logits, i64({0, 1, 9})), shape_error, "nll_loss"),
            TG_BAD(tg::nll_loss(logits, l), shape_error, "nll_loss", "[3,4]", "[2]"),
            TG_BAD(tg::nll_loss(logits, tg::zeros({3})), dtype_error, "nll_loss"),
        });
}

// LibTorch's spellings (issue 16): mm, bmm, addmm, masks, norms, devices by name.
BOOST_FIXTURE_TEST_CASE(libtorch_spellings, Fixtures) {
    check_table(
        "LibTorch spellings",
        {
            TG_BAD(tg::mm(x, x), shape_error, "mm", "[2,3] x [2,3]", "inner dimensions 3 != 2"),
            TG_BAD(tg::mm(x, tg::zeros({3})), shape_error, "mm", "must be 2-D"),
            TG_BAD(tg::mm(x, d.t()), dtype_error, "mm"),
            TG_BAD(tg::bmm(x, x), shape_error, "bmm", "must be 3-D"),
            TG_BAD(tg::bmm(tg::zeros({2, 2, 3}), tg::zeros({3, 3, 2})), shape_error, "bmm",
                   "batch sizes 2 != 3"),
            TG_BAD(tg::addmm(tg::zeros({3}), x, x.t()), shape_error, "addmm", "[3]"),
            TG_BAD(x.masked_fill(tg::ones({3, 3}, tg::kBool), 0.0), shape_error, "masked_fill",
                   "[3,3]"),
            TG_BAD(x.masked_fill(tg::ones({3}), 0.0), dtype_error, "masked_fill", "mask", "bool",
                   "float32 [3]"),
            TG_BAD(tg::triu(tg::zeros({4})), shape_error, "triu", "[4]", "at least 2 dims"),
            TG_BAD(tg::norm(x, -1), value_error, "norm", "p = -1"),
            TG_BAD(tg::norm(l), dtype_error, "norm"),
            TG_BAD(tg::logsumexp(x, 2), shape_error, "logsumexp"),
            TG_BAD(tg::Device("gpu:0"), device_error, "'gpu:0'", "is not a device"),
            TG_BAD(tg::Device("cuda:one"), device_error, "'cuda:one'"),
            TG_BAD(tg::Device("cpu:1"), device_error, "'cpu:1'"),
            TG_BAD(tg::cross_entropy(logits, labels, tg::kMean, tg::ones({3})), shape_error,
                   "cross_entropy", "weight [3]", "one entry per class (4)"),
            TG_BAD(tg::cross_entropy(logits, i64({0, 7, 1}), tg::kMean, {}, -100, 0.1), value_error,
                   "cross_entropy", "label 7", "[3,4]"),
            TG_BAD(tg::cross_entropy(logits, labels, tg::kMean, {}, -100, 1.5), value_error,
                   "cross_entropy", "label_smoothing 1.5"),
            TG_BAD(tg::nll_loss(logits, i64({0, -1, 1}), tg::kSum, {}), value_error, "nll_loss",
                   "label -1"),
            TG_BAD(tg::smooth_l1_loss(x, x, tg::kMean, -1), value_error, "smooth_l1_loss",
                   "beta -1"),
            TG_BAD(tg::huber_loss(x, x, tg::kMean, 0), value_error, "huber_loss", "delta 0"),
            TG_BAD(tg::kl_div(x, tg::zeros({3, 2})), shape_error, "kl_div", "[2,3]", "[3,2]"),
            TG_BAD(tg::binary_cross_entropy(x, x, tg::ones({4})), shape_error,
                   "binary_cross_entropy"),
        });
}

BOOST_FIXTURE_TEST_CASE(bool_tensors_and_masks, Fixtures) {
    const tg::Tensor m = x > 0.0;  // bool [2,3]
    tg::Tensor y = tg::zeros({2, 3});
    check_table(
        "Bool tensors and masks",
        {
            TG_BAD(m - m, dtype_error, "sub", "[2,3] bool", "logical_not", "logical_xor"),
            TG_BAD(1.0 - m, dtype_error, "sub", "[2,3] bool"),
            TG_BAD(x - m, dtype_error, "sub", "[2,3] bool"),
            TG_BAD(m.mean(), dtype_error, "mean", "bool"),
            TG_BAD(tg::rand({2}, tg::kBool), dtype_error, "rand", "bool"),
            TG_BAD(~x, dtype_error, "bitwise_not", "float32", "logical_not"),
            TG_BAD(m & x, dtype_error, "bitwise_and", "float32"),
            TG_BAD(tg::logical_and(m, tg::ones({4})), shape_error, "logical_and", "[2,3]", "[4]"),
            TG_BAD(tg::any(m, 2), shape_error, "any", "2"),
            TG_BAD(tg::masked_select(x, tg::ones({4}, tg::kBool)), shape_error, "masked_select"),
            TG_BAD(x.index({tg::ones({3}, tg::kBool)}), shape_error, "index", "mask [3]",
                   "dims 0..0", "[2,3]"),
            TG_BAD(x.index({i64({2})}), shape_error, "index", "index 2", "dim 0 of size 2"),
            TG_BAD(x.index({i64({0}), tg::indexing::Slice(), i64({0})}), shape_error, "index",
                   "3 indices"),
            TG_BAD(x.index({tg::ones({1}, tg::kBool).reshape({})}), value_error, "0-dim bool"),
            TG_BAD(x.index({tg::zeros({1})}), dtype_error, "index", "int64 or bool", "float32"),
            TG_BAD(y.index_put_({i64({1, 1})}, 1.0), value_error, "index_put_", "more than once"),
            TG_BAD(y.index_put_({m}, tg::ones({4})), shape_error, "index_put_", "[0]", "[4]"),
        });
}

BOOST_FIXTURE_TEST_CASE(dtypes_and_promotion, Fixtures) {
    const tg::Tensor u = tg::tensor({200.0, 10.0}, tg::kUInt8);
    const tg::Tensor h = tg::ones({2, 2}, tg::kFloat16);
    const tg::Tensor m = u > 100;
    check_table(
        "Dtypes and promotion",
        {
            TG_BAD(tg::full({2}, 300, tg::kUInt8), value_error, "full", "300", "uint8"),
            TG_BAD(tg::full({2}, -1.0, tg::kUInt8), value_error, "full", "-1", "uint8"),
            TG_BAD(tg::full({2}, 1e10, tg::kFloat16), value_error, "full", "float16"),
            TG_BAD(tg::tensor({1.0, -2.5}, tg::kUInt8), value_error, "tensor", "-2.5", "element 1"),
            TG_BAD(tg::zeros({2}, tg::kUInt8).fill_(256), value_error, "fill_", "256", "uint8"),
            TG_BAD(tg::zeros({2}, tg::kInt32).fill_(nan), value_error, "fill_", "nan", "int32"),
            TG_BAD(u.masked_fill(m, 300), value_error, "masked_fill", "300", "uint8"),
            TG_BAD(u.clamp(0, 300), value_error, "clamp", "300", "uint8"),
            TG_BAD(tg::randint(0, 300, {2}, tg::kUInt8), value_error, "randint", "299", "uint8"),
            TG_BAD(tg::tensor(300).item<uint8_t>(), value_error, "item", "300", "uint8"),
            TG_BAD(tg::tensor(1e10).item<int>(), value_error, "item", "int32"),
            TG_BAD(u.data_ptr<int8_t>(), dtype_error, "data_ptr<int8>", "uint8"),
            TG_BAD(tg::Tensor(u.clone()).requires_grad_(), dtype_error, "requires_grad_", "uint8"),
            TG_BAD(tg::Tensor(l.clone()).mul_(0.5), dtype_error, "mul_", "float32", "int64"),
            TG_BAD(tg::Tensor(u.clone()).add_(x.narrow(1, 0, 2)), dtype_error, "add_", "float32",
                   "uint8"),
            TG_BAD(tg::Tensor(l.clone()).div_(2), dtype_error, "div_", "float32", "int64"),
            TG_BAD(2 / l, dtype_error, "div_", "float32", "int64"),
            TG_BAD(tg::Tensor(l.clone()).add_(l, 2.5), dtype_error, "add_", "alpha"),
            TG_BAD(tg::Tensor(m.clone()).add_(1), dtype_error, "add_", "int64", "bool"),
            TG_BAD(tg::mean(u), dtype_error, "mean", "uint8"),
            TG_BAD(tg::softmax(u, 0), dtype_error, "softmax", "uint8"),
            TG_BAD(u & u, dtype_error, "bitwise_and", "uint8"),
            TG_BAD(tg::rand({2}, tg::kInt32), dtype_error, "rand", "int32"),
            TG_BAD(tg::matmul(h, h), dtype_error, "matmul", "float16", "kFloat32"),
            TG_BAD(tg::conv2d(h.reshape({1, 1, 2, 2}), h.reshape({1, 1, 2, 2})), dtype_error,
                   "conv2d", "float16"),
            TG_BAD(tg::matmul(u.reshape({1, 2}), u.reshape({2, 1})), dtype_error, "matmul",
                   "uint8"),
        });
}
