#pragma once
/// Which rows each rank trains on, as PyTorch's DistributedSampler: every epoch the dataset's
/// rows are permuted from a seed all ranks share (and the epoch), and rank r takes rows r,
/// r + n, r + 2n, ... of the permutation (n replicas), so the ranks' shares are disjoint and
/// together cover the dataset. When n does not divide the size, the tail is padded with rows
/// from the start (every rank gets ceil(size / n)), or dropped (floor) with drop_last.
///
///     tg::data::DistributedSampler sampler(train.size(), /*shuffle=*/true);
///     tg::data::DataLoader loader(images, labels, sampler, DataLoaderOptions().batch_size(64));
///     for (auto& batch : loader) ...       // the loader moves the sampler to each epoch
#include <cstdint>
#include <vector>
#pragma GCC visibility push(default)

namespace tg::data {

class DistributedSampler {
public:
    /// num_replicas and rank from tg::distributed (distributed_error before its init()).
    explicit DistributedSampler(int64_t size, bool shuffle = true, uint64_t seed = 0,
                                bool drop_last = false);
    /// Which share to take: of num_replicas, the rank-th.
    struct Replica {
        int num_replicas;
        int rank;
    };
    /// The share `who` names: DistributedSampler(n, {4, 3}) is rank 3 of 4. value_error unless
    /// size >= 0, num_replicas >= 1 and 0 <= rank < num_replicas.
    DistributedSampler(int64_t size, Replica who, bool shuffle = true, uint64_t seed = 0,
                       bool drop_last = false);
    /// Makes indices() those of epoch e (value_error for e < 0).
    void set_epoch(int64_t e);
    /// This rank's rows of the current epoch, in order.
    std::vector<int64_t> indices() const;
    /// Rows per rank and epoch.
    int64_t size() const { return per_rank_; }
    int64_t dataset_size() const { return size_; }
    int64_t num_replicas() const { return replicas_; }
    int64_t rank() const { return rank_; }
    int64_t epoch() const { return epoch_; }
    bool shuffle() const { return shuffle_; }

private:
    int64_t size_, replicas_, rank_;
    bool shuffle_;
    uint64_t seed_;
    bool drop_last_;
    int64_t per_rank_ = 0;
    int64_t epoch_ = 0;
};

}  // namespace tg::data

#pragma GCC visibility pop
