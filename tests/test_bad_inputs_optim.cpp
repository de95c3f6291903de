/// Bad-input catalogue (tests/bad_inputs.hpp): optimizers and their options, schedulers and the
/// gradient accumulator. The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_optim
#include <cmath>
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/optim.hpp"

using tgtest::check_table;
namespace optim = tg::optim;
using optim::AdamOptions;
using optim::AdamWOptions;
using optim::SGDOptions;

namespace {
struct Fixtures {
    tg::Tensor w = tg::ones({2}, tg::TensorOptions().requires_grad(true));
    tg::Tensor u;
    optim::SGD sgd{{w}, SGDOptions(0.1)};
    optim::Accumulator acc{sgd, 4};
    const double nan = std::nan("");
    const double inf = INFINITY;

    optim::SGD sgd_with(SGDOptions o) { return optim::SGD({w}, o); }
    optim::Adam adam_with(AdamOptions o) { return optim::Adam({w}, o); }
    optim::AdamW adamw_with(AdamWOptions o) { return optim::AdamW({w}, o); }
    // options changed between steps are checked by the next step
    void step_with_lr(double lr) {
        optim::SGD o({w}, SGDOptions(0.1));
        o.param_groups()[0].options().set_lr(lr);
        w.set_grad(tg::ones({2}));
        o.step();
    }
    tg::Tensor loss() const { return (w * w).sum(); }
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(optimizer_options, Fixtures) {
    check_table(
        "Optimizer options",
        {
            TG_BAD(sgd_with(SGDOptions(-0.1)), value_error, "SGD", "lr -0.1"),
            TG_BAD(sgd_with(SGDOptions(nan)), value_error, "SGD", "lr nan"),
            TG_BAD(sgd_with(SGDOptions(inf)), value_error, "SGD", "lr inf"),
            TG_BAD(sgd_with(SGDOptions(0.1).momentum(-0.9)), value_error, "SGD", "momentum -0.9"),
            TG_BAD(sgd_with(SGDOptions(0.1).momentum(nan)), value_error, "SGD", "momentum nan"),
            TG_BAD(sgd_with(SGDOptions(0.1).momentum(0.9).dampening(1.5)), value_error, "SGD",
                   "dampening 1.5"),
            TG_BAD(sgd_with(SGDOptions(0.1).momentum(0.9).dampening(nan)), value_error, "SGD",
                   "dampening nan"),
            TG_BAD(sgd_with(SGDOptions(0.1).weight_decay(-1)), value_error, "SGD",
                   "weight_decay -1"),
            TG_BAD(sgd_with(SGDOptions(0.1).weight_decay(nan)), value_error, "SGD",
                   "weight_decay nan"),
            TG_BAD(sgd_with(SGDOptions(0.1).nesterov(true)), value_error, "SGD", "nesterov"),
            TG_BAD(sgd_with(SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)),
                   value_error, "SGD", "nesterov", "dampening 0.1"),
            TG_BAD_AS("opt.param_groups()[0].options().set_lr(-1); opt.step()", step_with_lr(-1),
                      value_error, "SGD", "lr -1"),
            TG_BAD(adam_with(AdamOptions(-1)), value_error, "Adam", "lr -1"),
            TG_BAD(adam_with(AdamOptions(nan)), value_error, "Adam", "lr nan"),
            TG_BAD(adam_with(AdamOptions(0.1).betas({1.0, 0.999})), value_error, "Adam", "beta1 1"),
            TG_BAD(adam_with(AdamOptions(0.1).betas({0.9, nan})), value_error, "Adam", "beta2 nan"),
            TG_BAD(adam_with(AdamOptions(0.1).betas({-0.1, 0.999})), value_error, "Adam",
                   "beta1 -0.1"),
            TG_BAD(adam_with(AdamOptions(0.1).eps(-1e-8)), value_error, "Adam", "eps -1e-08"),
            TG_BAD(adam_with(AdamOptions(0.1).eps(nan)), value_error, "Adam", "eps nan"),
            TG_BAD(adam_with(AdamOptions(0.1).weight_decay(-1)), value_error, "Adam",
                   "weight_decay -1"),
            TG_BAD(adamw_with(AdamWOptions(-1)), value_error, "AdamW", "lr -1"),
            TG_BAD(adamw_with(AdamWOptions(0.1).weight_decay(inf)), value_error, "AdamW",
                   "weight_decay inf"),
        });
}

BOOST_FIXTURE_TEST_CASE(parameters_and_groups, Fixtures) {
    check_table(
        "Parameters and groups",
        {
            TG_BAD(optim::SGD({u}, SGDOptions(0.1)), value_error, "add_param_group", "undefined"),
            TG_BAD(optim::SGD({w * 2.0}, SGDOptions(0.1)), value_error, "add_param_group",
                   "not a leaf", "[2]"),
            TG_BAD(optim::SGD({tg::zeros({2}, tg::kInt64)}, SGDOptions(0.1)), dtype_error,
                   "add_param_group", "int64"),
            TG_BAD(optim::SGD({w, w}, SGDOptions(0.1)), value_error, "add_param_group",
                   "more than one group"),
            TG_BAD(sgd.add_param_group(optim::OptimizerParamGroup({w})), value_error,
                   "more than one group"),
            TG_BAD(optim::SGD({optim::OptimizerParamGroup({w}, AdamOptions(0.1))}, SGDOptions(0.1)),
                   value_error, "SGD", "another optimizer's options"),
            TG_BAD(optim::OptimizerParamGroup({w}).options(), error, "OptimizerParamGroup",
                   "no options"),
        });
}

BOOST_FIXTURE_TEST_CASE(schedulers_and_accumulation, Fixtures) {
    check_table(
        "Schedulers and gradient accumulation",
        {
            TG_BAD(optim::StepLR(sgd, 0), value_error, "StepLR", "step_size", "0"),
            TG_BAD(optim::StepLR(sgd, 1, -0.5), value_error, "StepLR", "gamma"),
            TG_BAD(optim::StepLR(sgd, 1, nan), value_error, "StepLR", "gamma", "nan"),
            TG_BAD(optim::CosineAnnealingLR(sgd, 0), value_error, "CosineAnnealingLR", "T_max"),
            TG_BAD(optim::CosineAnnealingLR(sgd, 10, -1), value_error, "CosineAnnealingLR",
                   "eta_min"),
            TG_BAD(optim::CosineAnnealingLR(sgd, 10, nan), value_error, "eta_min", "nan"),
            TG_BAD(optim::Accumulator(sgd, 0), value_error, "Accumulator", "global batch", "0"),
            TG_BAD(acc.backward(loss(), 0), value_error, "micro_batch=0", ">= 1"),
            TG_BAD(acc.backward(loss(), 5), value_error, "micro_batch=5", "global batch"),
            TG_BAD(acc.backward(u, 2), value_error, "micro_batch=2", "undefined loss"),
            TG_BAD(acc.backward(w * w, 2), shape_error, "mean-reduced", "scalar", "[2]"),
            TG_BAD(acc.backward(w * w, 3, tg::Reduction::None), shape_error, "unreduced",
                   "first dim 3", "[2]"),
            TG_BAD(acc.backward(tg::ones({}), 2), autograd_error, "does not require grad"),
            TG_BAD(acc.step(), error, "Accumulator::step", "0 of 4"),
        });
}
