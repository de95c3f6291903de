#pragma once
// What save_sharded and load_sharded share (Note [Sharded checkpoint format] in
// include/tapegrad/sharded_checkpoint.hpp): access to the wrapper's units, the files' names, the
// records, and running a step on every rank so that an error anywhere throws everywhere.
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "distributed/fsdp.hpp"
#include "io/tgsv.hpp"
#include "tapegrad/optim/optimizer.hpp"

namespace tg::nn {
struct FsdpAccess {
    static FsdpState& state(FullyShardedDataParallel& m) { return *m.state_; }
};
}  // namespace tg::nn

namespace tg::distributed::detail {

constexpr int64_t kShardedFormat = 1;

std::string manifest_path(const std::string& dir);
std::string shard_path(const std::string& dir, int64_t rank, int64_t world);

/// Runs fn; if it throws on any rank of g, every rank throws the error of the lowest rank that
/// failed (its type for io_error, value_error, out_of_memory and distributed_error, else
/// tg::error, with its message). Collective.
void on_every_rank(ProcessGroup& g, const std::function<void()>& fn);

/// A record holding the bytes of s (uint8), and its inverse.
io_detail::OutRecord string_record(std::string name, const std::string& s);
/// A file's records by name (io_error naming the file for a name seen twice).
using Records = std::unordered_map<std::string, const io_detail::InRecord*>;
Records index_records(const io_detail::InFile& f, const std::string& where);
/// The record `name` of f (io_error "<where>: record "name" is missing" if absent).
const io_detail::InRecord& need(const Records& f, const std::string& name,
                                const std::string& where);
/// An int64 [] record's value, a uint8 record's string (io_error otherwise).
int64_t int_of(const io_detail::InRecord& r, const std::string& where);
std::string string_of(const io_detail::InRecord& r, const std::string& where);
/// value_error unless every parameter of opt is one of the wrapper's shards.
void check_optimizer_params(const nn::FsdpState& s, const optim::Optimizer& opt, const char* what);

}  // namespace tg::distributed::detail
