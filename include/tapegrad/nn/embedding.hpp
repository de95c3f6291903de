#pragma once
/// Embedding: a lookup table of num_embeddings vectors, as LibTorch's:
///     tg::nn::Embedding emb(tg::nn::EmbeddingOptions(96, 256).padding_idx(0));
///     tg::Tensor h = emb(tokens);   // tokens int64 [B,T] -> [B,T,256]
/// Its backward adds the rows of repeated tokens by gathering (tg::embedding). max_norm,
/// scale_grad_by_freq and sparse gradients are not offered.
/// EmbeddingBag: the sums, means or maxima of bags of rows (tg::embedding_bag), as LibTorch's:
///     tg::nn::EmbeddingBag bag(tg::nn::EmbeddingBagOptions(1000, 64).mode(tg::kSum));
///     tg::Tensor h = bag(tokens, offsets);   // tokens int64 [N], offsets [B] -> [B, 64]
#include <cstdint>
#include <optional>
#include <ostream>

#include "tapegrad/arg.hpp"
#include "tapegrad/losses.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg {
namespace nn {
/// The type of tg::kMax, EmbeddingBag's third mode.
struct MaxMode {};
}  // namespace nn
/// LibTorch's torch::kMax (EmbeddingBag's mode; kSum and kMean are the reductions').
inline constexpr nn::MaxMode kMax{};
}  // namespace tg

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

/// LibTorch's EmbeddingBagMode: tg::kSum, tg::kMean or tg::kMax (tg::kNone throws value_error).
class EmbeddingBagMode {
public:
    EmbeddingBagMode(Reduction r);           // NOLINT: implicit, as LibTorch's variant
    EmbeddingBagMode(MaxMode) : mode_(2) {}  // NOLINT
    /// ATen's number: 0 sum, 1 mean, 2 max.
    int64_t value() const { return mode_; }
    /// "kSum", "kMean", "kMax".
    const char* name() const;
    bool operator==(const EmbeddingBagMode& o) const { return mode_ == o.mode_; }
    bool operator!=(const EmbeddingBagMode& o) const { return mode_ != o.mode_; }

private:
    int64_t mode_;
};

/// LibTorch's EmbeddingBagOptions, with its defaults (mode kMean). sparse = true throws (no
/// sparse gradients); scale_grad_by_freq is not allowed with kMax, as in LibTorch.
struct EmbeddingBagOptions {
    EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
        : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
    TG_ARG(int64_t, num_embeddings);
    TG_ARG(int64_t, embedding_dim);
    /// Rows read by a forward whose p-norm (norm_type) exceeds max_norm are scaled down to it, in
    /// place in weight, before the lookup (LibTorch's embedding_renorm_).
    TG_ARG(std::optional<double>, max_norm) = std::nullopt;
    TG_ARG(double, norm_type) = 2.;
    TG_ARG(bool, scale_grad_by_freq) = false;
    TG_ARG(EmbeddingBagMode, mode) = kMean;
    TG_ARG(bool, sparse) = false;
    /// A weight to use instead of a new one ([num_embeddings, embedding_dim]).
    TG_ARG(Tensor, _weight) = Tensor();
    TG_ARG(bool, include_last_offset) = false;
    TG_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

class EmbeddingBagImpl : public Module {
public:
    using Options = EmbeddingBagOptions;
    /// weight [num_embeddings, embedding_dim] ~ N(0, 1) (LibTorch 1.13's EmbeddingBag does not
    /// zero the padding row), or options._weight. A negative padding_idx counts from the end.
    /// value_error for non-positive sizes, a padding_idx out of range or a _weight of another
    /// shape.
    explicit EmbeddingBagImpl(const EmbeddingBagOptions& options);
    EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
        : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
    /// F::embedding_bag with the options: input [N] with offsets [B], or [B, L] (fixed-length
    /// bags, no offsets) -> [B, embedding_dim].
    Tensor forward(const Tensor& input, const Tensor& offsets = {},
                   const Tensor& per_sample_weights = {});
    using Module::forward;
    void reset_parameters();
    EmbeddingBagOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;

    Tensor weight;
};
TG_MODULE(EmbeddingBag);

namespace functional {
/// LibTorch's EmbeddingBagFuncOptions.
struct EmbeddingBagFuncOptions {
    TG_ARG(Tensor, offsets) = Tensor();
    TG_ARG(std::optional<double>, max_norm) = std::nullopt;
    TG_ARG(double, norm_type) = 2.;
    TG_ARG(bool, scale_grad_by_freq) = false;
    TG_ARG(EmbeddingBagMode, mode) = kMean;
    TG_ARG(bool, sparse) = false;
    TG_ARG(Tensor, per_sample_weights) = Tensor();
    TG_ARG(bool, include_last_offset) = false;
    TG_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};
/// tg::embedding_bag as LibTorch's F::embedding_bag: a 2-D input [B, L] is B bags of L
/// (offsets must then be undefined); a 1-D input needs offsets. With max_norm, weight's rows
/// that input reads are renormalised in place first.
Tensor embedding_bag(const Tensor& input, const Tensor& weight,
                     const EmbeddingBagFuncOptions& options = {});
}  // namespace functional

}  // namespace tg::nn

#pragma GCC visibility pop
