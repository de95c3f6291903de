// Random tensors (runtime/random_fill.hpp).
//
// Note [Draw order]: LibTorch's CPU random kernels draw one element after another in the order
// its TensorIterator visits the tensor: a contiguous tensor in index order, any other in the
// order of its memory (the dims sorted by stride, largest outside, by an insertion sort that
// breaks ties of equal strides by size). So `w.t().uniform_()` gives w the values
// `w.uniform_()` would: the k-th draw goes to the k-th element in memory, not in index order.
// tapegrad draws into a host buffer in that order and puts each value at its element; the
// samplers never see the layout, except that normal_ is told whether the tensor is contiguous
// (core/distributions.hpp). Values are drawn on the host for every device and copied over, so a
// seed gives the same numbers on the CPU, OpenCL and CUDA.
#include "runtime/random_fill.hpp"

#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "runtime/dispatch.hpp"
#include "tapegrad/error.hpp"

namespace tg::runtime {

namespace {

/// The dims of a tensor with `sizes` and `strides` in the order LibTorch's TensorIterator nests
/// them, innermost first (its reorder_dimensions for a single output).
std::vector<size_t> iteration_order(const Shape& sizes, const Shape& strides) {
    const size_t nd = sizes.size();
    std::vector<size_t> perm(nd);
    for (size_t i = 0; i < nd; ++i)
        perm[i] = nd - 1 - i;
    auto should_swap = [&](size_t d0, size_t d1) {
        const int64_t s0 = strides[d0], s1 = strides[d1];
        if (s0 == 0 || s1 == 0)
            return 0;
        if (s0 != s1)
            return s0 < s1 ? -1 : 1;
        return sizes[d0] > sizes[d1] ? 1 : 0;
    };
    for (size_t i = 1; i < nd; ++i) {
        size_t d1 = i;
        for (size_t d0 = i; d0-- > 0;) {
            const int c = should_swap(perm[d0], perm[d1]);
            if (c > 0) {
                std::swap(perm[d0], perm[d1]);
                d1 = d0;
            } else if (c < 0) {
                break;
            }
        }
    }
    return perm;
}

/// The values drawn for a tensor laid out as `layout`, moved from draw order to index order.
std::vector<unsigned char> to_index_order(const std::vector<unsigned char>& drawn,
                                          const Tensor& layout, size_t esize) {
    const Shape& sizes = layout.sizes();
    const std::vector<size_t> perm = iteration_order(sizes, layout.strides());
    const Shape dense = contiguous_strides(sizes, "random");
    std::vector<unsigned char> out(drawn.size());
    std::vector<int64_t> idx(sizes.size(), 0);  // per position of perm
    const int64_t n = layout.numel();
    int64_t at = 0;  // the element's index-order position
    for (int64_t k = 0; k < n; ++k) {
        std::memcpy(out.data() + size_t(at) * esize, drawn.data() + size_t(k) * esize, esize);
        for (size_t p = 0; p < perm.size(); ++p) {  // next index, perm[0] fastest
            const size_t d = perm[p];
            at += dense[d];
            if (++idx[p] < sizes[d])
                break;
            at -= dense[d] * sizes[d];
            idx[p] = 0;
        }
    }
    return out;
}

/// A host buffer; out_of_memory naming op, not std::bad_alloc, when the host has no room.
std::vector<unsigned char> host_bytes(size_t n, const char* op) {
    try {
        return std::vector<unsigned char>(n);
    } catch (const std::bad_alloc&) {
        throw out_of_memory(std::string(op) + ": out of host memory for " + std::to_string(n) +
                            " bytes");
    }
}

}  // namespace

void fill_random(const Tensor& out, detail::Engine& e, const Sampler& sample, const char* op,
                 const Tensor* layout) {
    const Tensor& lay = layout ? *layout : out;
    for (size_t d = 0; d < lay.sizes().size(); ++d)
        if (lay.strides()[d] == 0 && lay.sizes()[d] > 1)
            throw value_error(std::string(op) + ": the tensor " + shape_str(lay.sizes()) +
                              " has elements that share memory (an expanded view); clone() it "
                              "first");
    const int64_t n = out.numel();
    if (n == 0)
        return;
    const bool contiguous = lay.is_contiguous();
    const size_t esize = element_size(out.dtype()), bytes = size_t(n) * esize;
    const TensorImpl* i = out.impl();
    const size_t offset = size_t(i->offset) * esize;
    if (contiguous && out.device().is_cpu()) {
        sample(static_cast<char*>(i->storage->data) + offset, n, true, e);
        return;
    }
    std::vector<unsigned char> host = host_bytes(bytes, op);
    sample(host.data(), n, contiguous, e);
    if (!contiguous)
        host = to_index_order(host, lay, esize);
    if (out.device().is_cpu())
        std::memcpy(static_cast<char*>(i->storage->data) + offset, host.data(), bytes);
    else
        be(out).from_host(i->storage->data, offset, host.data(), bytes);
}

void fill_random(const Tensor& out, const Generator* g, const Sampler& sample, const char* op,
                 const Tensor* layout) {
    detail::Draw draw(g);
    fill_random(out, draw.engine(), sample, op, layout);
}

void fill_host(const Tensor& t, const std::function<void(void* dst)>& write) {
    const TensorImpl* i = t.impl();
    const size_t esize = element_size(t.dtype()), bytes = size_t(t.numel()) * esize;
    char* data = static_cast<char*>(i->storage->data) + size_t(i->offset) * esize;
    if (t.device().is_cpu())
        return write(data);
    std::vector<unsigned char> host = host_bytes(bytes, "fill_host");
    write(host.data());
    be(t).from_host(i->storage->data, size_t(i->offset) * esize, host.data(), bytes);
}

}  // namespace tg::runtime
