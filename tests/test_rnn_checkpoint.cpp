/// Time checkpointing of the recurrent layers (checkpoint_every, Note [Time checkpointing] in
/// src/ops/rnn_layer.cpp, docs/rnn.md): outputs and every gradient equal the plain run's bit for
/// bit (LSTM projected and bidirectional, GRU, RNN, padded and packed, float32 and float64, any
/// k), a 2,000-step sequence trains in a tenth of the plain activation memory, and the planner
/// picks k under a byte budget.
#define BOOST_TEST_MODULE test_rnn_checkpoint
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

namespace nn = tg::nn;
namespace rnn = tg::nn::utils::rnn;
using tg::Tensor;

namespace {

/// Everything a run produces: the outputs and the gradients of the input, the states and every
/// parameter of a weighted loss.
struct Run {
    std::vector<Tensor> values;
    std::vector<std::string> names;
};

/// Whether two runs are equal bit for bit (tg::equal: same shape and elements).
void bitwise_equal(const Run& a, const Run& b, const std::string& what) {
    BOOST_TEST_REQUIRE(a.values.size() == b.values.size());
    for (size_t i = 0; i < a.values.size(); ++i)
        BOOST_TEST_CONTEXT(what << ": " << a.names[i]) {
            BOOST_TEST(a.values[i].defined() == b.values[i].defined());
            if (a.values[i].defined())
                BOOST_TEST(tg::equal(a.values[i], b.values[i]));
        }
}

Tensor weigh(const Tensor& t, double phase) {
    return (t * tg::cos(tg::arange(t.numel(), t.options()) * 0.91 + phase).reshape(t.sizes()))
        .sum();
}

template <class M, class F>
Run run(M& m, const Tensor& x0, F&& forward) {
    m->zero_grad();
    Tensor x = x0.detach().requires_grad_(true);
    std::vector<Tensor> outs = forward(x);
    Tensor loss = weigh(outs[0], 0);
    for (size_t i = 1; i < outs.size(); ++i)
        loss = loss + weigh(outs[i], double(i));
    loss.backward();
    Run r;
    for (size_t i = 0; i < outs.size(); ++i) {
        r.values.push_back(outs[i].detach());
        r.names.push_back("output " + std::to_string(i));
    }
    r.values.push_back(x.grad());
    r.names.push_back("input grad");
    for (const auto& p : m->named_parameters()) {
        r.values.push_back(p.second.grad());
        r.names.push_back(p.first + " grad");
    }
    return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(lstm_gradients_equal_the_plain_run_bit_for_bit) {
    for (tg::Dtype dt : {tg::kFloat32, tg::kFloat64}) {
        tg::manual_seed(3);
        nn::LSTM m(nn::LSTMOptions(3, 5).num_layers(2).bidirectional(true).proj_size(3));
        m->to(dt);
        const Tensor x = tg::randn({23, 4, 3}).to(dt);
        auto fwd = [&](const Tensor& in) {
            auto [y, st] = m->forward(in);
            return std::vector<Tensor>{y, std::get<0>(st), std::get<1>(st)};
        };
        m->options.checkpoint_every(0);
        const Run plain = run(m, x, fwd);
        for (int64_t k : {1, 2, 3, 5, 7, 22, 23, 100}) {
            m->options.checkpoint_every(k);
            bitwise_equal(run(m, x, fwd), plain,
                          std::string(tg::dtype_name(dt)) + " k=" + std::to_string(k));
        }
    }
}

BOOST_AUTO_TEST_CASE(gru_and_rnn_packed_gradients_equal_the_plain_run_bit_for_bit) {
    tg::manual_seed(4);
    nn::GRU gru(nn::GRUOptions(3, 4).bidirectional(true));
    nn::RNN rnn_relu(nn::RNNOptions(3, 4).nonlinearity(tg::kReLU).num_layers(2));
    const Tensor x = tg::randn({17, 5, 3});
    const Tensor lengths = tg::tensor(std::vector<int64_t>{9, 17, 4, 12, 1});
    auto packed_fwd = [&](auto& m) {
        return [&](const Tensor& in) {
            auto [out, h] =
                m->forward_with_packed_input(rnn::pack_padded_sequence(in, lengths, false, false));
            return std::vector<Tensor>{out.data(), h};
        };
    };
    gru->options.checkpoint_every(0);
    rnn_relu->options.checkpoint_every(0);
    const Run gru_plain = run(gru, x, packed_fwd(gru));
    const Run rnn_plain = run(rnn_relu, x, packed_fwd(rnn_relu));
    for (int64_t k : {1, 3, 4, 16}) {
        gru->options.checkpoint_every(k);
        rnn_relu->options.checkpoint_every(k);
        bitwise_equal(run(gru, x, packed_fwd(gru)), gru_plain, "GRU k=" + std::to_string(k));
        bitwise_equal(run(rnn_relu, x, packed_fwd(rnn_relu)), rnn_plain,
                      "RNN k=" + std::to_string(k));
    }
}

namespace {

/// One training step's activation memory: peak saved bytes (tg::memory::Stats), and the
/// parameters' gradients.
struct Step {
    int64_t peak_saved = 0, saved_after_forward = 0;
    double loss = 0;
    std::vector<Tensor> grads;
};

Step step(nn::LSTM& m, nn::Linear& head, const Tensor& x, const Tensor& target) {
    m->zero_grad();
    head->zero_grad();
    tg::memory::reset_peak();
    const int64_t saved0 = tg::memory::stats().saved_bytes;
    auto [y, st] = m->forward(x);
    Tensor loss = tg::mse_loss(head(std::get<0>(st)[0]), target);
    Step s;
    s.saved_after_forward = tg::memory::stats().saved_bytes - saved0;
    loss.backward();
    s.peak_saved = tg::memory::stats().peak_saved_bytes - saved0;
    s.loss = loss.item<double>();
    for (const Tensor& p : m->parameters())
        s.grads.push_back(p.grad().clone());
    return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_2000_step_sequence_trains_in_a_tenth_of_the_plain_activation_memory) {
    // a sequence regression from the final state: what the recurrent layer keeps is all the
    // activation memory there is (the head keeps [4, 32])
    tg::manual_seed(5);
    nn::LSTM plain(nn::LSTMOptions(8, 32)), ckpt(nn::LSTMOptions(8, 32));
    nn::Linear head(32, 1);
    {
        tg::NoGradGuard no_grad;
        for (size_t i = 0; i < plain->parameters().size(); ++i)
            ckpt->parameters()[i].copy_(plain->parameters()[i]);
    }
    const Tensor x = tg::randn({2000, 4, 8}), target = tg::randn({4, 1});
    const nn::TimeCheckpointPlan whole = nn::predict(*plain, x, 0);
    const nn::TimeCheckpointPlan plan =
        nn::plan_checkpoints(*ckpt, x, tg::MemoryBudget{whole.predicted_peak_bytes / 10});
    BOOST_TEST_MESSAGE(plan);
    BOOST_TEST(plan.checkpoint_every > 0);
    BOOST_TEST(plan.predicted_peak_bytes <= whole.predicted_peak_bytes / 10);
    ckpt->options.checkpoint_every(plan.checkpoint_every);
    tg::optim::SGD opt_plain(plain->parameters(), tg::optim::SGDOptions(0.05));
    tg::optim::SGD opt_ckpt(ckpt->parameters(), tg::optim::SGDOptions(0.05));
    std::vector<double> losses;
    for (int i = 0; i < 5; ++i) {
        const Step a = step(plain, head, x, target), b = step(ckpt, head, x, target);
        BOOST_TEST_CONTEXT("step " << i) {
            BOOST_TEST(a.loss == b.loss);  // the same training, bit for bit
            for (size_t g = 0; g < a.grads.size(); ++g)
                BOOST_TEST(tg::equal(a.grads[g], b.grads[g]));
            // the model's prediction is exact: every buffer the layer keeps is counted (the head
            // keeps h_n [4, 32] and the loss its residual [4, 1])
            const int64_t head_bytes = (4 * 32 + 4) * 4;
            BOOST_TEST(a.saved_after_forward - head_bytes == whole.predicted_saved_bytes);
            BOOST_TEST(b.saved_after_forward - head_bytes == plan.predicted_saved_bytes);
            BOOST_TEST(10 * b.peak_saved <= a.peak_saved, b.peak_saved << " of " << a.peak_saved);
        }
        losses.push_back(a.loss);
        opt_plain.step();
        opt_ckpt.step();
    }
    BOOST_TEST(losses.back() < losses.front());
}

BOOST_AUTO_TEST_CASE(the_memory_model_counts_what_the_layers_keep) {
    // saved bytes after the forward equal predict()'s for stacked, bidirectional, projected and
    // dropped-out modules, plain and checkpointed (the input is a leaf: not counted)
    auto check = [](const char* what, auto& m, const Tensor& x, int64_t k) {
        m->options.checkpoint_every(k);
        const nn::TimeCheckpointPlan p = nn::predict(*m, x, k);
        const int64_t saved0 = tg::memory::stats().saved_bytes;
        auto out = m->forward(x);
        BOOST_TEST_CONTEXT(what << " k=" << k) {
            BOOST_TEST(tg::memory::stats().saved_bytes - saved0 == p.predicted_saved_bytes);
            BOOST_TEST(p.predicted_saved_bytes <= p.predicted_peak_bytes);
            if (k == 0)
                BOOST_TEST(p.predicted_saved_bytes == p.plain_saved_bytes);
        }
    };
    tg::manual_seed(6);
    nn::LSTM lstm(nn::LSTMOptions(3, 6).num_layers(2).bidirectional(true).proj_size(4));
    nn::GRU gru(nn::GRUOptions(3, 5).num_layers(3).batch_first(true).dropout(0.3));
    nn::RNN rnn_tanh(nn::RNNOptions(3, 5).num_layers(2));
    for (int64_t k : {0, 1, 4, 9, 30}) {
        check("LSTM", lstm, tg::randn({31, 5, 3}), k);
        check("GRU", gru, tg::randn({2, 31, 3}), k);
        check("RNN", rnn_tanh, tg::randn({31, 2, 3}), k);
    }
}

BOOST_AUTO_TEST_CASE(the_planner_picks_the_interval_under_a_budget) {
    nn::LSTM m(nn::LSTMOptions(16, 64));
    const Tensor x = tg::zeros({400, 8, 16});
    const nn::TimeCheckpointPlan plain = nn::predict(*m, x, 0);
    // everything fits: no checkpointing
    BOOST_TEST(nn::plan_checkpoints(*m, x, tg::MemoryBudget{plain.predicted_peak_bytes})
                   .checkpoint_every == 0);
    int64_t last_k = 0;
    for (double fraction : {0.5, 0.25, 0.15}) {
        const int64_t budget = int64_t(fraction * double(plain.predicted_peak_bytes));
        const nn::TimeCheckpointPlan p = nn::plan_checkpoints(*m, x, tg::MemoryBudget{budget});
        BOOST_TEST_CONTEXT("budget " << fraction) {
            BOOST_TEST(p.checkpoint_every > 0);
            BOOST_TEST(p.predicted_peak_bytes <= budget);
            BOOST_TEST(p.segment_steps % 20 == 0);  // whole chunks: ⌈√400⌉ steps here
            // no longer interval with fewer recomputed steps fits
            for (int64_t K = p.segment_steps + 20; K < 400; K += 20) {
                const nn::TimeCheckpointPlan q = nn::predict(*m, x, K);
                BOOST_TEST((q.predicted_peak_bytes > budget ||
                            q.recompute_fraction >= p.recompute_fraction));
            }
            if (last_k > 0)
                BOOST_TEST(p.segment_steps <= last_k);  // a smaller budget, shorter segments
            last_k = p.segment_steps;
        }
    }
    tgtest::check_throws<tg::value_error>(
        [&] { nn::plan_checkpoints(*m, x, tg::MemoryBudget{1000}); },
        {"plan_checkpoints", "1000 bytes", "smallest feasible budget"});
}
