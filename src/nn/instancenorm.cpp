#include "tapegrad/nn/instancenorm.hpp"

#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

InstanceNormBase::InstanceNormBase(const char* name, const InstanceNormOptions& opts, int64_t dims)
    : NormBase(name, opts.num_features(), opts.eps(), opts.affine(), opts.track_running_stats()),
      options(opts),
      dims_(dims) {
    if (!(options.momentum() >= 0 && options.momentum() <= 1))
        throw value_error(std::string(name) + ": momentum must be in [0, 1]");
}

Tensor InstanceNormBase::forward(const Tensor& x) {
    if (!x.defined() || (x.dim() != dims_ + 1 && x.dim() != dims_ + 2))
        throw shape_error(label() + ": expected " + std::to_string(dims_ + 1) + "D or " +
                          std::to_string(dims_ + 2) + "D input, got " +
                          (x.defined() ? shape_str(x.sizes()) : "undefined"));
    const bool batched = x.dim() == dims_ + 2;
    const int64_t c = x.size(batched ? 1 : 0);
    // LibTorch checks the channels only where weight or running statistics are defined
    if (c != options.num_features() && (options.affine() || options.track_running_stats()))
        throw shape_error(label() + "(" + std::to_string(options.num_features()) + "): input " +
                          shape_str(x.sizes()) + " has " + std::to_string(c) +
                          " channels, expected " + std::to_string(options.num_features()));
    const Tensor in = batched ? x : x.unsqueeze(0);
    const bool track = options.track_running_stats();
    const Tensor y = instance_norm(in, weight, bias, running_mean, running_var,
                                   is_training() || !track, options.momentum(), options.eps());
    return batched ? y : y.squeeze(0);
}

void InstanceNormBase::pretty_print(std::ostream& os) const {
    os << name() << "(" << options.num_features() << ", eps=" << options.eps()
       << ", momentum=" << options.momentum()
       << ", affine=" << (options.affine() ? "true" : "false")
       << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false") << ")";
}

LocalResponseNormImpl::LocalResponseNormImpl(const LocalResponseNormOptions& o)
    : Module("LocalResponseNorm"), options(o) {
    if (o.size() < 1)
        throw value_error("LocalResponseNorm(" + std::to_string(o.size()) + "): size must be >= 1");
}
Tensor LocalResponseNormImpl::forward(const Tensor& x) {
    return local_response_norm(x, options.size(), options.alpha(), options.beta(), options.k());
}
void LocalResponseNormImpl::pretty_print(std::ostream& os) const {
    os << "LocalResponseNorm(" << options.size() << ", alpha=" << options.alpha()
       << ", beta=" << options.beta() << ", k=" << options.k() << ")";
}

CrossMapLRN2dImpl::CrossMapLRN2dImpl(const CrossMapLRN2dOptions& o)
    : Module("CrossMapLRN2d"), options(o) {
    if (o.size() < 1)
        throw value_error("CrossMapLRN2d(" + std::to_string(o.size()) + "): size must be >= 1");
}
Tensor CrossMapLRN2dImpl::forward(const Tensor& x) {
    return cross_map_lrn2d(x, options.size(), options.alpha(), options.beta(), options.k());
}
void CrossMapLRN2dImpl::pretty_print(std::ostream& os) const {
    os << "CrossMapLRN2d(" << options.size() << ", alpha=" << options.alpha()
       << ", beta=" << options.beta() << ", k=" << options.k() << ")";
}

}  // namespace tg::nn
