// nn::FullyShardedDataParallel: the wrapper a user holds (ZeRO stages 1 and 2); what runs inside
// forward and backward is in fsdp_state.cpp.
#include "distributed/fsdp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "distributed/reducer.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/nn/sequential.hpp"
#include "tapegrad/nn/utils.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

FullyShardedDataParallel::FullyShardedDataParallel(std::shared_ptr<Module> module,
                                                   ShardingOptions options)
    : module_(std::move(module)), state_(std::make_shared<FsdpState>()) {
    if (!module_)
        throw value_error("FullyShardedDataParallel: the module is null");
    if (!(options.bucket_cap_mb() > 0))
        throw value_error("FullyShardedDataParallel: bucket_cap_mb must be positive, got " +
                          std::to_string(options.bucket_cap_mb()));
    if (options.stage() < 1 || options.stage() > 3)
        throw value_error("FullyShardedDataParallel: stage " + std::to_string(options.stage()) +
                          " is not supported (1: optimizer state sharded, 2: gradients too, 3: "
                          "parameters too)");
    FsdpState& s = *state_;
    s.stage = options.stage();
    s.broadcast_buffers = options.broadcast_buffers();
    s.checkpoint = options.checkpoint();
    s.group = options.process_group() ? options.process_group() : distributed::default_group();
    std::vector<std::string> lines;
    std::unordered_set<const TensorImpl*> seen;  // a tied parameter goes into its unit once
    for (auto& [name, p] : module_->named_parameters()) {
        lines.push_back(name + " " + shape_str(p.sizes()) + " " + dtype_name(p.dtype()));
        if (!p.requires_grad() || !seen.insert(p.impl()).second)
            continue;
        s.names.push_back(name);
        s.params.push_back(p);
    }
    check_same_parameters(*s.group, lines, "FullyShardedDataParallel");
    NoGradGuard no_grad;
    {  // every rank starts from rank 0's parameters and buffers
        std::vector<std::shared_ptr<distributed::Work>> works;
        for (const Tensor& p : module_->parameters())
            works.push_back(s.group->broadcast(p, 0));
        for (const Tensor& b : module_->buffers())
            works.push_back(s.group->broadcast(b, 0));
        for (auto& w : works)
            w->wait();
    }
    s.steps = unit_steps(module_, options.wrap_policy(),
                         s.stage == 3 && !s.checkpoint ? &s.called : nullptr);
    if (s.stage < 3) {
        s.build(std::max<int64_t>(1, int64_t(options.bucket_cap_mb() * 1024 * 1024)),
                {bucket_order(s.names)});
        s.child_units = step_units(s);
    } else {  // Note [Sharded parameters, stage 3]: the children's units, built last child first
        const UnitGroups g = unit_groups(s.steps, s.called, s);
        auto built =
            s.build(std::numeric_limits<int64_t>::max(), {g.groups.rbegin(), g.groups.rend()});
        s.unit_order.assign(built.rbegin(), built.rend());
        s.child_units.resize(s.steps.size());
        s.called_units.resize(s.called.size());
        for (size_t i = 0; i < g.slot.size(); ++i)
            (g.slot[i].first ? s.called_units : s.child_units)[g.slot[i].second] = s.unit_order[i];
        install_call_hooks(s);
    }
    std::weak_ptr<FsdpState> weak = state_;
    for (size_t i = 0; i < s.params.size(); ++i)
        s.params[i].register_post_accumulate_grad_hook([weak, i](const Tensor&) {
            if (auto st = weak.lock())
                st->on_ready(i);
        });
}

FullyShardedDataParallel::~FullyShardedDataParallel() {
    for (const UnitStep& c : state_->called)
        module_detail::set_call_hooks(*c.module, nullptr);
    try {
        state_->recover();
    } catch (...) {  // a destructor does not throw; the collective's error was reported by wait
    }
}

Tensor FullyShardedDataParallel::forward(const Tensor& x) {
    FsdpState& s = *state_;
    s.stats.last.clear();
    s.prepare();
    if (s.broadcast_buffers && s.group->size() > 1 && !module_->buffers().empty()) {
        NoGradGuard no_grad;
        std::vector<std::shared_ptr<distributed::Work>> works;
        for (const Tensor& b : module_->buffers())
            works.push_back(s.group->broadcast(b, 0));
        for (auto& w : works)
            w->wait();
    }
    Tensor y = probe_forward(s, [&] {
        Tensor h = x;  // Note [Sharded parameters, stage 3]: Sequential's forward, a unit per step
        for (size_t c = 0; c < s.steps.size(); ++c)
            h = s.run_child(s.steps[c].module, s.child_units[c], h);
        return h;
    });
    for (size_t k = 0; k < s.units.size(); ++k)  // stages 1, 2: full_parameters() up to date
        s.await(k);
    return y;
}

std::vector<Tensor> FullyShardedDataParallel::parameters() const {
    std::vector<Tensor> out;
    for (const Unit& u : state_->units)
        out.push_back(u.mine);
    return out;
}

std::vector<Tensor> FullyShardedDataParallel::full_parameters() const {
    return module_->parameters();
}

void FullyShardedDataParallel::gather_parameters() {
    state_->gather();
}

double FullyShardedDataParallel::clip_grad_norm_(double max_norm, double norm_type) {
    FsdpState& s = *state_;
    if (!(max_norm >= 0) || !(norm_type >= 0))  // before any collective, on every rank alike
        throw value_error(
            "FullyShardedDataParallel::clip_grad_norm_: max_norm and norm_type must "
            "be >= 0, got " +
            std::to_string(max_norm) + " and " + std::to_string(norm_type));
    std::vector<Tensor> shards, grads;
    for (const Unit& u : s.units)
        if (u.mine.grad().defined()) {
            shards.push_back(u.mine);
            grads.push_back(u.mine.grad());
        }
    Tensor total;
    if (s.stage == 1) {
        // every rank holds the full averaged gradients: the norm nn::utils computes, exactly
        std::vector<Tensor> full;
        for (const Tensor& p : s.params)
            if (p.grad().defined())
                full.push_back(p.grad());
        total = utils::get_total_norm(full, norm_type);
    } else {
        if (norm_type == 0)
            throw value_error(
                "FullyShardedDataParallel::clip_grad_norm_: norm_type 0 is not "
                "supported at stages 2 and 3 (the gradients are sharded)");
        // this rank's part (sum of |g|^p, or the max for inf), all-reduced
        const bool is_max = std::isinf(norm_type);
        double local = 0;
        for (const Tensor& g : grads) {
            const double n = utils::get_total_norm({g}, norm_type).item<double>();
            local = is_max ? std::max(local, n) : local + std::pow(n, norm_type);
        }
        Tensor t = tg::full({1}, local, kFloat64);
        s.group->all_reduce(t, is_max ? distributed::ReduceOp::Max : distributed::ReduceOp::Sum)
            ->wait();
        double sum = t.item<double>();
        if (!is_max)
            sum = std::pow(sum, 1.0 / norm_type);
        if (!grads.empty())
            total = tg::full({}, sum, TensorOptions(grads[0].dtype()).device(grads[0].device()));
    }
    if (!total.defined())
        return 0;
    if (s.stage == 1)  // the full gradients, which the shards' gradients are views of
        utils::clip_grads_with_norm_(s.params, max_norm, total);
    else if (!shards.empty())
        utils::clip_grads_with_norm_(shards, max_norm, total);
    return total.item<double>();
}

FullyShardedDataParallel::NoSync::NoSync(std::shared_ptr<FsdpState> s) : state_(std::move(s)) {
    prev_ = state_->sync;
    state_->sync = false;
}
FullyShardedDataParallel::NoSync::NoSync(NoSync&& o) noexcept
    : state_(std::move(o.state_)), prev_(o.prev_) {}
FullyShardedDataParallel::NoSync::~NoSync() {
    if (state_)
        state_->sync = prev_;
}

FullyShardedDataParallel::NoSync FullyShardedDataParallel::no_sync() {
    return NoSync(state_);
}

int FullyShardedDataParallel::stage() const {
    return state_->stage;
}

FullyShardedDataParallelStats FullyShardedDataParallel::stats() const {
    return state_->stats;
}

}  // namespace tg::nn
