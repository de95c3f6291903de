// The pools composed of other ops: LP pooling (an average pool of x^p), max unpooling (a
// recorded scatter whose backward gathers, as LibTorch's) and fractional max pooling (LibTorch's
// pseudo-random windows, gathered, then a max over each window's taps).
#include <cmath>
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "ops/conv_gemm.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

std::string where(const char* op, const Tensor& x) {
    return std::string(op) + ": input " + (x.defined() ? shape_str(x.sizes()) : "undefined");
}

/// x with a batch dim: (nd+2)-dim, or an unbatched (nd+1)-dim x with N = 1.
Tensor batched(const char* op, const Tensor& x, int nd) {
    if (!x.defined())
        throw value_error(where(op, x));
    runtime::check_float_kernels(op, x);
    if (x.dim() == nd + 2)
        return x;
    if (x.dim() == nd + 1)
        return x.unsqueeze(0);
    throw shape_error(where(op, x) + ": expected " + std::to_string(nd + 2) +
                      " dims [N, C, ...] or " + std::to_string(nd + 1) + " unbatched");
}

/// y = (sign(a)·relu(|a|)·Π k)^(1/p), a = avg_pool(x^p): LibTorch's lp_pool.
Tensor lp_finish(const Tensor& avg, double norm_type, const std::vector<int64_t>& k) {
    int64_t taps = 1;
    for (int64_t v : k)
        taps *= v;
    return pow((sign(avg) * relu(abs(avg))) * taps, 1.0 / norm_type);
}

/// The spatial output size of an unpooling: given (the spatial dims, or N, C and them), each
/// within a stride of the default (in - 1)·s + k - 2·p.
std::vector<int64_t> unpool_size(const char* op, const Tensor& xb, int nd,
                                 const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                                 const std::vector<int64_t>& p,
                                 const std::optional<std::vector<int64_t>>& output_size) {
    std::vector<int64_t> def;
    for (int i = 0; i < nd; ++i)
        def.push_back((xb.size(2 + i) - 1) * s[size_t(i)] + k[size_t(i)] - 2 * p[size_t(i)]);
    if (!output_size)
        return def;
    std::vector<int64_t> o = *output_size;
    if (o.size() == size_t(nd + 2))
        o.erase(o.begin(), o.begin() + 2);
    if (o.size() != size_t(nd))
        throw shape_error(where(op, xb) + ": output_size should have " + std::to_string(nd) +
                          " or " + std::to_string(nd + 2) + " elements, got " +
                          std::to_string(output_size->size()));
    for (int i = 0; i < nd; ++i) {
        const size_t u = size_t(i);
        if (o[u] < def[u] - s[u] || o[u] > def[u] + s[u])
            throw value_error(where(op, xb) + ": output_size dim " + std::to_string(i) + " is " +
                              std::to_string(o[u]) + ", expected between " +
                              std::to_string(def[u] - s[u]) + " and " +
                              std::to_string(def[u] + s[u]));
    }
    return o;
}

/// y = zeros [N, C, out...] with y[idx] = x (the last write wins where indices repeat, as
/// LibTorch's loop); dx = gather(dy, idx) for every element, as LibTorch's backward.
Tensor unpool(const char* op, int nd, const Tensor& x, const Tensor& indices,
              const std::vector<int64_t>& out) {
    const Tensor xb = batched(op, x, nd);
    if (!indices.defined() || indices.dtype() != kInt64 || indices.sizes() != x.sizes())
        throw shape_error(where(op, x) + ": indices " +
                          (indices.defined()
                               ? shape_str(indices.sizes()) + " " + dtype_name(indices.dtype())
                               : std::string("undefined")) +
                          ": expected int64 of the input's shape");
    if (indices.device() != x.device())
        throw device_error(where(op, x) + " on " + x.device().str() + ", indices on " +
                           indices.device().str());
    const int64_t N = xb.size(0), C = xb.size(1);
    int64_t L = 1;
    for (int64_t v : out)
        L *= v;
    const Tensor idx = (x.dim() == nd + 2 ? indices : indices.unsqueeze(0)).reshape({N, C, -1});
    if (idx.numel() > 0) {
        NoGradGuard no_grad;
        if ((logical_or(lt(idx, 0), ge(idx, L))).any().item<bool>())
            throw value_error(where(op, x) + ": found an invalid max index (outside [0, " +
                              std::to_string(L) + "))");
    }
    Shape ys{N, C};
    ys.insert(ys.end(), out.begin(), out.end());
    Tensor y;
    {
        NoGradGuard no_grad;
        // the last of each run of equal indices (sorted stably) is the write that stays
        auto [sorted, perm] = sort(idx, 2);
        const int64_t n = idx.size(2);
        Tensor last = ones(sorted.sizes(), TensorOptions(xb.dtype()).device(xb.device()));
        if (n > 1)
            last = cat({ne(narrow(sorted, 2, 0, n - 1), narrow(sorted, 2, 1, n - 1)).to(xb.dtype()),
                        ones({N, C, 1}, TensorOptions(xb.dtype()).device(xb.device()))},
                       2);
        const Tensor keep = scatter_add(last, idx.sizes(), 2, perm);
        y = scatter_add(xb.detach().reshape({N, C, -1}) * keep, {N, C, L}, 2, idx).reshape(ys);
    }
    if (should_record({&xb}))
        record(op, {&xb}, y, [idx, xs = xb.sizes(), N, C](const Tensor& dy) {
            return Grads{gather(dy.reshape({N, C, -1}), 2, idx).reshape(xs)};
        });
    return x.dim() == nd + 2 ? y : y.squeeze(0);
}

template <class T>
std::vector<int64_t> intervals(T sample, int64_t in, int64_t out, int64_t k) {
    std::vector<int64_t> seq(size_t(out > 0 ? out : 0));
    if (out > 1) {
        const T alpha = T(in - k) / T(out - 1);
        for (int64_t i = 0; i < out - 1; ++i)
            seq[size_t(i)] = int64_t(int((T(i) + sample) * alpha) - int(sample * alpha));
    }
    if (out > 0)
        seq[size_t(out - 1)] = in - k;
    return seq;
}

/// The flat input positions every output's window reads, [N·C, outputs·taps], per plane from
/// its samples (LibTorch's generate_intervals in the samples' dtype; 2-D: sample 0 for the
/// columns, 1 for the rows; 3-D: 0 depth, 1 rows, 2 columns).
template <class T>
std::vector<int64_t> fractional_index(const std::vector<T>& samples, int nd, int64_t planes,
                                      const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out,
                                      const std::vector<int64_t>& k) {
    int64_t L = 1, K = 1;
    for (int i = 0; i < nd; ++i)
        L *= out[size_t(i)], K *= k[size_t(i)];
    std::vector<int64_t> idx(size_t(planes * L * K));
    // 3 axes: a 2-D pool has one depth
    const int64_t I[3] = {nd == 3 ? in[0] : 1, in[size_t(nd - 2)], in[size_t(nd - 1)]};
    const int64_t O[3] = {nd == 3 ? out[0] : 1, out[size_t(nd - 2)], out[size_t(nd - 1)]};
    const int64_t Kk[3] = {nd == 3 ? k[0] : 1, k[size_t(nd - 2)], k[size_t(nd - 1)]};
    for (int64_t p = 0; p < planes; ++p) {
        const T* s = samples.data() + p * nd;
        std::vector<int64_t> seq[3];
        seq[0] = nd == 3 ? intervals(s[0], I[0], O[0], Kk[0]) : std::vector<int64_t>{0};
        seq[1] = intervals(s[1], I[1], O[1], Kk[1]);
        seq[2] = intervals(s[nd == 3 ? 2 : 0], I[2], O[2], Kk[2]);
        int64_t* o = idx.data() + p * L * K;
        for (int64_t z = 0; z < O[0]; ++z)
            for (int64_t y = 0; y < O[1]; ++y)
                for (int64_t x = 0; x < O[2]; ++x)
                    for (int64_t a = 0; a < Kk[0]; ++a)
                        for (int64_t b = 0; b < Kk[1]; ++b)
                            for (int64_t c = 0; c < Kk[2]; ++c)
                                *o++ = ((seq[0][size_t(z)] + a) * I[1] + seq[1][size_t(y)] + b) *
                                           I[2] +
                                       seq[2][size_t(x)] + c;
    }
    return idx;
}

std::pair<Tensor, Tensor> fractional(const char* op, int nd, const Tensor& x,
                                     const IntArg& kernel_size, const IntArg& output_size,
                                     const std::vector<double>& output_ratio,
                                     const Tensor& random_samples, const char* torch_name) {
    const Tensor xb = batched(op, x, nd);
    const auto k = conv::values_of(op, "kernel_size", kernel_size, nd, 0);
    const int64_t N = xb.size(0), C = xb.size(1);
    std::vector<int64_t> in, out;
    for (int i = 0; i < nd; ++i)
        in.push_back(xb.size(2 + i));
    if (!output_size.values().empty() && !output_ratio.empty())
        throw value_error(where(op, x) + ": give output_size or output_ratio, not both");
    if (!output_size.values().empty()) {
        out = conv::values_of(op, "output_size", output_size, nd, 0);
    } else if (!output_ratio.empty()) {
        if (output_ratio.size() != 1 && output_ratio.size() != size_t(nd))
            throw shape_error(where(op, x) + ": output_ratio has " +
                              std::to_string(output_ratio.size()) + " values");
        for (int i = 0; i < nd; ++i) {
            const double r = output_ratio[output_ratio.size() == 1 ? 0 : size_t(i)];
            if (!(r > 0 && r < 1))
                throw value_error(where(op, x) + ": output_ratio must be in (0, 1), got " +
                                  std::to_string(r));
            out.push_back(int64_t(double(in[size_t(i)]) * r));
        }
    } else {
        throw value_error(where(op, x) +
                          ": requires specifying either an output_size or an "
                          "output_ratio");
    }
    for (int i = 0; i < nd; ++i) {
        const size_t u = size_t(i);
        if (k[u] <= 0 || out[u] <= 0)
            throw value_error(where(op, x) + ": kernel_size and output_size must be positive");
        if (out[u] + k[u] - 1 > in[u])
            throw shape_error(where(op, x) + ": pool size " + std::to_string(k[u]) +
                              " too large relative to input size " + std::to_string(in[u]) +
                              " for output size " + std::to_string(out[u]));
    }
    Tensor samples = random_samples;
    if (!samples.defined())
        samples = rand({N, C, nd}, TensorOptions(xb.dtype()).device(xb.device()));
    if (samples.sizes() != Shape{N, C, int64_t(nd)} || samples.dtype() != xb.dtype())
        throw shape_error(where(op, x) + ": _random_samples " + shape_str(samples.sizes()) + " " +
                          dtype_name(samples.dtype()) + ", expected [" + std::to_string(N) + ", " +
                          std::to_string(C) + ", " + std::to_string(nd) + "] of the input's dtype");
    const Tensor sc = samples.detach().to(Device::cpu()).contiguous();
    std::vector<int64_t> idx =
        xb.dtype() == kFloat32 ? fractional_index(sc.to_vector<float>(), nd, N * C, in, out, k)
                               : fractional_index(sc.to_vector<double>(), nd, N * C, in, out, k);
    int64_t L = 1, K = 1;
    for (int i = 0; i < nd; ++i)
        L *= out[size_t(i)], K *= k[size_t(i)];
    const ComposedName named;
    const Tensor at = tensor(idx).reshape({N, C, L, K}).to(xb.device());
    const Tensor vals =
        gather(xb.reshape({N, C, -1}), 2, at.reshape({N, C, L * K})).reshape({N, C, L, K});
    auto [y, arg] = max(vals, 3);
    Tensor indices = gather(at, 3, arg.unsqueeze(3)).squeeze(3);
    Shape ys{N, C};
    ys.insert(ys.end(), out.begin(), out.end());
    y = named(y.reshape(ys), op, torch_name);
    indices = indices.reshape(ys);
    if (x.dim() == nd + 1)
        return {y.squeeze(0), indices.squeeze(0)};
    return {y, indices};
}

}  // namespace

Tensor lp_pool1d(const Tensor& x, double norm_type, const IntArg& kernel_size, const IntArg& stride,
                 bool ceil_mode) {
    const auto k = conv::values_of("lp_pool1d", "kernel_size", kernel_size, 1, 0);
    return lp_finish(avg_pool1d(pow(x, norm_type), kernel_size, stride, 0, ceil_mode, true),
                     norm_type, k);
}

Tensor lp_pool2d(const Tensor& x, double norm_type, const IntArg& kernel_size, const IntArg& stride,
                 bool ceil_mode) {
    const auto k = conv::values_of("lp_pool2d", "kernel_size", kernel_size, 2, 0);
    return lp_finish(avg_pool2d(pow(x, norm_type), kernel_size, stride, 0, ceil_mode, true),
                     norm_type, k);
}

#define TG_MAX_UNPOOL(ND)                                                                          \
    Tensor max_unpool##ND##d(const Tensor& x, const Tensor& indices, const IntArg& kernel_size,    \
                             const IntArg& stride, const IntArg& padding,                          \
                             const std::optional<std::vector<int64_t>>& output_size) {             \
        const char* op = "max_unpool" #ND "d";                                                     \
        const Tensor xb = batched(op, x, ND);                                                      \
        const auto k = conv::values_of(op, "kernel_size", kernel_size, ND, 0);                     \
        const auto s = stride.values().empty() ? k : conv::values_of(op, "stride", stride, ND, 1); \
        const auto p = conv::values_of(op, "padding", padding, ND, 0);                             \
        return unpool(op, ND, x, indices, unpool_size(op, xb, ND, k, s, p, output_size));          \
    }
TG_MAX_UNPOOL(1)
TG_MAX_UNPOOL(2)
TG_MAX_UNPOOL(3)
#undef TG_MAX_UNPOOL

std::pair<Tensor, Tensor> fractional_max_pool2d(const Tensor& x, const IntArg& kernel_size,
                                                const IntArg& output_size,
                                                const std::vector<double>& output_ratio,
                                                const Tensor& random_samples) {
    return fractional("fractional_max_pool2d", 2, x, kernel_size, output_size, output_ratio,
                      random_samples, "FractionalMaxPool2DBackward0");
}

std::pair<Tensor, Tensor> fractional_max_pool3d(const Tensor& x, const IntArg& kernel_size,
                                                const IntArg& output_size,
                                                const std::vector<double>& output_ratio,
                                                const Tensor& random_samples) {
    return fractional("fractional_max_pool3d", 3, x, kernel_size, output_size, output_ratio,
                      random_samples, "FractionalMaxPool3DBackward0");
}

}  // namespace tg
