// The CPU's direct kernel for dense stride-1 float32 convolutions (cpu/conv_dense.hpp).
//
// Note [Direct dense convolutions]: a 3-D convolution lowered to im2col writes its unfolded
// columns (C·taps values per output position: 432 for 16 channels and 3x3x3 windows) and the
// BLAS then packs them again before its kernel reads them, so each product is preceded by two
// copies of 27x the input; with few output channels (M = 32) the GEMMs themselves run far from
// the BLAS's peak. This kernel runs the windows in place instead: x is copied once, zero-padded,
// so every tap of an output row is one unmasked load, and each step of the inner loop takes a
// row of 32 output columns (two AVX-512 vectors) for a block of up to 12 output channels
// (24 accumulators in registers), loads the two vectors of x the tap reads and multiplies them by
// each channel's broadcast weight: 24 FMAs for 2 vector loads and 12 broadcasts. The weights are
// packed per block of channels, [C, taps, block] (the adjoint's transposed and reversed), so a
// block's weights are read in order. Units of work are (sample, output depth) pairs, split into
// contiguous ranges over the kernel threads; within a unit the blocks of channels and the rows
// run in order, and every y element is summed over (c, q, a, b) in that order by one thread, so
// y is bit-identical for any thread count. The sums are fused multiply-adds in another order
// than the BLAS's, so values equal the GEMM path's to float32 rounding, not bit for bit.
// The stride-1 input gradient is the same kernel over dy (DenseConv's adjoint). The weight
// gradient (dense_conv_weight) runs over the same padded x: per (sample, output depth) tile, for
// 8 output channels and the 3 column taps of one (c, q, a), 24 vector sums of dy row · x row
// (24 FMAs for 8 dy and 3 x loads; the loops fully unrolled, or GCC keeps the sums in memory
// and the kernel is slower than the GEMMs); at the tile's end each sum's lanes are added into
// its dw element, tiles in order, and the dw elements are shared out over the threads, so dw is
// bit-identical for any thread count too. conv_direct.cpp picks these kernels (Note [The
// convolution strategy by shape]).
#include "backend/cpu/conv_dense.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "backend/cpu/threads.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TG_DENSE_AVX512 1
#else
#define TG_DENSE_AVX512 0
#endif

namespace tg::backend::cpu {

namespace {

constexpr int kMaxBlock = 12;  // output channels per block: 24 accumulators of 32 columns

/// The padded extents: every input depth, row and column the outputs read, plus slack after
/// the last row for the vector loads past a row's end (their lanes are not stored).
struct Padded {
    int64_t t, h, w, plane;
    explicit Padded(const DenseConv& g)
        : t(g.ot + g.dt * (g.kt - 1)),
          h(g.oh + g.dh * (g.kh - 1)),
          w(g.ow + g.dw * (g.kw - 1)),
          plane(t * h * w) {}
};
constexpr int64_t kSlack = 64;

#if TG_DENSE_AVX512
/// Runs body(u0, u1) over [0, n) in one contiguous range per kernel thread.
template <class F>
void ranges(int64_t n, const F& body) {
    const int parts = int(std::min<int64_t>(cpu_threads(), n));
    if (parts < 2) {
        body(int64_t(0), n);
        return;
    }
    cpu_parallel(parts, [&](int t) { body(n * t / parts, n * (t + 1) / parts); });
}

/// The zero-padded copy of x: plane (n, c) as [t, h, w], depth zp holding x depth zp - pt.
void pad_input(const DenseConv& g, const Padded& p, const float* x, float* xp) {
    ranges(g.N * g.C * p.t, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t plane = r / p.t, z = r % p.t - g.pt;
            float* out = xp + r * p.h * p.w;
            if (z < 0 || z >= g.T) {
                std::fill(out, out + p.h * p.w, 0.f);
                continue;
            }
            const int64_t j0 = std::clamp<int64_t>(g.pw, 0, p.w),
                          j1 = std::clamp<int64_t>(g.pw + g.W, j0, p.w);
            for (int64_t yp = 0; yp < p.h; ++yp, out += p.w) {
                const int64_t y = yp - g.ph;
                if (y < 0 || y >= g.H) {
                    std::fill(out, out + p.w, 0.f);
                    continue;
                }
                const float* src = x + ((plane * g.T + z) * g.H + y) * g.W + (j0 - g.pw);
                std::fill(out, out + j0, 0.f);
                std::copy(src, src + (j1 - j0), out + j0);
                std::fill(out + j1, out + p.w, 0.f);
            }
        }
    });
}

/// The output channels of block b of nb: [O·b/nb, O·(b+1)/nb).
int64_t block_start(int64_t O, int64_t nb, int64_t b) {
    return O * b / nb;
}

/// The weights per block of output channels: block [o0, o1) at o0·C·taps, as [C, taps, o1-o0].
std::vector<float> pack_weights(const DenseConv& g, const float* w, bool adjoint, int64_t nb) {
    const int64_t taps = g.kt * g.kh * g.kw;
    std::vector<float> wp(size_t(g.O * g.C * taps));
    for (int64_t b = 0; b < nb; ++b) {
        const int64_t o0 = block_start(g.O, nb, b), ob = block_start(g.O, nb, b + 1) - o0;
        float* out = wp.data() + o0 * g.C * taps;
        for (int64_t c = 0; c < g.C; ++c)
            for (int64_t k = 0; k < taps; ++k)
                for (int64_t u = 0; u < ob; ++u)
                    out[(c * taps + k) * ob + u] = adjoint
                                                       ? w[(c * g.O + o0 + u) * taps + taps - 1 - k]
                                                       : w[((o0 + u) * g.C + c) * taps + k];
    }
    return wp;
}

/// One output row of ow columns for OB channels: y[u·ys + j] (u < OB) from the padded rows
/// x + c·cs + roff[r] (r < nr: the (q, a) taps) read at column j + b·dw, the weights wp
/// [C, nr, kw, OB] in that order; JV vectors of 16 columns a step, the last under masks.
template <int OB, int JV>
__attribute__((target("avx512f"))) void dense_row(const float* x, int64_t cs, int64_t C,
                                                  const int64_t* roff, int64_t nr, int64_t kw,
                                                  int64_t dw, const float* wp, const float* bias,
                                                  float* y, int64_t ys, int64_t ow) {
    for (int64_t j = 0; j < ow; j += 16 * JV) {
        __mmask16 m[JV];
        for (int v = 0; v < JV; ++v) {
            const int64_t n = std::clamp<int64_t>(ow - j - 16 * v, 0, 16);
            m[v] = __mmask16(n == 16 ? 0xFFFFu : (1u << n) - 1u);
        }
        __m512 acc[OB][JV];
#pragma GCC unroll 12
        for (int u = 0; u < OB; ++u)
            for (int v = 0; v < JV; ++v)
                acc[u][v] = bias ? _mm512_set1_ps(bias[u]) : _mm512_setzero_ps();
        const float* w = wp;
        for (int64_t c = 0; c < C; ++c) {
            const float* xc = x + c * cs + j;
            for (int64_t r = 0; r < nr; ++r) {
                const float* xr = xc + roff[r];
                for (int64_t b = 0; b < kw; ++b, w += OB) {
                    __m512 xv[JV];
                    for (int v = 0; v < JV; ++v)
                        xv[v] = _mm512_loadu_ps(xr + b * dw + 16 * v);
#pragma GCC unroll 12
                    for (int u = 0; u < OB; ++u) {
                        const __m512 wv = _mm512_set1_ps(w[u]);
                        for (int v = 0; v < JV; ++v)
                            acc[u][v] = _mm512_fmadd_ps(wv, xv[v], acc[u][v]);
                    }
                }
            }
        }
#pragma GCC unroll 12
        for (int u = 0; u < OB; ++u)
            for (int v = 0; v < JV; ++v)
                _mm512_mask_storeu_ps(y + u * ys + j + 16 * v, m[v], acc[u][v]);
    }
}

using RowKernel = void (*)(const float*, int64_t, int64_t, const int64_t*, int64_t, int64_t,
                           int64_t, const float*, const float*, float*, int64_t, int64_t);

template <int JV, int... OB>
RowKernel row_kernel_of(int ob, std::integer_sequence<int, OB...>) {
    RowKernel table[] = {dense_row<OB + 1, JV>...};
    return table[ob - 1];
}

RowKernel row_kernel(int64_t ob, int64_t ow) {
    const auto blocks = std::make_integer_sequence<int, kMaxBlock>();
    return ow > 16 ? row_kernel_of<2>(int(ob), blocks) : row_kernel_of<1>(int(ob), blocks);
}

#pragma GCC diagnostic push  // GCC 12 flags _mm512_undefined inside the intrinsics' own headers
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
/// The weight gradient's sums over one tile (sample n, output depth z) for OB output channels
/// [o0, o0 + OB) and one input channel c: for each (q, a) tap row, acc[u][b] sums dy row i of
/// channel u times the padded x row it read at tap (q, a, b), 16 columns a vector (dy's last
/// vector under a mask); then each acc's lanes are added into dw[u·ct + (q·kh + a)·kw + b].
template <int OB, int KW>
__attribute__((target("avx512f"))) void weight_tile(const DenseConv& g, const Padded& p,
                                                    const float* xc, const float* dy, int64_t L,
                                                    float* dw, int64_t ct) {
    for (int64_t q = 0; q < g.kt; ++q)
        for (int64_t a = 0; a < g.kh; ++a) {
            __m512 acc[OB][KW];
#pragma GCC unroll 12
            for (int u = 0; u < OB; ++u)
#pragma GCC unroll 4
                for (int b = 0; b < KW; ++b)
                    acc[u][b] = _mm512_setzero_ps();
            for (int64_t i = 0; i < g.oh; ++i) {
                const float* xr = xc + (q * g.dt * p.h + i + a * g.dh) * p.w;
                const float* dr = dy + i * g.ow;
                for (int64_t j = 0; j < g.ow; j += 16) {
                    const int64_t n = std::min<int64_t>(16, g.ow - j);
                    const __mmask16 m = __mmask16(n == 16 ? 0xFFFFu : (1u << n) - 1u);
                    __m512 xv[KW];
#pragma GCC unroll 4
                    for (int b = 0; b < KW; ++b)
                        xv[b] = _mm512_loadu_ps(xr + j + b * g.dw);
#pragma GCC unroll 12
                    for (int u = 0; u < OB; ++u) {
                        const __m512 d = _mm512_maskz_loadu_ps(m, dr + u * L + j);
#pragma GCC unroll 4
                        for (int b = 0; b < KW; ++b)
                            acc[u][b] = _mm512_fmadd_ps(d, xv[b], acc[u][b]);
                    }
                }
            }
#pragma GCC unroll 12
            for (int u = 0; u < OB; ++u)
#pragma GCC unroll 4
                for (int b = 0; b < KW; ++b)
                    dw[u * ct + (q * g.kh + a) * g.kw + b] += _mm512_reduce_add_ps(acc[u][b]);
        }
}

#pragma GCC diagnostic pop

using WeightKernel = void (*)(const DenseConv&, const Padded&, const float*, const float*, int64_t,
                              float*, int64_t);

template <int KW, int... OB>
WeightKernel weight_kernel_of(int ob, std::integer_sequence<int, OB...>) {
    WeightKernel table[] = {weight_tile<OB + 1, KW>...};
    return table[ob - 1];
}

/// Output channels per block of the weight kernel: OB·kw accumulators, at most 24.
int64_t weight_block(int64_t kw) {
    return std::min<int64_t>(kMaxBlock, 24 / kw);
}

WeightKernel weight_kernel(int64_t ob, int64_t kw) {
    const auto blocks = std::make_integer_sequence<int, kMaxBlock>();
    switch (kw) {
        case 1:
            return weight_kernel_of<1>(int(ob), blocks);
        case 2:
            return weight_kernel_of<2>(int(ob), blocks);
        case 3:
            return weight_kernel_of<3>(int(ob), std::make_integer_sequence<int, 8>());
        default:
            return weight_kernel_of<4>(int(ob), std::make_integer_sequence<int, 6>());
    }
}
#endif

}  // namespace

bool dense_conv_available() {
#if TG_DENSE_AVX512
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    const char* e = std::getenv("TG_CONV_DENSE");
    return avx512 && !(e && e[0] == '0');
#else
    return false;
#endif
}

int64_t dense_conv_workspace(const DenseConv& g) {
    return g.N * g.C * Padded(g).plane + kSlack;
}

void dense_conv(const DenseConv& g, float* y, const float* x, const float* w, const float* bias,
                bool adjoint, float* workspace) {
#if TG_DENSE_AVX512
    const Padded p(g);
    pad_input(g, p, x, workspace);
    std::fill(workspace + g.N * g.C * p.plane, workspace + g.N * g.C * p.plane + kSlack, 0.f);
    const int64_t nb = (g.O + kMaxBlock - 1) / kMaxBlock, taps = g.kt * g.kh * g.kw;
    const std::vector<float> wp = pack_weights(g, w, adjoint, nb);
    std::vector<int64_t> tap_rows;  // the (q, a) taps' offsets within a plane
    for (int64_t q = 0; q < g.kt; ++q)
        for (int64_t a = 0; a < g.kh; ++a)
            tap_rows.push_back((q * g.dt * p.h + a * g.dh) * p.w);
    const int64_t L = g.ot * g.oh * g.ow, nr = g.kt * g.kh;
    ranges(g.N * g.ot, [&](int64_t u0, int64_t u1) {
        std::vector<int64_t> roff(static_cast<size_t>(nr), 0);
        for (int64_t unit = u0; unit < u1; ++unit) {
            const int64_t n = unit / g.ot, z = unit % g.ot;
            const float* xs = workspace + n * g.C * p.plane;
            for (int64_t b = 0; b < nb; ++b) {
                const int64_t o0 = block_start(g.O, nb, b), ob = block_start(g.O, nb, b + 1) - o0;
                const RowKernel row = row_kernel(ob, g.ow);
                for (int64_t i = 0; i < g.oh; ++i) {
                    for (int64_t r = 0; r < nr; ++r)
                        roff[size_t(r)] = tap_rows[size_t(r)] + (z * p.h + i) * p.w;
                    row(xs, p.plane, g.C, roff.data(), nr, g.kw, g.dw, wp.data() + o0 * g.C * taps,
                        bias ? bias + o0 : nullptr, y + (n * g.O + o0) * L + (z * g.oh + i) * g.ow,
                        L, g.ow);
                }
            }
        }
    });
#else
    (void)g, (void)y, (void)x, (void)w, (void)bias, (void)adjoint, (void)workspace;
#endif
}

void dense_conv_weight(const DenseConv& g, float* dw, const float* x, const float* dy,
                       float* workspace) {
    const int64_t taps = g.kt * g.kh * g.kw;
    std::fill(dw, dw + g.O * g.C * taps, 0.f);
#if TG_DENSE_AVX512
    const Padded p(g);
    pad_input(g, p, x, workspace);
    std::fill(workspace + g.N * g.C * p.plane, workspace + g.N * g.C * p.plane + kSlack, 0.f);
    const int64_t per = weight_block(g.kw), nb = (g.O + per - 1) / per, L = g.ot * g.oh * g.ow;
    // units (block, c), each owning its dw elements and adding the tiles (n, z) in order
    ranges(nb * g.C, [&](int64_t u0, int64_t u1) {
        for (int64_t tile = 0; tile < g.N * g.ot; ++tile) {
            const int64_t n = tile / g.ot, z = tile % g.ot;
            for (int64_t unit = u0; unit < u1; ++unit) {
                const int64_t b = unit / g.C, c = unit % g.C;
                const int64_t o0 = block_start(g.O, nb, b), ob = block_start(g.O, nb, b + 1) - o0;
                weight_kernel(ob, g.kw)(g, p, workspace + ((n * g.C + c) * p.t + z) * p.h * p.w,
                                        dy + (n * g.O + o0) * L + z * g.oh * g.ow, L,
                                        dw + (o0 * g.C + c) * taps, g.C * taps);
            }
        }
    });
#else
    (void)x, (void)dy, (void)workspace;
#endif
}

}  // namespace tg::backend::cpu
