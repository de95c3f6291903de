#pragma once
/// tg::nn::Module: a layer that owns named parameters and named submodules, as torch::nn::Module.
///
///     struct NetImpl : tg::nn::Module {
///         NetImpl() : Module("Net") {
///             fc1 = register_module("fc1", tg::nn::Linear(784, 64));
///             fc2 = register_module("fc2", tg::nn::Linear(64, 10));
///         }
///         tg::Tensor forward(const tg::Tensor& x) override { return fc2(tg::relu(fc1(x))); }
///         tg::nn::Linear fc1{nullptr}, fc2{nullptr};
///     };
///     TG_MODULE(Net);
///
/// Parameters are ordinary leaf tensors that require grad; named_parameters() names them with
/// dotted paths ("fc1.weight"). Buffers (register_buffer) are state that is not trained, as
/// BatchNorm's running statistics: they move with to(), are saved and loaded with the
/// parameters, and are not in parameters(). Calling a module (holder(x) or (*module)(x)) opens an
/// autograd::RecordScope with the layer's label, so anomaly messages name the layer.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tapegrad/device.hpp"
#include "tapegrad/dtype.hpp"
#include "tapegrad/ordered_dict.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {
/// A module's state by PyTorch's key names ("fc1.weight", "bn.running_mean"), in PyTorch's order.
using StateDict = OrderedDict<std::string, Tensor>;
}  // namespace tg

namespace tg::nn {

template <class Impl>
class ModuleHolder;

/// What load_state_dict(sd, strict) did not match, as PyTorch's `_IncompatibleKeys`: the
/// module's keys absent from sd, and sd's keys that are not the module's.
struct LoadResult {
    std::vector<std::string> missing_keys;
    std::vector<std::string> unexpected_keys;
};

namespace module_detail {
/// The module type a holder holds (Linear -> LinearImpl), or T itself.
template <class T, class = void>
struct Contained {
    using type = T;
};
template <class T>
struct Contained<T, std::void_t<typename T::ContainedType>> {
    using type = typename T::ContainedType;
};
}  // namespace module_detail

class Module;

namespace module_detail {
/// What a wrapper does around each call of a module through operator() (a holder's `block(x)` or
/// Module's `(*m)(x)`), as PyTorch's forward hooks run around `module(x)` and not around a direct
/// `module.forward(x)`: nn::FullyShardedDataParallel's stage-3 units gather their parameters in
/// enter and free them in exit. enter may throw (the call then does not happen); exit must not.
struct CallHooks {
    virtual ~CallHooks() = default;
    virtual void enter(Module& m) = 0;
    virtual void exit(Module& m) noexcept = 0;
};
/// Sets m's call hooks (null removes them).
void set_call_hooks(Module& m, std::shared_ptr<CallHooks> hooks);
/// Runs m's call hooks, if it has any, around a call: enter() when made, exit() when destroyed.
class CallScope {
public:
    explicit CallScope(Module& m);
    ~CallScope() {
        if (hooks_)
            hooks_->exit(*m_);
    }
    CallScope(const CallScope&) = delete;
    CallScope& operator=(const CallScope&) = delete;

private:
    Module* m_;
    CallHooks* hooks_ = nullptr;
};
}  // namespace module_detail

class Module : public std::enable_shared_from_this<Module> {
public:
    /// `name` is the type name ("Linear"), used in error messages and record scopes.
    explicit Module(std::string name = "Module");
    virtual ~Module();
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;

    /// The computation of single-input modules; the base version throws tg::error.
    virtual Tensor forward(const Tensor& x);
    /// forward(x) inside an autograd::RecordScope named after this layer (see label()).
    Tensor operator()(const Tensor& x);

    /// This module's parameters, then (recurse) its children's, in registration order.
    std::vector<Tensor> parameters(bool recurse = true) const;
    /// As parameters(), with dotted names ("weight", "fc1.bias", "0.weight") in an OrderedDict:
    /// named_parameters()["fc1.weight"].
    OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
    /// This module's buffers, then (recurse) its children's, in registration order.
    std::vector<Tensor> buffers(bool recurse = true) const;
    /// As buffers(), with dotted names: "running_mean", "1.num_batches_tracked".
    OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
    /// PyTorch's `state_dict()`: per module, depth first, its own parameters then its own buffers
    /// (each in registration order), then its children's, keyed by the dotted path ("0.weight",
    /// "bn.running_mean", "bn.num_batches_tracked"). The values are detached tensors sharing the
    /// module's storage (PyTorch's keep_vars=false).
    StateDict state_dict() const;
    /// PyTorch's `load_state_dict(sd, strict)`: copies sd's values into the module's parameters
    /// and buffers in place (without recording; each keeps its device and dtype, values are
    /// converted). Everything is checked before anything is copied: value_error listing every
    /// shape mismatch ("size mismatch for fc1.weight: copying a param with shape [3, 4] from
    /// checkpoint, the shape in current model is [5, 4].") and, with strict, every missing and
    /// every unexpected key, in one message in PyTorch's words; the module is then unchanged.
    /// Returns the keys that did not match (both empty after a strict load).
    LoadResult load_state_dict(const StateDict& sd, bool strict = true);
    /// The direct submodules with the names they were registered under (keys described as
    /// "Submodule", as LibTorch's).
    OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
    /// The direct submodules.
    std::vector<std::shared_ptr<Module>> children() const;
    /// This module (unless include_self is false) and every descendant, depth first, named with
    /// dotted paths after prefix ("" for this one). A module not held by a shared_ptr (a stack
    /// object) is listed as null.
    OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& prefix = "",
                                                                    bool include_self = true) const;
    /// named_modules()' modules.
    std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
    /// Calls fn on this module and every descendant, depth first (LibTorch's apply, e.g. for
    /// `if (auto* fc = m.as<nn::Linear>()) ...` initialisations).
    void apply(const std::function<void(Module&)>& fn);
    void apply(const std::function<void(const std::string&, Module&)>& fn,
               const std::string& prefix = "");

    /// This module as a T (a module type or its holder: as<nn::Linear>() is a LinearImpl*), or
    /// null if it is not one.
    template <class T>
    typename module_detail::Contained<T>::type* as() noexcept {
        return dynamic_cast<typename module_detail::Contained<T>::type*>(this);
    }
    template <class T>
    const typename module_detail::Contained<T>::type* as() const noexcept {
        return dynamic_cast<const typename module_detail::Contained<T>::type*>(this);
    }

    /// Sets training mode here and in every descendant (Dropout is active only in training).
    void train(bool on = true);
    /// train(false).
    void eval();
    bool is_training() const { return training_; }

    /// Clears every parameter's gradient: to none (default) or, with set_to_none=false, to zeros.
    void zero_grad(bool set_to_none = true);

    /// Moves every parameter (and its gradient) and every buffer to `d`. Parameters and buffers
    /// keep their identity (the Tensor handles held by optimizers and layers stay valid) and
    /// parameters remain leaves that require grad. non_blocking is accepted as LibTorch's and
    /// changes nothing (copies are synchronous).
    virtual void to(Device d, bool non_blocking = false);
    /// Converts every floating-point parameter (and its gradient) and floating-point buffer to
    /// dtype `d`, as to(Device); integer buffers (num_batches_tracked) keep their dtype.
    virtual void to(Dtype d, bool non_blocking = false);
    /// to(dtype) then to(device).
    virtual void to(Device device, Dtype dtype, bool non_blocking = false);

    /// The type name given at construction ("Linear").
    const std::string& name() const { return name_; }
    /// The record-scope label: the registered name ("fc1"), the type name for unregistered
    /// modules ("Linear"), or "Linear[0]" for modules registered under an index (Sequential).
    const std::string& label() const { return label_; }

    /// Writes a one-line description ("Linear(in_features=784, out_features=10, bias=true)").
    virtual void pretty_print(std::ostream& os) const;

    /// Adds a parameter named `name` (no dots); returns it (the same tensor, made a leaf that
    /// requires grad unless requires_grad is false). Throws value_error for an empty, dotted or
    /// taken name or an undefined tensor, dtype_error for a non-floating one that would require
    /// grad.
    Tensor& register_parameter(std::string name, Tensor t, bool requires_grad = true);
    /// Adds a buffer named `name` (no dots): a tensor that is not a parameter (never requires
    /// grad) but is part of the module's state. Returns it (detached). Throws value_error for an
    /// empty, dotted or taken name (by a parameter or a buffer) or an undefined tensor.
    Tensor& register_buffer(std::string name, Tensor t);
    /// Adds a submodule named `name`; returns it. Throws value_error for an empty, dotted or
    /// taken name or a null module.
    template <class M>
    std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> m) {
        add_child(std::move(name), m);
        return m;
    }
    /// Adds the module a holder (Linear, Sequential, ...) points to; returns it.
    template <class Impl>
    std::shared_ptr<Impl> register_module(std::string name, ModuleHolder<Impl> holder) {
        return register_module(std::move(name), holder.ptr());
    }

protected:
    /// (name, tensor) items with key() and value(), as LibTorch's OrderedDict items.
    using TensorItems = std::vector<OrderedDict<std::string, Tensor>::Item>;
    /// The parameters registered on this module itself, in registration order: for the
    /// parameter containers (ParameterList, ParameterDict), which iterate over them, hand out
    /// references to them and remove them, as LibTorch's do with their parameters_.
    TensorItems& own_parameters() noexcept { return parameters_; }
    const TensorItems& own_parameters() const noexcept { return parameters_; }

private:
    void add_child(std::string name, std::shared_ptr<Module> m);
    void check_new_name(const char* what, const std::string& name) const;

    std::string name_;
    std::string registered_as_;  // name in the parent, "" if none
    std::string label_;          // cached label(), set at construction and registration
    bool training_ = true;
    TensorItems parameters_;
    TensorItems buffers_;
    std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
    std::shared_ptr<module_detail::CallHooks> call_hooks_;  // module_detail::set_call_hooks
    friend class module_detail::CallScope;
    friend void module_detail::set_call_hooks(Module&, std::shared_ptr<module_detail::CallHooks>);
};

inline module_detail::CallScope::CallScope(Module& m) : m_(&m) {
    if (m.call_hooks_) {
        m.call_hooks_->enter(m);  // throws before hooks_ is set: no exit for a call not made
        hooks_ = m.call_hooks_.get();
    }
}

/// Prints m.pretty_print() and, indented, its children.
std::ostream& operator<<(std::ostream& os, const Module& m);

}  // namespace tg::nn

#pragma GCC visibility pop

#include "tapegrad/nn/holder.hpp"
