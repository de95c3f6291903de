// nn::DistributedDataParallel: gradients averaged over the ranks in buckets, while backward runs.
#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_set>
#include <utility>

#include "tapegrad/autograd.hpp"
#include "tapegrad/nn/distributed_data_parallel.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

// Note [Gradient buckets]: the parameters are cut, in reverse registration order (the order
// backward tends to finish them in), into buckets of about bucket_cap_mb, each with one flat
// buffer. A post-accumulate hook on every parameter (Note [Post-accumulate hooks] in
// src/autograd/graph.cpp) tells the DDP when backward has finished a parameter's gradient;
// when a bucket's last parameter is done, its gradients are copied into the flat buffer and
// one all-reduce of it is posted to the communication thread (Note [One communication thread]
// in distributed/comm_thread.hpp), which runs it while backward goes on with earlier layers.
// Buckets are launched strictly in bucket order, so every rank posts the same collectives in the
// same order even if its parameters finish in another. When the outermost backward pass ends
// (autograd::queue_callback) the remaining buckets are launched (parameters that got no
// gradient on this rank contribute zeros), every all-reduce is waited for, the sums are divided
// by the world size and each parameter's .grad() becomes a view of its bucket: the next backward
// accumulates straight into the buffer, and the next launch copies nothing. A gradient computed
// by a recomputed checkpoint segment arrives once, like any other, so checkpointing launches no
// bucket twice; a parameter that received a gradient after its bucket was launched would make
// the averages wrong, and throws.
using Clock = std::chrono::steady_clock;

struct Bucket {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;  // in elements of flat
    Tensor flat;
    size_t pending = 0;
    bool launched = false;
    double ready_at = 0;
    std::shared_ptr<distributed::Work> work;
};

double steady_seconds() {
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

struct DdpState : std::enable_shared_from_this<DdpState> {
    std::shared_ptr<distributed::ProcessGroup> group;
    std::vector<std::string> names;
    std::vector<Tensor> params;
    std::vector<size_t> bucket_of;
    std::vector<char> ready, used;
    bool have_used = false;
    std::vector<Bucket> buckets;
    bool sync = true;
    bool armed = false;
    size_t next = 0;
    DistributedDataParallelStats stats;

    void on_ready(size_t i) {
        if (!sync)
            return;
        if (!armed)
            arm();
        if (ready[i]) {
            if (buckets[bucket_of[i]].launched)
                throw distributed_error(
                    "DistributedDataParallel: parameter '" + names[i] +
                    "' received a gradient after its bucket was all-reduced in this backward "
                    "pass (it is used both inside and outside a recomputed checkpoint, or by a "
                    "second backward inside the first)");
            return;
        }
        mark(i);
    }
    void arm() {
        armed = true;
        next = 0;
        std::fill(ready.begin(), ready.end(), 0);
        for (Bucket& b : buckets) {
            b.pending = b.params.size();
            b.launched = false;
            b.work.reset();
        }
        std::weak_ptr<DdpState> weak = shared_from_this();
        autograd::queue_callback([weak] {
            if (auto s = weak.lock())
                s->finish();
        });
        if (have_used)  // find_unused_parameters: the forward's output does not reach these
            for (size_t i = 0; i < params.size(); ++i)
                if (!used[i])
                    mark(i);
    }
    void mark(size_t i) {
        ready[i] = 1;
        if (--buckets[bucket_of[i]].pending == 0)
            while (next < buckets.size() && buckets[next].pending == 0)
                launch(buckets[next++]);
    }
    void launch(Bucket& b) {
        NoGradGuard no_grad;
        for (size_t k = 0; k < b.params.size(); ++k) {
            const Tensor& p = params[b.params[k]];
            Tensor view = b.flat.narrow(0, b.offsets[k], p.numel()).view(p.sizes());
            Tensor g = p.grad();
            if (!g.defined())
                view.zero_();
            else if (g.impl()->storage != b.flat.impl()->storage ||
                     g.storage_offset() != b.offsets[k])
                view.copy_(g);
            p.set_grad(view);
        }
        b.ready_at = steady_seconds();
        b.work = group->all_reduce(b.flat);
        b.launched = true;
        ++stats.bucket_launches;
        stats.bytes += uint64_t(b.flat.numel()) * element_size(b.flat.dtype());
    }
    void finish() {
        if (!armed)
            return;
        SyncTiming timing;
        timing.backward_end = steady_seconds();
        while (next < buckets.size())
            launch(buckets[next++]);
        std::vector<std::shared_ptr<distributed::Work>> works;
        for (Bucket& b : buckets)
            works.push_back(b.work);
        wait_all();
        stats.exposed_seconds += steady_seconds() - timing.backward_end;
        NoGradGuard no_grad;
        for (size_t k = 0; k < buckets.size(); ++k) {
            Bucket& b = buckets[k];
            b.flat.div_(double(group->size()));
            const BucketTiming t{b.ready_at, works[k]->started_at(), works[k]->ended_at(),
                                 uint64_t(b.flat.numel()) * element_size(b.flat.dtype())};
            stats.all_reduce_seconds += t.ended - t.started;
            stats.hidden_seconds +=
                std::max(0.0, std::min(t.ended, timing.backward_end) - t.started);
            timing.buckets.push_back(t);
        }
        armed = false;
        ++stats.syncs;
        stats.last = std::move(timing);
    }
    void wait_all() {
        for (Bucket& b : buckets)
            if (b.work) {
                auto w = std::move(b.work);
                w->wait();
            }
    }
    /// A backward that threw left buckets launched: let them finish before anything else.
    void recover() {
        if (!armed)
            return;
        armed = false;
        wait_all();
    }
};

namespace {

/// Every rank's "name shape dtype" lines; distributed_error naming the first parameter that
/// differs from rank 0's, and the ranks.
void check_same_parameters(distributed::ProcessGroup& g, const std::vector<std::string>& lines) {
    std::string sig;
    for (const std::string& l : lines)
        sig += l + "\n";
    const int world = g.size();
    Tensor len = tg::tensor(std::vector<int64_t>{int64_t(sig.size())});
    std::vector<Tensor> lens;
    for (int r = 0; r < world; ++r)
        lens.push_back(tg::zeros({1}, kInt64));
    g.all_gather(lens, len)->wait();
    int64_t longest = 0;
    for (const Tensor& l : lens)
        longest = std::max(longest, l.item<int64_t>());
    std::vector<int64_t> codes(size_t(longest), 0);
    for (size_t i = 0; i < sig.size(); ++i)
        codes[i] = static_cast<unsigned char>(sig[i]);
    std::vector<Tensor> all;
    for (int r = 0; r < world; ++r)
        all.push_back(tg::zeros({longest}, kInt64));
    g.all_gather(all, tg::tensor(codes))->wait();
    std::vector<std::vector<std::string>> per_rank(static_cast<size_t>(world));
    for (int r = 0; r < world; ++r) {
        std::string s;
        for (int64_t c : all[size_t(r)].to_vector<int64_t>())
            if (c != 0)
                s += char(c);
        size_t start = 0;
        for (size_t e = s.find('\n'); e != std::string::npos; e = s.find('\n', start)) {
            per_rank[size_t(r)].push_back(s.substr(start, e - start));
            start = e + 1;
        }
    }
    const auto& ref = per_rank[0];
    for (size_t k = 0;; ++k) {
        for (int r = 1; r < world; ++r) {
            const auto& mine = per_rank[size_t(r)];
            if (k < ref.size() && k < mine.size() && ref[k] == mine[k])
                continue;
            if (k >= ref.size() && k >= mine.size())
                continue;
            std::string msg = "DistributedDataParallel: the ranks' parameters differ: ";
            if (k >= ref.size() || k >= mine.size())
                msg += "rank 0 has " + std::to_string(ref.size()) + " parameters, rank " +
                       std::to_string(r) + " has " + std::to_string(mine.size());
            else
                msg += "parameter " + std::to_string(k) + " is '" + ref[k] + "' on rank 0 but '" +
                       mine[k] + "' on rank " + std::to_string(r);
            throw distributed_error(msg);
        }
        if (k >= ref.size())
            return;
    }
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<Module> module,
                                                 DistributedDataParallelOptions options)
    : module_(std::move(module)), state_(std::make_shared<DdpState>()) {
    if (!module_)
        throw value_error("DistributedDataParallel: the module is null");
    if (!(options.bucket_cap_mb() > 0))
        throw value_error("DistributedDataParallel: bucket_cap_mb must be positive, got " +
                          std::to_string(options.bucket_cap_mb()));
    DdpState& s = *state_;
    s.group = options.process_group() ? options.process_group() : distributed::default_group();
    std::vector<std::string> lines;
    for (auto& [name, p] : module_->named_parameters()) {
        lines.push_back(name + " " + shape_str(p.sizes()) + " " + dtype_name(p.dtype()));
        if (!p.requires_grad())
            continue;
        s.names.push_back(name);
        s.params.push_back(p);
    }
    check_same_parameters(*s.group, lines);
    {  // every rank starts from rank 0's parameters and buffers
        NoGradGuard no_grad;
        std::vector<std::shared_ptr<distributed::Work>> works;
        for (const Tensor& p : module_->parameters())
            works.push_back(s.group->broadcast(p, 0));
        for (const Tensor& b : module_->buffers())
            works.push_back(s.group->broadcast(b, 0));
        for (auto& w : works)
            w->wait();
    }
    const int64_t cap = std::max<int64_t>(1, int64_t(options.bucket_cap_mb() * 1024 * 1024));
    s.bucket_of.assign(s.params.size(), 0);
    int64_t bytes = 0;
    for (size_t j = s.params.size(); j-- > 0;) {  // Note [Gradient buckets]: reverse order
        const Tensor& p = s.params[j];
        const int64_t nb = p.numel() * int64_t(element_size(p.dtype()));
        bool fresh = s.buckets.empty() || bytes + nb > cap;
        if (!fresh) {
            const Tensor& q = s.params[s.buckets.back().params.front()];
            fresh = q.dtype() != p.dtype() || q.device() != p.device();
        }
        if (fresh) {
            s.buckets.emplace_back();
            bytes = 0;
        }
        Bucket& b = s.buckets.back();
        b.offsets.push_back(
            b.params.empty() ? 0 : b.offsets.back() + s.params[b.params.back()].numel());
        b.params.push_back(j);
        s.bucket_of[j] = s.buckets.size() - 1;
        bytes += nb;
    }
    for (Bucket& b : s.buckets) {
        const Tensor& last = s.params[b.params.back()];
        const Tensor& first = s.params[b.params.front()];
        b.flat = tg::zeros({b.offsets.back() + last.numel()},
                           TensorOptions(first.dtype()).device(first.device()));
    }
    s.ready.assign(s.params.size(), 0);
    s.used.assign(s.params.size(), 1);
    s.have_used = false;
    std::weak_ptr<DdpState> weak = state_;
    for (size_t i = 0; i < s.params.size(); ++i)
        s.params[i].register_post_accumulate_grad_hook([weak, i](const Tensor&) {
            if (auto st = weak.lock())
                st->on_ready(i);
        });
    find_unused_ = options.find_unused_parameters();
    broadcast_buffers_ = options.broadcast_buffers();
}

DistributedDataParallel::~DistributedDataParallel() {
    try {
        state_->recover();
    } catch (...) {  // a destructor does not throw; the collective's error was reported by wait
    }
}

Tensor DistributedDataParallel::forward(const Tensor& x) {
    DdpState& s = *state_;
    s.recover();
    if (broadcast_buffers_ && s.group->size() > 1) {
        NoGradGuard no_grad;
        std::vector<std::shared_ptr<distributed::Work>> works;
        for (const Tensor& b : module_->buffers())
            works.push_back(s.group->broadcast(b, 0));
        for (auto& w : works)
            w->wait();
    }
    Tensor y = (*module_)(x);
    s.have_used = false;
    if (find_unused_ && y.grad_fn()) {  // the leaves' accumulators y's graph reaches
        std::unordered_set<const Node*> seen{y.grad_fn().get()};
        std::vector<const Node*> stack{y.grad_fn().get()};
        while (!stack.empty()) {
            const Node* n = stack.back();
            stack.pop_back();
            for (const Node::Edge& e : n->next_functions())
                if (e.fn && seen.insert(e.fn.get()).second)
                    stack.push_back(e.fn.get());
        }
        for (size_t i = 0; i < s.params.size(); ++i) {
            auto acc = s.params[i].impl()->grad_accumulator.lock();
            s.used[i] = acc && seen.count(acc.get());
        }
        s.have_used = true;
    }
    return y;
}

DistributedDataParallel::NoSync::NoSync(std::shared_ptr<DdpState> s) : state_(std::move(s)) {
    prev_ = state_->sync;
    state_->sync = false;
}
DistributedDataParallel::NoSync::NoSync(NoSync&& o) noexcept
    : state_(std::move(o.state_)), prev_(o.prev_) {}
DistributedDataParallel::NoSync::~NoSync() {
    if (state_)
        state_->sync = prev_;
}

DistributedDataParallel::NoSync DistributedDataParallel::no_sync() {
    return NoSync(state_);
}

std::vector<std::vector<std::string>> DistributedDataParallel::buckets() const {
    std::vector<std::vector<std::string>> out;
    for (const Bucket& b : state_->buckets) {
        out.emplace_back();
        for (size_t i : b.params)
            out.back().push_back(state_->names[i]);
    }
    return out;
}

DistributedDataParallelStats DistributedDataParallel::stats() const {
    return state_->stats;
}

}  // namespace tg::nn
