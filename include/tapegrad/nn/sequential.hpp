#pragma once
/// Sequential: a chain of single-input modules registered as "0", "1", ... (so parameters are
/// named "0.weight", "2.bias"); forward feeds each module's output to the next.
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

#include "tapegrad/error.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class SequentialImpl : public Module {
public:
    using Iterator = std::vector<std::shared_ptr<Module>>::iterator;
    using ConstIterator = std::vector<std::shared_ptr<Module>>::const_iterator;

    SequentialImpl() : Module("Sequential") {}
    /// Appends each argument (holders such as Linear(...) or shared_ptrs to modules).
    template <class... Modules>
    explicit SequentialImpl(Modules&&... modules) : Module("Sequential") {
        (push_back(std::forward<Modules>(modules)), ...);
    }

    /// Runs the modules in order, each through Module::operator() (so each gets a RecordScope).
    Tensor forward(const Tensor& x) override;

    /// Appends a module under the name std::to_string(size()).
    template <class M>
    void push_back(std::shared_ptr<M> m) {
        push_back_named(std::to_string(modules_.size()), std::move(m));
    }
    template <class Impl>
    void push_back(const ModuleHolder<Impl>& holder) {
        push_back(holder.ptr());
    }
    /// Appends a module under a chosen name.
    template <class M>
    void push_back(std::string name, std::shared_ptr<M> m) {
        push_back_named(std::move(name), std::move(m));
    }
    template <class Impl>
    void push_back(std::string name, const ModuleHolder<Impl>& holder) {
        push_back_named(std::move(name), holder.ptr());
    }

    /// The i-th module; throws shape_error when i >= size().
    std::shared_ptr<Module> operator[](size_t i) const { return ptr(i); }
    std::shared_ptr<Module> ptr(size_t i) const;
    std::shared_ptr<Module> at(size_t i) const { return ptr(i); }
    /// The i-th module as M; throws tg::error if it is not an M.
    template <class M>
    M& at(size_t i) const {
        auto* m = dynamic_cast<M*>(ptr(i).get());
        if (!m)
            throw error("Sequential::at<T>(" + std::to_string(i) + "): module is a " +
                        ptr(i)->name() + ", not the requested type");
        return *m;
    }
    size_t size() const { return modules_.size(); }
    bool is_empty() const { return modules_.empty(); }

    Iterator begin() { return modules_.begin(); }
    Iterator end() { return modules_.end(); }
    ConstIterator begin() const { return modules_.begin(); }
    ConstIterator end() const { return modules_.end(); }

private:
    void push_back_named(std::string name, std::shared_ptr<Module> m);
    std::vector<std::shared_ptr<Module>> modules_;
};
TG_MODULE(Sequential);

}  // namespace tg::nn

#pragma GCC visibility pop
