// checkpoint(): Chen et al. 2016's recomputation, in the reentrant style of PyTorch's
// torch.utils.checkpoint (DESIGN.md §2).
#include "tapegrad/checkpoint.hpp"

#include <algorithm>
#include <unordered_set>

#include "autograd/engine.hpp"
#include "autograd/hooks.hpp"
#include "autograd/record.hpp"
#include "checkpoint/recomputing.hpp"
#include "checkpoint/replay.hpp"
#include "core/random.hpp"

namespace tg {

// Note [Checkpoint edges]: fn may use tensors that require grad without taking them as inputs:
// the parameters of the modules it calls, or a tensor it captured. The probe (a UseObserver,
// Note [Unrecorded uses] in autograd/hooks.hpp) lists them, and the checkpoint node gets an edge to
// each, after the inputs, as if they had been passed in. In backward() the recomputed subgraph is
// simply backpropagated: its leaves are those tensors, whose .grad() then accumulates exactly as
// without checkpointing (in place, Note [Gradient accumulated in place]), and the node returns
// no gradient for them. In autograd::grad, create_graph, or when fn captured a tensor that has a
// history of its own, the recomputed subgraph is differentiated with respect to the inputs and
// those tensors, stopping there, and the gradients go out along the edges: autograd::grad sees
// the parameters used inside fn and leaves .grad() alone, and the enclosing graph is run once,
// by the enclosing pass.
namespace {
using namespace autograd::detail;

/// The tensors that require grad which fn used without taking them as inputs, and whether one
/// of them has a history (Note [Checkpoint edges]).
struct Captured {
    std::vector<Tensor> tensors;
    bool history = false;
};

/// Note [Unrecorded uses] in autograd/hooks.hpp: the distinct tensors requiring grad that fn's
/// ops were given, inputs included; an enclosing checkpoint's probe sees them too.
struct Probe final : UseObserver {
    std::vector<Tensor> tensors;
    std::unordered_set<const TensorImpl*> seen;
    void used(const Tensor& t) override {
        if (seen.insert(t.impl()).second)
            tensors.push_back(t);
    }
};

/// Runs fn unrecorded; lists the tensors requiring grad that its ops used (inputs included).
std::vector<Tensor> run_probed(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                               std::vector<Tensor>& used) {
    NoGradGuard no_grad;
    Probe probe;
    std::vector<Tensor> out;
    {
        UseObserverScope observe(probe);
        out = fn(inputs);
    }
    if (observing_unrecorded())  // an enclosing checkpoint's probe sees them too
        for (const Tensor& u : probe.tensors)
            note_unrecorded({&u});
    used = std::move(probe.tensors);
    return out;
}
}  // namespace

std::vector<Tensor> checkpointing::replay_inputs(const std::vector<Saved>& saved) {
    std::vector<Tensor> xs;
    for (const Saved& s : saved) {
        const Tensor x = s.get();
        Tensor d = x.defined() ? x.detach() : x;
        if (x.defined() && (x.requires_grad() || s.requires_grad()))  // a budget's: no history
            d.requires_grad_(true);
        xs.push_back(d);
    }
    return xs;
}

std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                               bool use_reentrant) {
    if (!fn)
        throw value_error("checkpoint: empty function");
    if (!GradMode::is_enabled())
        return fn(inputs);
    if (!use_reentrant)
        return checkpointing::checkpoint_nonreentrant(fn, inputs);
    tg::detail::RandomState rng;  // Dropout must draw the same masks
    std::vector<Tensor> used, outs;
    {
        tg::detail::RecordRandom record(rng);  // Note [Replaying random state]
        outs = run_probed(fn, inputs, used);
    }
    Captured cap;  // Note [Checkpoint edges]: what fn used that requires grad, not an input
    for (const Tensor& u : used) {
        const bool is_input = std::any_of(inputs.begin(), inputs.end(), [&u](const Tensor& x) {
            return x.defined() && x.impl() == u.impl();
        });
        if (!is_input) {
            cap.tensors.push_back(u);
            cap.history = cap.history || u.grad_fn();
        }
    }
    bool uses_grad = !cap.tensors.empty();
    for (const Tensor& x : inputs)
        uses_grad = uses_grad || (x.defined() && x.requires_grad());
    if (!uses_grad)
        return outs;
    std::vector<Tensor*> out_ptrs;
    for (Tensor& o : outs) {
        // a pass-through output still gets its own tensor so the node can own its history
        if (o.defined())
            o = o.detach();
        out_ptrs.push_back(&o);
    }
    std::vector<Saved> saved;
    for (const Tensor& x : inputs)
        saved.push_back(save(x));
    std::vector<Tensor> edges = inputs;
    edges.insert(edges.end(), cap.tensors.begin(), cap.tensors.end());
    record_list("checkpoint", edges, out_ptrs, [fn, saved, rng, cap](Grads& dys, const Node& n) {
        const std::vector<Tensor> xs = checkpointing::replay_inputs(saved);
        std::vector<Tensor> ys;
        {
            tg::detail::ReplayRandom replay(rng);
            checkpointing::RecomputeScope again;  // Note [Side effects of a recomputation]
            AutoGradMode on(true);
            ys = fn(xs);
        }
        // what comes back must be what the first run returned, or the gradients would be wrong
        if (ys.size() != n.num_outputs_)
            throw autograd_error("checkpoint: recomputing fn returned " +
                                 std::to_string(ys.size()) + " outputs, the first run " +
                                 std::to_string(n.num_outputs_) +
                                 ": fn must compute the same when it runs again");
        for (size_t i = 0; i < ys.size() && i < dys.size(); ++i)
            if (dys[i].defined() && ys[i].defined() &&
                (ys[i].sizes() != dys[i].sizes() || ys[i].dtype() != dys[i].dtype()))
                throw autograd_error("checkpoint: recomputing fn returned output " +
                                     std::to_string(i) + " as " + shape_str(ys[i].sizes()) + " " +
                                     dtype_name(ys[i].dtype()) + ", the first run as " +
                                     shape_str(dys[i].sizes()) + " " + dtype_name(dys[i].dtype()) +
                                     ": fn must compute the same when it runs again");
        // The outputs and their gradients are handed over, not copied: the engine frees each
        // as soon as its node has run, so neither lives through the whole segment's backward.
        std::vector<Tensor> roots, grads;
        for (size_t i = 0; i < ys.size() && i < dys.size(); ++i)
            if (dys[i].defined() && ys[i].defined() && ys[i].requires_grad()) {
                roots.push_back(std::move(ys[i]));
                grads.push_back(std::move(dys[i]));
            }
        ys.clear();
        Grads dx(xs.size() + cap.tensors.size());
        if (into_grad_pass() && !cap.history) {
            // backward(): the captured tensors are leaves and take their gradients directly
            if (!roots.empty())
                backward_owned(std::move(roots), std::move(grads), false);
            for (size_t j = 0; j < xs.size(); ++j)
                if (xs[j].defined() && xs[j].requires_grad())
                    dx[j] = xs[j].grad();
            return dx;
        }
        // Note [Checkpoint edges]: the inputs, then the captured, that the running pass needs
        std::vector<Tensor> wrt;
        std::vector<size_t> edge;
        for (size_t j = 0; j < xs.size() + cap.tensors.size(); ++j)
            if (needs(n, j)) {
                wrt.push_back(j < xs.size() ? xs[j] : cap.tensors[j - xs.size()]);
                edge.push_back(j);
            }
        std::vector<Tensor> g;
        if (!roots.empty() && !wrt.empty())
            g = grad_owned(std::move(roots), wrt, std::move(grads), GradMode::is_enabled());
        for (size_t k = 0; k < g.size(); ++k)
            dx[edge[k]] = std::move(g[k]);
        return dx;
    });
    if (Budget* b = budget_slot()) {  // under a MemoryBudget: an output is made again by fn
        std::vector<BudgetMade> made;
        for (size_t i = 0; i < outs.size(); ++i)
            made.push_back(
                {&outs[i], [fn, rng, i, k = inputs.size()](const std::vector<Tensor>& in) {
                     tg::detail::ReplayRandom replay(rng);
                     std::vector<Tensor> ys = fn({in.begin(), in.begin() + long(k)});
                     return ys.at(i);
                 }});
        budget_recorded_outputs(*b, "checkpoint", edges, std::move(made));
    }
    return outs;
}

Tensor checkpoint(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                  const std::vector<Tensor>& inputs, bool use_reentrant) {
    if (!fn)
        throw value_error("checkpoint: empty function");
    return checkpoint(
        CheckpointFn([fn](const std::vector<Tensor>& xs) { return std::vector<Tensor>{fn(xs)}; }),
        inputs, use_reentrant)[0];
}

}  // namespace tg
