#include "tapegrad/nn/init.hpp"

#include <cmath>

#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"

namespace tg::nn::init {

double calculate_gain(Nonlinearity n, double param) {
    switch (n) {
        case Nonlinearity::Tanh:
            return 5.0 / 3.0;
        case Nonlinearity::ReLU:
            return std::sqrt(2.0);
        case Nonlinearity::LeakyReLU:
            return std::sqrt(2.0 / (1.0 + param * param));
        default:
            return 1.0;
    }
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
    if (t.dim() < 2)
        throw shape_error("init: fan in and fan out need a tensor with at least 2 dims, got " +
                          shape_str(t.sizes()));
    int64_t receptive = 1;
    for (int64_t d = 2; d < t.dim(); ++d)
        receptive *= t.size(d);
    return {t.size(1) * receptive, t.size(0) * receptive};
}

namespace {
double fan_of(const Tensor& t, FanMode mode) {
    auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
    int64_t fan = mode == FanMode::FanIn ? fan_in : fan_out;
    if (fan == 0)
        throw shape_error("init: zero fan for a tensor of shape " + shape_str(t.sizes()));
    return double(fan);
}
}  // namespace

Tensor& kaiming_uniform_(Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity) {
    double bound = calculate_gain(nonlinearity, a) * std::sqrt(3.0 / fan_of(t, mode));
    return uniform_(t, -bound, bound);
}

Tensor& kaiming_normal_(Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity) {
    return normal_(t, 0, calculate_gain(nonlinearity, a) / std::sqrt(fan_of(t, mode)));
}

Tensor& xavier_uniform_(Tensor& t, double gain) {
    auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
    double bound = gain * std::sqrt(6.0 / double(fan_in + fan_out));
    return uniform_(t, -bound, bound);
}

Tensor& xavier_normal_(Tensor& t, double gain) {
    auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
    return normal_(t, 0, gain * std::sqrt(2.0 / double(fan_in + fan_out)));
}

Tensor& uniform_(Tensor& t, double lo, double hi) {
    NoGradGuard guard;
    t.uniform_(lo, hi);
    return t;
}

Tensor& normal_(Tensor& t, double mean, double std) {
    NoGradGuard guard;
    t.normal_(mean, std);
    return t;
}

Tensor& constant_(Tensor& t, double value) {
    NoGradGuard guard;
    t.fill_(value);
    return t;
}

Tensor& zeros_(Tensor& t) {
    NoGradGuard guard;
    t.zero_();
    return t;
}

Tensor& ones_(Tensor& t) {
    return constant_(t, 1.0);
}

}  // namespace tg::nn::init
