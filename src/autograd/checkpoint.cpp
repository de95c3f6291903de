// checkpoint(): Chen et al. 2016's recomputation, in the reentrant style of PyTorch's
// torch.utils.checkpoint (DESIGN.md §2).
#include "tapegrad/checkpoint.hpp"

#include "autograd/record.hpp"
#include "random.hpp"

namespace tg {

namespace autograd::detail {
namespace {
thread_local int t_probe_depth = 0;
thread_local bool t_probe_hit = false;
}  // namespace
bool probe_active() {
    return t_probe_depth > 0;
}
void probe_note(std::initializer_list<const Tensor*> inputs) {
    for (const Tensor* t : inputs)
        if (t->defined() && t->requires_grad())
            t_probe_hit = true;
}
}  // namespace autograd::detail

namespace {
using namespace autograd::detail;

/// Runs fn unrecorded; reports whether it touched anything that requires grad.
std::vector<Tensor> run_probed(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                               bool& hit) {
    NoGradGuard no_grad;
    const bool outer_hit = t_probe_hit;
    t_probe_hit = false;
    ++t_probe_depth;
    std::vector<Tensor> out;
    try {
        out = fn(inputs);
    } catch (...) {
        --t_probe_depth;
        t_probe_hit = outer_hit;
        throw;
    }
    --t_probe_depth;
    hit = t_probe_hit;
    t_probe_hit = outer_hit || hit;  // an enclosing checkpoint's probe sees it too
    return out;
}
}  // namespace

std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs) {
    if (!GradMode::is_enabled())
        return fn(inputs);
    const std::mt19937_64 rng = tg::detail::generator();  // Dropout must draw the same masks
    bool uses_grad = false;
    std::vector<Tensor> outs = run_probed(fn, inputs, uses_grad);
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
    record_list("checkpoint", inputs, out_ptrs, [fn, saved, rng](Grads& dys, const Node&) {
        std::vector<Tensor> xs;
        for (const Saved& s : saved) {
            Tensor x = s.get();
            if (!x.defined()) {
                xs.push_back(x);
                continue;
            }
            Tensor d = x.detach();
            if (x.requires_grad())
                d.requires_grad_(true);
            xs.push_back(d);
        }
        std::mt19937_64& gen = tg::detail::generator();
        const std::mt19937_64 outer = gen;
        gen = rng;
        std::vector<Tensor> ys;
        {
            AutoGradMode on(true);
            try {
                ys = fn(xs);
            } catch (...) {
                gen = outer;
                throw;
            }
        }
        gen = outer;
        // The outputs and their gradients are handed over, not copied: the engine frees each
        // as soon as its node has run, so neither lives through the whole segment's backward.
        std::vector<Tensor> roots, grads;
        for (size_t i = 0; i < ys.size() && i < dys.size(); ++i)
            if (dys[i].defined() && ys[i].defined() && ys[i].requires_grad()) {
                roots.push_back(std::move(ys[i]));
                grads.push_back(std::move(dys[i]));
            }
        ys.clear();
        // Parameters inside fn are leaves: this accumulates into their grad() directly.
        if (!roots.empty())
            backward_owned(std::move(roots), std::move(grads), GradMode::is_enabled());
        Grads dx;
        for (const Tensor& x : xs)
            dx.push_back(x.defined() && x.requires_grad() ? x.grad() : Tensor());
        return dx;
    });
    return outs;
}

Tensor checkpoint(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                  const std::vector<Tensor>& inputs) {
    return checkpoint(
        CheckpointFn([fn](const std::vector<Tensor>& xs) { return std::vector<Tensor>{fn(xs)}; }),
        inputs)[0];
}

}  // namespace tg
