#pragma once
// How the CPU backend walks strided operands (Note [Strided iteration]).
#include <algorithm>
#include <cstdint>

#include "backend/backend.hpp"
#include "backend/cpu/threads.hpp"
#include "tapegrad/shape.hpp"

namespace tg::backend::cpu {

// Note [Strided iteration]: every elementwise, copy and reduction kernel walks N operands that
// share one shape with per-operand strides (0 on broadcast or reduced dims). Dims of size 1 are
// dropped and adjacent dims merged where every operand is contiguous across them, so the common
// cases run as one flat inner loop the compiler vectorises.
template <int N>
struct Iter {
    int nd = 0;
    int64_t size[kMaxDims];
    int64_t st[N][kMaxDims];
};

template <int N>
Iter<N> make_iter(const View* const (&v)[N], const int64_t* sizes, int ndim) {
    Iter<N> it;
    for (int d = 0; d < ndim; ++d) {
        if (sizes[d] == 1)
            continue;
        if (it.nd > 0) {
            bool merge = true;
            for (int k = 0; k < N; ++k)
                merge = merge && it.st[k][it.nd - 1] == v[k]->strides[d] * sizes[d];
            if (merge) {
                it.size[it.nd - 1] *= sizes[d];
                for (int k = 0; k < N; ++k)
                    it.st[k][it.nd - 1] = v[k]->strides[d];
                continue;
            }
        }
        it.size[it.nd] = sizes[d];
        for (int k = 0; k < N; ++k)
            it.st[k][it.nd] = v[k]->strides[d];
        ++it.nd;
    }
    return it;
}

template <int N>
Iter<N> iter_of(const View* const (&v)[N]) {
    return make_iter<N>(v, v[0]->sizes, v[0]->ndim);
}

/// Calls row(offsets[N], n, inner_strides[N]) for each innermost row; offsets start at base.
template <int N, class Row>
void for_each_row(const Iter<N>& it, Row&& row, const int64_t* base = nullptr) {
    int64_t off[N] = {};
    int64_t ist[N] = {};
    for (int k = 0; base && k < N; ++k)
        off[k] = base[k];
    if (it.nd == 0) {
        row(off, int64_t(1), ist);
        return;
    }
    const int last = it.nd - 1;
    for (int k = 0; k < N; ++k)
        ist[k] = it.st[k][last];
    const int64_t outer = checked_prod(it.size, last, "cpu kernel");
    int64_t idx[kMaxDims] = {};
    for (int64_t r = 0; r < outer; ++r) {
        row(off, it.size[last], ist);
        for (int d = last - 1; d >= 0; --d) {
            for (int k = 0; k < N; ++k)
                off[k] += it.st[k][d];
            if (++idx[d] < it.size[d])
                break;
            for (int k = 0; k < N; ++k)
                off[k] -= it.st[k][d] * it.size[d];
            idx[d] = 0;
        }
    }
}

/// for_each_row, with the outermost dim (or a single row) split into one slice per thread when
/// the kernel is large (Note [Elementwise threads] in threads.cpp). Operand 0 is the output:
/// where its stride along dim 0 is 0 (a reduction, or an expanded output) slices would write the
/// same elements, so that runs on one thread.
template <int N, class Row>
void parallel_rows(const Iter<N>& it, Row&& row) {
    const int64_t total = checked_prod(it.size, it.nd, "cpu kernel");
    const bool split = it.nd > 0 && it.st[0][0] != 0 && total >= kParallelMin;
    const int threads = split ? cpu_threads() : 1;
    if (threads < 2) {
        for_each_row(it, row);
        return;
    }
    const int64_t n0 = it.size[0];
    const int parts = int(std::min<int64_t>(threads, n0));
    const int64_t align = it.nd == 1 ? 16 : 1;  // slices of one row start on 64-byte lines
    auto start = [&](int i) {
        return i >= parts ? n0 : std::min(n0, (n0 * i / parts + align - 1) / align * align);
    };
    cpu_parallel(parts, [&](int i) {
        const int64_t b = start(i), e = start(i + 1);
        if (e <= b)
            return;
        Iter<N> slice = it;
        slice.size[0] = e - b;
        int64_t base[N];
        for (int k = 0; k < N; ++k)
            base[k] = b * it.st[k][0];
        for_each_row(slice, row, base);
    });
}

template <class T>
T* ptr(const View& v) {
    return static_cast<T*>(v.data) + v.offset;
}

/// The product of s[from, to), checked (Note [Checked sizes] in src/core/shape.cpp).
inline int64_t prod(const int64_t* s, int from, int to) {
    return checked_prod(s + from, to - from, "cpu kernel");
}

}  // namespace tg::backend::cpu
