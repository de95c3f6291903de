#pragma once
/// ParameterList and ParameterDict: parameters held by index or by name, registered on the
/// container itself (so they are its parameters(): "0", "1", ... or the keys), with no forward;
/// as LibTorch's.
///
///     tg::nn::ParameterList scales(tg::ones({4}).requires_grad_(true), tg::zeros({4}));
///     scales->append(tg::randn({4}));           // kept as given: requires grad only if it did
///     for (auto& item : *scales) item.value().mul_(2);
///     tg::nn::ParameterDict heads;
///     heads->insert("w", tg::randn({3, 3}).requires_grad_(true));
///     tg::Tensor w = heads["w"];
/// As LibTorch's, a tensor keeps its requires_grad when it is added (a plain tensor is a
/// parameter that is not trained); they print "Parameter containing: [Float of size [4]]".
#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class ParameterListImpl : public Module {
public:
    using Item = OrderedDict<std::string, Tensor>::Item;
    using Iterator = TensorItems::iterator;
    using ConstIterator = TensorItems::const_iterator;

    ParameterListImpl() : Module("ParameterList") {}
    /// Appends each tensor.
    template <class... Tensors>
    explicit ParameterListImpl(Tensors&&... params) : Module("ParameterList") {
        (append(std::forward<Tensors>(params)), ...);
    }
    /// Registers param under the name std::to_string(size()), with its own requires_grad.
    void append(const Tensor& param);
    /// Appends an item's value (an item of another list or of named_parameters()).
    void append(const Item& item) { append(item.value()); }
    /// Appends every tensor (or item) of container.
    template <class Container>
    void extend(const Container& container) {
        for (const auto& p : container)
            append(p);
    }
    template <class Container>
    ParameterListImpl& operator+=(const Container& other) {
        extend(other);
        return *this;
    }
    /// The idx-th parameter (a reference to the registered one); shape_error past the end.
    Tensor& at(size_t idx);
    const Tensor& at(size_t idx) const;
    Tensor& operator[](size_t idx) { return at(idx); }
    const Tensor& operator[](size_t idx) const { return at(idx); }
    size_t size() const noexcept { return own_parameters().size(); }
    bool is_empty() const noexcept { return own_parameters().empty(); }
    Iterator begin() { return own_parameters().begin(); }
    Iterator end() { return own_parameters().end(); }
    ConstIterator begin() const { return own_parameters().begin(); }
    ConstIterator end() const { return own_parameters().end(); }
    /// "ParameterList(\n(0): Parameter containing: [Float of size [2, 3]]\n...)", as LibTorch's.
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(ParameterList);

class ParameterDictImpl : public Module {
public:
    using Iterator = TensorItems::iterator;
    using ConstIterator = TensorItems::const_iterator;

    ParameterDictImpl() : Module("ParameterDict") {}
    /// Registers each (key, tensor), each with its own requires_grad.
    explicit ParameterDictImpl(const OrderedDict<std::string, Tensor>& params);
    /// Registers param under key (value_error for a taken, empty or dotted key); returns it.
    Tensor& insert(std::string key, Tensor param);
    /// Removes the parameter under key and returns it (value_error without one).
    Tensor pop(const std::string& key);
    std::vector<std::string> keys() const;
    std::vector<Tensor> values() const;
    size_t size() const noexcept { return own_parameters().size(); }
    bool empty() const noexcept { return own_parameters().empty(); }
    /// For each item of container (key(), value()), the parameter under its key becomes its
    /// value; as LibTorch's, every key must be there already (value_error otherwise).
    template <class Container>
    void update(const Container& container) {
        for (const auto& item : container)
            get(item.key()) = item.value();
    }
    /// Removes every parameter.
    void clear() { own_parameters().clear(); }
    bool contains(const std::string& key) const noexcept;
    /// The parameter under key (a reference to the registered one); value_error without one.
    Tensor& get(const std::string& key);
    const Tensor& get(const std::string& key) const;
    Tensor& operator[](const std::string& key) { return get(key); }
    const Tensor& operator[](const std::string& key) const { return get(key); }
    Iterator begin() { return own_parameters().begin(); }
    Iterator end() { return own_parameters().end(); }
    ConstIterator begin() const { return own_parameters().begin(); }
    ConstIterator end() const { return own_parameters().end(); }
    /// "ParameterDict(\n(a): Parameter containing: [Float of size [2, 3]]\n...)".
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(ParameterDict);

}  // namespace tg::nn

#pragma GCC visibility pop
