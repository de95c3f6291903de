// checkpoint_sequential: runs a chain of stages (a Sequential's or a ModuleList's modules, or
// any one-tensor functions) in checkpointed segments (√n equal ones or a plan from the planner
// in planner.cpp), and profile_stages, the planner's per-stage measurements
// (docs/checkpointing.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <unordered_set>

#include "backend/registry.hpp"
#include "checkpoint/recomputing.hpp"
#include "core/random.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/checkpoint.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/memory.hpp"
#include "tapegrad/nn/checkpoint_sequential.hpp"

namespace tg::nn {

namespace {

/// `segments` near-equal segments (0: round(√n)), all checkpointed but the last.
CheckpointPlan equal_plan(size_t n, int64_t segments) {
    if (segments < 0 || size_t(segments) > n)
        throw value_error("checkpoint_sequential: " + std::to_string(segments) +
                          " segments for a Sequential of " + std::to_string(n) + " modules");
    const size_t k = segments == 0 ? std::max<size_t>(1, size_t(std::lround(std::sqrt(double(n)))))
                                   : size_t(segments);
    CheckpointPlan plan;
    size_t at = 0;
    for (size_t s = 0; s < k; ++s) {
        const size_t len = n / k + (s < n % k ? 1 : 0);
        plan.segments.push_back({at, at + len, s + 1 < k});
        at += len;
    }
    return plan;
}

/// Throws unless segs cover layers [from, to) in order, and inner plans cover their segments.
void check_segments(const std::vector<CheckpointPlan::Segment>& segs, size_t from, size_t to,
                    bool top) {
    size_t at = from;
    for (const auto& s : segs) {
        if (s.begin != at || s.end <= s.begin)
            throw value_error("checkpoint_sequential: plan segment [" + std::to_string(s.begin) +
                              "," + std::to_string(s.end) + ") does not start at layer " +
                              std::to_string(at));
        if (!s.inner.empty()) {
            if (!s.checkpointed)
                throw value_error("checkpoint_sequential: plain segment [" +
                                  std::to_string(s.begin) + "," + std::to_string(s.end) +
                                  ") has an inner plan (only a checkpointed one can)");
            check_segments(s.inner, s.begin, s.end, false);
        }
        at = s.end;
    }
    if (at != to && from == 0 && top)
        throw value_error("checkpoint_sequential: plan covers " + std::to_string(at) +
                          " layers, the chain has " + std::to_string(to));
    if (at != to)
        throw value_error("checkpoint_sequential: the inner plan of segment [" +
                          std::to_string(from) + "," + std::to_string(to) + ") covers layers [" +
                          std::to_string(from) + "," + std::to_string(at) + ")");
}

/// Runs the stages of `segs` on x; a checkpointed segment runs its inner plan (or its stages)
/// inside tg::checkpoint, so its recomputation in backward checkpoints again (nested).
using Stages = std::shared_ptr<const std::vector<Stage>>;
Tensor run_segments(const Stages& st, const std::vector<CheckpointPlan::Segment>& segs,
                    const Tensor& x, bool use_reentrant) {
    Tensor h = x;
    for (const auto& seg : segs) {
        if (!seg.checkpointed) {
            for (size_t i = seg.begin; i < seg.end; ++i)
                h = (*st)[i].fn(h);
            continue;
        }
        const std::vector<CheckpointPlan::Segment> inner =
            seg.inner.empty()
                ? std::vector<CheckpointPlan::Segment>{{seg.begin, seg.end, false, {}}}
                : seg.inner;
        // the checkpoint keeps run until its backward: it owns what it needs
        auto run = [st, inner, use_reentrant](const std::vector<Tensor>& in) {
            return run_segments(st, inner, in[0], use_reentrant);
        };
        h = checkpoint(run, {h}, use_reentrant);
    }
    return h;
}

/// The median of a few timed unrecorded runs of a stage: what recomputing it costs. The first
/// run (the memory measurement) has warmed the allocator's cache; a device's queue is drained
/// around each run, so the time is the work's, not its enqueueing.
double median_forward_seconds(const Stage& st, const Tensor& x) {
    constexpr int kRuns = 3;
    backend::Backend& dev = backend::get(x.device());
    std::vector<double> t;
    for (int r = 0; r < kRuns; ++r) {
        dev.synchronize();
        const auto t0 = std::chrono::steady_clock::now();
        {
            Tensor y = st.fn(x);
            dev.synchronize();
        }
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(t.begin(), t.begin() + kRuns / 2, t.end());
    return t[kRuns / 2];
}

}  // namespace

std::vector<Stage> stages(const ModuleListImpl& list) {
    std::vector<Stage> out;
    for (const std::shared_ptr<Module>& m : list)
        out.push_back({m->label(), [m](const Tensor& x) { return (*m)(x); }});
    return out;
}

SequentialProfile profile_stages(const std::vector<Stage>& stages,
                                 const std::vector<Tensor>& parameters, const Tensor& x) {
    if (stages.empty())
        throw value_error("profile_sequential: no modules (the chain has no stages)");
    SequentialProfile prof;
    prof.input_bytes = int64_t(x.impl()->storage->nbytes);
    // profiling runs every layer twice: every generator is put back after (Note [Replaying
    // random state] in core/random.cpp), and no layer updates state of its own (Note [Side
    // effects of a recomputation] in checkpoint/recomputing.hpp)
    tg::detail::RandomState rng;
    tg::detail::RecordRandom record(rng);
    checkpointing::RecomputeScope rehearsal;
    // gradients allocated, as in a step after zero_grad(false); the caller's are put back
    std::vector<Tensor> params = parameters, old_grads;
    std::unordered_set<const void*> param_storage;
    for (Tensor& p : params) {
        old_grads.push_back(p.grad());
        param_storage.insert(p.impl()->storage.get());
        if (p.requires_grad())
            p.set_grad(zeros_like(p));
    }
    auto restore = [&] {
        for (size_t i = 0; i < params.size(); ++i)
            params[i].set_grad(old_grads[i]);
        tg::detail::restore(rng);
    };
    // the input's device: a model on a device allocates there, not on the CPU
    const Device dev = x.device();
    auto cur = [dev] { return memory::stats(dev).current_bytes; };
    auto peak = [dev] { return memory::stats(dev).peak_bytes; };
    try {
        AutoGradMode grad_on(true);
        Tensor h = x.detach();
        bool needs = x.requires_grad();
        for (const Stage& st : stages) {
            LayerProfile l;
            l.name = st.name;
            Tensor d = h.detach();
            if (needs)
                d.requires_grad_(true);
            tg::detail::RandomState layer_rng;  // the recorded run draws what this one draws
            {
                tg::detail::RecordRandom record_layer(layer_rng);
                NoGradGuard no_grad;
                const int64_t c0 = cur();
                memory::reset_peak(dev);
                { Tensor y0 = st.fn(d); }
                l.nograd_peak = peak() - c0;
                l.forward_seconds = median_forward_seconds(st, d);
            }
            tg::detail::restore(layer_rng);
            int64_t c0 = cur();
            memory::reset_peak(dev);
            Tensor y = st.fn(d);
            l.forward_peak = peak() - c0;
            l.out_bytes = int64_t(y.impl()->storage->nbytes);
            const void* in_st = d.impl()->storage.get();
            const void* out_st = y.impl()->storage.get();
            if (y.grad_fn()) {  // the nodes recorded in this layer end at leaves (d, params)
                std::vector<Node*> stack{y.grad_fn().get()};
                std::unordered_set<Node*> seen{stack[0]};
                std::unordered_set<const void*> counted;
                while (!stack.empty()) {
                    Node* nd = stack.back();
                    stack.pop_back();
                    for (const auto& s : nd->saved_) {
                        if (param_storage.count(s.storage) || !counted.insert(s.storage).second)
                            continue;
                        if (s.storage == in_st)
                            l.saves_input = true;
                        else if (s.storage == out_st)
                            l.saves_output = true;
                        else
                            l.saved_bytes += s.bytes;
                    }
                    for (const auto& e : nd->next_)
                        if (e.fn && seen.insert(e.fn.get()).second)
                            stack.push_back(e.fn.get());
                }
            }
            if (y.requires_grad()) {
                Tensor dy = ones_like(y);
                const int64_t c1 = cur();
                memory::reset_peak(dev);
                autograd::backward({y}, {dy});
                l.backward_peak = peak() - c1;
            }
            needs = y.requires_grad();
            h = y.detach();
            prof.layers.push_back(l);
        }
    } catch (...) {
        restore();
        throw;
    }
    restore();
    return prof;
}

SequentialProfile profile_sequential(const Sequential& seq, const Tensor& x) {
    return profile_stages(stages(*seq), seq->parameters(), x);
}
SequentialProfile profile_sequential(const ModuleList& blocks, const Tensor& x) {
    return profile_stages(stages(*blocks), blocks->parameters(), x);
}

CheckpointPlan sqrt_plan(const SequentialProfile& profile, int64_t segments) {
    return predict(profile, equal_plan(profile.layers.size(), segments));
}

CheckpointPlan plan_checkpoints(const Sequential& seq, const Tensor& x, MemoryBudget budget) {
    return plan_checkpoints(profile_sequential(seq, x), budget);
}
CheckpointPlan plan_checkpoints(const ModuleList& blocks, const Tensor& x, MemoryBudget budget) {
    return plan_checkpoints(profile_sequential(blocks, x), budget);
}
CheckpointPlan plan_checkpoints(const std::vector<Stage>& st, const std::vector<Tensor>& params,
                                const Tensor& x, MemoryBudget budget) {
    return plan_checkpoints(profile_stages(st, params, x), budget);
}

Tensor checkpoint_stages(const std::vector<Stage>& st, const CheckpointPlan& plan, const Tensor& x,
                         bool use_reentrant) {
    check_segments(plan.segments, 0, st.size(), true);
    return run_segments(std::make_shared<const std::vector<Stage>>(st), plan.segments, x,
                        use_reentrant);
}

Tensor checkpoint_stages(const std::vector<Stage>& st, int64_t segments, const Tensor& x,
                         bool use_reentrant) {
    if (st.empty())
        return x;
    return checkpoint_stages(st, equal_plan(st.size(), segments), x, use_reentrant);
}

Tensor checkpoint_sequential(const Sequential& seq, const CheckpointPlan& plan, const Tensor& x,
                             bool use_reentrant) {
    return checkpoint_stages(stages(*seq), plan, x, use_reentrant);
}
Tensor checkpoint_sequential(const ModuleList& blocks, const CheckpointPlan& plan, const Tensor& x,
                             bool use_reentrant) {
    return checkpoint_stages(stages(*blocks), plan, x, use_reentrant);
}

Tensor checkpoint_sequential(const Sequential& seq, int64_t segments, const Tensor& x,
                             bool use_reentrant) {
    return checkpoint_stages(stages(*seq), segments, x, use_reentrant);
}
Tensor checkpoint_sequential(const ModuleList& blocks, int64_t segments, const Tensor& x,
                             bool use_reentrant) {
    return checkpoint_stages(stages(*blocks), segments, x, use_reentrant);
}

Tensor checkpoint_sequential(const Sequential& seq, const Tensor& x, MemoryBudget budget) {
    return checkpoint_sequential(seq, plan_checkpoints(seq, x, budget), x);
}

}  // namespace tg::nn
