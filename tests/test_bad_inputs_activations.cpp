/// Bad-input catalogue (tests/bad_inputs.hpp): the activations of tapegrad/activation_ops.hpp,
/// their modules (nn/activation_more.hpp) and F:: functions. The same tables are in
/// docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_activations
#include <cmath>
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/nn.hpp"

using tgtest::check_table;
namespace nn = tg::nn;
namespace F = tg::nn::functional;

namespace {
struct Fixtures {
    tg::Tensor x = tg::zeros({2, 3});             // float32
    tg::Tensor d = tg::zeros({3}, tg::kFloat64);  // float64
    tg::Tensor l = tg::tensor(std::vector<int64_t>{0, 1});
    tg::Tensor leaf = tg::zeros({2, 3}, tg::TensorOptions().requires_grad(true));
    tg::Tensor u;
    const double nan = std::nan("");
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(activation_ops, Fixtures) {
    check_table("More activations",
                {
                    TG_BAD(tg::elu(l), dtype_error, "elu", "int64"),
                    TG_BAD(tg::elu(x, nan), value_error, "elu", "nan"),
                    TG_BAD(tg::elu_(x, -1.0), value_error, "elu_", "alpha", ">= 0"),
                    TG_BAD(tg::celu(x, 0), value_error, "celu", "alpha 0"),
                    TG_BAD(tg::selu(u), value_error, "elu", "undefined"),
                    TG_BAD(tg::silu(l), dtype_error, "silu", "int64"),
                    TG_BAD(tg::mish(l), dtype_error, "mish", "int64"),
                    TG_BAD(tg::log_sigmoid(l), dtype_error, "log_sigmoid", "int64"),
                    TG_BAD(tg::hardtanh(x, 1, -1), value_error, "hardtanh", "min_val", "max_val"),
                    TG_BAD(tg::relu6(l), dtype_error, "hardtanh", "int64"),
                    TG_BAD(tg::softshrink(x, -0.5), value_error, "softshrink", "lambda", "-0.5"),
                    TG_BAD(tg::hardshrink(x, nan), value_error, "hardshrink", "nan"),
                    TG_BAD(tg::glu(x), shape_error, "glu", "[2,3]", "even"),
                    TG_BAD(tg::glu(tg::zeros({})), shape_error, "glu", "scalar"),
                    TG_BAD(tg::glu(x, 2), shape_error, "glu", "dim 2"),
                    TG_BAD(tg::prelu(x, tg::zeros({4})), shape_error, "prelu", "[4]", "[2,3]",
                           "3 channels"),
                    TG_BAD(tg::prelu(x, tg::zeros({3, 1})), shape_error, "prelu", "[3,1]", "1-D"),
                    TG_BAD(tg::prelu(x, d), dtype_error, "prelu", "float64"),
                    TG_BAD(tg::prelu(x, u), value_error, "prelu", "undefined", "[2,3]"),
                    TG_BAD(tg::prelu(tg::zeros({}), tg::zeros({2})), shape_error, "prelu", "[]"),
                    TG_BAD(tg::rrelu(x, 0.5, 0.1, true), value_error, "rrelu", "lower", "0.5"),
                    TG_BAD(tg::rrelu(x, nan, 0.1), value_error, "rrelu", "nan"),
                    TG_BAD(tg::gelu(x, "fast"), value_error, "gelu", "fast"),
                    TG_BAD(tg::threshold(l, 0, 1), dtype_error, "threshold", "int64"),
                    TG_BAD(x.exponential_(0), value_error, "exponential_", "lambda"),
                    TG_BAD(l.exponential_(), dtype_error, "exponential_", "int64"),
                });
}

BOOST_FIXTURE_TEST_CASE(activation_modules, Fixtures) {
    check_table(
        "More activation modules and F:: functions",
        {
            TG_BAD(nn::Hardtanh(nn::HardtanhOptions().min_val(2).max_val(1)), value_error,
                   "Hardtanh", "max_val", "min_val"),
            TG_BAD(nn::CELU(nn::CELUOptions().alpha(0)), value_error, "CELU", "alpha"),
            TG_BAD(nn::ELU(nn::ELUOptions().alpha(-1).inplace(true)), value_error, "ELU",
                   "inplace"),
            TG_BAD(nn::Softshrink(-1.0), value_error, "Softshrink", "lambda"),
            TG_BAD(nn::RReLU(nn::RReLUOptions().lower(0.5).upper(0.1)), value_error, "RReLU",
                   "lower"),
            TG_BAD(nn::PReLU(nn::PReLUOptions().num_parameters(0)), value_error, "PReLU",
                   "num_parameters"),
            TG_BAD(nn::PReLU(nn::PReLUOptions().num_parameters(3))(tg::zeros({2, 4})), shape_error,
                   "prelu", "[2,4]", "3 slopes"),
            TG_BAD(nn::PReLU()(tg::zeros({2, 3}, tg::kFloat64)), dtype_error, "prelu", "float64"),
            TG_BAD(nn::Softmax2d()(x), shape_error, "Softmax2d", "[2,3]", "3D or 4D"),
            TG_BAD(nn::GLU()(x), shape_error, "glu", "[2,3]"),
            TG_BAD(nn::SiLU()(u), value_error, "SiLU", "undefined"),
            TG_BAD(nn::SELU(true)(leaf), autograd_error, "leaf"),
            TG_BAD(F::gumbel_softmax(x, F::GumbelSoftmaxFuncOptions().tau(0)), value_error,
                   "gumbel_softmax", "tau", "[2,3]"),
            TG_BAD(F::gumbel_softmax(x, F::GumbelSoftmaxFuncOptions().hard(true).dim(3)),
                   shape_error, "dim 3"),
            TG_BAD(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(-1).inplace(true)),
                   value_error, "leaky_relu", "inplace"),
            TG_BAD(F::gelu(x, F::GELUFuncOptions().approximate("fast")), value_error, "gelu",
                   "fast"),
        });
}
