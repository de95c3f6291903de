#pragma once
// The per-unit bodies of the fused recurrent cells (backend.hpp's CellOp). The CPU runs them a
// row at a time (cpu/rnn_cell.cpp), CUDA one thread per unit (cuda/rnn_cell.cu), and OpenCL's
// program text (opencl/rnn_source.cpp) spells the same formulas in OpenCL C. Each computes one
// unit j of one row from that unit's gate pre-activations and states: the gates of unit j are
// columns j, H + j, 2H + j, (3H + j) of the row's [G·H] gate block, so a unit reads and writes
// nothing another unit does (no atomics, any thread count gives the same bits).
//
// Note [Fused recurrent cells]: each time step of a recurrent layer is one GEMM (h·W_hhᵀ added
// to the step's slice of the input projection, computed for every step at once) and one of these
// kernels, which adds the biases, applies the gate nonlinearities and updates the state in one
// pass: what ATen's CPU cells do in about ten elementwise ops with a temporary each. The backward
// kernel turns the gradient of the state into the gradient of the gate pre-activations in one
// pass; the GEMMs of the layer's backward take it from there. The formulas are ATen's (in the
// same order of operations, so float64 agrees with LibTorch to rounding), with σ(x) = 1/(1+e⁻ˣ):
//   LSTM  i, f, g, o = σ(a_i), σ(a_f), tanh(a_g), σ(a_o);  c = f·c₋ + i·g;  h = o·tanh(c)
//         backward, d = dL/dh, dc = dL/dc (from the next step): t = tanh(c),
//         dc ← dc + d·o·(1 - t²);  da_i = dc·g·i(1-i), da_f = dc·c₋·f(1-f), da_g = dc·i·(1-g²),
//         da_o = d·t·o(1-o);  dc₋ = dc·f
//   GRU   r = σ(a_ir + a_hr), z = σ(a_iz + a_hz), n = tanh(a_in + r·a_hn);  h = (h₋ - n)·z + n
//         backward: dn = d·(1-z)·(1-n²), dz = d·(h₋ - n)·z(1-z), dr = dn·a_hn·r(1-r);
//         da_i = (dr, dz, dn), da_h = (dr, dz, dn·r), dh₋ = d·z (+ da_h·W_hh by GEMM)
//   RNN   h = tanh(a) or relu(a);  da = d·(1-h²) or (h > 0 ? d : 0)
// S and Th are the backend's sigmoid and tanh functors (kernels.def's, f(x, p, q)).
#include <cstdint>

#ifdef __CUDACC__
#define TG_CELL_FN __host__ __device__
#else
#define TG_CELL_FN
#endif

namespace tg::backend::rnn_cell {

/// LSTM forward of one unit: the pre-activations i, f, g, o (biases added) become the gates;
/// returns them with the new c and h.
template <class S, class Th, class T>
TG_CELL_FN inline void lstm_forward(T& i, T& f, T& g, T& o, T c_prev, T& c, T& h) {
    i = S::f(i, T(0), T(0));
    f = S::f(f, T(0), T(0));
    g = Th::f(g, T(0), T(0));
    o = S::f(o, T(0), T(0));
    c = f * c_prev + i * g;
    h = o * Th::f(c, T(0), T(0));
}

/// LSTM backward of one unit: d = dL/dh, dc in: dL/dc from the next step, out: dL/dc_prev;
/// da_* the gradients of the pre-activations.
template <class Th, class T>
TG_CELL_FN inline void lstm_backward(T d, T i, T f, T g, T o, T c_prev, T c, T& dc, T& da_i,
                                     T& da_f, T& da_g, T& da_o) {
    const T t = Th::f(c, T(0), T(0));
    const T dcv = dc + d * o * (1 - t * t);
    da_i = dcv * g * (i * (1 - i));
    da_f = dcv * c_prev * (f * (1 - f));
    da_g = dcv * i * (1 - g * g);
    da_o = d * t * (o * (1 - o));
    dc = dcv * f;
}

/// GRU forward of one unit from the input and hidden pre-activations (biases added).
template <class S, class Th, class T>
TG_CELL_FN inline void gru_forward(T ir, T iz, T in, T hr, T hz, T hn, T h_prev, T& r, T& z, T& n,
                                   T& h) {
    r = S::f(hr + ir, T(0), T(0));
    z = S::f(hz + iz, T(0), T(0));
    n = Th::f(in + hn * r, T(0), T(0));
    h = (h_prev - n) * z + n;
}

/// GRU backward of one unit: d = dL/dh; the gradients of the input pre-activations (da_i*), of
/// the hidden ones (the n one is dn·r) and the direct part of dL/dh_prev.
template <class T>
TG_CELL_FN inline void gru_backward(T d, T r, T z, T n, T hn, T h_prev, T& dr, T& dz, T& dn,
                                    T& dh_prev) {
    dn = d * (1 - z) * (1 - n * n);
    dz = d * (h_prev - n) * (z * (1 - z));
    dr = dn * hn * (r * (1 - r));
    dh_prev = d * z;
}

}  // namespace tg::backend::rnn_cell
