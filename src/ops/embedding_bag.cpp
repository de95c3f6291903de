// embedding_bag composed of gathering ops: the rows of the bags' tokens (tg::embedding, whose
// backward gathers per weight row), scaled by per-sample weights, then added into their bags
// (index_add, whose backward is index_select) or, for max, picked from a [bags, longest, D]
// gather of the rows (max along the bag, the first maximum winning, as LibTorch's kernel).
// The bags are worked out on the host from the int64 indices and offsets.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "runtime/dispatch.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/embedding_bag_ops.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

std::vector<int64_t> host_longs(const Tensor& t, const char* what) {
    if (t.dtype() != kInt64 && t.dtype() != kInt32)
        throw dtype_error(std::string("embedding_bag: ") + what + " must be int64 or int32, got " +
                          dtype_name(t.dtype()) + " " + shape_str(t.sizes()));
    if (t.dim() != 1)
        throw shape_error(std::string("embedding_bag: ") + what + " must be 1-D, got " +
                          shape_str(t.sizes()));
    NoGradGuard guard;
    return t.to(Device::cpu()).to(kInt64).contiguous().to_vector<int64_t>();
}

/// The bags: for each kept entry of indices (not padding), its position, token and bag.
struct Bags {
    int64_t count = 0;                     // B
    std::vector<int64_t> pos, token, bag;  // per kept entry
    std::vector<int64_t> size;             // entries kept per bag
    int64_t longest = 0;
};

Bags make_bags(const std::vector<int64_t>& idx, const std::vector<int64_t>& off, int64_t V,
               bool include_last_offset, int64_t padding) {
    const int64_t N = int64_t(idx.size()), O = int64_t(off.size());
    Bags b;
    b.count = include_last_offset ? std::max<int64_t>(O - 1, 0) : O;
    if (O > 0 && off[0] != 0)
        throw value_error(
            "embedding_bag: offsets[0] has to be 0 (the first bag starts at "
            "position 0), got " +
            std::to_string(off[0]));
    for (int64_t i = 0; i + 1 < O; ++i)
        if (off[size_t(i + 1)] < off[size_t(i)])
            throw value_error("embedding_bag: offsets must not decrease, got offsets[" +
                              std::to_string(i) + "] = " + std::to_string(off[size_t(i)]) +
                              " > offsets[" + std::to_string(i + 1) +
                              "] = " + std::to_string(off[size_t(i + 1)]));
    if (O > 0 && off.back() > N)
        throw value_error("embedding_bag: offsets[-1] = " + std::to_string(off.back()) +
                          " is greater than the number of indices " + std::to_string(N));
    b.size.assign(size_t(b.count), 0);
    for (int64_t k = 0; k < b.count; ++k) {
        const int64_t end = k + 1 < O ? off[size_t(k + 1)] : N;
        for (int64_t i = off[size_t(k)]; i < end; ++i) {
            const int64_t t = idx[size_t(i)];
            if (t < 0 || t >= V)
                throw shape_error("embedding_bag: index " + std::to_string(t) + " at position " +
                                  std::to_string(i) + " is out of range for " + std::to_string(V) +
                                  " embeddings");
            if (t == padding)
                continue;
            b.pos.push_back(i), b.token.push_back(t), b.bag.push_back(k);
            ++b.size[size_t(k)];
        }
        b.longest = std::max(b.longest, b.size[size_t(k)]);
    }
    return b;
}

Tensor longs_on(const std::vector<int64_t>& v, const Device& d) {
    return tensor(v).to(d);
}

}  // namespace

Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                     bool scale_grad_by_freq, int64_t mode, bool sparse,
                     const Tensor& per_sample_weights, bool include_last_offset,
                     std::optional<int64_t> padding_idx) {
    const char* op = "embedding_bag";
    if (!weight.defined() || !indices.defined() || !offsets.defined())
        throw value_error("embedding_bag: undefined weight, indices or offsets");
    if (weight.dim() != 2)
        throw shape_error(
            "embedding_bag: weight must be 2-D [num_embeddings, embedding_dim], "
            "got " +
            shape_str(weight.sizes()));
    runtime::check_float_kernels(op, weight);
    if (mode < 0 || mode > 2)
        throw value_error("embedding_bag: mode " + std::to_string(mode) +
                          " is not 0 (sum), 1 (mean) or 2 (max)");
    if (sparse)
        throw value_error("embedding_bag: sparse gradients are not supported (sparse = false)");
    if (mode == 2 && scale_grad_by_freq)
        throw value_error(
            "embedding_bag: max mode does not support scaling the gradient by the "
            "frequency");
    const int64_t V = weight.size(0), D = weight.size(1);
    int64_t padding = -1;
    if (padding_idx) {
        if (*padding_idx < -V || *padding_idx >= V)
            throw value_error("embedding_bag: padding_idx must be within -" + std::to_string(V) +
                              " and " + std::to_string(V - 1) + ", got " +
                              std::to_string(*padding_idx));
        padding = *padding_idx < 0 ? *padding_idx + V : *padding_idx;
    }
    const std::vector<int64_t> idx = host_longs(indices, "indices"),
                               off = host_longs(offsets, "offsets");
    if (per_sample_weights.defined()) {
        if (mode != 0)
            throw value_error(
                "embedding_bag: per_sample_weights is only supported for mode "
                "sum (0), got mode " +
                std::to_string(mode));
        if (per_sample_weights.dtype() != weight.dtype())
            throw dtype_error(std::string("embedding_bag: per_sample_weights ") +
                              dtype_name(per_sample_weights.dtype()) + " and weight " +
                              dtype_name(weight.dtype()) + " must have the same dtype");
        if (per_sample_weights.sizes() != indices.sizes())
            throw shape_error("embedding_bag: per_sample_weights " +
                              shape_str(per_sample_weights.sizes()) +
                              " must have the shape of indices " + shape_str(indices.sizes()));
        runtime::check_same(op, weight, per_sample_weights);
    }
    const Bags b = make_bags(idx, off, V, include_last_offset, padding);
    const Device dev = weight.device();
    const int64_t P = int64_t(b.pos.size());
    const Tensor tokens = longs_on(b.token, dev), bag = longs_on(b.bag, dev);
    Tensor rows = embedding(weight, tokens, -1, scale_grad_by_freq);  // [P, D]
    if (mode != 2 || b.longest == 0) {
        if (per_sample_weights.defined())
            rows = rows * index_select(per_sample_weights, 0, longs_on(b.pos, dev)).reshape({P, 1});
        Tensor out = index_add(rows, {b.count, D}, 0, bag);
        if (mode == 1) {  // the sum over the count (an empty bag: 0 / 1)
            std::vector<double> count(b.size.begin(), b.size.end());
            for (double& c : count)
                c = std::max(c, 1.0);
            out = out / tensor(count, weight.options()).reshape({b.count, 1});
        }
        return out;
    }
    // max: the rows of each bag laid out [B, longest, D], short bags padded with a -inf row
    std::vector<int64_t> slot(size_t(b.count * b.longest), P);
    std::vector<int64_t> filled(size_t(b.count), 0);
    for (int64_t i = 0; i < P; ++i) {
        const int64_t k = b.bag[size_t(i)];
        slot[size_t(k * b.longest + filled[size_t(k)]++)] = i;
    }
    const Tensor ext =
        cat({rows, full({1, D}, -std::numeric_limits<double>::infinity(), weight.options())}, 0);
    const Tensor laid = index_select(ext, 0, longs_on(slot, dev)).reshape({b.count, b.longest, D});
    const Tensor top = std::get<0>(max(laid, 1));
    std::vector<double> nonempty(b.size.begin(), b.size.end());
    for (double& c : nonempty)
        c = c > 0 ? 1 : 0;
    const Tensor keep = gt(tensor(nonempty, weight.options()).reshape({b.count, 1}), 0);
    return where(keep, top, zeros({}, weight.options()));
}

}  // namespace tg
