#pragma once
/// The recurrent ops (ops.hpp includes this header), with ATen's names and arguments: the cells
/// (one time step) and the stacked, optionally bidirectional, sequence functions behind
/// nn::RNN, nn::LSTM and nn::GRU. Gates in ATen's order and formulas (σ the logistic sigmoid):
///   RNN:  h' = tanh(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh)               (relu for rnn_relu)
///   LSTM: i, f, g, o = σ, σ, tanh, σ of the 4 chunks of x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh
///         c' = f·c + i·g,  h' = o·tanh(c')  (then h' = h'·W_hrᵀ with a projection W_hr [P, H])
///   GRU:  r, z = σ of the first 2 chunks of x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh
///         n = tanh(xₙ·W_inᵀ + b_in + r·(h·W_hnᵀ + b_hn)),  h' = n + z·(h - n)
/// Each layer and direction of a sequence is one node (Note [One node per recurrent layer] in
/// src/ops/rnn_layer.cpp): GEMMs over chunks of 512 rows project the inputs of all time steps,
/// and each step is a GEMM of the recurrent weights and one fused gate kernel, forward and
/// backward. Its backward saves the gates and states; checkpoint_every = k > 0 (tapegrad's, not
/// ATen's) keeps only the states every k steps (rounded up to whole chunks) and recomputes the
/// rest in backward, with the same values and gradients bit for bit (docs/rnn.md).
#include <cstdint>
#include <tuple>

#include "tapegrad/array_ref.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

// ---- cells: input [N, in], hidden states [N, H]; weights [G·H, in], [G·H, H], biases [G·H]
// (G = 1, 4, 3 gates) or undefined
/// h' = tanh(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh);  one node (dh = dpre·W_hh, dW_hh = dpreᵀ·h, ...)
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// h' = relu(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh)
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// (h', c') of one LSTM step; hx = {h, c}
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih = {},
                                     const Tensor& b_hh = {});
/// h' of one GRU step
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = {}, const Tensor& b_hh = {});

// ---- sequences: input [T, N, in] ([N, T, in] with batch_first), or the data [Σ, in] of a
// packed sequence with its batch_sizes (int64 on the CPU, non-increasing, one per time step).
// params: per layer and direction (forward, then reverse), w_ih, w_hh, then b_ih, b_hh when
// has_biases, then LSTM's w_hr when it projects (hx[0] and hx[1] differ in their last dim).
// Hidden states [L·D, N, H] (D = 2 when bidirectional). dropout: on the outputs of every layer
// but the last, in training (ATen's masks). Output [T, N, D·H] (or [Σ, D·H]); h_n as hx.
/// (output, h_n, c_n); hx = {h_0, c_0}
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, TensorList hx, TensorList params,
                                        bool has_biases, int64_t num_layers, double dropout,
                                        bool train, bool bidirectional, bool batch_first,
                                        int64_t checkpoint_every = 0);
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& data, const Tensor& batch_sizes,
                                        TensorList hx, TensorList params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train,
                                        bool bidirectional, int64_t checkpoint_every = 0);
/// (output, h_n)
std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, TensorList params,
                               bool has_biases, int64_t num_layers, double dropout, bool train,
                               bool bidirectional, bool batch_first, int64_t checkpoint_every = 0);
std::tuple<Tensor, Tensor> gru(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                               TensorList params, bool has_biases, int64_t num_layers,
                               double dropout, bool train, bool bidirectional,
                               int64_t checkpoint_every = 0);
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, TensorList params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first,
                                    int64_t checkpoint_every = 0);
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    TensorList params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional,
                                    int64_t checkpoint_every = 0);
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, TensorList params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first,
                                    int64_t checkpoint_every = 0);
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    TensorList params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional,
                                    int64_t checkpoint_every = 0);

}  // namespace tg

#pragma GCC visibility pop
