// OpenCL C text of the fused row normalisations (backend.hpp's RowNormOp; the formulas: Note
// [Row normalisation] in ops/layer_norm.cpp), the twins of cpu/norm_kernels.cpp's row kernels:
// forward one work-item per row (its sums in ACC, one pass over the row for each statistic
// and one writing y), backward one work-item per row for dx and one per column for dw and db.
// An absent operand is passed as another buffer with its flag clear.
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
)CL";
}

}  // namespace tg::backend
