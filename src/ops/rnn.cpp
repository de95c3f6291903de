// The recurrent ops of rnn_ops.hpp: argument checks, then layers (rnn_layer.hpp) stacked as
// ATen stacks them: each layer's input is the previous layer's output (both directions' outputs
// joined along the features), with dropout between layers in training.
#include <string>
#include <vector>

#include "ops/rnn_layer.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

using rnn::Layer;
using rnn::LayerOut;
using rnn::Mode;
using rnn::Weights;

struct Stack {
    Mode mode;
    const char* op;
    bool has_biases;
    int64_t num_layers;
    double dropout;
    bool train;
    bool bidirectional;
    int64_t checkpoint_every;
    int64_t dirs() const { return bidirectional ? 2 : 1; }
    int64_t per_layer(bool proj) const { return (has_biases ? 4 : 2) + (proj ? 1 : 0); }
};

std::string str(int64_t v) {
    return std::to_string(v);
}

void check_like(const char* op, const std::string& what, const Tensor& t, const Tensor& x) {
    if (!t.defined())
        throw value_error(std::string(op) + ": " + what + " is undefined");
    if (t.dtype() != x.dtype())
        throw dtype_error(std::string(op) + ": " + what + " is " + dtype_name(t.dtype()) +
                          ", input " + dtype_name(x.dtype()));
    if (t.device() != x.device())
        throw device_error(std::string(op) + ": " + what + " on " + t.device().str() +
                           ", input on " + x.device().str());
}

void check_shape(const char* op, const std::string& what, const Tensor& t, const Shape& want) {
    if (t.sizes() != want)
        throw shape_error(std::string(op) + ": expected " + what + " of shape " + shape_str(want) +
                          ", got " + shape_str(t.sizes()));
}

/// The batch sizes of a packed sequence as a vector, checked (Note [Packed rows]).
std::vector<int64_t> read_batch_sizes(const char* op, const Tensor& bs, int64_t rows) {
    if (!bs.defined() || bs.dtype() != kInt64 || bs.dim() != 1 || !bs.device().is_cpu())
        throw dtype_error(std::string(op) + ": batch_sizes must be a 1-D int64 tensor on the cpu" +
                          (bs.defined() ? ", got " + std::string(dtype_name(bs.dtype())) + " " +
                                              shape_str(bs.sizes()) + " on " + bs.device().str()
                                        : std::string(", got an undefined tensor")));
    const Tensor c = bs.contiguous();
    std::vector<int64_t> v(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
    if (v.empty())
        throw shape_error(std::string(op) + ": Expected sequence length to be larger than 0");
    int64_t sum = 0;
    for (size_t t = 0; t < v.size(); ++t) {
        if (v[t] <= 0 || (t > 0 && v[t] > v[t - 1]))
            throw value_error(std::string(op) +
                              ": batch_sizes must be positive and non-increasing, got " +
                              str(v[t]) + " at step " + str(int64_t(t)));
        sum += v[t];
    }
    if (sum != rows)
        throw shape_error(std::string(op) + ": batch_sizes sum to " + str(sum) +
                          " but the packed data has " + str(rows) + " rows");
    return v;
}

/// Checks hx, cx and params against the stack and input data [rows, in]; returns the weights
/// of each layer and direction.
std::vector<Weights> check_stack(const Stack& s, const Tensor& data, int64_t batch,
                                 const Tensor& hx, const Tensor& cx, TensorList params) {
    const char* op = s.op;
    if (s.num_layers < 1)
        throw value_error(std::string(op) + ": num_layers must be >= 1, got " + str(s.num_layers));
    if (!(s.dropout >= 0 && s.dropout <= 1))
        throw value_error(std::string(op) + ": dropout must be in [0, 1], got " +
                          runtime::scalar_str(s.dropout));
    if (s.checkpoint_every < 0)
        throw value_error(std::string(op) + ": checkpoint_every must be >= 0, got " +
                          str(s.checkpoint_every));
    runtime::check_floating(op, data);
    check_like(op, "hx", hx, data);
    if (hx.dim() != 3)
        throw shape_error(std::string(op) +
                          ": expected hx of 3 dims [layers, batch, hidden], got " +
                          shape_str(hx.sizes()));
    const int64_t P = hx.size(2), LD = s.num_layers * s.dirs();
    int64_t H = P;
    if (s.mode == Mode::LSTM) {
        check_like(op, "cx", cx, data);
        if (cx.dim() != 3)
            throw shape_error(std::string(op) + ": expected cx of 3 dims, got " +
                              shape_str(cx.sizes()));
        H = cx.size(2);
        check_shape(op, "cx", cx, {LD, batch, H});
    }
    check_shape(op, "hx", hx, {LD, batch, P});
    const bool proj = P != H;
    if (proj && (P <= 0 || P >= H))
        throw shape_error(std::string(op) + ": a projection needs 0 < hx's size " + str(P) +
                          " < cx's size " + str(H));
    const int64_t k = s.per_layer(proj);
    if (int64_t(params.size()) != LD * k)
        throw value_error(std::string(op) + ": expected " + str(LD * k) + " parameters (" +
                          str(LD) + " layers and directions of " + str(k) + "), got " +
                          str(int64_t(params.size())));
    const int64_t G = rnn::gates_of(s.mode);
    std::vector<Weights> ws;
    for (int64_t i = 0; i < LD; ++i) {
        const Tensor* p = params.data() + i * k;
        const std::string at = " of layer " + str(i / s.dirs()) + (i % s.dirs() ? " reverse" : "");
        const int64_t in = i < s.dirs() ? data.size(-1) : s.dirs() * P;
        Weights w{p[0], p[1], s.has_biases ? p[2] : Tensor(), s.has_biases ? p[3] : Tensor(),
                  proj ? p[k - 1] : Tensor()};
        check_like(op, "w_ih" + at, w.w_ih, data);
        if (i < s.dirs() && w.w_ih.dim() == 2 && w.w_ih.size(1) != in)
            throw shape_error(std::string(op) + ": input has " + str(in) + " features, w_ih" + at +
                              " " + shape_str(w.w_ih.sizes()) + " takes " + str(w.w_ih.size(1)));
        check_shape(op, "w_ih" + at, w.w_ih, {G * H, in});
        check_like(op, "w_hh" + at, w.w_hh, data);
        check_shape(op, "w_hh" + at, w.w_hh, {G * H, P});
        if (s.has_biases) {
            check_like(op, "b_ih" + at, w.b_ih, data);
            check_shape(op, "b_ih" + at, w.b_ih, {G * H});
            check_like(op, "b_hh" + at, w.b_hh, data);
            check_shape(op, "b_hh" + at, w.b_hh, {G * H});
        }
        if (proj) {
            check_like(op, "w_hr" + at, w.w_hr, data);
            check_shape(op, "w_hr" + at, w.w_hr, {P, H});
        }
        ws.push_back(w);
    }
    return ws;
}

/// The stack over packed rows data [Σ bs, in]: (output [Σ bs, D·P], h_n, c_n).
std::tuple<Tensor, Tensor, Tensor> run_stack(const Stack& s, const Tensor& data,
                                             const std::vector<int64_t>& bs, const Tensor& hx,
                                             const Tensor& cx, TensorList params) {
    const std::vector<Weights> ws = check_stack(s, data, bs[0], hx, cx, params);
    Tensor input = data;
    std::vector<Tensor> hn, cn;
    for (int64_t l = 0; l < s.num_layers; ++l) {
        std::vector<Tensor> outs;
        for (int64_t d = 0; d < s.dirs(); ++d) {
            const int64_t i = l * s.dirs() + d;
            Layer layer{s.mode, d == 1, bs, s.checkpoint_every, s.op};
            const LayerOut o =
                rnn::fused_layer(layer, input, hx.select(0, i),
                                 cx.defined() ? cx.select(0, i) : Tensor(), ws[size_t(i)]);
            outs.push_back(o.y);
            hn.push_back(o.h_n);
            cn.push_back(o.c_n);
        }
        input = outs.size() == 1 ? outs[0] : cat(outs, 1);
        if (s.dropout != 0 && s.train && l < s.num_layers - 1)
            input = tg::dropout(input, s.dropout, true);
    }
    return {input, stack(hn, 0), s.mode == Mode::LSTM ? stack(cn, 0) : Tensor()};
}

/// The stack over a padded input [T, N, in] ([N, T, in] with batch_first).
std::tuple<Tensor, Tensor, Tensor> padded(const Stack& s, const Tensor& input, const Tensor& hx,
                                          const Tensor& cx, TensorList params, bool batch_first) {
    if (!input.defined())
        throw value_error(std::string(s.op) + ": undefined input");
    if (input.dim() != 3)
        throw shape_error(std::string(s.op) + ": input must have 3 dimensions, got " +
                          str(input.dim()) + " " + shape_str(input.sizes()));
    const Tensor x = batch_first ? input.transpose(0, 1) : input;
    const int64_t T = x.size(0), N = x.size(1);
    if (T == 0)
        throw shape_error(std::string(s.op) +
                          ": Expected sequence length to be larger than 0 in RNN, got input " +
                          shape_str(input.sizes()));
    auto [y, h, c] = run_stack(s, x.reshape({T * N, x.size(2)}), std::vector<int64_t>(size_t(T), N),
                               hx, cx, params);
    y = y.reshape({T, N, y.size(1)});
    return {batch_first ? y.transpose(0, 1) : y, h, c};
}

std::tuple<Tensor, Tensor, Tensor> packed(const Stack& s, const Tensor& data,
                                          const Tensor& batch_sizes, const Tensor& hx,
                                          const Tensor& cx, TensorList params) {
    if (!data.defined())
        throw value_error(std::string(s.op) + ": undefined packed data");
    if (data.dim() != 2)
        throw shape_error(std::string(s.op) + ": packed data must have 2 dimensions, got " +
                          shape_str(data.sizes()));
    return run_stack(s, data, read_batch_sizes(s.op, batch_sizes, data.size(0)), hx, cx, params);
}

Stack make(Mode m, const char* op, bool has_biases, int64_t num_layers, double dropout, bool train,
           bool bidirectional, int64_t checkpoint_every) {
    return {m, op, has_biases, num_layers, dropout, train, bidirectional, checkpoint_every};
}

Tensor first(const std::tuple<Tensor, Tensor, Tensor>& r) {
    return std::get<0>(r);
}

/// A cell as a one-step layer: input [N, in], hx [N, P] (cx [N, H]).
LayerOut cell(Mode m, const char* op, const Tensor& input, const Tensor& hx, const Tensor& cx,
              const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
    if (!input.defined())
        throw value_error(std::string(op) + ": undefined input");
    if (input.dim() != 2)
        throw shape_error(std::string(op) + ": input must be [batch, input_size], got " +
                          shape_str(input.sizes()));
    if (b_ih.defined() != b_hh.defined())
        throw value_error(std::string(op) + ": b_ih and b_hh must be both defined or both not");
    const bool bias = b_ih.defined();
    std::vector<Tensor> params{w_ih, w_hh};
    if (bias)
        params.insert(params.end(), {b_ih, b_hh});
    const Stack s = make(m, op, bias, 1, 0, false, false, 0);
    auto lift = [&](const Tensor& t, const char* what) {
        if (!t.defined())
            throw value_error(std::string(op) + ": undefined " + what);
        if (t.dim() != 2)
            throw shape_error(std::string(op) + ": " + what +
                              " must be [batch, hidden_size], got " + shape_str(t.sizes()));
        return t.unsqueeze(0);
    };
    const Tensor h3 = lift(hx, "hx"), c3 = m == Mode::LSTM ? lift(cx, "cx") : Tensor();
    const std::vector<Weights> ws = check_stack(s, input, input.size(0), h3, c3, params);
    const Layer layer{m, false, {input.size(0)}, 0, op};
    return rnn::fused_layer(layer, input, hx, cx, ws[0]);
}

}  // namespace

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
    return cell(Mode::Tanh, "rnn_tanh_cell", input, hx, {}, w_ih, w_hh, b_ih, b_hh).y;
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
    return cell(Mode::ReLU, "rnn_relu_cell", input, hx, {}, w_ih, w_hh, b_ih, b_hh).y;
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
    if (hx.size() != 2)
        throw value_error("lstm_cell: expected two hidden states {h, c}, got " +
                          str(int64_t(hx.size())));
    const LayerOut o = cell(Mode::LSTM, "lstm_cell", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh);
    return {o.y, o.c_n};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
    return cell(Mode::GRU, "gru_cell", input, hx, {}, w_ih, w_hh, b_ih, b_hh).y;
}

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, TensorList hx, TensorList params,
                                        bool has_biases, int64_t num_layers, double dropout,
                                        bool train, bool bidirectional, bool batch_first,
                                        int64_t checkpoint_every) {
    if (hx.size() != 2)
        throw value_error("lstm: expected two hidden states {h_0, c_0}, got " +
                          str(int64_t(hx.size())));
    return padded(make(Mode::LSTM, "lstm", has_biases, num_layers, dropout, train, bidirectional,
                       checkpoint_every),
                  input, hx[0], hx[1], params, batch_first);
}

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& data, const Tensor& batch_sizes,
                                        TensorList hx, TensorList params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train,
                                        bool bidirectional, int64_t checkpoint_every) {
    if (hx.size() != 2)
        throw value_error("lstm: expected two hidden states {h_0, c_0}, got " +
                          str(int64_t(hx.size())));
    return packed(make(Mode::LSTM, "lstm", has_biases, num_layers, dropout, train, bidirectional,
                       checkpoint_every),
                  data, batch_sizes, hx[0], hx[1], params);
}

#define TG_RNN_FUNCTIONS(name, mode)                                                             \
    std::tuple<Tensor, Tensor> name(const Tensor& input, const Tensor& hx, TensorList params,    \
                                    bool has_biases, int64_t num_layers, double dropout,         \
                                    bool train, bool bidirectional, bool batch_first,            \
                                    int64_t checkpoint_every) {                                  \
        auto r = padded(make(mode, #name, has_biases, num_layers, dropout, train, bidirectional, \
                             checkpoint_every),                                                  \
                        input, hx, {}, params, batch_first);                                     \
        return {first(r), std::get<1>(r)};                                                       \
    }                                                                                            \
    std::tuple<Tensor, Tensor> name(const Tensor& data, const Tensor& batch_sizes,               \
                                    const Tensor& hx, TensorList params, bool has_biases,        \
                                    int64_t num_layers, double dropout, bool train,              \
                                    bool bidirectional, int64_t checkpoint_every) {              \
        auto r = packed(make(mode, #name, has_biases, num_layers, dropout, train, bidirectional, \
                             checkpoint_every),                                                  \
                        data, batch_sizes, hx, {}, params);                                      \
        return {first(r), std::get<1>(r)};                                                       \
    }
TG_RNN_FUNCTIONS(gru, Mode::GRU)
TG_RNN_FUNCTIONS(rnn_tanh, Mode::Tanh)
TG_RNN_FUNCTIONS(rnn_relu, Mode::ReLU)
#undef TG_RNN_FUNCTIONS

}  // namespace tg
