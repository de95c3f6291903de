#pragma once
/// Variable-length sequences, as LibTorch's torch::nn::utils::rnn: PackedSequence (the time
/// steps' rows one after the other, longest sequences first), pack_padded_sequence,
/// pad_packed_sequence, pack_sequence and pad_sequence, all differentiable.
///
///     auto packed = tg::nn::utils::rnn::pack_padded_sequence(x, lengths, /*batch_first=*/true,
///                                                            /*enforce_sorted=*/false);
///     auto [out, state] = lstm->forward_with_packed_input(packed);
///     auto [padded, lens] = tg::nn::utils::rnn::pad_packed_sequence(out, true);
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "tapegrad/array_ref.hpp"
#include "tapegrad/device.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::nn::utils::rnn {

/// The permutation's inverse: output[permutation[i]] = i (undefined for an undefined one).
Tensor invert_permutation(const Tensor& permutation);

/// data [Σ batch_sizes, *]: the rows of time step t are the batch_sizes[t] sequences still
/// running, in sorted order (longest first). batch_sizes: int64 on the CPU. sorted_indices and
/// unsorted_indices (its inverse, computed when not given) map sorted order to the caller's
/// batch order and back; both undefined when the batch came sorted.
class PackedSequence {
public:
    /// Throws device_error unless batch_sizes is on the CPU (LibTorch's check).
    explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {},
                            Tensor unsorted_indices = {});
    const Tensor& data() const { return data_; }
    const Tensor& batch_sizes() const { return batch_sizes_; }
    const Tensor& sorted_indices() const { return sorted_indices_; }
    const Tensor& unsorted_indices() const { return unsorted_indices_; }
    /// data and the indices on device d (batch_sizes stays on the CPU); *this when data is
    /// already there.
    PackedSequence to(Device d) const;
    /// data converted to dtype d (the indices stay int64).
    PackedSequence to(Dtype d) const;
    PackedSequence cpu() const { return to(Device::cpu()); }
    bool is_cuda() const { return data_.device().type == DeviceType::CUDA; }

private:
    Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

/// Packs input [T, B, *] ([B, T, *] with batch_first) whose sequence b has lengths[b] steps
/// (lengths: int64 or any tensor converted to int64, on the CPU, 1 <= lengths[b] <= T). With
/// enforce_sorted the lengths must be non-increasing (value_error, LibTorch's message);
/// otherwise the batch is sorted longest first (a stable sort) and sorted_indices records how.
PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false,
                                    bool enforce_sorted = true);
/// (padded [T, B, *] ([B, T, *]), lengths int64 [B]): the inverse of pack_padded_sequence, the
/// padding filled with padding_value, T = total_length when given (value_error if shorter than
/// the longest sequence).
std::tuple<Tensor, Tensor> pad_packed_sequence(PackedSequence sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);
/// Stacks sequences [L_i, *] into [max L, B, *] ([B, max L, *]), padding with padding_value.
Tensor pad_sequence(ArrayRef<Tensor> sequences, bool batch_first = false, double padding_value = 0);
/// pack_padded_sequence(pad_sequence(sequences), their lengths, false, enforce_sorted).
PackedSequence pack_sequence(ArrayRef<Tensor> sequences, bool enforce_sorted = true);

}  // namespace tg::nn::utils::rnn

#pragma GCC visibility pop
