// DistributedSampler's constructor that asks tg::distributed for the ranks.
#include "tapegrad/data/distributed_sampler.hpp"
#include "tapegrad/distributed.hpp"

namespace tg::data {

DistributedSampler::DistributedSampler(int64_t size, bool shuffle, uint64_t seed, bool drop_last)
    : DistributedSampler(size, Replica{distributed::world_size(), distributed::rank()}, shuffle,
                         seed, drop_last) {}

}  // namespace tg::data
