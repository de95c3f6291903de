// RNN, LSTM and GRU: LibTorch's parameters, checks, defaults and printing around tg::rnn_tanh,
// rnn_relu, lstm and gru (src/ops/rnn.cpp).
#include "tapegrad/nn/rnn.hpp"

#include <cmath>
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

namespace detail {

namespace {

const char* mode_name(RNNMode m) {
    return m == RNNMode::LSTM ? "LSTM" : m == RNNMode::GRU ? "GRU" : "RNN";
}

int64_t gates(RNNMode m) {
    return m == RNNMode::LSTM ? 4 : m == RNNMode::GRU ? 3 : 1;
}

}  // namespace

RNNImplBase::RNNImplBase(const RNNOptionsBase& o, const char* name)
    : Module(name), options_base(o) {
    const std::string me = std::string(name) + "(" + std::to_string(o.input_size()) + ", " +
                           std::to_string(o.hidden_size()) + ")";
    if (o.input_size() < 0 || o.hidden_size() < 1 || o.num_layers() < 1)
        throw value_error(me + ": input_size must be >= 0, hidden_size and num_layers >= 1 (got " +
                          "num_layers " + std::to_string(o.num_layers()) + ")");
    if (!(o.dropout() >= 0 && o.dropout() <= 1))
        throw value_error(me +
                          ": dropout should be a number in range [0, 1] representing the "
                          "probability of an element being zeroed");
    if (o.proj_size() < 0 || o.proj_size() >= o.hidden_size() ||
        (o.proj_size() > 0 && o.mode() != RNNMode::LSTM))
        throw value_error(me +
                          ": proj_size has to be a positive integer, smaller than hidden_size "
                          "or zero to disable projections (LSTM only), got " +
                          std::to_string(o.proj_size()));
    if (o.checkpoint_every() < 0)
        throw value_error(me + ": checkpoint_every must be >= 0");
    const int64_t D = o.bidirectional() ? 2 : 1, H = o.hidden_size(), G = gates(o.mode()) * H;
    const int64_t P = o.proj_size() > 0 ? o.proj_size() : H;
    for (int64_t layer = 0; layer < o.num_layers(); ++layer)
        for (int64_t dir = 0; dir < D; ++dir) {
            const std::string sfx = "_l" + std::to_string(layer) + (dir == 1 ? "_reverse" : "");
            const int64_t in = layer == 0 ? o.input_size() : P * D;
            std::vector<std::string> names{"weight_ih" + sfx, "weight_hh" + sfx};
            flat_weights_.push_back(register_parameter(names[0], empty({G, in})));
            flat_weights_.push_back(register_parameter(names[1], empty({G, P})));
            if (o.bias()) {
                names.insert(names.end(), {"bias_ih" + sfx, "bias_hh" + sfx});
                flat_weights_.push_back(register_parameter(names[2], empty({G})));
                flat_weights_.push_back(register_parameter(names[3], empty({G})));
            }
            if (o.proj_size() > 0) {
                names.push_back("weight_hr" + sfx);
                flat_weights_.push_back(register_parameter(names.back(), empty({P, H})));
            }
            all_weights_.push_back(names);
        }
    reset_parameters();
}

void RNNImplBase::reset_parameters() {
    const double stdv = 1.0 / std::sqrt(double(options_base.hidden_size()));
    for (const Tensor& w : parameters())
        init::uniform_(w, -stdv, stdv);
}

std::vector<Tensor> RNNImplBase::all_weights() const {
    return flat_weights_;
}

void RNNImplBase::pretty_print(std::ostream& os) const {
    const RNNOptionsBase& o = options_base;
    os << mode_name(o.mode()) << "(input_size=" << o.input_size()
       << ", hidden_size=" << o.hidden_size() << ", num_layers=" << o.num_layers()
       << ", bias=" << (o.bias() ? "true" : "false")
       << ", batch_first=" << (o.batch_first() ? "true" : "false") << ", dropout=" << o.dropout()
       << ", bidirectional=" << (o.bidirectional() ? "true" : "false");
    if (o.proj_size() > 0)
        os << ", proj_size=" << o.proj_size();
    os << ")";
}

void RNNImplBase::check_input(const Tensor& input, bool packed) const {
    const std::string me = mode_name(options_base.mode());
    if (!input.defined())
        throw value_error(me + ": undefined input");
    const int64_t want = packed ? 2 : 3;
    if (input.dim() != want)
        throw shape_error(me + ": input must have " + std::to_string(want) + " dimensions, got " +
                          std::to_string(input.dim()) + " " + shape_str(input.sizes()));
    if (input.size(-1) != options_base.input_size())
        throw shape_error(me + ": input.size(-1) must be equal to input_size. Expected " +
                          std::to_string(options_base.input_size()) + ", got " +
                          std::to_string(input.size(-1)) + " (input " + shape_str(input.sizes()) +
                          ")");
}

Tensor RNNImplBase::hidden_or_zeros(const Tensor& hx, const Tensor& input, int64_t batch,
                                    int64_t size, const char* which) const {
    const Shape want{options_base.num_layers() * (options_base.bidirectional() ? 2 : 1), batch,
                     size};
    if (!hx.defined())
        return zeros(want, input.options());
    if (hx.sizes() != want)
        throw shape_error(std::string(mode_name(options_base.mode())) + ": Expected hidden" +
                          which + " size " + shape_str(want) + ", got " + shape_str(hx.sizes()));
    return hx;
}

}  // namespace detail

namespace {

using detail::RNNMode;
using detail::RNNOptionsBase;
using utils::rnn::PackedSequence;

RNNMode rnn_mode(Activation a) {
    if (a == Activation::GELU)
        throw value_error("RNN: nonlinearity must be kTanh or kReLU, got kGELU");
    return a == Activation::ReLU ? RNNMode::RNN_RELU : RNNMode::RNN_TANH;
}

/// The batch of a padded input, or of a packed one (its first batch size).
int64_t batch_of(const Tensor& input, const Tensor& batch_sizes, bool batch_first) {
    if (batch_sizes.defined())
        return batch_sizes.numel() > 0 ? batch_sizes[0].item<int64_t>() : 0;
    return input.size(batch_first ? 0 : 1);
}

/// hx in sorted order for a packed input (LibTorch's permute_hidden).
Tensor permute(const Tensor& hx, const Tensor& permutation) {
    return permutation.defined() ? hx.index_select(1, permutation) : hx;
}

}  // namespace

RNNImpl::RNNImpl(const RNNOptions& o)
    : RNNImplBase(RNNOptionsBase(rnn_mode(o.nonlinearity()), o.input_size(), o.hidden_size())
                      .num_layers(o.num_layers())
                      .bias(o.bias())
                      .batch_first(o.batch_first())
                      .dropout(o.dropout())
                      .bidirectional(o.bidirectional())
                      .checkpoint_every(o.checkpoint_every()),
                  "RNN"),
      options(o) {}

LSTMImpl::LSTMImpl(const LSTMOptions& o)
    : RNNImplBase(RNNOptionsBase(RNNMode::LSTM, o.input_size(), o.hidden_size())
                      .num_layers(o.num_layers())
                      .bias(o.bias())
                      .batch_first(o.batch_first())
                      .dropout(o.dropout())
                      .bidirectional(o.bidirectional())
                      .proj_size(o.proj_size())
                      .checkpoint_every(o.checkpoint_every()),
                  "LSTM"),
      options(o) {}

GRUImpl::GRUImpl(const GRUOptions& o)
    : RNNImplBase(RNNOptionsBase(RNNMode::GRU, o.input_size(), o.hidden_size())
                      .num_layers(o.num_layers())
                      .bias(o.bias())
                      .batch_first(o.batch_first())
                      .dropout(o.dropout())
                      .bidirectional(o.bidirectional())
                      .checkpoint_every(o.checkpoint_every()),
                  "GRU"),
      options(o) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
    check_input(input, false);
    hx = hidden_or_zeros(hx, input, batch_of(input, {}, options.batch_first()),
                         options_base.hidden_size(), "");
    const RNNOptionsBase& o = options_base;
    if (o.mode() == RNNMode::RNN_RELU)
        return tg::rnn_relu(input, hx, flat_weights_, o.bias(), o.num_layers(), options.dropout(),
                            is_training(), o.bidirectional(), options.batch_first(),
                            options.checkpoint_every());
    return tg::rnn_tanh(input, hx, flat_weights_, o.bias(), o.num_layers(), options.dropout(),
                        is_training(), o.bidirectional(), options.batch_first(),
                        options.checkpoint_every());
}

std::tuple<PackedSequence, Tensor> RNNImpl::forward_with_packed_input(const PackedSequence& in,
                                                                      Tensor hx) {
    check_input(in.data(), true);
    hx = permute(hidden_or_zeros(hx, in.data(), batch_of(in.data(), in.batch_sizes(), false),
                                 options_base.hidden_size(), ""),
                 hx.defined() ? in.sorted_indices() : Tensor());
    const RNNOptionsBase& o = options_base;
    auto [out, h] = o.mode() == RNNMode::RNN_RELU
                        ? tg::rnn_relu(in.data(), in.batch_sizes(), hx, flat_weights_, o.bias(),
                                       o.num_layers(), options.dropout(), is_training(),
                                       o.bidirectional(), options.checkpoint_every())
                        : tg::rnn_tanh(in.data(), in.batch_sizes(), hx, flat_weights_, o.bias(),
                                       o.num_layers(), options.dropout(), is_training(),
                                       o.bidirectional(), options.checkpoint_every());
    return {PackedSequence(out, in.batch_sizes(), in.sorted_indices(), in.unsorted_indices()),
            permute(h, in.unsorted_indices())};
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::run(
    const Tensor& input, const Tensor& batch_sizes, int64_t batch,
    const std::optional<std::tuple<Tensor, Tensor>>& hx) {
    const int64_t H = options_base.hidden_size();
    const int64_t P = options_base.proj_size() > 0 ? options_base.proj_size() : H;
    Tensor h, c;
    if (hx) {
        h = hidden_or_zeros(std::get<0>(*hx), input, batch, P, "[0]");
        c = hidden_or_zeros(std::get<1>(*hx), input, batch, H, "[1]");
    } else {
        h = hidden_or_zeros({}, input, batch, P, "");
        c = hidden_or_zeros({}, input, batch, H, "");
    }
    std::tuple<Tensor, Tensor, Tensor> r;
    if (batch_sizes.defined())
        r = tg::lstm(input, batch_sizes, {h, c}, flat_weights_, options_base.bias(),
                     options_base.num_layers(), options.dropout(), is_training(),
                     options_base.bidirectional(), options.checkpoint_every());
    else
        r = tg::lstm(input, {h, c}, flat_weights_, options_base.bias(), options_base.num_layers(),
                     options.dropout(), is_training(), options_base.bidirectional(),
                     options.batch_first(), options.checkpoint_every());
    return {std::get<0>(r), {std::get<1>(r), std::get<2>(r)}};
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
    check_input(input, false);
    return run(input, {}, batch_of(input, {}, options.batch_first()), hx_opt);
}

std::tuple<PackedSequence, std::tuple<Tensor, Tensor>> LSTMImpl::forward_with_packed_input(
    const PackedSequence& in, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
    check_input(in.data(), true);
    if (hx_opt)
        hx_opt = std::make_tuple(permute(std::get<0>(*hx_opt), in.sorted_indices()),
                                 permute(std::get<1>(*hx_opt), in.sorted_indices()));
    auto [out, state] =
        run(in.data(), in.batch_sizes(), batch_of(in.data(), in.batch_sizes(), false), hx_opt);
    return {PackedSequence(out, in.batch_sizes(), in.sorted_indices(), in.unsorted_indices()),
            {permute(std::get<0>(state), in.unsorted_indices()),
             permute(std::get<1>(state), in.unsorted_indices())}};
}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
    check_input(input, false);
    hx = hidden_or_zeros(hx, input, batch_of(input, {}, options.batch_first()),
                         options_base.hidden_size(), "");
    return tg::gru(input, hx, flat_weights_, options_base.bias(), options_base.num_layers(),
                   options.dropout(), is_training(), options_base.bidirectional(),
                   options.batch_first(), options.checkpoint_every());
}

std::tuple<PackedSequence, Tensor> GRUImpl::forward_with_packed_input(const PackedSequence& in,
                                                                      Tensor hx) {
    check_input(in.data(), true);
    hx = permute(hidden_or_zeros(hx, in.data(), batch_of(in.data(), in.batch_sizes(), false),
                                 options_base.hidden_size(), ""),
                 hx.defined() ? in.sorted_indices() : Tensor());
    auto [out, h] = tg::gru(in.data(), in.batch_sizes(), hx, flat_weights_, options_base.bias(),
                            options_base.num_layers(), options.dropout(), is_training(),
                            options_base.bidirectional(), options.checkpoint_every());
    return {PackedSequence(out, in.batch_sizes(), in.sorted_indices(), in.unsorted_indices()),
            permute(h, in.unsorted_indices())};
}

}  // namespace tg::nn
