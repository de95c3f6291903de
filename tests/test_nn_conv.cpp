/// The convolution and pooling modules: LibTorch's spellings, parameter shapes and initial
/// ranges, the same values as the functional ops, errors naming the layer, a small CNN that
/// trains, and the same network on OpenCL as on the CPU.
#define BOOST_TEST_MODULE test_nn_conv
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <sstream>

#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
namespace nn = tg::nn;
using tg::Tensor;

BOOST_AUTO_TEST_CASE(parameters_have_libtorch_shapes_and_ranges) {
    nn::Conv2d c(nn::Conv2dOptions(4, 6, {3, 2}).groups(2));
    BOOST_TEST((c->weight.sizes() == tg::Shape{6, 2, 3, 2}));
    BOOST_TEST((c->bias.sizes() == tg::Shape{6}));
    // kaiming_uniform_(a=√5): U(±1/√fan_in), fan_in = 2·3·2
    const double bound = 1 / std::sqrt(12.0);
    for (double v : values_of(c->weight))
        BOOST_TEST(std::abs(v) <= bound);
    for (double v : values_of(c->bias))
        BOOST_TEST(std::abs(v) <= bound);
    nn::Conv1d c1(nn::Conv1dOptions(3, 5, 4).bias(false));
    BOOST_TEST((c1->weight.sizes() == tg::Shape{5, 3, 4}));
    BOOST_TEST(!c1->bias.defined());
    BOOST_TEST(c1->parameters().size() == 1u);
    nn::ConvTranspose2d t(nn::ConvTranspose2dOptions(4, 6, 3).groups(2));
    BOOST_TEST((t->weight.sizes() == tg::Shape{4, 3, 3, 3}));
}

BOOST_AUTO_TEST_CASE(modules_compute_the_functional_ops) {
    tg::manual_seed(1);
    const Tensor x = make_const({2, 4, 7, 6}, 2).to(tg::kFloat32);
    nn::Conv2d c(nn::Conv2dOptions(4, 6, 3).stride({2, 1}).padding(1).dilation({1, 2}).groups(2));
    check_close(c(x), tg::conv2d(x, c->weight, c->bias, {2, 1}, 1, {1, 2}, 2), 0, 0);
    nn::Conv2d same(nn::Conv2dOptions(4, 2, 4).padding("same"));
    BOOST_TEST((same(x).sizes() == tg::Shape{2, 2, 7, 6}));
    // unbatched input [C,H,W]
    check_close(c(x.narrow(0, 0, 1).squeeze(0)), c(x).narrow(0, 0, 1).squeeze(0), 0, 0);
    nn::ConvTranspose2d t(
        nn::ConvTranspose2dOptions(4, 3, 3).stride(2).padding(1).output_padding(1));
    check_close(t(x), tg::conv_transpose2d(x, t->weight, t->bias, 2, 1, 1), 0, 0);
    BOOST_TEST((t(x).sizes() == tg::Shape{2, 3, 14, 12}));
    nn::Conv1d c1(nn::Conv1dOptions(4, 2, 3).stride(2));
    const Tensor s = x.reshape({2, 4, 42});
    check_close(c1(s), tg::conv1d(s, c1->weight, c1->bias, 2), 0, 0);
    nn::MaxPool2d mp(nn::MaxPool2dOptions(3).stride(2).padding(1).ceil_mode(true));
    check_close(mp(x), tg::max_pool2d(x, 3, 2, 1, 1, true), 0, 0);
    check_close(nn::MaxPool2d(2)(x), tg::max_pool2d(x, 2), 0, 0);
    nn::AvgPool2d ap(nn::AvgPool2dOptions({3, 2}).padding({1, 0}).count_include_pad(false));
    check_close(ap(x), tg::avg_pool2d(x, {3, 2}, {}, {1, 0}, false, false), 0, 0);
    nn::AdaptiveAvgPool2d gap({1, 1});
    BOOST_TEST((gap(x).sizes() == tg::Shape{2, 4, 1, 1}));
    check_close(gap(x).reshape({8}), x.mean({2, 3}).reshape({8}), 1e-6, 1e-6);
}

BOOST_AUTO_TEST_CASE(bad_layers_and_inputs_name_the_layer) {
    check_throws<tg::shape_error>([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)); },
                                  {"Conv2d(3, 4)", "groups 2"});
    check_throws<tg::value_error>([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 0)); },
                                  {"Conv2d", "kernel_size"});
    check_throws<tg::shape_error>(
        [] {
            nn::Conv2d(nn::Conv2dOptions(3, 4, {3, 3, 3}));
        },
        {"Conv2d", "3 values"});
    nn::Conv2d c(nn::Conv2dOptions(3, 4, 3));
    check_throws<tg::shape_error>(
        [&] {
            c(tg::zeros({2, 2, 5, 5}));
        },
        {"Conv2d(3, 4)", "[2,2,5,5]", "3 channels"});
    check_throws<tg::shape_error>([&] { c(tg::zeros({5, 5})); }, {"Conv2d(3, 4)", "[5,5]"});
    check_throws<tg::dtype_error>(
        [&] {
            c(tg::zeros({1, 3, 5, 5}, tg::kFloat64));
        },
        {"Conv2d(3, 4)", "float64"});
    check_throws<tg::shape_error>([&] { c(tg::zeros({1, 3, 2, 2})); }, {"conv2d", "larger"});
    check_throws<tg::value_error>([] { nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(0)); },
                                  {"MaxPool2d", "stride"});
    check_throws<tg::value_error>([] { nn::AdaptiveAvgPool2d(0); },
                                  {"AdaptiveAvgPool2d", "output_size"});
}

BOOST_AUTO_TEST_CASE(printing_follows_libtorch) {
    std::ostringstream os;
    os << *nn::MaxPool2d(2);
    BOOST_TEST(os.str() ==
               "MaxPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], dilation=[1, 1], "
               "ceil_mode=false)");
    // defaults left out, as LibTorch prints them
    std::ostringstream conv;
    conv << *nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)) << " "
         << *nn::Conv2d(nn::Conv2dOptions(4, 6, {3, 2}).dilation(2).groups(2).bias(false)) << " "
         << *nn::Conv1d(nn::Conv1dOptions(2, 3, 3).padding("same")) << " "
         << *nn::ConvTranspose2d(nn::ConvTranspose2dOptions(2, 3, 3).stride(2).output_padding(1));
    BOOST_TEST(conv.str() ==
               "Conv2d(1, 32, kernel_size=[3, 3], stride=[1, 1], padding=[1, 1]) "
               "Conv2d(4, 6, kernel_size=[3, 2], stride=[1, 1], dilation=[2, 2], groups=2, "
               "bias=false) "
               "Conv1d(2, 3, kernel_size=3, stride=1, padding='same') "
               "ConvTranspose2d(2, 3, kernel_size=[3, 3], stride=[2, 2], output_padding=[1, 1])");
}

namespace {

/// A small CNN as the issue writes it (without batch norm): conv -> relu -> pool -> conv ->
/// relu -> global average -> linear.
nn::Sequential small_cnn() {
    return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1)), nn::ReLU(),
                          nn::MaxPool2d(2), nn::Conv2d(nn::Conv2dOptions(8, 16, 3).padding(1)),
                          nn::ReLU(), nn::AdaptiveAvgPool2d({1, 1}), nn::Flatten(),
                          nn::Linear(16, 3));
}

/// 3 classes of 12x12 images: a bright blob in the top-left, centre or bottom-right corner.
std::pair<Tensor, Tensor> blobs(int64_t n) {
    std::vector<double> xs(size_t(n * 144), 0.0);
    std::vector<int64_t> ys(static_cast<size_t>(n));
    const std::vector<double> noise = random_values(n * 144, 11, -0.3, 0.3);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t cls = i % 3, at = cls * 4 + 1;
        ys[size_t(i)] = cls;
        for (int64_t p = 0; p < 144; ++p)
            xs[size_t(i * 144 + p)] = noise[size_t(i * 144 + p)];
        for (int64_t r = at; r < at + 3; ++r)
            for (int64_t c = at; c < at + 3; ++c)
                xs[size_t(i * 144 + r * 12 + c)] += 1.0;
    }
    return {from_values(xs, {n, 1, 12, 12}).to(tg::kFloat32), tg::tensor(ys)};
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_small_cnn_learns) {
    tg::manual_seed(3);
    nn::Sequential net = small_cnn();
    const auto [x, y] = blobs(60);
    tg::optim::Adam opt(net->parameters(), tg::optim::AdamOptions(0.01));
    double first = 0, last = 0;
    for (int step = 0; step < 60; ++step) {
        opt.zero_grad();
        const Tensor loss = tg::cross_entropy(net(x), y);
        loss.backward();
        opt.step();
        (step == 0 ? first : last) = loss.item<double>();
    }
    BOOST_TEST(last < 0.3 * first);
    const Tensor correct = tg::eq(tg::argmax(net(x), 1), y).sum();
    BOOST_TEST(correct.item<int64_t>() >= 57);
}

BOOST_AUTO_TEST_CASE(the_network_on_opencl_matches_the_cpu) {
    if (!tg::is_available(tg::Device::opencl(0))) {
        BOOST_TEST_MESSAGE("no OpenCL device: skipped");
        return;
    }
    tg::manual_seed(4);
    nn::Sequential cpu = small_cnn();
    tg::manual_seed(4);
    nn::Sequential dev = small_cnn();
    dev->to(tg::Device::opencl(0));
    const auto [x, y] = blobs(6);
    const Tensor lc = tg::cross_entropy(cpu(x), y);
    const Tensor ld =
        tg::cross_entropy(dev(x.to(tg::Device::opencl(0))), y.to(tg::Device::opencl(0)));
    lc.backward();
    ld.backward();
    BOOST_TEST(std::abs(lc.item<double>() - ld.item<double>()) < 1e-5);
    const auto pc = cpu->parameters(), pd = dev->parameters();
    for (size_t i = 0; i < pc.size(); ++i)
        check_close(pd[i].grad().to(tg::Device::cpu()), pc[i].grad(), 1e-5, 1e-4);
}
