// The backward of the fused recurrent layer (Note [One node per recurrent layer] in
// rnn_layer.cpp): the steps in reverse processing order, each one fused cell kernel and one
// GEMM, the weight gradients and dx over chunks of steps.
//
// Note [Gradient chunks of a recurrent layer]: a step's gradient of its gate pre-activations
// da_t [bs, G·H] feeds dx_t = da_t·W_ih, dW_ih += da_tᵀ·x_t, dW_hh += da_tᵀ·h_{t-1} and db +=
// Σ_rows da_t. Done a step at a time those are thin GEMMs (k = the batch) that read and write
// the whole of dW each step; done once at the end they need da of every step, a buffer as large
// as the gates. So da is collected over a chunk of steps, 512 rows' worth and at most ⌈√T⌉
// steps (chunk_steps), with the h_{t-1} the chunk read, and the chunk is flushed into dx, dW
// and db with one GEMM each (one GEMV for each bias). The forward projects the inputs a chunk at
// a time too. BLAS results depend on how a product is split (OpenBLAS computes a row of A·B
// differently in a call of 1 or 3 rows than in a call of 2048), so the chunks are fixed by the
// step count and batch alone: a run with time checkpointing, whose segments are whole chunks,
// makes exactly the same GEMM calls in the same order, and its values and gradients are the
// plain run's bit for bit.
#include <algorithm>

#include "ops/rnn_fused.hpp"
#include "runtime/dispatch.hpp"

namespace tg::rnn {

using backend::CellOp;

std::vector<Tensor> layer_backward(const Ctx& cx, size_t segments,
                                   const std::function<Segment(size_t)>& segment,
                                   const std::vector<Tensor>& dys, const std::vector<bool>& need) {
    const char* op = cx.l.op.c_str();
    const Mode mode = cx.l.mode;
    const bool gru = mode == Mode::GRU;
    const int64_t H = cx.H, P = cx.P, N = cx.N, T = cx.T, G = gates_of(mode) * H;
    const Weights& w = cx.w;
    auto make = [&](const Shape& s) { return runtime::empty(s, cx.x.dtype(), cx.x.device(), op); };
    auto zeros = [&](const Shape& s) {
        Tensor t = make(s);
        runtime::fill(t, 0);
        return t;
    };
    const Tensor dY = dys[0].defined() ? dys[0].detach().contiguous() : Tensor();
    Tensor dh = zeros({N, P}), dc;
    if (dys[1].defined())
        runtime::copy_into(dh, dys[1]);
    if (mode == Mode::LSTM) {
        dc = zeros({N, H});
        if (dys[2].defined())
            runtime::copy_into(dc, dys[2]);
    }
    std::vector<Tensor> g(8);
    if (need[0])
        g[0] = make({cx.off.back(), cx.in});
    const Shape wshape[8] = {{}, {}, {}, {G, cx.in}, {G, P}, {G}, {G}, {P, H}};
    for (size_t i = 3; i < 8; ++i)
        if (need[i])
            g[i] = zeros(wshape[i]);
    // Note [Gradient chunks of a recurrent layer]
    const int64_t L = cx.chunk, cap = std::min(L, T) * N;
    const Tensor dG = make({cap, G}), dGH = gru ? make({cap, G}) : dG;
    const Tensor hprev = need[4] ? make({cap, P}) : Tensor();
    const bool proj = cx.proj();
    const Tensor dyt_c = proj ? make({cap, P}) : Tensor(), m_c = proj ? make({cap, H}) : Tensor(),
                 dm = proj ? make({N, H}) : Tensor();
    Tensor ones;
    if (need[5] || need[6]) {
        ones = make({cap});
        runtime::fill(ones, 1);
    }
    auto bias_grad = [&](const Tensor& da, const Tensor& db) {
        runtime::gemv(op, true, da.size(0), G, 1.0, runtime::view(da), G, runtime::view(ones), 1,
                      1.0, db);
    };
    auto flush = [&](int64_t q0, int64_t q1) {
        const int64_t r0 = cx.row_lo(q0, q1), nr = cx.row_hi(q0, q1) - r0;
        const Tensor da = rows(dG, 0, nr), dah = rows(dGH, 0, nr);
        if (need[0])
            mm(op, da, false, w.w_ih, false, rows(g[0], r0, nr), 0);
        if (need[3])
            mm(op, da, true, rows(cx.x, r0, nr), false, g[3], 1);
        if (need[4])
            mm(op, dah, true, rows(hprev, 0, nr), false, g[4], 1);
        if (need[5])
            bias_grad(da, g[5]);
        if (need[6])
            bias_grad(dah, g[6]);
        if (need[7])
            mm(op, rows(dyt_c, 0, nr), true, rows(m_c, 0, nr), false, g[7], 1);
    };
    for (size_t i = segments; i-- > 0;) {
        const Segment s = segment(i);  // recomputed (Note [Time checkpointing]) or kept
        for (int64_t p = s.p1 - 1; p >= s.p0; --p) {
            const int64_t t = cx.l.time(p), bs = cx.bs(t), lr = cx.off[size_t(t)] - s.r0;
            const int64_t q0 = p / L * L, q1 = std::min(q0 + L, T);
            const int64_t cr = cx.off[size_t(t)] - cx.row_lo(q0, q1);
            Tensor h_last = s.h_before, c_last = s.c_before;  // the state before step p
            if (p > s.p0) {
                const int64_t tp = cx.l.time(p - 1), lp = cx.off[size_t(tp)] - s.r0;
                h_last = rows(s.y, lp, cx.bs(tp));
                c_last = rows(s.c, lp, cx.bs(tp));
            }
            const Tensor hp = state_rows(h_last, cx.h0, bs);
            const Tensor dyt = rows(dY, cx.off[size_t(t)], bs), dht = rows(dh, 0, bs);
            const Tensor dat = rows(dG, cr, bs);
            switch (mode) {
                case Mode::LSTM: {
                    Tensor d = dht, plus = dyt;
                    if (proj) {  // dL/dm = (dh + dy)·W_hr, and dW_hr's operands
                        const Tensor tot = rows(dyt_c, cr, bs);
                        if (dyt.defined())
                            runtime::binary_into(backend::BinaryOp::add, tot, dht, dyt, op, 0, 0);
                        else
                            runtime::copy_into(tot, dht);
                        d = rows(dm, 0, bs);
                        plus = Tensor();
                        mm(op, tot, false, w.w_hr, false, d, 0);
                        runtime::copy_into(rows(m_c, cr, bs), rows(s.m, lr, bs));
                    }
                    cell(CellOp::LstmBackward, bs, H, false,
                         {d, plus, rows(s.g, lr, bs), state_rows(c_last, cx.c0, bs),
                          rows(s.c, lr, bs), rows(dc, 0, bs), dat});
                    mm(op, dat, false, w.w_hh, false, dht, 0);
                    break;
                }
                case Mode::GRU: {
                    const Tensor daht = rows(dGH, cr, bs);
                    cell(CellOp::GruBackward, bs, H, false,
                         {dht, dyt, rows(s.g, lr, bs), hp, dat, daht});
                    mm(op, daht, false, w.w_hh, false, dht, 1);
                    break;
                }
                default:
                    cell(CellOp::RnnBackward, bs, H, mode == Mode::ReLU,
                         {dht, dyt, rows(s.y, lr, bs), dat});
                    mm(op, dat, false, w.w_hh, false, dht, 0);
            }
            if (need[4])
                runtime::copy_into(rows(hprev, cr, bs), hp);
            if (p == q0)
                flush(q0, q1);
        }
    }
    if (need[1])
        g[1] = dh;
    if (need[2])
        g[2] = dc;
    return g;
}

}  // namespace tg::rnn
