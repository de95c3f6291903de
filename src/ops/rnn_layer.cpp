// The fused recurrent layer: one layer in one direction over a whole sequence as one node.
//
// Note [One node per recurrent layer]: ATen's CPU layers record about ten nodes per time step
// (two linears, four gate nonlinearities, the state update), each with its temporaries. Here a
// layer is one node. Its forward (run_segment):
//   - one GEMM projects the inputs of every step, x [Σ bs, in]·W_ihᵀ, into the gate buffer;
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
#include <algorithm>

#include "autograd/record.hpp"
#include "ops/rnn_fused.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg::rnn {

using backend::CellOp;

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
    const Tensor xs = rows(cx.x, r0, nr);
    Tensor gi, gh;  // GRU: the input projection and a step's h₋·W_hhᵀ
    switch (cx.l.mode) {
        case Mode::LSTM:
            s.g = buffer(4 * H);
            s.c = buffer(H);
            if (cx.proj())
                s.m = buffer(H);
            mm(op, xs, false, w.w_ih, true, s.g, 0);
            break;
        case Mode::GRU:
            gi = buffer(3 * H);
            s.g = buffer(4 * H);
            gh = runtime::empty({cx.N, 3 * H}, cx.x.dtype(), cx.x.device(), op);
            mm(op, xs, false, w.w_ih, true, gi, 0);
            break;
        default:
            mm(op, xs, false, w.w_ih, true, s.y, 0);
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

LayerOut fused_layer(const Layer& l, const Tensor& x, const Tensor& h0, const Tensor& c0,
                     const Weights& w) {
    const Ctx cx = make_ctx(l, x, h0, c0, w);
    const bool lstm = l.mode == Mode::LSTM;
    LayerOut out;
    out.y = runtime::empty({cx.off.back(), cx.P}, cx.x.dtype(), cx.x.device(), l.op.c_str());
    out.h_n = runtime::empty({cx.N, cx.P}, cx.x.dtype(), cx.x.device(), l.op.c_str());
    if (lstm)
        out.c_n = runtime::empty({cx.N, cx.H}, cx.x.dtype(), cx.x.device(), l.op.c_str());
    Prev prev;
    const Segment seg = run_segment(cx, 0, cx.T, prev, out.y, out.h_n, out.c_n);
    if (!should_record({&x, &h0, &c0, &w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh, &w.w_hr}))
        return out;
    const std::vector<Tensor> inputs{x, h0, c0, w.w_ih, w.w_hh, w.b_ih, w.b_hh, w.w_hr};
    std::vector<Saved> in_saved;
    for (const Tensor& t : inputs)
        in_saved.push_back(t.defined() ? save(t) : Saved());
    std::vector<Tensor*> outs{&out.y, &out.h_n};
    if (lstm)
        outs.push_back(&out.c_n);
    Segment bounds = seg;  // what backward reads is kept as Saved tensors, not here
    bounds.g = bounds.c = bounds.m = bounds.y = Tensor();
    auto keep = [](const Tensor& t) { return t.defined() ? save_intermediate(t) : Saved(); };
    auto backward = [l, in_saved, sg = keep(seg.g), sc = keep(seg.c), sm = keep(seg.m),
                     sy = save_output(out.y), bounds](Grads& dys, const Node& n) {
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
        if (GradMode::is_enabled()) {  // create_graph: the composed layer's formulas
            const LayerOut o =
                composed_layer(l, xs[0], xs[1], xs[2], {xs[3], xs[4], xs[5], xs[6], xs[7]});
            std::vector<Tensor> roots, grads, wrt;
            for (const auto& [r, d] : {std::pair{o.y, dy[0]}, {o.h_n, dy[1]}, {o.c_n, dy[2]}})
                if (r.defined() && d.defined()) {
                    roots.push_back(r);
                    grads.push_back(d);
                }
            for (size_t i = 0; i < xs.size(); ++i)
                if (need[i])
                    wrt.push_back(xs[i]);
            std::vector<Tensor> gw;
            if (!roots.empty() && !wrt.empty())
                gw = autograd::grad(roots, wrt, grads, true, true, true);
            g.resize(xs.size());
            for (size_t i = 0, k = 0; i < xs.size(); ++i)
                if (need[i])
                    g[i] = k < gw.size() ? gw[k++] : Tensor();
        } else {
            Segment s = bounds;
            s.g = sg.get();
            s.c = sc.get();
            s.m = sm.get();
            s.y = sy.get();
            const Ctx cxb = make_ctx(l, xs[0], xs[1], xs[2], {xs[3], xs[4], xs[5], xs[6], xs[7]});
            g = layer_backward(cxb, {s}, dy, need);
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
