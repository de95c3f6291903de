// Convolutions lowered to the device GEMM over an unfolded buffer built a chunk of samples at
// a time: the three bilinear ops conv2d, conv1d, conv_transpose2d and their gradients are made of.
//
// Note [Convolution as three bilinear ops]: with x [N,C,H,W], w [O,C/g,kh,kw] and the windows of
// one geometry, a convolution and its two gradients are bilinear maps, each the other two's
// adjoint:
//   Forward(x, w) = y [N,O,oh,ow]:   y[n,o]  = w_g · unfold(x[n])_g           (GEMM)
//   Input(dy, w)  = dx [N,C,H,W]:    dx[n]   = fold(w_gᵀ · dy[n,g])           (GEMM + gather)
//   Weight(x, dy) = dw [O,C/g,kh,kw]: dw_g  += dy[n,g] · unfold(x[n])_gᵀ      (GEMM, over n)
// so each is one node whose backward applies the other two:
//   Forward: dx = Input(g, w),      dw = Weight(x, g)
//   Input:   d dy = Forward(g, w),  dw = Weight(g, dy)
//   Weight:  dx = Input(dy, g),     d dy = Forward(x, g)
// With create_graph those calls record, which gives double (and any higher) backward. The
// transposed convolution is Input with its roles renamed. No node saves an unfolded buffer:
// Weight unfolds x again in backward, a chunk at a time, so a convolution keeps only x and w for
// backward (Note [Gathering adjoints] in backend/device_common/window.hpp for fold).
//
// Note [Sample-parallel convolutions]: the batch is cut into chunks of samples by the sizes
// alone (chunk_samples), and every chunk is independent work: unfold its samples, run its GEMMs,
// fold its part of dx. On the CPU with more than one thread the chunks are shared out, one
// contiguous range per thread, and OpenBLAS is set to one thread meanwhile
// (runtime::parallel_parts): each thread runs whole GEMMs on unfolded columns that its own
// cache holds, instead of OpenBLAS splitting every small per-sample GEMM over the cores and
// handing over to the window kernels' threads between calls. bench_conv (2-core Xeon VM,
// 2 threads): the step 45-49 -> 30-31 ms. Each thread writes only its own samples of y and dx,
// so they are bit-identical for any thread count. dw sums over every sample: its chunks form up
// to 8 blocks (fixed by the sizes), each summed in order into its own buffer, then the buffers
// in block order, so dw is bit-identical for any thread count too. That holds when the batch is
// at least two chunks: a batch of one chunk (a small layer) runs its GEMMs on OpenBLAS's own
// threads, whose split of a product can round differently from one thread's (float32 bits seen
// to differ between 1 and 2 threads on a small conv3d). Other devices run the chunks in order
// (their kernels already fill the device).
#include "ops/conv_gemm.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"

namespace tg::conv {

namespace {

using backend::Window;
using backend::WindowOp;

/// Samples per chunk: on the CPU, as many as keep the chunk's unfolded columns within 1 MiB,
/// so a GEMM reads them from the core's L2 cache right after the unfold wrote them, and a batch
/// makes enough chunks to share out (Note [Sample-parallel convolutions]); bench_conv, 1 thread:
/// the step 68.5 -> 62.7 ms against 8 MiB chunks, the example CNN's second convolution
/// 36.8 -> 30-32 ms. But at least enough samples for 512 columns (nb·positions) while the
/// columns stay within 16 MiB, the column buffer's cap: deep layers have few positions (7x7,
/// 4x4) and many channels, so one sample's columns fill 1 MiB and its GEMM is [O, C·taps] x
/// [C·taps, 16..49], far below the BLAS's rate (Note [The convolution strategy by shape]).
/// On devices about 8 MiB, fewer launches. At least one sample.
int64_t chunk_samples(const ConvGeom& g, const Tensor& t) {
    const int64_t per =
        std::max<int64_t>(1, g.C * g.taps() * g.positions() * element_size(t.dtype()));
    const char* e = std::getenv("TG_CONV_CHUNK_BYTES");  // for benchmarking the cap
    const int64_t cap = e && e[0] ? std::atoll(e) : 0;
    if (cap > 0)
        return std::max<int64_t>(1, std::min<int64_t>(g.N, cap / per));
    if (!t.device().is_cpu())
        return std::max<int64_t>(1, std::min<int64_t>(g.N, (int64_t(1) << 23) / per));
    const int64_t fit = (int64_t(1) << 20) / per, wide = (512 + g.positions() - 1) / g.positions();
    const int64_t step = std::max(fit, std::min(wide, (int64_t(1) << 24) / per));
    return std::max<int64_t>(1, std::min<int64_t>(g.N, step));
}

/// How many chunks of `step` samples the batch makes.
int64_t chunks(const ConvGeom& g, int64_t step) {
    return (g.N + step - 1) / step;
}

/// The window kernel over samples [n0, n0+nb) of x-sized t and the unfolded col [C*taps, nb*L].
void window(WindowOp op, const ConvGeom& g, const Tensor& t, int64_t n0, int64_t nb,
            const Tensor& col) {
    const backend::View tv = runtime::view(t, n0 * g.C * g.volume()), cv = runtime::view(col);
    Window w = g.window(nb);
    w.samples = nb;
    if (op == WindowOp::Unfold)
        runtime::be(t).window(op, w, cv, tv, {});
    else
        runtime::be(t).window(op, w, tv, cv, {});
}

/// Samples [n0, n0+nb) of y [N, O, L] as [nb, O, L] (a view), and a buffer [O, nb*L] (the
/// GEMMs' layout) read as [nb, O, L]; copy_into between them permutes the two.
Tensor samples_of(const Tensor& y, const ConvGeom& g, int64_t n0, int64_t nb) {
    const int64_t L = g.positions();
    return runtime::alias(y, {nb, g.O, L}, {g.O * L, L, 1}, n0 * g.O * L, "conv2d");
}
Tensor gemm_layout(const Tensor& t, const ConvGeom& g, int64_t nb) {
    const int64_t L = g.positions();
    return runtime::alias(t, {nb, g.O, L}, {L, nb * L, 1}, 0, "conv2d");
}

/// dy for samples [n0, n0+nb) as [O, nb*L] (a copy unless nb == 1).
Tensor dy_chunk(const Tensor& dy, const ConvGeom& g, int64_t n0, int64_t nb) {
    const int64_t L = g.positions();
    if (nb == 1)
        return runtime::alias(dy, {g.O, L}, {L, 1}, n0 * g.O * L, "conv2d");
    Tensor t = runtime::empty({g.O, nb * L}, dy.dtype(), dy.device(), "conv2d");
    runtime::copy_into(gemm_layout(t, g, nb), samples_of(dy, g, n0, nb));
    return t;
}

/// Whether the GEMMs of a chunk run one sample at a time, reading and writing each sample's
/// columns of the unfolded buffer in place (ld = nb*L), or once over the whole chunk through a
/// permuted copy of y or dy ([O, nb*L]). Above 256 positions a sample's GEMM is large enough
/// for BLAS, and the copies would cost more than the calls save.
bool per_sample(const ConvGeom& g) {
    const char* e = std::getenv("TG_CONV_BATCHED");  // for benchmarking the choice
    if (e && e[0])
        return e[0] == '0';
    return g.positions() >= 256;
}

/// y = Forward(x, w) + b, x and w contiguous and detached, b [O] or undefined: per chunk of
/// samples and group, GEMMs [O/g, C/g*taps] x [C/g*taps, L]. Without groups the bias rides in
/// the GEMM: w gains a column b and the unfolded buffer a row of ones, so y is written once
/// (no pass to fill it with the bias first: 1.9 of 16 ms for bench_conv's second convolution).
/// With groups each group's GEMM adds into y prefilled with the bias.
Tensor forward_raw(const Tensor& x, const Tensor& w, const Tensor& b, const ConvGeom& g) {
    Tensor y = runtime::empty(g.y_shape(), x.dtype(), x.device(), "conv2d");
    const int64_t L = g.positions(), step = chunk_samples(g, x);
    const bool single = per_sample(g), ones_row = b.defined() && g.groups == 1;
    const int64_t K = g.cg() * g.taps() + (ones_row ? 1 : 0);  // the GEMMs' inner size
    Tensor wk = w;                                             // [O/g, K] per group
    if (ones_row) {
        wk = runtime::empty({g.O, K}, x.dtype(), x.device(), "conv2d");
        runtime::copy_into(runtime::alias(wk, {g.O, K - 1}, {K, 1}, 0, "conv2d"),
                           w.reshape({g.O, K - 1}));
        runtime::copy_into(runtime::alias(wk, {g.O, 1}, {K, 1}, K - 1, "conv2d"),
                           b.reshape({g.O, 1}));
    }
    const double beta = b.defined() && !ones_row ? 1 : 0;
    const Tensor bias_column = b.defined() ? b.reshape({g.O, 1}) : Tensor();
    runtime::parallel_parts(x, chunks(g, step), [&](int64_t chunk) {
        const int64_t n0 = chunk * step, nb = std::min(step, g.N - n0), ld = nb * L,
                      rows = g.C * g.taps();
        Tensor col =
            runtime::empty({rows + (ones_row ? 1 : 0), ld}, x.dtype(), x.device(), "conv2d");
        window(WindowOp::Unfold, g, x, n0, nb, col);
        if (ones_row)
            runtime::fill(runtime::alias(col, {ld}, {1}, rows * ld, "conv2d"), 1);
        // group q's GEMM: A = its rows of wk, B = its rows of col from column c0, into C
        auto gemm = [&](int64_t q, int64_t n, int64_t c0, const Tensor& c) {
            runtime::gemm("conv2d", false, false, g.og(), n, K, 1,
                          runtime::view(wk, q * g.og() * K), K,
                          runtime::view(col, q * (K - (ones_row ? 1 : 0)) * ld + c0), ld, beta, c);
        };
        if (single) {
            for (int64_t n = 0; n < nb; ++n) {
                const int64_t at_y = (n0 + n) * g.O * L;
                if (beta != 0)  // just before its GEMMs add into it (in cache)
                    runtime::copy_into(runtime::alias(y, {g.O, L}, {L, 1}, at_y, "conv2d"),
                                       bias_column);
                for (int64_t q = 0; q < g.groups; ++q)
                    gemm(q, L, n * L,
                         runtime::alias(y, {g.og(), L}, {L, 1}, at_y + q * g.og() * L, "conv2d"));
            }
            return;
        }
        Tensor yt = runtime::empty({g.O, ld}, x.dtype(), x.device(), "conv2d");
        if (beta != 0)
            runtime::copy_into(yt, bias_column);
        for (int64_t q = 0; q < g.groups; ++q)
            gemm(q, ld, 0, runtime::alias(yt, {g.og(), ld}, {ld, 1}, q * g.og() * ld, "conv2d"));
        runtime::copy_into(samples_of(y, g, n0, nb), gemm_layout(yt, g, nb));
    });
    return y;
}

/// db = Σ over samples and positions of dy [N,O,L] (contiguous): two GEMVs with ones vectors.
Tensor bias_raw(const Tensor& dy, const ConvGeom& g) {
    const int64_t L = g.positions();
    Tensor per = runtime::empty({g.N * g.O}, dy.dtype(), dy.device(), "conv2d");
    Tensor db = runtime::empty({g.O}, dy.dtype(), dy.device(), "conv2d");
    const Tensor ones_l = ones({L}, dy.options()), ones_n = ones({g.N}, dy.options());
    runtime::gemv("conv2d", false, g.N * g.O, L, 1, runtime::view(dy), L, runtime::view(ones_l), 1,
                  0, per);
    runtime::gemv("conv2d", true, g.N, g.O, 1, runtime::view(per), g.O, runtime::view(ones_n), 1, 0,
                  db);
    return db;
}

/// dx = Input(dy, w), dy and w contiguous and detached: per chunk, col = wᵀ·dy (GEMMs per
/// group, per sample or over the chunk as forward_raw's), then the gathering fold.
Tensor input_raw(const Tensor& dy, const Tensor& w, const ConvGeom& g) {
    Tensor dx = runtime::empty(g.x_shape(), dy.dtype(), dy.device(), "conv2d");
    const int64_t K = g.cg() * g.taps(), L = g.positions(), step = chunk_samples(g, dy);
    const bool single = per_sample(g);
    runtime::parallel_parts(dy, chunks(g, step), [&](int64_t chunk) {
        const int64_t n0 = chunk * step, nb = std::min(step, g.N - n0), ld = nb * L;
        Tensor col = runtime::empty({g.C * g.taps(), ld}, dy.dtype(), dy.device(), "conv2d");
        const Tensor dyt = single ? dy : dy_chunk(dy, g, n0, nb);
        for (int64_t n = 0; n < (single ? nb : 1); ++n)
            for (int64_t q = 0; q < g.groups; ++q) {
                const backend::View d = single
                                            ? runtime::view(dy, ((n0 + n) * g.O + q * g.og()) * L)
                                            : runtime::view(dyt, q * g.og() * ld);
                runtime::gemm("conv2d", true, false, K, single ? L : ld, g.og(), 1,
                              runtime::view(w, q * g.og() * K), K, d, single ? L : ld, 0,
                              runtime::alias(col, {K, single ? L : ld}, {ld, 1}, q * K * ld + n * L,
                                             "conv2d"));
            }
        window(fold_op(), g, dx, n0, nb, col);
    });
    return dx;
}

/// dw = Weight(x, dy), x and dy contiguous and detached: per chunk and group, GEMMs
/// dy [O/g, L] x colᵀ [L, C/g*taps] (per sample or over the chunk), accumulated. The chunks
/// form up to 8 blocks, fixed by the sizes alone; each block accumulates its chunks in order
/// into a buffer of its own, and the buffers are added in block order: the same sums, in the
/// same order, on any number of threads (Note [Sample-parallel convolutions]).
Tensor weight_raw(const Tensor& x, const Tensor& dy, const ConvGeom& g) {
    const int64_t K = g.cg() * g.taps(), L = g.positions(), step = chunk_samples(g, x);
    const bool single = per_sample(g);
    const int64_t nc = chunks(g, step), blocks = std::min<int64_t>(nc, 8);
    const Shape shape = g.w_shape();
    std::vector<Tensor> partial(size_t(std::max<int64_t>(blocks, 1)));
    runtime::parallel_parts(x, blocks, [&](int64_t block) {
        Tensor acc = runtime::empty(shape, x.dtype(), x.device(), "conv2d");
        const int64_t c0 = nc * block / blocks, c1 = nc * (block + 1) / blocks;
        for (int64_t chunk = c0; chunk < c1; ++chunk) {
            const int64_t n0 = chunk * step, nb = std::min(step, g.N - n0), ld = nb * L;
            Tensor col = runtime::empty({g.C * g.taps(), ld}, x.dtype(), x.device(), "conv2d");
            window(WindowOp::Unfold, g, x, n0, nb, col);
            const Tensor dyt = single ? dy : dy_chunk(dy, g, n0, nb);
            for (int64_t n = 0; n < (single ? nb : 1); ++n)
                for (int64_t q = 0; q < g.groups; ++q) {
                    const backend::View d =
                        single ? runtime::view(dy, ((n0 + n) * g.O + q * g.og()) * L)
                               : runtime::view(dyt, q * g.og() * ld);
                    runtime::gemm(
                        "conv2d", false, true, g.og(), K, single ? L : ld, 1, d, single ? L : ld,
                        runtime::view(col, q * K * ld + n * L), ld, chunk == c0 && n == 0 ? 0 : 1,
                        runtime::alias(acc, {g.og(), K}, {K, 1}, q * g.og() * K, "conv2d"));
                }
        }
        partial[size_t(block)] = acc;
    });
    return sum_blocks(partial, blocks, g, x);
}

}  // namespace

WindowOp fold_op() {
    const char* e = std::getenv("TG_CONV_SCATTER");
    return e && e[0] == '1' && e[1] == 0 ? WindowOp::FoldScatter : WindowOp::Fold;
}

Tensor apply(Kind k, const Tensor& a, const Tensor& b, const ConvGeom& g, const Tensor& c) {
    const Tensor ac = a.detach().contiguous(), bc = b.detach().contiguous();
    const bool tiles = k != Kind::Input && tiled(g, ac);
    Direct d = direct(g, ac, k);
    Tensor y;
    if (d == Direct::Dnnl) {
        y = dnnl_apply(k, ac, bc, c.defined() ? c.detach() : c, g);
        d = direct(g, ac, k, false);
    }
    y = y.defined() ? y
        : d != Direct::None
            ? (k == Kind::Forward ? direct_forward(d, ac, bc, c.defined() ? c.detach() : c, g)
               : k == Kind::Input ? direct_input(d, ac, bc, g)
                                  : direct_weight(d, ac, bc, g))
        : k == Kind::Forward
            ? (tiles ? forward_tiled : forward_raw)(ac, bc, c.defined() ? c.detach() : c, g)
        : k == Kind::Input ? (input_tiled(g, ac) ? input_by_tiles : input_raw)(ac, bc, g)
        : tiles            ? weight_tiled(ac, bc, g)
                           : weight_raw(ac, bc, g);
    if (should_record({&a, &b, &c}))
        record(k == Kind::Forward ? (g.nd == 3 ? "conv3d" : "conv2d")
               : k == Kind::Input ? (g.nd == 3 ? "conv3d_input" : "conv2d_input")
                                  : (g.nd == 3 ? "conv3d_weight" : "conv2d_weight"),
               {&a, &b, &c}, y,
               [k, g, sa = b.requires_grad() ? save(a) : Saved(),
                sb = a.requires_grad() ? save(b) : Saved()](const Tensor& dy_in, const Node& n) {
                   Grads gr(3);
                   const bool na = needs(n, 0), nb = needs(n, 1);
                   // once for both gradients (a loss's sum hands down an expanded dy)
                   const Tensor dy = dy_in.contiguous();
                   switch (k) {
                       case Kind::Forward:  // a = x, b = w, c = bias
                           if (na)
                               gr[0] = apply(Kind::Input, dy, sb.get(), g);
                           if (nb)
                               gr[1] = apply(Kind::Weight, sa.get(), dy, g);
                           if (needs(n, 2))
                               gr[2] = GradMode::is_enabled()
                                           ? (g.nd == 3 ? dy.sum({0, 2, 3, 4}) : dy.sum({0, 2, 3}))
                                           : bias_raw(dy.detach().contiguous(), g);
                           break;
                       case Kind::Input:  // a = dy, b = w
                           if (na)
                               gr[0] = apply(Kind::Forward, dy, sb.get(), g);
                           if (nb)
                               gr[1] = apply(Kind::Weight, dy, sa.get(), g);
                           break;
                       case Kind::Weight:  // a = x, b = dy
                           if (na)
                               gr[0] = apply(Kind::Input, sb.get(), dy, g);
                           if (nb)
                               gr[1] = apply(Kind::Forward, sa.get(), dy, g);
                           break;
                   }
                   return gr;
               });
    if (recipes_wanted())
        recipe(y,
               [k, g](const std::vector<Tensor>& xs) { return apply(k, xs[0], xs[1], g, xs[2]); });
    return y;
}

Tensor sum_blocks(const std::vector<Tensor>& partial, int64_t blocks, const ConvGeom& g,
                  const Tensor& like, const char* op) {
    if (blocks == 0) {
        Tensor dw = runtime::empty(g.w_shape(), like.dtype(), like.device(), op);
        runtime::fill(dw, 0);
        return dw;
    }
    Tensor dw = partial[0];
    for (int64_t block = 1; block < blocks; ++block)
        runtime::binary_into(backend::BinaryOp::add, dw, dw, partial[size_t(block)], op, 0, 0);
    return dw;
}

}  // namespace tg::conv
