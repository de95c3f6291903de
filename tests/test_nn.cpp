// tg::nn module machinery: custom modules (registration, names, record scopes), zero_grad and
// train/eval, to(dtype) keeping parameter identity, init:: functions, anomaly messages naming
// the layer. The layers themselves: test_nn_layers.cpp.
#define BOOST_TEST_MODULE nn
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/nn.hpp"
#include "test_util.hpp"

using tgtest::check_close;
using tgtest::check_throws;
using tgtest::values_of;

namespace {

/// A module that remembers the record scope its forward ran in.
struct ProbeImpl : tg::nn::Module {
    ProbeImpl() : Module("Probe") {}
    tg::Tensor forward(const tg::Tensor& x) override {
        seen = tg::autograd::RecordScope::current();
        return x;
    }
    std::string seen;
};
TG_MODULE(Probe);

struct NetImpl : tg::nn::Module {
    NetImpl() : Module("Net") {
        fc1 = register_module("fc1", tg::nn::Linear(4, 3));
        probe = register_module("probe", Probe());
        fc2 = register_module("fc2", tg::nn::Linear(3, 2, false));
        scale = register_parameter("scale", tg::ones({2}));
    }
    tg::Tensor forward(const tg::Tensor& x) override {
        return fc2(probe(tg::relu(fc1(x)))) * scale;
    }
    tg::nn::Linear fc1{nullptr}, fc2{nullptr};
    Probe probe{nullptr};
    tg::Tensor scale;
};
TG_MODULE(Net);

}  // namespace

BOOST_AUTO_TEST_CASE(custom_module_registration_and_scopes) {
    Net net;
    std::vector<std::string> names;
    for (auto& [n, p] : net->named_parameters())
        names.push_back(n);
    BOOST_TEST(names == (std::vector<std::string>{"scale", "fc1.weight", "fc1.bias", "fc2.weight"}),
               boost::test_tools::per_element());
    BOOST_TEST(net->named_parameters(false).size() == 1u);
    BOOST_TEST(net->parameters().size() == 4u);
    BOOST_TEST(net->named_children().size() == 3u);
    BOOST_TEST(net->named_modules().size() == 4u);
    BOOST_TEST(net->fc1->label() == "fc1");
    BOOST_TEST(tg::nn::Linear(2, 2)->label() == "Linear");
    tg::nn::Sequential seq(tg::nn::Linear(2, 2));
    BOOST_TEST(seq[0]->label() == "Linear[0]");
    net(tg::zeros({2, 4}));
    BOOST_TEST(tgtest::contains(net->probe->seen, "probe"), "scope was " << net->probe->seen);
    std::ostringstream os;
    os << *net;
    BOOST_TEST(
        tgtest::contains(os.str(), "(fc1): Linear(in_features=4, out_features=3, bias=true)"),
        os.str());
}

BOOST_AUTO_TEST_CASE(zero_grad_train_eval) {
    Net net;
    (net(tg::ones({2, 4})).sum()).backward();
    for (auto& p : net->parameters())
        BOOST_TEST(p.grad().defined());
    net->zero_grad(false);
    for (auto& p : net->parameters()) {
        BOOST_TEST_REQUIRE(p.grad().defined());
        for (double v : values_of(p.grad()))
            BOOST_TEST(v == 0.0);
    }
    net->zero_grad();
    for (auto& p : net->parameters())
        BOOST_TEST(!p.grad().defined());

    BOOST_TEST(net->is_training());
    BOOST_TEST(net->fc1->is_training());
    net->eval();
    BOOST_TEST(!net->is_training());
    BOOST_TEST(!net->fc1->is_training());
    net->train();
    BOOST_TEST(net->fc2->is_training());
}

BOOST_AUTO_TEST_CASE(to_dtype_keeps_parameter_identity) {
    tg::nn::Linear fc(3, 2);
    tg::Tensor w = fc->weight;  // a handle held elsewhere (e.g. by an optimizer)
    std::vector<double> before = values_of(w);
    fc(tg::ones({1, 3})).sum().backward();
    fc->to(tg::kFloat64);
    BOOST_TEST(w.dtype() == tg::kFloat64);
    BOOST_TEST(fc->bias.dtype() == tg::kFloat64);
    BOOST_TEST(w.is_leaf());
    BOOST_TEST(w.requires_grad());
    BOOST_TEST(w.grad().dtype() == tg::kFloat64);
    check_close(w, before, 0, 0);  // float32 -> float64 is exact
    fc->to(tg::Device::cpu());     // same device: nothing changes
    BOOST_TEST(w.dtype() == tg::kFloat64);
    check_throws<tg::dtype_error>([&] { fc->to(tg::kInt64); }, {"Linear", "int64"}, "int64");
}

BOOST_AUTO_TEST_CASE(init_functions) {
    tg::manual_seed(5);
    tg::Tensor w = tg::empty({64, 32});
    w.requires_grad_(true);
    auto impl = w.impl();
    tg::nn::init::xavier_uniform_(w);
    double b = std::sqrt(6.0 / 96.0), m = 0;
    for (double v : values_of(w))
        m = std::max(m, std::abs(v));
    BOOST_TEST(m <= b);
    BOOST_TEST(m > 0.9 * b);
    BOOST_TEST(w.impl() == impl);  // in place
    BOOST_TEST(w.is_leaf());
    tg::nn::init::kaiming_uniform_(w);  // a = 0: bound √2·√(3/32)
    b = std::sqrt(2.0) * std::sqrt(3.0 / 32.0);
    m = 0;
    for (double v : values_of(w))
        m = std::max(m, std::abs(v));
    BOOST_TEST(m <= b);
    BOOST_TEST(m > 0.9 * b);
    tg::nn::init::normal_(w, 3.0, 0.01);
    double mean = 0;
    for (double v : values_of(w))
        mean += v / double(w.numel());
    BOOST_TEST(std::abs(mean - 3.0) < 0.01);
    tg::nn::init::zeros_(w);
    for (double v : values_of(w))
        BOOST_TEST_REQUIRE(v == 0.0);
    tg::nn::init::ones_(w);
    for (double v : values_of(w))
        BOOST_TEST_REQUIRE(v == 1.0);
    tg::nn::init::uniform_(w, 2.0, 3.0);
    for (double v : values_of(w))
        BOOST_TEST_REQUIRE((v >= 2.0 && v <= 3.0));
    BOOST_TEST(!w.grad_fn());
    BOOST_TEST(tg::nn::init::calculate_gain(tg::nn::init::Nonlinearity::Tanh) == 5.0 / 3.0);
    tg::Tensor v1 = tg::empty({4});
    check_throws<tg::shape_error>([&] { tg::nn::init::xavier_uniform_(v1); }, {"[4]"}, "1-D fan");
}

BOOST_AUTO_TEST_CASE(anomaly_messages_name_the_layer) {
    Net net;
    {
        tg::NoGradGuard guard;
        net->fc1->weight.fill_(std::nan(""));
    }
    tg::autograd::AnomalyMode anomaly;
    check_throws<tg::autograd_error>(
        [&] {
            net(tg::ones({2, 4}));
        },
        {"linear", "fc1"}, "NaN produced inside fc1");
    tg::nn::Sequential seq(tg::nn::Linear(4, 2));
    {
        tg::NoGradGuard guard;
        seq[0]->parameters()[0].fill_(std::nan(""));
    }
    check_throws<tg::autograd_error>(
        [&] {
            seq(tg::ones({2, 4}));
        },
        {"Linear[0]"}, "NaN produced inside a Sequential item");
}
