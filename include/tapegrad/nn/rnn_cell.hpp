#pragma once
/// RNNCell, LSTMCell and GRUCell: one time step of RNN, LSTM and GRU, as LibTorch's (the ops:
/// tg::rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell). weight_ih [G·H, in], weight_hh
/// [G·H, H], bias_ih and bias_hh [G·H] (undefined with bias=false), all U(-1/√H, 1/√H) drawn in
/// that order, as LibTorch's.
#include <cstdint>
#include <optional>
#include <ostream>
#include <tuple>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/activation_kind.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

namespace detail {
/// LibTorch's RNNCellOptionsBase.
struct RNNCellOptionsBase {
    RNNCellOptionsBase(int64_t input_size, int64_t hidden_size, bool bias, int64_t num_chunks)
        : input_size_(input_size),
          hidden_size_(hidden_size),
          bias_(bias),
          num_chunks_(num_chunks) {}
    virtual ~RNNCellOptionsBase() = default;
    TG_ARG(int64_t, input_size);
    TG_ARG(int64_t, hidden_size);
    TG_ARG(bool, bias);
    TG_ARG(int64_t, num_chunks);
};

/// The parameters, checks and printing of the cells (LibTorch's RNNCellImplBase).
class RNNCellImplBase : public Module {
public:
    /// value_error for hidden_size < 1 or input_size < 0.
    RNNCellImplBase(const RNNCellOptionsBase& options, const char* name);
    /// U(-1/√hidden_size, 1/√hidden_size) for every parameter, in registration order.
    void reset_parameters();
    /// LibTorch's form: "LSTMCell(10, 20)", then ", bias=false" and (RNNCell) ",
    /// nonlinearity=kReLU".
    void pretty_print(std::ostream& os) const override;

    RNNCellOptionsBase options_base;
    Tensor weight_ih, weight_hh, bias_ih, bias_hh;

protected:
    /// input [N, input_size]; shape_error with LibTorch's message otherwise.
    void check_forward_input(const Tensor& input) const;
    /// hx [N, hidden_size] for input [N, *] (zeros like input when undefined).
    Tensor hidden_or_zeros(const Tensor& input, const Tensor& hx, const char* label) const;
    virtual const char* nonlinearity_str() const { return ""; }
};
}  // namespace detail

struct RNNCellOptions {
    RNNCellOptions(int64_t input_size, int64_t hidden_size)
        : input_size_(input_size), hidden_size_(hidden_size) {}
    TG_ARG(int64_t, input_size);
    TG_ARG(int64_t, hidden_size);
    TG_ARG(bool, bias) = true;
    TG_ARG(Activation, nonlinearity) = kTanh;
};

struct LSTMCellOptions {
    LSTMCellOptions(int64_t input_size, int64_t hidden_size)
        : input_size_(input_size), hidden_size_(hidden_size) {}
    TG_ARG(int64_t, input_size);
    TG_ARG(int64_t, hidden_size);
    TG_ARG(bool, bias) = true;
};

struct GRUCellOptions {
    GRUCellOptions(int64_t input_size, int64_t hidden_size)
        : input_size_(input_size), hidden_size_(hidden_size) {}
    TG_ARG(int64_t, input_size);
    TG_ARG(int64_t, hidden_size);
    TG_ARG(bool, bias) = true;
};

class RNNCellImpl : public detail::RNNCellImplBase {
public:
    using Options = RNNCellOptions;
    RNNCellImpl(int64_t input_size, int64_t hidden_size)
        : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
    /// value_error for a nonlinearity other than kTanh and kReLU.
    explicit RNNCellImpl(const RNNCellOptions& options);
    /// h' [N, H] from input [N, in] and hx [N, H] (zeros by default).
    Tensor forward(const Tensor& input, Tensor hx = {});
    RNNCellOptions options;

protected:
    const char* nonlinearity_str() const override;
};
TG_MODULE(RNNCell);

class LSTMCellImpl : public detail::RNNCellImplBase {
public:
    using Options = LSTMCellOptions;
    LSTMCellImpl(int64_t input_size, int64_t hidden_size)
        : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
    explicit LSTMCellImpl(const LSTMCellOptions& options);
    /// (h', c') [N, H] each from input [N, in] and (h, c) (zeros by default).
    std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                       std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
    LSTMCellOptions options;
};
TG_MODULE(LSTMCell);

class GRUCellImpl : public detail::RNNCellImplBase {
public:
    using Options = GRUCellOptions;
    GRUCellImpl(int64_t input_size, int64_t hidden_size)
        : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
    explicit GRUCellImpl(const GRUCellOptions& options);
    Tensor forward(const Tensor& input, Tensor hx = {});
    GRUCellOptions options;
};
TG_MODULE(GRUCell);

}  // namespace tg::nn

#pragma GCC visibility pop
