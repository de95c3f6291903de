#pragma once
/// Linear: y = x·Wᵀ + b as one fused BLAS node (tg::linear; DESIGN.md §4).
#include <cstdint>
#include <ostream>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// LibTorch's LinearOptions: in_features, out_features, bias (true).
struct LinearOptions {
    LinearOptions(int64_t in_features, int64_t out_features)
        : in_features_(in_features), out_features_(out_features) {}
    TG_ARG(int64_t, in_features);
    TG_ARG(int64_t, out_features);
    TG_ARG(bool, bias) = true;
};

class LinearImpl : public Module {
public:
    using Options = LinearOptions;
    /// weight [out,in] ~ kaiming_uniform_(a=√5) (i.e. U(±1/√in)), bias [out] ~ U(±1/√in):
    /// LibTorch's defaults. in_features 0 gives a weight [out, 0] with nothing to draw and a
    /// zero bias (PyTorch's bound 0 for fan_in 0; LibTorch 1.13 throws there), out_features 0
    /// an empty output. shape_error for a negative count.
    explicit LinearImpl(const LinearOptions& options);
    LinearImpl(int64_t in_features, int64_t out_features, bool bias = true);
    /// x:[batch,in] -> [batch,out], exactly tg::linear(x, weight, bias). Inputs [in] and
    /// [d0,...,dk,in] are reshaped around the same node. Throws shape_error naming the layer.
    Tensor forward(const Tensor& x) override;
    /// Re-draws weight and bias with the default initialisation.
    void reset_parameters();

    int64_t in_features() const { return in_; }
    int64_t out_features() const { return out_; }
    void pretty_print(std::ostream& os) const override;

    LinearOptions options;

    Tensor weight;  // [out,in]
    Tensor bias;    // [out], undefined when built with bias = false

private:
    int64_t in_, out_;
};
TG_MODULE(Linear);

}  // namespace tg::nn

#pragma GCC visibility pop
