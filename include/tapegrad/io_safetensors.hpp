#pragma once
/// safetensors files (huggingface's format): a module's state_dict() in and out of the files
/// PyTorch, transformers and other runtimes read and write.
///
///     tg::io::save_safetensors(model->state_dict(), "m.safetensors", {{"format", "pt"}});
///     model->load_state_dict(tg::io::load_safetensors("m.safetensors"));
///
/// Note [safetensors format]
///     offset  size  field
///     0       8     u64 N, little-endian: the header's length in bytes
///     8       N     UTF-8 JSON header: {"__metadata__": {"k": "v", ...},
///                     "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]}, ...}
///                   padded with spaces to a multiple of 8 bytes
///     8+N     ...   the byte buffer; tensor <name> is bytes [b, e) of it: row-major,
///                   contiguous, little-endian, e - b = numel × element size
/// dtypes: F32 F64 F16 BF16 I64 I32 I16 I8 U8 BOOL (tapegrad's ten; BOOL bytes are 0 or 1).
///
/// save_safetensors writes as the reference implementation (the `safetensors` crate) does: the
/// tensors sorted by dtype (I64, F64, F32, I32, BF16, F16, I16, I8, U8, BOOL: widest first),
/// then by name, laid out in that order without gaps, in a compact header in the same order
/// after "__metadata__" (its keys sorted; left out when there is no metadata). The file is
/// published atomically as tg::save's are (Note [Atomic save]).
///
/// load_safetensors maps the file (mmap, private) and returns CPU tensors that view the mapping
/// (zero-copy; a tensor whose offset is misaligned for its dtype is copied), unmapped when the
/// last of them is gone; in-place writes to them never reach the file, which must not be
/// truncated or rewritten in place while they live (docs/serialization.md). It checks the whole
/// file first, as the reference reader does, and throws tg::io_error("load_safetensors(<path>):
/// <problem>") for anything else: a header length past the end of the file or above 100 MB, a
/// header that is not this JSON, an unknown dtype, a shape that is negative, not integers or whose
/// element count overflows, offsets that do not match shape × element size, leave gaps, overlap or
/// pass the end of the buffer, a buffer longer than its tensors, a name given twice, BOOL
/// bytes other than 0 and 1.
#include <map>
#include <string>

#include "tapegrad/nn/module.hpp"
#include "tapegrad/ordered_dict.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::io {

/// Writes sd (any devices, dtypes and strides: each tensor is written contiguous from the host)
/// with the given "__metadata__" strings to path. value_error for an undefined tensor or a
/// tensor named "__metadata__"; io_error if the file cannot be written (path left as it was).
void save_safetensors(const StateDict& sd, const std::string& path,
                      const std::map<std::string, std::string>& metadata = {});
/// The tensors of a safetensors file, as CPU tensors in the header's order.
StateDict load_safetensors(const std::string& path);
/// The "__metadata__" strings of a safetensors file (empty if it has none); the whole file is
/// checked as load_safetensors checks it.
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path);

}  // namespace tg::io

#pragma GCC visibility pop
