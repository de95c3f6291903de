// interpolate (F::interpolate): nearest, nearest-exact, (bi/tri)linear and area resampling of
// the spatial dims of [N, C, ...]. Each dim is resampled in turn by index_select (and, for the
// linear modes, a weighted sum of two of them), so it records, differentiates and runs on
// every device as those do; the source positions follow PyTorch's formulas exactly.
#include <cmath>
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "tapegrad/ops.hpp"
#include "tapegrad/resampling.hpp"

namespace tg {

namespace {

const char* mode_name(InterpolateMode m) {
    switch (m) {
        case kNearest:
            return "nearest";
        case kNearestExact:
            return "nearest-exact";
        case kLinear:
            return "linear";
        case kBilinear:
            return "bilinear";
        case kBicubic:
            return "bicubic";
        case kTrilinear:
            return "trilinear";
        default:
            return "area";
    }
}

/// Position in the input of output index j (PyTorch's area_pixel_compute_source_index).
double linear_source(int64_t j, double scale, bool align_corners) {
    if (align_corners)
        return double(j) * scale;
    return std::max(0.0, (double(j) + 0.5) * scale - 0.5);
}

/// x resampled along dim d from n to m elements; scale is PyTorch's input/output step.
Tensor resample_dim(const Tensor& x, int64_t d, int64_t m, double scale, InterpolateMode mode,
                    bool align_corners) {
    const int64_t n = x.size(d);
    const TensorOptions io = TensorOptions(kInt64).device(x.device());
    const auto len = static_cast<size_t>(m);
    std::vector<int64_t> i0(len), i1(len);
    std::vector<double> w1(len);
    for (int64_t j = 0; j < m; ++j) {
        if (mode == kNearest || mode == kNearestExact) {
            const double off = mode == kNearestExact ? 0.5 : 0.0;
            i0[size_t(j)] = std::min(int64_t(std::floor((double(j) + off) * scale)), n - 1);
            continue;
        }
        const double s = linear_source(j, scale, align_corners);
        const int64_t lo = std::min(int64_t(s), n - 1);
        i0[size_t(j)] = lo;
        i1[size_t(j)] = lo + (lo < n - 1 ? 1 : 0);
        w1[size_t(j)] = s - double(lo);
    }
    const Tensor a = index_select(x, d, tensor(i0, io));
    if (mode == kNearest || mode == kNearestExact)
        return a;
    Shape ws(size_t(x.dim()), 1);
    ws[size_t(d)] = m;
    const Tensor w = tensor(w1, TensorOptions(x.dtype()).device(x.device())).reshape(ws);
    return a + (index_select(x, d, tensor(i1, io)) - a) * w;
}

/// x resampled along dim d by PyTorch's cubic convolution (A = -0.75): four taps around
/// (j+½)·s-½ (not clamped at 0, unlike the linear modes), their indices clamped to the edges.
Tensor cubic_dim(const Tensor& x, int64_t d, int64_t m, double scale, bool align_corners) {
    const int64_t n = x.size(d);
    const auto len = static_cast<size_t>(m);
    std::vector<std::vector<int64_t>> idx(4, std::vector<int64_t>(len));
    std::vector<std::vector<double>> w(4, std::vector<double>(len));
    const double a = -0.75;
    auto near = [&](double u) { return ((a + 2) * u - (a + 3)) * u * u + 1; };       // |u| <= 1
    auto far = [&](double u) { return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a; };  // 1..2
    for (size_t j = 0; j < len; ++j) {
        const double s = align_corners ? double(j) * scale : (double(j) + 0.5) * scale - 0.5;
        const double f = std::floor(s), t = s - f;
        const double wk[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
        for (int k = 0; k < 4; ++k) {
            idx[size_t(k)][j] = std::min(std::max(int64_t(f) - 1 + k, int64_t(0)), n - 1);
            w[size_t(k)][j] = wk[k];
        }
    }
    Shape ws(size_t(x.dim()), 1);
    ws[size_t(d)] = m;
    Tensor y;
    for (size_t k = 0; k < 4; ++k) {
        const Tensor term =
            index_select(x, d, tensor(idx[k], TensorOptions(kInt64).device(x.device()))) *
            tensor(w[k], TensorOptions(x.dtype()).device(x.device())).reshape(ws);
        y = y.defined() ? y + term : term;
    }
    return y;
}

}  // namespace

Tensor interpolate(const Tensor& x, const std::vector<int64_t>& size,
                   const std::vector<double>& scale_factor, InterpolateMode mode,
                   std::optional<bool> align_corners) {
    const std::string op =
        std::string("interpolate: ") + mode_name(mode) + " mode, input " + shape_str(x.sizes());
    const int64_t k = x.dim() - 2;  // spatial dims
    if (k < 1 || k > 3)
        throw shape_error(op + ": expected a 3-, 4- or 5-dim input [N, C, ...]");
    const int64_t needs = mode == kLinear ? 1 : mode == kBilinear || mode == kBicubic ? 2 : 3;
    if ((mode == kLinear || mode == kBilinear || mode == kTrilinear || mode == kBicubic) &&
        k != needs)
        throw shape_error(op + ": needs a " + std::to_string(needs + 2) + "-dim input");
    const bool linear =
        mode == kLinear || mode == kBilinear || mode == kTrilinear || mode == kBicubic;
    if (align_corners.has_value() && !linear)
        throw value_error(op + ": align_corners can only be set with the linear modes");
    if (size.empty() == scale_factor.empty())
        throw value_error(op + ": give exactly one of size and scale_factor");
    if (!size.empty() && int64_t(size.size()) != k)
        throw shape_error(op + ": size has " + std::to_string(size.size()) + " entries, expected " +
                          std::to_string(k));
    if (!scale_factor.empty() && int64_t(scale_factor.size()) != k)
        throw shape_error(op + ": scale_factor has " + std::to_string(scale_factor.size()) +
                          " entries, expected " + std::to_string(k));
    if (linear && !is_floating(x.dtype()))
        throw dtype_error(op + ": needs a floating input, got " + dtype_name(x.dtype()));
    const bool corners = align_corners.value_or(false);
    std::vector<int64_t> out(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) {
        const int64_t n = x.size(2 + i);
        if (!scale_factor.empty() &&
            !(scale_factor[size_t(i)] > 0 && std::isfinite(scale_factor[size_t(i)])))
            throw value_error(op + ": scale_factor " + std::to_string(scale_factor[size_t(i)]) +
                              " must be positive and finite");
        out[size_t(i)] = size.empty() ? int64_t(std::floor(double(n) * scale_factor[size_t(i)]))
                                      : size[size_t(i)];
        if (n < 1 || out[size_t(i)] < 1)
            throw shape_error(op + ": input and output sizes must be positive, got output size " +
                              std::to_string(out[size_t(i)]) + " for dim " + std::to_string(2 + i));
    }
    const ComposedName named;
    Tensor y = x;
    if (mode == kArea) {  // windows [⌊j·n/m⌋, ⌈(j+1)·n/m⌉): adaptive average pooling
        if (k == 3)
            throw value_error(op + ": area mode supports 3- and 4-dim inputs");
        y = k == 1 ? adaptive_avg_pool2d(x.unsqueeze(2), IntArg({1, out[0]})).squeeze(2)
                   : adaptive_avg_pool2d(x, IntArg({out[0], out[1]}));
        return y;
    }
    for (int64_t i = 0; i < k; ++i) {
        const int64_t n = x.size(2 + i), m = out[size_t(i)];
        double scale;
        if (linear && corners)
            scale = m > 1 ? double(n - 1) / double(m - 1) : 0.0;
        else if (!scale_factor.empty())
            scale = 1.0 / scale_factor[size_t(i)];
        else
            scale = double(n) / double(m);
        y = mode == kBicubic ? cubic_dim(y, 2 + i, m, scale, corners)
                             : resample_dim(y, 2 + i, m, scale, mode, corners);
    }
    static const char* const kNames[4][3] = {
        {"UpsampleNearest1DBackward0", "UpsampleNearest2DBackward0", "UpsampleNearest3DBackward0"},
        {"UpsampleNearestExact1DBackward0", "UpsampleNearestExact2DBackward0",
         "UpsampleNearestExact3DBackward0"},
        {"UpsampleLinear1DBackward0", "UpsampleBilinear2DBackward0",
         "UpsampleTrilinear3DBackward0"},
        {"", "UpsampleBicubic2DBackward0", ""}};
    const int row = mode == kNearest ? 0 : mode == kNearestExact ? 1 : mode == kBicubic ? 3 : 2;
    return named(y, "interpolate", kNames[row][k - 1]);
}

}  // namespace tg
