#pragma once
/// The recurrent modules, as LibTorch's: RNN (tanh or relu), LSTM (with proj_size) and GRU over
/// whole sequences, and RNNCell, LSTMCell and GRUCell for one step (tg::rnn_tanh_cell, ...).
///
///     tg::nn::LSTM lstm(tg::nn::LSTMOptions(64, 256).num_layers(2).batch_first(true));
///     auto [out, state] = lstm->forward(x);           // x [N, T, 64] -> out [N, T, 256]
///     auto [h_n, c_n] = state;                         // [2, N, 256] each
///     auto [packed_out, st] = lstm->forward_with_packed_input(
///         tg::nn::utils::rnn::pack_padded_sequence(x, lengths, true, false));
///
/// Parameters are named and shaped as LibTorch's (weight_ih_l0 [G·H, in], weight_hh_l0 [G·H, P],
/// bias_ih_l0, bias_hh_l0 [G·H], weight_hr_l0 [P, H] with proj_size P, "_reverse" for the second
/// direction) and drawn as LibTorch draws them: U(-1/√H, 1/√H), each in registration order.
/// Each layer and direction runs as one node (tg::lstm and Note [One node per recurrent layer]).
/// checkpoint_every(k), tapegrad's option: keep the states every k steps and recompute the rest
/// in backward (docs/rnn.md); the gradients are the same, bit for bit.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/activation_kind.hpp"
#include "tapegrad/nn/module.hpp"
#include "tapegrad/nn/packed_sequence.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

namespace detail {
/// LibTorch's RNNOptionsBase modes (torch::kLSTM, kGRU, kRNN_TANH, kRNN_RELU).
enum class RNNMode { LSTM, GRU, RNN_TANH, RNN_RELU };

/// What RNN, LSTM and GRU share, as LibTorch's detail::RNNOptionsBase.
struct RNNOptionsBase {
    RNNOptionsBase(RNNMode mode, int64_t input_size, int64_t hidden_size)
        : mode_(mode), input_size_(input_size), hidden_size_(hidden_size) {}
    TG_ARG(RNNMode, mode);
    TG_ARG(int64_t, input_size);
    TG_ARG(int64_t, hidden_size);
    TG_ARG(int64_t, num_layers) = 1;
    TG_ARG(bool, bias) = true;
    TG_ARG(bool, batch_first) = false;
    TG_ARG(double, dropout) = 0.0;
    TG_ARG(bool, bidirectional) = false;
    TG_ARG(int64_t, proj_size) = 0;
    TG_ARG(int64_t, checkpoint_every) = 0;
};

/// The parameters, checks and printing of RNN, LSTM and GRU (LibTorch's RNNImplBase).
class RNNImplBase : public Module {
public:
    /// Registers the parameters and draws them (reset_parameters). value_error for sizes < 1
    /// (num_layers, hidden_size; input_size < 0), dropout outside [0, 1], a proj_size outside
    /// [0, hidden_size) or on a mode other than LSTM, or checkpoint_every < 0.
    RNNImplBase(const RNNOptionsBase& options, const char* name);
    /// U(-1/√hidden_size, 1/√hidden_size) for every parameter, in registration order.
    void reset_parameters();
    /// LibTorch's cuDNN weight packing; nothing to do here (as LibTorch on the CPU).
    void flatten_parameters() {}
    /// Every parameter, layer by layer and direction by direction (w_ih, w_hh, b_ih, b_hh, w_hr).
    std::vector<Tensor> all_weights() const;
    void pretty_print(std::ostream& os) const override;

    RNNOptionsBase options_base;

protected:
    /// input [T, N, in] ([N, T, in] with batch_first) or packed data [Σ, in]; throws shape_error
    /// with LibTorch's message.
    void check_input(const Tensor& input, bool packed) const;
    /// [L·D, batch, size] zeros like input, or hx checked against that shape (message: LibTorch's
    /// "Expected hidden size ..., got ...", with `which` = "" or "[0]", "[1]").
    Tensor hidden_or_zeros(const Tensor& hx, const Tensor& input, int64_t batch, int64_t size,
                           const char* which) const;
    /// The flat weights in ATen's order (tg::lstm's params).
    std::vector<Tensor> flat_weights_;
    std::vector<std::vector<std::string>> all_weights_;  // names per layer and direction
};
}  // namespace detail

/// LibTorch's RNNOptions: nonlinearity kTanh (default) or kReLU.
struct RNNOptions {
    RNNOptions(int64_t input_size, int64_t hidden_size)
        : input_size_(input_size), hidden_size_(hidden_size) {}
    TG_ARG(int64_t, input_size);
    TG_ARG(int64_t, hidden_size);
    TG_ARG(int64_t, num_layers) = 1;
    TG_ARG(Activation, nonlinearity) = kTanh;
    TG_ARG(bool, bias) = true;
    TG_ARG(bool, batch_first) = false;
    TG_ARG(double, dropout) = 0.0;
    TG_ARG(bool, bidirectional) = false;
    /// tapegrad's: keep every k-th state for backward, recompute the rest (0: keep all).
    TG_ARG(int64_t, checkpoint_every) = 0;
};

struct LSTMOptions {
    LSTMOptions(int64_t input_size, int64_t hidden_size)
        : input_size_(input_size), hidden_size_(hidden_size) {}
    TG_ARG(int64_t, input_size);
    TG_ARG(int64_t, hidden_size);
    TG_ARG(int64_t, num_layers) = 1;
    TG_ARG(bool, bias) = true;
    TG_ARG(bool, batch_first) = false;
    TG_ARG(double, dropout) = 0.0;
    TG_ARG(bool, bidirectional) = false;
    TG_ARG(int64_t, proj_size) = 0;
    TG_ARG(int64_t, checkpoint_every) = 0;
};

struct GRUOptions {
    GRUOptions(int64_t input_size, int64_t hidden_size)
        : input_size_(input_size), hidden_size_(hidden_size) {}
    TG_ARG(int64_t, input_size);
    TG_ARG(int64_t, hidden_size);
    TG_ARG(int64_t, num_layers) = 1;
    TG_ARG(bool, bias) = true;
    TG_ARG(bool, batch_first) = false;
    TG_ARG(double, dropout) = 0.0;
    TG_ARG(bool, bidirectional) = false;
    TG_ARG(int64_t, checkpoint_every) = 0;
};

/// Note [Recurrent module options]: the sizes, num_layers, bias, bidirectional and proj_size are
/// read at construction; batch_first, dropout and checkpoint_every from `options` at every
/// forward (so lstm->options.checkpoint_every(k) takes effect at the next one).
class RNNImpl : public detail::RNNImplBase {
public:
    using Options = RNNOptions;
    RNNImpl(int64_t input_size, int64_t hidden_size)
        : RNNImpl(RNNOptions(input_size, hidden_size)) {}
    /// value_error for a nonlinearity other than kTanh and kReLU.
    explicit RNNImpl(const RNNOptions& options);
    /// (output [T, N, D·H] (batch_first: [N, T, D·H]), h_n [L·D, N, H]); hx defaults to zeros.
    std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
    std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
        const utils::rnn::PackedSequence& packed_input, Tensor hx = {});
    RNNOptions options;
};
TG_MODULE(RNN);

class LSTMImpl : public detail::RNNImplBase {
public:
    using Options = LSTMOptions;
    LSTMImpl(int64_t input_size, int64_t hidden_size)
        : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
    explicit LSTMImpl(const LSTMOptions& options);
    /// (output [T, N, D·P], (h_n [L·D, N, P], c_n [L·D, N, H])), P = proj_size or H; hx_opt
    /// defaults to zeros.
    std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
        const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
    std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
        const utils::rnn::PackedSequence& packed_input,
        std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
    LSTMOptions options;

private:
    std::tuple<Tensor, std::tuple<Tensor, Tensor>> run(
        const Tensor& input, const Tensor& batch_sizes, int64_t batch,
        const std::optional<std::tuple<Tensor, Tensor>>& hx);
};
TG_MODULE(LSTM);

class GRUImpl : public detail::RNNImplBase {
public:
    using Options = GRUOptions;
    GRUImpl(int64_t input_size, int64_t hidden_size)
        : GRUImpl(GRUOptions(input_size, hidden_size)) {}
    explicit GRUImpl(const GRUOptions& options);
    std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
    std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
        const utils::rnn::PackedSequence& packed_input, Tensor hx = {});
    GRUOptions options;
};
TG_MODULE(GRU);

}  // namespace tg::nn

#pragma GCC visibility pop

#include "tapegrad/nn/rnn_cell.hpp"        // RNNCell, LSTMCell, GRUCell
#include "tapegrad/nn/rnn_checkpoint.hpp"  // time checkpointing and its planner
