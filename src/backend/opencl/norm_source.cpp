// OpenCL C text of the fused row normalisations (backend.hpp's RowNormOp; the formulas: Note
// [Row normalisation] in ops/layer_norm.cpp), the twins of cpu/norm_kernels.cpp's row kernels:
// forward one work-item per row (its sums in ACC, one pass over the row for each statistic
// and one writing y), backward one work-item per row for dx and one per column for dw and db.
// An absent operand is passed as another buffer with its flag clear. Then the plane
// normalisations (backend.hpp's PlaneNormOp), the twins of cpu/norm_kernels.cpp's plane kernels:
// per-plane sums in ACC one work-item per plane, the groups' statistics one work-item per group
// adding its planes in plane order (as the CPU does), each plane's coefficients one work-item
// per plane, rounded to T as the CPU rounds them, and the writing passes one work-item per
// element reading them (computed there, with three 64-bit divisions per element, they cost
// PoCL twice the time).
#include "backend/opencl/source.hpp"

namespace tg::backend {

const char* opencl_norm_source() {
    return R"CL(
__kernel void row_norm_fwd(__global T* y, long yo, __global const T* x, long xo,
                           __global const T* w, long wo, __global const T* b, long bo,
                           __global T* mean, long mo, __global T* rstd, long ro, long cols,
                           int center, int hasw, int hasb, ACC eps, long n) {
    TG_GID __global const T* xr = x + xo + i * cols;
    __global T* yr = y + yo + i * cols;
    ACC s = 0;
    if (center)
        for (long j = 0; j < cols; ++j) s += xr[j];
    const T mt = center ? (T)(s / (ACC)cols) : (T)0;
    ACC q = 0;
    for (long j = 0; j < cols; ++j) {
        const T d = xr[j] - mt;
        q += (ACC)d * (ACC)d;
    }
    const T rt = (T)(1 / sqrt(q / (ACC)cols + eps));
    if (center) mean[mo + i] = mt;
    rstd[ro + i] = rt;
    for (long j = 0; j < cols; ++j) {
        T v = (xr[j] - mt) * rt;
        if (hasw) v = v * w[wo + j];
        if (hasb) v = v + b[bo + j];
        yr[j] = v;
    }
}
__kernel void row_norm_bwd_dx(__global T* dx, long dxo, __global const T* dy, long dyo,
                              __global const T* x, long xo, __global const T* w, long wo,
                              __global const T* mean, long mo, __global const T* rstd, long ro,
                              long cols, int center, int hasw, long n) {
    TG_GID __global const T* dr = dy + dyo + i * cols;
    __global const T* xr = x + xo + i * cols;
    const T mu = center ? mean[mo + i] : (T)0, rr = rstd[ro + i];
    ACC sg = 0, sgx = 0;
    for (long j = 0; j < cols; ++j) {
        const T xh = (xr[j] - mu) * rr, g = hasw ? dr[j] * w[wo + j] : dr[j];
        sg += g;
        sgx += (ACC)g * (ACC)xh;
    }
    const T mg = center ? (T)(sg / (ACC)cols) : (T)0, mgx = (T)(sgx / (ACC)cols);
    __global T* o = dx + dxo + i * cols;
    for (long j = 0; j < cols; ++j) {
        const T xh = (xr[j] - mu) * rr, g = hasw ? dr[j] * w[wo + j] : dr[j];
        o[j] = rr * (g - mg - xh * mgx);
    }
}
__kernel void row_norm_bwd_wb(__global T* dw, long dwo, __global T* db, long dbo,
                              __global const T* dy, long dyo, __global const T* x, long xo,
                              __global const T* mean, long mo, __global const T* rstd, long ro,
                              long rows, int center, int hasdw, int hasdb, long n) {
    TG_GID ACC sw = 0, sb = 0;
    for (long r = 0; r < rows; ++r) {
        const T d = dy[dyo + r * n + i];
        const T xh = (x[xo + r * n + i] - (center ? mean[mo + r] : (T)0)) * rstd[ro + r];
        sw += (ACC)d * (ACC)xh;
        sb += d;
    }
    if (hasdw) dw[dwo + i] = (T)sw;
    if (hasdb) db[dbo + i] = (T)sb;
}
)CL"
           R"CL(
long pn_group(long p, long C, long G) { return G ? (p / C) * G + (p % C) / (C / G) : p % C; }
long pn_count(long P, long C, long G) { return G ? C / G : P / C; }
long pn_first(long k, long C, long G) { return G ? (k / G) * C + (k % G) * (C / G) : k; }
long pn_step(long C, long G) { return G ? 1 : C; }
__kernel void pn_sums(__global ACC* out, __global const T* x, long xo, __global const ACC* center,
                      int centered, long len, long C, long G, long n) {
    TG_GID __global const T* xp = x + xo + i * len;
    ACC s = 0;
    if (centered) {
        const ACC m = center[pn_group(i, C, G)];
        for (long j = 0; j < len; ++j) {
            const ACC d = (ACC)xp[j] - m;
            s += d * d;
        }
    } else {
        for (long j = 0; j < len; ++j) s += (ACC)xp[j];
    }
    out[i] = s;
}
__kernel void pn_group_mean(__global ACC* gm, __global T* out, long oo, __global const ACC* sums,
                            long P, long C, long G, long count, long n) {
    TG_GID const long m = pn_count(P, C, G), f = pn_first(i, C, G), st = pn_step(C, G);
    ACC s = 0;
    for (long j = 0; j < m; ++j) s += sums[f + j * st];
    s /= (ACC)count;
    gm[i] = s;
    out[oo + i] = (T)s;
}
/* plane i's y = x·scale + shift, rounded to T as the CPU rounds them: c = [scale P][shift P] */
__kernel void pn_affine_coefs(__global T* c, __global const T* mean, long mo,
                              __global const T* invstd, long io, __global const T* w, long wo,
                              __global const T* b, long bo, int hasw, int hasb, long C, long G,
                              long n) {
    TG_GID const long ch = i % C, k = pn_group(i, C, G);
    const ACC sc = (ACC)invstd[io + k] * (hasw ? (ACC)w[wo + ch] : (ACC)1);
    const ACC sh = (hasb ? (ACC)b[bo + ch] : (ACC)0) - (ACC)mean[mo + k] * sc;
    c[i] = (T)sc;
    c[n + i] = (T)sh;
}
/* the plane of element i of planes of len elements (32-bit division where it fits) */
long pn_plane(long i, long len, long n) {
    return n <= 0xffffffffL ? (long)((uint)i / (uint)len) : i / len;
}
__kernel void pn_affine(__global T* y, long yo, __global const T* x, long xo,
                        __global const T* c, long P, long len, long n) {
    TG_GID const long p = pn_plane(i, len, n);
    const T t = x[xo + i] * c[p];  /* two statements: no contraction, the CPU's rounding */
    y[yo + i] = t + c[P + p];
}
__kernel void pn_grad_sums(__global ACC* s, __global const T* dy, long dyo, __global const T* x,
                           long xo, __global const T* mean, long mo, long len, long C, long G,
                           long n) {
    TG_GID const long o = i * len;
    const ACC m = (ACC)mean[mo + pn_group(i, C, G)];
    ACC s1 = 0, s2 = 0;
    for (long j = 0; j < len; ++j) {
        const ACC d = (ACC)dy[dyo + o + j];
        s1 += d;
        s2 += d * ((ACC)x[xo + o + j] - m);
    }
    s[i] = s1;
    s[n + i] = s2;
}
__kernel void pn_grad_params(__global T* dw, long dwo, __global T* db, long dbo,
                             __global const ACC* s, __global const T* invstd, long io, int hasdw,
                             int hasdb, long P, long C, long G, long n) {
    TG_GID ACC sw = 0, sb = 0;
    for (long p = i; p < P; p += C) {
        sw += s[P + p] * (ACC)invstd[io + pn_group(p, C, G)];
        sb += s[p];
    }
    if (hasdw) dw[dwo + i] = (T)sw;
    if (hasdb) db[dbo + i] = (T)sb;
}
/* plane i's dx = k·dy + a·(x - m) + b, rounded to T as the CPU rounds them: k4 = [k][a][m][b] */
__kernel void pn_grad_coefs(__global T* k4, __global const ACC* s, __global const T* mean,
                            long mo, __global const T* invstd, long io, __global const T* w,
                            long wo, int hasw, int batch, long count, long C, long G, long n) {
    TG_GID const long q = pn_group(i, C, G);
    const ACC is = (ACC)invstd[io + q];
    k4[i] = (T)(is * (hasw ? (ACC)w[wo + i % C] : (ACC)1));
    if (!batch) return;
    const long m = pn_count(n, C, G), f = pn_first(q, C, G), st = pn_step(C, G);
    ACC g1 = 0, g2 = 0;
    for (long j = 0; j < m; ++j) {
        const long p = f + j * st;
        const ACC wp = hasw ? (ACC)w[wo + p % C] : (ACC)1;
        g1 += s[p] * wp;
        g2 += s[n + p] * is * wp;
    }
    k4[n + i] = (T)(-is * is * g2 / (ACC)count);
    k4[2 * n + i] = mean[mo + q];
    k4[3 * n + i] = (T)(-is * g1 / (ACC)count);
}
__kernel void pn_grad_scale(__global T* dx, long dxo, __global const T* dy, long dyo,
                            __global const T* k4, long len, long n) {
    TG_GID dx[dxo + i] = dy[dyo + i] * k4[pn_plane(i, len, n)];
}
__kernel void pn_grad_apply(__global T* dx, long dxo, __global const T* dy, long dyo,
                            __global const T* x, long xo, __global const T* k4, long P, long len,
                            long n) {
    TG_GID const long p = pn_plane(i, len, n);
    const T kk = k4[p], aa = k4[P + p], mm = k4[2 * P + p], bb = k4[3 * P + p];
    const T t = dy[dyo + i] * kk, u = (x[xo + i] - mm) * aa, tu = t + u;
    dx[dxo + i] = tu + bb;
}
)CL";
}

}  // namespace tg::backend
