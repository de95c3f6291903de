#pragma once
/// Identity, Linear (y = x·Wᵀ + b as one fused BLAS node: tg::linear; DESIGN.md §4) and
/// Bilinear (y = x1ᵀ·W·x2 + b: tg::bilinear), with F::bilinear, as LibTorch's linear.h.
#include <cstdint>
#include <ostream>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// Returns its input (the same tensor), as LibTorch's (whose C++ constructor, unlike Python's,
/// takes no arguments).
class IdentityImpl : public Module {
public:
    IdentityImpl() : Module("Identity") {}
    Tensor forward(const Tensor& x) override { return x; }
    void pretty_print(std::ostream& os) const override { os << "Identity()"; }
};
TG_MODULE(Identity);

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

/// LibTorch's BilinearOptions: in1_features, in2_features, out_features, bias (true).
struct BilinearOptions {
    BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
        : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
    TG_ARG(int64_t, in1_features);
    TG_ARG(int64_t, in2_features);
    TG_ARG(int64_t, out_features);
    TG_ARG(bool, bias) = true;
};

class BilinearImpl : public Module {
public:
    using Options = BilinearOptions;
    /// weight [out, in1, in2] and bias [out] ~ U(±1/√in1), LibTorch's initialisation (weight
    /// first). shape_error for a negative count; value_error for in1_features 0 (a bound of
    /// 1/√0, which LibTorch's uniform_ refuses too).
    explicit BilinearImpl(const BilinearOptions& options);
    BilinearImpl(int64_t in1_features, int64_t in2_features, int64_t out_features)
        : BilinearImpl(BilinearOptions(in1_features, in2_features, out_features)) {}
    /// tg::bilinear(x1, x2, weight, bias): x1 [..., in1], x2 [..., in2] -> [..., out].
    Tensor forward(const Tensor& x1, const Tensor& x2);
    using Module::forward;
    void reset_parameters();
    void pretty_print(std::ostream& os) const override;

    BilinearOptions options;
    Tensor weight;  // [out, in1, in2]
    Tensor bias;    // [out], undefined when built with bias = false
};
TG_MODULE(Bilinear);

namespace functional {
/// tg::bilinear(input1, input2, weight, bias), as LibTorch's F::bilinear.
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias = {});
}  // namespace functional

}  // namespace tg::nn

#pragma GCC visibility pop
