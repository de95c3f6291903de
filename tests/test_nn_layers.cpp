// tg::nn layers: Linear (under float64 gradcheck, forward, in-place gradient accumulation,
// default init, errors), the activation modules, Dropout, Sequential and the loss modules.
// Module machinery (custom modules, train/eval, to(), init::, anomaly messages): test_nn.cpp.
#define BOOST_TEST_MODULE nn_layers
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "tapegrad/memory.hpp"
#include "tapegrad/nn.hpp"
#include "test_util.hpp"

using tgtest::check_close;
using tgtest::check_throws;
using tgtest::make_const;
using tgtest::make_input;
using tgtest::values_of;

namespace {

/// gradcheck of a single-input module over x and the module's parameters (float64).
template <class Holder>
void check_module_grad(Holder m, const tg::Shape& x_shape, uint64_t seed, double lo = -1,
                       double hi = 1) {
    m->to(tg::kFloat64);
    std::vector<tg::Tensor> inputs{make_input(x_shape, seed, lo, hi)};
    for (auto& p : m->parameters())
        inputs.push_back(p);
    BOOST_TEST_CONTEXT(m->name()) {
        // the module reads its parameters itself: they are the same tensors as inputs[1..]
        BOOST_TEST(
            tg::gradcheck([&](const std::vector<tg::Tensor>& in) { return m(in[0]); }, inputs));
        tg::Tensor w = make_const(m(inputs[0]).sizes(), seed + 100);  // non-uniform upstream grad
        BOOST_TEST(tg::gradcheck(
            [&](const std::vector<tg::Tensor>& in) { return (m(in[0]) * w).sum(); }, inputs));
    }
}

/// gradcheck of a loss module over its input (the target is a constant).
template <class Holder>
void check_loss_grad(Holder loss, const tg::Tensor& input, const tg::Tensor& target) {
    BOOST_TEST_CONTEXT(loss->name()) {
        BOOST_TEST(tg::gradcheck(
            [&](const std::vector<tg::Tensor>& in) { return loss(in[0], target); }, {input}));
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(linear_gradcheck) {
    tg::manual_seed(1);
    check_module_grad(tg::nn::Linear(3, 4), {5, 3}, 1);
    check_module_grad(tg::nn::Linear(3, 2, /*bias=*/false), {4, 3}, 2);
    check_module_grad(tg::nn::Linear(3, 2), {2, 4, 3}, 3);  // leading dims folded
    check_module_grad(tg::nn::Linear(3, 2), {3}, 4);        // a single vector
}

BOOST_AUTO_TEST_CASE(linear_forward_is_x_wt_plus_b) {
    tg::nn::Linear fc(3, 2);
    fc->to(tg::kFloat64);
    tg::Tensor x = make_const({4, 3}, 5);
    tg::Tensor expected = tg::matmul(x, fc->weight.t()) + fc->bias;
    check_close(fc(x), expected, 1e-12, 1e-12);
    BOOST_TEST(tg::shape_str(fc(make_const({2, 5, 3}, 6)).sizes()) == "[2,5,2]");
}

// Note [Gradient accumulated in place]: a second backward adds dW and db straight into the
// existing .grad() buffers (no temporary of the weight's size), with the same values as adding.
BOOST_AUTO_TEST_CASE(linear_accumulates_into_existing_grad_in_place) {
    tg::manual_seed(3);
    tg::nn::Linear lin(256, 128);
    lin->to(tg::kFloat64);
    const tg::Tensor x = make_const({4, 256}, 5), t = make_const({4, 128}, 6);
    auto loss = [&] { return tg::mse_loss(lin(x), t); };
    loss().backward();
    const tg::Tensor w = lin->weight, b = lin->bias;
    const std::vector<double> gw1 = values_of(w.grad()), gb1 = values_of(b.grad());
    std::vector<double> twice_b;
    for (double v : gb1)
        twice_b.push_back(2 * v);
    const void* wbuf = w.grad().data_ptr<double>();
    const void* bbuf = b.grad().data_ptr<double>();

    tg::memory::reset_peak(tg::Device::cpu());
    const int64_t before = tg::memory::stats(tg::Device::cpu()).current_bytes;
    loss().backward();
    const int64_t peak = tg::memory::stats(tg::Device::cpu()).peak_bytes - before;
    BOOST_TEST(w.grad().data_ptr<double>() == wbuf);
    BOOST_TEST(b.grad().data_ptr<double>() == bbuf);
    // the forward output, the loss's temporaries and dy, but no 128x256 weight-gradient temporary
    BOOST_TEST(peak < int64_t(128 * 256 * sizeof(double)) / 4);
    std::vector<double> twice;
    for (double v : gw1)
        twice.push_back(2 * v);
    check_close(w.grad(), twice, 1e-15, 1e-12);
    check_close(b.grad(), twice_b, 1e-15, 1e-12);

    // autograd::grad returns the gradient and leaves .grad() alone
    const std::vector<double> gw2 = values_of(w.grad());
    auto g = tg::autograd::grad({loss()}, {w});
    check_close(g[0], gw1, 1e-15, 1e-12);
    check_close(w.grad(), gw2, 0, 0);

    // a hook on the weight still sees the gradient (the in-place path steps aside)
    int calls = 0;
    w.register_hook([&](const tg::Tensor& gr) {
        ++calls;
        return gr;
    });
    loss().backward();
    BOOST_TEST(calls == 1);
    for (size_t i = 0; i < twice.size(); ++i)
        twice[i] = 3 * gw1[i];
    check_close(w.grad(), twice, 1e-15, 1e-12);
}

BOOST_AUTO_TEST_CASE(linear_default_init_is_libtorch) {
    tg::manual_seed(0);
    tg::nn::Linear fc(100, 50);
    BOOST_TEST(tg::shape_str(fc->weight.sizes()) == "[50,100]");
    BOOST_TEST(tg::shape_str(fc->bias.sizes()) == "[50]");
    // kaiming_uniform_(a = √5) over fan_in 100 and the bias rule both give U(±1/√100)
    double bound = 1.0 / std::sqrt(100.0), wmax = 0, bmax = 0;
    for (double v : values_of(fc->weight))
        wmax = std::max(wmax, std::abs(v));
    for (double v : values_of(fc->bias))
        bmax = std::max(bmax, std::abs(v));
    BOOST_TEST(wmax <= bound);
    BOOST_TEST(wmax > 0.9 * bound);  // 5000 draws reach near the bound
    BOOST_TEST(bmax <= bound);
    BOOST_TEST(bmax > 0.5 * bound);
    BOOST_TEST(fc->weight.is_leaf());
    BOOST_TEST(fc->weight.requires_grad());
    BOOST_TEST(!fc->weight.grad().defined());
}

BOOST_AUTO_TEST_CASE(linear_errors_name_layer_and_shapes) {
    tg::nn::Linear fc(784, 10);
    check_throws<tg::shape_error>(
        [&] {
            fc(tg::zeros({64, 100}));
        },
        {"Linear(784, 10)", "[64,100]", "784"}, "wrong last dim");
    check_throws<tg::dtype_error>(
        [&] {
            fc(tg::zeros({2, 784}, tg::kFloat64));
        },
        {"Linear(784, 10)", "float"}, "wrong dtype");
    check_throws<tg::shape_error>([&] { tg::nn::Linear(-1, 3); }, {"Linear(-1, 3)"}, "bad size");
}

BOOST_AUTO_TEST_CASE(activation_gradcheck) {
    // values kept away from the kinks of relu / leaky_relu
    check_module_grad(tg::nn::ReLU(), {3, 4}, 10, 0.1, 1.0);
    check_module_grad(tg::nn::ReLU(), {3, 4}, 11, -1.0, -0.1);
    check_module_grad(tg::nn::Tanh(), {3, 4}, 12);
    check_module_grad(tg::nn::Sigmoid(), {3, 4}, 13);
    check_module_grad(tg::nn::GELU(), {3, 4}, 14);
    check_module_grad(tg::nn::LeakyReLU(0.2), {3, 4}, 15, 0.1, 1.0);
    check_module_grad(tg::nn::LeakyReLU(0.2), {3, 4}, 16, -1.0, -0.1);
    check_module_grad(tg::nn::Softmax(1), {3, 4}, 17);
    check_module_grad(tg::nn::LogSoftmax(1), {3, 4}, 18);
    check_module_grad(tg::nn::Softmax(0), {3, 4}, 19);
    check_module_grad(tg::nn::Flatten(), {2, 3, 2}, 20);
    tg::nn::Dropout eval_dropout(0.3);
    eval_dropout->eval();
    check_module_grad(eval_dropout, {3, 4}, 21);
}

BOOST_AUTO_TEST_CASE(dropout_train_gradcheck_with_fixed_mask) {
    tg::nn::Dropout d(0.4);
    tg::Tensor x = make_input({4, 5}, 22);
    // re-seeding inside fn gives every evaluation the same mask
    BOOST_TEST(tg::gradcheck(
        [&](const std::vector<tg::Tensor>& in) {
            tg::manual_seed(99);
            return d(in[0]);
        },
        {x}));
}

BOOST_AUTO_TEST_CASE(loss_gradcheck) {
    tg::Tensor x = make_input({4, 3}, 30);
    tg::Tensor y = make_const({4, 3}, 31);
    for (auto r : {tg::Reduction::Mean, tg::Reduction::Sum, tg::Reduction::None}) {
        check_loss_grad(tg::nn::MSELoss(r), x, y);
        check_loss_grad(tg::nn::L1Loss(r), x, y);
        check_loss_grad(tg::nn::BCEWithLogitsLoss(r), x, make_const({4, 3}, 32, 0, 1));
        tg::Tensor labels = tg::tensor(std::vector<int64_t>{0, 2, 1, 2});
        check_loss_grad(tg::nn::CrossEntropyLoss(r), x, labels);
        check_loss_grad(tg::nn::NLLLoss(r), x, labels);
    }
    // the modules compute exactly the loss ops
    tg::nn::CrossEntropyLoss ce;
    tg::Tensor labels = tg::tensor(std::vector<int64_t>{1, 0, 2, 2});
    check_close(ce(x, labels), tg::cross_entropy(x, labels), 0, 0);
    check_close(tg::nn::NLLLoss()(tg::log_softmax(x, 1), labels), tg::cross_entropy(x, labels),
                1e-12, 1e-12);
}

BOOST_AUTO_TEST_CASE(dropout_train_eval) {
    tg::manual_seed(3);
    tg::nn::Sequential seq(tg::nn::Dropout(0.5));
    tg::Tensor x = tg::ones({1000});
    std::vector<double> y = values_of(seq(x));
    int zeros = 0, twos = 0;
    for (double v : y) {
        zeros += v == 0.0;
        twos += v == 2.0;
    }
    BOOST_TEST(zeros + twos == 1000);  // dropped, or scaled by 1/(1-p)
    BOOST_TEST(zeros > 400);
    BOOST_TEST(zeros < 600);
    seq->eval();
    for (double v : values_of(seq(x)))
        BOOST_TEST_REQUIRE(v == 1.0);
    seq->train();
    bool changed = values_of(seq(x)) != std::vector<double>(1000, 1.0);
    BOOST_TEST(changed);
    check_throws<tg::error>([] { tg::nn::Dropout(1.0); }, {"Dropout", "p"}, "p = 1");
}

BOOST_AUTO_TEST_CASE(sequential_names_indexing_iteration) {
    tg::nn::Sequential seq(tg::nn::Linear(4, 8), tg::nn::ReLU(), tg::nn::Linear(8, 2));
    seq->push_back(tg::nn::Sigmoid());
    BOOST_TEST(seq->size() == 4u);
    std::vector<std::string> names;
    for (auto& [n, p] : seq->named_parameters())
        names.push_back(n);
    BOOST_TEST(names == (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}),
               boost::test_tools::per_element());
    BOOST_TEST(seq[1]->name() == "ReLU");
    BOOST_TEST(seq->at(3)->name() == "Sigmoid");
    BOOST_TEST(seq->at<tg::nn::LinearImpl>(2).out_features() == 2);
    check_throws<tg::shape_error>([&] { seq[4]; }, {"Sequential", "4"}, "index out of range");
    check_throws<tg::error>([&] { seq->at<tg::nn::LinearImpl>(1); }, {"ReLU"}, "wrong type");
    std::vector<std::string> kinds;
    for (auto& m : *seq)
        kinds.push_back(m->name());
    BOOST_TEST(kinds == (std::vector<std::string>{"Linear", "ReLU", "Linear", "Sigmoid"}),
               boost::test_tools::per_element());

    seq->to(tg::kFloat64);
    tg::Tensor x = make_const({3, 4}, 40);
    auto& l0 = seq->at<tg::nn::LinearImpl>(0);
    auto& l2 = seq->at<tg::nn::LinearImpl>(2);
    tg::Tensor manual =
        tg::sigmoid(tg::linear(tg::relu(tg::linear(x, l0.weight, l0.bias)), l2.weight, l2.bias));
    check_close(seq(x), manual, 0, 0);
    check_module_grad(seq, {3, 4}, 41);
    tg::nn::Sequential empty;
    BOOST_TEST(empty->is_empty());
}

BOOST_AUTO_TEST_CASE(loss_module_single_input_call_throws) {
    tg::nn::Sequential seq(tg::nn::MSELoss{});
    check_throws<tg::error>([&] { seq(tg::ones({2})); }, {"MSELoss"}, "loss in Sequential");
}
