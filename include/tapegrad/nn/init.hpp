#pragma once
/// Parameter initialisations, as torch::nn::init. Each runs under NoGradGuard, fills its
/// argument in place (so the tensor keeps its identity and stays a leaf) and returns it; it takes
/// the tensor by value, as LibTorch's, so init::normal_(p.data(), 0, 0.02) works too. The
/// random ones need a floating-point tensor (dtype_error) and finite arguments: lo <= hi, std >= 0,
/// gain >= 0 (value_error); on a tensor without elements they do nothing.
/// Fans: fan_in = size(1) * receptive field, fan_out = size(0) * receptive field, where the
/// receptive field is the product of the dims after the first two (1 for a Linear weight).
#include <utility>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::nn::init {

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity { Linear, Sigmoid, Tanh, ReLU, LeakyReLU };

/// The recommended gain for a nonlinearity: 1, 1, 5/3, √2, √(2/(1+a²)) (a: LeakyReLU slope).
double calculate_gain(Nonlinearity n, double param = 0.01);
/// (fan_in, fan_out) of a tensor with at least 2 dims; throws shape_error otherwise.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);

/// U(-b, b) with b = gain·√(3/fan), gain = calculate_gain(nonlinearity, a) (He et al. 2015).
Tensor kaiming_uniform_(Tensor t, double a = 0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
/// N(0, std²) with std = gain/√fan.
Tensor kaiming_normal_(Tensor t, double a = 0, FanMode mode = FanMode::FanIn,
                       Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
/// U(-b, b) with b = gain·√(6/(fan_in + fan_out)) (Glorot & Bengio 2010).
Tensor xavier_uniform_(Tensor t, double gain = 1);
/// N(0, std²) with std = gain·√(2/(fan_in + fan_out)).
Tensor xavier_normal_(Tensor t, double gain = 1);
/// U(lo, hi).
Tensor uniform_(Tensor t, double lo = 0, double hi = 1);
/// N(mean, std²).
Tensor normal_(Tensor t, double mean = 0, double std = 1);
/// All elements = value.
Tensor constant_(Tensor t, double value);
/// All zeros.
Tensor zeros_(Tensor t);
/// All ones.
Tensor ones_(Tensor t);

}  // namespace tg::nn::init

#pragma GCC visibility pop
