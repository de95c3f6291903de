#pragma once
/// Linear: y = x·Wᵀ + b as one fused BLAS node (tg::linear; DESIGN.md §4).
#include <cstdint>
#include <ostream>

#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class LinearImpl : public Module {
public:
    /// weight [out,in] ~ kaiming_uniform_(a=√5) (i.e. U(±1/√in)), bias [out] ~ U(±1/√in):
    /// LibTorch's defaults.
    LinearImpl(int64_t in_features, int64_t out_features, bool bias = true);
    /// x:[batch,in] -> [batch,out], exactly tg::linear(x, weight, bias). Inputs [in] and
    /// [d0,...,dk,in] are reshaped around the same node. Throws shape_error naming the layer.
    Tensor forward(const Tensor& x) override;
    /// Re-draws weight and bias with the default initialisation.
    void reset_parameters();

    int64_t in_features() const { return in_; }
    int64_t out_features() const { return out_; }
    void pretty_print(std::ostream& os) const override;

    Parameter weight;  // [out,in]; fc->weight() works too
    Parameter bias;    // [out], undefined when built with bias = false

private:
    int64_t in_, out_;
};
TG_MODULE(Linear);

}  // namespace tg::nn

#pragma GCC visibility pop
