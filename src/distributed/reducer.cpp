// nn::DistributedDataParallel's reducer: gradients averaged over the ranks in buckets, while
// backward runs.
#include "distributed/reducer.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "autograd/hooks.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

// Note [Gradient buckets]: the parameters are cut, module by module in reverse registration
// order (the order backward tends to finish them in; within a module in registration order: a
// linear writes its weight's gradient before its bias's), into buckets of about bucket_cap_mb,
// each with one flat buffer; a parameter larger than gradient_chunk_mb has a bucket of its own. A
// post-accumulate hook on every parameter (Note [Post-accumulate hooks] in src/autograd/graph.cpp)
// tells the DDP when backward has finished a parameter's gradient; when a bucket's last parameter
// is done, its gradients are copied into the flat buffer and one all-reduce of it is posted to the
// communication thread (Note [One communication thread] in distributed/comm_thread.hpp), which runs
// it while backward goes on with earlier layers. Buckets are launched strictly in bucket order, so
// every rank posts the same collectives in the same order even if its parameters finish in another.
// When the outermost backward pass ends (autograd::queue_callback) the remaining buckets are
// launched (parameters that got no gradient on this rank contribute zeros), every all-reduce is
// waited for, the sums are divided by the world size and each parameter's .grad() becomes a view of
// its bucket: the next backward accumulates straight into the buffer, and the next launch copies
// nothing. A gradient computed by a recomputed checkpoint segment arrives once, like any other, so
// checkpointing launches no bucket twice; a parameter that received a gradient after its bucket was
// launched would make the averages wrong, and throws.
//
// A large parameter whose gradient is backward's last work (the first layer's weight) would
// leave its bucket's all-reduce exposed after backward. When the last forward's graph uses such
// a parameter once, in a linear, and it is alone in its bucket, its gradient is computed in row
// blocks of about gradient_chunk_mb, each all-reduced as soon as it is written (Note [Gradient
// chunks] in src/autograd/hooks.hpp), the rest when its hook fires. Such a bucket is always
// all-reduced in the same pieces (whole rows of about gradient_chunk_mb), whether they come
// early or at launch, so every rank posts the same collectives even where the ranks' graphs use
// the parameter differently. Before a forward, gradients
// that are undefined (zero_grad's set_to_none) become zeroed views of their buckets, so that
// backward adds into the buckets in place and the chunks are the bucket's own memory.
namespace {
double steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

void DdpState::on_ready(size_t i) {
    if (!sync)
        return;
    if (!armed)
        arm();
    if (ready[i]) {
        if (buckets[bucket_of[i]].launched)
            throw distributed_error(
                "DistributedDataParallel: parameter '" + names[i] +
                "' received a gradient after its bucket was all-reduced in this backward pass "
                "(it is used both inside and outside a recomputed checkpoint, or by a second "
                "backward inside the first)");
        return;
    }
    mark(i);
}

void DdpState::on_chunk(size_t i, int64_t begin, int64_t end) {
    if (!sync || !chunkable[i])
        return;
    if (!armed)
        arm();
    const size_t bi = bucket_of[i];
    Bucket& b = buckets[bi];
    // only the bucket launched next, cut in pieces, the next piece exactly, in its own memory
    if (bi != next || b.piece == 0 || b.launched || begin != b.chunked_upto ||
        end - begin != std::min(b.piece, b.flat.numel() - begin))
        return;
    const Tensor g = params[i].grad();
    if (!g.defined() || g.impl()->storage != b.flat.impl()->storage || g.storage_offset() != 0)
        return;
    if (b.chunked_upto == 0)
        b.ready_at = steady_seconds();
    b.works.push_back(group->all_reduce(b.flat.narrow(0, begin, end - begin)));
    b.chunked_upto = end;
    ++stats.chunk_all_reduces;
    ++stats.all_reduces;
}

void DdpState::prepare() {
    recover();
    if (!GradMode::is_enabled())  // an evaluation: no backward will follow
        return;
    NoGradGuard no_grad;
    for (Bucket& b : buckets)
        for (size_t k = 0; k < b.params.size(); ++k) {
            const Tensor& p = params[b.params[k]];
            if (p.grad().defined())
                continue;
            Tensor view = b.flat.narrow(0, b.offsets[k], p.numel()).view(p.sizes());
            view.zero_();
            p.set_grad(view);
        }
}

void DdpState::inspect(const Tensor& y, bool find_unused) {
    std::fill(chunkable.begin(), chunkable.end(), 0);
    have_used = false;
    if (!y.defined() || !y.grad_fn())
        return;
    std::unordered_map<const Node*, size_t> param_of;
    for (size_t i = 0; i < params.size(); ++i)
        if (auto acc = params[i].impl()->grad_accumulator.lock())
            param_of[acc.get()] = i;
    std::vector<int> uses(params.size(), 0);
    std::vector<char> by_linear(params.size(), 0);
    std::unordered_set<const Node*> seen{y.grad_fn().get()};
    std::vector<const Node*> stack{y.grad_fn().get()};
    while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        for (const Node::Edge& e : n->next_functions()) {
            if (!e.fn)
                continue;
            auto it = param_of.find(e.fn.get());
            if (it != param_of.end()) {
                ++uses[it->second];
                by_linear[it->second] = std::string(n->op()) == "linear";
            }
            if (seen.insert(e.fn.get()).second)
                stack.push_back(e.fn.get());
        }
    }
    for (size_t i = 0; i < params.size(); ++i) {
        chunkable[i] = uses[i] == 1 && by_linear[i];
        used[i] = uses[i] > 0;
    }
    have_used = find_unused;
}

void DdpState::arm() {
    armed = true;
    next = 0;
    std::fill(ready.begin(), ready.end(), 0);
    for (Bucket& b : buckets) {
        b.pending = b.params.size();
        b.launched = false;
        b.chunked_upto = 0;
        b.ready_at = 0;
        b.works.clear();
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

void DdpState::mark(size_t i) {
    ready[i] = 1;
    if (--buckets[bucket_of[i]].pending == 0)
        while (next < buckets.size() && buckets[next].pending == 0)
            launch(buckets[next++]);
}

void DdpState::launch(Bucket& b) {
    NoGradGuard no_grad;
    for (size_t k = 0; k < b.params.size(); ++k) {
        const Tensor& p = params[b.params[k]];
        Tensor view = b.flat.narrow(0, b.offsets[k], p.numel()).view(p.sizes());
        Tensor g = p.grad();
        if (!g.defined())
            view.zero_();
        else if (g.impl()->storage != b.flat.impl()->storage || g.storage_offset() != b.offsets[k])
            view.copy_(g);
        p.set_grad(view);
    }
    if (b.chunked_upto == 0)
        b.ready_at = steady_seconds();
    // the rest: the pieces not sent yet (Note [Gradient buckets]: the same on every rank), or
    // the whole bucket
    const int64_t n = b.flat.numel(), piece = b.piece > 0 ? b.piece : n;
    for (int64_t at = b.chunked_upto; at < n; at += piece) {
        const int64_t len = std::min(piece, n - at);
        b.works.push_back(group->all_reduce(len == n ? b.flat : b.flat.narrow(0, at, len)));
        ++stats.all_reduces;
    }
    b.launched = true;
    ++stats.bucket_launches;
}

void DdpState::finish() {
    if (!armed)
        return;
    SyncTiming timing;
    timing.backward_end = steady_seconds();
    while (next < buckets.size())
        launch(buckets[next++]);
    wait_all();
    stats.exposed_seconds += steady_seconds() - timing.backward_end;
    NoGradGuard no_grad;
    for (Bucket& b : buckets) {
        b.flat.div_(double(group->size()));
        BucketTiming t;
        t.ready = b.ready_at;
        t.bytes = uint64_t(b.flat.numel()) * element_size(b.flat.dtype());
        for (const auto& w : b.works) {
            t.started = t.started == 0 ? w->started_at() : std::min(t.started, w->started_at());
            t.ended = std::max(t.ended, w->ended_at());
            t.pieces.emplace_back(w->started_at(), w->ended_at());
            stats.all_reduce_seconds += w->ended_at() - w->started_at();
            stats.hidden_seconds +=
                std::max(0.0, std::min(w->ended_at(), timing.backward_end) - w->started_at());
        }
        stats.bytes += t.bytes;
        timing.buckets.push_back(t);
        b.works.clear();
    }
    armed = false;
    have_used = false;
    std::fill(chunkable.begin(), chunkable.end(), 0);
    ++stats.syncs;
    stats.last = std::move(timing);
}

void DdpState::wait_all() {
    for (Bucket& b : buckets)
        for (const auto& w : b.works)
            w->wait();
}

void DdpState::recover() {
    if (!armed)
        return;
    armed = false;
    std::vector<std::shared_ptr<distributed::Work>> works;
    for (Bucket& b : buckets) {
        works.insert(works.end(), b.works.begin(), b.works.end());
        b.works.clear();
    }
    for (const auto& w : works)
        w->wait();
}

/// Every rank's "name shape dtype" lines; distributed_error naming the first parameter that
/// differs from rank 0's, and the ranks.
void check_same_parameters(distributed::ProcessGroup& g, const std::vector<std::string>& lines,
                           const char* who) {
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
            std::string msg = std::string(who) + ": the ranks' parameters differ: ";
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

}  // namespace tg::nn
