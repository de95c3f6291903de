#pragma once
// The part of nn::DistributedDataParallel that runs inside backward: buckets, readiness, launches
// and the end-of-pass averaging (Note [Gradient buckets] in reducer.cpp).
#include <memory>
#include <string>
#include <vector>

#include "tapegrad/nn/distributed_data_parallel.hpp"

namespace tg::nn {

struct Bucket {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;  // in elements of flat
    Tensor flat;
    size_t pending = 0;        // parameters not ready yet in this pass
    bool launched = false;     // the whole bucket (or its rest after chunks) was launched
    int64_t chunked_upto = 0;  // elements of flat launched as chunks (Note [Gradient chunks])
    int64_t piece = 0;         // elements per all-reduce of a bucket cut in pieces (0: one for all)
    double ready_at = 0;
    std::vector<std::shared_ptr<distributed::Work>> works;
};

struct DdpState : std::enable_shared_from_this<DdpState> {
    std::shared_ptr<distributed::ProcessGroup> group;
    std::vector<std::string> names;
    std::vector<Tensor> params;
    std::vector<size_t> bucket_of;
    std::vector<Bucket> buckets;
    std::vector<char> ready;
    std::vector<char> used;       // find_unused_parameters: reached by the last forward
    std::vector<char> chunkable;  // the last forward's graph uses it once, in a linear
    bool have_used = false;
    bool sync = true;    // false inside no_sync()
    bool armed = false;  // a pass is under way: hooks have fired, finish() is queued
    size_t next = 0;     // the next bucket to launch
    DistributedDataParallelStats stats;

    /// Post-accumulate hook of parameter i.
    void on_ready(size_t i);
    /// Gradient-chunk hook of parameter i: elements [begin, end) of its gradient are final.
    void on_chunk(size_t i, int64_t begin, int64_t end);
    /// Before a forward: a pass that threw is cleaned up, undefined gradients become zeroed
    /// views of their buckets (so backward adds into them in place).
    void prepare();
    /// After a forward: what its graph says about each parameter (used, chunkable).
    void inspect(const Tensor& output, bool find_unused);
    /// A backward that threw left buckets launched: let them finish before anything else.
    void recover();

private:
    void arm();
    void mark(size_t i);
    void launch(Bucket& b);
    void finish();
    void wait_all();
};

/// The order parameters go into buckets (Note [Gradient buckets]): the modules in reverse, the
/// parameters of one module in registration order. DDP's and FullyShardedDataParallel's.
std::vector<size_t> bucket_order(const std::vector<std::string>& names);

/// Every rank's "name shape dtype" lines; distributed_error naming the first parameter that
/// differs from rank 0's, and the ranks.
void check_same_parameters(distributed::ProcessGroup& g, const std::vector<std::string>& lines,
                           const char* who = "DistributedDataParallel");

}  // namespace tg::nn
