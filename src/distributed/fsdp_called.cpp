// nn::FullyShardedDataParallel at stage 3: units that the model's own forward calls.
//
// Note [Units the model calls]: a module the wrap policy selects that no chain of Sequentials
// from the top reaches (a block in a ModuleList that its parent's forward iterates, a submodule
// that a custom forward calls) is not run by the wrapper. At stage 3 without checkpoint it is a
// unit all the same: the wrapper sets call hooks on it (module_detail::CallHooks) that gather its
// unit when the module is called through operator() (`block(x)`, `(*m)(x)`) and release it when
// the call returns, as PyTorch's FSDP does around `module(x)`. The step that holds it keeps the
// rest of its parameters (embeddings, a head) as a unit of its own, gathered for the whole step.
// The enclosing step's saved-tensor hooks pack the block's parameters as handles, so backward
// regathers the block's unit as it does a step's (Note [Sharded parameters, stage 3]), and the
// next block's gather is prefetched as the next step's is.
//
// A direct `block->forward(x)` call passes no hook and would read freed parameters. So the
// wrapper's first forward is a probe: every unit is gathered for it, the hooks only note which
// modules were called, and a selected module that was not called through operator() is a
// value_error naming it, on every rank alike (the model's code is the same on each), before
// anything has read a freed parameter. A module called outside the wrapper's forward (recomputed
// in backward under the user's own tg::checkpoint, or evaluated through model->module()) is
// gathered for the call and released after it.
#include <memory>
#include <string>
#include <unordered_map>

#include "distributed/fsdp.hpp"

namespace tg::nn {

namespace {
struct GatherAroundCalls : module_detail::CallHooks {
    std::weak_ptr<FsdpState> state;
    std::unordered_map<const Module*, size_t> index;

    void enter(Module& m) override {
        auto s = state.lock();
        auto it = index.find(&m);
        if (!s || it == index.end())
            return;
        FsdpState::CallState& c = s->calls[it->second];
        if (s->in_forward)
            c.entered = true;
        if (s->probing || c.depth++ > 0)  // probing: all gathered; or a nested call
            return;
        const auto& ids = s->called_units[it->second];
        try {
            c.opened = false;
            for (size_t k : ids)
                if (!s->units[k].gathered) {
                    s->gather_unit(k);
                    c.opened = true;
                }
            if (!ids.empty() && s->in_forward)
                s->prefetch_after(ids.front(), true);
        } catch (...) {
            --c.depth;
            throw;
        }
    }

    void exit(Module& m) noexcept override {
        auto s = state.lock();
        auto it = index.find(&m);
        if (!s || it == index.end() || s->probing)
            return;
        FsdpState::CallState& c = s->calls[it->second];
        if (--c.depth > 0 || !c.opened)
            return;
        c.opened = false;
        try {
            for (size_t k : s->called_units[it->second])
                s->release(k);
        } catch (...) {  // a failed prefetch: the next collective on this group reports it
        }
    }
};

void release_all(FsdpState& s) noexcept {
    try {
        for (size_t k = 0; k < s.units.size(); ++k)
            s.release(k);
    } catch (...) {  // as in exit
    }
}
}  // namespace

void install_call_hooks(FsdpState& s) {
    if (s.called.empty())
        return;
    auto hooks = std::make_shared<GatherAroundCalls>();
    hooks->state = s.weak_from_this();
    for (size_t i = 0; i < s.called.size(); ++i)
        hooks->index[s.called[i].module.get()] = i;
    s.calls.assign(s.called.size(), FsdpState::CallState{});
    s.call_hooks = hooks;
    for (const UnitStep& c : s.called)
        module_detail::set_call_hooks(*c.module, hooks);
}

Tensor probe_forward(FsdpState& s, const std::function<Tensor()>& fn) {
    struct InForward {
        FsdpState& s;
        explicit InForward(FsdpState& st) : s(st) { s.in_forward = true; }
        ~InForward() {
            s.in_forward = false;
            s.probing = false;
        }
    } in_forward(s);
    if (s.called.empty() || s.probed)
        return fn();
    for (FsdpState::CallState& c : s.calls)
        c.entered = false;
    s.probing = true;
    Tensor y;
    try {
        for (size_t k = 0; k < s.units.size(); ++k)
            s.gather_unit(k);
        y = fn();
    } catch (...) {
        s.probing = false;
        release_all(s);
        throw;
    }
    s.probing = false;
    release_all(s);
    for (size_t i = 0; i < s.called.size(); ++i)
        if (!s.calls[i].entered)
            throw value_error("FullyShardedDataParallel: stage 3: the wrap policy selects '" +
                              s.called[i].path + "' (" + s.called[i].module->name() +
                              "), which the forward did not call through operator() (block(x) "
                              "or (*module)(x)): a direct ->forward(x) call does not reach the "
                              "wrapper and would read freed parameters; call it through "
                              "operator(), or hold the selected modules in a Sequential");
    s.probed = true;
    return y;
}

}  // namespace tg::nn
