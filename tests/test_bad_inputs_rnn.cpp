/// Bad-input catalogue (tests/bad_inputs.hpp): the recurrent ops, modules and packed sequences.
/// The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_rnn
#include <cstdint>
#include <tuple>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/nn.hpp"

using tgtest::check_table;

namespace {
struct Fixtures {
    tg::Tensor x = tg::zeros({3, 2, 3});  // float32 [T, N, in]
    tg::Tensor h = tg::zeros({1, 2, 4}), c = tg::zeros({1, 2, 4});
    tg::Tensor xc = tg::zeros({2, 3}), hc = tg::zeros({2, 4});  // a cell's input and state
    tg::Tensor data = tg::zeros({6, 3});                        // packed rows
    tg::Tensor bs = tg::tensor(std::vector<int64_t>{2, 2, 2});  // its batch sizes
    std::vector<tg::Tensor> lstm_p{tg::zeros({16, 3}), tg::zeros({16, 4}), tg::zeros({16}),
                                   tg::zeros({16})};
    std::vector<tg::Tensor> gru_p{tg::zeros({12, 3}), tg::zeros({12, 4}), tg::zeros({12}),
                                  tg::zeros({12})};
    tg::Tensor w4 = tg::zeros({4, 3}), u4 = tg::zeros({4, 4}), b4 = tg::zeros({4});
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(recurrent_ops, Fixtures) {
    const std::vector<tg::Tensor> no_bias{lstm_p[0], lstm_p[1]};
    const std::vector<tg::Tensor> wide{tg::zeros({16, 5}), lstm_p[1], lstm_p[2], lstm_p[3]};
    check_table(
        "Recurrent ops",
        {
            TG_BAD(tg::lstm(x, {h, c}, no_bias, true, 1, 0.0, false, false, false), value_error,
                   "lstm", "expected 4 parameters", "got 2"),
            TG_BAD(tg::lstm(x, {h, c}, wide, true, 1, 0.0, false, false, false), shape_error,
                   "lstm", "input has 3 features", "w_ih of layer 0 [16,5]"),
            TG_BAD(tg::lstm(x.to(tg::kFloat64), {h, c}, lstm_p, true, 1, 0.0, false, false, false),
                   dtype_error, "lstm", "hx is float32", "input float64"),
            TG_BAD(tg::lstm(x.to(tg::kInt64), {h, c}, lstm_p, true, 1, 0.0, false, false, false),
                   dtype_error, "lstm", "int64"),
            TG_BAD(tg::lstm(tg::zeros({3, 3}), {h, c}, lstm_p, true, 1, 0.0, false, false, false),
                   shape_error, "lstm", "3 dimensions", "[3,3]"),
            TG_BAD(
                tg::lstm(tg::zeros({0, 2, 3}), {h, c}, lstm_p, true, 1, 0.0, false, false, false),
                shape_error, "lstm", "sequence length", "[0,2,3]"),
            TG_BAD(
                tg::lstm(x, {tg::zeros({1, 3, 4}), c}, lstm_p, true, 1, 0.0, false, false, false),
                shape_error, "lstm", "hx", "[1,2,4]", "[1,3,4]"),
            TG_BAD(tg::lstm(x, {h}, lstm_p, true, 1, 0.0, false, false, false), value_error, "lstm",
                   "two hidden states"),
            TG_BAD(tg::lstm(x, {h, c}, lstm_p, true, 1, 1.5, true, false, false), value_error,
                   "lstm", "dropout", "1.5"),
            TG_BAD(tg::lstm(x, {h, c}, lstm_p, true, 0, 0.0, true, false, false), value_error,
                   "lstm", "num_layers"),
            TG_BAD(tg::lstm(x, {h, c}, lstm_p, true, 1, 0.0, true, false, false, -1), value_error,
                   "lstm", "checkpoint_every"),
            TG_BAD(tg::gru(x, h.to(tg::kFloat64), gru_p, true, 1, 0.0, false, false, false),
                   dtype_error, "gru", "hx is float64"),
            TG_BAD(tg::gru(data, tg::tensor(std::vector<int64_t>{3, 2, 2}), h, gru_p, true, 1, 0.0,
                           false, false),
                   shape_error, "gru", "batch_sizes sum to 7", "6 rows"),
            TG_BAD(tg::gru(data, tg::tensor(std::vector<int64_t>{1, 2, 3}), h, gru_p, true, 1, 0.0,
                           false, false),
                   value_error, "gru", "non-increasing"),
            TG_BAD(tg::gru(data, bs.to(tg::kFloat32), h, gru_p, true, 1, 0.0, false, false),
                   dtype_error, "gru", "batch_sizes", "int64"),
            TG_BAD(tg::rnn_tanh(tg::zeros({6, 3, 1}), bs, h, {w4, u4}, false, 1, 0.0, false, false),
                   shape_error, "rnn_tanh", "packed data", "2 dimensions"),
            TG_BAD(tg::lstm_cell(tg::zeros({3}), {hc, hc}, lstm_p[0], lstm_p[1]), shape_error,
                   "lstm_cell", "[batch, input_size]", "[3]"),
            TG_BAD(tg::lstm_cell(xc, {hc}, lstm_p[0], lstm_p[1]), value_error, "lstm_cell",
                   "two hidden states"),
            TG_BAD(tg::gru_cell(xc, tg::zeros({3, 4}), gru_p[0], gru_p[1]), shape_error, "gru_cell",
                   "hx", "[1,2,4]", "[1,3,4]"),
            TG_BAD(tg::rnn_tanh_cell(xc, hc, w4, u4, b4), value_error, "rnn_tanh_cell", "b_ih",
                   "b_hh"),
            TG_BAD(tg::rnn_relu_cell(xc, hc, w4, tg::zeros({4, 3})), shape_error, "rnn_relu_cell",
                   "w_hh", "[4,4]", "[4,3]"),
        });
}

BOOST_FIXTURE_TEST_CASE(recurrent_modules, Fixtures) {
    tg::nn::LSTM lstm(3, 4);
    tg::nn::GRU gru(3, 4);
    check_table(
        "Recurrent modules",
        {
            TG_BAD(tg::nn::LSTM(tg::nn::LSTMOptions(3, 4).proj_size(4)), value_error, "LSTM(3, 4)",
                   "proj_size"),
            TG_BAD(tg::nn::GRU(tg::nn::GRUOptions(3, 0)), value_error, "GRU(3, 0)", "hidden_size"),
            TG_BAD(tg::nn::LSTM(tg::nn::LSTMOptions(3, 4).num_layers(0)), value_error, "LSTM",
                   "num_layers 0"),
            TG_BAD(tg::nn::RNN(tg::nn::RNNOptions(3, 4).dropout(1.5)), value_error, "RNN(3, 4)",
                   "dropout"),
            TG_BAD(tg::nn::RNN(tg::nn::RNNOptions(3, 4).nonlinearity(tg::kGELU)), value_error,
                   "RNN", "kTanh or kReLU", "kGELU"),
            TG_BAD(tg::nn::GRU(tg::nn::GRUOptions(3, 4).checkpoint_every(-2)), value_error, "GRU",
                   "checkpoint_every"),
            TG_BAD(lstm(tg::zeros({5, 3})), shape_error, "LSTM", "3 dimensions, got 2", "[5,3]"),
            TG_BAD(lstm(tg::zeros({5, 2, 4})), shape_error, "LSTM",
                   "input_size. Expected 3, got 4"),
            TG_BAD(lstm->forward(x, std::make_tuple(h, tg::zeros({1, 3, 4}))), shape_error, "LSTM",
                   "Expected hidden[1] size [1,2,4], got [1,3,4]"),
            TG_BAD(gru(x, tg::zeros({2, 2, 4})), shape_error, "GRU",
                   "Expected hidden size [1,2,4], got [2,2,4]"),
            TG_BAD(gru(x.to(tg::kFloat64)), dtype_error, "gru", "float32", "float64"),
            TG_BAD(tg::nn::GRUCell(3, 4)(tg::zeros({2, 5})), shape_error, "GRUCell",
                   "inconsistent input_size: got 5 expected 3"),
            TG_BAD(tg::nn::GRUCell(3, 4)(xc, tg::zeros({3, 4})), shape_error, "GRUCell",
                   "Input batch size 2 doesn't match hidden batch size 3"),
            TG_BAD(tg::nn::LSTMCell(3, 4)->forward(xc, std::make_tuple(hc, tg::zeros({2, 5}))),
                   shape_error, "LSTMCell", "hidden[1] has inconsistent hidden_size: got 5"),
            TG_BAD(tg::nn::RNNCell(3, 4)(tg::zeros({3})), shape_error, "RNNCell",
                   "[batch, input_size]"),
            TG_BAD(tg::nn::RNNCell(tg::nn::RNNCellOptions(3, 4).nonlinearity(tg::kGELU)),
                   value_error, "RNNCell", "kGELU"),
            TG_BAD(tg::nn::LSTMCell(3, 0), value_error, "LSTMCell(3, 0)", "hidden_size"),
        });
}

BOOST_FIXTURE_TEST_CASE(packed_sequences, Fixtures) {
    namespace rnn = tg::nn::utils::rnn;
    const rnn::PackedSequence packed = rnn::pack_padded_sequence(x, tg::tensor({3, 2}));
    tg::nn::LSTM lstm(4, 4);
    check_table("Packed sequences",
                {
                    TG_BAD(rnn::pack_padded_sequence(x, tg::tensor({2, 3})), value_error,
                           "pack_padded_sequence", "sorted in decreasing order", "enforce_sorted"),
                    TG_BAD(rnn::pack_padded_sequence(x, tg::tensor({3, 0})), value_error,
                           "pack_padded_sequence", "greater than 0"),
                    TG_BAD(rnn::pack_padded_sequence(x, tg::tensor({4, 2})), shape_error,
                           "pack_padded_sequence", "length 4", "3 steps"),
                    TG_BAD(rnn::pack_padded_sequence(x, tg::tensor({3, 2, 1})), shape_error,
                           "pack_padded_sequence", "len(lengths)", "batch_size=2"),
                    TG_BAD(rnn::pack_padded_sequence(x, tg::tensor({3, 2}).reshape({1, 2})),
                           shape_error, "pack_padded_sequence", "1D CPU int64"),
                    TG_BAD(rnn::pad_packed_sequence(packed, false, 0.0, 2), value_error,
                           "pad_packed_sequence", "total_length=2", "being 3"),
                    TG_BAD(rnn::pad_sequence({}), value_error, "pad_sequence", "empty list"),
                    TG_BAD(rnn::pad_sequence({tg::zeros({2, 2}), tg::zeros({3, 3})}), shape_error,
                           "pad_sequence", "[2,2]", "[3,3]"),
                    TG_BAD(lstm->forward_with_packed_input(packed), shape_error, "LSTM",
                           "Expected 4, got 3"),
                });
}
