#pragma once
// What ops/attention.cpp and ops/attention_args.cpp share: the sizes of one
// scaled_dot_product_attention call and the checks of its arguments.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/random.hpp"
#include "tapegrad/tensor.hpp"

namespace tg::attention {

constexpr const char* kOp = "scaled_dot_product_attention";

/// The sizes of one call: q [lead..., L, E], k [lead..., S, E], v [lead..., S, Ev], the leading
/// dims folded into BH; rows of queries are processed `block` at a time.
struct Geo {
    Shape lead;
    int64_t BH = 1, L = 0, S = 0, E = 0, Ev = 0, block = 1;
    double scale = 1, p = 0;
    bool causal = false;
    // dropout: the generator state the [BH, L, S] mask is drawn from, and the mask as bits
    // (element (bh, i, j) is bit (bh·L + i)·S + j), made when needed from drop_from
    std::shared_ptr<const detail::Engine> drop_from;
    std::shared_ptr<const std::vector<uint64_t>> drop_bits;
    /// The keys a block of rows [i0, i0 + nb) reads.
    int64_t cols(int64_t i0, int64_t nb) const { return causal ? std::min(S, i0 + nb) : S; }
    int64_t blocks() const { return (L + block - 1) / block; }
};

/// lead + [a, b].
Shape with_last(const Geo& g, int64_t a, int64_t b);

/// Checks q, k, v and the mask (shapes, dtypes, devices, dropout_p and scale; throws the typed
/// errors naming the op and the three shapes) and returns the call's sizes, scale and row block.
Geo check_and_size(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double p,
                   bool causal, std::optional<double> scale);

}  // namespace tg::attention
