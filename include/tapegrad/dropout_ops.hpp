#pragma once
/// Alpha dropout, as LibTorch's torch::alpha_dropout and feature_alpha_dropout (ops.hpp includes
/// this header; src/ops/alpha_dropout.cpp). Dropout and feature_dropout are in layer_ops.hpp.
#include "tapegrad/generator.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// SELU's dropout when train is true: with noise = bernoulli_(1 - p) drawn as LibTorch draws it
/// (a tensor shaped like x, in x's dtype), a = 1/√((α²p + 1)(1 - p)) and α = 1.7580993408473766,
/// y = x·(a·noise) + (noise - 1)·α·a + α·a·p, keeping the mean and variance of a SELU network;
/// dx = dy·a·noise. x itself when not training, for p = 0 or an empty x; zeros for p = 1.
/// value_error unless 0 <= p <= 1; dtype_error unless x is float32 or float64.
Tensor alpha_dropout(const Tensor& x, double p, bool train);
Tensor alpha_dropout(const Tensor& x, double p, bool train, const Generator& g);
/// alpha_dropout of whole feature maps: one draw per x[n][c] of x [N, C, *] (shape_error below
/// 2-D, as LibTorch's "at least 2 dimensions").
Tensor feature_alpha_dropout(const Tensor& x, double p, bool train);
Tensor feature_alpha_dropout(const Tensor& x, double p, bool train, const Generator& g);

}  // namespace tg

#pragma GCC visibility pop
