// Convolutions that need no unfolded buffer: oneDNN's (TG_DNNL), 1x1 stride-1 ones (the GEMMs
// straight on x) and depthwise ones (the CPU's direct kernels); conv_gemm.cpp's apply() takes
// these paths when direct() names one.
//
// Note [The convolution strategy by shape]: a convolution's three bilinear ops (Note
// [Convolution as three bilinear ops]) are lowered by the first of these that fits:
// - oneDNN (built with TG_DNNL; float32 on the CPU): windows of more than one tap, at least 16
//   channels per group on both sides, at least 32 output positions per sample (Note [oneDNN
//   convolutions] in cpu/dnnl_conv.cpp). There its primitives do the windows and the products in
//   one pass at the GEMMs' rate, which im2col cannot (below). bench_conv_suite rows, forward +
//   backward, im2col -> oneDNN, 1 thread, minima of 25 steps (a busy 2-core Zen 5 host, SkylakeX
//   OpenBLAS): dcgan_d2 19.4 -> 13.9 ms, dcgan_d3 17.1 -> 11.6, dcgan_g2 16.6 -> 11.6, dcgan_g3
//   19.4 -> 13.9, resnet_3x3_s1_56 30.9 -> 24.6, resnet_3x3_s2_56 16.1 -> 13.2, resnet_3x3_s1_7
//   27.9 -> 23.8, cnn_3x3_32_14 17.7 -> 13.1, the conv1d 14.4 -> 13.5; on 2 threads those rows
//   come to 0.95-1.01x LibTorch with oneDNN on 2 threads (the same library). Outside the rule it
//   loses (oneDNN forced, TG_CONV_DNNL=1, against the paths below, 1 thread): 4x4 outputs
//   (dcgan_g1 30.7 vs 16.3 ms; dcgan_d4 a tie), 1 or 3 input channels (cnn_3x3_1_28 7.1 vs 1.9,
//   dcgan_d1 3.9 vs 2.5), 1x1 windows (resnet_1x1_s1_56 21.6 vs 13.9, s2 38.7 vs 25.1) and
//   depthwise (9.0 vs 7.8, 13.4 vs 12.9). Blocked layouts (format any, with reorders from and to
//   NC(D)HW) against plain ones (TG_DNNL_PLAIN=1): plain lost every 3x3 row (resnet_3x3_s1_56
//   28.4 -> 44.8 ms, dcgan_d2 14.6 -> 22.3) and the depthwise ones 3x, won only the 1x1 rows the
//   rule leaves to the GEMMs. The bias rides in the forward primitive. Threads: the samples are
//   shared out over tapegrad's threads, each part one primitive on one OpenMP thread (dw the
//   parts' sums added in order), so no OpenMP team runs: with oneDNN's own 2 OpenMP threads
//   (TG_DNNL_OMP=1), libgomp's workers spin after each primitive, and on a host whose other core
//   was busy (load 5-7 on 2 cores) a dcgan_d2 step took 60-136 ms against 14-24 ms shared out
//   (OMP_WAIT_POLICY=passive: 16-23; LibTorch, OpenMP too, 30-128 on 2 threads); on a quieter
//   host OpenMP's 2 threads made those rows 0.95-1.01x LibTorch on 2 threads and passive was 2-8%
//   slower. The CNN example's epoch (bench_cnn_epoch_tg, 60 batches, 2 threads, that busy
//   host, medians of 3 alternated): 2.25 s -> 1.73 s with oneDNN. oneDNN promises the same bits for
//   a fixed thread count only (the paths below do not depend on it); TG_CONV_DNNL=0 turns it off,
//   TG_CONV_DNNL=1 takes every float32 convolution.
// - Pointwise: 1x1 windows, stride 1, no padding, 2-D, at least 256 positions per sample: a
//   sample's unfolded columns are x[n] itself ([C, L], ld L), so the GEMMs read x and write y
//   and dx in place, a sample at a time, with no unfold, no fold and no column buffer (ResNet-50's
//   1x1 layers at 56x56: the unfold was a copy of x per step and a fold of dx). Samples are
//   shared out over the threads as chunks are; dw sums its samples in up to 8 fixed blocks, as
//   weight_raw does (bit-identical for any thread count). Below 256 positions a per-sample
//   GEMM is too small for the BLAS and the chunked path's copy is what batches it.
// - Depthwise: groups = input channels = output channels, 2-D, on the CPU in float32/float64:
//   the direct kernels of Note [Depthwise convolutions] (cpu/depthwise.cpp). Through im2col each
//   group's GEMM is a [1, 9] x [9, L] GEMV per sample and channel.
// - Dense 3-D: stride 1, groups 1, float32, on a CPU with AVX-512: the direct kernels of Note
//   [Direct dense convolutions] (cpu/conv_dense.cpp), no unfolded buffer (Input is the Forward
//   kernel over dy with the taps reversed; Weight its own kernel, for kw <= 4, else the GEMMs).
//   bench_conv3d's step, 1 thread, SkylakeX OpenBLAS (Zen 5), on the tiles: the forwards 30 ms
//   (24 of them GEMMs at 150 GFLOP/s, 7 unfolding), the input gradient 46 (33 GEMMs of inner
//   size 32 at 110 GFLOP/s, 13 folding), the weight gradients 37 (30 GEMMs, 7 unfolding); the
//   step 105 -> 83 ms with Forward and Input on the kernel, and the tapegrad side's process CPU
//   time (7 steps) 0.796 -> 0.639 -> 0.527 s with Weight too (a loaded host).
//   2-D and 1-D convolutions (depth 1 to the kernel) stay on im2col: the kernels lose there.
//   bench_conv_suite rows alone, 1 thread, forward / backward ms, im2col vs the kernels for all
//   three ops (medians, A/B alternated, a busy 2-core Zen 5 host): ResNet's 3x3 at 7x7x512
//   10.6/20.7 vs 22.3/67.4 (a 7-wide row fills 7 of 16 lanes), at 56x56x64 11.0/22.0 vs
//   10.7/25.8, the conv1d over 4096 4.6/10.9 vs 5.5/9.9 (whole-process CPU time 1.16x), the CNN
//   example's 1 -> 32 at 28x28 0.57/1.6 vs 1.3/4.3 and 32 -> 64 at 14x14 5.6/13.7 vs 6.0/16.9.
//   Per op only Forward at 56x56 and Weight on the conv1d came within noise of the GEMMs.
// - Depth tiles (3-D convolutions whose sample unfolds to more than 1 MiB: Note [Depth tiles]).
// - Otherwise im2col chunks (Note [Sample-parallel convolutions]): as many samples as keep the
//   chunk's columns within 1 MiB, but at least enough for 512 columns while they stay within
//   16 MiB (the column buffer's cap, per thread); one GEMM per sample when a sample has at least
//   256 positions, else one GEMM over the chunk through a permuted copy of y/dy.
// bench_conv_suite measures the choice (--strategies forces each form), a busy 2-core AMD EPYC
// host, 1 thread, one round: per-sample, chunked and whole-batch GEMMs are within noise of each
// other at 56x56 and 112x112 maps; whole-batch beats 1 MiB chunks where a sample has few
// positions (ResNet's 3x3 at 7x7x512: 104 -> 78 ms; DCGAN's 4x4 layers at 4x4: 59 -> 48 ms),
// which the 512-column floor gives (those rows and DCGAN's 8x8 ones, whole-process CPU time:
// 0.83x at 1 thread, 0.87x at 2); the depthwise kernels cut MobileNetV2's two depthwise rows'
// steps from 32 and 59 ms to 21 and 36 ms.
// Without oneDNN, stride 2 (DCGAN's 4x4 and ResNet's 3x3 downsampling layers) stays on im2col.
// Where its time goes,
// perf samples over 20 steps, 1 thread, of GEMMs (kernel and packing) / unfold / fold: dcgan_d2
// 73/16/11%, dcgan_d3 80/12/8, resnet_3x3_s2_56 77/13/10 (resnet_3x3_s1_7 85/6/9, cnn_3x3_32_14
// 78/5/16). dcgan_d2's GEMMs alone (up to ~15 of its 20.8 ms, ~0.88 of the SGEMM peak) take about
// as long as oneDNN's whole layer (14.85 ms, 0.90 of the peak, with no unfold or fold to pay): with
// unfold and fold free the row would only draw level with LibTorch; it needs a kernel that does the
// windows and the products in one pass at the GEMMs' rate. Splitting a stride-2 convolution into
// its input's four phases (space-to-depth) gives a [O, 16C] x [16C, L] GEMM over as many unfolded
// values as the stride-2 one, so it helps only through a faster stride-1 path, which 2-D
// convolutions do not have (above). Tried and not kept, unfold and fold being (it seems) bound by
// the column buffer's memory traffic rather than by instructions: AVX-512 rows for the stride-2
// unfold (permutes) and fold (masked adds), a fold summing each row's 16 columns in a register over
// the taps (the perf shares of unfold and fold against the GEMM kernel the same or higher), chunk
// caps of 256 KiB to 2 MiB for cnn_3x3_32_14 (within noise) and the dense kernel with
// embedded-broadcast multiply-adds over 24 channels (no change on the conv1d).
// TG_CONV_DIRECT=0 turns the first four off, TG_CONV_DENSE=0 the dense one alone (for benchmarks
// and tests of the choice).
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "backend/cpu/conv_dense.hpp"
#ifdef TG_DNNL
#include <atomic>

#include "backend/cpu/dnnl_conv.hpp"
#include "backend/cpu/threads.hpp"
#endif
#include "ops/conv_gemm.hpp"
#include "runtime/dispatch.hpp"

namespace tg::conv {

namespace {

bool enabled() {
    const char* e = std::getenv("TG_CONV_DIRECT");
    return !(e && e[0] == '0');
}

/// Whether oneDNN takes this convolution: built with TG_DNNL, not TG_CONV_DNNL=0, CPU float32,
/// no empty sizes (tapegrad's own paths give those their zeros), and a shape where it measured
/// faster than the other paths (the Note above): windows of more than one tap over at least 16
/// channels per group on both sides (so not depthwise), at least 32 output positions.
/// TG_CONV_DNNL=1 takes every float32 convolution with nonempty sizes (tests and benchmarks).
bool dnnl(const ConvGeom& g, const Tensor& t) {
#ifdef TG_DNNL
    const char* e = std::getenv("TG_CONV_DNNL");
    if ((e && e[0] == '0') || !t.device().is_cpu() || t.dtype() != kFloat32 || g.N == 0 ||
        g.C == 0 || g.O == 0)
        return false;
    if (e && e[0] == '1')
        return true;
    return g.taps() > 1 && g.cg() >= 16 && g.og() >= 16 && g.positions() >= 32;
#else
    (void)g, (void)t;
    return false;
#endif
}

bool pointwise(const ConvGeom& g) {
    return g.nd == 2 && g.taps() == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
           g.positions() >= 256;
}

bool depthwise(const ConvGeom& g, const Tensor& t) {
    return g.nd == 2 && g.groups == g.C && g.O == g.C && t.device().is_cpu() &&
           (t.dtype() == kFloat32 || t.dtype() == kFloat64);
}

bool dense(const ConvGeom& g, const Tensor& t) {
    return g.nd == 3 && g.groups == 1 && g.st == 1 && g.sh == 1 && g.sw == 1 &&
           t.device().is_cpu() && t.dtype() == kFloat32 && backend::cpu::dense_conv_available();
}

/// Forward (in = x, w, b), Input (in = dy, w) or Weight (in = x, w = dy) on the dense kernels.
Tensor dense_run(Kind k, const ConvGeom& g, const Tensor& in, const Tensor& w, const Tensor& b) {
    backend::cpu::DenseConv d;
    d.N = g.N, d.kt = g.kt, d.kh = g.kh, d.kw = g.kw, d.dt = g.dt, d.dh = g.dh, d.dw = g.dw;
    if (k != Kind::Input) {
        d.C = g.C, d.O = g.O, d.T = g.T, d.H = g.H, d.W = g.W, d.ot = g.ot, d.oh = g.oh,
        d.ow = g.ow, d.pt = g.pt, d.ph = g.ph, d.pw = g.pw;
    } else {  // dy's windows: front padding d·(k-1) - p, output x's extents
        d.C = g.O, d.O = g.C, d.T = g.ot, d.H = g.oh, d.W = g.ow, d.ot = g.T, d.oh = g.H,
        d.ow = g.W, d.pt = g.dt * (g.kt - 1) - g.pt, d.ph = g.dh * (g.kh - 1) - g.ph,
        d.pw = g.dw * (g.kw - 1) - g.pw;
    }
    const Shape shape = k == Kind::Forward ? g.y_shape()
                        : k == Kind::Input ? g.x_shape()
                                           : g.w_shape();
    Tensor out = runtime::empty(shape, kFloat32, in.device(), "conv3d");
    Tensor ws =
        runtime::empty({backend::cpu::dense_conv_workspace(d)}, kFloat32, in.device(), "conv3d");
    if (k == Kind::Weight) {
        backend::cpu::dense_conv_weight(d, out.data_ptr<float>(), in.data_ptr<float>(),
                                        w.data_ptr<float>(), ws.data_ptr<float>());
        return out;
    }
    const Tensor bc = b.defined() ? b.contiguous() : b;
    backend::cpu::dense_conv(d, out.data_ptr<float>(), in.data_ptr<float>(), w.data_ptr<float>(),
                             b.defined() ? bc.data_ptr<float>() : nullptr, k == Kind::Input,
                             ws.data_ptr<float>());
    return out;
}

/// The depthwise kernel op over the whole batch: out, in, aux as backend.hpp says.
void depthwise_kernel(backend::WindowOp op, const ConvGeom& g, const Tensor& out, const Tensor& in,
                      const Tensor& aux) {
    backend::Window w = g.window(g.N);
    w.samples = g.N;
    if (g.N == 0 && op != backend::WindowOp::DepthwiseWeight)
        return;
    if (g.N == 0) {
        runtime::fill(out, 0);
        return;
    }
    runtime::be(in).window(op, w, runtime::view(out), runtime::view(in), runtime::view(aux));
}

Tensor forward_pointwise(const Tensor& x, const Tensor& w, const Tensor& b, const ConvGeom& g) {
    Tensor y = runtime::empty(g.y_shape(), x.dtype(), x.device(), "conv2d");
    const int64_t L = g.positions(), K = g.cg();
    const Tensor bias_column = b.defined() ? b.reshape({g.O, 1}) : Tensor();
    runtime::parallel_parts(x, g.N, [&](int64_t n) {
        const int64_t at_y = n * g.O * L;
        if (b.defined())
            runtime::copy_into(runtime::alias(y, {g.O, L}, {L, 1}, at_y, "conv2d"), bias_column);
        for (int64_t q = 0; q < g.groups; ++q)
            runtime::gemm("conv2d", false, false, g.og(), L, K, 1, runtime::view(w, q * g.og() * K),
                          K, runtime::view(x, (n * g.C + q * K) * L), L, b.defined() ? 1 : 0,
                          runtime::alias(y, {g.og(), L}, {L, 1}, at_y + q * g.og() * L, "conv2d"));
    });
    return y;
}

Tensor input_pointwise(const Tensor& dy, const Tensor& w, const ConvGeom& g) {
    Tensor dx = runtime::empty(g.x_shape(), dy.dtype(), dy.device(), "conv2d");
    const int64_t L = g.positions(), K = g.cg();
    runtime::parallel_parts(dy, g.N, [&](int64_t n) {
        for (int64_t q = 0; q < g.groups; ++q)
            runtime::gemm("conv2d", true, false, K, L, g.og(), 1, runtime::view(w, q * g.og() * K),
                          K, runtime::view(dy, (n * g.O + q * g.og()) * L), L, 0,
                          runtime::alias(dx, {K, L}, {L, 1}, (n * g.C + q * K) * L, "conv2d"));
    });
    return dx;
}

Tensor weight_pointwise(const Tensor& x, const Tensor& dy, const ConvGeom& g) {
    const int64_t L = g.positions(), K = g.cg(), blocks = std::min<int64_t>(g.N, 8);
    std::vector<Tensor> partial(size_t(std::max<int64_t>(blocks, 1)));
    runtime::parallel_parts(x, blocks, [&](int64_t block) {
        Tensor acc = runtime::empty(g.w_shape(), x.dtype(), x.device(), "conv2d");
        const int64_t n0 = g.N * block / blocks, n1 = g.N * (block + 1) / blocks;
        for (int64_t n = n0; n < n1; ++n)
            for (int64_t q = 0; q < g.groups; ++q)
                runtime::gemm("conv2d", false, true, g.og(), K, L, 1,
                              runtime::view(dy, (n * g.O + q * g.og()) * L), L,
                              runtime::view(x, (n * g.C + q * K) * L), L, n == n0 ? 0 : 1,
                              runtime::alias(acc, {g.og(), K}, {K, 1}, q * g.og() * K, "conv2d"));
        partial[size_t(block)] = acc;
    });
    return sum_blocks(partial, blocks, g, x);
}

}  // namespace

Direct direct(const ConvGeom& g, const Tensor& t, Kind k, bool with_dnnl) {
    if (!enabled())
        return Direct::None;
    if (with_dnnl && dnnl(g, t))
        return Direct::Dnnl;
    if (pointwise(g))
        return Direct::Pointwise;
    if (depthwise(g, t))
        return Direct::Depthwise;
    if (dense(g, t) && (k != Kind::Weight || g.kw <= backend::cpu::kDenseWeightMaxKw))
        return Direct::Dense;
    return Direct::None;
}

Tensor direct_forward(Direct d, const Tensor& x, const Tensor& w, const Tensor& b,
                      const ConvGeom& g) {
    if (d == Direct::Pointwise)
        return forward_pointwise(x, w, b, g);
    if (d == Direct::Dense)
        return dense_run(Kind::Forward, g, x, w, b);
    Tensor y = runtime::empty(g.y_shape(), x.dtype(), x.device(), "conv2d");
    depthwise_kernel(backend::WindowOp::DepthwiseForward, g, y, x, w);
    if (b.defined() && g.N > 0) {
        const int64_t L = g.positions();
        const Tensor y3 = runtime::alias(y, {g.N, g.O, L}, {g.O * L, L, 1}, 0, "conv2d");
        runtime::binary_into(backend::BinaryOp::add, y3, y3,
                             runtime::alias(b, {g.N, g.O, L}, {0, 1, 0}, 0, "conv2d"), "conv2d", 0,
                             0);
    }
    return y;
}

Tensor direct_input(Direct d, const Tensor& dy, const Tensor& w, const ConvGeom& g) {
    if (d == Direct::Pointwise)
        return input_pointwise(dy, w, g);
    if (d == Direct::Dense)
        return dense_run(Kind::Input, g, dy, w, {});
    Tensor dx = runtime::empty(g.x_shape(), dy.dtype(), dy.device(), "conv2d");
    depthwise_kernel(backend::WindowOp::DepthwiseInput, g, dx, dy, w);
    return dx;
}

Tensor direct_weight(Direct d, const Tensor& x, const Tensor& dy, const ConvGeom& g) {
    if (d == Direct::Pointwise)
        return weight_pointwise(x, dy, g);
    if (d == Direct::Dense)
        return dense_run(Kind::Weight, g, x, dy, {});
    Tensor dw = runtime::empty(g.w_shape(), x.dtype(), x.device(), "conv2d");
    depthwise_kernel(backend::WindowOp::DepthwiseWeight, g, dw, x, dy);
    return dw;
}

Tensor dnnl_apply(Kind k, const Tensor& a, const Tensor& b, const Tensor& c, const ConvGeom& g) {
#ifdef TG_DNNL
    using backend::cpu::cpu_threads;
    using backend::cpu::DnnlOp;
    backend::cpu::DnnlConv d;
    d.N = g.N, d.C = g.C, d.O = g.O, d.groups = g.groups;
    const int64_t axes[3][6] = {{g.T, g.ot, g.kt, g.st, g.pt, g.dt},
                                {g.H, g.oh, g.kh, g.sh, g.ph, g.dh},
                                {g.W, g.ow, g.kw, g.sw, g.pw, g.dw}};
    // conv1d is a conv2d over one row: oneDNN's 1-D form
    const int first = g.nd == 3 ? 0 : g.H == 1 && g.kh == 1 && g.oh == 1 ? 2 : 1;
    d.nd = 3 - first;
    for (int i = first; i < 3; ++i) {
        const int j = i - first;
        d.in[j] = axes[i][0], d.out[j] = axes[i][1], d.k[j] = axes[i][2];
        d.s[j] = axes[i][3], d.p[j] = axes[i][4], d.d[j] = axes[i][5];
    }
    const Shape shape = k == Kind::Forward ? g.y_shape()
                        : k == Kind::Input ? g.x_shape()
                                           : g.w_shape();
    const char* name = g.nd == 3 ? "conv3d" : "conv2d";
    Tensor out = runtime::empty(shape, kFloat32, a.device(), name);
    const Tensor bc = c.defined() ? c.contiguous() : c;  // kept alive for bias
    const float* bias = bc.defined() ? bc.data_ptr<float>() : nullptr;
    const DnnlOp op = k == Kind::Forward ? DnnlOp::Forward
                      : k == Kind::Input ? DnnlOp::Input
                                         : DnnlOp::Weight;
    // Samples shared out over tapegrad's threads, oneDNN on one thread in each (Note [oneDNN
    // convolutions]); one part (one sample, one thread or TG_DNNL_OMP=1): OpenMP's threads.
    const char* e = std::getenv("TG_DNNL_OMP");
    const int64_t parts = e && e[0] == '1' ? 1 : std::min<int64_t>(g.N, cpu_threads());
    if (parts <= 1)
        return backend::cpu::dnnl_conv(op, d, out.data_ptr<float>(), a.data_ptr<float>(),
                                       b.data_ptr<float>(), bias, cpu_threads())
                   ? out
                   : Tensor();
    const int64_t xs = g.C * g.volume(), ys = g.O * g.positions();  // a sample's elements
    const int64_t in_step = k == Kind::Input ? ys : xs, out_step = k == Kind::Input ? xs : ys;
    std::vector<Tensor> partial(size_t(k == Kind::Weight ? parts : 0));
    std::atomic<bool> ok{true};
    runtime::parallel_parts(a, parts, [&](int64_t part) {
        const int64_t n0 = g.N * part / parts;
        backend::cpu::DnnlConv dp = d;
        dp.N = g.N * (part + 1) / parts - n0;
        float* o = out.data_ptr<float>() + n0 * out_step;
        const float* bp = b.data_ptr<float>();
        if (k == Kind::Weight) {
            partial[size_t(part)] = runtime::empty(shape, kFloat32, a.device(), name);
            o = partial[size_t(part)].data_ptr<float>();
            bp += n0 * ys;  // b = dy
        }
        if (!backend::cpu::dnnl_conv(op, dp, o, a.data_ptr<float>() + n0 * in_step, bp, bias, 1))
            ok = false;
    });
    if (!ok)
        return {};
    return k == Kind::Weight ? sum_blocks(partial, parts, g, a, name) : out;
#else
    (void)k, (void)a, (void)b, (void)c, (void)g;
    return {};
#endif
}

}  // namespace tg::conv
