#pragma once
/// Indexing as LibTorch spells it (torch::indexing):
///
///     using namespace tg::indexing;
///     x[1];                                  // select(0, 1)
///     x.index({Slice(), 0});                 // x[:, 0]
///     x.index({Ellipsis, Slice(1, None, 2)}); // x[..., 1::2]
///     x.index({None, Slice(None, -1)});      // x[None, :-1]
///     x.index({Slice(), idx});               // an int64 index tensor along dim 1
///     x.index({mask});                       // a bool mask: the selected elements, 1-D
///     x.index_put_({Slice(), 0}, 0.0);       // x[:, 0] = 0
///     x.index_put_({x < 0}, 0.0);            // x[x < 0] = 0
///
/// Integers, slices with step 1, None and Ellipsis give views (narrow, squeeze, unsqueeze);
/// a slice with a step > 1 and tensor indices give copies (index_select). All are
/// differentiable. Tensor indices follow PyTorch's advanced indexing: int64 tensors of any shape
/// (negative from the end) and bool masks (a mask of k dims indexes k dims, as its nonzero
/// positions) are broadcast together, and their dims become the broadcast shape, where they
/// stood when they are next to each other, first when a slice or None separates them (as in
/// PyTorch, integers are applied before and do not separate). Out-of-range integers
/// and indices throw shape_error naming the dim and the size; slices clamp as Python's do.
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::indexing {

/// LibTorch's None: a new dim of size 1 in index(), an open end in Slice().
constexpr std::nullopt_t None = std::nullopt;

struct EllipsisIndexType {};
/// Every dim not otherwise indexed.
constexpr EllipsisIndexType Ellipsis{};

/// start:stop:step, each end optional (None: from the start / to the end), negative ends
/// counting from the end; step >= 1.
struct Slice {
    Slice(std::optional<int64_t> start_ = std::nullopt, std::optional<int64_t> stop_ = std::nullopt,
          std::optional<int64_t> step_ = std::nullopt)
        : start(start_), stop(stop_), step(step_.value_or(1)) {}
    std::optional<int64_t> start, stop;
    int64_t step = 1;
};

/// One entry of an index list.
class TensorIndex {
public:
    TensorIndex(int64_t i) : v_(i) {}  // NOLINT: implicit, as LibTorch's
    TensorIndex(int i) : v_(int64_t(i)) {}
    TensorIndex(Slice s) : v_(s) {}
    TensorIndex(std::nullopt_t) : v_(std::monostate{}) {}
    TensorIndex(EllipsisIndexType e) : v_(e) {}
    TensorIndex(Tensor t) : v_(std::move(t)) {}
    /// true or false, as LibTorch's (and Python's x[True]): a new dim of size 1 (as None) or 0.
    TensorIndex(bool b) : v_(b) {}
    const std::variant<std::monostate, int64_t, Slice, EllipsisIndexType, Tensor, bool>& get()
        const {
        return v_;
    }

private:
    std::variant<std::monostate, int64_t, Slice, EllipsisIndexType, Tensor, bool> v_;
};

}  // namespace tg::indexing

namespace tg {

/// x[..., i, ...] along dim: a view without that dim.
Tensor select(const Tensor& x, int64_t dim, int64_t index);
/// x[start:stop:step] along dim (Python's clamping; step >= 1): a view for step 1, else a copy.
Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> stop = std::nullopt, int64_t step = 1);
/// x.index({...}) (see above).
Tensor index(const Tensor& x, const std::vector<indexing::TensorIndex>& indices);
/// x.index(indices) = value (broadcast), in place, recorded like copy_ (Note [In-place ops]).
/// A view (integers, step-1 slices, None, Ellipsis) is written directly; tensor indices and
/// steps go through x's positions (Note [Putting through a copy]); an index that selects an
/// element twice throws value_error (PyTorch leaves the result undefined). accumulate adds value
/// instead (x.index(indices) += value), repeated elements adding every time, as PyTorch's.
Tensor& index_put_(Tensor& x, const std::vector<indexing::TensorIndex>& indices,
                   const Tensor& value, bool accumulate = false);
Tensor& index_put_(Tensor& x, const std::vector<indexing::TensorIndex>& indices, Scalar value,
                   bool accumulate = false);

}  // namespace tg

#pragma GCC visibility pop
