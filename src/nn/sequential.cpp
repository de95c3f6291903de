#include "tapegrad/nn/sequential.hpp"

namespace tg::nn {

Tensor SequentialImpl::forward(const Tensor& x) {
    Tensor y = x;
    for (const std::shared_ptr<Module>& m : *this)
        y = (*m)(y);
    return y;
}

}  // namespace tg::nn
