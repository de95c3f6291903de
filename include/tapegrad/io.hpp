#pragma once
/// tg::save / tg::load: module parameters and optimizer state in a versioned binary file.
///
///     tg::save(model, "model.tgsv");      // model: a Module or a holder such as Sequential
///     tg::load(model, "model.tgsv");      // same architecture: names, shapes, dtypes must match
///     tg::save(optimizer, "opt.tgsv");  tg::load(optimizer, "opt.tgsv");
///     tg::save(tensor, "x.tgsv");        tg::load(tensor, "x.tgsv");   // also std::vector<Tensor>
///
/// save() writes a temporary `path.tmp.XXXXXX` (a fresh random name) in the same directory,
/// flushes it to disk and renames it over `path`: an interrupted or killed save, or several
/// threads or processes saving to one path at once, never leave a partial or mixed file at
/// `path`. Every save also removes the temporaries that killed saves of `path` left behind
/// (those no running save holds; Note [Atomic save] in src/io/posix_file.cpp).
///
/// load() accepts only a regular file, reads it with memory bounded by its size, and validates
/// everything (magic, version, size, checksum, kind, every declared count and size against
/// overflow and the bytes left, every name, dtype and shape against the target, and for an
/// optimizer every loaded value as its constructor validates options) before it changes
/// anything: on any problem it throws tg::io_error naming the file and the problem, e.g.
///     load(model.tgsv): parameter "fc1.weight": shape [256,784] in file, [128,784] in model
/// and the target is left exactly as it was.
///
/// Note [TGSV format] (versions 1 and 2; docs/serialization.md has the same table)
/// All integers are little-endian; strings are a u32 byte length followed by UTF-8 bytes.
///
///     offset  size      field
///     0       4         magic "TGSV"
///     4       4         u32 format version: 2 when a record has a dtype of code 4 or more, else 1
///     8       4         u32 kind: 1 = module parameters, 2 = optimizer state, 3 = tensors
///     12      8         u64 total file size in bytes (tells truncation from corruption)
///     20      4+n       string type: the module's type name ("Sequential") or the
///                       optimizer's ("SGD", "Adam", "AdamW")
///     ..      8         u64 record count
///     then per record:
///             4+n       string name
///             1         u8 dtype: 0 = float32, 1 = float64, 2 = int64, 3 = bool; since version
///                       2: 4 = uint8, 5 = int8, 6 = int16, 7 = int32, 8 = float16, 9 = bfloat16
///             4         u32 ndim, then ndim × i64 sizes
///             8         u64 nbytes (= numel × element size)
///             nbytes    the elements, row-major (contiguous), little-endian
///     end     4         u32 CRC-32 (zlib's crc32, polynomial 0xEDB88320) of all bytes before it
///
/// Tensor files (kind 3, type "Tensor" or "TensorList") hold one record per tensor, named "0",
/// "1", ... in order, as LibTorch's archives name them. A single tensor loads from the record
/// "0" of either form (the first of a list, as LibTorch), a list from all of them.
///
/// Module files hold one record per parameter, named as named_parameters() names it
/// ("fc1.weight", "0.bias"), then one per buffer, named as named_buffers() names it
/// ("1.running_mean", "1.num_batches_tracked"; int64 for the counter). Loading requires exactly
/// the model's parameters and buffers. The type name is informational for modules (not checked).
///
/// Optimizer files hold, with i the index of a parameter in Optimizer::parameters() (group by
/// group, in order) and g the index of a group:
///     "param_groups.g.lr"     float64 [] : the group's learning rate
///     "param_groups.g.size"   int64 []   : how many parameters the group has
///     "state.i.step"          int64 []   : the parameter's step count (only for parameters
///                                          that have state)
///     "state.i.<tensor>"      the parameter's dtype and shape: the optimizer's state tensors
///                             that are allocated ("momentum_buffer"; "exp_avg",
///                             "exp_avg_sq", "max_exp_avg_sq")
/// Loading requires the same optimizer type, the same number of groups with the same sizes, and
/// state shapes/dtypes equal to the parameters'. Loading replaces the whole state (parameters
/// absent from the file get none) and leaves every group's options, its lr included, as they
/// are, as LibTorch's torch::load(optimizer, path) does: a resumed program sets its lr (or
/// steps its scheduler back to where it was) itself. The file's lrs are checked, not applied.
#include <optional>
#include <string>
#include <vector>

#include "tapegrad/device.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/nn/module.hpp"
#include "tapegrad/optim/optimizer.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// The newest format version this build writes (only for files that need it: a file whose
/// records are all float32, float64, int64 or bool is version 1) and reads (1 and 2).
constexpr uint32_t kSerializationVersion = 2;

/// Writes m's parameters to path atomically (a temporary and a rename); throws io_error on
/// failure, leaving path as it was and no temporary behind.
void save(const nn::Module& m, const std::string& path);
/// Loads parameters saved from a module of the same architecture; throws io_error (naming the
/// file and the problem) and leaves m unchanged on any mismatch or corruption.
void load(nn::Module& m, const std::string& path);
/// Writes the optimizer's per-parameter state, step counts and group lrs.
void save(const optim::Optimizer& o, const std::string& path);
/// Loads state saved from an optimizer of the same type over the same parameter shapes; throws
/// io_error and leaves o unchanged on any mismatch or corruption.
void load(optim::Optimizer& o, const std::string& path);

/// Writes a tensor's values (any device; no autograd state) as torch::save(tensor, path) does.
void save(const Tensor& t, const std::string& path);
/// Writes the tensors in order (LibTorch's torch::save of a std::vector<Tensor>).
void save(const std::vector<Tensor>& tensors, const std::string& path);
/// Reads the first tensor of a tensor file into t, as torch::load(tensor, path): a defined t
/// keeps its identity (every handle to it sees the new values, shape and dtype; its gradient is
/// dropped when the shape or dtype changes) and its requires_grad; an undefined t becomes the
/// loaded tensor. It lands on `device`, else on the CPU (TGSV keeps no device; LibTorch puts it
/// back on the device it was saved from). io_error for a file of another kind or without
/// tensors, with t unchanged.
void load(Tensor& t, const std::string& path, std::optional<Device> device = std::nullopt);
/// Reads every tensor of a tensor file into `tensors` (replacing its contents).
void load(std::vector<Tensor>& tensors, const std::string& path,
          std::optional<Device> device = std::nullopt);

/// save(*holder, path), for Linear, Sequential and user TG_MODULEs.
template <class Impl>
void save(const nn::ModuleHolder<Impl>& m, const std::string& path) {
    save(static_cast<const nn::Module&>(*m), path);
}
/// load(*holder, path).
template <class Impl>
void load(const nn::ModuleHolder<Impl>& m, const std::string& path) {
    load(static_cast<nn::Module&>(*m), path);
}

}  // namespace tg

#pragma GCC visibility pop
