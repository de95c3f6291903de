// RNNCell, LSTMCell and GRUCell: LibTorch's parameters, checks and printing around
// tg::rnn_tanh_cell, rnn_relu_cell, lstm_cell and gru_cell.
#include <cmath>
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/nn/rnn.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

namespace detail {

RNNCellImplBase::RNNCellImplBase(const RNNCellOptionsBase& o, const char* name)
    : Module(name), options_base(o) {
    if (o.input_size() < 0 || o.hidden_size() < 1)
        throw value_error(std::string(name) + "(" + std::to_string(o.input_size()) + ", " +
                          std::to_string(o.hidden_size()) +
                          "): input_size must be >= 0 and hidden_size >= 1");
    const int64_t G = o.num_chunks() * o.hidden_size();
    weight_ih = register_parameter("weight_ih", empty({G, o.input_size()}));
    weight_hh = register_parameter("weight_hh", empty({G, o.hidden_size()}));
    if (o.bias()) {
        bias_ih = register_parameter("bias_ih", empty({G}));
        bias_hh = register_parameter("bias_hh", empty({G}));
    }
    reset_parameters();
}

void RNNCellImplBase::reset_parameters() {
    const double stdv = 1.0 / std::sqrt(double(options_base.hidden_size()));
    for (const Tensor& w : parameters())
        init::uniform_(w, -stdv, stdv);
}

void RNNCellImplBase::pretty_print(std::ostream& os) const {
    os << name() << "(" << options_base.input_size() << ", " << options_base.hidden_size();
    if (!options_base.bias())
        os << ", bias=false";
    const std::string nl = nonlinearity_str();
    if (!nl.empty() && nl != "kTanh")
        os << ", nonlinearity=" << nl;
    os << ")";
}

void RNNCellImplBase::check_forward_input(const Tensor& input) const {
    if (!input.defined())
        throw value_error(name() + ": undefined input");
    if (input.dim() != 2)
        throw shape_error(name() + ": input must be [batch, input_size], got " +
                          shape_str(input.sizes()));
    if (input.size(1) != options_base.input_size())
        throw shape_error(name() + ": input has inconsistent input_size: got " +
                          std::to_string(input.size(1)) + " expected " +
                          std::to_string(options_base.input_size()));
}

Tensor RNNCellImplBase::hidden_or_zeros(const Tensor& input, const Tensor& hx,
                                        const char* label) const {
    if (!hx.defined())
        return zeros({input.size(0), options_base.hidden_size()}, input.options());
    if (hx.dim() != 2)
        throw shape_error(name() + ": hidden" + label + " must be [batch, hidden_size], got " +
                          shape_str(hx.sizes()));
    if (input.size(0) != hx.size(0))
        throw shape_error(name() + ": Input batch size " + std::to_string(input.size(0)) +
                          " doesn't match hidden" + label + " batch size " +
                          std::to_string(hx.size(0)));
    if (hx.size(1) != options_base.hidden_size())
        throw shape_error(name() + ": hidden" + label + " has inconsistent hidden_size: got " +
                          std::to_string(hx.size(1)) + ", expected " +
                          std::to_string(options_base.hidden_size()));
    return hx;
}

}  // namespace detail

namespace {
Activation cell_nonlinearity(Activation a) {
    if (a == Activation::GELU)
        throw value_error("RNNCell: nonlinearity must be kTanh or kReLU, got kGELU");
    return a;
}
}  // namespace

RNNCellImpl::RNNCellImpl(const RNNCellOptions& o)
    : RNNCellImplBase(detail::RNNCellOptionsBase(o.input_size(), o.hidden_size(), o.bias(), 1),
                      "RNNCell"),
      options(o) {
    cell_nonlinearity(o.nonlinearity());
}

const char* RNNCellImpl::nonlinearity_str() const {
    return options.nonlinearity() == Activation::ReLU ? "kReLU" : "kTanh";
}

Tensor RNNCellImpl::forward(const Tensor& input, Tensor hx) {
    check_forward_input(input);
    hx = hidden_or_zeros(input, hx, "");
    if (cell_nonlinearity(options.nonlinearity()) == Activation::ReLU)
        return rnn_relu_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
    return rnn_tanh_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& o)
    : RNNCellImplBase(detail::RNNCellOptionsBase(o.input_size(), o.hidden_size(), o.bias(), 4),
                      "LSTMCell"),
      options(o) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
    check_forward_input(input);
    Tensor h, c;
    if (hx_opt) {
        h = hidden_or_zeros(input, std::get<0>(*hx_opt), "[0]");
        c = hidden_or_zeros(input, std::get<1>(*hx_opt), "[1]");
    } else {
        h = c = hidden_or_zeros(input, {}, "");
    }
    return lstm_cell(input, {h, c}, weight_ih, weight_hh, bias_ih, bias_hh);
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& o)
    : RNNCellImplBase(detail::RNNCellOptionsBase(o.input_size(), o.hidden_size(), o.bias(), 3),
                      "GRUCell"),
      options(o) {}

Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
    check_forward_input(input);
    hx = hidden_or_zeros(input, hx, "");
    return gru_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
}

}  // namespace tg::nn
