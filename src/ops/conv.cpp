// Convolutions: conv2d, conv1d (as conv2d over [N,C,1,L]) and conv_transpose2d, lowered to the
// device GEMM over an unfolded buffer built a chunk of samples at a time; and unfold and fold,
// the window kernel's two halves as ops of their own.
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
// in block order, so dw is bit-identical for any thread count too. Other devices run the chunks
// in order (their kernels already fill the device).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "backend/backend.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

using backend::Window;
using backend::WindowOp;

/// One convolution's sizes: x [N,C,H,W], w [O,C/groups,kh,kw], y [N,O,oh,ow].
struct ConvGeom {
    int64_t N, C, H, W, O, kh, kw, oh, ow, groups;
    int64_t sh, sw, ph, pw, dh, dw;
    Window window(int64_t samples) const {
        Window g;
        g.planes = samples * C;
        g.h = H, g.w = W, g.oh = oh, g.ow = ow, g.kh = kh, g.kw = kw;
        g.sh = sh, g.sw = sw, g.ph = ph, g.pw = pw, g.dh = dh, g.dw = dw;
        return g;
    }
    int64_t cg() const { return C / groups; }
    int64_t og() const { return O / groups; }
    int64_t taps() const { return kh * kw; }
    int64_t positions() const { return oh * ow; }
};

/// Samples per chunk: on the CPU, as many as keep the chunk's unfolded columns within 1 MiB,
/// so a GEMM reads them from the core's L2 cache right after the unfold wrote them, and a batch
/// makes enough chunks to share out (Note [Sample-parallel convolutions]); bench_conv, 1 thread:
/// the step 68.5 -> 62.7 ms against 8 MiB chunks, the example CNN's second convolution
/// 36.8 -> 30-32 ms. On devices about 8 MiB, fewer launches. At least one sample.
int64_t chunk_samples(const ConvGeom& g, const Tensor& t) {
    const int64_t per =
        std::max<int64_t>(1, g.C * g.taps() * g.positions() * element_size(t.dtype()));
    const int64_t bytes = int64_t(1) << (t.device().is_cpu() ? 20 : 23);
    return std::max<int64_t>(1, std::min<int64_t>(g.N, bytes / per));
}

/// How many chunks of `step` samples the batch makes.
int64_t chunks(const ConvGeom& g, int64_t step) {
    return (g.N + step - 1) / step;
}

/// Fold, or with TG_CONV_SCATTER=1 in the environment the scatter kept for benchmarks/bench_conv
/// and the test that compares the two (CPU only; Note [Gathering adjoints]).
WindowOp conv_fold_op() {
    const char* e = std::getenv("TG_CONV_SCATTER");
    return e && e[0] == '1' && e[1] == 0 ? WindowOp::FoldScatter : WindowOp::Fold;
}

/// The window kernel over samples [n0, n0+nb) of x-sized t and the unfolded col [C*taps, nb*L].
void window(WindowOp op, const ConvGeom& g, const Tensor& t, int64_t n0, int64_t nb,
            const Tensor& col) {
    const backend::View tv = runtime::view(t, n0 * g.C * g.H * g.W), cv = runtime::view(col);
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
    Tensor y = runtime::empty({g.N, g.O, g.oh, g.ow}, x.dtype(), x.device(), "conv2d");
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
    Tensor dx = runtime::empty({g.N, g.C, g.H, g.W}, dy.dtype(), dy.device(), "conv2d");
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
        window(conv_fold_op(), g, dx, n0, nb, col);
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
    const Shape shape{g.O, g.cg(), g.kh, g.kw};
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
    if (blocks == 0) {
        Tensor dw = runtime::empty(shape, x.dtype(), x.device(), "conv2d");
        runtime::fill(dw, 0);
        return dw;
    }
    Tensor dw = partial[0];
    for (int64_t block = 1; block < blocks; ++block)
        runtime::binary_into(backend::BinaryOp::add, dw, dw, partial[size_t(block)], "conv2d", 0,
                             0);
    return dw;
}

enum class Kind { Forward, Input, Weight };

/// One of the three bilinear ops (Note [Convolution as three bilinear ops]), recorded; Forward
/// also adds the bias c when it is defined (db = Σ dy).
Tensor apply(Kind k, const Tensor& a, const Tensor& b, const ConvGeom& g, const Tensor& c = {}) {
    const Tensor ac = a.detach().contiguous(), bc = b.detach().contiguous();
    Tensor y = k == Kind::Forward ? forward_raw(ac, bc, c.defined() ? c.detach() : c, g)
               : k == Kind::Input ? input_raw(ac, bc, g)
                                  : weight_raw(ac, bc, g);
    if (should_record({&a, &b, &c}))
        record(k == Kind::Forward ? "conv2d"
               : k == Kind::Input ? "conv2d_input"
                                  : "conv2d_weight",
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
                                           ? dy.sum({0, 2, 3})
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
    return y;
}

std::string shapes(const Tensor& x, const Tensor& w) {
    return shape_str(x.sizes()) + ", weight " + shape_str(w.sizes());
}

/// The two values of a spatial argument (one value means both).
std::pair<int64_t, int64_t> pair_of(const char* op, const char* what, const IntArg& v,
                                    int64_t fallback_h, int64_t fallback_w) {
    const std::vector<int64_t>& s = v.values();
    if (s.empty())
        return {fallback_h, fallback_w};
    if (s.size() == 1)
        return {s[0], s[0]};
    if (s.size() == 2)
        return {s[0], s[1]};
    throw shape_error(std::string(op) + ": " + what + " has " + std::to_string(s.size()) +
                      " values: expected 1 or 2");
}

/// Checks x [N,C,H,W], w and b of a convolution and returns its geometry; `transposed` reads
/// w as [C_in, C_out/groups, kh, kw] and x as the gradient of the convolution it transposes.
void check_inputs(const char* op, const Tensor& x, const Tensor& w, const Tensor& b) {
    if (!x.defined() || !w.defined())
        throw value_error(std::string(op) + ": undefined input or weight");
    runtime::check_same(op, x, w);
    runtime::check_floating(op, x);
    if (b.defined())
        runtime::check_same(op, x, b);
    if (x.dim() != 4 || w.dim() != 4)
        throw shape_error(std::string(op) + ": input " + shapes(x, w) +
                          ": expected a 4-D input [N,C,H,W] and a 4-D weight");
}

/// Every size product a convolution forms stays in range (Note [Checked sizes]).
void check_sizes(const ConvGeom& g, const char* op) {
    const int64_t s[] = {g.N, g.C, g.taps(), g.positions(), g.H, g.W};
    (void)checked_prod(s, 4, op);
    (void)checked_prod(s + 1, 5, op);
    const int64_t y[] = {g.N, g.O, g.positions()};
    (void)checked_prod(y, 3, op);
}

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p_total, int64_t d) {
    return (in + p_total - d * (k - 1) - 1) / s + 1;
}

}  // namespace

IntArg::IntArg(int64_t v) : v_{v} {}
IntArg::IntArg(std::initializer_list<int64_t> v) : v_(v) {}
IntArg::IntArg(std::vector<int64_t> v) : v_(std::move(v)) {}

namespace {

/// The geometry of conv2d(x, w) with padding ph/pw at the top/left and the output size from
/// the total paddings th/tw.
ConvGeom conv_geom(const char* op, const Tensor& x, const Tensor& w, const Tensor& b,
                   std::pair<int64_t, int64_t> s, std::pair<int64_t, int64_t> p,
                   std::pair<int64_t, int64_t> total, std::pair<int64_t, int64_t> d,
                   int64_t groups) {
    check_inputs(op, x, w, b);
    ConvGeom g{};
    g.N = x.size(0), g.C = x.size(1), g.H = x.size(2), g.W = x.size(3);
    g.O = w.size(0), g.kh = w.size(2), g.kw = w.size(3), g.groups = groups;
    g.sh = s.first, g.sw = s.second, g.ph = p.first, g.pw = p.second;
    g.dh = d.first, g.dw = d.second;
    const std::string where = std::string(op) + ": input " + shapes(x, w);
    if (groups <= 0 || g.C % groups != 0 || g.O % groups != 0)
        throw shape_error(where + ": groups " + std::to_string(groups) + " must divide the " +
                          std::to_string(g.C) + " input and " + std::to_string(g.O) +
                          " output channels");
    if (w.size(1) != g.C / groups)
        throw shape_error(where + ": expected weight [O, " + std::to_string(g.C / groups) +
                          ", kh, kw] for " + std::to_string(g.C) + " input channels in " +
                          std::to_string(groups) + " groups");
    if (g.sh <= 0 || g.sw <= 0 || g.dh <= 0 || g.dw <= 0 || g.ph < 0 || g.pw < 0 ||
        total.first < 0 || total.second < 0)
        throw value_error(where + ": stride and dilation must be positive and padding >= 0");
    if (g.kh <= 0 || g.kw <= 0)
        throw shape_error(where + ": empty kernel");
    const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
    if (g.H + total.first < eh || g.W + total.second < ew)
        throw shape_error(where + ": the kernel (" + std::to_string(eh) + "x" + std::to_string(ew) +
                          " dilated) is larger than the padded input (" +
                          std::to_string(g.H + total.first) + "x" +
                          std::to_string(g.W + total.second) + ")");
    g.oh = out_size(g.H, g.kh, g.sh, total.first, g.dh);
    g.ow = out_size(g.W, g.kw, g.sw, total.second, g.dw);
    if (b.defined() && (b.dim() != 1 || b.size(0) != g.O))
        throw shape_error(where + ": bias " + shape_str(b.sizes()) + ", expected [" +
                          std::to_string(g.O) + "]");
    // every size product stays in range (Note [Checked sizes])
    check_sizes(g, op);
    return g;
}

Tensor add_bias(Tensor y, const Tensor& b) {
    return b.defined() ? y + b.reshape({1, b.size(0), 1, 1}) : y;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const IntArg& padding, const IntArg& dilation, int64_t groups) {
    const auto p = pair_of("conv2d", "padding", padding, 0, 0);
    const ConvGeom g = conv_geom("conv2d", x, w, b, pair_of("conv2d", "stride", stride, 1, 1), p,
                                 {2 * p.first, 2 * p.second},
                                 pair_of("conv2d", "dilation", dilation, 1, 1), groups);
    return apply(Kind::Forward, x, w, g, b);
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const PaddingMode& mode, const IntArg& dilation, int64_t groups) {
    const std::string& padding = mode.name();
    if (padding == "valid")
        return conv2d(x, w, b, stride, IntArg(0), dilation, groups);
    if (padding != "same")
        throw value_error("conv2d: padding \"" + padding + "\": expected \"same\" or \"valid\"");
    const auto s = pair_of("conv2d", "stride", stride, 1, 1);
    const auto d = pair_of("conv2d", "dilation", dilation, 1, 1);
    if (s.first != 1 || s.second != 1)
        throw value_error("conv2d: padding \"same\" needs stride 1");
    check_inputs("conv2d", x, w, b);
    // total padding d·(k-1), the odd one more at the bottom/right (as PyTorch)
    const int64_t th = d.first * (w.size(2) - 1), tw = d.second * (w.size(3) - 1);
    const ConvGeom g = conv_geom("conv2d", x, w, b, s, {th / 2, tw / 2}, {th, tw}, d, groups);
    return apply(Kind::Forward, x, w, g, b);
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              int64_t padding, const IntArg& dilation, int64_t groups) {
    return conv2d(x, w, b, stride, IntArg(padding), dilation, groups);
}

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              int64_t padding, const IntArg& dilation, int64_t groups) {
    return conv1d(x, w, b, stride, IntArg(padding), dilation, groups);
}

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const IntArg& padding, const IntArg& dilation, int64_t groups) {
    if (!x.defined() || !w.defined() || x.dim() != 3 || w.dim() != 3)
        throw shape_error("conv1d: input " + (x.defined() ? shape_str(x.sizes()) : "undefined") +
                          ", weight " + (w.defined() ? shape_str(w.sizes()) : "undefined") +
                          ": expected a 3-D input [N,C,L] and a 3-D weight [O,C/groups,k]");
    auto one = [](const IntArg& a, int64_t none) {
        const auto& v = a.values();
        return IntArg({1, v.empty() ? none : v[0]});
    };
    for (const IntArg* a : {&stride, &padding, &dilation})
        if (a->values().size() > 1)
            throw shape_error("conv1d: stride, padding and dilation take one value each");
    IntArg pad = padding.values().empty() ? IntArg({0, 0}) : IntArg({0, padding.values()[0]});
    return conv2d(x.unsqueeze(2), w.unsqueeze(2), b, one(stride, 1), pad, one(dilation, 1), groups)
        .squeeze(2);
}

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const PaddingMode& mode, const IntArg& dilation, int64_t groups) {
    if (!x.defined() || !w.defined() || x.dim() != 3 || w.dim() != 3)
        throw shape_error("conv1d: expected a 3-D input [N,C,L] and a 3-D weight [O,C/groups,k]");
    for (const IntArg* a : {&stride, &dilation})
        if (a->values().size() > 1)
            throw shape_error("conv1d: stride and dilation take one value each");
    const int64_t s = stride.values().empty() ? 1 : stride.values()[0];
    const int64_t d = dilation.values().empty() ? 1 : dilation.values()[0];
    return conv2d(x.unsqueeze(2), w.unsqueeze(2), b, {1, s}, mode, {1, d}, groups).squeeze(2);
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
                        const IntArg& padding, const IntArg& output_padding, int64_t groups,
                        const IntArg& dilation) {
    const char* op = "conv_transpose2d";
    check_inputs(op, x, w, b);
    const auto s = pair_of(op, "stride", stride, 1, 1), p = pair_of(op, "padding", padding, 0, 0);
    const auto d = pair_of(op, "dilation", dilation, 1, 1);
    const auto op_ = pair_of(op, "output_padding", output_padding, 0, 0);
    if (op_.first < 0 || op_.second < 0 || (op_.first >= s.first && op_.first >= d.first) ||
        (op_.second >= s.second && op_.second >= d.second))
        throw value_error(std::string(op) + ": input " + shapes(x, w) +
                          ": output_padding must be >= 0 and smaller than stride or dilation");
    if (groups <= 0 || w.size(0) % groups != 0)
        throw shape_error(std::string(op) + ": input " + shapes(x, w) + ": groups " +
                          std::to_string(groups) + " must divide the weight's " +
                          std::to_string(w.size(0)) + " input channels");
    if (x.size(1) != w.size(0))
        throw shape_error(std::string(op) + ": input " + shapes(x, w) + ": input has " +
                          std::to_string(x.size(1)) + " channels, weight expects " +
                          std::to_string(w.size(0)));
    if (s.first <= 0 || s.second <= 0 || d.first <= 0 || d.second <= 0 || p.first < 0 ||
        p.second < 0)
        throw value_error(std::string(op) + ": input " + shapes(x, w) +
                          ": stride and dilation must be positive and padding >= 0");
    // the convolution this one transposes: its input has the size computed here, its output x
    const int64_t H =
        (x.size(2) - 1) * s.first - 2 * p.first + d.first * (w.size(2) - 1) + op_.first + 1;
    const int64_t W =
        (x.size(3) - 1) * s.second - 2 * p.second + d.second * (w.size(3) - 1) + op_.second + 1;
    if (H <= 0 || W <= 0)
        throw shape_error(std::string(op) + ": input " + shapes(x, w) + ": the output would be " +
                          std::to_string(H) + "x" + std::to_string(W));
    ConvGeom g{};
    g.N = x.size(0), g.C = w.size(1) * groups, g.H = H, g.W = W;
    g.O = w.size(0), g.kh = w.size(2), g.kw = w.size(3), g.groups = groups;
    g.sh = s.first, g.sw = s.second, g.ph = p.first, g.pw = p.second;
    g.dh = d.first, g.dw = d.second, g.oh = x.size(2), g.ow = x.size(3);
    if (b.defined() && (b.dim() != 1 || b.size(0) != g.C))
        throw shape_error(std::string(op) + ": input " + shapes(x, w) + ": bias " +
                          shape_str(b.sizes()) + ", expected [" + std::to_string(g.C) + "]");
    check_sizes(g, op);
    return add_bias(apply(Kind::Input, x, w, g), b);
}

namespace {

/// unfold / fold over planes N·C of [H, W], one sample per plane group (col [N, C·taps, L]).
Window fold_window(const char* op, const std::string& where, int64_t N, int64_t C, int64_t H,
                   int64_t W, const IntArg& kernel, const IntArg& dilation, const IntArg& padding,
                   const IntArg& stride) {
    const auto k = pair_of(op, "kernel_size", kernel, 0, 0);
    const auto d = pair_of(op, "dilation", dilation, 1, 1);
    const auto p = pair_of(op, "padding", padding, 0, 0);
    const auto s = pair_of(op, "stride", stride, 1, 1);
    if (k.first <= 0 || k.second <= 0 || d.first <= 0 || d.second <= 0 || s.first <= 0 ||
        s.second <= 0 || p.first < 0 || p.second < 0)
        throw value_error(where +
                          ": kernel_size, dilation and stride must be positive and "
                          "padding >= 0");
    Window g;
    g.kh = k.first, g.kw = k.second, g.dh = d.first, g.dw = d.second;
    g.ph = p.first, g.pw = p.second, g.sh = s.first, g.sw = s.second;
    g.h = H, g.w = W, g.planes = N * C, g.samples = 1;
    const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
    if (H + 2 * g.ph < eh || W + 2 * g.pw < ew)
        throw shape_error(where + ": the kernel (" + std::to_string(eh) + "x" + std::to_string(ew) +
                          " dilated) is larger than the padded input (" +
                          std::to_string(H + 2 * g.ph) + "x" + std::to_string(W + 2 * g.pw) + ")");
    g.oh = out_size(H, g.kh, g.sh, 2 * g.ph, g.dh);
    g.ow = out_size(W, g.kw, g.sw, 2 * g.pw, g.dw);
    const int64_t sizes[] = {N, C, g.kh * g.kw, g.oh * g.ow, H, W};
    (void)checked_prod(sizes, 4, op);
    (void)checked_prod(sizes + 3, 3, op);
    (void)checked_prod(sizes, 2, op);
    return g;
}

Tensor fold_apply(const Tensor& col, const Window& g);

/// col = unfold(x) with window g; recorded, its backward the fold.
Tensor unfold_apply(const Tensor& x, const Window& g) {
    const Tensor xc = x.detach().contiguous();
    const int64_t N = x.size(0), C = x.size(1);
    Tensor col = runtime::empty({N, C * g.kh * g.kw, g.oh * g.ow}, x.dtype(), x.device(), "unfold");
    if (col.numel() > 0)
        runtime::be(x).window(WindowOp::Unfold, g, runtime::view(col), runtime::view(xc), {});
    if (should_record({&x}))
        record("unfold", {&x}, col, [g](const Tensor& dy, const Node& n) {
            Grads gr(1);
            if (needs(n, 0))
                gr[0] = fold_apply(dy, g);
            return gr;
        });
    return col;
}

/// x = fold(col) with window g (the gather; TG_CONV_SCATTER=1 the scatter, as conv2d's);
/// recorded, its backward the unfold.
Tensor fold_apply(const Tensor& col, const Window& g) {
    const Tensor cc = col.detach().contiguous();
    const int64_t N = col.size(0), C = col.size(1) / (g.kh * g.kw);
    Tensor x = runtime::empty({N, C, g.h, g.w}, col.dtype(), col.device(), "fold");
    if (x.numel() > 0 && col.numel() == 0)
        runtime::fill(x, 0);
    else if (x.numel() > 0)
        runtime::be(col).window(conv_fold_op(), g, runtime::view(x), runtime::view(cc), {});
    if (should_record({&col}))
        record("fold", {&col}, x, [g](const Tensor& dy, const Node& n) {
            Grads gr(1);
            if (needs(n, 0))
                gr[0] = unfold_apply(dy, g);
            return gr;
        });
    return x;
}

}  // namespace

Tensor unfold(const Tensor& x, const IntArg& kernel_size, const IntArg& dilation,
              const IntArg& padding, const IntArg& stride) {
    const char* op = "unfold";
    if (!x.defined())
        throw value_error("unfold: undefined input");
    runtime::check_floating(op, x);
    const std::string where = std::string(op) + ": input " + shape_str(x.sizes());
    if (x.dim() != 4)
        throw shape_error(where + ": expected a 4-D input [N,C,H,W]");
    const Window g = fold_window(op, where, x.size(0), x.size(1), x.size(2), x.size(3), kernel_size,
                                 dilation, padding, stride);
    return unfold_apply(x, g);
}

Tensor fold(const Tensor& col, const IntArg& output_size, const IntArg& kernel_size,
            const IntArg& dilation, const IntArg& padding, const IntArg& stride) {
    const char* op = "fold";
    if (!col.defined())
        throw value_error("fold: undefined input");
    runtime::check_floating(op, col);
    const std::string where = std::string(op) + ": input " + shape_str(col.sizes());
    if (col.dim() != 3)
        throw shape_error(where + ": expected a 3-D input [N, C*kh*kw, L]");
    const auto out = pair_of(op, "output_size", output_size, -1, -1);
    if (out.first <= 0 || out.second <= 0)
        throw value_error(where + ": output_size must be two positive sizes");
    const auto k = pair_of(op, "kernel_size", kernel_size, 0, 0);
    const int64_t taps = k.first > 0 && k.second > 0 ? k.first * k.second : 1;
    if (col.size(1) % taps != 0)
        throw shape_error(where + ": dim 1 (" + std::to_string(col.size(1)) +
                          ") is not a multiple of the kernel's " + std::to_string(taps) + " taps");
    const Window g = fold_window(op, where, col.size(0), col.size(1) / taps, out.first, out.second,
                                 kernel_size, dilation, padding, stride);
    if (col.size(2) != g.oh * g.ow)
        throw shape_error(where + ": output_size " + std::to_string(out.first) + "x" +
                          std::to_string(out.second) + " has " + std::to_string(g.oh) + "x" +
                          std::to_string(g.ow) + " = " + std::to_string(g.oh * g.ow) +
                          " windows, the input " + std::to_string(col.size(2)));
    return fold_apply(col, g);
}

}  // namespace tg
