#pragma once
/// The op test table: one row per test of an op of include/tapegrad/ops.hpp, read by two suites.
/// - test_ops_grad.cpp (CPU, float64 leaves): gradcheck of the raw (possibly non-scalar) output,
///   gradcheck of sum(output * w) with a fixed random w (a non-uniform upstream gradient),
///   gradgradcheck of the latter, and float32 forward values and gradients against float64;
/// - backend_conformance.hpp (test_backend_opencl.cpp, test_backend_cuda.cpp): the row run on
///   the CPU and on the device from the same inputs, float32 and float64, with the inputs laid
///   out as their specs say and again with transposed storage; forward values and input
///   gradients compared.
///
/// HOW TO ADD A TEST (one line): append a row to the table of the op's family, in
/// op_cases_<family>.hpp (arithmetic, activations, linalg, reductions, shape, losses,
/// comparisons, conv, conv3d, norm, transformer, nn_more, rnn):
///
///     {"my_op_bcast", {U({3, 1}), P({4})}, F(tg::my_op(x[0], x[1]))},
///
/// - the name must be unique (failures are reported with it; it also seeds the input values);
/// - each input spec gives a shape, a value range and a memory layout:
///     U  uniform in [-1, 1)        P  positive, in [0.5, 2)       NZ  |x| in [0.2, 1), random sign
///     Q  in [0.1, 0.9) (probabilities)
///     and the layout suffix T = transposed leaf (last two dims swapped in memory), S = strided
///     leaf (a narrow() of a wider buffer), e.g. UT({3, 4}) is a non-contiguous [3,4] leaf.
///   Domain restrictions belong here (P for log/sqrt, NZ for abs/relu), not in the function;
/// - F(expr) builds the function of `x` (a std::vector<tg::Tensor> of leaves: float64 or float32,
///   on the CPU or on a device). Constants (labels, targets, masks, indices) are built before the
///   table, on the CPU, and captured by value; pass them through on(c, x[0]), which moves them to
///   x[0]'s device and, for float constants, converts them to x[0]'s dtype;
/// - the optional last field drops checks (flags may be or-ed):
///     kNoGG        no gradgradcheck (op not twice differentiable at these inputs);
///     kNoF32       no float32-vs-float64 comparison in the gradcheck suite (random masks,
///                  outputs that are always float64); the device suite still runs float32;
///     kNoFD        no finite-difference checks (gradcheck, gradgradcheck): too many elements for
///                  them; float32-vs-float64 and device-vs-CPU gradients are still compared;
///     kValuesOnly  the output is not differentiable (int64 masks, indices): forward values only
///                  (float32 against float64, device against CPU), and the gradcheck suite
///                  checks that the output does not require grad;
///     kNoTransposedStorage  the device suite runs the row with its specs' layouts only (ops
///                  that need compatible strides, e.g. view()).
///
/// Keep inputs away from kinks and singularities (abs/relu at 0, clamp bounds, max ties, log/sqrt
/// at <= 0): finite differences use eps = 1e-6.
///
/// ZERO-SIZE ROWS: every family has rows whose inputs have a dim of size 0 (named *_empty*).
/// Both suites run them like any row: a zero-element input or output simply has an empty
/// Jacobian, so gradcheck compares the entries there are (the weighted check still sees, say,
/// a bias gradient that must be 0 for an empty batch), and the values are compared as usual.
/// Layouts T and S of a zero-element leaf are whatever its shape allows (make_leaf narrows an
/// empty last dim from 0), so the suites do not ask such a leaf to be non-contiguous. Avoid
/// outputs that are NaN by definition (mean or var over an empty dim): NaN never compares equal.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/indexing.hpp"
#include "test_util.hpp"

namespace opcases {

using V = std::vector<tg::Tensor>;
using Dims = std::vector<int64_t>;  // tg::var(x, {1}) would pick var(x, bool unbiased)
using tg::Shape;

enum class Dist { Uniform, Positive, NonZero, Unit };
enum class Layout { Contiguous, Transposed, Strided };

/// One input of a row: shape, value distribution, memory layout.
struct In {
    Shape shape;
    Dist dist = Dist::Uniform;
    Layout layout = Layout::Contiguous;
};
inline In U(Shape s) {
    return {std::move(s), Dist::Uniform, Layout::Contiguous};
}
inline In P(Shape s) {
    return {std::move(s), Dist::Positive, Layout::Contiguous};
}
inline In NZ(Shape s) {
    return {std::move(s), Dist::NonZero, Layout::Contiguous};
}
inline In Q(Shape s) {
    return {std::move(s), Dist::Unit, Layout::Contiguous};
}
inline In UT(Shape s) {
    return {std::move(s), Dist::Uniform, Layout::Transposed};
}
inline In PT(Shape s) {
    return {std::move(s), Dist::Positive, Layout::Transposed};
}
inline In US(Shape s) {
    return {std::move(s), Dist::Uniform, Layout::Strided};
}

// Checks a row skips (see the header comment).
constexpr int kNoGG = 1;
constexpr int kNoF32 = 2;
constexpr int kNoFD = 4;
constexpr int kValuesOnly = 8;
constexpr int kNoTransposedStorage = 16;

struct OpCase {
    std::string name;
    std::vector<In> inputs;
    std::function<tg::Tensor(const V&)> fn;
    int flags = 0;
};

/// A table of one op family, as a test case of either suite reads it.
struct Family {
    std::string name;
    std::vector<OpCase> cases;
};

#define F(expr) [=](const V& x) -> tg::Tensor { return (expr); }

/// c on ref's device; a float c also takes ref's dtype (integer ones stay int64).
inline tg::Tensor on(const tg::Tensor& c, const tg::Tensor& ref) {
    const tg::Tensor t = tg::is_floating(c.dtype()) ? c.to(ref.dtype()) : c;
    return t.to(ref.device());
}

inline tg::Tensor labels(std::vector<int64_t> v) {
    return tg::tensor(v);
}
inline tg::Tensor index_of(std::vector<int64_t> v, const Shape& s) {
    return tg::tensor(v).reshape(s);
}
/// t after the in-place op f: rows of in-place spellings run on a non-leaf (x * 1.0), whose
/// history the op takes over.
inline tg::Tensor inplace_on(tg::Tensor t, const std::function<void(tg::Tensor&)>& f) {
    f(t);
    return t;
}

inline std::vector<double> dist_values(const In& in, int64_t n, uint64_t seed) {
    switch (in.dist) {
        case Dist::Positive:
            return tgtest::random_values(n, seed, 0.5, 2.0);
        case Dist::Unit:
            return tgtest::random_values(n, seed, 0.1, 0.9);
        case Dist::NonZero: {
            auto mag = tgtest::random_values(n, seed, 0.2, 1.0);
            auto sgn = tgtest::random_values(n, seed + 7, -1.0, 1.0);
            for (size_t i = 0; i < mag.size(); ++i)
                mag[i] = sgn[i] < 0 ? -mag[i] : mag[i];
            return mag;
        }
        default:
            return tgtest::random_values(n, seed, -1.0, 1.0);
    }
}

/// Input `in` of a row as a leaf of dtype dt on dev, laid out in memory as in.layout says; its
/// values depend only on (in, seed) (rounded to dt), not on dev or transposed_storage, which also
/// swaps the last two dims of the underlying buffer (the device suite's second layout).
inline tg::Tensor make_leaf(const In& in, uint64_t seed, tg::Dtype dt = tg::kFloat64,
                            tg::Device dev = tg::Device::cpu(), bool transposed_storage = false,
                            bool requires_grad = true) {
    tg::NoGradGuard guard;
    const Shape& s = in.shape;
    Shape mem = s;  // the buffer's logical shape
    const bool transposed = in.layout == Layout::Transposed && s.size() >= 2;
    const bool strided = in.layout != Layout::Contiguous && !transposed && !s.empty();
    if (transposed)
        std::swap(mem[mem.size() - 1], mem[mem.size() - 2]);
    else if (strided)
        mem.back() *= 2;
    tg::Tensor x = tgtest::from_values(dist_values(in, tg::numel_of(mem), seed), mem, dt);
    if (transposed_storage && mem.size() >= 2)
        x = x.transpose(-1, -2).contiguous().to(dev).transpose(-1, -2);
    else
        x = x.to(dev);
    if (transposed)
        x = x.transpose(-1, -2);
    else if (strided)
        x = x.narrow(-1, s.back() > 0 ? 1 : 0, s.back());  // an empty last dim: the whole of it
    x = x.detach();
    if (requires_grad)
        x.requires_grad_(true);
    return x;
}

/// The seed of a row's inputs (input i uses seed + i) and of its upstream gradient (seed + 1000).
inline uint64_t name_seed(const std::string& name) {
    return std::hash<std::string>{}(name) % 100000;
}

}  // namespace opcases

#include "op_cases_activations.hpp"
#include "op_cases_arithmetic.hpp"
#include "op_cases_comparisons.hpp"
#include "op_cases_conv.hpp"
#include "op_cases_conv3d.hpp"
#include "op_cases_linalg.hpp"
#include "op_cases_losses.hpp"
#include "op_cases_nn_more.hpp"
#include "op_cases_norm.hpp"
#include "op_cases_reductions.hpp"
#include "op_cases_rnn.hpp"
#include "op_cases_shape.hpp"
#include "op_cases_transformer.hpp"

#undef F  // the rows' shorthand; not for the files that include this one

namespace opcases {

/// Every family's table, as the device suite runs them. A new family needs its header included
/// above, a line here and a test case of the same name in test_ops_grad.cpp (checked there).
inline std::vector<Family> all_families() {
    return {{"arithmetic", arithmetic_cases()},  {"activations", activation_cases()},
            {"linear_algebra", linalg_cases()},  {"reductions", reduction_cases()},
            {"shape_ops", shape_cases()},        {"losses", loss_cases()},
            {"comparisons", comparison_cases()}, {"convolution", conv_cases()},
            {"normalization", norm_cases()},     {"transformer", transformer_cases()},
            {"spatial", conv3d_cases()},         {"nn_more", nn_more_cases()},
            {"recurrent", rnn_cases()}};
}

}  // namespace opcases
