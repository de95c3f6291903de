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
