// Note [Fused normalisation kernels]: batch_norm, group_norm, layer_norm and rms_norm written as
// their composed ops (sum, sub, square, sum, mul, add: six passes over x forward, eight
// backward, each a broadcasting kernel) were memory-bound chains of elementwise passes. Here each
// statistic is a sum over a plane (a [S] slice of one channel of one sample) or a row, taken in
// double with eight independent partial sums (so the loop vectorises and float32 sums lose
// nothing), threaded over planes or rows, and the groups' statistics are the planes' sums added
// in plane order: the same bits at any thread count. The variance stays two-pass (Σ(x - mean)²,
// no E[x²] - E[x]² cancellation). Forward: two reading passes for the moments, one writing y.
// Backward: one reading pass for Σdy and Σdy·(x - mean), one writing dx. A row of layer_norm is
// read from cache after its first pass, so each row costs one pass over memory each way.
#include "backend/cpu/norm_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "backend/cpu/threads.hpp"
#include "core/simd.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::cpu {

namespace {

constexpr int kLanes = 8;  // independent partial sums per reduction

/// f(begin, end) over [0, n) split into one range per thread when `work` (elements touched) is
/// large enough.
void for_ranges(int64_t n, int64_t work, const std::function<void(int64_t, int64_t)>& f) {
    const int threads = work >= kParallelMin ? cpu_threads() : 1;
    const int parts = int(std::min<int64_t>(threads, n));
    if (parts < 2) {
        f(0, n);
        return;
    }
    cpu_parallel(parts, [&](int t) { f(n * t / parts, n * (t + 1) / parts); });
}

double add_lanes(const double* acc) {
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/// kLanes doubles as one vector (GCC's vector extension: the compiler splits it into the
/// registers of the clone's SIMD width). Lane k of a sum below takes elements i + k, as
/// kLanes scalar partial sums would, so the sums are the same bits; written as scalars, GCC
/// left the loops unvectorised.
// (-Wpsabi: the baseline clone passes these vectors differently from the AVX-512 one, which
// does not matter for functions private to this file)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef double Lanes __attribute__((vector_size(kLanes * sizeof(double))));
typedef float FloatLanes __attribute__((vector_size(kLanes * sizeof(float))));

/// x[0, kLanes) as doubles.
inline Lanes lanes_of(const float* x) {
    FloatLanes v;
    std::memcpy(&v, x, sizeof v);
    return __builtin_convertvector(v, Lanes);
}
inline Lanes lanes_of(const double* x) {
    Lanes v;
    std::memcpy(&v, x, sizeof v);
    return v;
}

/// v's lanes, to go on summing the tail into lane 0 as a scalar loop would.
struct LaneSums {
    double acc[kLanes];
    explicit LaneSums(const Lanes& v) { std::memcpy(acc, &v, sizeof acc); }
};

/// Σ x (c null) or Σ (x - *c)² over n values, in kLanes partial sums of double (vectorised:
/// float32 sums lose nothing to rounding); the tail after the last whole kLanes goes to lane 0.
template <class T>
inline double sum_of(const T* x, int64_t n, const double* c) {
    Lanes v = {};
    int64_t i = 0;
    if (!c) {
        for (; i + kLanes <= n; i += kLanes)
            v += lanes_of(x + i);
        LaneSums s(v);
        for (; i < n; ++i)
            s.acc[0] += double(x[i]);
        return add_lanes(s.acc);
    }
    const double m = *c;
    for (; i + kLanes <= n; i += kLanes) {
        const Lanes d = lanes_of(x + i) - m;
        v += d * d;
    }
    LaneSums s(v);
    for (; i < n; ++i)
        s.acc[0] += (double(x[i]) - m) * (double(x[i]) - m);
    return add_lanes(s.acc);
}

/// Σ dy and Σ dy·(x - m) over n values, summed as sum_of does.
template <class T>
inline void grad_sums(const T* dy, const T* x, int64_t n, double m, double& s1, double& s2) {
    Lanes v1 = {}, v2 = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        const Lanes d = lanes_of(dy + i);
        v1 += d;
        v2 += d * (lanes_of(x + i) - m);
    }
    LaneSums a1(v1), a2(v2);
    for (; i < n; ++i) {
        a1.acc[0] += double(dy[i]);
        a2.acc[0] += double(dy[i]) * (double(x[i]) - m);
    }
    s1 = add_lanes(a1.acc);
    s2 = add_lanes(a2.acc);
}

template <class F>
void floating(Dtype d, const char* what, F&& f) {
    if (d == Dtype::Float32)
        f(float());
    else if (d == Dtype::Float64)
        f(double());
    else
        throw dtype_error(std::string(what) + ": fused CPU kernel for float32/float64 only, got " +
                          dtype_name(d));
}

// The planes [p0, p1) of each plane kernel below, compiled for wider SIMD too.
template <class T>
TG_SIMD_CLONES void sums_part(const T* x, const Planes& g, const double* center, double* out,
                              int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
        out[p] = sum_of(x + p * g.len, g.len, center ? center + g.group(p) : nullptr);
    }
}
template <class T>
TG_SIMD_CLONES void affine_part(T* y, const T* x, const Planes& g, const double* scale,
                                const double* shift, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
        const T sc = T(scale[p]), sh = T(shift[p]);
        const T* xp = x + p * g.len;
        T* yp = y + p * g.len;
        for (int64_t i = 0; i < g.len; ++i)
            yp[i] = xp[i] * sc + sh;
    }
}
template <class T>
TG_SIMD_CLONES void grad_sums_part(const T* dy, const T* x, const Planes& g, const double* mean,
                                   double* s1, double* s2, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
        grad_sums(dy + p * g.len, x + p * g.len, g.len, mean[g.group(p)], s1[p], s2[p]);
}
template <class T>
TG_SIMD_CLONES void grad_apply_part(T* dx, const T* dy, const T* x, const Planes& g,
                                    const double* k, const double* a, const double* m,
                                    const double* b, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
        const int64_t o = p * g.len;
        const T kk = T(k[p]);
        if (!a) {
            for (int64_t i = 0; i < g.len; ++i)
                dx[o + i] = dy[o + i] * kk;
            continue;
        }
        const T aa = T(a[p]), mm = T(m[p]), bb = T(b[p]);
        for (int64_t i = 0; i < g.len; ++i)
            dx[o + i] = dy[o + i] * kk + (x[o + i] - mm) * aa + bb;
    }
}

}  // namespace

void plane_sums(Dtype d, const void* x, const Planes& g, const double* center, double* out) {
    floating(d, "plane_sums", [&](auto tag) {
        using T = decltype(tag);
        for_ranges(g.planes, g.planes * g.len, [&](int64_t p0, int64_t p1) {
            sums_part(static_cast<const T*>(x), g, center, out, p0, p1);
        });
    });
}

void plane_affine(Dtype d, void* y, const void* x, const Planes& g, const double* scale,
                  const double* shift) {
    floating(d, "plane_affine", [&](auto tag) {
        using T = decltype(tag);
        for_ranges(g.planes, g.planes * g.len, [&](int64_t p0, int64_t p1) {
            affine_part(static_cast<T*>(y), static_cast<const T*>(x), g, scale, shift, p0, p1);
        });
    });
}

void plane_grad_sums(Dtype d, const void* dy, const void* x, const Planes& g, const double* mean,
                     double* s1, double* s2) {
    floating(d, "plane_grad_sums", [&](auto tag) {
        using T = decltype(tag);
        for_ranges(g.planes, 2 * g.planes * g.len, [&](int64_t p0, int64_t p1) {
            grad_sums_part(static_cast<const T*>(dy), static_cast<const T*>(x), g, mean, s1, s2, p0,
                           p1);
        });
    });
}

void plane_grad_apply(Dtype d, void* dx, const void* dy, const void* x, const Planes& g,
                      const double* k, const double* a, const double* m, const double* b) {
    floating(d, "plane_grad_apply", [&](auto tag) {
        using T = decltype(tag);
        for_ranges(g.planes, 3 * g.planes * g.len, [&](int64_t p0, int64_t p1) {
            grad_apply_part(static_cast<T*>(dx), static_cast<const T*>(dy),
                            static_cast<const T*>(x), g, k, a, m, b, p0, p1);
        });
    });
}

namespace {

/// Σ a (b null) or Σ a·b over n values, in kLanes partial sums of T (a row's sums: short, and
/// vectorised in T), added in double.
template <class T>
inline double lane_sum(const T* a, const T* b, int64_t n) {
    T acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int k = 0; k < kLanes; ++k)
            acc[k] += b ? a[i + k] * b[i + k] : a[i + k];
    for (; i < n; ++i)
        acc[i % kLanes] += b ? a[i] * b[i] : a[i];
    double d[kLanes];
    for (int k = 0; k < kLanes; ++k)
        d[k] = double(acc[k]);
    return add_lanes(d);
}

/// Rows [r0, r1) of row_norm_forward.
template <class T>
TG_SIMD_CLONES void rows_forward(T* y, const T* x, const T* w, const T* b, int64_t r0, int64_t r1,
                                 int64_t cols, bool center, double eps, T* mean, T* rstd, T* buf) {
    const double inv_m = 1.0 / double(cols);
    for (int64_t r = r0; r < r1; ++r) {
        const T* xr = x + r * cols;
        T* yr = y + r * cols;
        const T mt = center ? T(lane_sum<T>(xr, nullptr, cols) * inv_m) : T(0);
        for (int64_t j = 0; j < cols; ++j)
            buf[j] = xr[j] - mt;
        const double var = lane_sum<T>(buf, buf, cols) * inv_m;  // mean(x²) for rms_norm
        const T rt = T(1.0 / std::sqrt(var + eps));
        if (center)
            mean[r] = mt;
        rstd[r] = rt;
        for (int64_t j = 0; j < cols; ++j)
            yr[j] = buf[j] * rt;
        if (w)
            for (int64_t j = 0; j < cols; ++j)
                yr[j] = yr[j] * w[j];
        if (b)
            for (int64_t j = 0; j < cols; ++j)
                yr[j] = yr[j] + b[j];
    }
}

/// Rows [r0, r1) of row_norm_backward; pw, pb (null: not wanted): their column sums, added to.
template <class T>
TG_SIMD_CLONES void rows_backward(T* dx, T* pw, T* pb, const T* dy, const T* x, const T* w,
                                  const T* mean, const T* rstd, int64_t r0, int64_t r1,
                                  int64_t cols, bool center, T* xh, T* g) {
    const double inv_m = 1.0 / double(cols);
    for (int64_t r = r0; r < r1; ++r) {
        const T* dr = dy + r * cols;
        const T* xr = x + r * cols;
        const T mu = center ? mean[r] : T(0), rr = rstd[r];
        for (int64_t j = 0; j < cols; ++j)
            xh[j] = (xr[j] - mu) * rr;
        if (pw)
            for (int64_t j = 0; j < cols; ++j) {
                pw[j] += dr[j] * xh[j];
                pb[j] += dr[j];
            }
        if (!dx)
            continue;
        for (int64_t j = 0; j < cols; ++j)
            g[j] = w ? dr[j] * w[j] : dr[j];
        const T mg = center ? T(lane_sum<T>(g, nullptr, cols) * inv_m) : T(0);
        const T mgx = T(lane_sum<T>(g, xh, cols) * inv_m);
        T* o = dx + r * cols;
        for (int64_t j = 0; j < cols; ++j)
            o[j] = rr * (g[j] - mg - xh[j] * mgx);
    }
}

}  // namespace

void row_norm_forward(Dtype d, void* y, const void* x, const void* w, const void* b, int64_t rows,
                      int64_t cols, bool center, double eps, void* mean, void* rstd) {
    floating(d, "row_norm_forward", [&](auto tag) {
        using T = decltype(tag);
        for_ranges(rows, rows * cols, [&](int64_t r0, int64_t r1) {
            std::vector<T> buf(static_cast<size_t>(cols));
            rows_forward<T>(static_cast<T*>(y), static_cast<const T*>(x), static_cast<const T*>(w),
                            static_cast<const T*>(b), r0, r1, cols, center, eps,
                            static_cast<T*>(mean), static_cast<T*>(rstd), buf.data());
        });
    });
}

void row_norm_backward(Dtype d, void* dx, void* dw, void* db, const void* dy, const void* x,
                       const void* w, const void* mean, const void* rstd, int64_t rows,
                       int64_t cols, bool center) {
    floating(d, "row_norm_backward", [&](auto tag) {
        using T = decltype(tag);
        // fixed blocks of rows (at most 256), so the column sums do not depend on the threads
        const int64_t block = std::max<int64_t>(16, (rows + 255) / 256);
        const int64_t blocks = (rows + block - 1) / block;
        const bool col_sums = dw || db;
        std::vector<T> pw(col_sums ? size_t(blocks * cols) : 0, T(0)), pb(pw.size(), T(0));
        for_ranges(blocks, 3 * rows * cols, [&](int64_t b0, int64_t b1) {
            std::vector<T> xh(static_cast<size_t>(cols)), g(xh.size());
            for (int64_t bl = b0; bl < b1; ++bl)
                rows_backward<T>(
                    static_cast<T*>(dx), col_sums ? pw.data() + bl * cols : nullptr,
                    col_sums ? pb.data() + bl * cols : nullptr, static_cast<const T*>(dy),
                    static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(mean),
                    static_cast<const T*>(rstd), bl * block, std::min(rows, (bl + 1) * block), cols,
                    center, xh.data(), g.data());
        });
        if (!col_sums)
            return;
        for (int64_t j = 0; j < cols; ++j) {
            double sw = 0, sb = 0;
            for (int64_t bl = 0; bl < blocks; ++bl) {
                sw += double(pw[size_t(bl * cols + j)]);
                sb += double(pb[size_t(bl * cols + j)]);
            }
            if (dw)
                static_cast<T*>(dw)[j] = T(sw);
            if (db)
                static_cast<T*>(db)[j] = T(sb);
        }
    });
}

namespace {

/// Words [w0, w1) of mask_bits_mul, with table[8·v + k] = bit k of byte v ? one : 0.
template <class T>
TG_SIMD_CLONES void mask_part(T* __restrict y, const T* __restrict x, const uint64_t* bits,
                              const T* __restrict table, int64_t n, int64_t w0, int64_t w1) {
    for (int64_t wd = w0; wd < w1; ++wd) {
        const uint64_t m = bits[wd];
        const int64_t base = wd * 64;
        if (base + 64 > n) {  // the last, partial word
            for (int64_t k = 0; k < n - base; ++k)
                y[base + k] = x[base + k] * table[((m >> k) & 1) ? 8 : 0];  // byte 1, bit 0: one
            continue;
        }
        for (int b = 0; b < 8; ++b) {
            const T* t = table + ((m >> (8 * b)) & 0xFF) * 8;
            for (int k = 0; k < 8; ++k)
                y[base + 8 * b + k] = x[base + 8 * b + k] * t[k];
        }
    }
}

}  // namespace

void mask_bits_mul(Dtype d, void* out, const void* in, const uint64_t* bits, int64_t n,
                   double one) {
    floating(d, "mask_bits_mul", [&](auto tag) {
        using T = decltype(tag);
        // each byte of the mask as its eight values (one or 0): the product is then a plain
        // product that vectorises
        std::vector<T> table(256 * 8);
        for (int v = 0; v < 256; ++v)
            for (int k = 0; k < 8; ++k)
                table[size_t(v * 8 + k)] = ((v >> k) & 1) ? T(one) : T(0);
        for_ranges((n + 63) / 64, 2 * n, [&](int64_t w0, int64_t w1) {
            mask_part(static_cast<T*>(out), static_cast<const T*>(in), bits, table.data(), n, w0,
                      w1);
        });
    });
}

}  // namespace tg::backend::cpu
