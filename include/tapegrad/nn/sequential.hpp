#pragma once
/// Sequential: a chain of single-input modules registered as "0", "1", ... (so parameters are
/// named "0.weight", "2.bias"); forward feeds each module's output to the next. It is a
/// ModuleList (push_back, [i], at<T>(i), iteration) with a forward.
///
///     tg::nn::Sequential net(tg::nn::Linear(2, 8), tg::nn::Tanh(), tg::nn::Linear(8, 1));
///     net->push_back(tg::nn::Sigmoid());
///     auto y = net(x);                 // or net->forward(x)
///     for (auto& m : *net) std::cout << *m << "\n";
///     auto first = net[0];             // std::shared_ptr<Module>
///     auto& fc = net->at<tg::nn::LinearImpl>(0);
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/nn/container.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class SequentialImpl : public ModuleListImpl {
public:
    SequentialImpl() : ModuleListImpl(Named{"Sequential"}) {}
    /// Appends each argument (holders such as Linear(...) or shared_ptrs to modules).
    template <class... Modules>
    explicit SequentialImpl(Modules&&... modules) : ModuleListImpl(Named{"Sequential"}) {
        (push_back(std::forward<Modules>(modules)), ...);
    }

    /// Runs the modules in order, each through Module::operator() (so each gets a RecordScope).
    Tensor forward(const Tensor& x) override;
};
TG_MODULE(Sequential);

}  // namespace tg::nn

#pragma GCC visibility pop
