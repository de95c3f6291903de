#pragma once
// Whether a backward may write its dx over the dy it was handed (Note [Gradients written in
// place]).
#include <memory>

#include "tapegrad/tensor.hpp"

namespace tg {

// Note [Gradients written in place]: a backward's dy is often a temporary that nobody else
// holds (the gradient max_pool2d's backward just wrote, for the CNN's ReLU), and writing dx over
// it instead of into a fresh buffer saves the fresh buffer's pass of cache-line reads (a store
// reads its line first): relu's backward reads dy and y and writes dx, 4 passes over memory
// with a fresh dx, 3 in place; batch_norm's (ops/norm_fused.cpp) reads dy and x twice and
// writes dx. Only a dy that nothing else can see is overwritten: its tensor
// and storage held once (by the engine's list for this node: a capture of autograd::grad, a
// hook, a leaf's .grad or a second edge holds another), memory of the allocator's (not
// from_blob's), not saved for a backward, not a parameter's, and contiguous with dx's shape.
inline bool overwritable(const Tensor& dy, const Tensor& like) {
    const std::shared_ptr<Storage>& st = dy.impl()->storage;
    return dy.impl_ptr().use_count() == 1 && st.use_count() == 1 && st->owned &&
           st->saved_refs == 0 && !st->grad_leaf && !dy.requires_grad() && dy.is_contiguous() &&
           dy.dtype() == like.dtype() && dy.device() == like.device() && dy.sizes() == like.sizes();
}

}  // namespace tg
