#pragma once
/// Embedding: a lookup table of num_embeddings vectors, as LibTorch's:
///     tg::nn::Embedding emb(tg::nn::EmbeddingOptions(96, 256).padding_idx(0));
///     tg::Tensor h = emb(tokens);   // tokens int64 [B,T] -> [B,T,256]
/// Its backward adds the rows of repeated tokens by gathering (tg::embedding). max_norm,
/// scale_grad_by_freq and sparse gradients are not offered.
#include <cstdint>
#include <optional>
#include <ostream>

#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class EmbeddingOptions {
public:
    EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
        : num_(num_embeddings), dim_(embedding_dim) {}
    /// The row that reads as zeros at initialisation and never gets a gradient (negative: from
    /// the end).
    EmbeddingOptions& padding_idx(std::optional<int64_t> v) { return padding_ = v, *this; }
    int64_t num_embeddings() const { return num_; }
    int64_t embedding_dim() const { return dim_; }
    const std::optional<int64_t>& padding_idx() const { return padding_; }

private:
    int64_t num_, dim_;
    std::optional<int64_t> padding_;
};

class EmbeddingImpl : public Module {
public:
    using Options = EmbeddingOptions;
    /// weight [num_embeddings, embedding_dim] ~ N(0, 1), the padding row zeroed (LibTorch's
    /// initialisation). Throws shape_error for non-positive sizes, value_error for a padding_idx
    /// out of range.
    explicit EmbeddingImpl(const EmbeddingOptions& options);
    EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
        : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
    /// tg::embedding(weight, indices, padding_idx): int64 indices of any shape -> [..., dim].
    Tensor forward(const Tensor& indices) override;
    void reset_parameters();
    EmbeddingOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;

    Tensor weight;
};
TG_MODULE(Embedding);

}  // namespace tg::nn

#pragma GCC visibility pop
