#pragma once
// Note [Once differentiable]: a few ops have LibTorch's own backward formula, which LibTorch
// does not differentiate again (ctc_loss, CrossMapLRN2d): their double backward throws there.
// Their backward computes its gradient unrecorded; under create_graph it hands back that
// gradient attached to a node of `inputs` whose backward throws autograd_error, so a second
// derivative taken through it fails as LibTorch's does instead of being silently zero.
#include <initializer_list>
#include <string>

#include "autograd/record.hpp"

namespace tg::ops_detail {

inline Tensor once_differentiable(const char* node, Tensor grad,
                                  std::initializer_list<const Tensor*> inputs) {
    if (!GradMode::is_enabled())
        return grad;
    grad = grad.detach();
    if (should_record(inputs))
        record(node, inputs, grad, [node](const Tensor&) -> Grads {
            throw autograd_error(std::string(node) +
                                 ": double backward is not implemented (as in LibTorch)");
        });
    return grad;
}

}  // namespace tg::ops_detail
