#include "tapegrad/nn/spatial.hpp"

#include <string>

#include "tapegrad/error.hpp"

namespace tg::nn {

namespace {

/// name=[a, b] of a 2-D size argument, as LibTorch prints an ExpandingArray<2>.
void print_pair(std::ostream& os, const char* name, const IntArg& a) {
    const auto& v = a.values();
    os << name << "=[" << v.at(0) << ", " << (v.size() == 1 ? v[0] : v.at(1)) << "]";
}

void check_pair(const char* layer, const char* what, const IntArg& a, bool zero_ok) {
    const auto& v = a.values();
    if (v.empty() || v.size() > 2)
        throw shape_error(std::string(layer) + ": " + what + " has " + std::to_string(v.size()) +
                          " values: expected 1 or 2");
    for (int64_t x : v)
        if (x < 0 || (x == 0 && !zero_ok))
            throw value_error(std::string(layer) + ": " + what + " must be " +
                              (zero_ok ? ">= 0" : "positive") + ", got " + std::to_string(x));
}

}  // namespace

FoldImpl::FoldImpl(const FoldOptions& o) : Module("Fold"), options(o) {
    check_pair("Fold", "output_size", o.output_size(), false);
    check_pair("Fold", "kernel_size", o.kernel_size(), false);
    check_pair("Fold", "dilation", o.dilation(), false);
    check_pair("Fold", "padding", o.padding(), true);
    check_pair("Fold", "stride", o.stride(), false);
}

Tensor FoldImpl::forward(const Tensor& x) {
    const auto& o = options;
    return fold(x, o.output_size(), o.kernel_size(), o.dilation(), o.padding(), o.stride());
}

void FoldImpl::pretty_print(std::ostream& os) const {
    const auto& o = options;
    print_pair(os << "Fold(", "output_size", o.output_size());
    print_pair(os << ", ", "kernel_size", o.kernel_size());
    print_pair(os << ", ", "dilation", o.dilation());
    print_pair(os << ", ", "padding", o.padding());
    print_pair(os << ", ", "stride", o.stride());
    os << ")";
}

UnfoldImpl::UnfoldImpl(const UnfoldOptions& o) : Module("Unfold"), options(o) {
    check_pair("Unfold", "kernel_size", o.kernel_size(), false);
    check_pair("Unfold", "dilation", o.dilation(), false);
    check_pair("Unfold", "padding", o.padding(), true);
    check_pair("Unfold", "stride", o.stride(), false);
}

Tensor UnfoldImpl::forward(const Tensor& x) {
    const auto& o = options;
    return unfold(x, o.kernel_size(), o.dilation(), o.padding(), o.stride());
}

void UnfoldImpl::pretty_print(std::ostream& os) const {
    const auto& o = options;
    print_pair(os << "Unfold(", "kernel_size", o.kernel_size());
    print_pair(os << ", ", "dilation", o.dilation());
    print_pair(os << ", ", "padding", o.padding());
    print_pair(os << ", ", "stride", o.stride());
    os << ")";
}

PixelShuffleImpl::PixelShuffleImpl(const PixelShuffleOptions& o)
    : Module("PixelShuffle"), options(o) {}

Tensor PixelShuffleImpl::forward(const Tensor& x) {
    return pixel_shuffle(x, options.upscale_factor());
}

void PixelShuffleImpl::pretty_print(std::ostream& os) const {
    os << "PixelShuffle(upscale_factor=" << options.upscale_factor() << ")";
}

PixelUnshuffleImpl::PixelUnshuffleImpl(const PixelUnshuffleOptions& o)
    : Module("PixelUnshuffle"), options(o) {}

Tensor PixelUnshuffleImpl::forward(const Tensor& x) {
    return pixel_unshuffle(x, options.downscale_factor());
}

void PixelUnshuffleImpl::pretty_print(std::ostream& os) const {
    os << "PixelUnshuffle(downscale_factor=" << options.downscale_factor() << ")";
}

}  // namespace tg::nn
