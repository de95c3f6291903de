#pragma once
/// The activations options name by LibTorch's constants: torch::kReLU, torch::kGELU (a
/// TransformerEncoderLayer's feed-forward activation) and torch::kTanh (an RNN's nonlinearity,
/// with kReLU). An option that takes only some of them throws value_error for the others, where
/// LibTorch's variant types would not compile.
#pragma GCC visibility push(default)

namespace tg {
namespace nn {
enum class Activation { ReLU, GELU, Tanh };
}  // namespace nn
inline constexpr nn::Activation kReLU = nn::Activation::ReLU;
inline constexpr nn::Activation kGELU = nn::Activation::GELU;
inline constexpr nn::Activation kTanh = nn::Activation::Tanh;
}  // namespace tg

#pragma GCC visibility pop
