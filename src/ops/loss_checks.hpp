#pragma once
// What the loss files (loss.cpp, loss_more.cpp) share: their argument checks and reduction.
#include "tapegrad/ops.hpp"

namespace tg::loss {

/// l reduced as r says (mean, sum, or l itself).
Tensor reduce(const Tensor& l, Reduction r);
/// x and y: the same dtype, device and shape.
void check_pair(const char* op, const Tensor& x, const Tensor& y);
/// x a floating [N,C] input and labels int64 [N] on its device.
void check_labels(const char* op, const Tensor& x, const Tensor& labels);

}  // namespace tg::loss

namespace tg::loss {

/// LibTorch's check_no_requires_grad: an argument its loss does not differentiate (class
/// weights, soft_margin_loss's target) must not require grad while grad mode is on; else an
/// autograd_error "op: not differentiable with respect to argument 'what'", as LibTorch throws.
void not_differentiable(const char* op, const char* what, const Tensor& t);

/// ATen's pairwise_distance(x1, x2, p, eps): ‖x1 - x2 + eps‖_p over the last dim (of the one
/// with more dims), as triplet_margin_loss and TripletMarginWithDistanceLoss's default use it.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-6);

}  // namespace tg::loss
