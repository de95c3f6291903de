// The CUDA backend's fused recurrent cells (backend.hpp's CellOp): device_common/rnn_cell.hpp's
// bodies (Note [Fused recurrent cells] there), one thread per unit of a row (i = r·H + j).
#include <cuda_runtime.h>

#include <string>

#include "backend/cuda/fused.hpp"
#include "backend/device_common/rnn_cell.hpp"
#include "backend/kernel_table.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::cuda {

namespace {

constexpr int kCellThreads = 256;
using S = cuda_table::U_sigmoid;
using Th = cuda_table::U_tanh;

__device__ inline int64_t unit() {
    return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
template <class T>
__device__ inline T bias(const T* b, int64_t k) {
    return b ? b[k] : T(0);
}
template <class T>
T* at(const View& v) {
    return v.data ? static_cast<T*>(v.data) + v.offset : nullptr;
}

template <class T>
__global__ void lstm_fwd(T* g, const T* bi, const T* bh, const T* cp, T* c, T* h, int64_t H,
                         int64_t n) {
    const int64_t i = unit();
    if (i >= n)
        return;
    const int64_t r = i / H, j = i % H;
    T* gr = g + r * 4 * H;
    T a[4];
    for (int k = 0; k < 4; ++k)
        a[k] = gr[k * H + j] + bias(bi, k * H + j) + bias(bh, k * H + j);
    rnn_cell::lstm_forward<S, Th>(a[0], a[1], a[2], a[3], cp[i], c[i], h[i]);
    for (int k = 0; k < 4; ++k)
        gr[k * H + j] = a[k];
}

template <class T>
__global__ void lstm_bwd(const T* dh, const T* dy, const T* g, const T* cp, const T* c, T* dc,
                         T* dg, int64_t H, int64_t n) {
    const int64_t i = unit();
    if (i >= n)
        return;
    const int64_t r = i / H, j = i % H;
    const T* gr = g + r * 4 * H;
    T* d = dg + r * 4 * H;
    rnn_cell::lstm_backward<Th>(dh[i] + bias(dy, i), gr[j], gr[H + j], gr[2 * H + j], gr[3 * H + j],
                                cp[i], c[i], dc[i], d[j], d[H + j], d[2 * H + j], d[3 * H + j]);
}

template <class T>
__global__ void gru_fwd(const T* gi, const T* gh, const T* bi, const T* bh, const T* hp, T* sv,
                        T* h, int64_t H, int64_t n) {
    const int64_t i = unit();
    if (i >= n)
        return;
    const int64_t r = i / H, j = i % H;
    const T *a = gi + r * 3 * H, *b = gh + r * 3 * H;
    T* s = sv + r * 4 * H;
    const T hn = b[2 * H + j] + bias(bh, 2 * H + j);
    rnn_cell::gru_forward<S, Th>(a[j] + bias(bi, j), a[H + j] + bias(bi, H + j),
                                 a[2 * H + j] + bias(bi, 2 * H + j), b[j] + bias(bh, j),
                                 b[H + j] + bias(bh, H + j), hn, hp[i], s[j], s[H + j],
                                 s[2 * H + j], h[i]);
    s[3 * H + j] = hn;
}

template <class T>
__global__ void gru_bwd(T* dh, const T* dy, const T* sv, const T* hp, T* dgi, T* dgh, int64_t H,
                        int64_t n) {
    const int64_t i = unit();
    if (i >= n)
        return;
    const int64_t r = i / H, j = i % H;
    const T* s = sv + r * 4 * H;
    T *a = dgi + r * 3 * H, *b = dgh + r * 3 * H;
    T dr, dz, dn, dhp;
    rnn_cell::gru_backward(dh[i] + bias(dy, i), s[j], s[H + j], s[2 * H + j], s[3 * H + j], hp[i],
                           dr, dz, dn, dhp);
    a[j] = b[j] = dr;
    a[H + j] = b[H + j] = dz;
    a[2 * H + j] = dn;
    b[2 * H + j] = dn * s[j];
    dh[i] = dhp;
}

template <class T>
__global__ void rnn_fwd(T* a, const T* bi, const T* bh, bool relu, int64_t H, int64_t n) {
    const int64_t i = unit();
    if (i >= n)
        return;
    const T v = a[i] + bias(bi, i % H) + bias(bh, i % H);
    a[i] = relu ? (v > 0 ? v : T(0)) : Th::f(v, T(0), T(0));
}

template <class T>
__global__ void rnn_bwd(const T* dh, const T* dy, const T* h, T* da, bool relu, int64_t n) {
    const int64_t i = unit();
    if (i >= n)
        return;
    const T d = dh[i] + bias(dy, i);
    da[i] = relu ? (h[i] > 0 ? d : T(0)) : d * (1 - h[i] * h[i]);
}

template <class T>
void launch(CellOp op, const Cell& g, const View* v) {
    const int64_t n = g.rows * g.hidden, H = g.hidden;
    const unsigned blocks = unsigned((n + kCellThreads - 1) / kCellThreads);
    const bool relu = g.relu != 0;
    switch (op) {
        case CellOp::LstmForward:
            lstm_fwd<T><<<blocks, kCellThreads>>>(at<T>(v[0]), at<T>(v[1]), at<T>(v[2]),
                                                  at<T>(v[3]), at<T>(v[4]), at<T>(v[5]), H, n);
            break;
        case CellOp::LstmBackward:
            lstm_bwd<T><<<blocks, kCellThreads>>>(at<T>(v[0]), at<T>(v[1]), at<T>(v[2]),
                                                  at<T>(v[3]), at<T>(v[4]), at<T>(v[5]),
                                                  at<T>(v[6]), H, n);
            break;
        case CellOp::GruForward:
            gru_fwd<T><<<blocks, kCellThreads>>>(at<T>(v[0]), at<T>(v[1]), at<T>(v[2]), at<T>(v[3]),
                                                 at<T>(v[4]), at<T>(v[5]), at<T>(v[6]), H, n);
            break;
        case CellOp::GruBackward:
            gru_bwd<T><<<blocks, kCellThreads>>>(at<T>(v[0]), at<T>(v[1]), at<T>(v[2]), at<T>(v[3]),
                                                 at<T>(v[4]), at<T>(v[5]), H, n);
            break;
        case CellOp::RnnForward:
            rnn_fwd<T><<<blocks, kCellThreads>>>(at<T>(v[0]), at<T>(v[1]), at<T>(v[2]), relu, H, n);
            break;
        case CellOp::RnnBackward:
            rnn_bwd<T><<<blocks, kCellThreads>>>(at<T>(v[0]), at<T>(v[1]), at<T>(v[2]), at<T>(v[3]),
                                                 relu, n);
            break;
    }
}

}  // namespace

void launch_cell(CellOp op, const Cell& g, const View* v) {
    if (g.rows == 0 || g.hidden == 0)
        return;
    if (v[0].dtype == Dtype::Float32)
        launch<float>(op, g, v);
    else if (v[0].dtype == Dtype::Float64)
        launch<double>(op, g, v);
    else
        throw dtype_error(std::string("cell kernel: dtype ") + dtype_name(v[0].dtype) +
                          " is not floating");
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        throw error(std::string("CUDA kernel launch (cell) failed: ") + cudaGetErrorString(e));
}

}  // namespace tg::backend::cuda
