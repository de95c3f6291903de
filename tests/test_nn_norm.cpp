/// BatchNorm1d/2d, GroupNorm and Dropout2d: LibTorch's statistics and options, buffers that move,
/// save and load with the module, and running statistics that a checkpoint's recomputation leaves
/// as a plain forward leaves them.
#define BOOST_TEST_MODULE test_nn_norm
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tapegrad/io.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
namespace nn = tg::nn;
using tg::Tensor;

namespace {

/// Per-channel mean and biased variance of x [N,C,*] (float64 values).
void channel_moments(const Tensor& x, std::vector<double>& mean, std::vector<double>& var) {
    const auto v = values_of(x);
    const int64_t N = x.size(0), C = x.size(1), L = x.numel() / (N * C);
    mean.assign(size_t(C), 0);
    var.assign(size_t(C), 0);
    for (int64_t c = 0; c < C; ++c) {
        for (int64_t n = 0; n < N; ++n)
            for (int64_t l = 0; l < L; ++l)
                mean[size_t(c)] += v[size_t((n * C + c) * L + l)];
        mean[size_t(c)] /= double(N * L);
        for (int64_t n = 0; n < N; ++n)
            for (int64_t l = 0; l < L; ++l) {
                const double d = v[size_t((n * C + c) * L + l)] - mean[size_t(c)];
                var[size_t(c)] += d * d;
            }
        var[size_t(c)] /= double(N * L);
    }
}

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const tg::error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

BOOST_AUTO_TEST_CASE(batchnorm2d_trains_on_the_batch_and_evaluates_on_running_statistics) {
    nn::BatchNorm2d bn(3);
    bn->to(tg::kFloat64);
    BOOST_TEST(bn->parameters().size() == 2u);
    BOOST_TEST(bn->buffers().size() == 3u);
    check_close(bn->running_mean, {0, 0, 0}, 0);
    check_close(bn->running_var, {1, 1, 1}, 0);
    const Tensor x = make_const({4, 3, 5, 2}, 1, -2, 3);
    std::vector<double> mean, var;
    channel_moments(x, mean, var);
    const Tensor y = bn(x);
    // y = (x - mean)/√(var + eps) per channel, weight 1 and bias 0
    const auto xv = values_of(x), yv = values_of(y);
    for (size_t i = 0; i < xv.size(); ++i) {
        const size_t c = (i / 10) % 3;
        BOOST_TEST(std::abs(yv[i] - (xv[i] - mean[c]) / std::sqrt(var[c] + 1e-5)) < 1e-12);
    }
    // running = 0.9·running + 0.1·batch, with the unbiased variance (M = 40)
    std::vector<double> rm(3), rv(3);
    for (size_t c = 0; c < 3; ++c) {
        rm[c] = 0.1 * mean[c];
        rv[c] = 0.9 + 0.1 * var[c] * 40.0 / 39.0;
    }
    check_close(bn->running_mean, rm, 1e-14);
    check_close(bn->running_var, rv, 1e-14);
    BOOST_TEST(bn->num_batches_tracked.item<int64_t>() == 1);
    BOOST_TEST(bn->num_batches_tracked.dtype() == tg::kInt64);
    bn->eval();
    const auto ev = values_of(bn(x));
    for (size_t i = 0; i < xv.size(); ++i) {
        const size_t c = (i / 10) % 3;
        BOOST_TEST(std::abs(ev[i] - (xv[i] - rm[c]) / std::sqrt(rv[c] + 1e-5)) < 1e-12);
    }
    BOOST_TEST(bn->num_batches_tracked.item<int64_t>() == 1);  // eval counts nothing
    check_close(bn->running_mean, rm, 0);
}

BOOST_AUTO_TEST_CASE(batchnorm_options_as_libtorch) {
    // momentum nullopt: the cumulative average of the batches' statistics
    nn::BatchNorm1d bn(nn::BatchNormOptions(2).momentum(std::nullopt).affine(false));
    bn->to(tg::kFloat64);
    BOOST_TEST(bn->parameters().empty());
    const Tensor a = make_const({5, 2}, 2), b = make_const({5, 2, 3}, 3);
    std::vector<double> ma, va, mb, vb;
    channel_moments(a, ma, va);
    channel_moments(b, mb, vb);
    bn(a);
    bn(b);
    check_close(bn->running_mean, {(ma[0] + mb[0]) / 2, (ma[1] + mb[1]) / 2}, 1e-14);
    BOOST_TEST(bn->num_batches_tracked.item<int64_t>() == 2);
    // without running statistics: batch statistics in eval too, and no buffers
    nn::BatchNorm2d free_bn(nn::BatchNormOptions(2).track_running_stats(false));
    free_bn->to(tg::kFloat64);
    BOOST_TEST(free_bn->buffers().empty());
    free_bn->eval();
    const Tensor x = make_const({3, 2, 2, 2}, 4);
    free_bn->train();
    const auto train_y = values_of(free_bn(x));
    free_bn->eval();
    check_close(free_bn(x), train_y, 0);
    std::ostringstream os;
    os << *bn;
    BOOST_TEST(os.str() ==
               "BatchNorm1d(2, eps=1e-05, momentum=None, affine=false, track_running_stats=true)");
}

BOOST_AUTO_TEST_CASE(bad_inputs_name_the_layer) {
    nn::BatchNorm2d bn(3);
    BOOST_TEST(contains(error_of([&] { bn(tg::zeros({2, 3, 4})); }),
                        "BatchNorm2d: expected a 4-D input, got [2,3,4]"));
    BOOST_TEST(contains(error_of([&] { bn(tg::zeros({2, 4, 3, 3})); }),
                        "BatchNorm2d(3): input [2,4,3,3] has 4 channels, expected 3"));
    BOOST_CHECK_THROW(bn(tg::zeros({1, 3, 1, 1})), tg::shape_error);  // one value per channel
    nn::BatchNorm1d bn1(3);
    BOOST_CHECK_THROW(bn1(tg::zeros({2, 3, 4, 5})), tg::shape_error);
    BOOST_CHECK_THROW(nn::BatchNorm2d(0), tg::shape_error);
    BOOST_CHECK_THROW(nn::BatchNorm2d(nn::BatchNormOptions(3).momentum(1.5)), tg::value_error);
    BOOST_CHECK_THROW(nn::GroupNorm(nn::GroupNormOptions(3, 8)), tg::value_error);
    nn::GroupNorm gn(nn::GroupNormOptions(2, 4));
    BOOST_TEST(contains(error_of([&] { gn(tg::zeros({2, 6, 3})); }),
                        "GroupNorm: input [2,6,3] has 6 channels, expected 4"));
    nn::Dropout2d d(0.5);
    BOOST_CHECK_THROW(d(tg::zeros({2, 3})), tg::shape_error);
    BOOST_CHECK_THROW(nn::Dropout2d(1.0), tg::value_error);
}

BOOST_AUTO_TEST_CASE(groupnorm_and_dropout2d_compute_their_ops) {
    nn::GroupNorm gn(nn::GroupNormOptions(2, 4).eps(1e-3));
    gn->to(tg::kFloat64);
    {
        tg::NoGradGuard g;
        gn->weight.copy_(tg::tensor(std::vector<double>{1, 2, 3, 4}));
    }
    const Tensor x = make_const({3, 4, 5}, 5);
    check_close(gn(x), tg::group_norm(x, 2, gn->weight, gn->bias, 1e-3), 0, 0);
    gn->eval();  // no running state: the same in eval
    check_close(gn(x), tg::group_norm(x, 2, gn->weight, gn->bias, 1e-3), 0, 0);

    tg::manual_seed(7);
    nn::Dropout2d d(0.5);
    const Tensor ones = tg::ones({8, 6, 3, 3});
    const auto y = values_of(d(ones));
    int zeroed = 0;
    for (size_t s = 0; s < 48; ++s) {  // each [3,3] map is all 0 or all 2
        const double first = y[s * 9];
        BOOST_TEST((first == 0 || first == 2));
        for (size_t k = 1; k < 9; ++k)
            BOOST_TEST(y[s * 9 + k] == first);
        zeroed += first == 0;
    }
    BOOST_TEST(zeroed > 8);
    BOOST_TEST(zeroed < 40);
    const auto unbatched = values_of(d(tg::ones({6, 3, 3})));
    BOOST_TEST(unbatched.size() == 54u);
    d->eval();
    check_close(d(ones), values_of(ones), 0);
}

BOOST_AUTO_TEST_CASE(buffers_are_named_moved_converted_and_kept_apart_from_parameters) {
    nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 2, 3)), nn::BatchNorm2d(2), nn::ReLU());
    const auto names = net->named_buffers();
    BOOST_TEST(names.size() == 3u);
    BOOST_TEST(names[0].first == "1.running_mean");
    BOOST_TEST(names[2].first == "1.num_batches_tracked");
    BOOST_TEST(net->parameters().size() == 4u);  // conv weight, bias; bn weight, bias
    net->to(tg::kFloat64);
    auto bn = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(net[1]);
    BOOST_TEST(bn->running_mean.dtype() == tg::kFloat64);
    BOOST_TEST(bn->num_batches_tracked.dtype() == tg::kInt64);
    BOOST_TEST(!bn->running_mean.requires_grad());
    // a buffer's name may not repeat a parameter's
    struct M : nn::Module {
        M() {
            register_parameter("w", tg::zeros({1}));
            BOOST_CHECK_THROW(register_buffer("w", tg::zeros({1})), tg::value_error);
            BOOST_CHECK_THROW(register_buffer("a.b", tg::zeros({1})), tg::value_error);
            BOOST_CHECK_THROW(register_buffer("u", Tensor()), tg::value_error);
        }
    };
    M m;
    if (!tg::is_available(tg::Device::opencl(0))) {
        BOOST_TEST_MESSAGE("no OpenCL device: skipped the move");
        return;
    }
    const Tensor before = bn->running_var;
    net->to(tg::Device::opencl(0));
    BOOST_TEST(bn->running_var.device() == tg::Device::opencl(0));
    BOOST_TEST(before.device() == tg::Device::opencl(0));  // the same tensor, moved
    BOOST_TEST(bn->num_batches_tracked.device() == tg::Device::opencl(0));
    net->train();
    net(tg::ones({2, 1, 5, 5}, tg::TensorOptions(tg::kFloat64).device(tg::Device::opencl(0))));
    BOOST_TEST(bn->num_batches_tracked.item<int64_t>() == 1);
}

BOOST_AUTO_TEST_CASE(save_and_load_carry_the_running_statistics) {
    nn::Sequential a(nn::Linear(3, 4), nn::BatchNorm1d(4));
    a(make_const({6, 3}, 8).to(tg::kFloat32));
    const std::string path = "test_nn_norm_model.tgsv";
    tg::save(*a, path);
    nn::Sequential b(nn::Linear(3, 4), nn::BatchNorm1d(4));
    tg::load(*b, path);
    auto bn_a = std::dynamic_pointer_cast<nn::BatchNorm1dImpl>(a[1]),
         bn_b = std::dynamic_pointer_cast<nn::BatchNorm1dImpl>(b[1]);
    check_close(bn_b->running_mean, values_of(bn_a->running_mean), 0);
    check_close(bn_b->running_var, values_of(bn_a->running_var), 0);
    BOOST_TEST(bn_b->num_batches_tracked.item<int64_t>() == 1);
    // a model whose buffers the file does not have
    nn::Sequential plain(nn::Linear(3, 4));
    const std::string plain_path = "test_nn_norm_plain.tgsv";
    tg::save(*plain, plain_path);
    nn::Sequential c(nn::Linear(3, 4), nn::BatchNorm1d(4));
    BOOST_TEST(contains(error_of([&] { tg::load(*c, plain_path); }), "is missing from the file"));
    BOOST_CHECK_THROW(tg::load(*plain, path), tg::io_error);  // the file has more
    std::remove(path.c_str());
    std::remove(plain_path.c_str());
}

namespace {

/// A conv-BN-ReLU block run plainly, under both checkpoints and under checkpoint_sequential (and
/// its planner): the running statistics and the count after forward and backward.
struct Run {
    std::vector<double> mean, var, grad;
    int64_t count;
};

Run run_block(int mode) {
    tg::manual_seed(11);
    nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(2, 3, 3).padding(1)), nn::BatchNorm2d(3),
                       nn::ReLU(), nn::Conv2d(nn::Conv2dOptions(3, 3, 3)), nn::BatchNorm2d(3),
                       nn::ReLU());
    net->to(tg::kFloat64);
    const Tensor x = make_input({4, 2, 6, 6}, 12);
    Tensor y;
    switch (mode) {
    case 0:
        y = net(x);
        break;
    case 1:
    case 2:
        y = tg::checkpoint([&](const std::vector<Tensor>& in) { return net(in[0]); }, {x},
                           mode == 1);
        break;
    case 3:
        y = nn::checkpoint_sequential(net, 2, x);
        break;
    default:  // the planner profiles every layer before it runs
        y = nn::checkpoint_sequential(net, x, tg::MemoryBudget{int64_t(1) << 30});
    }
    tg::sum(y * y).backward();
    auto bn = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(net[4]);
    return {values_of(bn->running_mean), values_of(bn->running_var), values_of(x.grad()),
            bn->num_batches_tracked.item<int64_t>()};
}

}  // namespace

BOOST_AUTO_TEST_CASE(checkpointing_updates_the_running_statistics_once) {
    const Run plain = run_block(0);
    BOOST_TEST(plain.count == 1);
    for (int mode = 1; mode <= 4; ++mode) {
        BOOST_TEST_CONTEXT("mode " << mode) {
            const Run r = run_block(mode);
            BOOST_TEST(r.count == 1);
            BOOST_TEST(r.mean == plain.mean, boost::test_tools::per_element());
            BOOST_TEST(r.var == plain.var, boost::test_tools::per_element());
            BOOST_TEST(r.grad.size() == plain.grad.size());
            for (size_t i = 0; i < r.grad.size(); ++i)
                BOOST_TEST(std::abs(r.grad[i] - plain.grad[i]) <= 1e-12 * (1 + std::abs(plain.grad[i])));
        }
    }
}
