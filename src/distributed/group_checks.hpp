#pragma once
// What every process group checks before it communicates, and the counters behind its stats():
// a bad argument throws on every rank before any rank posts anything, so no rank is left waiting.
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "tapegrad/distributed.hpp"

namespace tg::distributed::detail {

/// value_error unless 0 <= root < size.
void check_root(const char* what, int root, int size);
/// ts holds one tensor per rank (value_error), each passing check_one and of ref's shape and
/// dtype (shape_error naming role[i]).
void check_per_rank(const char* what, const char* role, const std::vector<Tensor>& ts,
                    const Tensor& ref, int size,
                    const std::function<void(const Tensor&)>& check_one);
/// dtype_error for ReduceOp::Avg on an integer tensor.
void check_op(const char* what, const Tensor& t, ReduceOp op);

/// A group's collectives so far (thread-safe).
struct GroupCounters {
    std::atomic<uint64_t> all_reduces{0}, broadcasts{0}, all_gathers{0}, reduce_scatters{0},
        barriers{0}, all_reduce_bytes{0};
    GroupStats snapshot() const;
};

}  // namespace tg::distributed::detail
