// Gradient accumulation: k micro-batches then one step equal one step on the whole batch, for
// mean-, sum- and un-reduced losses, with the memory of one micro-batch.
#define BOOST_TEST_MODULE accumulate
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <tapegrad/nn.hpp>
#include <tapegrad/optim.hpp>
#include <tapegrad/tapegrad.hpp>

using tg::Tensor;
namespace nn = tg::nn;
namespace optim = tg::optim;

namespace {

nn::Sequential mlp(int in, int width, int out, tg::Dtype dt) {
    tg::manual_seed(7);
    nn::Sequential s(nn::Linear(in, width), nn::Tanh(), nn::Linear(width, width), nn::Tanh(),
                     nn::Linear(width, out));
    s->to(dt);
    return s;
}

Tensor loss_of(const Tensor& y, const Tensor& t, tg::Reduction r) {
    return tg::mse_loss(y, t, r);
}

/// Trains `steps` steps on batches of 256; micro = 0 means the whole batch at once, otherwise
/// micro-batches of the given sizes through an Accumulator. Returns all parameters.
std::vector<double> train(tg::Dtype dt, tg::Reduction r, const std::vector<int64_t>& micro,
                          int steps = 4) {
    auto net = mlp(8, 32, 4, dt);
    const double lr = r == tg::Reduction::Sum ? 0.1 / 256 : 0.1;
    optim::SGD opt(net->parameters(), optim::SGDOptions(lr).momentum(0.9));
    optim::Accumulator acc(opt, 256);
    tg::manual_seed(1);
    for (int s = 0; s < steps; ++s) {
        const Tensor x = tg::randn({256, 8}, dt), t = tg::randn({256, 4}, dt);
        if (micro.empty()) {
            Tensor l = loss_of(net(x), t, r);
            (r == tg::Reduction::None ? l.mean() : l).backward();
            opt.step();
            opt.zero_grad();
            continue;
        }
        int64_t at = 0;
        for (int64_t m : micro) {
            const Tensor xs = x.narrow(0, at, m), ts = t.narrow(0, at, m);
            acc.backward(loss_of(net(xs), ts, r), m, r);
            at += m;
        }
        acc.step();
    }
    std::vector<double> p;
    for (const Tensor& w : net->parameters()) {
        auto v = w.to(tg::kFloat64).to_vector<double>();
        p.insert(p.end(), v.begin(), v.end());
    }
    return p;
}

void check_close(const std::vector<double>& a, const std::vector<double>& b, double rel) {
    BOOST_TEST_REQUIRE(a.size() == b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(std::abs(b[i]), 1e-3));
    BOOST_TEST_MESSAGE("worst relative difference " << worst);
    BOOST_TEST(worst <= rel);
}

const std::vector<int64_t> k8x32(8, 32);

}  // namespace

BOOST_AUTO_TEST_CASE(mean_reduced_float64) {
    const auto ref = train(tg::kFloat64, tg::Reduction::Mean, {});
    check_close(train(tg::kFloat64, tg::Reduction::Mean, k8x32), ref, 1e-12);
    // unequal micro-batches: normalised by the global batch, not by each micro-batch's mean
    check_close(train(tg::kFloat64, tg::Reduction::Mean, {100, 100, 56}), ref, 1e-12);
}

BOOST_AUTO_TEST_CASE(sum_and_unreduced_float64) {
    check_close(train(tg::kFloat64, tg::Reduction::Sum, k8x32),
                train(tg::kFloat64, tg::Reduction::Sum, {}), 1e-12);
    // per-sample losses: the mean over the global batch
    check_close(train(tg::kFloat64, tg::Reduction::None, {64, 64, 128}),
                train(tg::kFloat64, tg::Reduction::Mean, {}), 1e-12);
}

BOOST_AUTO_TEST_CASE(float32) {
    check_close(train(tg::kFloat32, tg::Reduction::Mean, k8x32),
                train(tg::kFloat32, tg::Reduction::Mean, {}), 1e-5);
    check_close(train(tg::kFloat32, tg::Reduction::Sum, k8x32),
                train(tg::kFloat32, tg::Reduction::Sum, {}), 1e-5);
}

BOOST_AUTO_TEST_CASE(misuse_throws) {
    auto net = mlp(4, 8, 2, tg::kFloat64);
    optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
    BOOST_CHECK_THROW(optim::Accumulator(opt, 0), tg::error);
    optim::Accumulator acc(opt, 64);
    const Tensor x = tg::randn({32, 4}, tg::kFloat64), t = tg::randn({32, 2}, tg::kFloat64);
    acc.backward(tg::mse_loss(net(x), t), 32);
    BOOST_TEST(!acc.ready());
    BOOST_CHECK_THROW(acc.step(), tg::error);                                 // early
    BOOST_CHECK_THROW(acc.backward(tg::mse_loss(net(x), t), 48), tg::error);  // too many
    BOOST_CHECK_THROW(acc.backward(tg::mse_loss(net(x), t, tg::Reduction::None), 32),
                      tg::error);  // not a scalar
    BOOST_CHECK_THROW(
        acc.backward(tg::mse_loss(net(x), t, tg::Reduction::None), 16, tg::Reduction::None),
        tg::error);  // wrong count
    BOOST_TEST(acc.samples_seen() == 32);
    acc.backward(tg::mse_loss(net(x), t), 32);
    BOOST_TEST(acc.ready());
    BOOST_CHECK_THROW(acc.backward(tg::mse_loss(net(x), t), 1), tg::error);  // late
    acc.step();
    BOOST_TEST(acc.steps() == 1);
    BOOST_TEST(acc.samples_seen() == 0);
    BOOST_TEST(!net->parameters()[0].grad().defined());  // zero_grad after the step
    try {
        acc.step();
    } catch (const tg::error& e) {
        BOOST_TEST(std::string(e.what()).find("0 of 64 samples") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(memory_of_one_micro_batch) {
    auto net = mlp(64, 128, 8, tg::kFloat64);
    optim::SGD opt(net->parameters(), optim::SGDOptions(0.01));
    tg::manual_seed(2);
    const Tensor x = tg::randn({256, 64}, tg::kFloat64), t = tg::randn({256, 8}, tg::kFloat64);
    // gradients stay allocated between steps (zero_grad(false)): the baseline holds them
    auto peak_of = [&](const std::vector<int64_t>& micro, int64_t global) {
        optim::Accumulator acc(opt, global, false);
        auto run = [&] {
            int64_t at = 0;
            for (int64_t m : micro) {
                acc.backward(tg::mse_loss(net(x.narrow(0, at, m)), t.narrow(0, at, m)), m);
                at += m;
            }
            acc.step();
        };
        run();  // allocates the gradients and any optimizer state
        const int64_t before = tg::memory::stats().current_bytes;
        tg::memory::reset_peak();
        run();
        return tg::memory::stats().peak_bytes - before;
    };
    const int64_t full = peak_of({256}, 256);
    const int64_t accumulated = peak_of(k8x32, 256);
    const int64_t one_micro = peak_of({32}, 32);
    BOOST_TEST_MESSAGE("peak above baseline: batch 256 " << full << ", 8 x 32 accumulated "
                                                         << accumulated << ", batch 32 "
                                                         << one_micro);
    BOOST_TEST(double(accumulated) <= 1.2 * double(one_micro));
    BOOST_TEST(accumulated * 3 < full);
}

/// Variable-length sequences: each micro-batch's loss is a mean over its tokens, so the
/// Accumulator counts tokens, not sequences (micro_batch = the micro-batch's tokens, global =
/// the step's tokens). The accumulated gradient then equals the token mean over the whole
/// batch; counting sequences instead weights a short sequence's tokens more, and differs.
BOOST_AUTO_TEST_CASE(variable_length_sequences_count_tokens) {
    tg::manual_seed(3);
    nn::Linear head(4, 5);
    head->to(tg::kFloat64);
    const std::vector<int64_t> lengths = {3, 7, 1, 5};
    int64_t total = 0;
    std::vector<Tensor> xs, ys;
    for (int64_t n : lengths) {
        xs.push_back(tg::randn({n, 4}, tg::kFloat64));
        ys.push_back(tg::randint(0, 5, {n}));
        total += n;
    }
    auto grads = [&] {
        std::vector<double> g;
        for (const Tensor& p : head->parameters()) {
            auto v = p.grad().to_vector<double>();
            g.insert(g.end(), v.begin(), v.end());
        }
        head->zero_grad();
        return g;
    };
    tg::cross_entropy(head(tg::cat(xs)), tg::cat(ys)).backward();  // the whole batch's token mean
    const std::vector<double> whole = grads();
    optim::SGD opt(head->parameters(), optim::SGDOptions(0.0));
    auto accumulate = [&](bool tokens) {
        optim::Accumulator acc(opt, tokens ? total : int64_t(lengths.size()), false);
        for (size_t i = 0; i < lengths.size(); ++i)
            acc.backward(tg::cross_entropy(head(xs[i]), ys[i]), tokens ? lengths[i] : 1);
        BOOST_TEST(acc.ready());
        return grads();
    };
    const std::vector<double> by_tokens = accumulate(true), by_sequences = accumulate(false);
    double worst = 0, apart = 0;
    for (size_t i = 0; i < whole.size(); ++i) {
        worst = std::max(worst, std::abs(by_tokens[i] - whole[i]));
        apart = std::max(apart, std::abs(by_sequences[i] - whole[i]));
    }
    BOOST_TEST(worst < 1e-14);
    BOOST_TEST(apart > 1e-3);
}
