// The CPU's reductions: sums, max and min over dims, arg-max/min, softmax rows.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backend/cpu/backend.hpp"
#include "backend/cpu/iterate.hpp"
#include "backend/kernel_table.hpp"
#include "tapegrad/shape.hpp"

namespace tg::backend::cpu {

namespace {

template <class T>
void reduce_loop(ReduceOp op, const View& out, const View& in) {
    const View* v[2] = {&out, &in};
    T* o = ptr<T>(out);
    const T* a = ptr<T>(in);
    using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;
    const T init = op == ReduceOp::Sum   ? T(0)
                   : op == ReduceOp::Max ? std::numeric_limits<T>::lowest()
                                         : std::numeric_limits<T>::max();
    {  // initialise every output element once (out's own layout)
        const View* vo[1] = {&out};
        Shape osz(out.sizes, out.sizes + out.ndim);
        for (int d = 0; d < out.ndim; ++d)
            if (out.strides[d] == 0)
                osz[d] = 1;
        for_each_row<1>(make_iter<1>(vo, osz.data(), out.ndim),
                        [&](const int64_t* off, int64_t n, const int64_t* s) {
                            for (int64_t i = 0; i < n; ++i)
                                o[off[0] + i * s[0]] = init;
                        });
    }
    parallel_rows<2>(iter_of<2>(v), [&](const int64_t* off, int64_t n, const int64_t* s) {
        T* po = o + off[0];
        const T* pa = a + off[1];
        if (s[0] == 0) {  // the row reduces into one element
            if (op == ReduceOp::Sum) {
                Acc acc = 0;
                int64_t i = 0;
                if (s[1] == 1) {  // eight independent sums: no chain of dependent adds, SIMD
                    Acc p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                    for (; i + 8 <= n; i += 8)
                        for (int k = 0; k < 8; ++k)
                            p[k] += pa[i + k];
                    acc = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
                }
                for (; i < n; ++i)
                    acc += pa[i * s[1]];
                *po = static_cast<T>(*po + acc);
            } else if (op == ReduceOp::Max) {
                T m = *po;
                for (int64_t i = 0; i < n; ++i)
                    m = pa[i * s[1]] > m ? pa[i * s[1]] : m;
                *po = m;
            } else {
                T m = *po;
                for (int64_t i = 0; i < n; ++i)
                    m = pa[i * s[1]] < m ? pa[i * s[1]] : m;
                *po = m;
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {
                T& r = po[i * s[0]];
                const T x = pa[i * s[1]];
                r = op == ReduceOp::Sum   ? r + x
                    : op == ReduceOp::Max ? (x > r ? x : r)
                                          : (x < r ? x : r);
            }
        }
    });
}

template <class T>
void arg_reduce_loop(bool is_max, const View& out, const View& in, int dim) {
    Shape sz(in.sizes, in.sizes + in.ndim);
    const int64_t n = sz[dim];
    const int64_t sd = in.strides[dim];
    sz[dim] = 1;
    const View* v[2] = {&out, &in};
    int64_t* o = ptr<int64_t>(out);
    const T* a = ptr<T>(in);
    for_each_row<2>(make_iter<2>(v, sz.data(), in.ndim), [&](const int64_t* off, int64_t len,
                                                             const int64_t* s) {
        for (int64_t i = 0; i < len; ++i)
            o[off[0] + i * s[0]] = cpu_table::arg_best(a + off[1] + i * s[1], n, sd, is_max);
    });
}

template <class T>
void softmax_loop(T* o, const T* x, int64_t rows, int64_t cols, bool log) {
    for (int64_t r = 0; r < rows; ++r)
        cpu_table::softmax_row(o + r * cols, x + r * cols, cols, log);
}

}  // namespace

void CpuBackend::reduce(ReduceOp op, const View& out, const View& in, int dim) {
    if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin)
        dispatch(in.dtype, [&](auto tag) {
            arg_reduce_loop<decltype(tag)>(op == ReduceOp::ArgMax, out, in, dim);
        });
    else
        dispatch(out.dtype, [&](auto tag) { reduce_loop<decltype(tag)>(op, out, in); });
}

void CpuBackend::softmax_rows(const View& out, const View& in, int64_t rows, int64_t cols,
                              bool log) {
    if (in.dtype == Dtype::Float32)
        softmax_loop(ptr<float>(out), ptr<float>(in), rows, cols, log);
    else
        softmax_loop(ptr<double>(out), ptr<double>(in), rows, cols, log);
}

}  // namespace tg::backend::cpu
