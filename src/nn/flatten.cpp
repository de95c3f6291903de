#include "tapegrad/nn/flatten.hpp"

#include "tapegrad/ops.hpp"

namespace tg::nn {

Tensor FlattenImpl::forward(const Tensor& x) {
    return flatten(x, start_, end_);
}

void FlattenImpl::pretty_print(std::ostream& os) const {
    os << "Flatten(start_dim=" << start_ << ", end_dim=" << end_ << ")";
}

}  // namespace tg::nn
