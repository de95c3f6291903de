// The fused recurrent layer: one layer in one direction over a whole sequence as one node.
//
// Note [One node per recurrent layer]: ATen's CPU layers record about ten nodes per time step
// (two linears, four gate nonlinearities, the state update), each with its temporaries. Here a
// layer is one node. Its forward (run_segment):
//   - the input projection of every step, x [Σ bs, in]·W_ihᵀ, goes into the gate buffer as one
//     GEMM per chunk of steps (512 rows' worth, Note [Gradient chunks of a recurrent layer]);
//   - each step adds its recurrent GEMM h₋·W_hhᵀ to its rows of that buffer (GRU: into a
//     scratch buffer, since r multiplies h₋·W_hnᵀ alone) and runs one fused cell kernel (Note
//     [Fused recurrent cells] in backend/device_common/rnn_cell.hpp), which adds the biases,
//     applies the gates and writes c and h (LSTM with a projection: one more GEMM, h = m·W_hrᵀ);
//   - the node saves what its backward reads: the input, the weights, the activated gates
//     (GRU: r, z, n and h₋·W_hnᵀ + b_hn), the cell states (LSTM), m (projection) and the
//     output. The input projection is not kept: the backward needs only its gradient.
// Its backward (rnn_layer_backward.cpp) walks the steps back: one fused kernel turns the
// gradient of the state into the gradient of the gate pre-activations, one GEMM carries it to
// the step before (dh₋ = da·W_hh). The weight gradients and dx are GEMMs over chunks of steps
// (Note [Gradient chunks of a recurrent layer]). With create_graph the backward differentiates
// the composed layer of rnn_composed.cpp instead, so second derivatives are those of its ops.
//
// Note [Time checkpointing]: with checkpoint_every = k the steps run in segments of K steps (k
// rounded up to whole chunks). The node keeps, for every segment but the first, a copy of the
// state before it (h, and c for LSTM: the rows of the step before), and the buffers of the last
// segment only, which backward needs first. Backward walks the segments last to first,
// recomputing each from its state with the same GEMMs and kernels as the forward (the input
// projection and the gradient GEMMs go by chunks, which segments never split), so every value
// and gradient is the plain run's bit for bit. T steps keep O(T/K + K) rows instead of O(T):
// K ≈ √T keeps O(√T), at the price of running the forward of all but the last segment twice.
#include <algorithm>
#include <cmath>

#include "autograd/record.hpp"
#include "ops/rnn_fused.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg::rnn {

using backend::CellOp;

namespace {
constexpr int64_t kChunkRows = 512;
}  // namespace

void mm(const char* op, const Tensor& a, bool ta, const Tensor& b, bool tb, const Tensor& c,
        double beta) {
    const int64_t k = ta ? a.size(0) : a.size(1);
    runtime::gemm(op, ta, tb, c.size(0), c.size(1), k, 1.0, runtime::view(a),
                  std::max<int64_t>(a.size(1), 1), runtime::view(b),
                  std::max<int64_t>(b.size(1), 1), beta, c);
}

void cell(CellOp op, int64_t rows, int64_t H, bool relu, std::initializer_list<Tensor> operands) {
    backend::View v[7];
    const Tensor* first = nullptr;
    int k = 0;
    for (const Tensor& t : operands) {
        if (t.defined()) {
            v[k] = runtime::view(t);
            first = first ? first : &t;
        }
        ++k;
    }
    backend::Cell g;
    g.rows = rows;
    g.hidden = H;
    g.relu = relu ? 1 : 0;
    runtime::be(*first).cell(op, g, v);
}

Tensor state_rows(const Tensor& last, const Tensor& init, int64_t bs) {
    const int64_t have = last.defined() ? last.size(0) : 0;
    if (have == 0)
        return init.narrow(0, 0, bs);
    if (have >= bs)
        return last.narrow(0, 0, bs);
    Tensor s = runtime::empty({bs, init.size(1)}, init.dtype(), init.device());
    runtime::copy_into(s.narrow(0, 0, have), last);
    runtime::copy_into(s.narrow(0, have, bs - have), init.narrow(0, have, bs - have));
    return s;
}

Ctx make_ctx(const Layer& l, const Tensor& x, const Tensor& h0, const Tensor& c0,
             const Weights& w) {
    auto flat = [](const Tensor& t) { return t.defined() ? t.detach().contiguous() : t; };
    Ctx cx;
    cx.l = l;
    cx.off = l.offsets();
    cx.T = l.steps();
    cx.x = flat(x);
    cx.h0 = flat(h0);
    cx.c0 = flat(c0);
    cx.w = {flat(w.w_ih), flat(w.w_hh), flat(w.b_ih), flat(w.b_hh), flat(w.w_hr)};
    cx.N = cx.h0.size(0);
    cx.in = cx.x.size(1);
    cx.H = cx.w.w_hh.size(0) / gates_of(l.mode);
    cx.P = cx.h0.size(1);
    cx.chunk = chunk_steps(cx.N, cx.T);
    return cx;
}

Segment run_segment(const Ctx& cx, int64_t p0, int64_t p1, Prev& prev, const Tensor& y_out,
                    const Tensor& h_n, const Tensor& c_n) {
    const char* op = cx.l.op.c_str();
    const int64_t H = cx.H, r0 = cx.row_lo(p0, p1), nr = cx.row_hi(p0, p1) - r0;
    const Weights& w = cx.w;
    auto buffer = [&](int64_t cols) {
        return runtime::empty({nr, cols}, cx.x.dtype(), cx.x.device(), op);
    };
    Segment s{p0, p1, r0, r0 + nr, {}, {}, {}, {}, prev.h, prev.c};
    s.y = y_out.defined() ? rows(y_out, r0, nr) : buffer(cx.P);
    Tensor gi, gh;  // GRU: the input projection and a step's h₋·W_hhᵀ
    switch (cx.l.mode) {
        case Mode::LSTM:
            s.g = buffer(4 * H);
            s.c = buffer(H);
            if (cx.proj())
                s.m = buffer(H);
            break;
        case Mode::GRU:
            gi = buffer(3 * H);
            s.g = buffer(4 * H);
            gh = runtime::empty({cx.N, 3 * H}, cx.x.dtype(), cx.x.device(), op);
            break;
        default:
            break;
    }
    // the input projection x·W_ihᵀ, one GEMM per chunk (Note [Gradient chunks of a recurrent
    // layer]: the same GEMMs whatever the segments)
    const Tensor& proj = cx.l.mode == Mode::LSTM ? s.g : cx.l.mode == Mode::GRU ? gi : s.y;
    for (int64_t q0 = p0; q0 < p1; q0 += cx.chunk) {
        const int64_t q1 = std::min(q0 + cx.chunk, p1), c0 = cx.row_lo(q0, q1);
        const int64_t n = cx.row_hi(q0, q1) - c0;
        mm(op, rows(cx.x, c0, n), false, w.w_ih, true, rows(proj, c0 - r0, n), 0);
    }
    for (int64_t p = p0; p < p1; ++p) {
        const int64_t t = cx.l.time(p), bs = cx.bs(t), lr = cx.off[size_t(t)] - r0;
        const Tensor hp = state_rows(prev.h, cx.h0, bs), yt = rows(s.y, lr, bs);
        switch (cx.l.mode) {
            case Mode::LSTM: {
                const Tensor gt = rows(s.g, lr, bs), ct = rows(s.c, lr, bs);
                const Tensor mt = cx.proj() ? rows(s.m, lr, bs) : yt;
                mm(op, hp, false, w.w_hh, true, gt, 1);
                cell(CellOp::LstmForward, bs, H, false,
                     {gt, w.b_ih, w.b_hh, state_rows(prev.c, cx.c0, bs), ct, mt});
                if (cx.proj())
                    mm(op, mt, false, w.w_hr, true, yt, 0);
                prev.c = ct;
                break;
            }
            case Mode::GRU: {
                const Tensor ght = rows(gh, 0, bs);
                mm(op, hp, false, w.w_hh, true, ght, 0);
                cell(CellOp::GruForward, bs, H, false,
                     {rows(gi, lr, bs), ght, w.b_ih, w.b_hh, hp, rows(s.g, lr, bs), yt});
                break;
            }
            default:
                mm(op, hp, false, w.w_hh, true, yt, 1);
                cell(CellOp::RnnForward, bs, H, cx.l.mode == Mode::ReLU, {yt, w.b_ih, w.b_hh});
        }
        prev.h = yt;
        if (!h_n.defined())
            continue;
        // the sequences that end here: rows [next, bs) (reverse: every row ends at time 0)
        const int64_t next = cx.l.reverse ? (t == 0 ? 0 : bs) : (t + 1 < cx.T ? cx.bs(t + 1) : 0);
        if (next < bs) {
            runtime::copy_into(rows(h_n, next, bs - next), rows(yt, next, bs - next));
            if (c_n.defined())
                runtime::copy_into(rows(c_n, next, bs - next), rows(prev.c, next, bs - next));
        }
    }
    return s;
}

namespace {

/// What the node keeps of one segment: its bounds, the state before it (checkpointing) and, when
/// its buffers are kept, those (Note [Time checkpointing]).
struct KeptSegment {
    Segment bounds;  // tensors cleared
    Saved g, c, m, y, h_before, c_before;
};

Saved keep(const Tensor& t) {
    return t.defined() ? save_intermediate(t) : Saved();
}

/// A copy of t in its own buffer (a snapshot outliving the buffer it views).
Tensor own(const Tensor& t) {
    if (!t.defined())
        return t;
    Tensor c = runtime::empty(t.sizes(), t.dtype(), t.device());
    runtime::copy_into(c, t);
    return c;
}

/// The gradients with create_graph: the composed layer's, recorded (its ops' second derivatives).
std::vector<Tensor> composed_backward(const Layer& l, const std::vector<Tensor>& xs,
                                      const std::vector<Tensor>& dy,
                                      const std::vector<bool>& need) {
    const LayerOut o = composed_layer(l, xs[0], xs[1], xs[2], {xs[3], xs[4], xs[5], xs[6], xs[7]});
    std::vector<Tensor> roots, grads, wrt;
    for (const auto& [r, d] : {std::pair{o.y, dy[0]}, {o.h_n, dy[1]}, {o.c_n, dy[2]}})
        if (r.defined() && d.defined()) {
            roots.push_back(r);
            grads.push_back(d);
        }
    for (size_t i = 0; i < xs.size(); ++i)
        if (need[i])
            wrt.push_back(xs[i]);
    std::vector<Tensor> gw, g(xs.size());
    if (!roots.empty() && !wrt.empty())
        gw = autograd::grad(roots, wrt, grads, true, true, true);
    for (size_t i = 0, k = 0; i < xs.size(); ++i)
        if (need[i])
            g[i] = k < gw.size() ? gw[k++] : Tensor();
    return g;
}

}  // namespace

int64_t chunk_steps(int64_t N, int64_t T) {
    // kChunkRows rows' worth of steps, at most √T (so that checkpointing can keep ~√T states)
    const int64_t by_rows = (kChunkRows + N - 1) / std::max<int64_t>(N, 1);
    const int64_t by_steps = int64_t(std::ceil(std::sqrt(double(T))));
    return std::max<int64_t>(1, std::min(by_rows, by_steps));
}

int64_t segment_steps(int64_t k, int64_t N, int64_t T) {
    const int64_t L = chunk_steps(N, T);
    return k <= 0 ? T : std::min(T, (k + L - 1) / L * L);
}

LayerOut fused_layer(const Layer& l, const Tensor& x, const Tensor& h0, const Tensor& c0,
                     const Weights& w) {
    const Ctx cx = make_ctx(l, x, h0, c0, w);
    const bool lstm = l.mode == Mode::LSTM;
    const bool rec = should_record({&x, &h0, &c0, &w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh, &w.w_hr});
    LayerOut out;
    out.y = runtime::empty({cx.off.back(), cx.P}, cx.x.dtype(), cx.x.device(), l.op.c_str());
    out.h_n = runtime::empty({cx.N, cx.P}, cx.x.dtype(), cx.x.device(), l.op.c_str());
    if (lstm)
        out.c_n = runtime::empty({cx.N, cx.H}, cx.x.dtype(), cx.x.device(), l.op.c_str());
    // Note [Time checkpointing]: segments of K steps; all but the last keep only the state
    // before them, the last (needed first in backward) keeps its buffers
    const int64_t K = segment_steps(l.checkpoint_every, cx.N, cx.T);
    const bool plain = K >= cx.T;
    std::vector<KeptSegment> kept;
    Prev prev;
    for (int64_t p0 = 0; p0 < cx.T; p0 += K) {
        const int64_t p1 = std::min(p0 + K, cx.T);
        const bool last = p1 == cx.T;
        KeptSegment k;
        if (rec && p0 > 0) {
            k.h_before = keep(own(prev.h));
            k.c_before = keep(own(prev.c));
        }
        Segment s =
            run_segment(cx, p0, p1, prev, plain || !last ? out.y : Tensor(), out.h_n, out.c_n);
        if (!plain && last)
            runtime::copy_into(rows(out.y, s.r0, s.r1 - s.r0), s.y);
        if (!rec)
            continue;
        if (last) {
            k.g = keep(s.g);
            k.c = keep(s.c);
            k.m = keep(s.m);
            k.y = plain ? save_output(out.y) : keep(s.y);
        }
        k.bounds = s;
        k.bounds.g = k.bounds.c = k.bounds.m = k.bounds.y = Tensor();
        k.bounds.h_before = k.bounds.c_before = Tensor();
        kept.push_back(std::move(k));
    }
    if (!rec)
        return out;
    const std::vector<Tensor> inputs{x, h0, c0, w.w_ih, w.w_hh, w.b_ih, w.b_hh, w.w_hr};
    std::vector<Saved> in_saved;
    for (const Tensor& t : inputs)
        in_saved.push_back(t.defined() ? save(t) : Saved());
    std::vector<Tensor*> outs{&out.y, &out.h_n};
    if (lstm)
        outs.push_back(&out.c_n);
    auto backward = [l, in_saved, kept](Grads& dys, const Node& n) {
        std::vector<Tensor> xs;
        for (const Saved& s : in_saved)
            xs.push_back(s.defined() ? s.get() : Tensor());
        std::vector<Tensor> dy(3);
        for (size_t i = 0; i < dys.size() && i < 3; ++i)
            dy[i] = dys[i];
        std::vector<bool> need;
        for (size_t i = 0; i < xs.size(); ++i)
            need.push_back(xs[i].defined() && needs(n, i));
        std::vector<Tensor> g;
        if (GradMode::is_enabled()) {
            g = composed_backward(l, xs, dy, need);
        } else {
            const Ctx cxb = make_ctx(l, xs[0], xs[1], xs[2], {xs[3], xs[4], xs[5], xs[6], xs[7]});
            auto segment = [&](size_t i) {
                const KeptSegment& k = kept[i];
                Segment s = k.bounds;
                s.h_before = k.h_before.get();
                s.c_before = k.c_before.get();
                if (!k.y.defined()) {  // recompute it from the state before it
                    Prev from{s.h_before, s.c_before};
                    Segment r = run_segment(cxb, s.p0, s.p1, from, {}, {}, {});
                    r.h_before = s.h_before;
                    r.c_before = s.c_before;
                    return r;
                }
                s.g = k.g.get();
                s.c = k.c.get();
                s.m = k.m.get();
                s.y = k.y.get();
                return s;
            };
            g = layer_backward(cxb, kept.size(), segment, dy, need);
        }
        Grads r(xs.size());
        for (size_t i = 0; i < xs.size(); ++i)
            r[i] = g[i];
        return r;
    };
    autograd::detail::record_list(l.op.c_str(), inputs, outs, std::move(backward));
    return out;
}

}  // namespace tg::rnn
