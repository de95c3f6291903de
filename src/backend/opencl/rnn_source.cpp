// OpenCL C text of the fused recurrent cells: device_common/rnn_cell.hpp's bodies (Note [Fused
// recurrent cells] there) spelled in OpenCL C, one work-item per unit of a row (i = r·H + j).
// fu_sigmoid and fu_tanh are the table's kernels (source.cpp). An absent operand (backend.hpp's
// *) is passed as another buffer with its bit in `has` clear.
#include "backend/opencl/source.hpp"

namespace tg::backend {

const char* opencl_rnn_source() {
    return R"CL(
#define TG_SIG(x) fu_sigmoid((x), (T)0, (T)0)
#define TG_TANH(x) fu_tanh((x), (T)0, (T)0)
#define TG_B(p, o, k, bit) ((has & (bit)) ? (p)[(o) + (k)] : (T)0)
__kernel void cell_lstm_fwd(__global T* g, long go, __global const T* bi, long bio,
                            __global const T* bh, long bho, __global const T* cp, long cpo,
                            __global T* c, long co, __global T* h, long ho, long H, long has,
                            long n) {
    TG_GID long r = i / H, j = i % H;
    __global T* gr = g + go + r * 4 * H;
    T a[4];
    for (int k = 0; k < 4; ++k)
        a[k] = gr[k * H + j] + TG_B(bi, bio, k * H + j, 1) + TG_B(bh, bho, k * H + j, 2);
    T ig = TG_SIG(a[0]), fg = TG_SIG(a[1]), gg = TG_TANH(a[2]), og = TG_SIG(a[3]);
    T cn = fg * cp[cpo + i] + ig * gg;
    c[co + i] = cn;
    h[ho + i] = og * TG_TANH(cn);
    gr[j] = ig; gr[H + j] = fg; gr[2 * H + j] = gg; gr[3 * H + j] = og;
}
__kernel void cell_lstm_bwd(__global const T* dh, long dho, __global const T* dy, long dyo,
                            __global const T* g, long go, __global const T* cp, long cpo,
                            __global const T* c, long co, __global T* dc, long dco,
                            __global T* dg, long dgo, long H, long has, long n) {
    TG_GID long r = i / H, j = i % H;
    __global const T* gr = g + go + r * 4 * H;
    __global T* dr = dg + dgo + r * 4 * H;
    T ig = gr[j], fg = gr[H + j], gg = gr[2 * H + j], og = gr[3 * H + j];
    T d = dh[dho + i] + TG_B(dy, dyo, i, 1);
    T t = TG_TANH(c[co + i]);
    T dcv = dc[dco + i] + d * og * (1 - t * t);
    dr[j] = dcv * gg * (ig * (1 - ig));
    dr[H + j] = dcv * cp[cpo + i] * (fg * (1 - fg));
    dr[2 * H + j] = dcv * ig * (1 - gg * gg);
    dr[3 * H + j] = d * t * (og * (1 - og));
    dc[dco + i] = dcv * fg;
}
__kernel void cell_gru_fwd(__global const T* gi, long gio, __global const T* gh, long gho,
                           __global const T* bi, long bio, __global const T* bh, long bho,
                           __global const T* hp, long hpo, __global T* sv, long svo,
                           __global T* h, long ho, long H, long has, long n) {
    TG_GID long r = i / H, j = i % H;
    __global const T* a = gi + gio + r * 3 * H;
    __global const T* b = gh + gho + r * 3 * H;
    __global T* s = sv + svo + r * 4 * H;
    T hn = b[2 * H + j] + TG_B(bh, bho, 2 * H + j, 2);
    T rg = TG_SIG(b[j] + TG_B(bh, bho, j, 2) + (a[j] + TG_B(bi, bio, j, 1)));
    T zg = TG_SIG(b[H + j] + TG_B(bh, bho, H + j, 2) + (a[H + j] + TG_B(bi, bio, H + j, 1)));
    T ng = TG_TANH(a[2 * H + j] + TG_B(bi, bio, 2 * H + j, 1) + hn * rg);
    h[ho + i] = (hp[hpo + i] - ng) * zg + ng;
    s[j] = rg; s[H + j] = zg; s[2 * H + j] = ng; s[3 * H + j] = hn;
}
__kernel void cell_gru_bwd(__global T* dh, long dho, __global const T* dy, long dyo,
                           __global const T* sv, long svo, __global const T* hp, long hpo,
                           __global T* dgi, long dgio, __global T* dgh, long dgho, long H,
                           long has, long n) {
    TG_GID long r = i / H, j = i % H;
    __global const T* s = sv + svo + r * 4 * H;
    __global T* a = dgi + dgio + r * 3 * H;
    __global T* b = dgh + dgho + r * 3 * H;
    T rg = s[j], zg = s[H + j], ng = s[2 * H + j], hn = s[3 * H + j];
    T d = dh[dho + i] + TG_B(dy, dyo, i, 1);
    T dn = d * (1 - zg) * (1 - ng * ng);
    T dz = d * (hp[hpo + i] - ng) * (zg * (1 - zg));
    T dr = dn * hn * (rg * (1 - rg));
    a[j] = dr; a[H + j] = dz; a[2 * H + j] = dn;
    b[j] = dr; b[H + j] = dz; b[2 * H + j] = dn * rg;
    dh[dho + i] = d * zg;
}
__kernel void cell_rnn_fwd(__global T* a, long ao, __global const T* bi, long bio,
                           __global const T* bh, long bho, long H, long has, long relu, long n) {
    TG_GID long j = i % H;
    T v = a[ao + i] + TG_B(bi, bio, j, 1) + TG_B(bh, bho, j, 2);
    a[ao + i] = relu ? (v > 0 ? v : (T)0) : TG_TANH(v);
}
__kernel void cell_rnn_bwd(__global const T* dh, long dho, __global const T* dy, long dyo,
                           __global const T* h, long hoff, __global T* da, long dao, long H,
                           long has, long relu, long n) {
    TG_GID T d = dh[dho + i] + TG_B(dy, dyo, i, 1);
    T hv = h[hoff + i];
    da[dao + i] = relu ? (hv > 0 ? d : (T)0) : d * (1 - hv * hv);
}
)CL";
}

}  // namespace tg::backend
