// Type promotion (Note [Type promotion] in tapegrad/promotion.hpp): result_type and the helpers
// the ops convert their operands with (ops/promote.hpp).
#include <optional>
#include <string>

#include "backend/convert.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"

namespace tg {

namespace {
using Maybe = std::optional<Dtype>;

Maybe promote(Maybe a, Dtype b) {
    return a ? promote_types(*a, b) : b;
}
/// LibTorch's combine_categories: the lower tier matters only when it is of a higher kind, or
/// the higher tier is bool.
Maybe combine(Maybe higher, Maybe lower) {
    if (!higher)
        return lower;
    if (!lower || is_floating(*higher))
        return higher;
    if (*higher == kBool || is_floating(*lower))
        return promote_types(*higher, *lower);
    return higher;
}
struct Tiers {
    Maybe dims, zero_dim, scalars;
    void add(const Tensor& t) {
        if (t.dim() == 0)
            zero_dim = promote(zero_dim, t.dtype());
        else
            dims = promote(dims, t.dtype());
    }
    void add(Scalar s) {  // a floating Scalar counts as the default dtype, float32
        scalars = promote(scalars, s.isFloatingPoint() ? kFloat32 : s.type());
    }
    Dtype result() const { return *combine(dims, combine(zero_dim, scalars)); }
};
}  // namespace

Dtype result_type(const Tensor& a, const Tensor& b) {
    Tiers t;
    t.add(a);
    t.add(b);
    return t.result();
}
Dtype result_type(const Tensor& a, Scalar s) {
    Tiers t;
    t.add(a);
    t.add(s);
    return t.result();
}
Dtype result_type(Scalar s, const Tensor& a) {
    return result_type(a, s);
}
Dtype result_type(Scalar a, Scalar b) {
    Tiers t;
    t.add(a);
    t.add(b);
    return t.result();
}

namespace promote {

Tensor to(const Tensor& x, Dtype d) {
    return x.dtype() == d ? x : x.to(d);
}
std::pair<Tensor, Tensor> both(const Tensor& a, const Tensor& b) {
    const Dtype d = result_type(a, b);
    return {to(a, d), to(b, d)};
}
std::pair<Tensor, Tensor> both_floating(const Tensor& a, const Tensor& b) {
    Dtype d = result_type(a, b);
    if (!is_floating(d))
        d = kFloat32;
    return {to(a, d), to(b, d)};
}
Tensor floating(const Tensor& x) {
    return is_floating(x.dtype()) ? x : x.to(kFloat32);
}

double value_in(Dtype d, Scalar s) {
    return dispatch_all(d, [&](auto tag) {
        using T = decltype(tag);
        const T v = s.isFloatingPoint() ? backend::convert<T>(s.toDouble())
                                        : backend::convert<T>(s.to<int64_t>());
        return backend::convert<double>(v);
    });
}

Tensor scalar_tensor(Scalar s, const TensorOptions& o) {
    Tensor t = runtime::empty({}, o.dtype(), o.device(), "scalar_tensor");
    dispatch_all(o.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T v = s.isFloatingPoint() ? backend::convert<T>(s.toDouble())
                                        : backend::convert<T>(s.to<int64_t>());
        runtime::be(t).from_host(t.impl()->storage->data, 0, &v, sizeof v);
    });
    return t;
}

double checked_in(Dtype d, Scalar s, const char* op) {
    try {
        return dispatch_all(d, [&](auto tag) {
            using T = decltype(tag);
            return backend::convert<double>(s.to<T>());
        });
    } catch (const value_error& e) {
        throw value_error(std::string(op) + ": " + e.what() + " (a " + dtype_name(d) + " tensor)");
    }
}

void check_can_cast(const char* op, Dtype result, const Tensor& self) {
    if (!can_cast(result, self.dtype()))
        throw dtype_error(std::string(op) + ": result type " + dtype_name(result) +
                          " can't be cast to the desired output type " + dtype_name(self.dtype()) +
                          " of " + shape_str(self.sizes()));
}

}  // namespace promote
}  // namespace tg
