#pragma once
/// MaxPool2d, AvgPool2d and AdaptiveAvgPool2d with LibTorch's options:
///     tg::nn::MaxPool2d(2), tg::nn::MaxPool2d(tg::nn::MaxPool2dOptions(3).stride(2).padding(1)),
///     tg::nn::AdaptiveAvgPool2d({1, 1})
#include <cstdint>
#include <ostream>

#include "tapegrad/nn/module.hpp"
#include "tapegrad/ops.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class MaxPool2dOptions {
public:
    MaxPool2dOptions(IntArg kernel_size) : kernel_(std::move(kernel_size)) {}  // NOLINT
    MaxPool2dOptions(int64_t kernel_size) : kernel_(kernel_size) {}            // NOLINT
    MaxPool2dOptions& stride(IntArg v) { return stride_ = std::move(v), *this; }
    MaxPool2dOptions& padding(IntArg v) { return padding_ = std::move(v), *this; }
    MaxPool2dOptions& dilation(IntArg v) { return dilation_ = std::move(v), *this; }
    MaxPool2dOptions& ceil_mode(bool v) { return ceil_ = v, *this; }
    const IntArg& kernel_size() const { return kernel_; }
    const IntArg& stride() const { return stride_; }  // {}: kernel_size
    const IntArg& padding() const { return padding_; }
    const IntArg& dilation() const { return dilation_; }
    bool ceil_mode() const { return ceil_; }

private:
    IntArg kernel_, stride_ = std::vector<int64_t>{}, padding_ = 0, dilation_ = 1;
    bool ceil_ = false;
};

class MaxPool2dImpl : public Module {
public:
    using Options = MaxPool2dOptions;
    explicit MaxPool2dImpl(const MaxPool2dOptions& options);
    /// tg::max_pool2d with the options.
    Tensor forward(const Tensor& x) override;
    /// The output and the argmax indices (tg::max_pool2d_with_indices).
    std::pair<Tensor, Tensor> forward_with_indices(const Tensor& x);
    MaxPool2dOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(MaxPool2d);

class AvgPool2dOptions {
public:
    AvgPool2dOptions(IntArg kernel_size) : kernel_(std::move(kernel_size)) {}  // NOLINT
    AvgPool2dOptions(int64_t kernel_size) : kernel_(kernel_size) {}            // NOLINT
    AvgPool2dOptions& stride(IntArg v) { return stride_ = std::move(v), *this; }
    AvgPool2dOptions& padding(IntArg v) { return padding_ = std::move(v), *this; }
    AvgPool2dOptions& ceil_mode(bool v) { return ceil_ = v, *this; }
    AvgPool2dOptions& count_include_pad(bool v) { return include_pad_ = v, *this; }
    const IntArg& kernel_size() const { return kernel_; }
    const IntArg& stride() const { return stride_; }  // {}: kernel_size
    const IntArg& padding() const { return padding_; }
    bool ceil_mode() const { return ceil_; }
    bool count_include_pad() const { return include_pad_; }

private:
    IntArg kernel_, stride_ = std::vector<int64_t>{}, padding_ = 0;
    bool ceil_ = false, include_pad_ = true;
};

class AvgPool2dImpl : public Module {
public:
    using Options = AvgPool2dOptions;
    explicit AvgPool2dImpl(const AvgPool2dOptions& options);
    /// tg::avg_pool2d with the options.
    Tensor forward(const Tensor& x) override;
    AvgPool2dOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(AvgPool2d);

class AdaptiveAvgPool2dOptions {
public:
    AdaptiveAvgPool2dOptions(IntArg output_size) : size_(std::move(output_size)) {}  // NOLINT
    AdaptiveAvgPool2dOptions(int64_t output_size) : size_(output_size) {}            // NOLINT
    AdaptiveAvgPool2dOptions(std::initializer_list<int64_t> s) : size_(s) {}         // NOLINT
    const IntArg& output_size() const { return size_; }

private:
    IntArg size_;
};

class AdaptiveAvgPool2dImpl : public Module {
public:
    using Options = AdaptiveAvgPool2dOptions;
    explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options);
    /// tg::adaptive_avg_pool2d(x, output_size).
    Tensor forward(const Tensor& x) override;
    AdaptiveAvgPool2dOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(AdaptiveAvgPool2d);

}  // namespace tg::nn

#pragma GCC visibility pop
