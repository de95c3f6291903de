// Activations, softmax and dropout. The hot backwards call one fused kernel from kernels.def and
// keep the composed formula for create_graph, where the backward itself must record.
#include <cmath>
#include <memory>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "backend/cpu/norm_kernels.hpp"
#include "core/distributions.hpp"
#include "core/random.hpp"
#include "ops/overwritable.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/random_fill.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

using runtime::BinaryOp;
using runtime::UnaryOp;

Tensor tanh(const Tensor& x_in) {
    const Tensor x = promote::floating(x_in);  // an integer tensor's tanh is float32
    Tensor y = runtime::unary(UnaryOp::tanh, x);
    trace_op("tanh", {&x_in}, y);
    if (should_record({&x}))
        record("tanh", {&x}, y, [sy = save_output(y)](const Tensor& dy) {
            const Tensor yy = sy.get();
            if (GradMode::is_enabled())
                return Grads{dy * (1 - yy * yy)};
            return Grads{runtime::binary(BinaryOp::tanh_backward, dy, yy, "tanh")};
        });
    recipe(y, [](const std::vector<Tensor>& xs) { return tanh(xs[0]); });
    return y;
}

Tensor sigmoid(const Tensor& x_in) {
    const Tensor x = promote::floating(x_in);
    Tensor y = runtime::unary(UnaryOp::sigmoid, x);
    trace_op("sigmoid", {&x_in}, y);
    if (should_record({&x}))
        record("sigmoid", {&x}, y, [sy = save_output(y)](const Tensor& dy) {
            const Tensor yy = sy.get();
            if (GradMode::is_enabled())
                return Grads{dy * yy * (1 - yy)};
            return Grads{runtime::binary(BinaryOp::sigmoid_backward, dy, yy, "sigmoid")};
        });
    recipe(y, [](const std::vector<Tensor>& xs) { return sigmoid(xs[0]); });
    return y;
}

Tensor relu(const Tensor& x) {
    Tensor y = runtime::unary(UnaryOp::relu, x);
    trace_op("relu", {&x}, y);
    if (should_record({&x}))
        record("relu", {&x}, y, [sy = save_output(y)](const Tensor& dy) {
            const Tensor yy = sy.get();  // y > 0 exactly where x > 0
            if (GradMode::is_enabled())
                return Grads{dy * runtime::unary(UnaryOp::gt_scalar, yy, 0)};
            if (overwritable(dy, yy)) {  // Note [Gradients written in place]
                runtime::binary_into(BinaryOp::relu_backward, dy, dy, yy, "relu", 0, 0);
                runtime::mark_modified(dy);
                return Grads{dy};
            }
            return Grads{runtime::binary(BinaryOp::relu_backward, dy, yy, "relu")};
        });
    recipe(y, [](const std::vector<Tensor>& xs) { return relu(xs[0]); });
    return y;
}

Tensor leaky_relu(const Tensor& x, Scalar slope) {
    if (!std::isfinite(slope))
        throw value_error("leaky_relu: negative slope " + std::to_string(slope) + " is not finite");
    Tensor y = runtime::unary(UnaryOp::leaky_relu, x, slope);
    // with slope >= 0, y > 0 exactly where x > 0: backward keeps y, not x, so that writing y
    // into x (nn::LeakyReLU's inplace) leaves backward exact, as PyTorch's leaky_relu_
    if (should_record({&x}))
        record("leaky_relu", {&x}, y,
               [sx = slope >= 0 ? save_output(y) : save(x), slope](const Tensor& dy) {
                   const Tensor xx = sx.get();
                   if (GradMode::is_enabled())
                       return Grads{dy * runtime::binary(BinaryOp::leaky_relu_backward,
                                                         ones_like(xx), xx, "leaky_relu", slope)};
                   return Grads{
                       runtime::binary(BinaryOp::leaky_relu_backward, dy, xx, "leaky_relu", slope)};
               });
    return y;
}

namespace {
/// g(x) = Φ(x) + x φ(x), the derivative of gelu;  dx = dy * φ(x) (2 - x²)
Tensor gelu_prime(const Tensor& x) {
    Tensor y = runtime::binary(BinaryOp::gelu_backward, ones_like(x), x, "gelu");
    if (should_record({&x}))
        record("gelu_backward", {&x}, y, [sx = save(x)](const Tensor& dy) {
            const Tensor xx = sx.get();
            const Tensor phi = exp(xx * xx * -0.5) * 0.39894228040143267794;
            return Grads{dy * phi * (2 - xx * xx)};
        });
    return y;
}
}  // namespace

Tensor gelu(const Tensor& x) {
    runtime::check_floating("gelu", x);
    Tensor y = runtime::unary(UnaryOp::gelu, x);
    trace_op("gelu", {&x}, y);
    if (should_record({&x}))
        record("gelu", {&x}, y, [sx = save(x)](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (GradMode::is_enabled())
                return Grads{dy * gelu_prime(xx)};
            return Grads{runtime::binary(BinaryOp::gelu_backward, dy, xx, "gelu")};
        });
    recipe(y, [](const std::vector<Tensor>& xs) { return gelu(xs[0]); });
    return y;
}

Tensor softplus(const Tensor& x, Scalar beta, Scalar threshold) {
    runtime::check_floating("softplus", x);
    if (!std::isfinite(beta) || beta == 0 || std::isnan(threshold))  // ln(1 + e^(βx)) / β
        throw value_error("softplus: beta " + std::to_string(beta) +
                          " must be finite and nonzero, threshold " + std::to_string(threshold) +
                          " not NaN");
    Tensor y = runtime::unary(UnaryOp::softplus, x, beta, threshold);
    if (should_record({&x}))
        record("softplus", {&x}, y, [sx = save(x), beta, threshold](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (GradMode::is_enabled())
                return Grads{where(gt(xx * beta, threshold), dy, dy * sigmoid(xx * beta))};
            return Grads{
                runtime::binary(BinaryOp::softplus_backward, dy, xx, "softplus", beta, threshold)};
        });
    return y;
}

namespace {
/// (log-)softmax over dim: the kernel works on contiguous rows, so dim moves last and back.
Tensor softmax_impl(const Tensor& x, int64_t dim, bool log) {
    const char* name = log ? "log_softmax" : "softmax";
    runtime::check_floating(name, x);
    const int64_t d = wrap_dim(dim, x.dim(), name);
    const int64_t last = std::max<int64_t>(x.dim() - 1, 0);
    Tensor xc = (d == last || x.dim() == 0) ? x.detach().contiguous()
                                            : x.detach().transpose(d, last).contiguous();
    Tensor y = runtime::empty_as(xc);
    const int64_t cols = x.dim() == 0 ? 1 : xc.size(-1);
    runtime::be(x).softmax_rows(runtime::view(y), runtime::view(xc), cols ? xc.numel() / cols : 0,
                                cols, log);
    if (d != last && x.dim() > 0)
        y = y.transpose(d, last).contiguous();
    return y;
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
    if (is_reduced_floating(x.dtype()))  // Note [Reduced floats]
        return softmax(x.to(kFloat32), dim).to(x.dtype());
    Tensor y = softmax_impl(x, dim, false);
    if (Trace* tr = trace_slot())
        tr->add("softmax", {&x}, y, {{"dim", dim}});
    if (should_record({&x}))
        record("softmax", {&x}, y, [sy = save_output(y), dim](const Tensor& dy) {
            const Tensor yy = sy.get();
            return Grads{yy * (dy - sum(dy * yy, {dim}, true))};
        });
    recipe(y, [dim](const std::vector<Tensor>& xs) { return softmax_impl(xs[0], dim, false); });
    return y;
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
    if (is_reduced_floating(x.dtype()))  // Note [Reduced floats]
        return log_softmax(x.to(kFloat32), dim).to(x.dtype());
    Tensor y = softmax_impl(x, dim, true);
    if (Trace* tr = trace_slot())
        tr->add("log_softmax", {&x}, y, {{"dim", dim}});
    if (should_record({&x}))
        record("log_softmax", {&x}, y, [sy = save_output(y), dim](const Tensor& dy) {
            return Grads{dy - exp(sy.get()) * sum(dy, {dim}, true)};
        });
    recipe(y, [dim](const std::vector<Tensor>& xs) { return softmax_impl(xs[0], dim, true); });
    return y;
}

// Note [Dropout masks]: dropout is LibTorch's: its mask is bernoulli_(1 - p) drawn on a tensor
// shaped like x (feature dropout: like [N, C, 1, ...], one draw per feature map), in x's dtype,
// divided by 1 - p in that dtype (so float32 masks hold 1.0f / float(1 - p)), and y = x * mask;
// dx = dy * mask. Nothing is drawn when not training, for p = 0 or 1, or for an empty x. On the
// CPU (float32, float64, not feature dropout) the mask is drawn as bits (the same draws:
// detail::bernoulli_bits), x·mask is one threaded pass, and the node keeps the bits (one bit
// per element, an int64 tensor counted as saved memory): backward is one threaded pass with no
// draws. Drawing is serial (one MT19937 stream), so backward drawing the mask again did not get
// faster with threads. Elsewhere the node keeps the generator state the mask was drawn from (an
// Engine, 2.5 KB) and draws the mask again from it in backward. Either way a checkpoint's
// replay of the generator gives the same mask.
static Tensor dropout_bits(const Tensor& x_in, double keep, double one, const Generator* g) {
    const char* name = "dropout";
    const Tensor x = x_in.detach().contiguous();
    const int64_t n = x.numel();
    const Tensor bits = runtime::empty({(n + 63) / 64}, kInt64, x.device(), name);
    auto word = [](const Tensor& t) {
        return static_cast<uint64_t*>(t.impl()->storage->data) + t.impl()->offset;
    };
    {
        detail::Draw draw(g);
        detail::bernoulli_bits(word(bits), n, keep, draw.engine());
    }
    auto apply = [word, n, one, name](const Tensor& in_any, const Tensor& b) {
        const Tensor in = in_any.contiguous();
        Tensor out = runtime::empty(in.sizes(), in.dtype(), in.device(), name);
        const size_t es = element_size(in.dtype());
        backend::cpu::mask_bits_mul(
            in.dtype(),
            static_cast<char*>(out.impl()->storage->data) + size_t(out.impl()->offset) * es,
            static_cast<const char*>(in.impl()->storage->data) + size_t(in.impl()->offset) * es,
            word(b), n, one);
        return out;
    };
    Tensor y = apply(x, bits);
    if (!should_record({&x_in}))
        return y;
    record(name, {&x_in}, y, [apply, sb = save_intermediate(bits)](const Tensor& dy) {
        const Tensor b = sb.get();
        if (GradMode::is_enabled()) {  // create_graph: dy * mask recorded
            Tensor ones;
            {
                NoGradGuard no_grad;
                ones = runtime::unary(UnaryOp::fill, dy.detach(), 1.0, 0);
                ones = apply(ones, b);  // the mask: one or 0
            }
            return Grads{dy * ones};
        }
        return Grads{apply(dy, b)};
    });
    if (recipes_wanted())  // under a MemoryBudget: y again from x and the same bits
        recipe(y, [apply, bits](const std::vector<Tensor>& xs) { return apply(xs[0], bits); });
    return y;
}

static Tensor dropout_with(const Tensor& x, double p, bool train, const Generator* g,
                           bool features = false) {
    const char* name = features ? "feature_dropout" : "dropout";
    if (!(p >= 0 && p <= 1))
        throw value_error(std::string(name) + ": probability " + std::to_string(p) +
                          " is not in [0, 1]");
    if (features && x.dim() < 2)
        throw shape_error(std::string(name) + ": input " + shape_str(x.sizes()) +
                          " must have at least 2 dims [N,C,...]");
    if (!train || p == 0 || x.numel() == 0)
        return x;
    if (p == 1)
        return x * 0.0;
    runtime::check_floating(name, x);
    Shape mask_shape = x.sizes();
    if (features)
        for (size_t d = 2; d < mask_shape.size(); ++d)
            mask_shape[d] = 1;
    const double keep = 1 - p;
    const double one = x.dtype() == kFloat32 ? double(1.0f / float(keep)) : 1 / keep;
    if (!features && x.device().is_cpu() && (x.dtype() == kFloat32 || x.dtype() == kFloat64))
        return dropout_bits(x, keep, one, g);
    auto make_mask = [mask_shape, keep, one, name](const Tensor& like, detail::Engine& e) {
        Tensor m = runtime::empty(mask_shape, like.dtype(), like.device(), name);
        const Dtype d = like.dtype();
        runtime::fill_random(
            m, e,
            [d, keep, one](void* dst, int64_t n, bool, detail::Engine& en) {
                detail::bernoulli(dst, d, n, keep, one, en);
            },
            name);
        return m;
    };
    // in * mask; on the CPU, a contiguous in is multiplied as the mask is drawn, in one pass
    auto apply = [make_mask, features, keep, one, name](const Tensor& in, detail::Engine& e) {
        if (features || !in.device().is_cpu() || !in.is_contiguous() ||
            (in.dtype() != kFloat32 && in.dtype() != kFloat64))  // float16: mask, then mul
            return runtime::binary(BinaryOp::mul, in, make_mask(in, e), name);
        Tensor out = runtime::empty(in.sizes(), in.dtype(), in.device(), name);
        const size_t esize = element_size(in.dtype());
        detail::bernoulli_mul(
            static_cast<char*>(out.impl()->storage->data) + size_t(out.impl()->offset) * esize,
            static_cast<const char*>(in.impl()->storage->data) + size_t(in.impl()->offset) * esize,
            in.dtype(), in.numel(), keep, one, e);
        return out;
    };
    const bool rec = should_record({&x});
    std::shared_ptr<const detail::Engine> from;
    Tensor y;
    {
        detail::Draw draw(g);
        if (rec)
            from = std::make_shared<const detail::Engine>(draw.engine());
        y = apply(x, draw.engine());
    }
    if (rec) {
        record(name, {&x}, y, [make_mask, apply, from](const Tensor& dy) {
            detail::Engine e = *from;
            if (GradMode::is_enabled())  // create_graph: dy * mask recorded
                return Grads{dy * make_mask(dy, e)};
            return Grads{apply(dy, e)};
        });
        if (recipes_wanted())
            recipe(y, [apply, from](const std::vector<Tensor>& xs) {
                detail::Engine e = *from;  // the mask is drawn again from the same state
                return apply(xs[0], e);
            });
    }
    return y;
}
Tensor dropout(const Tensor& x, double p, bool train) {
    return dropout_with(x, p, train, nullptr);
}
Tensor dropout(const Tensor& x, double p, bool train, const Generator& g) {
    return dropout_with(x, p, train, &g);
}
Tensor feature_dropout(const Tensor& x, double p, bool train) {
    return dropout_with(x, p, train, nullptr, true);
}
Tensor feature_dropout(const Tensor& x, double p, bool train, const Generator& g) {
    return dropout_with(x, p, train, &g, true);
}

}  // namespace tg
