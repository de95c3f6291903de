#pragma once
/// PyTorch's checkpoint files (.pt, .pth): state dicts in and out of what torch.save writes and
/// torch.load reads.
///
///     model->load_state_dict(tg::io::load_state_dict("resnet_block.pt"));  //
///     torch.save(m.state_dict()) tg::io::save_state_dict(model->state_dict(), "out.pt"); //
///     torch.load reads it auto sd = tg::io::load_state_dict("ckpt.pt", "model");  //
///     torch.save({"model": sd, "epoch": 3})
///
/// Note [.pt format]
/// A zip archive (PyTorch >= 1.6) of stored, uncompressed entries under one folder:
///     <name>/data.pkl     a pickle (protocol 2) of the object; each tensor is
///                         torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
///                         requires_grad, backward_hooks), each storage a persistent id
///                         ('storage', torch.FloatStorage, key, location, numel)
///     <name>/data/<key>   a storage's elements, little-endian
///     <name>/byteorder    "little" (PyTorch >= 2.0), <name>/version "3\n"
/// A state dict is a collections.OrderedDict of tensors (with a _metadata attribute, ignored).
///
/// Reading executes nothing: the pickle may name only collections.OrderedDict,
/// torch._utils._rebuild_tensor_v2 / _rebuild_parameter and the storage types of tapegrad's ten
/// dtypes (torch.FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, LongStorage,
/// IntStorage, ShortStorage, CharStorage, ByteStorage, BoolStorage). Anything else, and any
/// malformed archive or pickle, is tg::io_error("load_state_dict(<path>): <problem>").
#include <string>

#include "tapegrad/nn/module.hpp"
#include "tapegrad/ordered_dict.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::io {

/// Writes sd as torch.save(sd, path) writes a state dict: an OrderedDict of tensors, one
/// storage per tensor storage (tensors sharing a CPU storage, such as tied weights, share it in
/// the file too, with their offsets and strides), every entry's data aligned to 64 bytes. Any
/// device and dtype (other devices are copied to the host). Published atomically (Note [Atomic
/// save]). value_error for an undefined tensor; io_error if the file cannot be written.
void save_state_dict(const StateDict& sd, const std::string& path);
/// The tensors of a .pt file holding a dict (or OrderedDict) of tensors, in the file's order, as
/// CPU tensors: views with the file's sizes, strides and offsets into one tensor per storage
/// (tensors that share a storage in the file share it here).
StateDict load_state_dict(const std::string& path);
/// The state dict under `key` of a .pt file holding a dict of other things, such as
/// torch.save({"model": model.state_dict(), "epoch": 3}); the other entries may be anything
/// the reader accepts (ints, floats, strings, lists, tuples, dicts, tensors) and are skipped.
StateDict load_state_dict(const std::string& path, const std::string& key);

}  // namespace tg::io

#pragma GCC visibility pop
