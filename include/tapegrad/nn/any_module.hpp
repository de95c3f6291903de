#pragma once
/// AnyModule, a type-erased module as LibTorch's torch::nn::AnyModule for modules whose forward
/// takes tensors and returns one (what TransformerEncoderOptions::norm and
/// TransformerOptions::custom_encoder hold), and clone_module, a deep copy as LibTorch's
/// Cloneable::clone for modules built from `options`.
///     tg::nn::AnyModule norm(tg::nn::LayerNorm(tg::nn::LayerNormOptions({512})));
///     tg::Tensor y = norm.forward(x);
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

namespace detail {
/// Draws from the default generator what LibTorch's clone() of each child of `fresh` (a module
/// just built from options) draws: each child is built again from its options, and so are its
/// children, recursively (Note [Cloning draws]).
void draw_as_child_clones(const Module& fresh);
/// Copies every parameter's and buffer's values (and requires_grad) from `from` into `to`, a
/// module of the same structure; value_error naming the first name that differs.
void copy_state(const Module& from, Module& to);

template <class Impl, class = void>
struct HasOptions : std::false_type {};
template <class Impl>
struct HasOptions<Impl, std::void_t<decltype(Impl(std::declval<const Impl&>().options))>>
    : std::true_type {};

template <size_t>
using TensorArg = const Tensor&;
/// Whether m.forward takes I... tensors (default arguments included) and returns a Tensor.
template <class Impl, class Seq, class = void>
struct TakesTensors : std::false_type {};
template <class Impl, size_t... I>
struct TakesTensors<
    Impl, std::index_sequence<I...>,
    std::enable_if_t<std::is_convertible_v<
        decltype(std::declval<Impl&>().forward(std::declval<TensorArg<I>>()...)), Tensor>>>
    : std::true_type {};
}  // namespace detail

/// A deep copy of m: a module built from m.options holding copies of m's parameters and
/// buffers, in m's training mode. It draws from the default generator what LibTorch's clone()
/// draws (values that the copy then overwrites), so that the generator ends where LibTorch's
/// does: Note [Cloning draws] in src/nn/any_module.cpp.
template <class Impl>
std::shared_ptr<Impl> clone_module(const Impl& m) {
    static_assert(detail::HasOptions<Impl>::value,
                  "clone_module: the module must be constructible from its `options` member");
    auto copy = std::make_shared<Impl>(m.options);
    detail::draw_as_child_clones(*copy);
    detail::copy_state(m, *copy);
    copy->train(m.is_training());
    return copy;
}

class AnyModule {
public:
    /// An empty AnyModule (is_empty()).
    AnyModule() = default;
    /// Holds the module a holder points to (shared, as LibTorch's AnyModule).
    template <class Impl>
    AnyModule(const ModuleHolder<Impl>& holder) : AnyModule(holder.ptr()) {}  // NOLINT
    template <class Impl, class = std::enable_if_t<std::is_base_of_v<Module, Impl>>>
    explicit AnyModule(std::shared_ptr<Impl> m) : module_(m) {
        if (!m)
            throw value_error("AnyModule: null module");
        call_ = [raw = m.get()](const std::vector<Tensor>& a) { return call(*raw, a); };
        if constexpr (detail::HasOptions<Impl>::value)
            clone_ = [raw = m.get()]() -> std::shared_ptr<Module> { return clone_module(*raw); };
        rebind_ = [](const std::shared_ptr<Module>& p, AnyModule& out) {
            out = AnyModule(std::static_pointer_cast<Impl>(p));
        };
    }

    bool is_empty() const noexcept { return module_ == nullptr; }
    /// The module (value_error when empty).
    const std::shared_ptr<Module>& ptr() const {
        check("ptr");
        return module_;
    }
    /// The module as T (a module type or its holder's Impl); value_error if it is not one.
    template <class T>
    T& get() const {
        auto* m = ptr()->template as<T>();
        if (!m)
            throw value_error("AnyModule::get: the module is a " + module_->name() +
                              ", not the requested type");
        return *m;
    }
    /// forward(tensors...) of the module, inside its record scope; value_error when its forward
    /// takes no such number of tensors (or it is empty).
    template <class... Tensors>
    Tensor forward(const Tensors&... args) const {
        check("forward");
        autograd::RecordScope scope(module_->label());
        return call_(std::vector<Tensor>{Tensor(args)...});
    }
    /// A deep copy (clone_module of the module); value_error for a module without options.
    AnyModule clone() const;

private:
    template <class Impl, size_t... I>
    static Tensor call_with(Impl& m, const std::vector<Tensor>& a, std::index_sequence<I...>) {
        return m.forward(a[I]...);
    }
    template <class Impl, size_t N = 0>
    static Tensor call(Impl& m, const std::vector<Tensor>& a) {
        if constexpr (N > 8) {
            throw value_error("AnyModule: the forward of " + m.name() + " takes no " +
                              std::to_string(a.size()) + " tensors");
        } else {
            if constexpr (detail::TakesTensors<Impl, std::make_index_sequence<N>>::value)
                if (a.size() == N)
                    return call_with(m, a, std::make_index_sequence<N>());
            return call<Impl, N + 1>(m, a);
        }
    }
    void check(const char* what) const {
        if (!module_)
            throw value_error(std::string("AnyModule::") + what + ": the AnyModule is empty");
    }

    std::shared_ptr<Module> module_;
    std::function<Tensor(const std::vector<Tensor>&)> call_;
    std::function<std::shared_ptr<Module>()> clone_;
    std::function<void(const std::shared_ptr<Module>&, AnyModule&)> rebind_;
};

inline AnyModule AnyModule::clone() const {
    check("clone");
    if (!clone_)
        throw value_error("AnyModule::clone: " + module_->name() +
                          " is not built from options, so it cannot be cloned");
    AnyModule out;
    rebind_(clone_(), out);
    return out;
}

}  // namespace tg::nn

#pragma GCC visibility pop
