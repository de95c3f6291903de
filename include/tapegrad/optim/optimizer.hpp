#pragma once
/// tg::optim::Optimizer: parameter groups with their own options, per-parameter state, step()
/// and zero_grad(), as torch::optim::Optimizer.
///
///     tg::optim::SGD opt(model->parameters(), tg::optim::SGDOptions(0.1).momentum(0.9));
///     // or with groups: each OptimizerParamGroup may carry its own options (e.g. its own lr)
///     tg::optim::SGD opt2({tg::optim::OptimizerParamGroup(body, tg::optim::SGDOptions(0.01)),
///                          tg::optim::OptimizerParamGroup(head)},      // uses the defaults
///                         tg::optim::SGDOptions(0.1));
///
/// Note [Optimizer updates are tensor ops]: every update is written with in-place tensor ops
/// (mul_, add_, copy_, ...) and, where no in-place op exists, an out-of-place op whose result
/// is consumed at once, all under NoGradGuard. Nothing loops over elements on the host, so the
/// updates run on whatever device the parameters live on.
///
/// Note [Step count on host]: the per-parameter step count is a host int64 in the state (not a
/// tensor). The bias corrections of Adam are scalars computed from it on the host, so an update
/// never needs a device-to-host copy. It is saved and loaded with the rest of the state.
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tapegrad/arg.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::optim {

/// Options of one parameter group (SGDOptions, AdamOptions, ...). Every optimizer has an lr.
class OptimizerOptions {
public:
    virtual ~OptimizerOptions() = default;
    virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
    virtual double get_lr() const = 0;
    virtual void set_lr(double lr) = 0;
    /// Throws tg::value_error, naming `optimizer` and the option, if an option is outside its
    /// domain (here: an lr that is negative, infinite or NaN). The one check of options: the
    /// optimizers call it on every group when constructed and at every step(), and tg::load on
    /// every lr it reads. Options types with more fields extend it (calling this one).
    virtual void validate(const std::string& optimizer) const;
};

/// CRTP helper: clone() for an options type.
template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
public:
    std::unique_ptr<OptimizerOptions> clone() const override {
        return std::make_unique<Derived>(static_cast<const Derived&>(*this));
    }
};

/// A group of parameters and (optionally) its own options; without options it takes the
/// optimizer's defaults when added.
class OptimizerParamGroup {
public:
    OptimizerParamGroup(std::vector<Tensor> params);  // NOLINT: implicit, as in LibTorch
    OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options);
    /// With a copy of `options` (any options type, e.g. SGDOptions(0.01)).
    template <class Options, class = std::enable_if_t<std::is_base_of_v<OptimizerOptions, Options>>>
    OptimizerParamGroup(std::vector<Tensor> params, const Options& options)
        : OptimizerParamGroup(std::move(params), options.clone()) {}
    OptimizerParamGroup(const OptimizerParamGroup& other);
    OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
    OptimizerParamGroup(OptimizerParamGroup&&) = default;
    OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

    std::vector<Tensor>& params() { return params_; }
    const std::vector<Tensor>& params() const { return params_; }
    bool has_options() const { return options_ != nullptr; }
    /// This group's options; throws tg::error if it has none yet.
    OptimizerOptions& options();
    const OptimizerOptions& options() const;
    void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }

private:
    std::vector<Tensor> params_;
    std::unique_ptr<OptimizerOptions> options_;
};

/// Per-parameter state (momentum buffers, moment estimates) and its step count.
class OptimizerParamState {
public:
    virtual ~OptimizerParamState() = default;
    virtual std::unique_ptr<OptimizerParamState> clone() const = 0;
    /// The state's tensors by name, for serialization; entries may be undefined (not allocated).
    virtual std::vector<std::pair<std::string, Tensor*>> tensors() = 0;
    /// Steps taken with this parameter (Note [Step count on host]).
    int64_t step() const { return step_; }
    /// Sets the step count; throws tg::value_error outside [0, kMaxStep], so that counting one
    /// more step never overflows and a bias correction never divides by 1 - β⁰ = 0.
    void step(int64_t s);
    /// 2⁵³: every count up to it converts to double exactly.
    static constexpr int64_t kMaxStep = int64_t(1) << 53;
    /// Throws tg::value_error if a state tensor holds a value the optimizer can never produce
    /// (Adam: a negative second moment), which would turn the parameter into NaN at the next
    /// step; tg::load checks every state it reads with it. The default checks nothing.
    virtual void validate() const {}

private:
    int64_t step_ = 0;
};

class Optimizer {
public:
    using LossClosure = std::function<Tensor()>;

    /// Groups without options get a copy of `defaults`.
    Optimizer(std::vector<OptimizerParamGroup> param_groups,
              std::unique_ptr<OptimizerOptions> defaults);
    virtual ~Optimizer();
    Optimizer(const Optimizer&) = delete;
    Optimizer& operator=(const Optimizer&) = delete;

    /// One update of every parameter that has a gradient (parameters without one are skipped).
    /// If given, closure() is called first (with grad mode on) and its loss returned.
    virtual Tensor step(LossClosure closure = nullptr) = 0;
    /// Clears the gradients of all parameters: to none (default), or to zeros in place.
    void zero_grad(bool set_to_none = true);
    /// Adds a group; throws value_error if a parameter is undefined, not a leaf or already in a
    /// group, dtype_error if it is not floating-point.
    void add_param_group(const OptimizerParamGroup& group);

    std::vector<OptimizerParamGroup>& param_groups() { return param_groups_; }
    const std::vector<OptimizerParamGroup>& param_groups() const { return param_groups_; }
    /// Every parameter, group by group: the order serialization indexes state by.
    std::vector<Tensor> parameters() const;
    OptimizerOptions& defaults() { return *defaults_; }
    const OptimizerOptions& defaults() const { return *defaults_; }

    /// State per parameter, keyed by the parameter's TensorImpl (absent before its first step).
    std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>>& state() {
        return state_;
    }
    const std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>>& state()
        const {
        return state_;
    }
    /// "SGD", "Adam", "AdamW": recorded in saved files and checked when loading.
    virtual std::string type_name() const = 0;
    /// A fresh (step 0, nothing allocated) state of this optimizer's kind, used by load().
    virtual std::unique_ptr<OptimizerParamState> make_state() const = 0;

protected:
    /// The state of p, created with make_state() on first use.
    OptimizerParamState& state_of(const Tensor& p);
    /// Group g's options as the optimizer's options type; throws value_error if they are another
    /// optimizer's options (e.g. AdamOptions in an SGD group).
    template <class Options>
    Options& options_of(OptimizerParamGroup& g) const {
        auto* o = dynamic_cast<Options*>(&g.options());
        if (!o)
            throw_wrong_options(type_name());
        return *o;
    }
    [[noreturn]] static void throw_wrong_options(const std::string& optimizer);

    std::vector<OptimizerParamGroup> param_groups_;
    std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>> state_;
    std::unique_ptr<OptimizerOptions> defaults_;
};

}  // namespace tg::optim

#pragma GCC visibility pop
