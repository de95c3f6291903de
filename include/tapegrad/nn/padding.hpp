#pragma once
/// LibTorch's padding and upsampling modules:
///     tg::nn::ReflectionPad2d(2), tg::nn::ReplicationPad1d({3, 1}), tg::nn::ZeroPad2d(1),
///     tg::nn::ConstantPad2d(tg::nn::ConstantPad2dOptions({1, 1, 2, 0}, -1.0)),
///     tg::nn::Upsample(tg::nn::UpsampleOptions().scale_factor({2, 2}).mode(tg::kBilinear))
/// Each calls tg::pad or tg::interpolate (ops.hpp), so it records and runs on every device as
/// they do. The padding is one size for every side or 2·D sizes, last dim first.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/module.hpp"
#include "tapegrad/ops.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// The padding of a D-dim padding module: one size for each of the 2·D sides, or 2·D sizes.
template <size_t D>
struct PadOptions {
    PadOptions(int64_t p) : padding_(2 * D, p) {}                   // NOLINT: implicit
    PadOptions(std::vector<int64_t> p) : padding_(std::move(p)) {}  // NOLINT
    PadOptions(std::initializer_list<int64_t> p) : padding_(p) {}   // NOLINT
    TG_ARG(std::vector<int64_t>, padding);
};
template <size_t D>
struct ConstantPadOptions : PadOptions<D> {
    ConstantPadOptions(PadOptions<D> p, double value)
        : PadOptions<D>(std::move(p)), value_(value) {}
    TG_ARG(double, value);
};

/// x padded by tg::pad in one mode (the modules below). value_error unless the padding has 2·D
/// sizes.
class PadImpl : public Module {
public:
    PadImpl(const char* name, PadMode mode, size_t dims, std::vector<int64_t> padding,
            double value = 0);
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;

private:
    PadMode mode_;
    std::vector<int64_t> padding_;
    double value_;
};

#define TG_PAD_MODULE(Name, D, mode)                                                          \
    using Name##Options = PadOptions<D>;                                                      \
    class Name##Impl : public PadImpl {                                                       \
    public:                                                                                   \
        explicit Name##Impl(const Name##Options& o) : PadImpl(#Name, mode, D, o.padding()) {} \
    };                                                                                        \
    TG_MODULE(Name)
TG_PAD_MODULE(ReflectionPad1d, 1, kReflect);
TG_PAD_MODULE(ReflectionPad2d, 2, kReflect);
TG_PAD_MODULE(ReflectionPad3d, 3, kReflect);
TG_PAD_MODULE(ReplicationPad1d, 1, kReplicate);
TG_PAD_MODULE(ReplicationPad2d, 2, kReplicate);
TG_PAD_MODULE(ReplicationPad3d, 3, kReplicate);
TG_PAD_MODULE(ZeroPad2d, 2, kConstant);
#undef TG_PAD_MODULE

#define TG_CONSTANT_PAD_MODULE(Name, D)                               \
    using Name##Options = ConstantPadOptions<D>;                      \
    class Name##Impl : public PadImpl {                               \
    public:                                                           \
        explicit Name##Impl(const Name##Options& o)                   \
            : PadImpl(#Name, kConstant, D, o.padding(), o.value()) {} \
    };                                                                \
    TG_MODULE(Name)
TG_CONSTANT_PAD_MODULE(ConstantPad1d, 1);
TG_CONSTANT_PAD_MODULE(ConstantPad2d, 2);
TG_CONSTANT_PAD_MODULE(ConstantPad3d, 3);
#undef TG_CONSTANT_PAD_MODULE

/// nn::Upsample's options, LibTorch's (give size or scale_factor; mode kNearest by default).
struct UpsampleOptions {
    TG_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
    TG_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
    TG_ARG(InterpolateMode, mode) = kNearest;
    TG_ARG(std::optional<bool>, align_corners) = std::nullopt;
};
class UpsampleImpl : public Module {
public:
    using Options = UpsampleOptions;
    explicit UpsampleImpl(const UpsampleOptions& options = {});
    /// tg::interpolate with the options.
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;
    UpsampleOptions options;  // public, as LibTorch's
};
TG_MODULE(Upsample);

}  // namespace tg::nn

#pragma GCC visibility pop
