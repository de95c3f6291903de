// The CPU's fused recurrent cells (backend.hpp's CellOp; the formulas: Note [Fused recurrent
// cells] in device_common/rnn_cell.hpp), a row at a time, rows split over the kernel threads.
// float32 uses the vectorisable sigmoid and tanh of math.hpp and the loops are compiled for
// AVX2 and AVX-512 too (Note [Wider SIMD]).
#include "backend/device_common/rnn_cell.hpp"

#include <cstdint>
#include <vector>

#include "backend/cpu/backend.hpp"
#include "backend/cpu/iterate.hpp"
#include "backend/cpu/math.hpp"
#include "backend/cpu/window_parts.hpp"
#include "core/simd.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::cpu {

namespace {

using S = Kernel<cpu_table::U_sigmoid>::type;
using Th = Kernel<cpu_table::U_tanh>::type;

template <class T>
T* at(const View& v) {
    return v.data ? ptr<T>(v) : nullptr;
}

// The row loops take every operand they read (an absent bias or dy is a row of zeros), so that
// they vectorise: a branch on a null pointer per element would keep them scalar.
template <class T>
TG_SIMD_CLONES void lstm_forward_row(int64_t H, T* __restrict g, const T* __restrict bi,
                                     const T* __restrict bh, const T* __restrict cp,
                                     T* __restrict c, T* __restrict h) {
    for (int64_t j = 0; j < H; ++j) {
        T i = g[j] + bi[j] + bh[j], f = g[H + j] + bi[H + j] + bh[H + j],
          gg = g[2 * H + j] + bi[2 * H + j] + bh[2 * H + j],
          o = g[3 * H + j] + bi[3 * H + j] + bh[3 * H + j];
        rnn_cell::lstm_forward<S, Th>(i, f, gg, o, cp[j], c[j], h[j]);
        g[j] = i;
        g[H + j] = f;
        g[2 * H + j] = gg;
        g[3 * H + j] = o;
    }
}

template <class T>
TG_SIMD_CLONES void lstm_backward_row(int64_t H, const T* __restrict dh, const T* __restrict dy,
                                      const T* __restrict g, const T* __restrict cp,
                                      const T* __restrict c, T* __restrict dc, T* __restrict dg) {
    for (int64_t j = 0; j < H; ++j) {
        T dcj = dc[j], di, df, dgg, dout;
        rnn_cell::lstm_backward<Th>(dh[j] + dy[j], g[j], g[H + j], g[2 * H + j], g[3 * H + j],
                                    cp[j], c[j], dcj, di, df, dgg, dout);
        dc[j] = dcj;
        dg[j] = di;
        dg[H + j] = df;
        dg[2 * H + j] = dgg;
        dg[3 * H + j] = dout;
    }
}

template <class T>
TG_SIMD_CLONES void gru_forward_row(int64_t H, const T* __restrict gi, const T* __restrict gh,
                                    const T* __restrict bi, const T* __restrict bh,
                                    const T* __restrict hp, T* __restrict sv, T* __restrict h) {
    for (int64_t j = 0; j < H; ++j) {
        const T hn = gh[2 * H + j] + bh[2 * H + j];
        T r, z, n, hj;
        rnn_cell::gru_forward<S, Th>(gi[j] + bi[j], gi[H + j] + bi[H + j],
                                     gi[2 * H + j] + bi[2 * H + j], gh[j] + bh[j],
                                     gh[H + j] + bh[H + j], hn, hp[j], r, z, n, hj);
        sv[j] = r;
        sv[H + j] = z;
        sv[2 * H + j] = n;
        sv[3 * H + j] = hn;
        h[j] = hj;
    }
}

template <class T>
TG_SIMD_CLONES void gru_backward_row(int64_t H, T* __restrict dh, const T* __restrict dy,
                                     const T* __restrict sv, const T* __restrict hp,
                                     T* __restrict dgi, T* __restrict dgh) {
    for (int64_t j = 0; j < H; ++j) {
        T dr, dz, dn, dhp;
        const T r = sv[j];
        rnn_cell::gru_backward(dh[j] + dy[j], r, sv[H + j], sv[2 * H + j], sv[3 * H + j], hp[j], dr,
                               dz, dn, dhp);
        dgi[j] = dr;
        dgh[j] = dr;
        dgi[H + j] = dz;
        dgh[H + j] = dz;
        dgi[2 * H + j] = dn;
        dgh[2 * H + j] = dn * r;
        dh[j] = dhp;
    }
}

template <class T>
TG_SIMD_CLONES void rnn_forward_row(int64_t H, bool relu, T* __restrict a, const T* __restrict bi,
                                    const T* __restrict bh) {
    if (relu)
        for (int64_t j = 0; j < H; ++j) {
            const T v = a[j] + bi[j] + bh[j];
            a[j] = v > 0 ? v : T(0);
        }
    else
        for (int64_t j = 0; j < H; ++j)
            a[j] = Th::f(a[j] + bi[j] + bh[j], T(0), T(0));
}

template <class T>
TG_SIMD_CLONES void rnn_backward_row(int64_t H, bool relu, const T* __restrict dh,
                                     const T* __restrict dy, const T* __restrict h,
                                     T* __restrict da) {
    if (relu)
        for (int64_t j = 0; j < H; ++j)
            da[j] = h[j] > 0 ? dh[j] + dy[j] : T(0);
    else
        for (int64_t j = 0; j < H; ++j)
            da[j] = (dh[j] + dy[j]) * (1 - h[j] * h[j]);
}

template <class T>
void run(CellOp op, const Cell& g, const View* v) {
    const int64_t H = g.hidden;
    // an absent bias (4H at most) or dy (H per row) reads as zeros
    std::vector<T> zero(size_t(4 * H), T(0));
    auto row = [&](int k, int64_t r, int64_t width) {
        T* p = at<T>(v[k]);
        return p ? p + r * width * H : zero.data();
    };
    auto whole = [&](int k) {
        const T* p = at<T>(v[k]);
        return p ? p : zero.data();
    };
    const bool relu = g.relu != 0;
    slices(
        g.rows,
        [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                switch (op) {
                    case CellOp::LstmForward:
                        lstm_forward_row<T>(H, row(0, r, 4), whole(1), whole(2), row(3, r, 1),
                                            row(4, r, 1), row(5, r, 1));
                        break;
                    case CellOp::LstmBackward:
                        lstm_backward_row<T>(H, row(0, r, 1), row(1, r, 1), row(2, r, 4),
                                             row(3, r, 1), row(4, r, 1), row(5, r, 1),
                                             row(6, r, 4));
                        break;
                    case CellOp::GruForward:
                        gru_forward_row<T>(H, row(0, r, 3), row(1, r, 3), whole(2), whole(3),
                                           row(4, r, 1), row(5, r, 4), row(6, r, 1));
                        break;
                    case CellOp::GruBackward:
                        gru_backward_row<T>(H, row(0, r, 1), row(1, r, 1), row(2, r, 4),
                                            row(3, r, 1), row(4, r, 3), row(5, r, 3));
                        break;
                    case CellOp::RnnForward:
                        rnn_forward_row<T>(H, relu, row(0, r, 1), whole(1), whole(2));
                        break;
                    case CellOp::RnnBackward:
                        rnn_backward_row<T>(H, relu, row(0, r, 1), row(1, r, 1), row(2, r, 1),
                                            row(3, r, 1));
                        break;
                }
            }
        },
        H * 8);
}

}  // namespace

void CpuBackend::cell(CellOp op, const Cell& g, const View* v) {
    if (g.rows == 0 || g.hidden == 0)
        return;
    if (v[0].dtype == Dtype::Float32)
        run<float>(op, g, v);
    else if (v[0].dtype == Dtype::Float64)
        run<double>(op, g, v);
    else
        throw dtype_error(std::string("cell kernel: dtype ") + dtype_name(v[0].dtype) +
                          " is not floating");
}

}  // namespace tg::backend::cpu
