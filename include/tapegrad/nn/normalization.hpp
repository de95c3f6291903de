#pragma once
/// BatchNorm1d, BatchNorm2d, BatchNorm3d and GroupNorm with LibTorch's options:
///     tg::nn::BatchNorm2d(32), tg::nn::BatchNorm1d(tg::nn::BatchNormOptions(64).momentum(0.01)),
///     tg::nn::GroupNorm(tg::nn::GroupNormOptions(8, 32))
/// BatchNorm's running statistics are buffers (running_mean, running_var, num_batches_tracked):
/// they move with to(), are saved with tg::save, and a checkpoint's recomputation leaves them
/// as the first forward left them (Note [Side effects of a recomputation]).
#include <cstdint>
#include <optional>
#include <ostream>

#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// As LibTorch's BatchNormOptions. momentum nullopt: the running statistics are the cumulative
/// average of every batch seen (factor 1/num_batches_tracked).
class BatchNormOptions {
public:
    BatchNormOptions(int64_t num_features) : features_(num_features) {}  // NOLINT
    BatchNormOptions& eps(double v) { return eps_ = v, *this; }
    BatchNormOptions& momentum(std::optional<double> v) { return momentum_ = v, *this; }
    BatchNormOptions& affine(bool v) { return affine_ = v, *this; }
    BatchNormOptions& track_running_stats(bool v) { return track_ = v, *this; }
    int64_t num_features() const { return features_; }
    double eps() const { return eps_; }
    const std::optional<double>& momentum() const { return momentum_; }
    bool affine() const { return affine_; }
    bool track_running_stats() const { return track_; }

private:
    int64_t features_;
    double eps_ = 1e-5;
    std::optional<double> momentum_ = 0.1;
    bool affine_ = true, track_ = true;
};

/// LibTorch's names for the same options.
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;

/// What the batch and instance norms share, as LibTorch's NormImplBase: the affine parameters
/// and the running statistics, and their resets.
class NormBase : public Module {
public:
    /// Running mean 0, running variance 1, num_batches_tracked 0 (when tracking).
    void reset_running_stats();
    /// reset_running_stats(), weight 1 and bias 0 (when affine).
    void reset_parameters();

    Tensor weight, bias;                                    // [C], undefined unless affine
    Tensor running_mean, running_var, num_batches_tracked;  // undefined unless tracking

protected:
    /// Checks num_features and eps, registers weight and bias (affine) and the running
    /// statistics (track_running_stats) and resets them.
    NormBase(const char* name, int64_t num_features, double eps, bool affine,
             bool track_running_stats);
};

/// What BatchNorm1d, 2d and 3d share; they differ in the input dims they accept.
class BatchNormBase : public NormBase {
public:
    using Options = BatchNormOptions;
    /// tg::batch_norm: the batch's statistics in training (updating the running ones once per
    /// forward, counted in num_batches_tracked) or without track_running_stats, else the
    /// running ones. Throws shape_error for an input of the wrong dims or channel count.
    Tensor forward(const Tensor& x) override;
    BatchNormOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;

protected:
    BatchNormBase(const char* name, const BatchNormOptions& options, int64_t min_dim,
                  int64_t max_dim);

private:
    int64_t min_dim_, max_dim_;
};

/// Batch normalisation of [N,C] or [N,C,L] inputs.
class BatchNorm1dImpl : public BatchNormBase {
public:
    explicit BatchNorm1dImpl(const BatchNormOptions& o) : BatchNormBase("BatchNorm1d", o, 2, 3) {}
};
TG_MODULE(BatchNorm1d);

/// Batch normalisation of [N,C,H,W] inputs.
class BatchNorm2dImpl : public BatchNormBase {
public:
    explicit BatchNorm2dImpl(const BatchNormOptions& o) : BatchNormBase("BatchNorm2d", o, 4, 4) {}
};
TG_MODULE(BatchNorm2d);

/// Batch normalisation of [N,C,D,H,W] inputs.
class BatchNorm3dImpl : public BatchNormBase {
public:
    explicit BatchNorm3dImpl(const BatchNormOptions& o) : BatchNormBase("BatchNorm3d", o, 5, 5) {}
};
TG_MODULE(BatchNorm3d);

/// As LibTorch's GroupNormOptions.
class GroupNormOptions {
public:
    GroupNormOptions(int64_t num_groups, int64_t num_channels)
        : groups_(num_groups), channels_(num_channels) {}
    GroupNormOptions& eps(double v) { return eps_ = v, *this; }
    GroupNormOptions& affine(bool v) { return affine_ = v, *this; }
    int64_t num_groups() const { return groups_; }
    int64_t num_channels() const { return channels_; }
    double eps() const { return eps_; }
    bool affine() const { return affine_; }

private:
    int64_t groups_, channels_;
    double eps_ = 1e-5;
    bool affine_ = true;
};

/// Group normalisation of [N,C,*] inputs: the same in training and eval (no running state).
class GroupNormImpl : public Module {
public:
    using Options = GroupNormOptions;
    /// Throws value_error unless num_groups > 0 divides num_channels > 0.
    explicit GroupNormImpl(const GroupNormOptions& options);
    /// tg::group_norm with the options.
    Tensor forward(const Tensor& x) override;
    /// weight 1 and bias 0.
    void reset_parameters();
    GroupNormOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;

    Tensor weight, bias;  // [C], undefined unless affine
};
TG_MODULE(GroupNorm);

}  // namespace tg::nn

#pragma GCC visibility pop
