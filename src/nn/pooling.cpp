#include "tapegrad/nn/pooling.hpp"

#include <string>
#include <tuple>

#include "tapegrad/error.hpp"

namespace tg::nn {

namespace {

/// "MaxPool3d" for base "MaxPool" and D = 3.
std::string layer_name(const char* base, size_t d) {
    return std::string(base) + std::to_string(d) + "d";
}

/// Throws value_error naming the layer unless every value of a is positive (or, with
/// `zero_ok`, non-negative) and there are 1 or D of them (or none, when `none_ok`).
void check_arg(const std::string& layer, const char* what, const IntArg& a, size_t d,
               bool zero_ok = false, bool none_ok = true) {
    const size_t n = a.values().size();
    if ((n == 0 && !none_ok) || (n > 1 && n != d))
        throw shape_error(layer + ": " + what + " has " + std::to_string(n) +
                          " values: expected 1 or " + std::to_string(d));
    for (int64_t v : a.values())
        if (v < 0 || (v == 0 && !zero_ok))
            throw value_error(layer + ": " + what + " must be " + (zero_ok ? ">= 0" : "positive") +
                              ", got " + std::to_string(v));
}

/// name=value as LibTorch prints an ExpandingArray<D>: one value for D = 1, else D of them.
void print_arg(std::ostream& os, const char* name, const IntArg& a, size_t d) {
    const auto& v = a.values();
    os << name << "=";
    if (d == 1) {
        os << v.at(0);
        return;
    }
    os << "[";
    for (size_t i = 0; i < d; ++i)
        os << (i ? ", " : "") << (v.size() == 1 ? v[0] : v.at(i));
    os << "]";
}

const IntArg& stride_or_kernel(const IntArg& stride, const IntArg& kernel) {
    return stride.values().empty() ? kernel : stride;
}

/// The functional op of D dims (index D - 1 of ops).
template <size_t D, class... F>
auto pick(F... ops) {
    return std::get<D - 1>(std::make_tuple(ops...));
}

}  // namespace

// ---- max pooling
template <size_t D>
MaxPoolImpl<D>::MaxPoolImpl(const Options& o) : Module(layer_name("MaxPool", D)), options(o) {
    const std::string n = name();
    check_arg(n, "kernel_size", o.kernel_size(), D, false, false);
    check_arg(n, "stride", o.stride(), D);
    check_arg(n, "padding", o.padding(), D, true);
    check_arg(n, "dilation", o.dilation(), D);
}

template <size_t D>
std::pair<Tensor, Tensor> MaxPoolImpl<D>::forward_with_indices(const Tensor& x) {
    const auto& o = options;
    return pick<D>(max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices)(
        x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

template <size_t D>
Tensor MaxPoolImpl<D>::forward(const Tensor& x) {
    return forward_with_indices(x).first;
}

template <size_t D>
void MaxPoolImpl<D>::pretty_print(std::ostream& os) const {
    const auto& o = options;
    os << name() << "(";
    print_arg(os, "kernel_size", o.kernel_size(), D);
    print_arg(os << ", ", "stride", stride_or_kernel(o.stride(), o.kernel_size()), D);
    print_arg(os << ", ", "padding", o.padding(), D);
    print_arg(os << ", ", "dilation", o.dilation(), D);
    os << ", ceil_mode=" << (o.ceil_mode() ? "true" : "false") << ")";
}

// ---- average pooling
template <size_t D>
AvgPoolImpl<D>::AvgPoolImpl(const Options& o) : Module(layer_name("AvgPool", D)), options(o) {
    const std::string n = name();
    check_arg(n, "kernel_size", o.kernel_size(), D, false, false);
    check_arg(n, "stride", o.stride(), D);
    check_arg(n, "padding", o.padding(), D, true);
    if (o.divisor_override() && *o.divisor_override() == 0)
        throw value_error(n + ": divisor_override must be not zero");
}

template <size_t D>
Tensor AvgPoolImpl<D>::forward(const Tensor& x) {
    const auto& o = options;
    if constexpr (D == 1)
        return avg_pool1d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                          o.count_include_pad());
    else if constexpr (D == 2)
        return avg_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                          o.count_include_pad(), o.divisor_override());
    else
        return avg_pool3d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                          o.count_include_pad(), o.divisor_override());
}

template <size_t D>
void AvgPoolImpl<D>::pretty_print(std::ostream& os) const {
    const auto& o = options;
    os << name() << "(";
    print_arg(os, "kernel_size", o.kernel_size(), D);
    print_arg(os << ", ", "stride", stride_or_kernel(o.stride(), o.kernel_size()), D);
    print_arg(os << ", ", "padding", o.padding(), D);
    os << ")";
}

// ---- adaptive pooling
template <size_t D>
AdaptiveAvgPoolImpl<D>::AdaptiveAvgPoolImpl(const Options& o)
    : Module(layer_name("AdaptiveAvgPool", D)), options(o) {
    check_arg(name(), "output_size", o.output_size(), D, false, false);
}

template <size_t D>
Tensor AdaptiveAvgPoolImpl<D>::forward(const Tensor& x) {
    return pick<D>(adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)(
        x, options.output_size());
}

template <size_t D>
void AdaptiveAvgPoolImpl<D>::pretty_print(std::ostream& os) const {
    print_arg(os << name() << "(", "output_size", options.output_size(), D);
    os << ")";
}

template <size_t D>
AdaptiveMaxPoolImpl<D>::AdaptiveMaxPoolImpl(const Options& o)
    : Module(layer_name("AdaptiveMaxPool", D)), options(o) {
    check_arg(name(), "output_size", o.output_size(), D, false, false);
}

template <size_t D>
std::pair<Tensor, Tensor> AdaptiveMaxPoolImpl<D>::forward_with_indices(const Tensor& x) {
    return pick<D>(adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d)(
        x, options.output_size());
}

template <size_t D>
Tensor AdaptiveMaxPoolImpl<D>::forward(const Tensor& x) {
    return forward_with_indices(x).first;
}

template <size_t D>
void AdaptiveMaxPoolImpl<D>::pretty_print(std::ostream& os) const {
    print_arg(os << name() << "(", "output_size", options.output_size(), D);
    os << ")";
}

// ---- LP pooling
template <size_t D>
LPPoolImpl<D>::LPPoolImpl(const Options& o) : Module(layer_name("LPPool", D)), options(o) {
    check_arg(name(), "kernel_size", o.kernel_size(), D, false, false);
    check_arg(name(), "stride", o.stride(), D);
}

template <size_t D>
Tensor LPPoolImpl<D>::forward(const Tensor& x) {
    const auto& o = options;
    return pick<D>(lp_pool1d, lp_pool2d)(x, o.norm_type(), o.kernel_size(), o.stride(),
                                         o.ceil_mode());
}

template <size_t D>
void LPPoolImpl<D>::pretty_print(std::ostream& os) const {
    const auto& o = options;
    os << name() << "(norm_type=" << o.norm_type() << ", ";
    print_arg(os, "kernel_size", o.kernel_size(), D);
    print_arg(os << ", ", "stride", stride_or_kernel(o.stride(), o.kernel_size()), D);
    os << ", ceil_mode=" << (o.ceil_mode() ? "true" : "false") << ")";
}

// ---- max unpooling
template <size_t D>
MaxUnpoolImpl<D>::MaxUnpoolImpl(const Options& o) : Module(layer_name("MaxUnpool", D)), options(o) {
    check_arg(name(), "kernel_size", o.kernel_size(), D, false, false);
    check_arg(name(), "stride", o.stride(), D);
    check_arg(name(), "padding", o.padding(), D, true);
}

template <size_t D>
Tensor MaxUnpoolImpl<D>::forward(const Tensor& x, const Tensor& indices,
                                 const std::optional<std::vector<int64_t>>& output_size) {
    const auto& o = options;
    return pick<D>(max_unpool1d, max_unpool2d, max_unpool3d)(x, indices, o.kernel_size(),
                                                             o.stride(), o.padding(), output_size);
}

template <size_t D>
void MaxUnpoolImpl<D>::pretty_print(std::ostream& os) const {
    const auto& o = options;
    os << name() << "(";
    print_arg(os, "kernel_size", o.kernel_size(), D);
    print_arg(os << ", ", "stride", stride_or_kernel(o.stride(), o.kernel_size()), D);
    print_arg(os << ", ", "padding", o.padding(), D);
    os << ")";
}

// ---- fractional max pooling
template <size_t D>
FractionalMaxPoolImpl<D>::FractionalMaxPoolImpl(const Options& o)
    : Module(layer_name("FractionalMaxPool", D)), options(o) {
    check_arg(name(), "kernel_size", o.kernel_size(), D, false, false);
    if (o.output_size().has_value() == o.output_ratio().has_value())
        throw value_error(name() +
                          ": requires specifying either an output size, or a pooling ratio");
    if (o.output_size())
        check_arg(name(), "output_size", *o.output_size(), D, false, false);
    if (o.output_ratio())
        for (double r : *o.output_ratio())
            if (!(r > 0 && r < 1))
                throw value_error(name() + ": output_ratio must be between 0 and 1, got " +
                                  std::to_string(r));
}

template <size_t D>
std::pair<Tensor, Tensor> FractionalMaxPoolImpl<D>::forward_with_indices(const Tensor& x) {
    const auto& o = options;
    return pick<D - 1>(fractional_max_pool2d, fractional_max_pool3d)(
        x, o.kernel_size(), o.output_size().value_or(IntArg(std::vector<int64_t>{})),
        o.output_ratio().value_or(std::vector<double>{}), o._random_samples());
}

template <size_t D>
Tensor FractionalMaxPoolImpl<D>::forward(const Tensor& x) {
    return forward_with_indices(x).first;
}

template <size_t D>
void FractionalMaxPoolImpl<D>::pretty_print(std::ostream& os) const {
    os << name() << "()";
}

template class MaxPoolImpl<1>;
template class MaxPoolImpl<2>;
template class MaxPoolImpl<3>;
template class AvgPoolImpl<1>;
template class AvgPoolImpl<2>;
template class AvgPoolImpl<3>;
template class AdaptiveAvgPoolImpl<1>;
template class AdaptiveAvgPoolImpl<2>;
template class AdaptiveAvgPoolImpl<3>;
template class AdaptiveMaxPoolImpl<1>;
template class AdaptiveMaxPoolImpl<2>;
template class AdaptiveMaxPoolImpl<3>;
template class LPPoolImpl<1>;
template class LPPoolImpl<2>;
template class MaxUnpoolImpl<1>;
template class MaxUnpoolImpl<2>;
template class MaxUnpoolImpl<3>;
template class FractionalMaxPoolImpl<2>;
template class FractionalMaxPoolImpl<3>;

}  // namespace tg::nn
