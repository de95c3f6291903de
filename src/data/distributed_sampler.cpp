// DistributedSampler: each rank's share of an epoch's permutation.
#include "tapegrad/data/distributed_sampler.hpp"

#include <string>

#include "data/order.hpp"
#include "tapegrad/error.hpp"

namespace tg::data {

DistributedSampler::DistributedSampler(int64_t size, Replica who, bool shuffle, uint64_t seed,
                                       bool drop_last)
    : size_(size),
      replicas_(who.num_replicas),
      rank_(who.rank),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
    if (size_ < 0 || replicas_ < 1 || rank_ < 0 || rank_ >= replicas_)
        throw value_error("DistributedSampler: size " + std::to_string(size_) + ", num_replicas " +
                          std::to_string(replicas_) + ", rank " + std::to_string(rank_) +
                          ": needs size >= 0, num_replicas >= 1 and 0 <= rank < num_replicas");
    per_rank_ = drop_last_ ? size_ / replicas_ : (size_ + replicas_ - 1) / replicas_;
}

void DistributedSampler::set_epoch(int64_t e) {
    if (e < 0)
        throw value_error("DistributedSampler::set_epoch: negative epoch " + std::to_string(e));
    epoch_ = e;
}

std::vector<int64_t> DistributedSampler::indices() const {
    std::vector<int64_t> order = detail::epoch_order(size_, shuffle_, seed_, epoch_);
    const int64_t total = per_rank_ * replicas_;
    for (int64_t i = int64_t(order.size()); i < total; ++i)  // pad from the start
        order.push_back(order[size_t(i % size_)]);
    std::vector<int64_t> mine;
    mine.reserve(size_t(per_rank_));
    for (int64_t i = rank_; i < total; i += replicas_)
        mine.push_back(order[size_t(i)]);
    return mine;
}

}  // namespace tg::data
