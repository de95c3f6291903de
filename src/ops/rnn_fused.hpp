#pragma once
// The fused recurrent layer's shared pieces (rnn_layer.cpp: forward and the node;
// rnn_layer_backward.cpp: backward): the layer's geometry, what a run over a segment of time
// steps computed, and the kernels' call helpers. Everything here works on detached tensors.
#include <cstdint>
#include <functional>
#include <vector>

#include "backend/backend.hpp"
#include "ops/rnn_layer.hpp"

namespace tg::rnn {

/// A layer's sizes and row layout (Note [Packed rows]) with its detached, contiguous operands.
struct Ctx {
    Layer l;
    std::vector<int64_t> off;  // Layer::offsets()
    int64_t T = 0, N = 0, in = 0, H = 0, P = 0;
    int64_t chunk = 1;  // steps per chunk (Note [Gradient chunks of a recurrent layer])
    Tensor x, h0, c0;   // [Σ bs, in], [N, P], [N, H]
    Weights w;
    bool proj() const { return w.w_hr.defined(); }
    int64_t bs(int64_t t) const { return l.batch_sizes[size_t(t)]; }
    /// The rows of the time steps of processing positions [p0, p1).
    int64_t row_lo(int64_t p0, int64_t p1) const {
        return l.reverse ? off[size_t(T - p1)] : off[size_t(p0)];
    }
    int64_t row_hi(int64_t p0, int64_t p1) const {
        return l.reverse ? off[size_t(T - p0)] : off[size_t(p1)];
    }
};

/// Ctx of the layer over x, h0, c0 and w (detached; copied only where not contiguous).
Ctx make_ctx(const Layer& l, const Tensor& x, const Tensor& h0, const Tensor& c0, const Weights& w);

/// What the forward computed over processing positions [p0, p1), rows [r0, r1) (Note [One
/// node per recurrent layer] in rnn_layer.cpp says what each holds).
struct Segment {
    int64_t p0 = 0, p1 = 0, r0 = 0, r1 = 0;
    Tensor g;  // LSTM: gates [rows, 4H]; GRU: r, z, n, gh_n [rows, 4H]; RNN: undefined
    Tensor c;  // LSTM: cell states [rows, H]
    Tensor m;  // LSTM with a projection: o·tanh(c) [rows, H]
    Tensor y;  // hidden states [rows, P]
    Tensor h_before, c_before;  // the state before p0 (Prev), undefined before the first step
};

/// The state after the step before a segment: its rows of h and (LSTM) c; undefined before
/// the first step.
struct Prev {
    Tensor h, c;
};

/// The first bs rows of the state `last` (the step before's rows), completed from `init` (h0 or
/// c0) where sequences start (Note [Packed rows]): a view when `last` covers them.
Tensor state_rows(const Tensor& last, const Tensor& init, int64_t bs);

/// Runs processing positions [p0, p1) from the state `prev` (updated to the last step's).
/// y_out: where to write the hidden states (the rows of the layer's output), or undefined for
/// a buffer of the segment's own. h_n, c_n: when defined, the final states of sequences that
/// end in the segment are copied there.
Segment run_segment(const Ctx& cx, int64_t p0, int64_t p1, Prev& prev, const Tensor& y_out,
                    const Tensor& h_n, const Tensor& c_n);

/// The backward of the layer (rnn_layer_backward.cpp). segment(i): the forward's segment i (in
/// processing order; one without checkpointing), asked for last to first; `dys`: the gradients of
/// y, h_n, c_n (any may be undefined); `need[i]`: whether input i (x, h0, c0, w_ih, w_hh, b_ih,
/// b_hh, w_hr) needs its gradient. Returns them in that order.
std::vector<Tensor> layer_backward(const Ctx& cx, size_t segments,
                                   const std::function<Segment(size_t)>& segment,
                                   const std::vector<Tensor>& dys, const std::vector<bool>& need);

// ---- helpers (rnn_layer.cpp)
/// c = op(a)·op(b) + beta·c for contiguous row-major matrices (op: transposed when ta / tb).
void mm(const char* op, const Tensor& a, bool ta, const Tensor& b, bool tb, const Tensor& c,
        double beta);
/// The backend's cell kernel over rows of H units; undefined operands are absent ones.
void cell(backend::CellOp op, int64_t rows, int64_t H, bool relu,
          std::initializer_list<Tensor> operands);
/// Rows [r0, r0 + n) of t (a view).
inline Tensor rows(const Tensor& t, int64_t r0, int64_t n) {
    return t.defined() ? t.narrow(0, r0, n) : t;
}

}  // namespace tg::rnn
