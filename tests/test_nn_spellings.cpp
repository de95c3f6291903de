/// The module spellings LibTorch programs use (issue 29), as LibTorch 1.13 has them: plain Tensor
/// parameter members, OrderedDict from named_*(), public register_*, as<>/apply/modules, the
/// modules' *Options classes with LibTorch's defaults and printing, nn::Functional, a
/// SequentialImpl subclass, Linear(0, n), Conv2d padding(0)/kSame/kValid/padding_mode, and
/// clip_grad_norm_'s signature. Expected values come from scripts/libtorch_reference.cpp
/// (ported_spellings), run against LibTorch 1.13.
#define BOOST_TEST_MODULE test_nn_spellings
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tgtest::check_close;
using tgtest::check_throws;
using tgtest::from_values;
using tgtest::values_of;
namespace nn = tg::nn;

namespace {

template <class M>
std::string printed(const M& m) {
    std::ostringstream os;
    os << *m;
    return os.str();
}

struct NetImpl : nn::Module {
    NetImpl() : fc(3, 2), ln(nn::LayerNormOptions({2})) {
        register_module("fc", fc);
        register_module("ln", ln);
        register_buffer("steps", tg::zeros({1}));
        register_parameter("scale", tg::ones({1}));
    }
    tg::Tensor forward(tg::Tensor x) { return ln(fc(x)); }
    nn::Linear fc;
    nn::LayerNorm ln;
};
TG_MODULE(Net);

/// LibTorch's custom-dataset network: a Sequential built by push_back in a subclass.
struct StackImpl : nn::SequentialImpl {
    StackImpl() {
        using namespace tg::nn;
        tg::ExpandingArray<2> shape({-1, 4});
        push_back(Functional(tg::reshape, shape));
        push_back(Linear(4, 3));
        push_back(Functional(tg::relu));
        push_back(Functional([](tg::Tensor x) { return tg::log_softmax(x, 1); }));
    }
};
TG_MODULE(Stack);

}  // namespace

BOOST_AUTO_TEST_CASE(parameter_members_are_plain_tensors) {
    nn::Linear lin(3, 2);
    nn::LayerNorm ln(nn::LayerNormOptions({2}));
    nn::Conv2d conv(nn::Conv2dOptions(1, 2, 3));
    // a braced list mixing Linear's, LayerNorm's and Conv2d's members deduces (it did not when
    // Linear's were nn::Parameter)
    std::vector<tg::Tensor> params{lin->weight, ln->weight, conv->bias, lin->bias};
    BOOST_TEST(params.size() == 4u);
    auto same = [](const tg::Tensor& a, const tg::Tensor& b) { return a.impl() == b.impl(); };
    BOOST_TEST(same(params[0], lin->parameters()[0]));
    tg::Tensor& w = lin->weight;  // the member is a Tensor, assignable as one
    w = tg::zeros({2, 3});
    BOOST_TEST(tg::shape_str(lin->weight.sizes()) == "[2,3]");
}

BOOST_AUTO_TEST_CASE(named_parameters_is_an_ordered_dict) {
    Net net;
    auto params = net->named_parameters();
    BOOST_TEST((params.keys() ==
                std::vector<std::string>{"scale", "fc.weight", "fc.bias", "ln.weight", "ln.bias"}));
    BOOST_TEST(params.size() == 5u);
    BOOST_TEST(!params.is_empty());
    BOOST_TEST(params["fc.weight"].impl() == net->fc->weight.impl());
    BOOST_TEST(params.contains("ln.bias"));
    BOOST_TEST(!params.contains("ln.gamma"));
    BOOST_TEST(params.find("fc.bias")->impl() == net->fc->bias.impl());
    BOOST_TEST(params.find("nope") == nullptr);
    BOOST_TEST(params.key_description() == "Key");
    check_throws<tg::value_error>([&] { params["nope"]; }, {"Key 'nope' is not defined"});
    check_throws<tg::shape_error>([&] { params[size_t(9)]; }, {"Index 9 is out of bounds"});
    // items: key(), value(), pair(), ->, *, and structured bindings
    std::vector<std::string> seen;
    for (auto& item : params) {
        BOOST_TEST(item.value().impl() == item.pair().second.impl());
        BOOST_TEST(item->dim() == (*item).dim());
        seen.push_back(item.key());
    }
    BOOST_TEST(seen == params.keys());
    size_t n = 0;
    for (auto& [name, p] : params)
        n += (params[name].impl() == p.impl());
    BOOST_TEST(n == 5u);
    BOOST_TEST(params.values().size() == 5u);
    BOOST_TEST(params.items().front().key() == "scale");
    BOOST_TEST(params.back().key() == "ln.bias");
    BOOST_TEST(net->named_parameters(false).keys() == std::vector<std::string>{"scale"});
    auto buffers = net->named_buffers();
    BOOST_TEST(buffers.keys() == std::vector<std::string>{"steps"});
    auto children = net->named_children();
    BOOST_TEST(children.key_description() == "Submodule");
    BOOST_TEST((children.keys() == std::vector<std::string>{"fc", "ln"}));
    check_throws<tg::value_error>([&] { children["x"]; }, {"Submodule 'x' is not defined"});
    auto modules = net->named_modules();
    BOOST_TEST((modules.keys() == std::vector<std::string>{"", "fc", "ln"}));
    BOOST_TEST(modules[""].get() == net.get());
    BOOST_TEST(net->named_modules("net", false).keys() ==
               (std::vector<std::string>{"net.fc", "net.ln"}));
    BOOST_TEST(net->modules().size() == 3u);
    BOOST_TEST(net->modules(false).size() == 2u);
}

BOOST_AUTO_TEST_CASE(ordered_dict_on_its_own) {
    tg::OrderedDict<std::string, int> d("Thing");
    d.insert("b", 2);
    d.insert("a", 1);
    BOOST_TEST((d.keys() == std::vector<std::string>{"b", "a"}));  // insertion order
    check_throws<tg::value_error>([&] { d.insert("a", 3); }, {"Thing 'a' already defined"});
    d["a"] = 5;
    BOOST_TEST(d[size_t(1)].value() == 5);
    d.erase("b");
    BOOST_TEST(d.size() == 1u);
    BOOST_TEST(d["a"] == 5);
    check_throws<tg::value_error>([&] { d.erase("b"); }, {"Key 'b' doesn't exist"});
    tg::OrderedDict<std::string, int> e;
    e.insert("c", 7);
    d.update(e);
    BOOST_TEST((d.pairs() == std::vector<std::pair<std::string, int>>{{"a", 5}, {"c", 7}}));
    d.clear();
    BOOST_TEST(d.is_empty());
    check_throws<tg::shape_error>([&] { d.front(); }, {"front() on an empty OrderedDict"});
}

BOOST_AUTO_TEST_CASE(register_functions_are_public_and_as_apply_work) {
    auto m = std::make_shared<nn::Module>("Bag");
    tg::Tensor w = m->register_parameter("w", tg::ones({2}));
    m->register_buffer("count", tg::zeros({1}, tg::kInt64));
    m->register_module("fc", nn::Linear(2, 2));
    BOOST_TEST(w.requires_grad());
    BOOST_TEST(m->parameters().size() == 3u);
    BOOST_TEST(m->buffers().size() == 1u);
    int linears = 0, all = 0;
    m->apply([&](nn::Module& mod) {
        ++all;
        if (auto* fc = mod.as<nn::Linear>()) {  // the holder's type names its Impl
            ++linears;
            BOOST_TEST(fc->out_features() == 2);
        }
    });
    BOOST_TEST(all == 2);
    BOOST_TEST(linears == 1);
    std::vector<std::string> names;
    m->apply([&](const std::string& name, nn::Module&) { names.push_back(name); });
    BOOST_TEST((names == std::vector<std::string>{"", "fc"}));
    BOOST_TEST(m->as<nn::LinearImpl>() == nullptr);
    m->to(tg::Device::cpu(), tg::kFloat64);
    BOOST_TEST((w.dtype() == tg::kFloat64));
    m->to(tg::kFloat32, /*non_blocking=*/true);
    BOOST_TEST((w.dtype() == tg::kFloat32));
}

BOOST_AUTO_TEST_CASE(functional_modules_and_a_sequential_subclass) {
    Stack net;
    tg::manual_seed(0);
    tg::Tensor x = tg::randn({2, 2, 2});
    tg::Tensor y = net->forward(x);
    BOOST_TEST(tg::shape_str(y.sizes()) == "[2,3]");
    auto& fc = net->at<nn::LinearImpl>(1);
    check_close(y, tg::log_softmax(tg::relu(fc.forward(x.reshape({-1, 4}))), 1), 0, 0);
    BOOST_TEST(net->size() == 4u);
    BOOST_TEST(net->parameters().size() == 2u);
    BOOST_TEST(printed(nn::Functional(tg::relu)) == "Functional()");
    BOOST_TEST(tgtest::contains(printed(net), "(0): Functional()"));
    // arguments after the input are bound as std::bind binds them: max_pool2d(x, 2, stride, 0,
    // 1, false)
    tg::ExpandingArray<2> stride({1, 2});
    nn::Functional pool(tg::max_pool2d, 2, stride, 0, 1, false);
    tg::Tensor img = from_values({1, 5, 2, 0, 3, 4, 9, 1, 7, 2, 8, 6}, {1, 1, 3, 4});
    check_close(pool(img), tg::max_pool2d(img, 2, {1, 2}), 0, 0);
    check_throws<tg::value_error>([] { nn::Functional(nn::FunctionalImpl::Function()); },
                                  {"Functional", "empty"});
}

BOOST_AUTO_TEST_CASE(linear_options_and_empty_features) {
    nn::Linear l(nn::LinearOptions(3, 4).bias(false));
    BOOST_TEST(!l->bias.defined());
    BOOST_TEST(l->options.in_features() == 3);
    BOOST_TEST(printed(l) == "Linear(in_features=3, out_features=4, bias=false)");
    // no inputs: the weight has no elements, the bias is zero and the output is the bias
    // (PyTorch's; LibTorch 1.13 throws "from is out of bounds for float" there)
    nn::Linear none(0, 3);
    BOOST_TEST(tg::shape_str(none->weight.sizes()) == "[3,0]");
    check_close(none->bias, {0, 0, 0}, 0, 0);
    tg::Tensor y = none(tg::ones({2, 0}));
    BOOST_TEST(tg::shape_str(y.sizes()) == "[2,3]");
    check_close(y, {0, 0, 0, 0, 0, 0}, 0, 0);
    y.sum().backward();
    check_close(none->bias.grad(), {2, 2, 2}, 0, 0);
    nn::Linear no_outputs(3, 0);
    BOOST_TEST(tg::shape_str(no_outputs(tg::ones({2, 3})).sizes()) == "[2,0]");
    check_throws<tg::shape_error>([] { nn::Linear(-1, 3); }, {"Linear(-1, 3)"});
}

BOOST_AUTO_TEST_CASE(activation_options_as_libtorch) {
    BOOST_TEST(printed(nn::ReLU()) == "ReLU()");
    BOOST_TEST(printed(nn::ReLU(true)) == "ReLU(inplace=true)");
    BOOST_TEST(printed(nn::ReLU(nn::ReLUOptions().inplace(true))) == "ReLU(inplace=true)");
    BOOST_TEST(printed(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))) ==
               "LeakyReLU(negative_slope=0.2)");
    BOOST_TEST(printed(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true))) ==
               "LeakyReLU(negative_slope=0.2, inplace=true)");
    BOOST_TEST(nn::LeakyReLU()->negative_slope() == 0.01);  // LibTorch's default
    BOOST_TEST(printed(nn::Softmax(nn::SoftmaxOptions(0))) == "Softmax(dim=0)");
    BOOST_TEST(printed(nn::LogSoftmax(1)) == "LogSoftmax(dim=1)");
    BOOST_TEST(printed(nn::Flatten(nn::FlattenOptions().start_dim(0).end_dim(2))) ==
               "Flatten(start_dim=0, end_dim=2)");
    BOOST_TEST(printed(nn::Flatten()) == "Flatten(start_dim=1, end_dim=-1)");
    // GELU's tanh form (LibTorch 1.13's values)
    const tg::Tensor x = from_values({-2.0, -0.5, 0.0, 0.3, 1.7, 4.0}, {6});
    check_close(nn::GELU(nn::GELUOptions().approximate("tanh"))(x),
                {-0.045402305912224938, -0.15428599017485606, 0, 0.18537092354275922,
                 1.624105895551156, 3.9999297540518075},
                1e-15, 1e-14);
    check_close(nn::GELU()(x),
                {-0.045500263896358417, -0.15426876936299344, 0, 0.1853734266566858,
                 1.6242387133104768, 3.9998733150326675},
                1e-15, 1e-14);
    check_throws<tg::value_error>([] { nn::GELU(nn::GELUOptions().approximate("fast")); },
                                  {"GELU", "fast"});
}

BOOST_AUTO_TEST_CASE(inplace_activations_write_the_input_and_keep_backward_exact) {
    for (bool leaky : {false, true}) {
        BOOST_TEST_CONTEXT((leaky ? "LeakyReLU" : "ReLU")) {
            tg::Tensor w = from_values({-1.0, 2.0, -3.0, 4.0}, {4}).requires_grad_(true);
            tg::Tensor h = w * 1.0;  // not a leaf: it may be written in place
            nn::Sequential inplace(nn::ReLU(true));
            if (leaky)
                inplace = nn::Sequential(
                    nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.1).inplace(true)));
            tg::Tensor y = inplace->forward(h);
            BOOST_TEST(y.impl() == h.impl());  // the result is the input
            const double s = leaky ? 0.1 : 0.0;
            check_close(h, {-1.0 * s, 2.0, -3.0 * s, 4.0}, 0, 0);
            (y * from_values({1, 2, 3, 4}, {4})).sum().backward();
            check_close(w.grad(), {1 * s, 2, 3 * s, 4}, 0, 0);
        }
    }
    check_throws<tg::value_error>(
        [] { nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(-0.5).inplace(true)); },
        {"LeakyReLU", "inplace"});
    tg::Tensor h = tg::ones({4}) * 1.0;
    nn::Dropout drop(nn::DropoutOptions(0.5).inplace(true));
    tg::Tensor y = drop(h);
    BOOST_TEST(y.impl() == h.impl());
    for (double v : values_of(h))
        BOOST_TEST((v == 0.0 || v == 2.0));
    BOOST_TEST(printed(drop) == "Dropout(p=0.5, inplace=true)");
    BOOST_TEST(printed(nn::Dropout2d(nn::Dropout2dOptions(0.3))) ==
               "Dropout2d(p=0.3, inplace=false)");
}

BOOST_AUTO_TEST_CASE(norm_and_loss_options_as_libtorch) {
    nn::BatchNorm1d bn(nn::BatchNorm1dOptions(4).momentum(0.2).affine(false));
    BOOST_TEST(!bn->weight.defined());
    BOOST_TEST(bn->options.momentum().value() == 0.2);
    nn::BatchNorm2d bn2(nn::BatchNorm2dOptions(3));
    BOOST_TEST(bn2->weight.defined());
    BOOST_TEST(printed(nn::MSELoss(nn::MSELossOptions(tg::kSum))) == "MSELoss()");
    BOOST_TEST((nn::MSELoss(tg::kSum)->options.reduction() == tg::kSum));
    BOOST_TEST((nn::L1Loss()->options.reduction() == tg::kMean));
    auto ce =
        nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().ignore_index(2).label_smoothing(0.1));
    BOOST_TEST(printed(ce) == "CrossEntropyLoss()");
    const tg::Tensor logits = from_values({0.3, -1.2, 2.0, 0.0, -0.4, 1.1}, {2, 3});
    const tg::Tensor labels = tg::tensor(std::vector<int64_t>{0, 2});
    check_close(ce(logits, labels), tg::cross_entropy(logits, labels, tg::kMean, {}, 2, 0.1), 0, 0);
    auto nll = nn::NLLLoss(nn::NLLLossOptions().weight(from_values({1, 2, 3}, {3})));
    check_close(nll(logits, labels),
                tg::nll_loss(logits, labels, tg::kMean, from_values({1, 2, 3}, {3})), 0, 0);
    // BCEWithLogitsLoss with pos_weight and weight (LibTorch 1.13's values)
    const tg::Tensor target = from_values({1.0, 0.0, 1.0, 0.5, 0.0, 1.0}, {2, 3});
    const tg::Tensor pw = from_values({2.0, 0.5, 1.5}, {3});
    check_close(
        nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().pos_weight(pw))(logits, target),
        {0.59102066395876018}, 1e-15, 1e-14);
    check_close(nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions()
                                          .weight(from_values({1.0, 3.0, 0.5}, {3}))
                                          .pos_weight(pw)
                                          .reduction(tg::kSum))(logits, target),
                {4.7880219211097268}, 1e-15, 1e-14);
    check_close(nn::BCEWithLogitsLoss()(logits, target),
                tg::binary_cross_entropy_with_logits(logits, target), 1e-15, 1e-14);
    const tg::Tensor p = from_values({0.1, 0.9, 0.5}, {3}), t = from_values({0.0, 1.0, 0.25}, {3});
    check_close(nn::BCELoss(tg::kSum)(p, t), tg::binary_cross_entropy(p, t, {}, tg::kSum), 0, 0);
    check_close(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(p, t),
                tg::smooth_l1_loss(p, t, tg::kMean, 0.5), 0, 0);
    check_close(nn::HuberLoss(nn::HuberLossOptions().delta(0.2))(p, t),
                tg::huber_loss(p, t, tg::kMean, 0.2), 0, 0);
}

BOOST_AUTO_TEST_CASE(conv_padding_options_as_libtorch) {
    // padding(0) with an int literal is unambiguous (it was not: 0 is also a null const char*)
    nn::Conv2d plain(nn::Conv2dOptions(1, 1, 2).stride(1).padding(0).bias(false));
    BOOST_TEST(printed(plain) == "Conv2d(1, 1, kernel_size=[2, 2], stride=[1, 1], bias=false)");
    // "same" with an even kernel pads one more at the end; padding_mode fills the padding
    // (LibTorch 1.13's values)
    const tg::Tensor img = tg::arange(0, 12, 1, tg::kFloat64).reshape({1, 1, 3, 4}) * 0.5 - 1.0;
    const tg::Tensor w = from_values({1.0, -2.0, 0.5, 3.0}, {1, 1, 2, 2});
    const std::vector<std::pair<tg::PadMode, std::vector<double>>> cases = {
        {tg::kZeros, {5, 6.25, 7.5, 1.75, 10, 11.25, 12.5, 4.75, -4, -4.5, -5, 4.5}},
        {tg::kReflect, {5, 6.25, 7.5, 7.75, 10, 11.25, 12.5, 12.75, 1, 2.25, 3.5, 3.75}},
        {tg::kReplicate, {5, 6.25, 7.5, 8.25, 10, 11.25, 12.5, 13.25, 8, 9.25, 10.5, 11.25}},
        {tg::kCircular, {5, 6.25, 7.5, 6.75, 10, 11.25, 12.5, 11.75, -6, -4.75, -3.5, -4.25}},
    };
    for (const auto& [mode, expected] : cases) {
        nn::Conv2d conv(
            nn::Conv2dOptions(1, 1, 2).bias(false).padding(tg::kSame).padding_mode(mode));
        conv->to(tg::kFloat64);
        {
            tg::NoGradGuard no_grad;
            conv->weight.copy_(w);
        }
        BOOST_TEST_CONTEXT("padding_mode " << int(mode)) {
            check_close(conv(img), expected, 1e-13, 1e-13);
        }
    }
    nn::Conv2d reflect1(
        nn::Conv2dOptions(1, 1, 2).bias(false).padding(1).padding_mode(tg::kReflect));
    reflect1->to(tg::kFloat64);
    {
        tg::NoGradGuard no_grad;
        reflect1->weight.copy_(w);
    }
    check_close(reflect1(img), {-3.75, -4, -2.75, -1.5, -1.25, 5.25, 5, 6.25, 7.5, 7.75,
                                10.25, 10, 11.25, 12.5, 12.75, 1.25, 1, 2.25, 3.5, 3.75},
                1e-13, 1e-13);
    BOOST_TEST(printed(reflect1) ==
               "Conv2d(1, 1, kernel_size=[2, 2], stride=[1, 1], padding=[1, 1], bias=false, "
               "padding_mode=kReflect)");
    nn::Conv2d valid(nn::Conv2dOptions(1, 1, 2).padding(tg::kValid));
    BOOST_TEST(tg::shape_str(valid(tg::ones({1, 1, 3, 4})).sizes()) == "[1,1,2,3]");
    BOOST_TEST(printed(valid) ==
               "Conv2d(1, 1, kernel_size=[2, 2], stride=[1, 1], padding='valid')");
    nn::Conv1d same1(nn::Conv1dOptions(1, 2, 4).padding(tg::kSame));
    BOOST_TEST(tg::shape_str(same1(tg::ones({1, 1, 7})).sizes()) == "[1,2,7]");
    check_throws<tg::value_error>(
        [] { nn::Conv2d(nn::Conv2dOptions(1, 2, 3).padding(tg::kSame).stride(2)); },
        {"padding='same' is not supported for strided convolutions"});
    check_throws<tg::value_error>(
        [] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(1, 2, 3).padding_mode(tg::kReflect)); },
        {"ConvTranspose2d", "kZeros"});
}

BOOST_AUTO_TEST_CASE(clip_grad_norm_returns_the_total_as_libtorch) {
    const double inf = std::numeric_limits<double>::infinity();
    tg::Tensor p = tg::zeros({2}, tg::kFloat64).requires_grad_(true);
    tg::Tensor q = tg::zeros({1}, tg::kFloat64).requires_grad_(true);
    auto grads = [&] {
        p.set_grad(from_values({3.0, -4.0}, {2}));
        q.set_grad(from_values({12.0}, {1}));
    };
    // LibTorch 1.13's totals and clipped gradients for max_norm 5
    const std::vector<std::tuple<double, double, std::vector<double>>> cases = {
        {0.0, 2.0, {3, -4, 12}},  // norm_type 0: the number of gradients, as LibTorch's
        {3.0, 12.207054953820634, {1.2287975132370239, -1.6383966843160318, 4.9151900529480956}},
        {inf, 12.0, {1.249999895833342, -1.6666665277777895, 4.9999995833333681}},
    };
    for (const auto& [norm_type, total, clipped] : cases) {
        BOOST_TEST_CONTEXT("norm_type " << norm_type) {
            grads();
            const double got = tg::nn::utils::clip_grad_norm_({p, q}, 5.0, norm_type);
            BOOST_TEST(std::abs(got - total) <= 1e-13 * total);
            check_close(tg::cat({p.grad(), q.grad()}), clipped, 1e-14, 1e-13);
        }
    }
    grads();  // one tensor, as LibTorch's third overload
    BOOST_TEST(tg::nn::utils::clip_grad_norm_(q, 6.0) == 12.0);
    check_close(q.grad(), {12.0 * 6.0 / (12.0 + 1e-6)}, 1e-14, 1e-14);
    // error_if_nonfinite: LibTorch's message, nothing scaled
    p.set_grad(from_values({std::nan(""), 1.0}, {2}));
    q.set_grad(from_values({2.0}, {1}));
    check_throws<tg::error>(
        [&] {
            tg::nn::utils::clip_grad_norm_({p, q}, 1.0, 2.0, /*error_if_nonfinite=*/true);
        },
        {"The total norm of order 2 for gradients from `parameters` is non-finite"});
    check_close(q.grad(), {2.0}, 0, 0);
    // no gradient at all: 0
    tg::Tensor r = tg::zeros({1}).requires_grad_(true);
    BOOST_TEST(tg::nn::utils::clip_grad_norm_(std::vector<tg::Tensor>{r}, 1.0) == 0.0);
}

BOOST_AUTO_TEST_CASE(init_takes_the_tensor_by_value_as_libtorch) {
    nn::Linear fc(3, 2);
    // through .data() (an rvalue: it did not bind to init's former Tensor& parameter)
    nn::init::constant_(fc->weight.data(), 0.5);
    check_close(fc->weight, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 0, 0);
    BOOST_TEST(fc->weight.requires_grad());
    BOOST_TEST(!fc->weight.data().requires_grad());
    for (const auto& item : fc->named_parameters())  // const items, as LibTorch allows
        nn::init::zeros_(item.value());
    check_close(fc->bias, {0, 0}, 0, 0);
    tg::Tensor same = nn::init::ones_(fc->bias);
    BOOST_TEST(same.impl() == fc->bias.impl());
}
