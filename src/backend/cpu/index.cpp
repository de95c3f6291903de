// The CPU's index kernels: index_select, index_add, gather and scatter_add along a dim.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "backend/cpu/backend.hpp"
#include "backend/cpu/iterate.hpp"
#include "backend/cpu/threads.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::cpu {

namespace {

/// Note [Gathering index_add]: index_add along the first dim (an embedding's backward: many
/// rows of src, often the same index) sorts the positions j by idx[j], keeping their order
/// within one index, and gives each thread a range of target rows: each row is the sum of its
/// src rows in increasing j, exactly as the one-thread loop adds them. No two threads write one
/// row, and the bits do not depend on the thread count.
template <class T>
void index_add_rows(T* o, const T* a, const int64_t* idx, int64_t nidx, int64_t inner) {
    std::vector<int64_t> order(size_t(nidx), 0);
    std::iota(order.begin(), order.end(), int64_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t x, int64_t y) { return idx[x] < idx[y]; });
    const int parts = int(std::min<int64_t>(cpu_threads(), nidx));
    cpu_parallel(parts, [&](int part) {
        // this part's slice of `order`, both ends moved forward to the start of a run of one
        // index: the parts meet where the runs do
        auto run_start = [&](int64_t k) {
            while (k > 0 && k < nidx && idx[order[size_t(k)]] == idx[order[size_t(k - 1)]])
                ++k;
            return order.begin() + k;
        };
        const auto begin = run_start(nidx * part / parts),
                   end = run_start(nidx * (part + 1) / parts);
        for (auto it = begin; it < end; ++it) {
            T* d = o + idx[*it] * inner;
            const T* s = a + *it * inner;
            for (int64_t i = 0; i < inner; ++i)
                d[i] += s[i];
        }
    });
}

template <class T>
void index_loop(IndexOp op, const View& out, const View& src, int dim, const View& idxv,
                const char* opname) {
    T* o = ptr<T>(out);
    const T* a = ptr<T>(src);
    const int64_t* idx = ptr<int64_t>(idxv);
    const int64_t nidx = prod(idxv.sizes, 0, idxv.ndim);
    auto bad = [&](int64_t i, int64_t limit) {
        throw shape_error(std::string(opname) + ": index " + std::to_string(i) +
                          " is out of bounds for dim " + std::to_string(dim) + " with size " +
                          std::to_string(limit));
    };
    if (op == IndexOp::Select || op == IndexOp::Add) {
        // Select: out[o, j, i] = src[o, idx[j], i];  Add: out[o, idx[j], i] += src[o, j, i]
        const View& big = op == IndexOp::Select ? src : out;
        const int64_t outer = prod(big.sizes, 0, dim), inner = prod(big.sizes, dim + 1, big.ndim);
        const int64_t n = big.sizes[dim];
        for (int64_t j = 0; j < nidx; ++j)
            if (idx[j] < 0 || idx[j] >= n)
                bad(idx[j], n);
        if (op == IndexOp::Add && outer == 1 && nidx * inner >= kParallelMin && cpu_threads() > 1)
            return index_add_rows(o, a, idx, nidx, inner);
        for (int64_t r = 0; r < outer; ++r)
            for (int64_t j = 0; j < nidx; ++j) {
                if (op == IndexOp::Select) {
                    std::memcpy(o + (r * nidx + j) * inner, a + (r * n + idx[j]) * inner,
                                size_t(inner) * sizeof(T));
                } else {
                    T* d = o + (r * n + idx[j]) * inner;
                    const T* s = a + (r * nidx + j) * inner;
                    for (int64_t i = 0; i < inner; ++i)
                        d[i] += s[i];
                }
            }
        return;
    }
    // Gather: out[o, j, i] = src[o, idx[o, j, i], i];  ScatterAdd: out[o, idx[o,j,i], i] += src[o,
    // j, i]
    const View& big = op == IndexOp::Gather ? src : out;
    const int64_t outer = prod(idxv.sizes, 0, dim), inner = prod(idxv.sizes, dim + 1, idxv.ndim);
    const int64_t nj = idxv.sizes[dim], n = big.sizes[dim];
    for (int64_t k = 0; k < nidx; ++k)
        if (idx[k] < 0 || idx[k] >= n)
            bad(idx[k], n);
    for (int64_t r = 0; r < outer; ++r)
        for (int64_t j = 0; j < nj; ++j)
            for (int64_t i = 0; i < inner; ++i) {
                const int64_t k = (r * nj + j) * inner + i;
                const int64_t b = (r * n + idx[k]) * inner + i;
                if (op == IndexOp::Gather)
                    o[k] = a[b];
                else
                    o[b] += a[k];
            }
}

}  // namespace

void CpuBackend::index(IndexOp op, const View& out, const View& src, int dim, const View& idx,
                       const char* opname) {
    dispatch(out.dtype,
             [&](auto tag) { index_loop<decltype(tag)>(op, out, src, dim, idx, opname); });
}

}  // namespace tg::backend::cpu
