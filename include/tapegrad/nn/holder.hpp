#pragma once
/// ModuleHolder and TG_MODULE: value-semantics handles to shared modules, as LibTorch's
/// ModuleHolder / TORCH_MODULE. `Linear fc(784, 10)` makes a shared LinearImpl; copies of `fc`
/// share it; `fc->weight` reaches the module; `fc(x)` calls its forward inside a RecordScope.
/// `Linear fc{nullptr}` is an empty holder, to be assigned later (e.g. from register_module).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>

#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

template <class Impl>
class ModuleHolder {
public:
    using ContainedType = Impl;

    /// Constructs Impl with no arguments (only for default-constructible modules).
    ModuleHolder() : impl_(std::make_shared<Impl>()) {}
    /// An empty holder; using it throws tg::error.
    ModuleHolder(std::nullptr_t) {}  // NOLINT: implicit, as in LibTorch
    /// Holds an existing module.
    ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}  // NOLINT
    /// Constructs Impl from the arguments: Linear(784, 10).
    template <
        class Head, class... Tail,
        class = std::enable_if_t<!(std::is_same_v<std::decay_t<Head>, ModuleHolder> ||
                                   std::is_base_of_v<ModuleHolder, std::decay_t<Head>> ||
                                   std::is_same_v<std::decay_t<Head>, std::nullptr_t> ||
                                   std::is_same_v<std::decay_t<Head>, std::shared_ptr<Impl>>) ||
                                 (sizeof...(Tail) > 0)>>
    explicit ModuleHolder(Head&& head, Tail&&... tail)
        : impl_(std::make_shared<Impl>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}
    /// Constructs Impl from its options written as a braced list, which the constructor above
    /// cannot deduce: AdaptiveAvgPool2d({1, 1}). For modules that declare `Options`.
    template <class I = Impl>
    explicit ModuleHolder(const typename I::Options& options)
        : impl_(std::make_shared<Impl>(options)) {}
    /// The same for options that are a list of sizes; an exact match for a braced list of ints,
    /// which would otherwise also read as a copy of a holder built from them.
    template <class I = Impl, class = std::enable_if_t<std::is_constructible_v<
                                  typename I::Options, std::initializer_list<int64_t>>>>
    explicit ModuleHolder(std::initializer_list<int64_t> sizes)
        : impl_(std::make_shared<Impl>(typename I::Options(sizes))) {}

    Impl* operator->() const { return get(); }
    Impl& operator*() const { return *get(); }
    const std::shared_ptr<Impl>& ptr() const {
        check();
        return impl_;
    }
    Impl* get() const {
        check();
        return impl_.get();
    }
    bool is_empty() const { return impl_ == nullptr; }
    explicit operator bool() const { return impl_ != nullptr; }
    /// A shared_ptr<Module> (or to any base) to the same module.
    template <class Base, class = std::enable_if_t<std::is_base_of_v<Base, Impl>>>
    operator std::shared_ptr<Base>() const {
        return ptr();
    }  // NOLINT

    /// impl->forward(args...) inside autograd::RecordScope(impl->label()) (and the module's call
    /// hooks, module_detail::CallHooks).
    template <class... Args>
    decltype(auto) operator()(Args&&... args) const {
        module_detail::CallScope call(*get());
        autograd::RecordScope scope(get()->label());
        return get()->forward(std::forward<Args>(args)...);
    }
    /// Forwards indexing to the module (Sequential: seq[0]).
    template <class Arg>
    decltype(auto) operator[](Arg&& arg) const {
        return (*get())[std::forward<Arg>(arg)];
    }

private:
    void check() const {
        if (!impl_)
            throw error("ModuleHolder: accessing an empty holder (constructed from nullptr)");
    }
    std::shared_ptr<Impl> impl_;
};

template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& m) {
    return os << *m;
}

}  // namespace tg::nn

/// Declares `Name` as a ModuleHolder of `Impl`, as TORCH_MODULE_IMPL.
#define TG_MODULE_IMPL(Name, ImplType)                        \
    class Name : public ::tg::nn::ModuleHolder<ImplType> {    \
    public:                                                   \
        using ::tg::nn::ModuleHolder<ImplType>::ModuleHolder; \
        using Impl = ImplType;                                \
    }

/// Declares `Name` as a ModuleHolder of `Name##Impl`, as TORCH_MODULE.
#define TG_MODULE(Name)                                         \
    class Name : public ::tg::nn::ModuleHolder<Name##Impl> {    \
    public:                                                     \
        using ::tg::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
        using Impl = Name##Impl;                                \
    }

#pragma GCC visibility pop
