#include "tapegrad/nn/padding.hpp"

#include <string>

#include "nn/print_list.hpp"

namespace tg::nn {

using detail::print_list;

PadImpl::PadImpl(const char* name, PadMode mode, size_t dims, std::vector<int64_t> padding,
                 double value)
    : Module(name), mode_(mode), padding_(std::move(padding)), value_(value) {
    if (padding_.size() != 2 * dims)
        throw value_error(std::string(name) + ": padding needs " + std::to_string(2 * dims) +
                          " sizes (or one for every side), got " + std::to_string(padding_.size()));
}

Tensor PadImpl::forward(const Tensor& x) {
    return pad(x, padding_, mode_, value_);
}

void PadImpl::pretty_print(std::ostream& os) const {
    os << name() << "(padding=";
    print_list(os, padding_);
    if (mode_ == kConstant && value_ != 0)
        os << ", value=" << value_;
    os << ")";
}

UpsampleImpl::UpsampleImpl(const UpsampleOptions& opts) : Module("Upsample"), options(opts) {}

Tensor UpsampleImpl::forward(const Tensor& x) {
    return interpolate(x, options.size().value_or(std::vector<int64_t>{}),
                       options.scale_factor().value_or(std::vector<double>{}), options.mode(),
                       options.align_corners());
}

void UpsampleImpl::pretty_print(std::ostream& os) const {
    os << "Upsample(";
    if (options.size())
        os << "size=", print_list(os, *options.size());
    if (options.scale_factor()) {
        os << "scale_factor=[";
        for (size_t i = 0; i < options.scale_factor()->size(); ++i)
            os << (i ? ", " : "") << (*options.scale_factor())[i];
        os << "]";
    }
    static const char* const kModes[] = {"nearest",   "linear", "bilinear",     "bicubic",
                                         "trilinear", "area",   "nearest-exact"};
    os << ", mode=" << kModes[int(options.mode())] << ")";
}

}  // namespace tg::nn
