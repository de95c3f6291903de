#pragma once
/// Fold, Unfold, PixelShuffle and PixelUnshuffle with LibTorch's options (nn/pooling_options.hpp)
/// and printing:  tg::nn::Unfold(tg::nn::UnfoldOptions({2, 3}).padding(1)),
/// tg::nn::Fold(tg::nn::FoldOptions({4, 5}, {2, 2})), tg::nn::PixelShuffle(2)
#include <ostream>

#include "tapegrad/nn/module.hpp"
#include "tapegrad/nn/pooling_options.hpp"
#include "tapegrad/ops.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class FoldImpl : public Module {
public:
    using Options = FoldOptions;
    explicit FoldImpl(const FoldOptions& options);
    /// tg::fold(x, output_size, kernel_size, dilation, padding, stride).
    Tensor forward(const Tensor& x) override;
    FoldOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(Fold);

class UnfoldImpl : public Module {
public:
    using Options = UnfoldOptions;
    explicit UnfoldImpl(const UnfoldOptions& options);
    /// tg::unfold(x, kernel_size, dilation, padding, stride).
    Tensor forward(const Tensor& x) override;
    UnfoldOptions options;
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(Unfold);

class PixelShuffleImpl : public Module {
public:
    using Options = PixelShuffleOptions;
    explicit PixelShuffleImpl(const PixelShuffleOptions& options);
    /// tg::pixel_shuffle(x, upscale_factor).
    Tensor forward(const Tensor& x) override;
    PixelShuffleOptions options;
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(PixelShuffle);

class PixelUnshuffleImpl : public Module {
public:
    using Options = PixelUnshuffleOptions;
    explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& options);
    /// tg::pixel_unshuffle(x, downscale_factor).
    Tensor forward(const Tensor& x) override;
    PixelUnshuffleOptions options;
    void pretty_print(std::ostream& os) const override;
};
TG_MODULE(PixelUnshuffle);

}  // namespace tg::nn

#pragma GCC visibility pop
