// OpenCL C text of the window kernels: device_common/window.hpp's element bodies spelled in
// OpenCL C (Note [Gathering adjoints] there), one work-item per output element. The Window
// struct matches backend.hpp's field for field (23 int64).
#include "backend/opencl/source.hpp"

namespace tg::backend {

const char* opencl_window_source() {
    return R"CL(
typedef struct { long planes, h, w, oh, ow, samples, kh, kw, sh, sw, ph, pw, dh, dw, cip, adaptive,
                 t, ot, kt, st, pt, dt, divisor; } Window;
long win_taps(Window g) { return g.kt * g.kh * g.kw; }
long win_pos(Window g) { return g.ot * g.oh * g.ow; }
long win_vol(Window g) { return g.t * g.h * g.w; }
long col_row(Window g, long p, long k) {
    long C = g.planes / g.samples, n = p / C, c = p % C;
    return ((c * win_taps(g) + k) * g.samples + n) * win_pos(g);
}
long win_of(long y, long a, long s, long p, long d, long count) {
    long t = y + p - a * d;
    if (t < 0 || t % s != 0) return -1;
    long i = t / s;
    return i < count ? i : -1;
}
__kernel void win_unfold(__global T* o, long oo, __global const T* x, long xo, Window g, long n) {
    TG_GID long L = win_pos(g), K = win_taps(g), C = g.planes / g.samples;
    long l = i % L, sn = (i / L) % g.samples, k = (i / (L * g.samples)) % K;
    long p = sn * C + i / (L * g.samples * K);
    long z = (l / (g.ow * g.oh)) * g.st - g.pt + (k / (g.kw * g.kh)) * g.dt;
    long y = ((l / g.ow) % g.oh) * g.sh - g.ph + ((k / g.kw) % g.kh) * g.dh;
    long x0 = (l % g.ow) * g.sw - g.pw + (k % g.kw) * g.dw;
    o[oo + i] = (z < 0 || z >= g.t || y < 0 || y >= g.h || x0 < 0 || x0 >= g.w)
                    ? (T)0 : x[xo + ((p * g.t + z) * g.h + y) * g.w + x0];
}
__kernel void win_fold(__global T* o, long oo, __global const T* col, long co, Window g, long n) {
    TG_GID long x0 = i % g.w, y = (i / g.w) % g.h, z = (i / (g.w * g.h)) % g.t, p = i / win_vol(g);
    __global const T* c = col + co;
    T s = (T)0;
    for (long q = 0; q < g.kt; ++q) {
        long rz = win_of(z, q, g.st, g.pt, g.dt, g.ot);
        if (rz < 0) continue;
        for (long a = 0; a < g.kh; ++a) {
            long r = win_of(y, a, g.sh, g.ph, g.dh, g.oh);
            if (r < 0) continue;
            for (long b = 0; b < g.kw; ++b) {
                long w = win_of(x0, b, g.sw, g.pw, g.dw, g.ow);
                if (w >= 0) s += c[col_row(g, p, (q * g.kh + a) * g.kw + b) + (rz * g.oh + r) * g.ow + w];
            }
        }
    }
    o[oo + i] = s;
}
void pool_span(Window g, int ax, long i, long* lo, long* hi, long* len) {
    long n = ax == 0 ? g.t : ax == 1 ? g.h : g.w;
    if (g.adaptive) {
        long count = ax == 0 ? g.ot : ax == 1 ? g.oh : g.ow;
        *lo = (i * n) / count; *hi = ((i + 1) * n + count - 1) / count; *len = *hi - *lo;
        return;
    }
    long k = ax == 0 ? g.kt : ax == 1 ? g.kh : g.kw, s = ax == 0 ? g.st : ax == 1 ? g.sh : g.sw,
         p = ax == 0 ? g.pt : ax == 1 ? g.ph : g.pw;
    long start = i * s - p, end = start + k;
    if (end > n + p) end = n + p;
    long padded = end - start;
    if (start < 0) start = 0;
    if (end > n) end = n;
    *lo = start; *hi = end; *len = g.cip ? padded : end - start;
}
void pool_candidates(Window g, int ax, long y, long* first, long* last) {
    long n = ax == 0 ? g.t : ax == 1 ? g.h : g.w, count = ax == 0 ? g.ot : ax == 1 ? g.oh : g.ow;
    if (g.adaptive) {
        *first = (y * count) / n; *last = ((y + 1) * count + n - 1) / n;
    } else {
        long k = ax == 0 ? g.kt : ax == 1 ? g.kh : g.kw, s = ax == 0 ? g.st : ax == 1 ? g.sh : g.sw,
             p = ax == 0 ? g.pt : ax == 1 ? g.ph : g.pw, d = ax == 0 ? g.dt : ax == 1 ? g.dh : g.dw;
        long t = y + p - d * (k - 1);
        *first = t <= 0 ? 0 : (t + s - 1) / s; *last = (y + p) / s + 1;
    }
    if (*first < 0) *first = 0;
    if (*last > count) *last = count;
}
__kernel void win_max(__global T* o, long oo, __global const T* x, long xo, __global long* arg,
                      long ao, Window g, long n) {
    TG_GID long j = i % g.ow, r = (i / g.ow) % g.oh, z = (i / (g.ow * g.oh)) % g.ot, p = i / win_pos(g);
    __global const T* xp = x + xo + p * win_vol(g);
    T best = -INFINITY; long at = -1;
    if (g.adaptive) {
        long z0, z1, y0, y1, x0, x1, len;
        pool_span(g, 0, z, &z0, &z1, &len);
        pool_span(g, 1, r, &y0, &y1, &len);
        pool_span(g, 2, j, &x0, &x1, &len);
        for (long zz = z0; zz < z1; ++zz)
            for (long y = y0; y < y1; ++y)
                for (long c = x0; c < x1; ++c) {
                    long e = (zz * g.h + y) * g.w + c;
                    T v = xp[e];
                    if (v > best || v != v || at < 0) {
                        best = v; at = e;
                        if (v != v) { o[oo + i] = best; arg[ao + i] = at; return; }
                    }
                }
        o[oo + i] = best; arg[ao + i] = at;
        return;
    }
    for (long q = 0; q < g.kt; ++q) {
        long zz = z * g.st - g.pt + q * g.dt;
        if (zz < 0 || zz >= g.t) continue;
        for (long a = 0; a < g.kh; ++a) {
            long y = r * g.sh - g.ph + a * g.dh;
            if (y < 0 || y >= g.h) continue;
            for (long b = 0; b < g.kw; ++b) {
                long x0 = j * g.sw - g.pw + b * g.dw;
                if (x0 < 0 || x0 >= g.w) continue;
                long e = (zz * g.h + y) * g.w + x0;
                T v = xp[e];
                if (v > best || v != v || at < 0) {
                    best = v; at = e;
                    if (v != v) { o[oo + i] = best; arg[ao + i] = at; return; }
                }
            }
        }
    }
    o[oo + i] = best; arg[ao + i] = at;
}
__kernel void win_max_back(__global T* o, long oo, __global const T* dy, long yo,
                           __global const long* arg, long ao, Window g, long n) {
    TG_GID long x0 = i % g.w, y = (i / g.w) % g.h, z = (i / (g.w * g.h)) % g.t, p = i / win_vol(g);
    long self = (z * g.h + y) * g.w + x0, base = p * win_pos(g);
    T s = (T)0;
    if (g.adaptive) {
        long r0, r1, i0, i1, j0, j1;
        pool_candidates(g, 0, z, &r0, &r1);
        pool_candidates(g, 1, y, &i0, &i1);
        pool_candidates(g, 2, x0, &j0, &j1);
        for (long rz = r0; rz < r1; ++rz)
            for (long r = i0; r < i1; ++r)
                for (long q = j0; q < j1; ++q) {
                    long e = base + (rz * g.oh + r) * g.ow + q;
                    if (arg[ao + e] == self) s += dy[yo + e];
                }
        o[oo + i] = s;
        return;
    }
    for (long c = 0; c < g.kt; ++c) {
        long rz = win_of(z, c, g.st, g.pt, g.dt, g.ot);
        if (rz < 0) continue;
        for (long a = 0; a < g.kh; ++a) {
            long r = win_of(y, a, g.sh, g.ph, g.dh, g.oh);
            if (r < 0) continue;
            for (long b = 0; b < g.kw; ++b) {
                long q = win_of(x0, b, g.sw, g.pw, g.dw, g.ow);
                long e = base + (rz * g.oh + r) * g.ow + q;
                if (q >= 0 && arg[ao + e] == self) s += dy[yo + e];
            }
        }
    }
    o[oo + i] = s;
}
long avg_div(Window g, long nz, long ny, long nx) { return g.divisor ? g.divisor : nz * ny * nx; }
__kernel void win_avg(__global T* o, long oo, __global const T* x, long xo, Window g, long n) {
    TG_GID long j = i % g.ow, r = (i / g.ow) % g.oh, z = (i / (g.ow * g.oh)) % g.ot, p = i / win_pos(g);
    long z0, z1, nz, y0, y1, ny, x0, x1, nx;
    pool_span(g, 0, z, &z0, &z1, &nz);
    pool_span(g, 1, r, &y0, &y1, &ny);
    pool_span(g, 2, j, &x0, &x1, &nx);
    __global const T* xp = x + xo + p * win_vol(g);
    T s = (T)0;
    for (long zz = z0; zz < z1; ++zz)
        for (long y = y0; y < y1; ++y)
            for (long c = x0; c < x1; ++c) s += xp[(zz * g.h + y) * g.w + c];
    long d = avg_div(g, nz, ny, nx);
    o[oo + i] = d != 0 ? s / (T)d : (T)0;
}
__kernel void win_avg_back(__global T* o, long oo, __global const T* dy, long yo, Window g, long n) {
    TG_GID long x0 = i % g.w, y = (i / g.w) % g.h, z = (i / (g.w * g.h)) % g.t, p = i / win_vol(g);
    long r0, r1, i0, i1, j0, j1;
    pool_candidates(g, 0, z, &r0, &r1);
    pool_candidates(g, 1, y, &i0, &i1);
    pool_candidates(g, 2, x0, &j0, &j1);
    __global const T* d = dy + yo + p * win_pos(g);
    T s = (T)0;
    for (long rz = r0; rz < r1; ++rz) {
        long lz, hz, nz;
        pool_span(g, 0, rz, &lz, &hz, &nz);
        if (!(lz <= z && z < hz)) continue;
        for (long r = i0; r < i1; ++r) {
            long lo, hi, ny;
            pool_span(g, 1, r, &lo, &hi, &ny);
            if (!(lo <= y && y < hi)) continue;
            for (long q = j0; q < j1; ++q) {
                long lx, hx, nx;
                pool_span(g, 2, q, &lx, &hx, &nx);
                if (lx <= x0 && x0 < hx) s += d[(rz * g.oh + r) * g.ow + q] / (T)avg_div(g, nz, ny, nx);
            }
        }
    }
    o[oo + i] = s;
}
)CL";
}

}  // namespace tg::backend
