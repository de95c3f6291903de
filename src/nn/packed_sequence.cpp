// torch::nn::utils::rnn's packing, composed of index_select / index_add (one node each way), so
// the gradients of a packed or padded batch flow back to its rows (Note [Packed rows] in
// src/ops/rnn_layer.hpp).
#include "tapegrad/nn/packed_sequence.hpp"

#include <algorithm>
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn::utils::rnn {

namespace {

std::vector<int64_t> host_values(const Tensor& t) {
    const Tensor c = t.to(kInt64).contiguous();
    return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

Tensor index_tensor(const std::vector<int64_t>& v, Device d) {
    return tensor(v).to(d);
}

/// The dims after the first two of x [T, B, *].
Shape inner(const Tensor& x) {
    return Shape(x.sizes().begin() + 2, x.sizes().end());
}

Shape with_front(std::initializer_list<int64_t> front, const Shape& rest) {
    Shape s(front);
    s.insert(s.end(), rest.begin(), rest.end());
    return s;
}

}  // namespace

Tensor invert_permutation(const Tensor& permutation) {
    if (!permutation.defined())
        return Tensor();
    return argsort(permutation);  // a permutation's inverse is its argsort
}

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices,
                               Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
    if (!unsorted_indices_.defined())
        unsorted_indices_ = invert_permutation(sorted_indices_);
    if (!batch_sizes_.defined() || !batch_sizes_.device().is_cpu())
        throw device_error(
            "PackedSequence: batch_sizes should always be on CPU. Instances of PackedSequence "
            "should never be created manually. They should be instantiated by functions like "
            "pack_sequence and pack_padded_sequences in nn::utils::rnn.");
}

PackedSequence PackedSequence::to(Device d) const {
    const Tensor moved = data_.to(d);
    if (moved.impl() == data_.impl())
        return *this;
    return PackedSequence(moved, batch_sizes_,
                          sorted_indices_.defined() ? sorted_indices_.to(d) : Tensor(),
                          unsorted_indices_.defined() ? unsorted_indices_.to(d) : Tensor());
}

PackedSequence PackedSequence::to(Dtype d) const {
    return PackedSequence(data_.to(d), batch_sizes_, sorted_indices_, unsorted_indices_);
}

PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first,
                                    bool enforce_sorted) {
    if (!input.defined() || !lengths.defined())
        throw value_error("pack_padded_sequence: undefined input or lengths");
    if (input.dim() < 2)
        throw shape_error("pack_padded_sequence: input must have at least 2 dims [T, B, *], got " +
                          shape_str(input.sizes()));
    if (lengths.dim() != 1 || !lengths.device().is_cpu())
        throw shape_error(
            "pack_padded_sequence: 'lengths' argument should be a 1D CPU int64 "
            "tensor, got " +
            shape_str(lengths.sizes()) + " on " + lengths.device().str());
    lengths = lengths.to(kInt64);
    Tensor sorted_indices;
    const int64_t batch_dim = batch_first ? 0 : 1;
    if (!enforce_sorted) {
        std::tie(lengths, sorted_indices) = sort(lengths, -1, true);
        sorted_indices = sorted_indices.to(input.device());
        input = input.index_select(batch_dim, sorted_indices);
    }
    const Tensor x = batch_first ? input.transpose(0, 1) : input;  // [T, B, *]
    const int64_t T = x.size(0), B = x.size(1);
    const std::vector<int64_t> len = host_values(lengths);
    if (int64_t(len.size()) != B)
        throw shape_error(
            "pack_padded_sequence: Expected `len(lengths)` to be equal to "
            "batch_size, but got " +
            std::to_string(len.size()) + " (batch_size=" + std::to_string(B) + ")");
    for (size_t b = 0; b < len.size(); ++b) {
        if (enforce_sorted && b > 0 && len[b] > len[b - 1])
            throw value_error(
                "pack_padded_sequence: `lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do "
                "not need ONNX exportability.");
        if (len[b] <= 0)
            throw value_error(
                "pack_padded_sequence: Length of all samples has to be greater than "
                "0, but found an element in 'lengths' that is <= 0");
        if (len[b] > T)  // LibTorch 1.13 reads past the input here
            throw shape_error("pack_padded_sequence: length " + std::to_string(len[b]) +
                              " of sequence " + std::to_string(b) + " exceeds the " +
                              std::to_string(T) + " steps of input " + shape_str(input.sizes()));
    }
    std::vector<int64_t> batch_sizes, rows;
    for (int64_t t = 0; t < (B > 0 ? len[0] : 0); ++t) {
        int64_t bs = 0;
        while (bs < B && len[size_t(bs)] > t)
            rows.push_back(t * B + bs++);
        batch_sizes.push_back(bs);
    }
    const Tensor flat = x.reshape(with_front({T * B}, inner(x)));
    return PackedSequence(flat.index_select(0, index_tensor(rows, x.device())), tensor(batch_sizes),
                          sorted_indices, {});
}

std::tuple<Tensor, Tensor> pad_packed_sequence(PackedSequence sequence, bool batch_first,
                                               double padding_value,
                                               std::optional<int64_t> total_length) {
    const std::vector<int64_t> bs = host_values(sequence.batch_sizes());
    int64_t T = int64_t(bs.size());
    if (total_length) {
        if (*total_length < T)
            throw value_error(
                "pad_packed_sequence: Expected total_length to be at least the length of the "
                "longest sequence in input, but got total_length=" +
                std::to_string(*total_length) + " and max sequence length being " +
                std::to_string(T));
        T = *total_length;
    }
    const Tensor& data = sequence.data();
    const int64_t B = bs.empty() ? 0 : bs[0];
    Shape rest(data.sizes().begin() + 1, data.sizes().end());
    std::vector<int64_t> rows, lengths(size_t(B), 0), pad;
    for (size_t t = 0; t < bs.size(); ++t)
        for (int64_t b = 0; b < bs[t]; ++b) {
            rows.push_back(int64_t(t) * B + b);
            ++lengths[size_t(b)];
        }
    Tensor out = index_add(data, with_front({T * B}, rest), 0, index_tensor(rows, data.device()));
    if (padding_value != 0) {
        std::vector<double> mask(size_t(T * B), padding_value);
        for (int64_t r : rows)
            mask[size_t(r)] = 0;
        Shape ms{T * B};
        ms.resize(rest.size() + 1, 1);
        out = out + tensor(mask).reshape(ms).to(data.options());
    }
    out = out.reshape(with_front({T, B}, rest));
    if (batch_first)
        out = out.transpose(0, 1);
    Tensor lens = tensor(lengths);
    if (sequence.unsorted_indices().defined()) {
        out = out.index_select(batch_first ? 0 : 1, sequence.unsorted_indices());
        lens = lens.index_select(0, sequence.unsorted_indices().to(Device::cpu()));
    }
    return {out, lens};
}

Tensor pad_sequence(ArrayRef<Tensor> sequences, bool batch_first, double padding_value) {
    if (sequences.empty())
        throw value_error("pad_sequence: received an empty list of sequences");
    int64_t longest = 0;
    for (const Tensor& s : sequences) {
        if (!s.defined() || s.dim() < 1)
            throw shape_error("pad_sequence: every sequence must have at least 1 dim [L, *]");
        if (Shape(s.sizes().begin() + 1, s.sizes().end()) !=
            Shape(sequences[0].sizes().begin() + 1, sequences[0].sizes().end()))
            throw shape_error("pad_sequence: sequences " + shape_str(sequences[0].sizes()) +
                              " and " + shape_str(s.sizes()) + " differ after their first dim");
        longest = std::max(longest, s.size(0));
    }
    std::vector<Tensor> padded;
    for (const Tensor& s : sequences) {
        if (s.size(0) == longest) {
            padded.push_back(s);
            continue;
        }
        Shape fill = s.sizes();
        fill[0] = longest - s.size(0);
        padded.push_back(cat({s, full(fill, padding_value, s.options())}, 0));
    }
    return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(ArrayRef<Tensor> sequences, bool enforce_sorted) {
    std::vector<int64_t> lengths;
    for (const Tensor& s : sequences)
        lengths.push_back(s.defined() && s.dim() > 0 ? s.size(0) : 0);
    return pack_padded_sequence(pad_sequence(sequences), tensor(lengths), false, enforce_sorted);
}

}  // namespace tg::nn::utils::rnn
