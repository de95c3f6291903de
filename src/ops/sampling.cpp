// pixel_shuffle / pixel_unshuffle (a reshape, a permute and a reshape), affine_grid (a bmm with
// a base grid) and grid_sample: LibTorch 1.13's source index per axis (unnormalize, then
// clip or reflect), then each interpolation tap gathered from the flattened input and weighted,
// all with recorded ops, so the gradients in the input and the grid come from theirs.
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

std::string where(const char* op, const Tensor& x) {
    return std::string(op) + ": input " + (x.defined() ? shape_str(x.sizes()) : "undefined");
}

/// LibTorch's clip_coordinates: in clamped to [0, size-1]; gradient 1 strictly inside, 0 at or
/// beyond the ends (clip_coordinates_set_grad).
Tensor clip(const Tensor& in, int64_t size) {
    const Tensor inside = logical_and(gt(in, 0), lt(in, double(size - 1)));
    return where(inside, in, clamp(in.detach(), 0, double(size - 1)));
}

/// LibTorch's reflect_coordinates over [twice_low/2, twice_high/2]; gradient ±1.
Tensor reflect(const Tensor& in, int64_t twice_low, int64_t twice_high) {
    if (twice_low == twice_high)
        return zeros_like(in) * in;
    const double lo = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
    const Tensor m = in - lo;
    const Tensor a = where(lt(m, 0), -m, m);
    const Tensor flips = floor(a.detach() / span);
    const Tensor extra = a - flips * span;
    const Tensor even = eq(flips - floor(flips / 2) * 2, 0);
    return where(even, extra + lo, span - extra + lo);
}

/// compute_coordinates: the padding mode applied to a source coordinate.
Tensor padded(const Tensor& c, int64_t size, GridPadMode pm, bool ac) {
    if (pm == GridPadMode::Border)
        return clip(c, size);
    if (pm == GridPadMode::Reflection)
        return clip(ac ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1), size);
    return c;
}

Tensor unnormalize(const Tensor& g, int64_t size, bool ac) {
    return ac ? ((g + 1) / 2) * double(size - 1) : ((g + 1) * double(size) - 1) / 2;
}

/// Gathers input [N, C, L] at the flat positions Σ c_a·stride_a of integer-valued coordinates
/// c (one [N, P] tensor per axis; outside [0, size) reads 0): [N, C, P].
Tensor tap(const Tensor& flat, const std::vector<Tensor>& c, const std::vector<int64_t>& sizes) {
    const int64_t N = flat.size(0), C = flat.size(1);
    Tensor inside, pos;
    for (size_t a = 0; a < c.size(); ++a) {
        const Tensor ok = logical_and(ge(c[a], 0), lt(c[a], double(sizes[a])));
        inside = a == 0 ? ok : logical_and(inside, ok);
        const Tensor ca = clamp(c[a], 0, double(sizes[a] - 1)).to(kInt64);
        pos = a == 0 ? ca : pos * sizes[a] + ca;
    }
    const int64_t P = pos.size(1);
    const Tensor v = gather(flat, 2, pos.unsqueeze(1).expand({N, C, P}).contiguous());
    return v * inside.to(flat.dtype()).unsqueeze(1);
}

/// A cubic convolution's four coefficients at t (A = -0.75), LibTorch's
/// get_cubic_upsample_coefficients.
std::vector<Tensor> cubic(const Tensor& t) {
    const double A = -0.75;
    auto conv1 = [A](const Tensor& x) { return ((x * (A + 2) - (A + 3)) * x) * x + 1; };
    auto conv2 = [A](const Tensor& x) { return ((x * A - 5 * A) * x + 8 * A) * x - 4 * A; };
    const Tensor t2 = 1 - t;
    return {conv2(t + 1), conv1(t), conv1(t2), conv2(t2 + 1)};
}

}  // namespace

Tensor pixel_shuffle(const Tensor& x, int64_t r) {
    if (!x.defined() || x.dim() < 3)
        throw shape_error(where("pixel_shuffle", x) + ": expected at least 3 dims [*, C, H, W]");
    const int64_t d = x.dim(), C = x.size(d - 3), H = x.size(d - 2), W = x.size(d - 1);
    if (r <= 0 || C % (r * r) != 0)
        throw value_error(where("pixel_shuffle", x) + ": upscale_factor " + std::to_string(r) +
                          ": the channels must divide by its square");
    Shape lead(x.sizes().begin(), x.sizes().end() - 3), s = lead;
    for (int64_t v : {C / (r * r), r, r, H, W})
        s.push_back(v);
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < int64_t(lead.size()); ++i)
        perm.push_back(i);
    const int64_t b = int64_t(lead.size());
    perm.insert(perm.end(), {b, b + 3, b + 1, b + 4, b + 2});
    Shape o = lead;
    for (int64_t v : {C / (r * r), H * r, W * r})
        o.push_back(v);
    return permute(x.reshape(s), perm).reshape(o);
}

Tensor pixel_unshuffle(const Tensor& x, int64_t r) {
    if (!x.defined() || x.dim() < 3)
        throw shape_error(where("pixel_unshuffle", x) + ": expected at least 3 dims [*, C, H, W]");
    const int64_t d = x.dim(), C = x.size(d - 3), H = x.size(d - 2), W = x.size(d - 1);
    if (r <= 0 || H % r != 0 || W % r != 0)
        throw value_error(where("pixel_unshuffle", x) + ": downscale_factor " + std::to_string(r) +
                          " must be positive and divide the height and width");
    Shape lead(x.sizes().begin(), x.sizes().end() - 3), s = lead;
    for (int64_t v : {C, H / r, r, W / r, r})
        s.push_back(v);
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < int64_t(lead.size()); ++i)
        perm.push_back(i);
    const int64_t b = int64_t(lead.size());
    perm.insert(perm.end(), {b, b + 2, b + 4, b + 1, b + 3});
    Shape o = lead;
    for (int64_t v : {C * r * r, H / r, W / r})
        o.push_back(v);
    return permute(x.reshape(s), perm).reshape(o);
}

Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, bool align_corners) {
    const char* op = "affine_grid";
    if (!theta.defined() || !is_floating(theta.dtype()))
        throw dtype_error(std::string(op) + ": theta must be a floating tensor");
    const int nd = int(size.size()) - 2;
    if ((nd != 2 && nd != 3) || theta.dim() != 3 || theta.size(0) != size[0] ||
        theta.size(1) != nd || theta.size(2) != nd + 1)
        throw shape_error(std::string(op) + ": theta " + shape_str(theta.sizes()) + ", size " +
                          shape_str(Shape(size.begin(), size.end())) +
                          ": expected theta [N, 2, 3] with size [N, C, H, W], or [N, 3, 4] with "
                          "size [N, C, D, H, W]");
    for (int64_t s : size)
        if (s <= 0)
            throw value_error(std::string(op) + ": size " +
                              shape_str(Shape(size.begin(), size.end())) + " must be positive");
    const TensorOptions o = TensorOptions(theta.dtype()).device(theta.device());
    // the spatial sizes W, H(, D): base[..., a] is the a-th one's linspace
    Shape spatial(size.begin() + 2, size.end()), base_shape = spatial;
    base_shape.push_back(nd + 1);
    std::vector<Tensor> parts;
    for (int a = 0; a < nd; ++a) {
        const int64_t n = spatial[size_t(nd - 1 - a)];
        Tensor r = n <= 1 ? zeros({1}, o) : linspace(-1, 1, n, o);
        if (!align_corners && n > 1)
            r = r * (n - 1) / n;
        Shape v(size_t(nd), 1);
        v[size_t(nd - 1 - a)] = n;
        parts.push_back(r.reshape(v).expand(spatial));
    }
    parts.push_back(ones(spatial, o));
    const Tensor base = stack(parts, -1).reshape({1, -1, nd + 1}).expand({size[0], -1, nd + 1});
    Shape out{size[0]};
    out.insert(out.end(), spatial.begin(), spatial.end());
    out.push_back(nd);
    return bmm(base, theta.transpose(1, 2)).reshape(out);
}

Tensor grid_sample(const Tensor& input, const Tensor& grid, InterpolateMode mode,
                   GridPadding padding_mode, std::optional<bool> align_corners) {
    const char* op = "grid_sample";
    if (!input.defined() || !grid.defined())
        throw value_error(std::string(op) + ": undefined input or grid");
    runtime::check_same(op, input, grid);
    runtime::check_float_kernels(op, input);
    const int nd = int(input.dim()) - 2;
    const std::string at = where(op, input) + ", grid " + shape_str(grid.sizes());
    if ((nd != 2 && nd != 3) || grid.dim() != nd + 2 || grid.size(0) != input.size(0) ||
        grid.size(-1) != nd)
        throw shape_error(at +
                          ": expected input [N, C, H, W] with grid [N, H', W', 2], or "
                          "[N, C, D, H, W] with grid [N, D', H', W', 3]");
    if (mode != kBilinear && mode != kNearest && mode != kBicubic)
        throw value_error(at + ": mode must be kBilinear, kNearest or kBicubic");
    if (mode == kBicubic && nd != 2)
        throw value_error(at + ": kBicubic needs a 4-D input");
    const GridPadMode pm = padding_mode.mode();
    if (pm != GridPadMode::Zeros && pm != GridPadMode::Border && pm != GridPadMode::Reflection)
        throw value_error(at + ": padding_mode must be kZeros, kBorder or kReflection");
    for (int i = 2; i < input.dim(); ++i)
        if (input.size(i) == 0)
            throw shape_error(at + ": empty spatial dims");
    const bool ac = align_corners.value_or(false);
    const int64_t N = input.size(0), C = input.size(1);
    std::vector<int64_t> sizes(input.sizes().begin() + 2, input.sizes().end());
    Shape out{N, C};
    out.insert(out.end(), grid.sizes().begin() + 1, grid.sizes().end() - 1);
    const Tensor flat = input.reshape({N, C, -1});
    const Tensor g = grid.reshape({N, -1, nd});
    // source coordinates, axis a of the input's spatial dims (grid component nd-1-a)
    std::vector<Tensor> src;
    for (int a = 0; a < nd; ++a) {
        const Tensor u = unnormalize(g.select(2, nd - 1 - a), sizes[size_t(a)], ac);
        src.push_back(mode == kBicubic ? u : padded(u, sizes[size_t(a)], pm, ac));
    }
    Tensor y;
    if (mode == kNearest) {
        std::vector<Tensor> c;
        for (const Tensor& s : src)
            c.push_back(round(s.detach()));
        y = tap(flat, c, sizes);
        // the grid's gradient is zeros, as LibTorch's (not none): one node over both inputs
        if (should_record({&y, &grid})) {
            Tensor rec = y.detach();
            record("grid_sample", {&y, &grid}, rec,
                   [gs = grid.sizes(), o = grid.options()](const Tensor& dy) {
                       return Grads{dy, zeros(gs, o)};
                   });
            y = rec;
        }
    } else if (mode == kBilinear) {
        std::vector<Tensor> f, w1;
        for (const Tensor& s : src) {
            f.push_back(floor(s.detach()));
            w1.push_back(s - f.back());
        }
        for (int corner = 0; corner < (1 << nd); ++corner) {
            std::vector<Tensor> c;
            Tensor w;
            for (int a = 0; a < nd; ++a) {
                const bool hi = (corner >> (nd - 1 - a)) & 1;
                c.push_back(hi ? f[size_t(a)] + 1 : f[size_t(a)]);
                const Tensor wa = hi ? w1[size_t(a)] : 1 - w1[size_t(a)];
                w = a == 0 ? wa : w * wa;
            }
            const Tensor v = tap(flat, c, sizes) * w.unsqueeze(1);
            y = corner == 0 ? v : y + v;
        }
    } else {  // bicubic: rows of four taps along x, then along y
        const Tensor fy = floor(src[0].detach()), fx = floor(src[1].detach());
        const std::vector<Tensor> cy = cubic(src[0] - fy), cx = cubic(src[1] - fx);
        auto coord = [&](const Tensor& c, int64_t size) {
            return trunc(padded(c, size, pm, ac).detach());
        };
        for (int i = 0; i < 4; ++i) {
            const Tensor yy = coord(fy + double(i - 1), sizes[0]);
            Tensor row;
            for (int j = 0; j < 4; ++j) {
                const Tensor v = tap(flat, {yy, coord(fx + double(j - 1), sizes[1])}, sizes) *
                                 cx[size_t(j)].unsqueeze(1);
                row = j == 0 ? v : row + v;
            }
            const Tensor v = row * cy[size_t(i)].unsqueeze(1);
            y = i == 0 ? v : y + v;
        }
    }
    return y.reshape(out);
}

}  // namespace tg
