// OpenCL C text of the window kernels: device_common/window.hpp's element bodies spelled in
// OpenCL C (Note [Gathering adjoints] there), one work-item per output element. The Window
// struct matches backend.hpp's field for field (16 int64).
#include "backend/opencl/source.hpp"

namespace tg::backend {

const char* opencl_window_source() {
    return R"CL(
typedef struct { long planes, h, w, oh, ow, samples, kh, kw, sh, sw, ph, pw, dh, dw, cip, adaptive; } Window;
long col_row(Window g, long p, long k) {
    long C = g.planes / g.samples, n = p / C, c = p % C;
    return ((c * g.kh * g.kw + k) * g.samples + n) * g.oh * g.ow;
}
long win_of(long y, long a, long s, long p, long d, long count) {
    long t = y + p - a * d;
    if (t < 0 || t % s != 0) return -1;
    long i = t / s;
    return i < count ? i : -1;
}
__kernel void win_unfold(__global T* o, long oo, __global const T* x, long xo, Window g, long n) {
    TG_GID long L = g.oh * g.ow, K = g.kh * g.kw, C = g.planes / g.samples;
    long l = i % L, sn = (i / L) % g.samples, k = (i / (L * g.samples)) % K;
    long p = sn * C + i / (L * g.samples * K);
    long y = (l / g.ow) * g.sh - g.ph + (k / g.kw) * g.dh;
    long x0 = (l % g.ow) * g.sw - g.pw + (k % g.kw) * g.dw;
    o[oo + i] = (y < 0 || y >= g.h || x0 < 0 || x0 >= g.w) ? (T)0 : x[xo + (p * g.h + y) * g.w + x0];
}
__kernel void win_fold(__global T* o, long oo, __global const T* col, long co, Window g, long n) {
    TG_GID long x0 = i % g.w, y = (i / g.w) % g.h, p = i / (g.w * g.h);
    __global const T* c = col + co;
    T s = (T)0;
    for (long a = 0; a < g.kh; ++a) {
        long r = win_of(y, a, g.sh, g.ph, g.dh, g.oh);
        if (r < 0) continue;
        for (long b = 0; b < g.kw; ++b) {
            long q = win_of(x0, b, g.sw, g.pw, g.dw, g.ow);
            if (q >= 0) s += c[col_row(g, p, a * g.kw + b) + r * g.ow + q];
        }
    }
    o[oo + i] = s;
}
__kernel void win_max(__global T* o, long oo, __global const T* x, long xo, __global long* arg,
                      long ao, Window g, long n) {
    TG_GID long j = i % g.ow, r = (i / g.ow) % g.oh, p = i / (g.ow * g.oh);
    __global const T* xp = x + xo + p * g.h * g.w;
    T best = -INFINITY; long at = -1;
    for (long a = 0; a < g.kh; ++a) {
        long y = r * g.sh - g.ph + a * g.dh;
        if (y < 0 || y >= g.h) continue;
        for (long b = 0; b < g.kw; ++b) {
            long x0 = j * g.sw - g.pw + b * g.dw;
            if (x0 < 0 || x0 >= g.w) continue;
            T v = xp[y * g.w + x0];
            if (v > best || v != v || at < 0) {
                best = v; at = y * g.w + x0;
                if (v != v) { a = g.kh; break; }
            }
        }
    }
    o[oo + i] = best; arg[ao + i] = at;
}
__kernel void win_max_back(__global T* o, long oo, __global const T* dy, long yo,
                           __global const long* arg, long ao, Window g, long n) {
    TG_GID long x0 = i % g.w, y = (i / g.w) % g.h, p = i / (g.w * g.h);
    long self = y * g.w + x0, base = p * g.oh * g.ow;
    T s = (T)0;
    for (long a = 0; a < g.kh; ++a) {
        long r = win_of(y, a, g.sh, g.ph, g.dh, g.oh);
        if (r < 0) continue;
        for (long b = 0; b < g.kw; ++b) {
            long q = win_of(x0, b, g.sw, g.pw, g.dw, g.ow);
            if (q >= 0 && arg[ao + base + r * g.ow + q] == self) s += dy[yo + base + r * g.ow + q];
        }
    }
    o[oo + i] = s;
}
void avg_span(Window g, int rows, long i, long* lo, long* hi, long* len) {
    long n = rows ? g.h : g.w;
    if (g.adaptive) {
        long count = rows ? g.oh : g.ow;
        *lo = (i * n) / count; *hi = ((i + 1) * n + count - 1) / count; *len = *hi - *lo;
        return;
    }
    long k = rows ? g.kh : g.kw, s = rows ? g.sh : g.sw, p = rows ? g.ph : g.pw;
    long start = i * s - p, end = start + k;
    if (end > n + p) end = n + p;
    long padded = end - start;
    if (start < 0) start = 0;
    if (end > n) end = n;
    *lo = start; *hi = end; *len = g.cip ? padded : end - start;
}
void avg_candidates(Window g, int rows, long y, long* first, long* last) {
    long n = rows ? g.h : g.w, count = rows ? g.oh : g.ow;
    if (g.adaptive) {
        *first = (y * count) / n; *last = ((y + 1) * count + n - 1) / n;
    } else {
        long k = rows ? g.kh : g.kw, s = rows ? g.sh : g.sw, p = rows ? g.ph : g.pw;
        long t = y + p - k + 1;
        *first = t <= 0 ? 0 : (t + s - 1) / s; *last = (y + p) / s + 1;
    }
    if (*first < 0) *first = 0;
    if (*last > count) *last = count;
}
__kernel void win_avg(__global T* o, long oo, __global const T* x, long xo, Window g, long n) {
    TG_GID long j = i % g.ow, r = (i / g.ow) % g.oh, p = i / (g.ow * g.oh);
    long y0, y1, ny, x0, x1, nx;
    avg_span(g, 1, r, &y0, &y1, &ny);
    avg_span(g, 0, j, &x0, &x1, &nx);
    __global const T* xp = x + xo + p * g.h * g.w;
    T s = (T)0;
    for (long y = y0; y < y1; ++y)
        for (long c = x0; c < x1; ++c) s += xp[y * g.w + c];
    o[oo + i] = ny * nx > 0 ? s / (T)(ny * nx) : (T)0;
}
__kernel void win_avg_back(__global T* o, long oo, __global const T* dy, long yo, Window g, long n) {
    TG_GID long x0 = i % g.w, y = (i / g.w) % g.h, p = i / (g.w * g.h);
    long i0, i1, j0, j1;
    avg_candidates(g, 1, y, &i0, &i1);
    avg_candidates(g, 0, x0, &j0, &j1);
    __global const T* d = dy + yo + p * g.oh * g.ow;
    T s = (T)0;
    for (long r = i0; r < i1; ++r) {
        long lo, hi, ny;
        avg_span(g, 1, r, &lo, &hi, &ny);
        if (!(lo <= y && y < hi)) continue;
        for (long q = j0; q < j1; ++q) {
            long lx, hx, nx;
            avg_span(g, 0, q, &lx, &hx, &nx);
            if (lx <= x0 && x0 < hx) s += d[r * g.ow + q] / (T)(ny * nx);
        }
    }
    o[oo + i] = s;
}
)CL";
}

}  // namespace tg::backend
