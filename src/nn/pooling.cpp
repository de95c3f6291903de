#include "tapegrad/nn/pooling.hpp"

#include <string>

#include "tapegrad/error.hpp"

namespace tg::nn {

namespace {

/// Throws value_error naming the layer unless every value of a is positive (or, with
/// `zero_ok`, non-negative) and there are at most 2.
void check_arg(const char* layer, const char* what, const IntArg& a, bool zero_ok = false) {
    if (a.values().size() > 2)
        throw shape_error(std::string(layer) + ": " + what + " has " +
                          std::to_string(a.values().size()) + " values: expected 1 or 2");
    for (int64_t v : a.values())
        if (v < 0 || (v == 0 && !zero_ok))
            throw value_error(std::string(layer) + ": " + what + " must be " +
                              (zero_ok ? ">= 0" : "positive") + ", got " + std::to_string(v));
}

void print_arg(std::ostream& os, const char* name, const IntArg& a) {
    os << name << "=[";
    for (size_t i = 0; i < a.values().size(); ++i)
        os << (i ? ", " : "") << a.values()[i];
    os << "]";
}

}  // namespace

MaxPool2dImpl::MaxPool2dImpl(const MaxPool2dOptions& o) : Module("MaxPool2d"), options(o) {
    check_arg("MaxPool2d", "kernel_size", o.kernel_size());
    check_arg("MaxPool2d", "stride", o.stride());
    check_arg("MaxPool2d", "padding", o.padding(), true);
    check_arg("MaxPool2d", "dilation", o.dilation());
}

Tensor MaxPool2dImpl::forward(const Tensor& x) {
    const auto& o = options;
    return max_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

std::pair<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& x) {
    const auto& o = options;
    return max_pool2d_with_indices(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(),
                                   o.ceil_mode());
}

void MaxPool2dImpl::pretty_print(std::ostream& os) const {
    os << "MaxPool2d(";
    print_arg(os, "kernel_size", options.kernel_size());
    os << ", ";
    print_arg(os, "stride",
              options.stride().values().empty() ? options.kernel_size() : options.stride());
    os << ", ";
    print_arg(os, "padding", options.padding());
    os << ", ";
    print_arg(os, "dilation", options.dilation());
    os << ", ceil_mode=" << (options.ceil_mode() ? "true" : "false") << ")";
}

AvgPool2dImpl::AvgPool2dImpl(const AvgPool2dOptions& o) : Module("AvgPool2d"), options(o) {
    check_arg("AvgPool2d", "kernel_size", o.kernel_size());
    check_arg("AvgPool2d", "stride", o.stride());
    check_arg("AvgPool2d", "padding", o.padding(), true);
}

Tensor AvgPool2dImpl::forward(const Tensor& x) {
    const auto& o = options;
    return avg_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                      o.count_include_pad());
}

void AvgPool2dImpl::pretty_print(std::ostream& os) const {
    os << "AvgPool2d(";
    print_arg(os, "kernel_size", options.kernel_size());
    os << ", ";
    print_arg(os, "stride",
              options.stride().values().empty() ? options.kernel_size() : options.stride());
    os << ", ";
    print_arg(os, "padding", options.padding());
    os << ")";
}

AdaptiveAvgPool2dImpl::AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& o)
    : Module("AdaptiveAvgPool2d"), options(o) {
    check_arg("AdaptiveAvgPool2d", "output_size", o.output_size());
    if (o.output_size().values().empty())
        throw value_error("AdaptiveAvgPool2d: output_size is empty");
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& x) {
    return adaptive_avg_pool2d(x, options.output_size());
}

void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& os) const {
    os << "AdaptiveAvgPool2d(";
    print_arg(os, "output_size", options.output_size());
    os << ")";
}

}  // namespace tg::nn
