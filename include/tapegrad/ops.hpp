#pragma once
/// Every op, one `///` line each: forward, then the vector-Jacobian product (VJP) of its backward.
/// dy is the upstream gradient, dx/da/db the gradients returned; "sum_to" undoes broadcasting.
/// Ops marked (composed) have no backward of their own: they are written with the primitives.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tapegrad/spatial.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

// ---- arithmetic (numpy broadcasting)
/// y = a + b;  da = sum_to(dy), db = sum_to(dy)
Tensor add(const Tensor& a, const Tensor& b);
/// y = a - b;  da = sum_to(dy), db = -sum_to(dy)
Tensor sub(const Tensor& a, const Tensor& b);
/// y = a * b;  da = sum_to(dy * b), db = sum_to(dy * a)
Tensor mul(const Tensor& a, const Tensor& b);
/// y = a / b (true division: integers as float32);  da = sum_to(dy / b), db = -sum_to(dy*a/b²)
Tensor div(const Tensor& a, const Tensor& b);
/// a / b rounded "trunc" (toward 0) or "floor" (integers only), LibTorch's rounding_mode (nullopt:
/// div(a, b)); integers stay integers, a zero divisor throws value_error. Not differentiable.
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode);
/// y = a - trunc(a/b)·b (C's fmod: the sign of a) and y = a - floor(a/b)·b (remainder, a % b:
/// the sign of b), as LibTorch computes them (integers exactly; a zero integer divisor throws
/// value_error);  da = dy, db = -dy·trunc(a/b) (fmod) or -dy·floor(a/b) (remainder)
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, Scalar b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, Scalar b);
Tensor remainder(Scalar a, const Tensor& b);
/// y = a + s;  da = dy          (and likewise the scalar forms of - * /)
Tensor add(const Tensor& a, Scalar s);
/// y = a * s;  da = dy * s
Tensor mul(const Tensor& a, Scalar s);
/// y = s / a;  da = -dy * s / a²
Tensor rdiv(Scalar s, const Tensor& a);
/// y = -x;  dx = -dy
Tensor neg(const Tensor& x);
/// y = x^e;  dx = dy * e * x^(e-1)
Tensor pow(const Tensor& x, Scalar e);
/// y = a^b;  da = sum_to(dy * b * a^(b-1)), db = sum_to(dy * y * log a)
Tensor pow(const Tensor& a, const Tensor& b);
/// y = s^x;  dx = dy * y * log s
Tensor pow(Scalar s, const Tensor& x);
/// y = √x;  dx = dy / (2y)
Tensor sqrt(const Tensor& x);
/// y = 1/√x;  dx = -dy * y³ / 2
Tensor rsqrt(const Tensor& x);
/// y = x² (pow(x, 2));  dx = 2 x dy
Tensor square(const Tensor& x);
/// y = eˣ;  dx = dy * y
Tensor exp(const Tensor& x);
/// y = ln x;  dx = dy / x
Tensor log(const Tensor& x);
/// y = ln(1 + x), accurate for small x;  dx = dy / (1 + x)
Tensor log1p(const Tensor& x);
/// y = eˣ - 1, accurate for small x;  dx = dy * (y + 1)
Tensor expm1(const Tensor& x);
/// y = sin x;  dx = dy * cos x
Tensor sin(const Tensor& x);
/// y = cos x;  dx = -dy * sin x
Tensor cos(const Tensor& x);
/// y = |x|;  dx = dy * sign(x)     (sign(0) = 0)
Tensor abs(const Tensor& x);
/// Rounding and sign (src/ops/rounding.cpp): piecewise constant, so dx = 0, recorded as PyTorch
/// records them. round is half to even (torch.round); on int64 floor/ceil/round/trunc copy.
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor trunc(const Tensor& x);
Tensor sign(const Tensor& x);
/// y = min(max(x, lo), hi), a missing bound none ({} too, as LibTorch; max when lo > hi);
/// dx = dy where lo <= x <= hi, else 0
Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi = std::nullopt);
Tensor clamp_min(const Tensor& x, Scalar lo);
Tensor clamp_max(const Tensor& x, Scalar hi);
/// y = max(a, b);  da = dy where a > b, db = dy where b > a, ties split dy/2 each
Tensor maximum(const Tensor& a, const Tensor& b);
/// y = min(a, b);  da = dy where a < b, db = dy where b < a, ties split dy/2 each
Tensor minimum(const Tensor& a, const Tensor& b);
/// y = cond ? a : b  (cond nonzero = true, not differentiable);  da = where(cond, dy, 0), db =
/// where(cond, 0, dy)
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
/// x with value where mask (broadcast to x's shape) is nonzero;  dx = dy where mask is 0
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
/// The upper (triu: column - row >= diagonal) or lower (tril: column - row <= diagonal)
/// triangle of the last two dims, zeros elsewhere;  dx = dy on the triangle
Tensor triu(const Tensor& x, int64_t diagonal = 0);
Tensor tril(const Tensor& x, int64_t diagonal = 0);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar s);
Tensor operator-(const Tensor& a, Scalar s);
Tensor operator*(const Tensor& a, Scalar s);
Tensor operator/(const Tensor& a, Scalar s);
Tensor operator+(Scalar s, const Tensor& a);
Tensor operator-(Scalar s, const Tensor& a);
Tensor operator*(Scalar s, const Tensor& a);
Tensor operator/(Scalar s, const Tensor& a);
Tensor operator%(const Tensor& a, const Tensor& b);  // remainder, as LibTorch's
Tensor operator%(const Tensor& a, Scalar b);
Tensor operator%(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& x);

// ---- activations
/// y = tanh x;  dx = dy * (1 - y²)
Tensor tanh(const Tensor& x);
/// y = 1 / (1 + e⁻ˣ);  dx = dy * y * (1 - y)
Tensor sigmoid(const Tensor& x);
/// y = max(x, 0);  dx = dy * (x > 0)
Tensor relu(const Tensor& x);
/// y = x > 0 ? x : slope*x;  dx = dy * (x > 0 ? 1 : slope)
Tensor leaky_relu(const Tensor& x, Scalar slope = 0.01);
/// y = x Φ(x) (exact, erf form);  dx = dy * (Φ(x) + x φ(x))
Tensor gelu(const Tensor& x);
/// y = log(1 + eˣ) (stable; linear above `threshold`);  dx = dy * sigmoid(x)
Tensor softplus(const Tensor& x, Scalar beta = 1, Scalar threshold = 20);
/// y = eˣ / Σ eˣ over dim (max-shifted);  dx = y * (dy - Σ(dy * y))
Tensor softmax(const Tensor& x, int64_t dim);
/// y = x - max - log Σ e^(x-max) over dim;  dx = dy - eʸ * Σ dy
Tensor log_softmax(const Tensor& x, int64_t dim);

// ---- linear algebra
/// 1-D·1-D dot, 2-D·2-D, matrix·vector, and batched 3-D (batch broadcast) products, lowered to
/// BLAS gemm/gemv with transposed operands passed as flags.  da = dy·bᵀ, db = aᵀ·dy
Tensor matmul(const Tensor& a, const Tensor& b);
/// y = x·Wᵀ + b as one node: x:[batch,in] W:[out,in] b:[out];  dx = dy·W, dW = dyᵀ·x, db = dyᵀ·1
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b = {});
/// LibTorch's stricter spellings of matmul: mm takes two 2-D operands, bmm two 3-D ones with
/// the same batch size; addmm(c, a, b, beta, alpha) = beta c + alpha a·b (c broadcast to the
/// product; beta = 0 does not read c).
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& c, const Tensor& a, const Tensor& b, Scalar beta = 1, Scalar alpha = 1);
/// 2-D transpose view;  dx = dyᵀ
Tensor t(const Tensor& x);
/// Swaps two dims (a view);  dx = transpose(dy, d0, d1)
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
/// Reorders dims (a view);  dx = permute(dy, inverse(dims))
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);

// ---- convolution and pooling (NCHW; Note [Convolution as three bilinear ops]: conv_gemm.cpp)
/// y[n,o] = Σ_c w[o,c] ⋆ x[n,c] + b[o]: x [N,C,H,W], w [O,C/groups,kh,kw], b [O] or undefined;
/// one GEMM per sample and group over the unfolded input.  dx = the gather of wᵀ·dy (no
/// atomics, Note [Gathering adjoints]), dw = Σ_n dy·unfold(x)ᵀ, db = Σ dy
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b = {}, const IntArg& stride = 1,
              const IntArg& padding = 0, const IntArg& dilation = 1, int64_t groups = 1);
/// conv2d with padding "same" (stride 1; output size = input size, the odd padding at the
/// bottom/right) or "valid" (none)
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const PaddingMode& padding, const IntArg& dilation = 1, int64_t groups = 1);
/// conv2d with one padding for both dims (so that a literal 0 picks no string overload)
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              int64_t padding, const IntArg& dilation = 1, int64_t groups = 1);
/// conv2d over x [N,C,L], w [O,C/groups,k] (as [N,C,1,L]);  gradients as conv2d's
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b = {}, const IntArg& stride = 1,
              const IntArg& padding = 0, const IntArg& dilation = 1, int64_t groups = 1);
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const PaddingMode& padding, const IntArg& dilation = 1, int64_t groups = 1);
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              int64_t padding, const IntArg& dilation = 1, int64_t groups = 1);
/// The adjoint of conv2d in its input: x [N,C_in,H,W], w [C_in,C_out/groups,kh,kw], b [C_out];
/// output (H-1)·stride - 2·padding + dilation·(k-1) + output_padding + 1.  dx = conv2d(dy, w),
/// dw = conv2d's weight gradient with the roles exchanged, db = Σ dy
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& b = {},
                        const IntArg& stride = 1, const IntArg& padding = 0,
                        const IntArg& output_padding = 0, int64_t groups = 1,
                        const IntArg& dilation = 1);
/// The windows a convolution reads, as columns (PyTorch's F.unfold, im2col): x [N,C,H,W] ->
/// [N, C·kh·kw, L], L = oh·ow windows, row c·kh·kw + a·kw + b holding tap (a, b) of channel c
/// (padding reads 0).  dx = fold(dy, {H, W}, ...): a gather (Note [Gathering adjoints])
Tensor unfold(const Tensor& x, const IntArg& kernel_size, const IntArg& dilation = 1,
              const IntArg& padding = 0, const IntArg& stride = 1);
/// The adjoint of unfold (PyTorch's F.fold, col2im): col [N, C·kh·kw, L] -> [N,C,H,W] with
/// output_size {H, W}, each element the sum of the column entries that unfold would read from
/// it, gathered (no atomics; the same bits for any thread count).  dcol = unfold(dy, ...)
Tensor fold(const Tensor& col, const IntArg& output_size, const IntArg& kernel_size,
            const IntArg& dilation = 1, const IntArg& padding = 0, const IntArg& stride = 1);
/// y = the max of each window of x [N,C,H,W] or [C,H,W] (padding reads as -inf; NaN wins),
/// stride defaults to kernel_size;  dx = each element gathers dy of the windows whose argmax it
/// is. Padding must be at most half the kernel.
Tensor max_pool2d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride = {},
                  const IntArg& padding = 0, const IntArg& dilation = 1, bool ceil_mode = false);
/// max_pool2d and the argmax of each window (int64, as h·W + w within its plane)
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const IntArg& kernel_size,
                                                  const IntArg& stride = {},
                                                  const IntArg& padding = 0,
                                                  const IntArg& dilation = 1,
                                                  bool ceil_mode = false);
/// y = the mean of each window (count_include_pad: padding counts in the divisor);  dx = each
/// element gathers dy / divisor of the windows that cover it
Tensor avg_pool2d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride = {},
                  const IntArg& padding = 0, bool ceil_mode = false, bool count_include_pad = true);
/// y [N,C,oh,ow] = means over windows [⌊i·H/oh⌋, ⌈(i+1)·H/oh⌉) (and likewise columns);  dx as
/// avg_pool2d's
Tensor adaptive_avg_pool2d(const Tensor& x, const IntArg& output_size);
/// int64 labels of any shape -> labels.shape + [num_classes] of 0/1 (int64, as LibTorch's);
/// num_classes -1: the largest label + 1. Negative or too large labels throw value_error.
Tensor one_hot(const Tensor& labels, int64_t num_classes = -1);

// ---- reductions (dims may be negative; keepdim keeps them as size 1)
/// y = Σ x;  dx = expand(dy)
Tensor sum(const Tensor& x);
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
/// One dim, as sum(x, 1) in LibTorch (a template, so that sum(x, {}) still means all dims)
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Tensor sum(const Tensor& x, Int dim, bool keepdim = false) {
    return sum(x, std::vector<int64_t>{int64_t(dim)}, keepdim);
}
/// y = Σ x / n (composed); NaN over an empty dim, as 0/0
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
/// One dim, as sum(x, 1) in LibTorch (a template, so that sum(x, {}) still means all dims)
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Tensor mean(const Tensor& x, Int dim, bool keepdim = false) {
    return mean(x, std::vector<int64_t>{int64_t(dim)}, keepdim);
}
/// log Σ exp(x) over dims, shifted by the maximum (stable for large x); an empty sum gives -inf.
/// dx = dy * softmax(x) over dims.
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Tensor logsumexp(const Tensor& x, Int dim, bool keepdim = false) {
    return logsumexp(x, std::vector<int64_t>{int64_t(dim)}, keepdim);
}
/// The p-norm over dims (all when empty): p = 2 is one node with dx = dy x / y (0 where y = 0),
/// p = 1 sum |x|, p = inf max |x|, other p > 0 (Σ |x|^p)^(1/p).
Tensor norm(const Tensor& x, Scalar p, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor norm(const Tensor& x, Scalar p = 2);
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Tensor norm(const Tensor& x, Scalar p, Int dim, bool keepdim = false) {  // torch::norm(x, 2, 1)
    return norm(x, p, std::vector<int64_t>{int64_t(dim)}, keepdim);
}
/// y = max x;  dx = expand(dy) * (x == y) / count(x == y): ties share the gradient evenly.
/// Reducing a dim of size 0 throws shape_error (there is no identity); kept dims may be empty
Tensor max(const Tensor& x);
/// y = min x;  as max
Tensor min(const Tensor& x);
/// The max over dims (all when empty), ties sharing the gradient evenly, as max(x): LibTorch's
/// amax / amin
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// (values, indices) of the max along dim, as LibTorch's max(x, dim): the index of the first
/// max (a NaN wins), values gathered there, so the whole gradient goes to that element.
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
/// (values, indices) of the min along dim; as max
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
/// The elementwise maximum (minimum) of a and b, as LibTorch's max(a, b)
Tensor max(const Tensor& a, const Tensor& b);
Tensor min(const Tensor& a, const Tensor& b);
/// Variance, unbiased (n-1) unless unbiased=false (composed); NaN when n <= the correction
Tensor var(const Tensor& x, bool unbiased = true);
Tensor var(const Tensor& x, const std::vector<int64_t>& dims, bool unbiased = true,
           bool keepdim = false);
Tensor var(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased = true,
           bool keepdim = false);
/// var(x, {dim}): LibTorch's C++ overload, so that var(x, 0) is dim 0, not unbiased = false
Tensor var(const Tensor& x, int dim);
/// Gradient of broadcasting: sums x down to `shape`;  dx = expand(dy, x.shape)
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- shape
/// Same data, new shape (a view when the strides allow, else a copy);  dx = reshape(dy, x.shape)
Tensor reshape(const Tensor& x, Shape shape);
/// As reshape, but throws shape_error if it cannot be a view
Tensor view(const Tensor& x, Shape shape);
/// Flattens dims start..end into one (composed)
Tensor flatten(const Tensor& x, int64_t start = 0, int64_t end = -1);
/// Removes size-1 dims (composed)
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, int64_t dim);
/// Inserts a size-1 dim (composed)
Tensor unsqueeze(const Tensor& x, int64_t dim);
/// Broadcasts size-1 dims to `shape` (a stride-0 view);  dx = sum_to(dy, x.shape)
Tensor expand(const Tensor& x, const Shape& shape);
/// LibTorch's "_as" spellings: expand, view, reshape to other's shape; to(other's dtype)
Tensor expand_as(const Tensor& x, const Tensor& other);
Tensor view_as(const Tensor& x, const Tensor& other);
Tensor reshape_as(const Tensor& x, const Tensor& other);
Tensor type_as(const Tensor& x, const Tensor& other);
/// Factories shaped, typed and placed like t (zeros_like, ones_like: tensor.hpp)
Tensor full_like(const Tensor& t, Scalar value);
Tensor rand_like(const Tensor& t);
Tensor randn_like(const Tensor& t);
/// Joins tensors along dim;  dxᵢ = narrow(dy, dim, offsetᵢ, sizeᵢ)
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0);
/// Joins tensors along a new dim (composed)
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);
/// Slice [start, start+length) of dim (a view; start in [-n, n], negative counts from the end,
/// length in [0, n - start]);  dx = zeros with dy written into the slice
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
/// Rows (along dim) picked by an int64 index;  dx = index_add(zeros, dim, index, dy)
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
/// y[i][j] = x[i][index[i][j]] (for dim 1);  dx = scatter_add(zeros, dim, index, dy)
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
/// Inverse of narrow: zeros of `shape` with x written at [start, start+len) of dim;  dx =
/// narrow(dy)
Tensor narrow_scatter(const Tensor& x, const Shape& shape, int64_t dim, int64_t start);
/// zeros(shape) with x's rows added at index along dim;  dx = index_select(dy, dim, index)
Tensor index_add(const Tensor& x, const Shape& shape, int64_t dim, const Tensor& index);
/// zeros(shape) with x added at index along dim;  dx = gather(dy, dim, index)
Tensor scatter_add(const Tensor& x, const Shape& shape, int64_t dim, const Tensor& index);

// ---- comparisons, logic, any/all, nonzero, masked_select: tapegrad/logical.hpp
/// Index of the largest element (first one on ties), int64
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);

// ---- ordering along a dim (src/ops/sort.cpp)
/// y_i = Σ_{j <= i} x_j along dim (integers and bool in int64);  dx_i = Σ_{j >= i} dy_j
Tensor cumsum(const Tensor& x, int64_t dim);
/// (values, int64 indices) of x sorted along dim, ties in their order, NaN above every number;
/// values = gather(x, dim, indices), so dx = scatter_add(dy, indices)
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int dim, bool descending = false);  // argsort(x, 1): dim 1
/// LibTorch's stable overload: argsort(x, true) sorts the last dim (every sort here is stable)
Tensor argsort(const Tensor& x, bool stable, int64_t dim, bool descending = false);
Tensor argsort(const Tensor& x, bool stable);
/// (values, int64 indices) of the k largest (smallest) along dim, in sorted order;  dx as sort's
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);

}  // namespace tg

#pragma GCC visibility pop

#include "tapegrad/activation_ops.hpp"     // elu, silu, mish, hardtanh, prelu, rrelu, ...
#include "tapegrad/conv_ops.hpp"           // 3-D and transposed 1-D/3-D convolutions
#include "tapegrad/distance_ops.hpp"       // bilinear, cosine_similarity, pairwise_distance, pdist
#include "tapegrad/dropout_ops.hpp"        // alpha_dropout, feature_alpha_dropout
#include "tapegrad/embedding_bag_ops.hpp"  // embedding_bag
#include "tapegrad/inplace_ops.hpp"        // relu_, clamp_, ..., addcmul, lerp, scatter, index_copy
#include "tapegrad/layer_ops.hpp"          // normalisation, embedding, attention, dropout
#include "tapegrad/logical.hpp"            // comparisons and bool tensors, in a header of their own
#include "tapegrad/losses.hpp"             // the losses, in a header of their own
#include "tapegrad/math_ops.hpp"           // tan, sinh, asin, atan, atan2, hypot, log2, exp2, erf
#include "tapegrad/norm_ops.hpp"           // instance norm, local response norm
#include "tapegrad/numeric_ops.hpp"        // std, isnan, nan_to_num, dot, outer, einsum, diag
#include "tapegrad/pool_ops.hpp"      // 1-D and 3-D, adaptive, LP, fractional pooling and unpooling
#include "tapegrad/reduce_ops.hpp"    // prod, cumprod, median, kthvalue, bincount
#include "tapegrad/resampling.hpp"    // pad and interpolate, in a header of their own
#include "tapegrad/rnn_ops.hpp"       // the recurrent cells and layers, in a header of their own
#include "tapegrad/sampling_ops.hpp"  // pixel shuffle, grid_sample, affine_grid
#include "tapegrad/split_ops.hpp"     // chunk, split, unbind, tile, flip, roll, movedim
