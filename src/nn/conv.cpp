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

/// A size argument printed as LibTorch prints an ExpandingArray<D>: one value for D = 1, else
/// D of them ([3, 3] for a 3 given to a 2-D layer).
void print_arg(std::ostream& os, const char* name, const IntArg& a, size_t dims) {
    const auto& v = a.values();
    os << ", " << name << "=";
    if (dims == 1 && v.size() == 1) {
        os << v[0];
        return;
    }
    os << "[";
    for (size_t i = 0; i < dims; ++i)
        os << (i ? ", " : "") << (v.size() == 1 ? v[0] : v.at(i));
    os << "]";
}

/// Prints `name` only when some value differs from `none`, as LibTorch leaves defaults out.
void print_if(std::ostream& os, const char* name, const IntArg& a, int64_t none, size_t dims) {
    for (int64_t v : a.values())
        if (v != none) {
            print_arg(os, name, a, dims);
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

/// A convolution as LibTorch prints it: channels, kernel_size, stride, then padding (or its
/// name), dilation, output_padding (transposed), groups, bias and padding_mode when not the
/// defaults.
template <class O>
void print_conv(std::ostream& os, const char* name, const O& o, size_t dims,
                const std::optional<PaddingMode>& by_name, const IntArg* output_padding) {
    os << name << "(" << o.in_channels() << ", " << o.out_channels();
    print_arg(os, "kernel_size", o.kernel_size(), dims);
    print_arg(os, "stride", o.stride(), dims);
    if (by_name)
        os << ", padding='" << by_name->name() << "'";
    else
        print_if(os, "padding", o.padding(), 0, dims);
    print_if(os, "dilation", o.dilation(), 1, dims);
    if (output_padding)
        print_if(os, "output_padding", *output_padding, 0, dims);
    if (o.groups() != 1)
        os << ", groups=" << o.groups();
    if (!o.bias())
        os << ", bias=false";
    if (o.padding_mode() != kZeros)
        os << ", padding_mode=" << mode_name(o.padding_mode());
    os << ")";
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

namespace {

/// y = conv(x) for a ConvN layer: the input checked and batched, padded first unless
/// padding_mode is kZeros, then the op with padding by value or by name.
template <class L, class Op, class OpByName>
Tensor conv_forward(const L& layer, const Tensor& x, int64_t dims, Op op, OpByName by_name_op) {
    const Tensor xb = layer.check_input(x, dims);
    const auto& o = layer.options;
    const auto& by_name = o.padding_by_name();
    const Tensor y =
        o.padding_mode() != kZeros
            ? op(layer.pad_input(xb, o.padding(), by_name, o.padding_mode(), o.dilation()),
                 IntArg(0))
        : by_name ? by_name_op(xb, *by_name)
                  : op(xb, o.padding());
    return x.dim() == dims ? y : y.squeeze(0);
}

}  // namespace

#define TG_CONV_LAYER(N, D, OP)                                                                  \
    Conv##N##Impl::Conv##N##Impl(const Conv##N##Options& o)                                      \
        : ConvBase(                                                                              \
              "Conv" #N, o.in_channels(), o.out_channels(), o.groups(),                          \
              weight_shape(o.out_channels(), o.in_channels() / std::max<int64_t>(o.groups(), 1), \
                           kernel_dims("Conv" #N, o.kernel_size(), D)),                          \
              o.out_channels(), o.bias()),                                                       \
          options(o) {                                                                           \
        check_same("Conv" #N, o);                                                                \
    }                                                                                            \
    Tensor Conv##N##Impl::forward(const Tensor& x) {                                             \
        const auto& o = options;                                                                 \
        return conv_forward(                                                                     \
            *this, x, D + 2,                                                                     \
            [&](const Tensor& xb, const IntArg& p) {                                             \
                return OP(xb, weight, bias, o.stride(), p, o.dilation(), o.groups());            \
            },                                                                                   \
            [&](const Tensor& xb, const PaddingMode& m) {                                        \
                return OP(xb, weight, bias, o.stride(), m, o.dilation(), o.groups());            \
            });                                                                                  \
    }                                                                                            \
    void Conv##N##Impl::pretty_print(std::ostream& os) const {                                   \
        print_conv(os, "Conv" #N, options, D, options.padding_by_name(), nullptr);               \
    }
TG_CONV_LAYER(1d, 1, conv1d)
TG_CONV_LAYER(2d, 2, conv2d)
TG_CONV_LAYER(3d, 3, conv3d)
#undef TG_CONV_LAYER

#define TG_CONV_TRANSPOSE_LAYER(N, D, OP)                                                        \
    ConvTranspose##N##Impl::ConvTranspose##N##Impl(const ConvTranspose##N##Options& o)           \
        : ConvBase(                                                                              \
              "ConvTranspose" #N, o.in_channels(), o.out_channels(), o.groups(),                 \
              weight_shape(o.in_channels(), o.out_channels() / std::max<int64_t>(o.groups(), 1), \
                           kernel_dims("ConvTranspose" #N, o.kernel_size(), D)),                 \
              o.out_channels(), o.bias()),                                                       \
          options(o) {                                                                           \
        if (o.padding_mode() != kZeros)                                                          \
            throw value_error("ConvTranspose" #N                                                 \
                              ": only padding_mode kZeros is supported, as LibTorch");           \
    }                                                                                            \
    Tensor ConvTranspose##N##Impl::forward(const Tensor& x) {                                    \
        const Tensor xb = check_input(x, D + 2);                                                 \
        const auto& o = options;                                                                 \
        const Tensor y = OP(xb, weight, bias, o.stride(), o.padding(), o.output_padding(),       \
                            o.groups(), o.dilation());                                           \
        return x.dim() == D + 2 ? y : y.squeeze(0);                                              \
    }                                                                                            \
    void ConvTranspose##N##Impl::pretty_print(std::ostream& os) const {                          \
        print_conv(os, "ConvTranspose" #N, options, D, std::nullopt, &options.output_padding()); \
    }
TG_CONV_TRANSPOSE_LAYER(1d, 1, conv_transpose1d)
TG_CONV_TRANSPOSE_LAYER(2d, 2, conv_transpose2d)
TG_CONV_TRANSPOSE_LAYER(3d, 3, conv_transpose3d)
#undef TG_CONV_TRANSPOSE_LAYER

}  // namespace tg::nn
