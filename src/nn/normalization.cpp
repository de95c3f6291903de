#include "tapegrad/nn/normalization.hpp"

#include <algorithm>
#include <string>

#include "checkpoint/recomputing.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

NormBase::NormBase(const char* name, int64_t c, double eps, bool affine, bool track_running_stats)
    : Module(name) {
    if (c <= 0)
        throw shape_error(std::string(name) + "(" + std::to_string(c) +
                          "): num_features must be positive");
    if (!(eps > 0))
        throw value_error(std::string(name) + ": eps must be positive");
    if (affine) {
        weight = register_parameter("weight", empty({c}));
        bias = register_parameter("bias", empty({c}));
    }
    if (track_running_stats) {
        running_mean = register_buffer("running_mean", empty({c}));
        running_var = register_buffer("running_var", empty({c}));
        num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
    }
    reset_parameters();
}

void NormBase::reset_running_stats() {
    if (!running_mean.defined())
        return;
    NoGradGuard guard;
    running_mean.zero_();
    running_var.fill_(1);
    num_batches_tracked.zero_();
}

void NormBase::reset_parameters() {
    reset_running_stats();
    if (!weight.defined())
        return;
    NoGradGuard guard;
    weight.fill_(1);
    bias.zero_();
}

BatchNormBase::BatchNormBase(const char* name, const BatchNormOptions& opts, int64_t min_dim,
                             int64_t max_dim)
    : NormBase(name, opts.num_features(), opts.eps(), opts.affine(), opts.track_running_stats()),
      options(opts),
      min_dim_(min_dim),
      max_dim_(max_dim) {
    if (options.momentum() && !(*options.momentum() >= 0 && *options.momentum() <= 1))
        throw value_error(std::string(name) + ": momentum must be in [0, 1]");
}

Tensor BatchNormBase::forward(const Tensor& x) {
    if (!x.defined() || x.dim() < min_dim_ || x.dim() > max_dim_)
        throw shape_error(label() + ": expected a " +
                          (min_dim_ == max_dim_ ? std::to_string(min_dim_) + "-D"
                                                : std::to_string(min_dim_) + "-D or " +
                                                      std::to_string(max_dim_) + "-D") +
                          " input, got " + (x.defined() ? shape_str(x.sizes()) : "undefined"));
    if (x.size(1) != options.num_features())
        throw shape_error(label() + "(" + std::to_string(options.num_features()) + "): input " +
                          shape_str(x.sizes()) + " has " + std::to_string(x.size(1)) +
                          " channels, expected " + std::to_string(options.num_features()));
    const bool track = options.track_running_stats();
    double factor = options.momentum().value_or(0.0);
    if (is_training() && track) {
        // counted once per forward, as the statistics (Note [Side effects of a recomputation])
        if (!checkpointing::recomputing() && x.numel() > 0) {
            NoGradGuard guard;
            num_batches_tracked.add_(1);
        }
        if (!options.momentum())  // the cumulative average reads the count on the host
            factor = 1.0 / double(std::max<int64_t>(num_batches_tracked.item<int64_t>(), 1));
    }
    const bool batch_stats = is_training() || !track;
    return batch_norm(x, weight, bias, track ? running_mean : Tensor(),
                      track ? running_var : Tensor(), batch_stats, factor, options.eps(), false);
}

void BatchNormBase::pretty_print(std::ostream& os) const {
    os << name() << "(" << options.num_features() << ", eps=" << options.eps() << ", momentum=";
    if (options.momentum())
        os << *options.momentum();
    else
        os << "None";
    os << ", affine=" << (options.affine() ? "true" : "false")
       << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false") << ")";
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& opts) : Module("GroupNorm"), options(opts) {
    const int64_t g = options.num_groups(), c = options.num_channels();
    if (g <= 0 || c <= 0 || c % g != 0)
        throw value_error("GroupNorm(" + std::to_string(g) + ", " + std::to_string(c) +
                          "): num_groups must be positive and divide num_channels");
    if (!(options.eps() > 0))
        throw value_error("GroupNorm: eps must be positive");
    if (options.affine()) {
        weight = register_parameter("weight", empty({c}));
        bias = register_parameter("bias", empty({c}));
    }
    reset_parameters();
}

void GroupNormImpl::reset_parameters() {
    if (!options.affine())
        return;
    NoGradGuard guard;
    weight.fill_(1);
    bias.zero_();
}

Tensor GroupNormImpl::forward(const Tensor& x) {
    if (x.defined() && x.dim() >= 2 && x.size(1) != options.num_channels())
        throw shape_error(label() + ": input " + shape_str(x.sizes()) + " has " +
                          std::to_string(x.size(1)) + " channels, expected " +
                          std::to_string(options.num_channels()));
    return group_norm(x, options.num_groups(), weight, bias, options.eps());
}

void GroupNormImpl::pretty_print(std::ostream& os) const {
    os << "GroupNorm(" << options.num_groups() << ", " << options.num_channels()
       << ", eps=" << options.eps() << ", affine=" << (options.affine() ? "true" : "false") << ")";
}

}  // namespace tg::nn
