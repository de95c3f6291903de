#pragma once
// One recurrent layer in one direction over a whole sequence (rnn_layer.cpp, the fused node;
// rnn_composed.cpp, the same written with tapegrad's ops), the unit the stacked functions of
// rnn.cpp and the cells are built from.
//
// Note [Packed rows]: a sequence is its time steps' rows one after the other, x [Σ bs, in]:
// step t holds rows [off[t], off[t] + bs[t]) for the bs[t] sequences still running (batch
// sizes never grow: sequences are sorted longest first, as a PackedSequence's). A padded batch
// [T, N, in] is the case bs[t] = N for every t. Row b of every step is sequence b, so the
// state of step t is the first bs[t] rows of the state after the step before it. Running
// forward in time, the sequences that end at t leave their final state in rows
// [bs[t+1], bs[t]); running in reverse (the second direction), rows [bs[t+1], bs[t]) start at t
// from the initial state h0.
#include <cstdint>
#include <string>
#include <vector>

#include "tapegrad/tensor.hpp"

namespace tg::rnn {

enum class Mode { LSTM, GRU, Tanh, ReLU };

/// How many gate blocks of H a mode's weights have (4, 3, 1).
inline int64_t gates_of(Mode m) {
    return m == Mode::LSTM ? 4 : m == Mode::GRU ? 3 : 1;
}

/// One layer in one direction (Note [Packed rows]).
struct Layer {
    Mode mode = Mode::LSTM;
    bool reverse = false;
    std::vector<int64_t> batch_sizes;  // one per time step, non-increasing
    int64_t checkpoint_every = 0;      // 0: keep every step for backward
    std::string op;                    // the op named in errors ("lstm")
    /// off[t]: the first row of step t; off[T] the row count.
    std::vector<int64_t> offsets() const;
    int64_t steps() const { return int64_t(batch_sizes.size()); }
    /// The time step of processing position p (reverse layers run from the last step).
    int64_t time(int64_t p) const { return reverse ? steps() - 1 - p : p; }
};

/// A layer's weights: W_ih [G·H, in], W_hh [G·H, P], biases [G·H] (or undefined), W_hr [P, H]
/// (LSTM projection, or undefined; P = H without).
struct Weights {
    Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
};

/// y [Σ bs, P]: the hidden state of every step; h_n [N, P] and c_n [N, H] (LSTM): the final
/// states.
struct LayerOut {
    Tensor y, h_n, c_n;
};

/// Steps per chunk (Note [Gradient chunks of a recurrent layer] in rnn_layer_backward.cpp) of a
/// layer over T steps of batch N, and the steps of a checkpointed segment: checkpoint_every
/// rounded up to whole chunks, T without checkpointing (Note [Time checkpointing]).
int64_t chunk_steps(int64_t N, int64_t T);
int64_t segment_steps(int64_t checkpoint_every, int64_t N, int64_t T);

/// The layer as one node (Note [One node per recurrent layer] in rnn_layer.cpp). x [Σ bs, in],
/// h0 [N, P], c0 [N, H] (LSTM; undefined otherwise), N = bs[0]. The caller checked the shapes.
LayerOut fused_layer(const Layer& l, const Tensor& x, const Tensor& h0, const Tensor& c0,
                     const Weights& w);

/// The same with tapegrad's ops, step by step, recorded: what the fused node's backward
/// differentiates when it must record (create_graph). x [Σ bs, in], h0 [N, P],
/// c0 [N, H] (LSTM; undefined otherwise), N = bs[0]. The caller checked the shapes.
LayerOut composed_layer(const Layer& l, const Tensor& x, const Tensor& h0, const Tensor& c0,
                        const Weights& w);

}  // namespace tg::rnn
