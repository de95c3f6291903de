#pragma once
/// Dropout: zeroes elements with probability p in training mode and scales the rest by 1/(1-p);
/// the identity in eval mode. Dropout2d and Dropout3d zero whole feature maps (channels) instead;
/// AlphaDropout and FeatureAlphaDropout are SELU's (tg::alpha_dropout). Masks come from the
/// calling thread's default generator (tg::manual_seed), drawn as LibTorch draws them, or from
/// the Generator given in their options. With their F:: counterparts (F::dropout2d, dropout3d,
/// alpha_dropout, feature_alpha_dropout; F::dropout is in functional.hpp).
#include <optional>
#include <ostream>

#include "tapegrad/generator.hpp"
#include "tapegrad/nn/functional.hpp"
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
using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

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

/// Dropout3d: as Dropout2d for x [N,C,D,H,W] (or [C,D,H,W], unbatched).
class Dropout3dImpl : public Module {
public:
    using Options = DropoutOptions;
    /// Throws value_error unless 0 <= p <= 1.
    explicit Dropout3dImpl(const DropoutOptions& options = {});
    /// Throws shape_error unless x is 4-D or 5-D.
    Tensor forward(const Tensor& x) override;
    DropoutOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(Dropout3d);

/// AlphaDropout: tg::alpha_dropout(x, p, is_training()). As LibTorch's module it ignores the
/// inplace option (which it prints).
class AlphaDropoutImpl : public Module {
public:
    using Options = DropoutOptions;
    /// Throws value_error unless 0 <= p <= 1.
    explicit AlphaDropoutImpl(const DropoutOptions& options = {});
    Tensor forward(const Tensor& x) override;
    DropoutOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(AlphaDropout);

/// FeatureAlphaDropout: tg::feature_alpha_dropout(x, p, is_training()) (x at least 2-D); ignores
/// inplace, as LibTorch's.
class FeatureAlphaDropoutImpl : public Module {
public:
    using Options = DropoutOptions;
    /// Throws value_error unless 0 <= p <= 1.
    explicit FeatureAlphaDropoutImpl(const DropoutOptions& options = {});
    Tensor forward(const Tensor& x) override;
    DropoutOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(FeatureAlphaDropout);

namespace functional {
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;
/// LibTorch's AlphaDropoutFuncOptions: p (0.5), training (false), inplace (false).
struct AlphaDropoutFuncOptions {
    TG_ARG(double, p) = 0.5;
    TG_ARG(bool, training) = false;
    TG_ARG(bool, inplace) = false;
};
/// LibTorch's FeatureAlphaDropoutFuncOptions: p (0.5), training (false), inplace (false).
struct FeatureAlphaDropoutFuncOptions {
    TG_ARG(double, p) = 0.5;
    TG_ARG(bool, training) = false;
    TG_ARG(bool, inplace) = false;
};
/// tg::feature_dropout of x [N,C,H,W] or [C,H,W] (shape_error otherwise); with inplace, written
/// into x, which is returned.
Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& options = {});
/// As dropout2d for x [N,C,D,H,W] or [C,D,H,W].
Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& options = {});
/// tg::alpha_dropout (not in training unless options say so, as LibTorch's defaults).
Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& options = {});
Tensor feature_alpha_dropout(Tensor input, const FeatureAlphaDropoutFuncOptions& options = {});
}  // namespace functional

}  // namespace tg::nn

#pragma GCC visibility pop
