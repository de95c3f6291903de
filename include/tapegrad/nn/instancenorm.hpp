#pragma once
/// InstanceNorm1d, InstanceNorm2d and InstanceNorm3d with LibTorch's options (no affine
/// parameters and no running statistics by default):
///     tg::nn::InstanceNorm2d(64), tg::nn::InstanceNorm1d(tg::nn::InstanceNormOptions(8)
///         .affine(true).track_running_stats(true))
/// Each sample's channels are normalised with their own statistics (tg::instance_norm); with
/// track_running_stats the running statistics (buffers, as BatchNorm's) are updated in training
/// and used in eval. An input with one dim less than a batch (InstanceNorm2d of [C,H,W]) is one
/// sample, as LibTorch's.
#include <cstdint>
#include <ostream>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/module.hpp"
#include "tapegrad/nn/normalization.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// LibTorch's InstanceNormOptions: num_features, eps (1e-5), momentum (0.1), affine (false),
/// track_running_stats (false).
struct InstanceNormOptions {
    InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
    TG_ARG(int64_t, num_features);
    TG_ARG(double, eps) = 1e-5;
    TG_ARG(double, momentum) = 0.1;
    TG_ARG(bool, affine) = false;
    TG_ARG(bool, track_running_stats) = false;
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

/// What the three share; they differ in the input dims they accept.
class InstanceNormBase : public NormBase {
public:
    using Options = InstanceNormOptions;
    /// tg::instance_norm with the batch's statistics in training or without
    /// track_running_stats, else the running ones. shape_error for an input of the wrong dims
    /// or channel count.
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;
    InstanceNormOptions options;

protected:
    InstanceNormBase(const char* name, const InstanceNormOptions& options, int64_t dims);

private:
    int64_t dims_;  // spatial dims: 1, 2 or 3
};

/// Instance normalisation of [N,C,L] (or one sample [C,L]) inputs.
class InstanceNorm1dImpl : public InstanceNormBase {
public:
    explicit InstanceNorm1dImpl(const InstanceNormOptions& o)
        : InstanceNormBase("InstanceNorm1d", o, 1) {}
};
TG_MODULE(InstanceNorm1d);

/// Instance normalisation of [N,C,H,W] (or [C,H,W]) inputs.
class InstanceNorm2dImpl : public InstanceNormBase {
public:
    explicit InstanceNorm2dImpl(const InstanceNormOptions& o)
        : InstanceNormBase("InstanceNorm2d", o, 2) {}
};
TG_MODULE(InstanceNorm2d);

/// Instance normalisation of [N,C,D,H,W] (or [C,D,H,W]) inputs.
class InstanceNorm3dImpl : public InstanceNormBase {
public:
    explicit InstanceNorm3dImpl(const InstanceNormOptions& o)
        : InstanceNormBase("InstanceNorm3d", o, 3) {}
};
TG_MODULE(InstanceNorm3d);

/// LibTorch's LocalResponseNormOptions: size, alpha (1e-4), beta (0.75), k (1).
struct LocalResponseNormOptions {
    LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(int64_t, size);
    TG_ARG(double, alpha) = 1e-4;
    TG_ARG(double, beta) = 0.75;
    TG_ARG(double, k) = 1.0;
};
/// tg::local_response_norm over the channels of [N,C,*] inputs (3 or more dims).
class LocalResponseNormImpl : public Module {
public:
    using Options = LocalResponseNormOptions;
    explicit LocalResponseNormImpl(const LocalResponseNormOptions& o);
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;
    LocalResponseNormOptions options;
};
TG_MODULE(LocalResponseNorm);

/// LibTorch's CrossMapLRN2dOptions: size, alpha (1e-4), beta (0.75), k (1, an integer there).
struct CrossMapLRN2dOptions {
    CrossMapLRN2dOptions(int64_t size) : size_(size) {}  // NOLINT: implicit, as LibTorch's
    TG_ARG(int64_t, size);
    TG_ARG(double, alpha) = 1e-4;
    TG_ARG(double, beta) = 0.75;
    TG_ARG(int64_t, k) = 1;
};
/// tg::cross_map_lrn2d of [N,C,H,W] inputs: LibTorch's legacy algorithm, forward and backward
/// (tapegrad/norm_ops.hpp says how it differs from LocalResponseNorm).
class CrossMapLRN2dImpl : public Module {
public:
    using Options = CrossMapLRN2dOptions;
    explicit CrossMapLRN2dImpl(const CrossMapLRN2dOptions& o);
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;
    CrossMapLRN2dOptions options;
};
TG_MODULE(CrossMapLRN2d);

}  // namespace tg::nn

#pragma GCC visibility pop
