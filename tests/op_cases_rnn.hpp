#pragma once
/// Op table rows (op_cases.hpp says how to add one): the recurrent cells and sequence functions
/// of rnn_ops.hpp (tg::lstm, gru, rnn_tanh, rnn_relu and their cells), padded and packed,
/// stacked, bidirectional, projected, without biases, batch first, time-checkpointed and with an
/// empty batch; the outputs of a row are flattened and joined into one tensor. Included by
/// op_cases.hpp.
/// test_nn_rnn.cpp checks the modules against LibTorch's numbers.

namespace opcases {

inline std::vector<OpCase> rnn_cases() {
    // batch sizes of a packed sequence stay on the CPU (as LibTorch's)
    const tg::Tensor bs = tg::tensor(std::vector<int64_t>{3, 2, 2, 1});
    auto flat = [](const std::vector<tg::Tensor>& ts) {
        std::vector<tg::Tensor> f;
        for (const tg::Tensor& t : ts)
            f.push_back(t.reshape({-1}));
        return tg::cat(f, 0);
    };
    auto all = [flat](const std::tuple<tg::Tensor, tg::Tensor, tg::Tensor>& r) {
        return flat({std::get<0>(r), std::get<1>(r), std::get<2>(r)});
    };
    auto both = [flat](const std::tuple<tg::Tensor, tg::Tensor>& r) {
        return flat({std::get<0>(r), std::get<1>(r)});
    };
    auto from = [](const V& x, size_t i) {
        return std::vector<tg::Tensor>(x.begin() + i, x.end());
    };
    return {
        {"rnn_tanh_cell",
         {U({2, 3}), U({2, 4}), U({4, 3}), UT({4, 4}), U({4}), U({4})},
         F(tg::rnn_tanh_cell(x[0], x[1], x[2], x[3], x[4], x[5]))},
        // pre-activations away from relu's kink at 0: positive inputs and weights
        {"rnn_relu_cell_no_bias",
         {P({2, 3}), P({2, 4}), P({4, 3}), P({4, 4})},
         F(tg::rnn_relu_cell(x[0], x[1], x[2], x[3]))},
        {"lstm_cell",
         {U({2, 3}), U({2, 4}), U({2, 4}), U({16, 3}), US({16, 4}), U({16}), U({16})},
         F(both(tg::lstm_cell(x[0], {x[1], x[2]}, x[3], x[4], x[5], x[6])))},
        {"gru_cell",
         {UT({3, 2}), U({3, 4}), U({12, 2}), U({12, 4}), U({12}), U({12})},
         F(tg::gru_cell(x[0], x[1], x[2], x[3], x[4], x[5]))},
        {"lstm",
         {U({3, 2, 3}), U({1, 2, 4}), U({1, 2, 4}), U({16, 3}), U({16, 4}), U({16}), U({16})},
         F(all(tg::lstm(x[0], {x[1], x[2]}, from(x, 3), true, 1, 0.0, true, false, false)))},
        {"lstm_bidirectional_stacked_projected",
         {U({2, 2, 3}), U({4, 2, 2}), U({4, 2, 3}), U({12, 3}), U({12, 2}),
          U({12}),      U({12}),      U({2, 3}),                             // layer 0
          U({12, 3}),   U({12, 2}),   U({12}),      U({12}),    U({2, 3}),   // layer 0 reverse
          U({12, 4}),   UT({12, 2}),  U({12}),      U({12}),    U({2, 3}),   // layer 1
          U({12, 4}),   U({12, 2}),   U({12}),      U({12}),    U({2, 3})},  // layer 1 reverse
         F(all(tg::lstm(x[0], {x[1], x[2]}, from(x, 3), true, 2, 0.0, true, true, false)))},
        {"lstm_batch_first_no_bias",
         {U({2, 3, 2}), U({1, 2, 3}), U({1, 2, 3}), U({12, 2}), U({12, 3})},
         F(all(tg::lstm(x[0], {x[1], x[2]}, from(x, 3), false, 1, 0.0, true, false, true)))},
        {"lstm_packed_bidirectional",
         {U({8, 2}), U({2, 3, 3}), U({2, 3, 3}), U({12, 2}), U({12, 3}), U({12}), U({12}),
          U({12, 2}), U({12, 3}), U({12}), U({12})},
         F(all(tg::lstm(x[0], bs, {x[1], x[2]}, from(x, 3), true, 1, 0.0, true, true)))},
        {"lstm_empty_batch",
         {U({2, 0, 3}), U({1, 0, 2}), U({1, 0, 2}), U({8, 3}), U({8, 2}), U({8}), U({8})},
         F(all(tg::lstm(x[0], {x[1], x[2]}, from(x, 3), true, 1, 0.0, true, false, false)))},
        {"gru",
         {U({3, 2, 3}), U({2, 2, 4}), U({12, 3}), U({12, 4}), U({12}), U({12}), U({12, 4}),
          U({12, 4}), U({12}), U({12})},
         F(both(tg::gru(x[0], x[1], from(x, 2), true, 2, 0.0, true, false, false)))},
        {"gru_packed_reverse",
         {U({8, 3}), U({2, 3, 2}), U({6, 3}), U({6, 2}), U({6}), U({6}), U({6, 3}), U({6, 2}),
          U({6}), U({6})},
         F(both(tg::gru(x[0], bs, x[1], from(x, 2), true, 1, 0.0, true, true)))},
        {"rnn_tanh_batch_first_bidirectional",
         {U({2, 3, 3}), U({2, 2, 4}), U({4, 3}), U({4, 4}), U({4}), U({4}), U({4, 3}), U({4, 4}),
          U({4}), U({4})},
         F(both(tg::rnn_tanh(x[0], x[1], from(x, 2), true, 1, 0.0, true, true, true)))},
        // time checkpointing: segments of 1 and of 2 steps (test_rnn_checkpoint.cpp: bit for
        // bit the plain run's)
        {"lstm_checkpointed_projected",
         {U({5, 2, 3}), U({1, 2, 2}), U({1, 2, 4}), U({16, 3}), U({16, 2}), U({16}), U({16}),
          U({2, 4})},
         F(all(tg::lstm(x[0], {x[1], x[2]}, from(x, 3), true, 1, 0.0, true, false, false, 2)))},
        {"gru_packed_checkpointed_bidirectional",
         {U({8, 3}), U({2, 3, 2}), U({6, 3}), U({6, 2}), U({6}), U({6}), U({6, 3}), U({6, 2}),
          U({6}), U({6})},
         F(both(tg::gru(x[0], bs, x[1], from(x, 2), true, 1, 0.0, true, true, 1)))},
        {"rnn_relu_packed_stacked_no_bias",
         {P({8, 2}), P({2, 3, 3}), P({3, 2}), P({3, 3}), P({3, 3}), P({3, 3})},
         F(both(tg::rnn_relu(x[0], bs, x[1], from(x, 2), false, 2, 0.0, true, false)))},
    };
}

}  // namespace opcases
