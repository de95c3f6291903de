#pragma once
/// nn::Functional: a module that applies a function, so that functions sit in a Sequential
/// beside layers, as LibTorch's:
///     seq->push_back(tg::nn::Functional(tg::relu));
///     seq->push_back(tg::nn::Functional(tg::max_pool2d, 3, stride, 0, 1, false));  // binds the
///                                                                 // arguments after the input
///     seq->push_back(tg::nn::Functional([](tg::Tensor x) { return tg::log_softmax(x, 1); }));
/// It has no parameters and prints as "Functional()".
#include <functional>
#include <ostream>
#include <type_traits>
#include <utility>

#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class FunctionalImpl : public Module {
public:
    using Function = std::function<Tensor(Tensor)>;
    /// A function of one tensor (value_error if empty).
    explicit FunctionalImpl(Function function);
    /// f(input, args...): the arguments after the input bound now, as std::bind binds them.
    template <class SomeFunction, class... Args, class = std::enable_if_t<(sizeof...(Args) > 0)>>
    explicit FunctionalImpl(SomeFunction original_function, Args&&... args)
        : FunctionalImpl(Function(
              std::bind(original_function, std::placeholders::_1, std::forward<Args>(args)...))) {}
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;

private:
    Function function_;
};
TG_MODULE(Functional);

}  // namespace tg::nn

#pragma GCC visibility pop
