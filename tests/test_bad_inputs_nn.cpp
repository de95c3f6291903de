/// Bad-input catalogue (tests/bad_inputs.hpp): layers, modules, init, gradient utilities and
/// checkpoint_sequential. The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_nn
#include <cmath>
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/nn.hpp"

using tgtest::check_table;
namespace nn = tg::nn;

namespace {
// A module that registers what a row gives it.
struct Custom : nn::Module {
    Custom() : Module("Custom") {}
    void param(const std::string& name, const tg::Tensor& t) { register_parameter(name, t); }
    void child(const std::string& name, std::shared_ptr<Module> m) {
        register_module(name, std::move(m));
    }
};

struct Fixtures {
    nn::Linear fc{3, 2};
    nn::Sequential seq{nn::Linear(3, 3), nn::ReLU(), nn::Linear(3, 2)};
    Custom custom;
    tg::Tensor x = tg::zeros({4, 3});
    tg::Tensor w = tg::zeros({4, 3});  // a weight to initialise
    tg::Tensor v = tg::zeros({4});
    tg::Tensor u;
    tg::Tensor p = tg::zeros({2}, tg::TensorOptions().requires_grad(true));  // with a .grad()
    const double nan = std::nan("");

    Fixtures() {
        p.set_grad(tg::ones({2}));
        custom.param("weight", tg::zeros({2}));
        custom.child("fc", fc.ptr());
    }
    nn::SequentialProfile profile() const { return nn::profile_sequential(seq, x); }
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(layers, Fixtures) {
    check_table(
        "Layers",
        {
            TG_BAD(nn::Linear(-1, 3), shape_error, "Linear(-1, 3)", ">= 0"),
            TG_BAD(nn::Linear(3, -1), shape_error, "Linear(3, -1)"),
            TG_BAD(fc(tg::zeros({4, 5})), shape_error, "Linear(3, 2)", "[4,5]", "last dim 3"),
            TG_BAD(fc(tg::zeros({})), shape_error, "Linear(3, 2)", "[]"),
            TG_BAD(fc(tg::zeros({4, 3}, tg::kFloat64)), dtype_error, "Linear(3, 2)", "float64"),
            TG_BAD(fc(tg::zeros({4, 3}, tg::kInt64)), dtype_error, "Linear(3, 2)", "int64"),
            TG_BAD(fc(u), value_error, "Linear(3, 2)", "undefined"),
            TG_BAD(nn::Dropout(1.5), value_error, "Dropout", "1.5"),
            TG_BAD(nn::Dropout(1.0), value_error, "Dropout", "[0, 1)"),
            TG_BAD(nn::Dropout(nan), value_error, "Dropout", "nan"),
            TG_BAD(nn::LeakyReLU(nan), value_error, "LeakyReLU", "negative_slope"),
            TG_BAD(nn::Softmax(3)(v), shape_error, "softmax", "dim 3"),
            TG_BAD(nn::LogSoftmax(-2)(v), shape_error, "log_softmax", "dim -2"),
            TG_BAD(nn::Flatten(5, 7)(x), shape_error, "flatten", "dim 5"),
            TG_BAD(nn::MSELoss()(x, v), shape_error, "mse_loss", "[4,3]", "[4]"),
            TG_BAD(nn::CrossEntropyLoss()(x, tg::zeros({4})), dtype_error, "cross_entropy"),
            TG_BAD(nn::Sequential(nn::MSELoss())(x), error, "MSELoss", "forward"),
            TG_BAD(seq[5], shape_error, "Sequential", "5"),
            TG_BAD(seq->at<nn::ReLUImpl>(0), error, "Sequential::at", "Linear"),
            TG_BAD(nn::Linear(nullptr)(x), error, "empty holder"),
            TG_BAD(seq(tg::zeros({4, 5})), shape_error, "Linear(3, 3)", "[4,5]"),
            TG_BAD(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(-0.5).inplace(true)),
                   value_error, "LeakyReLU", "inplace"),
            TG_BAD(nn::GELU(nn::GELUOptions().approximate("fast")), value_error, "GELU", "fast"),
            TG_BAD(nn::Conv2d(nn::Conv2dOptions(1, 2, 3).padding(tg::kSame).stride(2)), value_error,
                   "Conv2d", "padding='same'", "strided"),
            TG_BAD(
                nn::ConvTranspose2d(nn::ConvTranspose2dOptions(1, 2, 3).padding_mode(tg::kReflect)),
                value_error, "ConvTranspose2d", "kZeros"),
            TG_BAD(nn::Functional(nn::FunctionalImpl::Function()), value_error, "Functional",
                   "empty"),
            TG_BAD(seq->named_parameters()["nope"], value_error, "Key 'nope' is not defined"),
            TG_BAD(tg::ExpandingArray<2>({1, 2, 3}), value_error, "Expected 2 values", "got 3"),
        });
}

BOOST_FIXTURE_TEST_CASE(modules, Fixtures) {
    check_table(
        "Modules",
        {
            TG_BAD(custom.param("a.b", v), value_error, "Custom", "register_parameter", "a.b"),
            TG_BAD(custom.param("", v), value_error, "Custom", "register_parameter"),
            TG_BAD(custom.param("weight", v), value_error, "Custom", "\"weight\"", "already"),
            TG_BAD(custom.param("bias", u), value_error, "Custom", "\"bias\"", "undefined"),
            TG_BAD(custom.param("steps", tg::zeros({2}, tg::kInt64)), dtype_error, "Custom",
                   "\"steps\"", "int64"),
            TG_BAD(custom.child("fc", nn::Linear(2, 2).ptr()), value_error, "Custom", "\"fc\"",
                   "already"),
            TG_BAD(custom.child("x.y", nn::Linear(2, 2).ptr()), value_error, "Custom", "x.y"),
            TG_BAD(custom.child("none", nullptr), value_error, "Custom", "null module"),
            TG_BAD(custom(x), error, "Custom", "forward"),
            TG_BAD(fc->to(tg::kInt64), dtype_error, "to(int64)", "floating point"),
            TG_BAD(fc->to(tg::Device::cuda(57)), backend_unavailable, "cuda:57"),
        });
}

BOOST_FIXTURE_TEST_CASE(init_and_utils, Fixtures) {
    tg::Tensor iw = tg::zeros({4, 3}, tg::kInt64);
    check_table(
        "init and utils",
        {
            TG_BAD(nn::init::kaiming_uniform_(v), shape_error, "fan", "[4]"),
            TG_BAD(nn::init::xavier_normal_(v), shape_error, "fan", "[4]"),
            TG_BAD(nn::init::kaiming_uniform_(iw), dtype_error, "kaiming_uniform_", "int64"),
            TG_BAD(nn::init::xavier_uniform_(iw), dtype_error, "xavier_uniform_", "int64"),
            TG_BAD(nn::init::uniform_(iw), dtype_error, "uniform_", "int64"),
            TG_BAD(nn::init::xavier_uniform_(w, nan), value_error, "xavier_uniform_", "gain"),
            TG_BAD(nn::init::xavier_normal_(w, -1), value_error, "xavier_normal_", "gain"),
            TG_BAD(nn::init::kaiming_normal_(w, nan), value_error, "calculate_gain", "slope"),
            TG_BAD(nn::init::uniform_(w, 2, 1), value_error, "uniform_", "hi", "lo"),
            TG_BAD(nn::init::uniform_(w, -INFINITY, 1), value_error, "uniform_", "lo"),
            TG_BAD(nn::init::normal_(w, 0, -1), value_error, "normal_", "std"),
            TG_BAD(nn::init::normal_(w, nan, 1), value_error, "normal_", "mean"),
            TG_BAD(nn::init::calculate_gain(nn::init::Nonlinearity::LeakyReLU, nan), value_error,
                   "calculate_gain"),
            TG_BAD(nn::init::zeros_(u), value_error, "undefined"),
            TG_BAD(nn::utils::clip_grad_norm_({p}, 1.0, -1.0), value_error, "clip_grad_norm_",
                   "norm_type"),
            TG_BAD(nn::utils::clip_grad_norm_({p}, 1.0, nan), value_error, "norm_type"),
            TG_BAD(nn::utils::clip_grad_norm_({p}, -1.0), value_error, "clip_grad_norm_",
                   "max_norm"),
            TG_BAD(nn::utils::clip_grad_norm_({p}, nan), value_error, "max_norm", "nan"),
            TG_BAD(nn::utils::clip_grad_value_({p}, -1.0), value_error, "clip_grad_value_",
                   "clip_value"),
            TG_BAD(nn::utils::clip_grad_value_({p}, nan), value_error, "clip_value"),
        });
    // none of the rejected calls touched the gradient
    BOOST_TEST(p.grad().to_vector<float>() == std::vector<float>({1, 1}));
}

BOOST_FIXTURE_TEST_CASE(checkpoint_sequential, Fixtures) {
    nn::CheckpointPlan gap;
    gap.segments = {{0, 1, true}, {2, 3, false}};
    nn::CheckpointPlan short_plan;
    short_plan.segments = {{0, 2, true}};
    check_table("checkpoint_sequential and the planner",
                {
                    TG_BAD(nn::checkpoint_sequential(seq, 5, x), value_error,
                           "checkpoint_sequential", "5 segments", "3 modules"),
                    TG_BAD(nn::checkpoint_sequential(seq, -1, x), value_error,
                           "checkpoint_sequential", "-1"),
                    TG_BAD(nn::checkpoint_sequential(seq, gap, x), value_error,
                           "checkpoint_sequential", "[2,3)", "layer 1"),
                    TG_BAD(nn::checkpoint_sequential(seq, short_plan, x), value_error,
                           "checkpoint_sequential", "covers 2", "3"),
                    TG_BAD(nn::profile_sequential(nn::Sequential(), x), value_error,
                           "profile_sequential", "no modules"),
                    TG_BAD(nn::plan_checkpoints(profile(), tg::MemoryBudget{1}), value_error,
                           "plan_checkpoints", "budget of 1 bytes", "smallest feasible"),
                    TG_BAD(nn::plan_checkpoints(nn::SequentialProfile(), tg::MemoryBudget{1 << 20}),
                           value_error, "plan_checkpoints", "empty profile"),
                    TG_BAD(nn::min_checkpoint_budget(nn::SequentialProfile()), value_error,
                           "min_checkpoint_budget", "empty profile"),
                });
}
