#pragma once
// Random tensors: the samplers' values (core/distributions.hpp) put into a tensor on any device,
// in the order LibTorch's CPU kernels visit it (Note [Draw order] in random_fill.cpp).
#include <cstdint>
#include <functional>

#include "core/random.hpp"
#include "tapegrad/tensor.hpp"

namespace tg::runtime {

/// Writes n values of the filled tensor's dtype to host memory dst, in draw order, from e.
/// `contiguous` says whether the tensor being filled is (LibTorch's normal_ fills a contiguous
/// tensor of >= 16 elements its own way).
using Sampler = std::function<void(void* dst, int64_t n, bool contiguous, detail::Engine& e)>;

/// Fills the contiguous tensor `out` (any device) with what `sample` draws from e. The values go
/// to out's elements in the order LibTorch visits `layout` (out itself when null): an in-place
/// random op on a view fills a contiguous tensor, then copies it into the view, and the view's
/// strides decide which element gets which value. value_error naming `op` when layout has
/// elements that share memory (a stride 0 over a dim of size > 1), as LibTorch refuses.
void fill_random(const Tensor& out, detail::Engine& e, const Sampler& sample, const char* op,
                 const Tensor* layout = nullptr);

/// As above, from g's state, else the calling thread's default generator's (detail::Draw).
void fill_random(const Tensor& out, const Generator* g, const Sampler& sample, const char* op,
                 const Tensor* layout = nullptr);

/// Lets `write` write the elements of the contiguous tensor t (any device) in index order to host
/// memory: t's own on the CPU, else a buffer then copied to the device.
void fill_host(const Tensor& t, const std::function<void(void* dst)>& write);

}  // namespace tg::runtime
