// The rest of ATen's activations (tapegrad/activation_ops.hpp). elu, silu, mish and log_sigmoid
// run one fused kernel forward and one backward (kernels.def), and keep their composed formula
// for create_graph, where the backward itself must record; the others are compositions.
#include <cmath>
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "core/random.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

using runtime::BinaryOp;
using runtime::UnaryOp;

namespace {

/// x, after its in-place op: y written into x (a recorded copy_), as LibTorch's elu_ and the like.
Tensor& into(Tensor& x, const Tensor& y) {
    if (!x.defined())
        throw value_error("in-place activation: undefined tensor");
    x.copy_(y);
    return x;
}

/// A floating x, the op's scalar arguments finite.
void check_args(const char* op, const Tensor& x, std::initializer_list<double> args) {
    if (!x.defined())
        throw value_error(std::string(op) + ": undefined tensor");
    runtime::check_floating(op, x);
    for (double a : args)
        if (!std::isfinite(a))
            throw value_error(std::string(op) + ": argument " + runtime::scalar_str(a) +
                              " is not finite, for input " + shape_str(x.sizes()));
}

/// The unscaled ELU, alpha·(e^(q·x) - 1) for x <= 0, whose backward uses the input scale qb
/// (Note [celu's gradient]). Note [ELU saves its output]: as LibTorch's, elu saves x and elu_
/// (from_result) its output, which (for alpha >= 0) is > 0 exactly where x was, with
/// dx = dy·qb·(y + alpha) there: elu_ writes y into x and backward stays exact.
Tensor elu_unscaled(const Tensor& x, double alpha, double q, double qb, bool from_result) {
    Tensor y = runtime::unary(UnaryOp::elu, x, alpha, q);
    if (!should_record({&x}))
        return y;
    if (from_result)
        record("elu", {&x}, y, [sy = save_output(y), alpha, qb](const Tensor& dy) {
            const Tensor yy = sy.get();
            if (GradMode::is_enabled())
                return Grads{dy * where(gt(yy, 0.0), ones_like(yy), (yy + alpha) * qb)};
            return Grads{runtime::binary(BinaryOp::elu_backward_result, dy, yy, "elu", alpha, qb)};
        });
    else
        record("elu", {&x}, y, [sx = save(x), alpha, qb](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (GradMode::is_enabled())
                return Grads{dy * where(gt(xx, 0.0), ones_like(xx),
                                        exp(clamp_max(xx, 0.0) * qb) * (alpha * qb))};
            return Grads{runtime::binary(BinaryOp::elu_backward, dy, xx, "elu", alpha, qb)};
        });
    return y;
}

Tensor elu_with(const Tensor& x, double alpha, double scale, double q, double qb,
                bool from_result) {
    check_args("elu", x, {alpha, scale, q});
    const ComposedName named;
    const Tensor y = elu_unscaled(x, alpha, q, qb, from_result);
    return named(scale == 1 ? y : y * scale, "elu", "EluBackward0");
}
Tensor& elu_in_place(Tensor& x, double alpha, double scale, double q, double qb) {
    if (alpha < 0)
        throw value_error("elu_: alpha " + runtime::scalar_str(alpha) +
                          " < 0: an in-place elu needs alpha >= 0 for its backward, as LibTorch's");
    return into(x, elu_with(x, alpha, scale, q, qb, true));
}

/// Note [celu's gradient]: LibTorch 1.13's celu and celu_ compute their backward with the input
/// scale 1/float(alpha), alpha rounded to float32 first (derivatives.yaml: 1.0/alpha.toFloat()),
/// while the forward uses 1/alpha: its gradients differ from the derivative by about 1e-8
/// relative for an alpha that float32 does not hold. celu does as LibTorch's.
double celu_backward_scale(double alpha) {
    return 1.0 / double(float(alpha));
}

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

}  // namespace

Tensor elu(const Tensor& x, Scalar alpha, Scalar scale, Scalar input_scale) {
    return elu_with(x, alpha, scale, input_scale, input_scale, false);
}
Tensor& elu_(Tensor& x, Scalar alpha, Scalar scale, Scalar input_scale) {
    return elu_in_place(x, alpha, scale, input_scale, input_scale);
}
Tensor selu(const Tensor& x) {
    return elu(x, kSeluAlpha, kSeluScale, 1);
}
Tensor& selu_(Tensor& x) {
    return elu_(x, kSeluAlpha, kSeluScale, 1);
}
Tensor celu(const Tensor& x, Scalar alpha) {
    if (alpha == 0)
        throw value_error("celu: alpha 0 divides by zero (input " +
                          (x.defined() ? shape_str(x.sizes()) : std::string("undefined")) + ")");
    return elu_with(x, alpha, 1, 1 / alpha, celu_backward_scale(alpha), false);
}
Tensor& celu_(Tensor& x, Scalar alpha) {
    if (alpha == 0)
        throw value_error("celu_: alpha 0 divides by zero");
    return elu_in_place(x, alpha, 1, 1 / alpha, celu_backward_scale(alpha));
}

Tensor gelu(const Tensor& x, const std::string& approximate) {
    if (approximate == "none")
        return gelu(x);
    if (approximate != "tanh")
        throw value_error("gelu: approximate \"" + approximate +
                          "\": expected \"none\" or \"tanh\"");
    check_args("gelu", x, {});
    const ComposedName named;
    const double k = std::sqrt(2.0 / M_PI);
    return named(x * 0.5 * (tanh((x + x * x * x * 0.044715) * k) + 1.0), "gelu", "GeluBackward0");
}

Tensor silu(const Tensor& x) {
    check_args("silu", x, {});
    Tensor y = runtime::unary(UnaryOp::silu, x);
    trace_op("silu", {&x}, y);
    if (should_record({&x})) {
        record("silu", {&x}, y, [sx = save(x)](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (GradMode::is_enabled()) {
                const Tensor s = sigmoid(xx);
                return Grads{dy * s * (1 + xx * (1 - s))};
            }
            return Grads{runtime::binary(BinaryOp::silu_backward, dy, xx, "silu")};
        });
        torch_name(y, "SiluBackward0");
    }
    return y;
}

Tensor mish(const Tensor& x) {
    check_args("mish", x, {});
    Tensor y = runtime::unary(UnaryOp::mish, x);
    if (should_record({&x})) {
        record("mish", {&x}, y, [sx = save(x)](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (GradMode::is_enabled()) {
                const Tensor t = tanh(softplus(xx));
                return Grads{dy * (t + xx * sigmoid(xx) * (1 - t * t))};
            }
            return Grads{runtime::binary(BinaryOp::mish_backward, dy, xx, "mish")};
        });
        torch_name(y, "MishBackward0");
    }
    return y;
}

Tensor log_sigmoid(const Tensor& x) {
    check_args("log_sigmoid", x, {});
    Tensor y = runtime::unary(UnaryOp::log_sigmoid, x);
    if (should_record({&x})) {
        record("log_sigmoid", {&x}, y, [sx = save(x)](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (GradMode::is_enabled())
                return Grads{dy * sigmoid(-xx)};
            return Grads{runtime::binary(BinaryOp::log_sigmoid_backward, dy, xx, "log_sigmoid")};
        });
        torch_name(y, "LogSigmoidBackward0");
    }
    return y;
}

/// Note [hardtanh's gradient at its bounds]: ATen's hardtanh_backward passes dy only strictly
/// inside (min_val, max_val), where clamp's passes it on the bounds too (relu6 at x = 0 has
/// gradient 0, as relu's). The node saves the output, which lies strictly inside exactly where x
/// does, so hardtanh_ stays exact.
Tensor hardtanh(const Tensor& x, Scalar min_val, Scalar max_val) {
    check_args("hardtanh", x, {min_val, max_val});
    if (min_val > max_val)
        throw value_error("hardtanh: min_val " + runtime::scalar_str(min_val) +
                          " is greater than max_val " + runtime::scalar_str(max_val));
    Tensor y = runtime::unary(UnaryOp::clamp, x, min_val, max_val);
    if (should_record({&x})) {
        record("hardtanh", {&x}, y, [sy = save_output(y), min_val, max_val](const Tensor& dy) {
            const Tensor yy = sy.get();
            const Tensor inside = logical_and(gt(yy, min_val), lt(yy, max_val));
            return Grads{where(inside, dy, zeros({}, dy.options()))};
        });
        torch_name(y, "HardtanhBackward0");
    }
    return y;
}
Tensor& hardtanh_(Tensor& x, Scalar min_val, Scalar max_val) {
    return into(x, hardtanh(x, min_val, max_val));
}
Tensor relu6(const Tensor& x) {
    return hardtanh(x, 0, 6);
}
Tensor& relu6_(Tensor& x) {
    return hardtanh_(x, 0, 6);
}

Tensor hardshrink(const Tensor& x, Scalar lambd) {
    check_args("hardshrink", x, {lambd});
    const ComposedName named;
    Tensor keep;  // not -lambd <= x <= lambd, so that NaN is kept, as ATen's
    {
        NoGradGuard g;
        keep = logical_not(logical_and(ge(x, -lambd), le(x, lambd)));
    }
    return named(where(keep, x, zeros({}, x.options())), "hardshrink", "HardshrinkBackward0");
}

Tensor softshrink(const Tensor& x, Scalar lambd) {
    check_args("softshrink", x, {lambd});
    if (lambd < 0)
        throw value_error("softshrink: lambda must be >= 0, got " + runtime::scalar_str(lambd));
    const ComposedName named;
    return named(x - clamp(x, -lambd, lambd), "softshrink", "SoftshrinkBackward0");
}

Tensor threshold(const Tensor& x, Scalar threshold, Scalar value) {
    check_args("threshold", x, {});
    const ComposedName named;
    Tensor above;  // not x <= threshold, so that NaN is kept, as ATen's
    {
        NoGradGuard g;
        above = logical_not(le(x, threshold));
    }
    return named(where(above, x, full({}, value, x.options())), "threshold", "ThresholdBackward0");
}
Tensor& threshold_(Tensor& x, Scalar threshold, Scalar value) {
    return into(x, tg::threshold(x, threshold, value));  // where() saves only its condition
}

Tensor glu(const Tensor& x, int64_t dim) {
    check_args("glu", x, {});
    if (x.dim() == 0)
        throw shape_error("glu: a scalar input [] has no dim to halve");
    const int64_t d = wrap_dim(dim, x.dim(), "glu");
    const int64_t n = x.size(d);
    if (n % 2 != 0)
        throw shape_error("glu: input " + shape_str(x.sizes()) + " has size " + std::to_string(n) +
                          " in dim " + std::to_string(dim) + ", which must be even");
    const ComposedName named;
    return named(narrow(x, d, 0, n / 2) * sigmoid(narrow(x, d, n / 2, n / 2)), "glu",
                 "GluBackward0");
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
    check_args("prelu", x, {});
    if (!weight.defined())
        throw value_error("prelu: undefined weight for input " + shape_str(x.sizes()));
    runtime::check_same("prelu", x, weight);
    const int64_t k = weight.numel();
    if (weight.dim() > 1)
        throw shape_error("prelu: weight " + shape_str(weight.sizes()) +
                          " must be a scalar or 1-D tensor");
    Tensor w = weight.reshape({k});
    if (k != 1) {
        const int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
        if (x.dim() == 0 || channels != k)
            throw shape_error("prelu: weight " + shape_str(weight.sizes()) + " has " +
                              std::to_string(k) + " slopes, input " + shape_str(x.sizes()) +
                              " has " + std::to_string(channels) + " channels (dim 1)");
        Shape s(size_t(x.dim()), 1);
        s[1] = k;
        w = w.reshape(s);
    } else {
        w = w.reshape(Shape(size_t(x.dim()), 1));
    }
    const ComposedName named;
    Tensor pos;
    {
        NoGradGuard g;
        pos = gt(x, 0.0);
    }
    return named(where(pos, x, x * w), "prelu", "PreluBackward0");
}

namespace {
/// rrelu's noise in training: 1 where x > 0, else r ~ U(lower, upper) drawn in index order, as
/// LibTorch's CPU kernel: each r from a 53-bit uniform (two 32-bit draws), x·r computed without
/// a fused multiply-add; for float32 the bounds are rounded to float and so is r.
Tensor rrelu_noise(const Tensor& x, double lower, double upper, const Generator* g) {
    const bool f32 = x.dtype() == kFloat32;
    const double lo = f32 ? double(float(lower)) : lower, hi = f32 ? double(float(upper)) : upper;
    const std::vector<double> xv = x.detach().to(kFloat64).contiguous().to_vector<double>();
    std::vector<double> noise(xv.size(), 1.0);
    {
        detail::Draw draw(g);
        detail::Engine& e = draw.engine();
        for (size_t i = 0; i < xv.size(); ++i) {
            if (!(xv[i] <= 0))
                continue;
            const uint64_t bits = e.random64() & ((uint64_t(1) << 53) - 1);
            volatile double u = double(bits) * 0x1p-53 * (hi - lo);  // no fma, as LibTorch's
            const double r = u + lo;
            noise[i] = f32 ? double(float(r)) : r;
        }
    }
    return tensor(noise, TensorOptions(kFloat64)).reshape(x.sizes()).to(x.dtype()).to(x.device());
}

Tensor rrelu_with(const Tensor& x, double lower, double upper, bool training, const Generator* g) {
    check_args("rrelu", x, {lower, upper});
    if (!(lower <= upper))
        throw value_error("rrelu: lower bound " + runtime::scalar_str(lower) +
                          " must be <= upper bound " + runtime::scalar_str(upper));
    if (!training)
        return leaky_relu(x, (lower + upper) / 2);
    const ComposedName named;
    return named(x * rrelu_noise(x, lower, upper, g), "rrelu", "RreluWithNoiseBackward0");
}
}  // namespace

Tensor rrelu(const Tensor& x, Scalar lower, Scalar upper, bool training,
             std::optional<Generator> generator) {
    return rrelu_with(x, lower, upper, training, generator ? &*generator : nullptr);
}
Tensor& rrelu_(Tensor& x, Scalar lower, Scalar upper, bool training,
               std::optional<Generator> generator) {
    return into(x, rrelu(x, lower, upper, training, generator));
}

}  // namespace tg
