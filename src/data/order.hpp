#pragma once
// The row order of an epoch, shared by DataLoader and DistributedSampler.
#include <cstdint>
#include <vector>

namespace tg::data::detail {

/// 0..n-1, or (shuffle) a permutation of them that depends only on (seed, epoch), the same with
/// every standard library.
std::vector<int64_t> epoch_order(int64_t n, bool shuffle, uint64_t seed, int64_t epoch);

}  // namespace tg::data::detail
