// A recurrent layer written with tapegrad's ops, a time step at a time, as ATen's CPU cells
// compute it (each step: two linears, the gate nonlinearities, the state update).
#include <algorithm>

#include "ops/rnn_layer.hpp"
#include "tapegrad/ops.hpp"

namespace tg::rnn {

std::vector<int64_t> Layer::offsets() const {
    std::vector<int64_t> off(batch_sizes.size() + 1, 0);
    for (size_t t = 0; t < batch_sizes.size(); ++t)
        off[t + 1] = off[t] + batch_sizes[t];
    return off;
}

namespace {

/// One step of the cell: the new (h, c) from x_t and the state's first rows.
struct State {
    Tensor h, c;
};

State step(Mode mode, const Weights& w, const Tensor& x, const State& s) {
    const int64_t H = w.w_hh.size(0) / gates_of(mode);
    auto chunk = [H](const Tensor& g, int64_t k) { return g.narrow(1, k * H, H); };
    switch (mode) {
        case Mode::LSTM: {
            const Tensor gates = linear(s.h, w.w_hh, w.b_hh) + linear(x, w.w_ih, w.b_ih);
            const Tensor i = sigmoid(chunk(gates, 0)), f = sigmoid(chunk(gates, 1)),
                         g = tanh(chunk(gates, 2)), o = sigmoid(chunk(gates, 3));
            State n;
            n.c = f * s.c + i * g;
            n.h = o * tanh(n.c);
            if (w.w_hr.defined())
                n.h = matmul(n.h, w.w_hr.t());
            return n;
        }
        case Mode::GRU: {
            const Tensor gi = linear(x, w.w_ih, w.b_ih), gh = linear(s.h, w.w_hh, w.b_hh);
            const Tensor r = sigmoid(chunk(gh, 0) + chunk(gi, 0)),
                         z = sigmoid(chunk(gh, 1) + chunk(gi, 1));
            const Tensor n = tanh(chunk(gi, 2) + chunk(gh, 2) * r);
            return {(s.h - n) * z + n, {}};
        }
        default: {
            const Tensor pre = linear(s.h, w.w_hh, w.b_hh) + linear(x, w.w_ih, w.b_ih);
            return {mode == Mode::Tanh ? tanh(pre) : relu(pre), {}};
        }
    }
}

Tensor rows(const Tensor& t, int64_t start, int64_t n) {
    return t.defined() ? t.narrow(0, start, n) : t;
}
Tensor join(const Tensor& a, const Tensor& b) {
    return a.defined() ? cat({a, b}, 0) : a;
}

}  // namespace

LayerOut composed_layer(const Layer& l, const Tensor& x, const Tensor& h0, const Tensor& c0,
                        const Weights& w) {
    const std::vector<int64_t> off = l.offsets();
    const int64_t T = l.steps();
    std::vector<Tensor> ys(static_cast<size_t>(T));
    std::vector<State> done;  // final states of the sequences that ended, last rows first
    State s;
    int64_t cur = 0;  // rows of s
    for (int64_t p = 0; p < T; ++p) {
        const int64_t t = l.time(p), bs = l.batch_sizes[size_t(t)];
        if (p == 0) {
            s = {rows(h0, 0, bs), rows(c0, 0, bs)};
        } else if (bs < cur) {  // sequences [bs, cur) ended at the step before
            done.push_back({rows(s.h, bs, cur - bs), rows(s.c, bs, cur - bs)});
            s = {rows(s.h, 0, bs), rows(s.c, 0, bs)};
        } else if (bs > cur) {  // sequences [cur, bs) start from the initial state
            s = {join(s.h, rows(h0, cur, bs - cur)), join(s.c, rows(c0, cur, bs - cur))};
        }
        cur = bs;
        s = step(l.mode, w, x.narrow(0, off[size_t(t)], bs), s);
        ys[size_t(t)] = s.h;
    }
    done.push_back(s);
    std::reverse(done.begin(), done.end());
    std::vector<Tensor> hs, cs;
    for (const State& d : done) {
        hs.push_back(d.h);
        cs.push_back(d.c);
    }
    LayerOut out;
    out.y = T == 1 ? ys[0] : cat(ys, 0);
    out.h_n = hs.size() == 1 ? hs[0] : cat(hs, 0);
    if (l.mode == Mode::LSTM)
        out.c_n = cs.size() == 1 ? cs[0] : cat(cs, 0);
    return out;
}

}  // namespace tg::rnn
