#pragma once
/// Dropout: zeroes elements with probability p in training mode and scales the rest by 1/(1-p);
/// the identity in eval mode. Dropout2d zeroes whole feature maps (channels) instead. Masks come
/// from the calling thread's default generator (tg::manual_seed), or from the Generator given in
/// its options.
#include <optional>
#include <ostream>

#include "tapegrad/generator.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// Dropout's options, as LibTorch's DropoutOptions, plus the Generator its masks come from.
class DropoutOptions {
public:
    DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit, as in LibTorch
    DropoutOptions& p(double p) {
        p_ = p;
        return *this;
    }
    double p() const { return p_; }
    /// Writes the result into the input and returns it (LibTorch's inplace; the input must not
    /// be a leaf that requires grad).
    DropoutOptions& inplace(bool v) {
        inplace_ = v;
        return *this;
    }
    bool inplace() const { return inplace_; }
    /// Masks from g (shared: copies of a Generator share its state) instead of the thread's
    /// default generator.
    DropoutOptions& generator(const Generator& g) {
        generator_ = g;
        return *this;
    }
    const std::optional<Generator>& generator() const { return generator_; }

private:
    double p_;
    bool inplace_ = false;
    std::optional<Generator> generator_;
};
using Dropout2dOptions = DropoutOptions;

class DropoutImpl : public Module {
public:
    using Options = DropoutOptions;
    /// Throws value_error unless 0 <= p < 1.
    explicit DropoutImpl(const DropoutOptions& options = {});
    /// tg::dropout(x, p, is_training()), with the options' generator if they have one.
    Tensor forward(const Tensor& x) override;
    double p() const { return options.p(); }
    DropoutOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(Dropout);

/// Dropout2d: zeroes each channel x[n][c] of x [N,C,H,W] (or [C,H,W], unbatched) whole with
/// probability p in training mode (tg::feature_dropout), scaling the rest by 1/(1-p).
class Dropout2dImpl : public Module {
public:
    using Options = DropoutOptions;
    /// Throws value_error unless 0 <= p < 1.
    explicit Dropout2dImpl(const DropoutOptions& options = {});
    /// Throws shape_error unless x is 3-D or 4-D.
    Tensor forward(const Tensor& x) override;
    double p() const { return options.p(); }
    DropoutOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(Dropout2d);

}  // namespace tg::nn

#pragma GCC visibility pop
