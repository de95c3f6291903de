#include "tapegrad/nn/conv.hpp"

#include <cmath>
#include <optional>
#include <sstream>
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/init.hpp"

namespace tg::nn {

namespace {

/// The kernel's sizes, one per spatial dim (one value means all of them).
Shape kernel_dims(const char* layer, const IntArg& k, size_t dims) {
    const auto& v = k.values();
    if (v.size() != 1 && v.size() != dims)
        throw shape_error(std::string(layer) + ": kernel_size has " + std::to_string(v.size()) +
                          " values: expected 1 or " + std::to_string(dims));
    Shape s;
    for (size_t d = 0; d < dims; ++d) {
        const int64_t kd = v.size() == 1 ? v[0] : v[d];
        if (kd <= 0)
            throw value_error(std::string(layer) + ": kernel_size must be positive, got " +
                              std::to_string(kd));
        s.push_back(kd);
    }
    return s;
}

Shape weight_shape(int64_t a, int64_t b, const Shape& k) {
    Shape s{a, b};
    s.insert(s.end(), k.begin(), k.end());
    return s;
}

void print_arg(std::ostream& os, const char* name, const IntArg& a) {
    os << ", " << name << "=[";
    for (size_t i = 0; i < a.values().size(); ++i)
        os << (i ? ", " : "") << a.values()[i];
    os << "]";
}

/// Prints `name` only when some value differs from `none`, as LibTorch leaves defaults out.
void print_if(std::ostream& os, const char* name, const IntArg& a, int64_t none) {
    for (int64_t v : a.values())
        if (v != none) {
            print_arg(os, name, a);
            return;
        }
}

/// LibTorch's name of a padding_mode.
const char* mode_name(PadMode m) {
    switch (m) {
        case PadMode::Reflect:
            return "kReflect";
        case PadMode::Replicate:
            return "kReplicate";
        case PadMode::Circular:
            return "kCircular";
        default:
            return "kZeros";
    }
}

/// The options after kernel_size and stride: padding, dilation, groups, bias, padding_mode, as
/// LibTorch's.
template <class O>
void print_rest(std::ostream& os, const O& o, const std::optional<PaddingMode>& by_name) {
    if (by_name)
        os << ", padding='" << by_name->name() << "'";
    else
        print_if(os, "padding", o.padding(), 0);
    print_if(os, "dilation", o.dilation(), 1);
    if (o.groups() != 1)
        os << ", groups=" << o.groups();
    if (!o.bias())
        os << ", bias=false";
    if (o.padding_mode() != kZeros)
        os << ", padding_mode=" << mode_name(o.padding_mode());
}

/// LibTorch refuses "same" with a stride other than 1 when the layer is built.
template <class O>
void check_same(const char* layer, const O& o) {
    if (!o.padding_by_name() || o.padding_by_name()->name() != "same")
        return;
    for (int64_t s : o.stride().values())
        if (s != 1)
            throw value_error(std::string(layer) +
                              ": padding='same' is not supported for strided convolutions");
}

}  // namespace

ConvBase::ConvBase(const char* name, int64_t in, int64_t out, int64_t groups,
                   const Shape& weight_shape_, int64_t bias_size, bool has_bias)
    : Module(name), in_(in), out_(out) {
    if (in <= 0 || out <= 0)
        throw shape_error(std::string(name) + "(" + std::to_string(in) + ", " +
                          std::to_string(out) + "): channel counts must be positive");
    if (groups <= 0 || in % groups != 0 || out % groups != 0)
        throw shape_error(std::string(name) + "(" + std::to_string(in) + ", " +
                          std::to_string(out) + "): groups " + std::to_string(groups) +
                          " must divide both channel counts");
    weight = register_parameter("weight", empty(weight_shape_));
    if (has_bias)
        bias = register_parameter("bias", empty({bias_size}));
    reset_parameters();
}

void ConvBase::reset_parameters() {
    init::kaiming_uniform_(weight, std::sqrt(5.0));
    if (bias.defined()) {
        const double bound = 1.0 / std::sqrt(double(weight.numel() / weight.size(0)));
        init::uniform_(bias, -bound, bound);
    }
}

Tensor ConvBase::pad_input(const Tensor& x, const IntArg& padding,
                           const std::optional<PaddingMode>& by_name, PadMode mode,
                           const IntArg& dilation) const {
    const int64_t dims = weight.dim() - 2;
    auto per_dim = [&](const IntArg& a, int64_t i, int64_t none) {
        const auto& v = a.values();
        return v.empty() ? none : v.size() == 1 ? v[0] : v.at(size_t(i));
    };
    std::vector<int64_t> pads;  // F::pad's order: the last dim first, (before, after) each
    for (int64_t i = dims - 1; i >= 0; --i) {
        int64_t before = 0, after = 0;
        if (!by_name) {
            before = after = per_dim(padding, i, 0);
        } else if (by_name->name() == "same") {
            const int64_t total = per_dim(dilation, i, 1) * (weight.size(2 + i) - 1);
            before = total / 2;
            after = total - before;
        } else if (by_name->name() != "valid") {
            throw value_error(label() + ": padding \"" + by_name->name() +
                              "\": expected \"same\" or \"valid\"");
        }
        pads.push_back(before);
        pads.push_back(after);
    }
    return pad(x, pads, mode);
}

Tensor ConvBase::check_input(const Tensor& x, int64_t dims) const {
    std::ostringstream where;
    where << name() << "(" << in_ << ", " << out_ << "): input ";
    if (!x.defined())
        throw value_error(where.str() + "undefined");
    where << shape_str(x.sizes());
    if (x.dim() != dims && x.dim() != dims - 1)
        throw shape_error(where.str() + ": expected " + std::to_string(dims) + " dims [N, " +
                          std::to_string(in_) + ", ...] or " + std::to_string(dims - 1) +
                          " unbatched");
    const Tensor xb = x.dim() == dims ? x : x.unsqueeze(0);
    if (xb.size(1) != in_)
        throw shape_error(where.str() + ": expected " + std::to_string(in_) + " channels");
    if (x.dtype() != weight.dtype())
        throw dtype_error(where.str() + ": dtype " + dtype_name(x.dtype()) + ", layer has " +
                          dtype_name(weight.dtype()));
    if (x.device() != weight.device())
        throw device_error(where.str() + ": on " + x.device().str() + ", layer on " +
                           weight.device().str());
    return xb;
}

Conv1dImpl::Conv1dImpl(const Conv1dOptions& o)
    : ConvBase("Conv1d", o.in_channels(), o.out_channels(), o.groups(),
               weight_shape(o.out_channels(), o.in_channels() / std::max<int64_t>(o.groups(), 1),
                            kernel_dims("Conv1d", o.kernel_size(), 1)),
               o.out_channels(), o.bias()),
      options(o) {
    check_same("Conv1d", o);
}

Tensor Conv1dImpl::forward(const Tensor& x) {
    const Tensor xb = check_input(x, 3);
    const auto& o = options;
    const auto& by_name = o.padding_by_name();
    const Tensor y =
        o.padding_mode() != kZeros
            ? conv1d(pad_input(xb, o.padding(), by_name, o.padding_mode(), o.dilation()), weight,
                     bias, o.stride(), 0, o.dilation(), o.groups())
        : by_name ? conv1d(xb, weight, bias, o.stride(), *by_name, o.dilation(), o.groups())
                  : conv1d(xb, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups());
    return x.dim() == 3 ? y : y.squeeze(0);
}

void Conv1dImpl::pretty_print(std::ostream& os) const {
    os << "Conv1d(" << in_ << ", " << out_;
    print_arg(os, "kernel_size", options.kernel_size());
    print_arg(os, "stride", options.stride());
    print_rest(os, options, options.padding_by_name());
    os << ")";
}

Conv2dImpl::Conv2dImpl(const Conv2dOptions& o)
    : ConvBase("Conv2d", o.in_channels(), o.out_channels(), o.groups(),
               weight_shape(o.out_channels(), o.in_channels() / std::max<int64_t>(o.groups(), 1),
                            kernel_dims("Conv2d", o.kernel_size(), 2)),
               o.out_channels(), o.bias()),
      options(o) {
    check_same("Conv2d", o);
}

Tensor Conv2dImpl::forward(const Tensor& x) {
    const Tensor xb = check_input(x, 4);
    const auto& o = options;
    const auto& by_name = o.padding_by_name();
    const Tensor y =
        o.padding_mode() != kZeros
            ? conv2d(pad_input(xb, o.padding(), by_name, o.padding_mode(), o.dilation()), weight,
                     bias, o.stride(), 0, o.dilation(), o.groups())
        : by_name ? conv2d(xb, weight, bias, o.stride(), *by_name, o.dilation(), o.groups())
                  : conv2d(xb, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups());
    return x.dim() == 4 ? y : y.squeeze(0);
}

void Conv2dImpl::pretty_print(std::ostream& os) const {
    os << "Conv2d(" << in_ << ", " << out_;
    print_arg(os, "kernel_size", options.kernel_size());
    print_arg(os, "stride", options.stride());
    print_rest(os, options, options.padding_by_name());
    os << ")";
}

ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& o)
    : ConvBase("ConvTranspose2d", o.in_channels(), o.out_channels(), o.groups(),
               weight_shape(o.in_channels(), o.out_channels() / std::max<int64_t>(o.groups(), 1),
                            kernel_dims("ConvTranspose2d", o.kernel_size(), 2)),
               o.out_channels(), o.bias()),
      options(o) {
    if (o.padding_mode() != kZeros)
        throw value_error("ConvTranspose2d: only padding_mode kZeros is supported, as LibTorch");
}

Tensor ConvTranspose2dImpl::forward(const Tensor& x) {
    const Tensor xb = check_input(x, 4);
    const auto& o = options;
    const Tensor y = conv_transpose2d(xb, weight, bias, o.stride(), o.padding(), o.output_padding(),
                                      o.groups(), o.dilation());
    return x.dim() == 4 ? y : y.squeeze(0);
}

void ConvTranspose2dImpl::pretty_print(std::ostream& os) const {
    os << "ConvTranspose2d(" << in_ << ", " << out_;
    print_arg(os, "kernel_size", options.kernel_size());
    print_arg(os, "stride", options.stride());
    print_if(os, "output_padding", options.output_padding(), 0);
    print_rest(os, options, std::nullopt);
    os << ")";
}

}  // namespace tg::nn
