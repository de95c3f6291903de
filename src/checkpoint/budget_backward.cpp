// A MemoryBudget's backward half (Note [Dynamic rematerialization] in budget.cpp): an evicted
// entry recomputed from its recipe, its inputs first, when a backward (or another
// recomputation) reads it.
#include "checkpoint/budget.hpp"
#include "checkpoint/recomputing.hpp"
#include "tapegrad/autograd.hpp"

namespace tg::autograd::detail {

Tensor Budget::materialize(BudgetEntry& e) {
    if (e.t.defined()) {
        e.last_use = ++clock_;
        return alias(e.t);
    }
    if (!e.recipe)
        throw autograd_error("MemoryBudget: the output of " + e.name +
                             " was evicted without a recipe (internal error)");
    // the inputs first one by one, holding none (a recursion that held each level's finished
    // inputs would need a buffer per level of an evicted chain); then, if they are all still
    // there, taken together, else as they come
    for (const BudgetEntry::Input& x : e.inputs)
        if (x.entry)
            materialize(*x.entry);
    std::vector<Tensor> in;
    for (const BudgetEntry::Input& x : e.inputs) {
        in.push_back(x.entry ? alias(materialize(*x.entry), x.sizes, x.strides, x.offset)
                             : x.plain);
        if (in.back().defined() && in.back()._version() != x.version)
            throw autograd_error("MemoryBudget: cannot recompute the output of " + e.name +
                                 ": its input of shape " + shape_str(x.sizes) +
                                 " was modified by an in-place operation after " + e.name +
                                 " used it (version " + std::to_string(in.back()._version()) +
                                 ", used at " + std::to_string(x.version) + ")");
    }
    ensure_room(e.nbytes, "recomputing the output of " + e.name + " (" + shape_str(e.sizes) + ")",
                e.cap.get());
    const Clock::time_point t0 = Clock::now();
    Tensor out;
    {
        NoGradGuard plain;
        checkpointing::RecomputeScope again;  // Note [Side effects of a recomputation]
        out = e.recipe(in);
    }
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!out.defined() || out.sizes() != e.sizes || out.dtype() != e.dtype ||
        out.strides() != e.strides || out.storage_offset() != e.offset ||
        int64_t(out.impl()->storage->nbytes) != e.nbytes || out.impl()->storage.use_count() > 1)
        throw autograd_error("MemoryBudget: recomputing " + e.name + " did not give its " +
                             shape_str(e.sizes) + " buffer back (internal error)");
    out.impl()->storage->version = e.version;  // the buffer as it was saved
    add_resident(e, out);
    measured(e, dt);
    ++report.rematerializations;
    report.recompute_seconds += dt;
    MemoryBudgetReport::Op& op = report.recomputed_ops[e.name];
    ++op.count;
    op.seconds += dt;
    for_caps(e, [&](BudgetCap& c) {
        ++c.report.rematerializations;
        c.report.recompute_seconds += dt;
        MemoryBudgetReport::Op& o = c.report.recomputed_ops[e.name];
        ++o.count;
        o.seconds += dt;
    });
    return alias(e.t);
}

}  // namespace tg::autograd::detail
