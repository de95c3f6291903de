// nn::DistributedDataParallel: the wrapper a user holds; the reducer (reducer.cpp) runs inside
// backward.
#include <algorithm>
#include <string>
#include <utility>

#include "autograd/hooks.hpp"
#include "distributed/reducer.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

/// The order parameters go into buckets (Note [Gradient buckets]): the modules in reverse, the
/// parameters of one module in registration order (a linear's weight gradient is written before
/// its bias's).
std::vector<size_t> bucket_order(const std::vector<std::string>& names) {
    auto owner = [](const std::string& n) {
        const auto dot = n.rfind('.');
        return dot == std::string::npos ? std::string() : n.substr(0, dot);
    };
    std::vector<size_t> order;
    for (size_t end = names.size(); end > 0;) {
        size_t begin = end - 1;
        while (begin > 0 && owner(names[begin - 1]) == owner(names[end - 1]))
            --begin;
        for (size_t i = begin; i < end; ++i)
            order.push_back(i);
        end = begin;
    }
    return order;
}

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<Module> module,
                                                 DistributedDataParallelOptions options)
    : module_(std::move(module)), state_(std::make_shared<DdpState>()) {
    if (!module_)
        throw value_error("DistributedDataParallel: the module is null");
    if (!(options.bucket_cap_mb() > 0))
        throw value_error("DistributedDataParallel: bucket_cap_mb must be positive, got " +
                          std::to_string(options.bucket_cap_mb()));
    if (!(options.gradient_chunk_mb() >= 0))
        throw value_error("DistributedDataParallel: gradient_chunk_mb must be >= 0, got " +
                          std::to_string(options.gradient_chunk_mb()));
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
    const auto chunk = int64_t(options.gradient_chunk_mb() * 1024 * 1024);
    s.bucket_of.assign(s.params.size(), 0);
    int64_t bytes = 0;
    bool alone = false;  // the last bucket holds one parameter larger than a chunk
    for (size_t j : bucket_order(s.names)) {  // Note [Gradient buckets]
        const Tensor& p = s.params[j];
        const int64_t nb = p.numel() * int64_t(element_size(p.dtype()));
        const bool big = chunk > 0 && nb > chunk;
        bool fresh = s.buckets.empty() || bytes + nb > cap || big || alone;
        if (!fresh) {
            const Tensor& q = s.params[s.buckets.back().params.front()];
            fresh = q.dtype() != p.dtype() || q.device() != p.device();
        }
        if (fresh) {
            s.buckets.emplace_back();
            bytes = 0;
        }
        alone = big;
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
        const int64_t es = int64_t(element_size(first.dtype()));
        if (b.params.size() == 1 && chunk > 0 && first.numel() * es > chunk) {
            // its pieces: the row blocks linear's backward writes (GradTarget::chunk_rows)
            if (first.dim() == 2 && first.size(1) > 0)
                b.piece = GradChunks::block_rows(chunk, first.size(0), first.size(1) * es) *
                          first.size(1);
            else
                b.piece = std::max<int64_t>(1, chunk / es);
        }
    }
    s.ready.assign(s.params.size(), 0);
    s.used.assign(s.params.size(), 1);
    s.chunkable.assign(s.params.size(), 0);
    std::weak_ptr<DdpState> weak = state_;
    for (size_t i = 0; i < s.params.size(); ++i) {
        s.params[i].register_post_accumulate_grad_hook([weak, i](const Tensor&) {
            if (auto st = weak.lock())
                st->on_ready(i);
        });
        const Tensor& p = s.params[i];
        if (chunk > 0 && p.numel() * int64_t(element_size(p.dtype())) > chunk) {
            auto c = std::make_shared<GradChunks>();  // Note [Gradient chunks]
            c->bytes = chunk;
            c->ready = [weak, i](int64_t begin, int64_t end) {
                if (auto st = weak.lock())
                    st->on_chunk(i, begin, end);
            };
            p.impl()->grad_chunks = std::move(c);
        }
    }
    find_unused_ = options.find_unused_parameters();
    broadcast_buffers_ = options.broadcast_buffers();
}

DistributedDataParallel::~DistributedDataParallel() {
    for (const Tensor& p : state_->params)  // its linear layers go back to one dW GEMM
        p.impl()->grad_chunks.reset();
    try {
        state_->recover();
    } catch (...) {  // a destructor does not throw; the collective's error was reported by wait
    }
}

Tensor DistributedDataParallel::forward(const Tensor& x) {
    DdpState& s = *state_;
    s.prepare();
    if (broadcast_buffers_ && s.group->size() > 1) {
        NoGradGuard no_grad;
        std::vector<std::shared_ptr<distributed::Work>> works;
        for (const Tensor& b : module_->buffers())
            works.push_back(s.group->broadcast(b, 0));
        for (auto& w : works)
            w->wait();
    }
    Tensor y = (*module_)(x);
    s.inspect(y, find_unused_);
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
