#pragma once
/// Data-parallel training: every rank holds the whole model, runs it on its share of the batch,
/// and backward averages the gradients over the ranks (PyTorch's DistributedDataParallel).
///
///     tg::distributed::init(&argc, &argv);
///     auto model = tg::nn::Sequential(...);
///     tg::nn::DistributedDataParallel ddp(model);   // every rank starts from rank 0's weights
///     tg::optim::SGD opt(model->parameters(), 0.1);
///     for (...) {
///         {
///             auto no_sync = ddp.no_sync();          // accumulate locally...
///             for (k - 1 micro-batches) loss(ddp(x), y).backward();
///         }
///         loss(ddp(x_last), y_last).backward();      // ...and all-reduce once, here
///         opt.step();
///         opt.zero_grad();
///     }
///
/// Note [Gradient buckets] in src/distributed/ddp.cpp says how backward and communication
/// overlap.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/distributed.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// Options with chained setters. Defaults: buckets of 25 MiB, gradient chunks of 2 MiB, no
/// search for unused parameters,
/// buffers broadcast from rank 0 at every forward, the default process group.
class DistributedDataParallelOptions {
public:
    /// Gradient bytes per all-reduce (MiB, > 0): smaller buckets start communicating earlier.
    DistributedDataParallelOptions& bucket_cap_mb(double mb) {
        bucket_cap_mb_ = mb;
        return *this;
    }
    /// Find, at each forward, the parameters its output does not depend on, so their buckets
    /// need not wait for the end of backward. Without it the result is the same: such
    /// parameters are all-reduced (as zeros from this rank) when backward ends.
    DistributedDataParallelOptions& find_unused_parameters(bool on) {
        find_unused_parameters_ = on;
        return *this;
    }
    /// Row blocks (MiB; 0: off) in which a large parameter's gradient is all-reduced as
    /// backward writes it, when the forward's graph uses the parameter once, in a linear layer,
    /// and it is alone in its bucket: the first layer's weight, whose gradient is backward's last
    /// work, then overlaps backward instead of waiting for its end.
    DistributedDataParallelOptions& gradient_chunk_mb(double mb) {
        gradient_chunk_mb_ = mb;
        return *this;
    }
    /// Copy rank 0's buffers (BatchNorm statistics) to every rank before each forward.
    DistributedDataParallelOptions& broadcast_buffers(bool on) {
        broadcast_buffers_ = on;
        return *this;
    }
    /// The ranks to average over (default: tg::distributed::default_group()).
    DistributedDataParallelOptions& process_group(std::shared_ptr<distributed::ProcessGroup> g) {
        group_ = std::move(g);
        return *this;
    }
    double bucket_cap_mb() const { return bucket_cap_mb_; }
    double gradient_chunk_mb() const { return gradient_chunk_mb_; }
    bool find_unused_parameters() const { return find_unused_parameters_; }
    bool broadcast_buffers() const { return broadcast_buffers_; }
    const std::shared_ptr<distributed::ProcessGroup>& process_group() const { return group_; }

private:
    double bucket_cap_mb_ = 25;
    double gradient_chunk_mb_ = 2;
    bool find_unused_parameters_ = false;
    bool broadcast_buffers_ = true;
    std::shared_ptr<distributed::ProcessGroup> group_;
};

/// One bucket's all-reduce in a sync, in seconds of std::chrono::steady_clock: when its last
/// gradient was ready (or backward ended), when the all-reduce started and ended, its bytes.
struct BucketTiming {
    double ready = 0, started = 0, ended = 0;
    uint64_t bytes = 0;
    /// Each all-reduce of the bucket (its chunks, then the rest): when it started and ended.
    std::vector<std::pair<double, double>> pieces;
};

/// One sync: when backward's last node finished, and its buckets in launch order.
struct SyncTiming {
    double backward_end = 0;
    std::vector<BucketTiming> buckets;
};

/// What a DistributedDataParallel has communicated since it was made.
struct DistributedDataParallelStats {
    uint64_t syncs = 0;              // backward passes whose gradients were averaged
    uint64_t bucket_launches = 0;    // buckets launched (one per bucket per sync)
    uint64_t chunk_all_reduces = 0;  // gradient chunks all-reduced before their bucket
    uint64_t all_reduces = 0;        // every all-reduce posted: one per bucket, or its pieces
    uint64_t bytes = 0;              // gradient bytes all-reduced
    double all_reduce_seconds = 0;   // the all-reduces' durations, summed
    /// The part of all_reduce_seconds before backward's end: communication hidden behind it.
    double hidden_seconds = 0;
    /// Seconds backward's end waited for the all-reduces to finish, summed over syncs.
    double exposed_seconds = 0;
    SyncTiming last;  // the latest sync
};

class DistributedDataParallel {
public:
    /// Wraps module: checks that every rank has the same parameters (names, shapes, dtypes;
    /// distributed_error naming the first that differs and the ranks), copies rank 0's
    /// parameters and buffers to every rank, and registers the hooks that all-reduce gradients.
    /// Collective: every rank must construct it. value_error for a null module or a bucket size
    /// that is not positive.
    explicit DistributedDataParallel(std::shared_ptr<Module> module,
                                     DistributedDataParallelOptions options = {});
    template <class Impl>
    explicit DistributedDataParallel(const ModuleHolder<Impl>& module,
                                     DistributedDataParallelOptions options = {})
        : DistributedDataParallel(std::static_pointer_cast<Module>(module.ptr()),
                                  std::move(options)) {}
    ~DistributedDataParallel();
    DistributedDataParallel(const DistributedDataParallel&) = delete;
    DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

    /// The module's forward (buffers broadcast first, if set). With grad mode on, undefined
    /// gradients become zeroed views of their buckets first, so backward adds into the buckets
    /// in place.
    Tensor forward(const Tensor& x);
    Tensor operator()(const Tensor& x) { return forward(x); }

    /// While it lives, backward only accumulates gradients locally (no communication); the
    /// first backward after it averages everything accumulated.
    class NoSync {
    public:
        ~NoSync();
        NoSync(NoSync&& o) noexcept;
        NoSync(const NoSync&) = delete;
        NoSync& operator=(const NoSync&) = delete;
        NoSync& operator=(NoSync&&) = delete;

    private:
        friend class DistributedDataParallel;
        explicit NoSync(std::shared_ptr<struct DdpState> s);
        std::shared_ptr<struct DdpState> state_;
        bool prev_ = true;
    };
    NoSync no_sync();

    const std::shared_ptr<Module>& module() const { return module_; }
    /// The parameter names of each bucket, in the order buckets are all-reduced.
    std::vector<std::vector<std::string>> buckets() const;
    DistributedDataParallelStats stats() const;

private:
    std::shared_ptr<Module> module_;
    std::shared_ptr<struct DdpState> state_;
    bool find_unused_ = false;
    bool broadcast_buffers_ = true;
};

}  // namespace tg::nn

#pragma GCC visibility pop
