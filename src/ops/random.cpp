// The random factories and fills: manual_seed, randn, rand, randint, randperm, bernoulli and
// uniform_, normal_, bernoulli_. Each draws what LibTorch 1.13's CPU kernel draws (Note
// [LibTorch's random streams] in core/random.cpp) through runtime::fill_random.
#include "core/random.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/convert.hpp"
#include "core/distributions.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/random_fill.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

Tensor finish(Tensor t, const TensorOptions& o) {
    if (o.requires_grad())
        t.requires_grad_(true);
    return t;
}

void require_floating(const char* op, const Shape& s, Dtype d) {
    if (!is_floating(d))
        throw dtype_error(std::string(op) + ": " + shape_str(s) + " " + dtype_name(d) +
                          " is not floating-point");
    if (is_reduced_floating(d))  // LibTorch draws them with fewer bits: not replicated here
        throw dtype_error(std::string(op) + ": " + shape_str(s) + " " + dtype_name(d) +
                          ": LibTorch's float16 and bfloat16 random streams are not "
                          "implemented; draw float32 and convert with .to()");
}

runtime::Sampler uniform_sampler(Dtype d, double from, double to) {
    return [d, from, to](void* dst, int64_t n, bool, detail::Engine& e) {
        detail::uniform(dst, d, n, from, to, e);
    };
}
runtime::Sampler normal_sampler(Dtype d, double mean, double std) {
    return [d, mean, std](void* dst, int64_t n, bool contiguous, detail::Engine& e) {
        detail::normal(dst, d, n, mean, std, contiguous, e);
    };
}

Tensor random_tensor(const Shape& s, bool normal, const TensorOptions& o, const Generator* g) {
    const char* op = normal ? "randn" : "rand";
    require_floating(op, s, o.dtype());
    Tensor t = runtime::empty(s, o.dtype(), o.device(), op);
    runtime::fill_random(
        t, g, normal ? normal_sampler(o.dtype(), 0, 1) : uniform_sampler(o.dtype(), 0, 1), op);
    return finish(t, o);
}

Tensor random_ints(int64_t low, int64_t high, const Shape& s, const TensorOptions& o,
                   const Generator* g) {
    if (high <= low)
        throw value_error("randint: empty range [" + std::to_string(low) + ", " +
                          std::to_string(high) + ")");
    promote::checked_in(o.dtype(), low, "randint");  // both bounds fit the dtype, as LibTorch's
    promote::checked_in(o.dtype(), high - 1, "randint");
    Tensor t = runtime::empty(s, o.dtype(), o.device(), "randint");
    const uint64_t range = uint64_t(high) - uint64_t(low);
    const Dtype d = o.dtype();
    runtime::fill_random(
        t, g,
        [d, range, low](void* dst, int64_t n, bool, detail::Engine& e) {
            detail::random_from_to(dst, d, n, range, low, e);
        },
        "randint");
    return finish(t, o);
}

Tensor permutation(int64_t n, const TensorOptions& o, const Generator* g) {
    if (n < 0)
        throw value_error("randperm: n must be non-negative, got " + std::to_string(n));
    // the largest value every smaller one of which the dtype holds exactly
    const Dtype dt = o.dtype();
    const int64_t exact = dt == kFloat32    ? int64_t(1) << 24
                          : dt == kFloat64  ? int64_t(1) << 53
                          : dt == kFloat16  ? int64_t(1) << 11
                          : dt == kBFloat16 ? int64_t(1) << 8
                          : dt == kUInt8    ? 255
                          : dt == kInt8     ? 127
                          : dt == kInt16    ? 32767
                          : dt == kInt32    ? 2147483647
                          : dt == kInt64    ? INT64_MAX
                                            : 0;
    if (n > 0 && n - 1 > exact)
        throw dtype_error("randperm: " + std::to_string(n) + " values cannot be held exactly in " +
                          dtype_name(o.dtype()));
    Tensor t = runtime::empty({n}, o.dtype(), o.device(), "randperm");
    const Dtype d = o.dtype();
    runtime::fill_random(
        t, g,
        [d](void* dst, int64_t count, bool, detail::Engine& e) {
            if (d == kInt64)
                return detail::randperm(static_cast<int64_t*>(dst), count, e);
            std::vector<int64_t> perm(static_cast<size_t>(count));
            detail::randperm(perm.data(), count, e);
            dispatch_all(d, [&](auto tag) {
                using T = decltype(tag);
                for (int64_t i = 0; i < count; ++i)
                    static_cast<T*>(dst)[i] = backend::convert<T>(perm[size_t(i)]);  // exact
            });
        },
        "randperm");
    return finish(t, o);
}

/// An in-place random fill: the values drawn for t's layout, written as copy_ writes (so a
/// tensor that requires grad gets the history copy_ gives it). When nothing records, a
/// contiguous t is drawn into directly.
Tensor& fill_in_place(Tensor& t, const runtime::Sampler& sample, const Generator* g,
                      const char* op) {
    if (!t.defined())
        throw value_error(std::string(op) + ": undefined tensor");
    if (t.is_contiguous() && !(GradMode::is_enabled() && t.requires_grad())) {
        runtime::fill_random(t, g, sample, op);
        runtime::mark_modified(t);
        return t;
    }
    NoGradGuard no_grad;
    Tensor r = runtime::empty(t.sizes(), t.dtype(), t.device(), op);
    runtime::fill_random(r, g, sample, op, &t);
    return t.copy_(r);
}

Tensor& fill_random_(Tensor& t, bool normal, double a, double b, const Generator* g) {
    const char* op = normal ? "normal_" : "uniform_";
    require_floating(op, t.sizes(), t.dtype());
    if (!std::isfinite(a) || !std::isfinite(b) || (normal ? b < 0 : a > b))
        throw value_error(std::string(op) + (normal ? ": mean " : ": from ") +
                          runtime::scalar_str(a) + (normal ? ", std " : " to ") +
                          runtime::scalar_str(b) +
                          (normal ? ": std must be finite and >= 0" : ": need finite from <= to"));
    return fill_in_place(
        t, normal ? normal_sampler(t.dtype(), a, b) : uniform_sampler(t.dtype(), a, b), g, op);
}

Tensor& bernoulli_scalar_(Tensor& t, double p, const Generator* g) {
    if (!t.defined())
        throw value_error("bernoulli_: undefined tensor");
    if (!(p >= 0 && p <= 1))
        throw value_error("bernoulli_: p " + runtime::scalar_str(p) + " is not in [0, 1]");
    const Dtype d = t.dtype();
    return fill_in_place(
        t,
        [d, p](void* dst, int64_t n, bool, detail::Engine& e) {
            detail::bernoulli(dst, d, n, p, 1, e);
        },
        g, "bernoulli_");
}

Tensor& exponential_in_place(Tensor& t, double lambd, const Generator* g) {
    if (!t.defined())
        throw value_error("exponential_: undefined tensor");
    require_floating("exponential_", t.sizes(), t.dtype());
    if (!(lambd > 0) || std::isinf(lambd))
        throw value_error("exponential_: lambda " + runtime::scalar_str(lambd) +
                          " must be finite and > 0");
    const Dtype d = t.dtype();
    return fill_in_place(
        t,
        [d, lambd](void* dst, int64_t n, bool, detail::Engine& e) {
            detail::exponential(dst, d, n, lambd, e);
        },
        g, "exponential_");
}

/// geometric_, cauchy_ and log_normal_: one double per element from a serial sampler.
Tensor& draw_in_place(Tensor& t, const char* op, bool floating_only, const Generator* g,
                      const std::function<void(void*, Dtype, int64_t, detail::Engine&)>& f) {
    if (!t.defined())
        throw value_error(std::string(op) + ": undefined tensor");
    if (floating_only || is_reduced_floating(t.dtype()))
        require_floating(op, t.sizes(), t.dtype());
    const Dtype d = t.dtype();
    return fill_in_place(
        t, [d, f](void* dst, int64_t n, bool, detail::Engine& e) { f(dst, d, n, e); }, g, op);
}

Tensor& random_in_place(Tensor& t, std::optional<std::pair<int64_t, int64_t>> range,
                        const Generator* g) {
    if (!t.defined())
        throw value_error("random_: undefined tensor");
    if (is_reduced_floating(t.dtype()))
        require_floating("random_", t.sizes(), t.dtype());
    const Dtype d = t.dtype();
    if (!range)
        return fill_in_place(
            t,
            [d](void* dst, int64_t n, bool, detail::Engine& e) {
                detail::random_full(dst, d, n, e);
            },
            g, "random_");
    const auto [from, to] = *range;
    if (to <= from)
        throw value_error("random_: " + shape_str(t.sizes()) + ": from " + std::to_string(from) +
                          " must be less than to " + std::to_string(to));
    promote::checked_in(d, from, "random_");
    promote::checked_in(d, to - 1, "random_");
    const uint64_t span = uint64_t(to) - uint64_t(from);
    return fill_in_place(
        t,
        [d, span, from = from](void* dst, int64_t n, bool, detail::Engine& e) {
            detail::random_from_to(dst, d, n, span, from, e);
        },
        g, "random_");
}

Tensor& geometric_in_place(Tensor& t, double p, const Generator* g) {
    if (!(p > 0 && p < 1))
        throw value_error("geometric_: p " + runtime::scalar_str(p) + " is not in (0, 1)");
    if (t.defined() && t.dtype() == kBool)
        throw dtype_error("geometric_: " + shape_str(t.sizes()) + " bool: need a number type");
    return draw_in_place(t, "geometric_", false, g,
                         [p](void* dst, Dtype d, int64_t n, detail::Engine& e) {
                             detail::geometric(dst, d, n, p, e);
                         });
}

Tensor& cauchy_in_place(Tensor& t, double median, double sigma, const Generator* g) {
    if (!std::isfinite(median) || !(sigma > 0) || std::isinf(sigma))
        throw value_error("cauchy_: median " + runtime::scalar_str(median) + ", sigma " +
                          runtime::scalar_str(sigma) + ": need finite values and sigma > 0");
    return draw_in_place(t, "cauchy_", true, g,
                         [median, sigma](void* dst, Dtype d, int64_t n, detail::Engine& e) {
                             detail::cauchy(dst, d, n, median, sigma, e);
                         });
}

Tensor& log_normal_in_place(Tensor& t, double mean, double std, const Generator* g) {
    if (!std::isfinite(mean) || !(std > 0) || std::isinf(std))
        throw value_error("log_normal_: mean " + runtime::scalar_str(mean) + ", std " +
                          runtime::scalar_str(std) + ": need finite values and std > 0");
    return draw_in_place(t, "log_normal_", true, g,
                         [mean, std](void* dst, Dtype d, int64_t n, detail::Engine& e) {
                             detail::log_normal(dst, d, n, mean, std, e);
                         });
}

Tensor bernoulli_tensor(const Tensor& p, const Generator* g) {
    if (!p.defined())
        throw value_error("bernoulli: undefined probabilities");
    require_floating("bernoulli", p.sizes(), p.dtype());
    NoGradGuard no_grad;
    // LibTorch reads p on the host in the order it visits the result: index order
    const std::vector<double> pv = p.detach().to(kFloat64).contiguous().to_vector<double>();
    std::vector<float> pf;
    if (p.dtype() == kFloat32)
        pf.assign(pv.begin(), pv.end());
    const Dtype d = p.dtype();
    Tensor t = runtime::empty(p.sizes(), d, p.device(), "bernoulli");
    runtime::fill_random(
        t, g,
        [&](void* dst, int64_t n, bool, detail::Engine& e) {
            const void* src = d == kFloat32 ? static_cast<const void*>(pf.data()) : pv.data();
            detail::bernoulli(dst, d, src, d, n, e, "bernoulli");
        },
        "bernoulli");
    return t;
}

}  // namespace

void manual_seed(uint64_t seed) {
    detail::seed_default(seed);
}

Tensor randn(const Shape& s, const TensorOptions& o) {
    return random_tensor(s, true, o, nullptr);
}
Tensor randn(const Shape& s, const Generator& g, const TensorOptions& o) {
    return random_tensor(s, true, o, &g);
}
Tensor rand(const Shape& s, const TensorOptions& o) {
    return random_tensor(s, false, o, nullptr);
}
Tensor rand(const Shape& s, const Generator& g, const TensorOptions& o) {
    return random_tensor(s, false, o, &g);
}
Tensor randint(int64_t low, int64_t high, const Shape& s, const TensorOptions& o) {
    return random_ints(low, high, s, o, nullptr);
}
Tensor randint(int64_t low, int64_t high, const Shape& s, const Generator& g,
               const TensorOptions& o) {
    return random_ints(low, high, s, o, &g);
}
Tensor randint(int64_t high, const Shape& s, const TensorOptions& o) {
    return random_ints(0, high, s, o, nullptr);
}
Tensor randperm(int64_t n, const TensorOptions& o) {
    return permutation(n, o, nullptr);
}
Tensor randperm(int64_t n, const Generator& g, const TensorOptions& o) {
    return permutation(n, o, &g);
}
Tensor bernoulli(const Tensor& p) {
    return bernoulli_tensor(p, nullptr);
}
Tensor bernoulli(const Tensor& p, const Generator& g) {
    return bernoulli_tensor(p, &g);
}

Tensor& Tensor::uniform_(double lo, double hi) {
    return fill_random_(*this, false, lo, hi, nullptr);
}
Tensor& Tensor::uniform_(double lo, double hi, const Generator& g) {
    return fill_random_(*this, false, lo, hi, &g);
}
Tensor& Tensor::normal_(double mean, double std) {
    return fill_random_(*this, true, mean, std, nullptr);
}
Tensor& Tensor::normal_(double mean, double std, const Generator& g) {
    return fill_random_(*this, true, mean, std, &g);
}
Tensor& Tensor::bernoulli_(double p) {
    return bernoulli_scalar_(*this, p, nullptr);
}
Tensor& Tensor::bernoulli_(double p, const Generator& g) {
    return bernoulli_scalar_(*this, p, &g);
}
Tensor& Tensor::exponential_(double lambd) {
    return exponential_in_place(*this, lambd, nullptr);
}
Tensor& Tensor::exponential_(double lambd, const Generator& g) {
    return exponential_in_place(*this, lambd, &g);
}

}  // namespace tg

namespace tg::detail {

Tensor& TensorMethods::geometric_(double p) {
    return geometric_in_place(self(), p, nullptr);
}
Tensor& TensorMethods::geometric_(double p, const Generator& g) {
    return geometric_in_place(self(), p, &g);
}
Tensor& TensorMethods::cauchy_(double median, double sigma) {
    return cauchy_in_place(self(), median, sigma, nullptr);
}
Tensor& TensorMethods::cauchy_(double median, double sigma, const Generator& g) {
    return cauchy_in_place(self(), median, sigma, &g);
}
Tensor& TensorMethods::log_normal_(double mean, double std) {
    return log_normal_in_place(self(), mean, std, nullptr);
}
Tensor& TensorMethods::log_normal_(double mean, double std, const Generator& g) {
    return log_normal_in_place(self(), mean, std, &g);
}
Tensor& TensorMethods::random_() {
    return random_in_place(self(), std::nullopt, nullptr);
}
Tensor& TensorMethods::random_(const Generator& g) {
    return random_in_place(self(), std::nullopt, &g);
}
Tensor& TensorMethods::random_(int64_t to) {
    return random_in_place(self(), std::pair<int64_t, int64_t>(0, to), nullptr);
}
Tensor& TensorMethods::random_(int64_t to, const Generator& g) {
    return random_in_place(self(), std::pair<int64_t, int64_t>(0, to), &g);
}
Tensor& TensorMethods::random_(int64_t from, int64_t to) {
    return random_in_place(self(), std::pair<int64_t, int64_t>(from, to), nullptr);
}
Tensor& TensorMethods::random_(int64_t from, int64_t to, const Generator& g) {
    return random_in_place(self(), std::pair<int64_t, int64_t>(from, to), &g);
}

}  // namespace tg::detail
