#pragma once
/// Custom autograd functions, as LibTorch writes them (torch::autograd::Function):
///
///     struct MulConst : tg::autograd::Function<MulConst> {
///         static tg::Tensor forward(tg::autograd::AutogradContext* ctx, tg::Tensor x, double c) {
///             ctx->saved_data["c"] = c;
///             ctx->save_for_backward({x});
///             return x * c;
///         }
///         static tg::autograd::tensor_list backward(tg::autograd::AutogradContext* ctx,
///                                                   tg::autograd::tensor_list dy) {
///             const double c = ctx->saved_data["c"].toDouble();
///             return {dy[0] * c, tg::Tensor()};  // one per forward argument; none for c
///         }
///     };
///     tg::Tensor y = MulConst::apply(x, 2.0);
///
/// apply() runs forward with grad mode off, then records one node (named after T) whose backward
/// calls T::backward. forward's arguments are Tensors, tensor_lists (each element an input) and
/// anything else (passed through, no gradient); it returns a Tensor or a tensor_list. backward
/// gets one gradient per output (zeros for an output that got none, unless
/// set_materialize_grads(false): then undefined) and returns one gradient per forward argument
/// (per element for a tensor_list argument; an undefined Tensor for the others, or for an input
/// that needs none). A gradient whose shape differs from its input's is summed down to it when
/// it broadcasts, else backward() throws autograd_error naming the function.
///
/// It works with the rest of the engine: with create_graph, a backward written with tg ops
/// records (double backward); hooks and anomaly mode see the node like any other; its saved
/// tensors are version-checked and go through the saved-tensor hooks, so checkpointing keeps or
/// recomputes them like any op's; forward may run on any device.
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "tapegrad/autograd.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::autograd {

using tensor_list = std::vector<Tensor>;
using variable_list = std::vector<Tensor>;

/// A value kept in AutogradContext::saved_data (LibTorch's IValue, for the types people keep
/// there): a double, an int64, a bool, a string, a list of int64, or a Tensor.
class IValue {
public:
    IValue() = default;
    IValue(double v) : v_(v) {}
    IValue(float v) : v_(double(v)) {}
    IValue(int64_t v) : v_(v) {}
    IValue(int v) : v_(int64_t(v)) {}
    IValue(bool v) : v_(v) {}
    IValue(std::string v) : v_(std::move(v)) {}
    IValue(const char* v) : v_(std::string(v)) {}
    IValue(std::vector<int64_t> v) : v_(std::move(v)) {}
    IValue(Tensor v) : v_(std::move(v)) {}
    bool isNone() const { return v_.index() == 0; }
    /// Each throws tg::value_error naming what it holds when it holds another type (toDouble
    /// also takes an int64).
    double toDouble() const;
    int64_t toInt() const;
    bool toBool() const;
    const std::string& toStringRef() const;
    std::vector<int64_t> toIntVector() const;
    Tensor toTensor() const;

private:
    std::variant<std::monostate, double, int64_t, bool, std::string, std::vector<int64_t>, Tensor>
        v_;
};

namespace function_detail {
struct CustomState;  // src/autograd/custom_function.cpp
}

/// What forward leaves for backward (LibTorch's AutogradContext).
class AutogradContext {
public:
    AutogradContext();
    ~AutogradContext();
    AutogradContext(const AutogradContext&) = delete;
    AutogradContext& operator=(const AutogradContext&) = delete;

    /// Tensors backward needs (inputs, outputs or others): kept as an op keeps them, so an
    /// in-place change before backward throws there, and checkpointing can drop and recompute
    /// them. Call in forward.
    void save_for_backward(tensor_list to_save);
    /// The tensors save_for_backward kept, in its order. Call in backward.
    tensor_list get_saved_variables() const;
    /// Inputs that forward modified in place (and returns as outputs).
    void mark_dirty(const tensor_list& inputs);
    /// Outputs that get no gradient (their gradient in backward is zeros, or undefined).
    void mark_non_differentiable(const tensor_list& outputs);
    /// Whether backward gets zeros (true, the default) or undefined Tensors for outputs that got
    /// no gradient.
    void set_materialize_grads(bool value);
    /// Whether the i-th tensor input (counting Tensors and tensor_list elements) needs a
    /// gradient in this backward pass (in forward: whether it requires grad).
    bool needs_input_grad(size_t i) const;

    /// Anything else backward needs: doubles, ints, flags, shapes (not tensors: those go
    /// through save_for_backward).
    std::unordered_map<std::string, IValue> saved_data;

    function_detail::CustomState& state() { return *state_; }

private:
    std::unique_ptr<function_detail::CustomState> state_;
};

namespace function_detail {

using CustomBackward = std::function<tensor_list(AutogradContext*, tensor_list)>;

/// Under a MemoryBudget (tapegrad/memory_budget.hpp): runs forward again on these tensor inputs
/// (in collect()'s order) with a fresh context, and returns its outputs (Note [Replaying a custom
/// forward] in src/autograd/custom_function.cpp).
using CustomReplay = std::function<tensor_list(const tensor_list& inputs, AutogradContext* ctx)>;

/// Called by Function<T>::apply after forward: marks the context's needs, and when grad mode is
/// on and an input requires grad records one node for the outputs (which it may replace by
/// aliases: an output that is an unmarked input). slots[p] is the tensor input of flattened
/// forward argument p, or -1 for a non-tensor argument. With a replay (a budget is active), the
/// outputs and the tensors forward saved can be evicted and made again by it.
void record_custom(const char* type_name, const std::shared_ptr<AutogradContext>& ctx,
                   const tensor_list& inputs, const std::vector<int>& slots, tensor_list& outputs,
                   CustomBackward backward, CustomReplay replay = {});
/// Sets the context's needs_input_grad from the inputs (before forward).
void begin_custom(AutogradContext& ctx, const tensor_list& inputs);
/// Whether a MemoryBudget is active on this thread (apply then makes a replay).
bool replay_wanted();
/// While the result is alive (forward), notes the random state forward starts from and the
/// inputs' versions, for the replay.
std::shared_ptr<void> begin_replay(AutogradContext& ctx, const tensor_list& inputs);

/// A replay keeps forward's arguments with their tensors blanked (so that it holds no buffer),
/// and puts the recomputed inputs back in their places.
template <class A>
void blank(A& a) {
    if constexpr (std::is_same_v<A, Tensor>)
        a = Tensor();
    else if constexpr (std::is_same_v<A, tensor_list>)
        for (Tensor& t : a)
            t = Tensor();
}
template <class A>
void fill(A& a, const tensor_list& xs, size_t& k) {
    if constexpr (std::is_same_v<A, Tensor>)
        a = xs.at(k++);
    else if constexpr (std::is_same_v<A, tensor_list>)
        for (Tensor& t : a)
            t = xs.at(k++);
}
template <class T, class Kept, class = void>
struct replayable : std::false_type {};
template <class T, class... A>
struct replayable<
    T, std::tuple<A...>,
    std::void_t<decltype(T::forward(std::declval<AutogradContext*>(), std::declval<A&&>()...))>>
    : std::true_type {};

/// forward as a replay, or none (pinned outputs) when an argument cannot be copied or forward
/// does not take its arguments as values.
template <class T, class... Args>
CustomReplay make_replay(const Args&... args) {
    using Kept = std::tuple<std::decay_t<Args>...>;
    if constexpr (!(std::is_copy_constructible_v<std::decay_t<Args>> && ...) ||
                  !replayable<T, Kept>::value) {
        return {};
    } else {
        auto kept = std::make_shared<Kept>(args...);
        std::apply([](auto&... a) { (blank(a), ...); }, *kept);
        return [kept](const tensor_list& xs, AutogradContext* ctx) {
            Kept a = *kept;
            size_t k = 0;
            std::apply([&](auto&... v) { (fill(v, xs, k), ...); }, a);
            return std::apply(
                [ctx](auto&... v) -> tensor_list {
                    auto out = T::forward(ctx, std::move(v)...);
                    if constexpr (std::is_same_v<decltype(out), Tensor>)
                        return {std::move(out)};
                    else
                        return out;
                },
                a);
        };
    }
}

template <class A>
void collect(const A& a, tensor_list& inputs, std::vector<int>& slots) {
    using D = std::decay_t<A>;
    if constexpr (std::is_same_v<D, Tensor>) {
        slots.push_back(int(inputs.size()));
        inputs.push_back(a);
    } else if constexpr (std::is_same_v<D, tensor_list>) {
        for (const Tensor& t : a) {
            slots.push_back(int(inputs.size()));
            inputs.push_back(t);
        }
    } else {
        slots.push_back(-1);
    }
}

}  // namespace function_detail

/// The base of a custom function T (CRTP): T defines static forward(AutogradContext*, ...) and
/// static backward(AutogradContext*, tensor_list); T::apply(args...) runs it.
template <class T>
struct Function {
    template <class... Args>
    static auto apply(Args&&... args) {
        auto ctx = std::make_shared<AutogradContext>();
        tensor_list inputs;
        std::vector<int> slots;
        (function_detail::collect(args, inputs, slots), ...);
        function_detail::begin_custom(*ctx, inputs);
        using Out = decltype(T::forward(ctx.get(), std::forward<Args>(args)...));
        static_assert(std::is_same_v<Out, Tensor> || std::is_same_v<Out, tensor_list>,
                      "forward must return a tg::Tensor or a tg::autograd::tensor_list");
        function_detail::CustomReplay replay;  // before forward, which may move the arguments
        std::shared_ptr<void> replaying;
        if (function_detail::replay_wanted()) {
            replay = function_detail::make_replay<T>(args...);
            replaying = function_detail::begin_replay(*ctx, inputs);
        }
        tensor_list outs;
        {
            NoGradGuard no_grad;
            if constexpr (std::is_same_v<Out, Tensor>)
                outs.push_back(T::forward(ctx.get(), std::forward<Args>(args)...));
            else
                outs = T::forward(ctx.get(), std::forward<Args>(args)...);
        }
        replaying.reset();
        function_detail::record_custom(
            typeid(T).name(), ctx, inputs, slots, outs,
            [](AutogradContext* c, tensor_list g) { return T::backward(c, std::move(g)); },
            std::move(replay));
        if constexpr (std::is_same_v<Out, Tensor>)
            return outs[0];
        else
            return outs;
    }
};

}  // namespace tg::autograd

#pragma GCC visibility pop
