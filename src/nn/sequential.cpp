#include "tapegrad/nn/sequential.hpp"

namespace tg::nn {

Tensor SequentialImpl::forward(const Tensor& x) {
    if (modules_.empty())
        return x;
    Tensor y = (*modules_.front())(x);
    for (size_t i = 1; i < modules_.size(); ++i)
        y = (*modules_[i])(y);
    return y;
}

std::shared_ptr<Module> SequentialImpl::ptr(size_t i) const {
    if (i >= modules_.size())
        throw shape_error("Sequential: index " + std::to_string(i) + " out of range for " +
                          std::to_string(modules_.size()) + " modules");
    return modules_[i];
}

void SequentialImpl::push_back_named(std::string name, std::shared_ptr<Module> m) {
    register_module(std::move(name), m);
    modules_.push_back(std::move(m));
}

}  // namespace tg::nn
