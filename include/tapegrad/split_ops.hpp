#pragma once
/// LibTorch's ops that cut, repeat and reorder a tensor (ops.hpp includes this header; the
/// methods are in tensor_methods.hpp): views where LibTorch's are views (chunk, split, unbind,
/// movedim), copies where its are copies (repeat, tile, flip, roll). All differentiable; one
/// `///` line each: forward, then the vector-Jacobian product.
#include <cstdint>
#include <vector>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// ceil(n / chunks)-sized narrows of dim (the last smaller; fewer than chunks when n is small;
/// value_error for chunks <= 0);  dx = the pieces' gradients side by side
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
/// split_size-sized narrows of dim (the last smaller; value_error for split_size < 0, or 0 with
/// n > 0)
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
/// narrows of the given sizes (shape_error unless they sum to the size of dim)
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& split_sizes,
                          int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& split_sizes,
                                     int64_t dim = 0);
/// select(x, dim, i) for every i
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
/// x repeated along each dim (leading 1s added to x's shape when dims is longer; shorter dims
/// are filled with 1s in front, unlike Tensor::repeat);  dx = dy summed over the copies
Tensor tile(const Tensor& x, const std::vector<int64_t>& dims);
/// x with the order of dims reversed;  dx = flip(dy, dims)
Tensor flip(const Tensor& x, const std::vector<int64_t>& dims);
/// x shifted cyclically by shifts[i] along dims[i] (flattened, then restored, when dims is
/// empty);  dx = roll(dy, -shifts, dims)
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts,
            const std::vector<int64_t>& dims = {});
/// x's dims source moved to destination, the others in their order (a view)
Tensor movedim(const Tensor& x, const std::vector<int64_t>& source,
               const std::vector<int64_t>& destination);
Tensor movedim(const Tensor& x, int64_t source, int64_t destination);

}  // namespace tg

#pragma GCC visibility pop
