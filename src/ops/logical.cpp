// Comparisons, logic, any/all, nonzero and masked_select: the ops that make and read bool tensors
// (Note [Bool tensors] in runtime/dispatch.cpp). None records but masked_select.
#include <cmath>
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

using runtime::BinaryOp;

namespace {
/// The tensor as 0/1 int64 (nonzero and NaN are 1).
Tensor bits(const Tensor& t) {
    return (t.dtype() == kBool ? t : t.to(kBool)).to(kInt64);
}

/// a op s in result_type(a, s) (Note [Type promotion]), s converted into it as LibTorch converts
/// it: uint8 > 300 compares with 44, int64 < 1.5 compares in float32.
Tensor compare_scalar(BinaryOp op, const Tensor& a, Scalar s, const char* name) {
    const Dtype d = result_type(a, s);
    const Tensor x = runtime::converted(a, d);
    return runtime::compare(op, x, promote::scalar_tensor(s, x.options()), name);
}

/// a op b in result_type(a, b).
Tensor compare_promoted(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
    const Dtype d = result_type(a, b);
    return runtime::compare(op, runtime::converted(a, d), runtime::converted(b, d), name);
}

void check_bool(const char* op, const Tensor& t) {
    if (t.dtype() != kBool)
        throw dtype_error(std::string(op) + ": " + shape_str(t.sizes()) + " " +
                          dtype_name(t.dtype()) +
                          ": defined for bool tensors (use logical_not/and/or/xor, or a "
                          "comparison, for other dtypes)");
}

Tensor zero_like_int(const Tensor& t) {
    return zeros({}, TensorOptions(kInt64).device(t.device()));
}

/// any (all = false) along dims, by counting the nonzero elements.
Tensor count_test(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, bool all) {
    const Tensor b = bits(x);
    const Tensor n = sum(b, dims, keepdim);
    if (!all)
        return gt(n, 0);
    const int64_t per = n.numel() ? x.numel() / n.numel() : 0;
    return eq(n, per);
}
}  // namespace

// ---- comparisons
Tensor eq(const Tensor& a, const Tensor& b) {
    return compare_promoted(BinaryOp::eq, a, b, "eq");
}
Tensor ne(const Tensor& a, const Tensor& b) {
    return compare_promoted(BinaryOp::ne, a, b, "ne");
}
Tensor gt(const Tensor& a, const Tensor& b) {
    return compare_promoted(BinaryOp::gt, a, b, "gt");
}
Tensor lt(const Tensor& a, const Tensor& b) {
    return compare_promoted(BinaryOp::lt, a, b, "lt");
}
Tensor ge(const Tensor& a, const Tensor& b) {
    return compare_promoted(BinaryOp::ge, a, b, "ge");
}
Tensor le(const Tensor& a, const Tensor& b) {
    return compare_promoted(BinaryOp::le, a, b, "le");
}
Tensor eq(const Tensor& a, Scalar s) {
    return compare_scalar(BinaryOp::eq, a, s, "eq");
}
Tensor ne(const Tensor& a, Scalar s) {
    return compare_scalar(BinaryOp::ne, a, s, "ne");
}
Tensor gt(const Tensor& a, Scalar s) {
    return compare_scalar(BinaryOp::gt, a, s, "gt");
}
Tensor lt(const Tensor& a, Scalar s) {
    return compare_scalar(BinaryOp::lt, a, s, "lt");
}
Tensor ge(const Tensor& a, Scalar s) {
    return compare_scalar(BinaryOp::ge, a, s, "ge");
}
Tensor le(const Tensor& a, Scalar s) {
    return compare_scalar(BinaryOp::le, a, s, "le");
}
Tensor operator==(const Tensor& a, const Tensor& b) {
    return eq(a, b);
}
Tensor operator!=(const Tensor& a, const Tensor& b) {
    return ne(a, b);
}
Tensor operator>(const Tensor& a, const Tensor& b) {
    return gt(a, b);
}
Tensor operator<(const Tensor& a, const Tensor& b) {
    return lt(a, b);
}
Tensor operator>=(const Tensor& a, const Tensor& b) {
    return ge(a, b);
}
Tensor operator<=(const Tensor& a, const Tensor& b) {
    return le(a, b);
}
Tensor operator==(const Tensor& a, Scalar s) {
    return eq(a, s);
}
Tensor operator!=(const Tensor& a, Scalar s) {
    return ne(a, s);
}
Tensor operator>(const Tensor& a, Scalar s) {
    return gt(a, s);
}
Tensor operator<(const Tensor& a, Scalar s) {
    return lt(a, s);
}
Tensor operator>=(const Tensor& a, Scalar s) {
    return ge(a, s);
}
Tensor operator<=(const Tensor& a, Scalar s) {
    return le(a, s);
}

// ---- logic
Tensor logical_not(const Tensor& x) {
    return runtime::compare(BinaryOp::eq, bits(x), zero_like_int(x), "logical_not");
}
Tensor logical_and(const Tensor& a, const Tensor& b) {
    return runtime::compare(BinaryOp::ne,
                            runtime::binary(BinaryOp::mul, bits(a), bits(b), "logical_and"),
                            zero_like_int(a), "logical_and");
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
    return runtime::compare(BinaryOp::ne,
                            runtime::binary(BinaryOp::maximum, bits(a), bits(b), "logical_or"),
                            zero_like_int(a), "logical_or");
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
    return runtime::compare(BinaryOp::ne, bits(a), bits(b), "logical_xor");
}
Tensor operator~(const Tensor& m) {
    check_bool("bitwise_not", m);
    return logical_not(m);
}
Tensor operator&(const Tensor& a, const Tensor& b) {
    check_bool("bitwise_and", a);
    check_bool("bitwise_and", b);
    return logical_and(a, b);
}
Tensor operator|(const Tensor& a, const Tensor& b) {
    check_bool("bitwise_or", a);
    check_bool("bitwise_or", b);
    return logical_or(a, b);
}
Tensor operator^(const Tensor& a, const Tensor& b) {
    check_bool("bitwise_xor", a);
    check_bool("bitwise_xor", b);
    return logical_xor(a, b);
}

// ---- any / all
Tensor any(const Tensor& x) {
    return count_test(x, {}, false, false);
}
Tensor all(const Tensor& x) {
    return count_test(x, {}, false, true);
}
Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
    return count_test(x, {wrap_dim(dim, x.dim(), "any")}, keepdim, false);
}
Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
    return count_test(x, {wrap_dim(dim, x.dim(), "all")}, keepdim, true);
}

// ---- masks to indices
namespace {
/// The row-major positions of the nonzero elements of t (read back to the host).
std::vector<int64_t> nonzero_positions(const Tensor& t) {
    const std::vector<int64_t> v = bits(t).to_vector<int64_t>();
    std::vector<int64_t> pos;
    for (size_t i = 0; i < v.size(); ++i)
        if (v[i])
            pos.push_back(int64_t(i));
    return pos;
}
}  // namespace

Tensor nonzero(const Tensor& x) {
    const std::vector<int64_t> pos = nonzero_positions(x);
    const int64_t n = int64_t(pos.size()), nd = x.dim();
    std::vector<int64_t> idx(size_t(n * nd));
    for (int64_t i = 0; i < n; ++i) {
        int64_t r = pos[size_t(i)];
        for (int64_t d = nd; d-- > 0;) {
            idx[size_t(i * nd + d)] = r % x.size(d);
            r /= x.size(d);
        }
    }
    return tensor(idx, TensorOptions(kInt64).device(x.device())).reshape({n, nd});
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
    checks::same_device("masked_select", "mask", mask, x);
    const Shape s = broadcast_shapes(x.sizes(), mask.sizes(), "masked_select");
    const std::vector<int64_t> pos = nonzero_positions(mask.expand(s));
    const Tensor index = tensor(pos, TensorOptions(kInt64).device(x.device()));
    const ComposedName named;
    return named(index_select(x.expand(s).reshape({-1}), 0, index), "masked_select",
                 "MaskedSelectBackward0");
}

}  // namespace tg
