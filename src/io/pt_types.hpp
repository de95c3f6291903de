#pragma once
// What PyTorch's checkpoint reader and writer share: the storage type of each dtype and
// storages' bytes in and out (little-endian).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tapegrad/nn/module.hpp"
#include "tapegrad/tensor.hpp"

namespace tg::io_detail {

/// torch.FloatStorage's "FloatStorage" -> kFloat32, ...; nullopt for any other name.
std::optional<Dtype> dtype_of_storage(const std::string& name);
/// kFloat32 -> "FloatStorage", ...
const char* storage_name(Dtype d);
/// A 1-D CPU tensor of numel elements from little-endian bytes; a bool byte other than 0 or 1
/// is io_error("<what>: ...").
Tensor tensor_from_le(const uint8_t* data, int64_t numel, Dtype d, const std::string& what);
/// The little-endian bytes of n elements of dtype d at p (a copy).
std::vector<uint8_t> le_bytes(const void* p, size_t n, Dtype d);
/// tg::io::save_state_dict, with zip64 fields for every size and offset above zip32_max (the
/// public function passes kZip32Max; tests/test_zip64.cpp passes less, to write zip64 small).
void save_pt(const StateDict& sd, const std::string& path, uint64_t zip32_max);

}  // namespace tg::io_detail
