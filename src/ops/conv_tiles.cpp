// Convolutions whose one sample unfolds to more than fits a core's cache (3-D ones: conv3d
// 16 -> 32 channels 3x3x3 over 16x32x32 unfolds 28 MB per sample), lowered a tile of output
// positions at a time instead of a sample at a time.
//
// Note [Depth tiles]: the chunks of Note [Sample-parallel convolutions] hold whole samples, so
// their unfolded columns are at least C·taps·positions elements; for 3-D windows that is tens of
// MB, written by the unfold and read back by the GEMM from memory. Output depths [z0, z1) of a
// sample read input depths z·st - pt + q·dt only, which is the window of a convolution with
// z1 - z0 output depths and front padding pt - z0·st (negative when the tile starts inside), and
// likewise rows [i0, i1) of one depth; so a tile is unfolded by the same kernel with that
// geometry, and its GEMM writes (Forward) or reads (Weight) the tile's columns of the sample's
// y [O, L] in place (ld = L). A tile holds as many whole depths as keep its columns within
// 512 KiB, or as many rows of one depth (at least one row). Forward and Weight run over (sample,
// tile) units shared out as the chunks are; Weight sums its units in up to 8 fixed blocks, as
// weight_raw does, so both are bit-identical for any thread count. Input runs the same tiles of
// windows a sample at a time: a tile's columns wᵀ·dy [C·taps, L_tile] (a GEMM of inner size O,
// which OpenBLAS runs faster than the tiles' forward GEMMs) are folded by the gathering kernel
// into the block of x the tile's windows read (its depths and rows, the window shifted as
// above) and added into dx, tile after tile in order; the samples are shared out, so dx is
// bit-identical for any thread count too. (It was the tiled Forward of dy with the weight
// flipped, for stride 1 only: twice the columns to unfold, K = 864 GEMMs of 128 positions;
// bench_conv3d's input gradient 40 -> 30 ms on 1 thread.) A sample whose columns take more
// than two tiles' budget (1 MiB) goes these ways; 2-D convolutions keep conv_gemm.cpp's paths.
// bench_conv3d (N=8, 1x16x32x32 -> 16 -> 32 channels, 1 thread, a busy host): the step
// 290 ms -> see the benchmark results.
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "ops/conv_gemm.hpp"
#include "runtime/dispatch.hpp"

namespace tg::conv {

namespace {

/// The bytes a tile's columns may take (Note [Depth tiles]).
/// 512 KiB, or TG_CONV_TILE_BYTES (benchmarks weigh the choice; test_conv_tiles makes tiles of
/// small convolutions with it).
int64_t tile_budget() {
    const char* e = std::getenv("TG_CONV_TILE_BYTES");
    const int64_t bytes = e && e[0] ? std::atoll(e) : 0;
    return bytes > 0 ? bytes : int64_t(1) << 19;
}

/// How a sample's output positions split into tiles: whole depths, dz at a time, when one depth
/// fits the budget, else rows of one depth, dr at a time; `per` tiles per sample.
struct Tiles {
    int64_t dz = 1, dr = 0, per = 1;
};
Tiles tiles_of(const ConvGeom& g, const Tensor& t) {
    const int64_t es = int64_t(element_size(t.dtype())), row = g.C * g.taps() * g.ow * es;
    Tiles s;
    if (row * g.oh <= tile_budget()) {
        s.dz = std::max<int64_t>(1, std::min<int64_t>(g.ot, tile_budget() / (row * g.oh)));
        s.per = (g.ot + s.dz - 1) / s.dz;
    } else {
        s.dr = std::max<int64_t>(1, std::min<int64_t>(g.oh, tile_budget() / row));
        s.per = g.ot * ((g.oh + s.dr - 1) / s.dr);
    }
    return s;
}

/// Tile u of a sample: its geometry (one sample: depths [z0, z0 + nz) or rows [i0, i0 + ni) of
/// depth z0, as a window with shifted front paddings) and where its positions start in y.
struct Tile {
    ConvGeom g;
    int64_t at;
};
Tile tile_of(const ConvGeom& g, const Tiles& s, int64_t u) {
    Tile t{g, 0};
    t.g.N = 1;
    int64_t z0, nz, i0 = 0, ni = g.oh;
    if (s.dr == 0) {
        z0 = u * s.dz, nz = std::min(s.dz, g.ot - z0);
    } else {
        const int64_t per_depth = (g.oh + s.dr - 1) / s.dr;
        z0 = u / per_depth, nz = 1, i0 = (u % per_depth) * s.dr, ni = std::min(s.dr, g.oh - i0);
    }
    t.g.ot = nz, t.g.pt = g.pt - z0 * g.st, t.g.oh = ni, t.g.ph = g.ph - i0 * g.sh;
    t.at = (z0 * g.oh + i0) * g.ow;
    return t;
}

/// Unfolds sample n's tile geometry tg from x into col [C·taps (+1 for a ones row), L_tile].
Tensor unfold_tile(const ConvGeom& tgm, const Tensor& x, int64_t n, bool ones_row) {
    const int64_t rows = tgm.C * tgm.taps(), L = tgm.positions();
    Tensor col = runtime::empty({rows + (ones_row ? 1 : 0), L}, x.dtype(), x.device(), "conv3d");
    backend::Window w = tgm.window(1);
    runtime::be(x).window(backend::WindowOp::Unfold, w, runtime::view(col),
                          runtime::view(x, n * tgm.C * tgm.volume()), {});
    if (ones_row)
        runtime::fill(runtime::alias(col, {L}, {1}, rows * L, "conv3d"), 1);
    return col;
}

}  // namespace

bool tiled(const ConvGeom& g, const Tensor& t) {
    return g.nd == 3 &&
           g.C * g.taps() * g.positions() * int64_t(element_size(t.dtype())) > 2 * tile_budget();
}

Tensor forward_tiled(const Tensor& x, const Tensor& w, const Tensor& b, const ConvGeom& g) {
    Tensor y = runtime::empty(g.y_shape(), x.dtype(), x.device(), "conv3d");
    const int64_t L = g.positions();
    const Tiles ts = tiles_of(g, x);
    const int64_t tiles = ts.per;
    const bool ones_row = b.defined() && g.groups == 1;
    const int64_t K = g.cg() * g.taps() + (ones_row ? 1 : 0);
    Tensor wk = w;  // [O, K]: the bias as a last column against a row of ones (forward_raw's)
    if (ones_row) {
        wk = runtime::empty({g.O, K}, x.dtype(), x.device(), "conv3d");
        runtime::copy_into(runtime::alias(wk, {g.O, K - 1}, {K, 1}, 0, "conv3d"),
                           w.reshape({g.O, K - 1}));
        runtime::copy_into(runtime::alias(wk, {g.O, 1}, {K, 1}, K - 1, "conv3d"),
                           b.reshape({g.O, 1}));
    }
    const double beta = b.defined() && !ones_row ? 1 : 0;
    runtime::parallel_parts(x, g.N * tiles, [&](int64_t unit) {
        const int64_t n = unit / tiles;
        const Tile tile = tile_of(g, ts, unit % tiles);
        const Tensor col = unfold_tile(tile.g, x, n, ones_row);
        const int64_t Lt = tile.g.positions(), at = n * g.O * L + tile.at;
        if (beta != 0)
            runtime::copy_into(runtime::alias(y, {g.O, Lt}, {L, 1}, at, "conv3d"),
                               b.reshape({g.O, 1}));
        for (int64_t q = 0; q < g.groups; ++q)
            runtime::gemm("conv3d", false, false, g.og(), Lt, K, 1,
                          runtime::view(wk, q * g.og() * K), K,
                          runtime::view(col, q * (K - (ones_row ? 1 : 0)) * Lt), Lt, beta,
                          runtime::alias(y, {g.og(), Lt}, {L, 1}, at + q * g.og() * L, "conv3d"));
    });
    return y;
}

Tensor weight_tiled(const Tensor& x, const Tensor& dy, const ConvGeom& g) {
    const int64_t K = g.cg() * g.taps(), L = g.positions();
    const Tiles ts = tiles_of(g, x);
    const int64_t tiles = ts.per, units = g.N * tiles;
    const int64_t blocks = std::min<int64_t>(units, 8);
    std::vector<Tensor> partial(size_t(std::max<int64_t>(blocks, 1)));
    runtime::parallel_parts(x, blocks, [&](int64_t block) {
        Tensor acc = runtime::empty(g.w_shape(), x.dtype(), x.device(), "conv3d");
        const int64_t u0 = units * block / blocks, u1 = units * (block + 1) / blocks;
        for (int64_t unit = u0; unit < u1; ++unit) {
            const int64_t n = unit / tiles;
            const Tile tile = tile_of(g, ts, unit % tiles);
            const Tensor col = unfold_tile(tile.g, x, n, false);
            const int64_t Lt = tile.g.positions();
            for (int64_t q = 0; q < g.groups; ++q)
                runtime::gemm("conv3d", false, true, g.og(), K, Lt, 1,
                              runtime::view(dy, (n * g.O + q * g.og()) * L + tile.at), L,
                              runtime::view(col, q * K * Lt), Lt, unit == u0 ? 0 : 1,
                              runtime::alias(acc, {g.og(), K}, {K, 1}, q * g.og() * K, "conv3d"));
        }
        partial[size_t(block)] = acc;
    });
    return sum_blocks(partial, blocks, g, x, "conv3d");
}

bool input_tiled(const ConvGeom& g, const Tensor& dy) {
    return tiled(g, dy);
}

Tensor input_by_tiles(const Tensor& dy, const Tensor& w, const ConvGeom& g) {
    Tensor dx = runtime::empty(g.x_shape(), dy.dtype(), dy.device(), "conv3d");
    const int64_t K = g.cg() * g.taps(), L = g.positions(), V = g.volume(), HW = g.H * g.W;
    const Tiles ts = tiles_of(g, dy);
    runtime::parallel_parts(dy, g.N, [&](int64_t n) {
        runtime::fill(runtime::alias(dx, {g.C * V}, {1}, n * g.C * V, "conv3d"), 0);
        for (int64_t u = 0; u < ts.per; ++u) {
            const Tile tile = tile_of(g, ts, u);
            const ConvGeom& t = tile.g;
            const int64_t Lt = t.positions();
            Tensor col = runtime::empty({g.C * g.taps(), Lt}, dy.dtype(), dy.device(), "conv3d");
            for (int64_t q = 0; q < g.groups; ++q)
                runtime::gemm("conv3d", true, false, K, Lt, g.og(), 1,
                              runtime::view(w, q * g.og() * K), K,
                              runtime::view(dy, (n * g.O + q * g.og()) * L + tile.at), L, 0,
                              runtime::alias(col, {K, Lt}, {Lt, 1}, q * K * Lt, "conv3d"));
            // the depths [z0, z1) and rows [y0, y1) of x that the tile's windows read
            const int64_t z0 = std::max<int64_t>(0, -t.pt),
                          z1 = std::min(g.T, (t.ot - 1) * g.st - t.pt + (g.kt - 1) * g.dt + 1),
                          y0 = std::max<int64_t>(0, -t.ph),
                          y1 = std::min(g.H, (t.oh - 1) * g.sh - t.ph + (g.kh - 1) * g.dh + 1);
            if (z1 <= z0 || y1 <= y0)
                continue;
            ConvGeom f = t;  // the tile's windows over that part of x
            f.T = z1 - z0, f.pt = t.pt + z0, f.H = y1 - y0, f.ph = t.ph + y0;
            Tensor part = runtime::empty({g.C, f.T, f.H, g.W}, dy.dtype(), dy.device(), "conv3d");
            backend::Window fw = f.window(1);
            fw.samples = 1;
            runtime::be(dy).window(fold_op(), fw, runtime::view(part), runtime::view(col), {});
            const Tensor region = runtime::alias(dx, {g.C, f.T, f.H, g.W}, {V, HW, g.W, 1},
                                                 n * g.C * V + z0 * HW + y0 * g.W, "conv3d");
            runtime::binary_into(backend::BinaryOp::add, region, region, part, "conv3d", 0, 0);
        }
    });
    return dx;
}

}  // namespace tg::conv
