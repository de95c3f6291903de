#pragma once
/// embedding_bag, as LibTorch's torch::embedding_bag (ops.hpp includes this header; the op is in
/// src/ops/embedding_bag.cpp, nn::EmbeddingBag and F::embedding_bag in nn/embedding.hpp).
#include <cstdint>
#include <optional>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// Sums (mode 0), means (1) or maxima (2) of bags of rows of weight [V, D]: bag b holds the
/// rows indices[offsets[b] .. offsets[b+1]) of the 1-D int64 (or int32) indices, the last bag
/// running to the end (include_last_offset: offsets has one entry more, the end of the last
/// bag). -> [B, D]. per_sample_weights [N] (mode 0 only) scales each row; entries equal to
/// padding_idx (negative: from the end) are left out of their bag and of its count; an empty
/// bag gives zeros. scale_grad_by_freq divides each row's gradient by its token's count (not in
/// max mode). The gradients gather: weight's rows each sum the bag gradients that read them
/// (Note [Gathering index_add]), a bag's maximum sends its gradient to the first row that holds
/// it, as LibTorch's. Unlike LibTorch's (which also returns offset2bag, bag_size and
/// max_indices, its kernels' bookkeeping), it returns the output alone. sparse = true throws
/// value_error (no sparse gradients); out-of-range or decreasing offsets and out-of-range
/// indices throw.
Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                     bool scale_grad_by_freq = false, int64_t mode = 0, bool sparse = false,
                     const Tensor& per_sample_weights = {}, bool include_last_offset = false,
                     std::optional<int64_t> padding_idx = std::nullopt);

}  // namespace tg

#pragma GCC visibility pop
