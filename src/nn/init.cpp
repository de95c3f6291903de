#include "tapegrad/nn/init.hpp"

#include <cmath>
#include <string>

#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"

namespace tg::nn::init {

namespace {
/// Throws value_error "<who>: <what> must be <domain>, got <v>" unless ok.
void require(bool ok, const char* who, const char* what, const char* domain, double v) {
    if (!ok)
        throw value_error(std::string(who) + ": " + what + " must be " + domain + ", got " +
                          std::to_string(v));
}
/// Random initialisations draw floating-point values: an int64 tensor would get them truncated.
void require_floating(const char* who, const Tensor& t) {
    if (!is_floating(t.dtype()))
        throw dtype_error(std::string(who) + ": expected a floating-point tensor, got " +
                          shape_str(t.sizes()) + " " + dtype_name(t.dtype()));
}
}  // namespace

double calculate_gain(Nonlinearity n, double param) {
    switch (n) {
        case Nonlinearity::Tanh:
            return 5.0 / 3.0;
        case Nonlinearity::ReLU:
            return std::sqrt(2.0);
        case Nonlinearity::LeakyReLU:
            require(std::isfinite(param), "calculate_gain", "the LeakyReLU slope", "finite", param);
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
    return double(mode == FanMode::FanIn ? fan_in : fan_out);
}
}  // namespace

// A tensor with no elements has nothing to initialise (as in PyTorch); every other tensor with
// at least 2 dims has positive fans, so the bounds below are finite.
Tensor kaiming_uniform_(Tensor t, double a, FanMode mode, Nonlinearity nonlinearity) {
    require_floating("kaiming_uniform_", t);
    const double fan = fan_of(t, mode);
    if (t.numel() == 0)
        return t;
    // LibTorch's rounding: std = gain / √fan, then bound = √3 · std
    const double bound = std::sqrt(3.0) * (calculate_gain(nonlinearity, a) / std::sqrt(fan));
    return uniform_(t, -bound, bound);
}

Tensor kaiming_normal_(Tensor t, double a, FanMode mode, Nonlinearity nonlinearity) {
    require_floating("kaiming_normal_", t);
    const double fan = fan_of(t, mode);
    if (t.numel() == 0)
        return t;
    return normal_(t, 0, calculate_gain(nonlinearity, a) / std::sqrt(fan));
}

Tensor xavier_uniform_(Tensor t, double gain) {
    require(std::isfinite(gain) && gain >= 0, "xavier_uniform_", "gain", "finite and >= 0", gain);
    require_floating("xavier_uniform_", t);
    auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
    if (t.numel() == 0)
        return t;
    // LibTorch's rounding: std = gain · √(2 / (fan_in + fan_out)), then bound = √3 · std
    const double bound = std::sqrt(3.0) * (gain * std::sqrt(2.0 / double(fan_in + fan_out)));
    return uniform_(t, -bound, bound);
}

Tensor xavier_normal_(Tensor t, double gain) {
    require(std::isfinite(gain) && gain >= 0, "xavier_normal_", "gain", "finite and >= 0", gain);
    require_floating("xavier_normal_", t);
    auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
    if (t.numel() == 0)
        return t;
    return normal_(t, 0, gain * std::sqrt(2.0 / double(fan_in + fan_out)));
}

Tensor uniform_(Tensor t, double lo, double hi) {
    require(std::isfinite(lo), "uniform_", "lo", "finite", lo);
    require(std::isfinite(hi) && lo <= hi, "uniform_", "hi", "finite and >= lo", hi);
    require_floating("uniform_", t);
    NoGradGuard guard;
    t.uniform_(lo, hi);
    return t;
}

Tensor normal_(Tensor t, double mean, double std) {
    require(std::isfinite(mean), "normal_", "mean", "finite", mean);
    require(std::isfinite(std) && std >= 0, "normal_", "std", "finite and >= 0", std);
    require_floating("normal_", t);
    NoGradGuard guard;
    t.normal_(mean, std);
    return t;
}

Tensor constant_(Tensor t, double value) {
    NoGradGuard guard;
    t.fill_(value);
    return t;
}

Tensor zeros_(Tensor t) {
    NoGradGuard guard;
    t.zero_();
    return t;
}

Tensor ones_(Tensor t) {
    return constant_(t, 1.0);
}

}  // namespace tg::nn::init
