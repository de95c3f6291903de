// The time-checkpointing planner of the recurrent modules (include/tapegrad/nn/rnn_checkpoint.hpp).
//
// Note [Recurrent memory model]: per layer and direction over T steps of batch N (rows of
// elements of e bytes; H hidden units, P the state size: proj_size or H), the fused node keeps
// (Note [One node per recurrent layer] in src/ops/rnn_layer.cpp), per row of a step:
//   LSTM  gates 4H + cell state H + o·tanh(c) H with a projection + output P
//   GRU   r, z, n, h₋·W_hnᵀ 4H + output H;   RNN  output H
// Checkpointed with segments of K steps (checkpoint_every rounded up to whole chunks), it keeps
// instead the state before each segment but the first (P, and H for LSTM's c, per row of the
// step before) and the rows of the last segment, and its backward recomputes one segment at a
// time (its rows, plus GRU's input projection 3H per row). A layer after the first keeps its
// input (D·P per row, D directions) unless that is the previous layer's own output (one
// direction, no dropout, not checkpointed), and on the CPU the dropout before it keeps its mask
// as bits. The model counts exactly these buffers; the module's
// input and outputs and the backward's gradient buffers are not in it.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "ops/rnn_layer.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/nn/rnn_checkpoint.hpp"

namespace tg::nn {

namespace {

using detail::RNNMode;

std::string mb(int64_t bytes) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << double(bytes) / (1 << 20) << " MB";
    return s.str();
}

struct Runtime {
    bool batch_first = false;
    double dropout = 0;
};

/// batch_first and dropout as the module's forward reads them (Note [Recurrent module options]).
Runtime runtime_options(const detail::RNNImplBase& m) {
    if (const auto* l = dynamic_cast<const LSTMImpl*>(&m))
        return {l->options.batch_first(), l->options.dropout()};
    if (const auto* g = dynamic_cast<const GRUImpl*>(&m))
        return {g->options.batch_first(), g->options.dropout()};
    if (const auto* r = dynamic_cast<const RNNImpl*>(&m))
        return {r->options.batch_first(), r->options.dropout()};
    return {m.options_base.batch_first(), m.options_base.dropout()};
}

}  // namespace

TimeCheckpointPlan predict(const detail::RNNImplBase& m, const Tensor& x, int64_t k,
                           bool training) {
    const detail::RNNOptionsBase& o = m.options_base;
    if (!x.defined() || x.dim() != 3)
        throw shape_error("plan_checkpoints: expected an input of 3 dims, got " +
                          (x.defined() ? shape_str(x.sizes()) : std::string("undefined")));
    if (k < 0)
        throw value_error("plan_checkpoints: checkpoint_every must be >= 0, got " +
                          std::to_string(k));
    const Runtime rt = runtime_options(m);
    const int64_t T = x.size(rt.batch_first ? 1 : 0), N = x.size(rt.batch_first ? 0 : 1);
    const int64_t e = int64_t(element_size(x.dtype()));
    const int64_t H = o.hidden_size(), P = o.proj_size() > 0 ? o.proj_size() : H;
    const int64_t D = o.bidirectional() ? 2 : 1;
    const bool lstm = o.mode() == RNNMode::LSTM, gru = o.mode() == RNNMode::GRU;
    const int64_t row = lstm ? 4 * H + H + (o.proj_size() > 0 ? H : 0) + P : gru ? 4 * H + H : H;
    const int64_t state = P + (lstm ? H : 0), scratch = gru ? 3 * H : 0;
    const int64_t K = rnn::segment_steps(k, N, T), segs = K > 0 ? (T + K - 1) / K : 0;
    const bool ckpt = K < T;
    const bool dropout = training && rt.dropout > 0;
    TimeCheckpointPlan p;
    p.checkpoint_every = ckpt ? k : 0;
    p.segment_steps = K;
    p.steps = T;
    int64_t kept = 0, plain = 0, recompute = 0;
    for (int64_t l = 0; l < o.num_layers(); ++l) {
        const int64_t input = l > 0 && (D == 2 || dropout || ckpt) ? D * P : 0;
        const int64_t input_plain = l > 0 && (D == 2 || dropout) ? D * P : 0;
        // the dropout before a layer after the first keeps its mask as bits on the CPU (Note
        // [Dropout masks] in src/ops/activation.cpp)
        const bool bits = dropout && l > 0 && x.device().is_cpu() &&
                          (x.dtype() == kFloat32 || x.dtype() == kFloat64);
        const int64_t mask = bits ? (T * N * D * P + 63) / 64 * 8 : 0;
        plain += (D * row + input_plain) * T * N * e + mask;
        if (!ckpt) {
            kept += (D * row + input) * T * N * e + mask;
            continue;
        }
        const int64_t last = T - (segs - 1) * K;
        kept += (D * ((segs - 1) * state + last * row) + input * T) * N * e + mask;
        recompute = std::max(recompute, K * N * (row + scratch) * e);
    }
    p.predicted_saved_bytes = kept;
    p.predicted_peak_bytes = kept + recompute;
    p.plain_saved_bytes = plain;
    p.recompute_fraction = ckpt ? double(T - (T - (segs - 1) * K)) / double(T) : 0.0;
    return p;
}

TimeCheckpointPlan plan_checkpoints(const detail::RNNImplBase& m, const Tensor& x,
                                    MemoryBudget budget) {
    const TimeCheckpointPlan plain = predict(m, x, 0);
    if (plain.predicted_peak_bytes <= budget.bytes) {
        TimeCheckpointPlan p = plain;
        p.budget_bytes = budget.bytes;
        return p;
    }
    // every segment length is a whole number of chunks: try each, the longest that fits
    // recomputes the fewest steps
    const Runtime rt = runtime_options(m);
    const int64_t T = plain.steps, N = x.size(rt.batch_first ? 0 : 1);
    const int64_t L = rnn::chunk_steps(N, T);
    TimeCheckpointPlan best, smallest;
    bool found = false;
    smallest.predicted_peak_bytes = std::numeric_limits<int64_t>::max();
    for (int64_t K = L; K < T; K += L) {
        const TimeCheckpointPlan p = predict(m, x, K);
        if (p.predicted_peak_bytes < smallest.predicted_peak_bytes)
            smallest = p;
        if (p.predicted_peak_bytes <= budget.bytes &&
            (!found || p.recompute_fraction < best.recompute_fraction ||
             (p.recompute_fraction == best.recompute_fraction &&
              p.predicted_peak_bytes < best.predicted_peak_bytes))) {
            best = p;
            found = true;
        }
    }
    if (!found)
        throw value_error(
            "plan_checkpoints: no checkpoint interval fits the budget of " + mb(budget.bytes) +
            " (" + std::to_string(budget.bytes) + " bytes); the smallest feasible budget is " +
            std::to_string(smallest.predicted_peak_bytes) + " bytes (checkpoint_every " +
            std::to_string(smallest.checkpoint_every) + ")");
    best.budget_bytes = budget.bytes;
    return best;
}

std::ostream& operator<<(std::ostream& os, const TimeCheckpointPlan& p) {
    os << "TimeCheckpointPlan: checkpoint_every " << p.checkpoint_every << " (segments of "
       << p.segment_steps << " of " << p.steps << " steps), predicted activations "
       << mb(p.predicted_peak_bytes) << " at peak (" << mb(p.predicted_saved_bytes)
       << " kept; plain " << mb(p.plain_saved_bytes) << ")";
    if (p.budget_bytes > 0)
        os << ", budget " << mb(p.budget_bytes);
    return os << ", recomputes " << std::fixed << std::setprecision(1) << 100 * p.recompute_fraction
              << "% of the steps";
}

}  // namespace tg::nn
