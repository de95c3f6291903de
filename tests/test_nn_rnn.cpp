/// The recurrent modules against LibTorch 1.13 (values in rnn_libtorch_values.hpp, printed by
/// scripts/libtorch_reference.cpp): RNN, LSTM (projected, bidirectional, stacked), GRU, packed
/// sequences and the cells, each forward in float64 and the gradients of a weighted sum of its
/// outputs with respect to the input, the initial states and every parameter, to 1e-12. The
/// weights are the modules' own, drawn after manual_seed as LibTorch draws them (float32, then
/// converted), so the initialisation is checked too; dropout between layers draws LibTorch's
/// masks. Also: parameter names and shapes, printing, options.
#define BOOST_TEST_MODULE test_nn_rnn
#include <boost/test/unit_test.hpp>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "rnn_libtorch_values.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
using tg::Tensor;
namespace nn = tg::nn;
namespace rnn = tg::nn::utils::rnn;

namespace {

const std::vector<double>& libtorch(const std::string& name) {
    static const std::map<std::string, std::vector<double>> table = [] {
        std::map<std::string, std::vector<double>> t;
        std::istringstream in(rnn_reference::kLibTorch);
        std::string line, current;
        while (std::getline(in, line)) {
            if (line.empty())
                continue;
            std::istringstream words(line);
            if (line[0] != ' ') {
                words >> current;
                current.pop_back();  // the colon
            }
            for (std::string w; words >> w;)
                t[current].push_back(std::stod(w));
        }
        return t;
    }();
    const auto it = table.find(name);
    BOOST_TEST_REQUIRE((it != table.end()), "no reference values named " << name);
    return it->second;
}

/// t equals LibTorch's `name` to 1e-12 (relative to values above 1).
void same(const Tensor& t, const std::string& name) {
    BOOST_TEST_CONTEXT(name) {
        check_close(t, libtorch(name), 1e-12, 1e-12);
    }
}

/// t equals LibTorch's `name` exactly (integers, float32 weights).
void exact(const Tensor& t, const std::string& name) {
    BOOST_TEST_CONTEXT(name) {
        BOOST_TEST(values_of(t) == libtorch(name), boost::test_tools::per_element());
    }
}

/// sin(0.37·i + phase) in float64, as det() in the script.
Tensor det(const tg::Shape& shape, double phase) {
    return tg::sin(tg::arange(tg::numel_of(shape), tg::kFloat64) * 0.37 + phase).reshape(shape);
}
Tensor leaf(const tg::Shape& shape, double phase) {
    return det(shape, phase).requires_grad_(true);
}

/// Σ t·cos(0.91·i + phase), as weigh() in the script.
Tensor weigh(const Tensor& t, double phase) {
    return (t * tg::cos(tg::arange(t.numel(), tg::kFloat64) * 0.91 + phase).reshape(t.sizes()))
        .sum();
}

void same_grads(const std::string& tag, const nn::Module& m) {
    for (const auto& p : m.named_parameters())
        same(p.second.grad(), tag + "_grad_" + p.first);
}

std::string printed(const nn::Module& m) {
    std::ostringstream s;
    m.pretty_print(s);
    return s.str();
}

}  // namespace

BOOST_AUTO_TEST_CASE(lstm_projected_bidirectional_stacked_as_libtorch) {
    tg::manual_seed(11);
    nn::LSTM m(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
    m->to(tg::kFloat64);
    Tensor x = leaf({3, 2, 3}, 0.1), h0 = leaf({4, 2, 2}, 0.7), c0 = leaf({4, 2, 4}, 1.3);
    auto [out, state] = m->forward(x, std::make_tuple(h0, c0));
    auto [h, c] = state;
    same(out, "lstm_out");
    same(h, "lstm_h");
    same(c, "lstm_c");
    (weigh(out, 0) + weigh(h, 1) + weigh(c, 2)).backward();
    same(x.grad(), "lstm_grad_x");
    same(h0.grad(), "lstm_grad_h0");
    same(c0.grad(), "lstm_grad_c0");
    same_grads("lstm", *m);
}

BOOST_AUTO_TEST_CASE(gru_batch_first_stacked_as_libtorch) {
    tg::manual_seed(12);
    nn::GRU m(nn::GRUOptions(3, 4).num_layers(2).batch_first(true));
    m->to(tg::kFloat64);
    Tensor x = leaf({2, 3, 3}, 0.2), h0 = leaf({2, 2, 4}, 0.5);
    auto [out, h] = m->forward(x, h0);
    same(out, "gru_out");
    same(h, "gru_h");
    (weigh(out, 0) + weigh(h, 1)).backward();
    same(x.grad(), "gru_grad_x");
    same(h0.grad(), "gru_grad_h0");
    same_grads("gru", *m);
}

BOOST_AUTO_TEST_CASE(rnn_relu_without_bias_bidirectional_as_libtorch) {
    tg::manual_seed(13);
    nn::RNN m(nn::RNNOptions(3, 4).nonlinearity(tg::kReLU).bias(false).bidirectional(true));
    m->to(tg::kFloat64);
    Tensor x = leaf({4, 2, 3}, 0.3);
    auto [out, h] = m->forward(x);
    same(out, "rnn_relu_out");
    same(h, "rnn_relu_h");
    (weigh(out, 0) + weigh(h, 1)).backward();
    same(x.grad(), "rnn_relu_grad_x");
    same_grads("rnn_relu", *m);
}

BOOST_AUTO_TEST_CASE(rnn_dropout_between_layers_draws_libtorchs_masks) {
    tg::manual_seed(14);
    nn::RNN m(nn::RNNOptions(3, 5).num_layers(3).dropout(0.4));
    m->to(tg::kFloat64);
    Tensor x = leaf({3, 2, 3}, 0.4);
    tg::manual_seed(99);
    auto [out, h] = m->forward(x);
    same(out, "rnn_dropout_out");
    same(h, "rnn_dropout_h");
    (weigh(out, 0) + weigh(h, 1)).backward();
    same(x.grad(), "rnn_dropout_grad_x");
    same_grads("rnn_dropout", *m);
    exact(tg::rand({3}), "rnn_dropout_next_rand");  // the generator left where LibTorch leaves it
    m->eval();                                      // no dropout in evaluation: the same twice
    BOOST_TEST(tg::equal(std::get<0>(m->forward(x)), std::get<0>(m->forward(x))));
}

BOOST_AUTO_TEST_CASE(packed_lstm_unsorted_as_libtorch) {
    tg::manual_seed(15);
    nn::LSTM m(nn::LSTMOptions(2, 3).bidirectional(true));
    m->to(tg::kFloat64);
    Tensor x = leaf({4, 3, 2}, 0.6), h0 = leaf({2, 3, 3}, 0.8), c0 = leaf({2, 3, 3}, 0.9);
    auto packed = rnn::pack_padded_sequence(x, tg::tensor({2, 4, 3}), false, false);
    exact(packed.batch_sizes(), "packed_lstm_batch_sizes");
    exact(packed.sorted_indices(), "packed_lstm_sorted");
    auto [out, state] = m->forward_with_packed_input(packed, std::make_tuple(h0, c0));
    same(out.data(), "packed_lstm_data");
    auto [padded, lengths] = rnn::pad_packed_sequence(out, true, -1.5);
    same(padded, "packed_lstm_padded");
    exact(lengths, "packed_lstm_lengths");
    same(std::get<0>(state), "packed_lstm_h");
    same(std::get<1>(state), "packed_lstm_c");
    (weigh(padded, 0) + weigh(std::get<0>(state), 1) + weigh(std::get<1>(state), 2)).backward();
    same(x.grad(), "packed_lstm_grad_x");
    same(h0.grad(), "packed_lstm_grad_h0");
    same(c0.grad(), "packed_lstm_grad_c0");
    same_grads("packed_lstm", *m);
}

BOOST_AUTO_TEST_CASE(packed_gru_from_pack_sequence_as_libtorch) {
    tg::manual_seed(16);
    nn::GRU m(nn::GRUOptions(2, 3).num_layers(2));
    m->to(tg::kFloat64);
    Tensor a = leaf({4, 2}, 0.1), b = leaf({3, 2}, 0.2), c = leaf({3, 2}, 0.3);
    auto [out, h] = m->forward_with_packed_input(rnn::pack_sequence({a, b, c}));
    auto [padded, lengths] = rnn::pad_packed_sequence(out, false, 0.0, 6);
    BOOST_TEST(tg::shape_str(padded.sizes()) == "[6,3,3]");
    same(padded, "packed_gru_padded");
    same(h, "packed_gru_h");
    (weigh(padded, 0) + weigh(h, 1)).backward();
    same(a.grad(), "packed_gru_grad_a");
    same(b.grad(), "packed_gru_grad_b");
    same(c.grad(), "packed_gru_grad_c");
    same_grads("packed_gru", *m);
}

BOOST_AUTO_TEST_CASE(cells_as_libtorch) {
    tg::manual_seed(17);
    nn::RNNCell rt(3, 4);
    nn::RNNCell rr(nn::RNNCellOptions(3, 4).nonlinearity(tg::kReLU).bias(false));
    nn::LSTMCell lc(3, 4);
    nn::GRUCell gc(3, 4);
    for (nn::Module* m : {(nn::Module*)rt.get(), (nn::Module*)rr.get(), (nn::Module*)lc.get(),
                          (nn::Module*)gc.get()})
        m->to(tg::kFloat64);
    Tensor x = leaf({2, 3}, 0.4), h = leaf({2, 4}, 0.6), c = leaf({2, 4}, 0.8);
    Tensor y1 = rt->forward(x, h), y2 = rr->forward(x, h);
    auto [lh, lcell] = lc->forward(x, std::make_tuple(h, c));
    Tensor y4 = gc->forward(x, h);
    same(y1, "cell_rnn_tanh");
    same(y2, "cell_rnn_relu");
    same(lh, "cell_lstm_h");
    same(lcell, "cell_lstm_c");
    same(y4, "cell_gru");
    (weigh(y1, 0) + weigh(y2, 1) + weigh(lh, 2) + weigh(lcell, 3) + weigh(y4, 4)).backward();
    same(x.grad(), "cell_grad_x");
    same(h.grad(), "cell_grad_h");
    same(c.grad(), "cell_grad_c");
    same_grads("cell_rnn_tanh", *rt);
    same_grads("cell_rnn_relu", *rr);
    same_grads("cell_lstm", *lc);
    same_grads("cell_gru", *gc);
}

BOOST_AUTO_TEST_CASE(initial_weights_are_libtorchs_bit_for_bit) {
    tg::manual_seed(7);
    nn::LSTM m(nn::LSTMOptions(2, 3).bidirectional(true).proj_size(2));
    for (const auto& p : m->named_parameters())
        exact(p.second, "init_lstm_" + p.first);
    nn::GRUCell g(2, 3);
    for (const auto& p : g->named_parameters())
        exact(p.second, "init_gru_cell_" + p.first);
    exact(tg::rand({2}), "init_next_rand");
}

BOOST_AUTO_TEST_CASE(pad_sequence_as_libtorch) {
    same(rnn::pad_sequence({det({2, 2}, 0), det({3, 2}, 1), det({1, 2}, 2)}, true, 7.0),
         "pad_sequence_batch_first");
}

BOOST_AUTO_TEST_CASE(parameter_names_and_shapes_as_libtorch) {
    nn::LSTM m(nn::LSTMOptions(3, 4).proj_size(2).num_layers(2).bidirectional(true));
    std::ostringstream s;
    for (const auto& p : m->named_parameters())
        s << p.first << " " << tg::shape_str(p.second.sizes()) << "; ";
    BOOST_TEST(s.str() ==
               "weight_ih_l0 [16,3]; weight_hh_l0 [16,2]; bias_ih_l0 [16]; bias_hh_l0 [16]; "
               "weight_hr_l0 [2,4]; weight_ih_l0_reverse [16,3]; weight_hh_l0_reverse [16,2]; "
               "bias_ih_l0_reverse [16]; bias_hh_l0_reverse [16]; weight_hr_l0_reverse [2,4]; "
               "weight_ih_l1 [16,4]; weight_hh_l1 [16,2]; bias_ih_l1 [16]; bias_hh_l1 [16]; "
               "weight_hr_l1 [2,4]; weight_ih_l1_reverse [16,4]; weight_hh_l1_reverse [16,2]; "
               "bias_ih_l1_reverse [16]; bias_hh_l1_reverse [16]; weight_hr_l1_reverse [2,4]; ");
    BOOST_TEST(m->all_weights().size() == 20u);
    m->flatten_parameters();  // a no-op, as LibTorch's on the CPU
    nn::LSTMCell cell(nn::LSTMCellOptions(3, 4).bias(false));
    BOOST_TEST(cell->named_parameters().size() == 2u);
    BOOST_TEST(!cell->bias_ih.defined());
    BOOST_TEST(tg::shape_str(cell->weight_hh.sizes()) == "[16,4]");
}

BOOST_AUTO_TEST_CASE(printing_as_libtorch) {
    BOOST_TEST(printed(*nn::RNN(nn::RNNOptions(3, 4))) ==
               "RNN(input_size=3, hidden_size=4, num_layers=1, bias=true, batch_first=false, "
               "dropout=0, bidirectional=false)");
    BOOST_TEST(printed(*nn::RNN(nn::RNNOptions(3, 4)
                                    .num_layers(2)
                                    .nonlinearity(tg::kReLU)
                                    .bias(false)
                                    .batch_first(true)
                                    .dropout(0.5)
                                    .bidirectional(true))) ==
               "RNN(input_size=3, hidden_size=4, num_layers=2, bias=false, batch_first=true, "
               "dropout=0.5, bidirectional=true)");
    BOOST_TEST(
        printed(*nn::LSTM(nn::LSTMOptions(3, 4).proj_size(2).num_layers(2).bidirectional(true))) ==
        "LSTM(input_size=3, hidden_size=4, num_layers=2, bias=true, "
        "batch_first=false, dropout=0, bidirectional=true, proj_size=2)");
    BOOST_TEST(printed(*nn::GRU(nn::GRUOptions(3, 4).dropout(0.25))) ==
               "GRU(input_size=3, hidden_size=4, num_layers=1, bias=true, batch_first=false, "
               "dropout=0.25, bidirectional=false)");
    BOOST_TEST(printed(*nn::RNNCell(nn::RNNCellOptions(3, 4))) == "RNNCell(3, 4)");
    BOOST_TEST(printed(*nn::RNNCell(nn::RNNCellOptions(3, 4).nonlinearity(tg::kReLU).bias(
                   false))) == "RNNCell(3, 4, bias=false, nonlinearity=kReLU)");
    BOOST_TEST(printed(*nn::LSTMCell(3, 4)) == "LSTMCell(3, 4)");
    BOOST_TEST(printed(*nn::GRUCell(nn::GRUCellOptions(3, 4).bias(false))) ==
               "GRUCell(3, 4, bias=false)");
}

BOOST_AUTO_TEST_CASE(options_have_libtorchs_defaults) {
    nn::LSTMOptions o(3, 4);
    BOOST_TEST(o.num_layers() == 1);
    BOOST_TEST(o.bias());
    BOOST_TEST(!o.batch_first());
    BOOST_TEST(o.dropout() == 0.0);
    BOOST_TEST(!o.bidirectional());
    BOOST_TEST(o.proj_size() == 0);
    BOOST_TEST(o.checkpoint_every() == 0);
    BOOST_TEST((nn::RNNOptions(3, 4).nonlinearity() == tg::kTanh));
    BOOST_TEST(nn::GRUCellOptions(3, 4).bias());
    nn::GRU g(3, 4);
    BOOST_TEST(g->options.hidden_size() == 4);  // a public member, as LibTorch's
    BOOST_TEST((g->options_base.mode() == nn::detail::RNNMode::GRU));
}

BOOST_AUTO_TEST_CASE(batch_first_output_and_zero_batch) {
    nn::LSTM m(nn::LSTMOptions(3, 4).batch_first(true));
    auto [out, state] = m->forward(tg::randn({2, 5, 3}));
    BOOST_TEST(tg::shape_str(out.sizes()) == "[2,5,4]");
    BOOST_TEST(tg::shape_str(std::get<0>(state).sizes()) == "[1,2,4]");  // h_n is never
    auto [empty_out, empty_state] = m->forward(tg::randn({0, 5, 3}));    // batch first
    BOOST_TEST(tg::shape_str(empty_out.sizes()) == "[0,5,4]");
    BOOST_TEST(tg::shape_str(std::get<1>(empty_state).sizes()) == "[1,0,4]");
}
