#pragma once
/// Sharded checkpoints of a FullyShardedDataParallel model and its optimizer (issue 33): every
/// rank writes only its shard, and a checkpoint loads at any world size.
///
///     tg::distributed::save_sharded(model, opt, "ckpt/");  // collective
///     ...                                                  // later, at this or another size:
///     tg::distributed::load_sharded(model, opt, "ckpt/");  // collective
///
/// Note [Sharded checkpoint format] (docs/distributed.md has the same): the directory holds
/// `manifest.tgsv`, written by rank 0 once every shard is on disk, and `shard-R-of-N.tgsv` (R
/// and N in five digits) from each rank R of N, all TGSV files (Note [TGSV format] in io.hpp:
/// sized, checksummed, written atomically) of kind 3.
///
///   manifest (type "FsdpManifest")      shard R (type "FsdpShard")
///     format, id, world_size, stage       id, rank, world_size
///     optimizer (its type name, bytes)    unit.k               the S_k elements of unit k's
///     group.g.lr (and for Adam/AdamW:                          flat buffer [R·S_k, (R+1)·S_k)
///       betas, eps, weight_decay,         unit.k.step          when the optimizer has state
///       amsgrad; SGD: momentum,           unit.k.state.<name>  its per-element state (S_k):
///       dampening, weight_decay, nesterov)                     exp_avg, exp_avg_sq, ...
///     units, unit.k.shard (S_k), unit.k.steps ([N]: each rank's step count, -1 for none)
///     param.i.name (bytes), param.i.where ([unit, offset, numel]), param.i.shape, param.i.dtype
///     buffer.<name>, frozen.<name>  (buffers and parameters that do not require grad, whole)
///
/// id is a random number shared by the files of one save, so shards of two saves never mix.
/// Loading re-cuts the units by parameter (a parameter's offset in its unit, not a padded index),
/// so the world size, the stage and the unit sizes may all differ from the saved run's: each rank
/// reads only the old shards that overlap its new shard. Per-element optimizer state is re-cut
/// the same way; the step count of a new shard must be the same in every old shard its
/// parameters come from. As tg::load(optimizer), the options (lr, ...) are recorded, not applied.
#include <string>

#include "tapegrad/nn/fully_sharded_data_parallel.hpp"
#include "tapegrad/optim/optimizer.hpp"
#pragma GCC visibility push(default)

namespace tg::distributed {

/// Writes model's shards and opt's state for them into dir (created if absent), one file per
/// rank and rank 0 a manifest. Collective over the model's process group. value_error if opt
/// holds a parameter that is not one of model->parameters(); io_error naming the file if a
/// write fails. An error on any rank throws on every rank (of the same type, with that rank's
/// message), so no rank is left waiting.
void save_sharded(nn::FullyShardedDataParallel& model, const optim::Optimizer& opt,
                  const std::string& dir);

/// Loads a checkpoint save_sharded wrote, at any world size: the model's shards, buffers and
/// parameters that do not require grad, and opt's state for the shards (replaced whole).
/// Collective. io_error naming the file and what differs for a missing, truncated or corrupt
/// file, shards of another save, another model (a parameter missing, added, or of another shape
/// or dtype), another optimizer type, or step counts that differ across the old shards of one
/// new shard; thrown on every rank, with model and opt unchanged on every rank.
void load_sharded(nn::FullyShardedDataParallel& model, optim::Optimizer& opt,
                  const std::string& dir);

}  // namespace tg::distributed

#pragma GCC visibility pop
