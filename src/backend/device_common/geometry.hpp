#pragma once
// Strided geometry passed by value to device kernels, and the shapes of reductions and index
// kernels as a device sees them (OpenCL and CUDA share them).
//
// Note [Device geometry]: a device kernel gets one work-item per output element and turns its
// linear index into per-operand element offsets with the sizes and strides in a Geo<K> passed
// by value (no buffer, so no host->device transfer per launch). Dims of size 1 are dropped and
// adjacent dims merged where every operand is contiguous across them (as Note [Strided
// iteration] in cpu.cpp), so a contiguous or simply broadcast operand costs one or two
// divisions per element. The layout (int64 sizes, K rows of int64 strides, int64 ndim) matches
// the `GeoK` structs declared in the device source; the largest, Geo<4>, is 648 bytes, inside
// OpenCL's guaranteed 1024 bytes of kernel arguments.
#include <cstdint>

#include "backend/backend.hpp"
#include "tapegrad/shape.hpp"

namespace tg::backend {

template <int K>
struct Geo {
    int64_t size[kMaxDims];
    int64_t st[K][kMaxDims];
    int64_t nd;
};

/// Merged geometry of K operands over `sizes` (operand k's strides in v[k]->strides).
template <int K>
Geo<K> make_geo(const View* const (&v)[K], const int64_t* sizes, int ndim) {
    Geo<K> g{};
    int nd = 0;
    for (int d = 0; d < ndim; ++d) {
        if (sizes[d] == 1)
            continue;
        if (nd > 0) {
            bool merge = true;
            for (int k = 0; k < K; ++k)
                merge = merge && g.st[k][nd - 1] == v[k]->strides[d] * sizes[d];
            if (merge) {
                g.size[nd - 1] *= sizes[d];
                for (int k = 0; k < K; ++k)
                    g.st[k][nd - 1] = v[k]->strides[d];
                continue;
            }
        }
        g.size[nd] = sizes[d];
        for (int k = 0; k < K; ++k)
            g.st[k][nd] = v[k]->strides[d];
        ++nd;
    }
    g.nd = nd;
    return g;
}

template <int K>
Geo<K> geo_of(const View* const (&v)[K]) {
    return make_geo<K>(v, v[0]->sizes, v[0]->ndim);
}

/// Whether every operand walks memory contiguously (a flat kernel with offsets suffices).
template <int K>
bool is_flat(const Geo<K>& g) {
    if (g.nd == 0)
        return true;
    if (g.nd > 1)
        return false;
    for (int k = 0; k < K; ++k)
        if (g.st[k][0] != 1)
            return false;
    return true;
}

// Products of sizes are checked (Note [Checked sizes] in src/core/shape.cpp): they cannot
// overflow for the valid shapes ops make, and throw rather than wrap if one ever did.
template <int K>
int64_t numel(const Geo<K>& g) {
    return checked_prod(g.size, int(g.nd), "device kernel");
}

inline int64_t numel(const View& v) {
    return checked_prod(v.sizes, v.ndim, "device kernel");
}

/// The split of a reduction: `kept` walks the outputs (st[0] = out, st[1] = in), `red` walks
/// the reduced dims of the input (out stride 0, size > 1).
struct ReduceGeo {
    Geo<2> kept;
    Geo<1> red;
    int64_t n_out = 1, n_red = 1;
};

inline ReduceGeo make_reduce_geo(const View& out, const View& in) {
    int64_t ks[kMaxDims], kst_o[kMaxDims], kst_i[kMaxDims], rs[kMaxDims], rst[kMaxDims];
    int nk = 0, nr = 0;
    for (int d = 0; d < in.ndim; ++d) {
        if (out.strides[d] == 0 && in.sizes[d] != 1) {
            rs[nr] = in.sizes[d];
            rst[nr++] = in.strides[d];
        } else {
            ks[nk] = in.sizes[d];
            kst_o[nk] = out.strides[d];
            kst_i[nk++] = in.strides[d];
        }
    }
    View ko{nullptr, 0, ks, kst_o, nk, out.dtype}, ki{nullptr, 0, ks, kst_i, nk, in.dtype};
    View ri{nullptr, 0, rs, rst, nr, in.dtype};
    const View* kv[2] = {&ko, &ki};
    const View* rv[1] = {&ri};
    ReduceGeo r;
    r.kept = make_geo<2>(kv, ks, nk);
    r.red = make_geo<1>(rv, rs, nr);
    r.n_out = numel(r.kept);
    r.n_red = numel(r.red);
    return r;
}

/// An arg-reduction as a device sees it: g walks the outputs (st[0] = out, st[1] = the first
/// element of each input row), each row has len elements `stride` apart.
struct ArgGeo {
    Geo<2> g;
    int64_t n = 0, len = 0, stride = 0;
};

inline ArgGeo make_arg_geo(const View& out, const View& in, int dim) {
    int64_t sz[kMaxDims];
    for (int d = 0; d < in.ndim; ++d)
        sz[d] = in.sizes[d];
    sz[dim] = 1;
    const View* v[2] = {&out, &in};
    ArgGeo a;
    a.g = make_geo<2>(v, sz, in.ndim);
    a.n = numel(a.g);
    a.len = in.sizes[dim];
    a.stride = in.strides[dim];
    return a;
}

// Note [Gathering by segments]: index_add over rows of `inner` elements sums, for each output
// row t, the source rows j with idx[j] == t. Scanning every index for every output element
// costs lim * nidx * inner; grouping the indices by row first (how many per row, where each
// row's group starts, then the group's positions in index order) costs lim * nidx once, and
// then each output element sums only its own group, in index order: deterministic, no atomics.
// The devices group when rows have kGroupedIndexAdd elements or more (an embedding's backward:
// 25x faster for 8192 tokens of 65 rows of 256 on PoCL); shorter rows scan.
constexpr int64_t kGroupedIndexAdd = 4;

/// An index kernel's extents (Backend::index): `inner` elements per row, `nj` rows read (Select,
/// Add: the indices; Gather, ScatterAdd: the index tensor's rows along dim), `lim` rows of the
/// indexed dim, `nidx` indices in all.
struct IndexGeo {
    int64_t nidx = 0, lim = 0, inner = 1, nj = 0;
};

inline IndexGeo make_index_geo(IndexOp op, const View& out, const View& src, int dim,
                               const View& idx) {
    auto prod = [](const int64_t* s, int from, int to) {
        return checked_prod(s + from, to - from, "index kernel");
    };
    const bool by_row = op == IndexOp::Select || op == IndexOp::Add;
    const View& big = op == IndexOp::Select || op == IndexOp::Gather ? src : out;
    IndexGeo g;
    g.nidx = prod(idx.sizes, 0, idx.ndim);
    g.lim = big.sizes[dim];
    g.inner = by_row ? prod(big.sizes, dim + 1, big.ndim) : prod(idx.sizes, dim + 1, idx.ndim);
    g.nj = by_row ? g.nidx : idx.sizes[dim];
    return g;
}

}  // namespace tg::backend
