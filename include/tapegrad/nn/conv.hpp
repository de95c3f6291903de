#pragma once
/// Conv1d, Conv2d, Conv3d and ConvTranspose1d/2d/3d with LibTorch's options:
///     tg::nn::Conv2d(tg::nn::Conv2dOptions(1, 32, 3).padding(1).bias(false))
/// Parameters as LibTorch's: weight [out, in/groups, k...] (transposed: [in, out/groups, k...])
/// ~ kaiming_uniform_(a=√5), bias [out] ~ U(±1/√fan_in). Zero padding only.
#include <cstdint>
#include <optional>
#include <ostream>

#include "tapegrad/nn/module.hpp"
#include "tapegrad/ops.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// The options of a D-dimensional convolution (D = 1, 2 or 3), as LibTorch's ConvOptions<D>.
/// padding is a size per dim, or "same" / "valid" (tg::kSame / tg::kValid; then
/// padding_by_name() holds it): "same" keeps the size (stride 1 only: value_error at
/// construction otherwise, as LibTorch), the odd padding of an even kernel at the end.
/// padding_mode is how the padding is filled: kZeros (the default), kReflect, kReplicate or
/// kCircular (the input is padded with F::pad first, as LibTorch does).
template <size_t D>
class ConvOptions {
public:
    ConvOptions(int64_t in_channels, int64_t out_channels, IntArg kernel_size)
        : in_(in_channels), out_(out_channels), kernel_(std::move(kernel_size)) {}
    ConvOptions& stride(IntArg v) { return stride_ = std::move(v), *this; }
    ConvOptions& padding(IntArg v) { return padding_ = std::move(v), by_name_.reset(), *this; }
    ConvOptions& padding(int64_t v) { return padding(IntArg(v)); }
    ConvOptions& padding(const PaddingMode& m) { return by_name_ = m, *this; }
    ConvOptions& padding_mode(PadMode m) { return mode_ = m, *this; }
    ConvOptions& dilation(IntArg v) { return dilation_ = std::move(v), *this; }
    ConvOptions& groups(int64_t v) { return groups_ = v, *this; }
    ConvOptions& bias(bool v) { return bias_ = v, *this; }

    int64_t in_channels() const { return in_; }
    int64_t out_channels() const { return out_; }
    const IntArg& kernel_size() const { return kernel_; }
    const IntArg& stride() const { return stride_; }
    const IntArg& padding() const { return padding_; }
    const std::optional<PaddingMode>& padding_by_name() const { return by_name_; }
    PadMode padding_mode() const { return mode_; }
    const IntArg& dilation() const { return dilation_; }
    int64_t groups() const { return groups_; }
    bool bias() const { return bias_; }

private:
    int64_t in_, out_;
    IntArg kernel_, stride_ = 1, padding_ = 0, dilation_ = 1;
    std::optional<PaddingMode> by_name_;
    PadMode mode_ = kZeros;
    int64_t groups_ = 1;
    bool bias_ = true;
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

/// The options of a D-dimensional transposed convolution (D = 1, 2 or 3), as LibTorch's
/// ConvTransposeOptions<D>.
template <size_t D>
class ConvTransposeOptions {
public:
    ConvTransposeOptions(int64_t in_channels, int64_t out_channels, IntArg kernel_size)
        : in_(in_channels), out_(out_channels), kernel_(std::move(kernel_size)) {}
    ConvTransposeOptions& stride(IntArg v) { return stride_ = std::move(v), *this; }
    ConvTransposeOptions& padding(IntArg v) { return padding_ = std::move(v), *this; }
    ConvTransposeOptions& output_padding(IntArg v) { return out_pad_ = std::move(v), *this; }
    ConvTransposeOptions& dilation(IntArg v) { return dilation_ = std::move(v), *this; }
    ConvTransposeOptions& groups(int64_t v) { return groups_ = v, *this; }
    ConvTransposeOptions& bias(bool v) { return bias_ = v, *this; }
    /// Only kZeros, as LibTorch's (value_error at construction for another mode).
    ConvTransposeOptions& padding_mode(PadMode m) { return mode_ = m, *this; }

    int64_t in_channels() const { return in_; }
    int64_t out_channels() const { return out_; }
    const IntArg& kernel_size() const { return kernel_; }
    const IntArg& stride() const { return stride_; }
    const IntArg& padding() const { return padding_; }
    const IntArg& output_padding() const { return out_pad_; }
    const IntArg& dilation() const { return dilation_; }
    int64_t groups() const { return groups_; }
    bool bias() const { return bias_; }
    PadMode padding_mode() const { return mode_; }

private:
    int64_t in_, out_;
    IntArg kernel_, stride_ = 1, padding_ = 0, out_pad_ = 0, dilation_ = 1;
    PadMode mode_ = kZeros;
    int64_t groups_ = 1;
    bool bias_ = true;
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

/// The parameters and checks the convolutions share.
class ConvBase : public Module {
public:
    /// Re-draws weight and bias with the default initialisation.
    void reset_parameters();

protected:
    /// Checks the channel counts and groups, registers weight [w0, w1, kernel...] and bias [nb].
    ConvBase(const char* name, int64_t in, int64_t out, int64_t groups, const Shape& weight_shape,
             int64_t bias_size, bool has_bias);

public:
    /// Throws shape_error naming the layer unless x is [N, in, ...] with `dims` dims (or one
    /// fewer, unbatched) and matches the layer's dtype and device; returns x batched.
    Tensor check_input(const Tensor& x, int64_t dims) const;
    /// x padded by `padding` (or by "same") with padding_mode, as LibTorch pads before a
    /// convolution whose padding_mode is not kZeros.
    Tensor pad_input(const Tensor& x, const IntArg& padding,
                     const std::optional<PaddingMode>& by_name, PadMode mode,
                     const IntArg& dilation) const;
    Tensor weight;  // [w0, w1, kernel...]
    Tensor bias;    // undefined when built with bias(false)

protected:
    int64_t in_, out_;
};

class Conv1dImpl : public ConvBase {
public:
    using Options = Conv1dOptions;
    explicit Conv1dImpl(const Conv1dOptions& options);
    /// tg::conv1d over x [N, in, L] (or [in, L]).
    Tensor forward(const Tensor& x) override;
    Conv1dOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(Conv1d);

class Conv2dImpl : public ConvBase {
public:
    using Options = Conv2dOptions;
    explicit Conv2dImpl(const Conv2dOptions& options);
    /// tg::conv2d over x [N, in, H, W] (or [in, H, W]).
    Tensor forward(const Tensor& x) override;
    Conv2dOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(Conv2d);

class Conv3dImpl : public ConvBase {
public:
    using Options = Conv3dOptions;
    explicit Conv3dImpl(const Conv3dOptions& options);
    /// tg::conv3d over x [N, in, D, H, W] (or [in, D, H, W]).
    Tensor forward(const Tensor& x) override;
    Conv3dOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(Conv3d);

class ConvTranspose1dImpl : public ConvBase {
public:
    using Options = ConvTranspose1dOptions;
    explicit ConvTranspose1dImpl(const ConvTranspose1dOptions& options);
    /// tg::conv_transpose1d over x [N, in, L] (or [in, L]).
    Tensor forward(const Tensor& x) override;
    ConvTranspose1dOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(ConvTranspose1d);

class ConvTranspose2dImpl : public ConvBase {
public:
    using Options = ConvTranspose2dOptions;
    explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options);
    /// tg::conv_transpose2d over x [N, in, H, W] (or [in, H, W]).
    Tensor forward(const Tensor& x) override;
    ConvTranspose2dOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(ConvTranspose2d);

class ConvTranspose3dImpl : public ConvBase {
public:
    using Options = ConvTranspose3dOptions;
    explicit ConvTranspose3dImpl(const ConvTranspose3dOptions& options);
    /// tg::conv_transpose3d over x [N, in, D, H, W] (or [in, D, H, W]).
    Tensor forward(const Tensor& x) override;
    ConvTranspose3dOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(ConvTranspose3d);

}  // namespace tg::nn

#pragma GCC visibility pop
