// Custom autograd functions (tapegrad/custom_function.hpp): the context's state, and the node
// that Function<T>::apply records, whose backward calls T::backward.
//
// Note [Custom function outputs]: forward ran with grad mode off, so its outputs have no
// history. Each output gets this node as its grad_fn, except
// - an output marked non-differentiable: no history (requires_grad false);
// - an output that is one of the inputs and was not marked dirty (forward returned an input
//   unchanged): a detached alias of it gets the history, so the input keeps its own;
// - an input marked dirty (modified in place by forward, and returned): it is rebased, i.e.
//   takes this node as its grad_fn, whose edge keeps its old history, as an in-place op does. A
//   leaf that requires grad cannot be, as in PyTorch.
// Saved tensors are made here, after forward and before the node is recorded, as every op makes
// them: an output is saved as an output (a detached alias, re-attached for create_graph), so the
// node does not hold its own output (a cycle).
#include "tapegrad/custom_function.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <mutex>
#include <set>

#include "autograd/record.hpp"
#include "core/random.hpp"
#include "tapegrad/ops.hpp"

namespace tg::autograd {

namespace function_detail {

struct CustomState {
    tensor_list to_save;       // forward's save_for_backward, until the node is recorded
    std::vector<Saved> saved;  // what the node keeps
    std::vector<bool> needs;   // needs_input_grad, per tensor input
    std::vector<const TensorImpl*> dirty, non_differentiable;
    bool materialize = true;
    bool recorded = false;
    // under a budget (Note [Replaying a custom forward]): what forward started from
    std::shared_ptr<tg::detail::RandomState> rng;
    std::vector<uint32_t> versions;
};

}  // namespace function_detail

AutogradContext::AutogradContext() : state_(std::make_unique<function_detail::CustomState>()) {}
AutogradContext::~AutogradContext() = default;

void AutogradContext::save_for_backward(tensor_list to_save) {
    if (state_->recorded)
        throw autograd_error("save_for_backward: call it in forward, not in backward");
    state_->to_save = std::move(to_save);
}

tensor_list AutogradContext::get_saved_variables() const {
    tensor_list out;
    if (!state_->recorded)
        return state_->to_save;  // still in forward
    for (const detail::Saved& s : state_->saved)
        out.push_back(s.defined() ? s.get() : Tensor());
    return out;
}

void AutogradContext::mark_dirty(const tensor_list& inputs) {
    for (const Tensor& t : inputs)
        if (t.defined())
            state_->dirty.push_back(t.impl());
}

void AutogradContext::mark_non_differentiable(const tensor_list& outputs) {
    for (const Tensor& t : outputs)
        if (t.defined())
            state_->non_differentiable.push_back(t.impl());
}

void AutogradContext::set_materialize_grads(bool value) {
    state_->materialize = value;
}

bool AutogradContext::needs_input_grad(size_t i) const {
    if (i >= state_->needs.size())
        throw value_error("needs_input_grad: input " + std::to_string(i) + " of " +
                          std::to_string(state_->needs.size()) + " tensor inputs");
    return state_->needs[i];
}

// ---- IValue
namespace {
const char* type_of(size_t index) {
    static const char* names[] = {"None", "double", "int", "bool", "string", "int list", "Tensor"};
    return names[index];
}
[[noreturn]] void wrong(const char* want, size_t have) {
    throw value_error(std::string("IValue: to") + want + " on a value holding " + type_of(have));
}
}  // namespace

double IValue::toDouble() const {
    if (auto* d = std::get_if<double>(&v_))
        return *d;
    if (auto* i = std::get_if<int64_t>(&v_))
        return double(*i);
    wrong("Double", v_.index());
}
int64_t IValue::toInt() const {
    if (auto* i = std::get_if<int64_t>(&v_))
        return *i;
    wrong("Int", v_.index());
}
bool IValue::toBool() const {
    if (auto* b = std::get_if<bool>(&v_))
        return *b;
    wrong("Bool", v_.index());
}
const std::string& IValue::toStringRef() const {
    if (auto* s = std::get_if<std::string>(&v_))
        return *s;
    wrong("StringRef", v_.index());
}
std::vector<int64_t> IValue::toIntVector() const {
    if (auto* v = std::get_if<std::vector<int64_t>>(&v_))
        return *v;
    wrong("IntVector", v_.index());
}
Tensor IValue::toTensor() const {
    if (auto* t = std::get_if<Tensor>(&v_))
        return *t;
    wrong("Tensor", v_.index());
}

namespace function_detail {

namespace {

/// The node's name: T's demangled name (kept for the life of the program, as names are).
const char* node_name(const char* mangled) {
    static std::mutex mu;
    static std::set<std::string> names;
    int status = 0;
    char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    std::string name = status == 0 && d ? d : mangled;
    std::free(d);
    std::lock_guard<std::mutex> l(mu);
    return names.insert(name).first->c_str();
}

bool contains(const std::vector<const TensorImpl*>& v, const TensorImpl* p) {
    for (const TensorImpl* q : v)
        if (q == p)
            return true;
    return false;
}

}  // namespace

void begin_custom(AutogradContext& ctx, const tensor_list& inputs) {
    CustomState& st = ctx.state();
    for (const Tensor& t : inputs)
        st.needs.push_back(GradMode::is_enabled() && t.defined() && t.requires_grad());
}

bool replay_wanted() {
    return detail::recipes_wanted();
}

std::shared_ptr<void> begin_replay(AutogradContext& ctx, const tensor_list& inputs) {
    CustomState& st = ctx.state();
    st.rng = std::make_shared<tg::detail::RandomState>();
    for (const Tensor& t : inputs)
        st.versions.push_back(t.defined() ? t._version() : 0);
    return std::make_shared<tg::detail::RecordRandom>(*st.rng);
}

namespace {

// Note [Replaying a custom forward]: under a MemoryBudget, a custom Function's outputs and the
// tensors its forward saved for itself are evictable like any op's output (budget_custom.cpp).
// Each one's recipe runs T::forward again, without recording, on the recomputed inputs and the
// arguments it was given (kept by make_replay, tensors blanked), from the random state the first
// forward started from, with a scratch context (the needs_input_grad of the first): the real
// context keeps its saved_data and saved tensors, and the output or saved tensor that the recipe
// stands for is taken from the replay's results. A Function that marks an input dirty or
// modifies one in place (its version moved during forward) is not replayed: its outputs stay
// pinned, as are those of a forward whose arguments cannot be copied.
void add_replays(const char* name, CustomState& st, const tensor_list& inputs,
                 const tensor_list& outputs, const std::vector<Tensor*>& differentiable,
                 const std::vector<bool>& intermediate, CustomReplay replay) {
    const char* why = !replay ? " (forward's arguments cannot be kept)" : "";
    if (!st.dirty.empty())
        why = " (marks an input dirty)";
    for (size_t i = 0; i < inputs.size() && i < st.versions.size(); ++i)
        if (inputs[i].defined() && inputs[i]._version() != st.versions[i])
            why = " (modifies an input in place)";
    const bool replays = *why == '\0';
    auto rng = st.rng;
    const std::vector<bool> needs = st.needs;
    auto make = [&](bool output, size_t k) -> detail::Recipe {
        if (!replays)
            return {};
        return [replay, rng, needs, output, k](const std::vector<Tensor>& xs) {
            Tensor keep;
            tensor_list outs;
            {
                AutogradContext scratch;
                scratch.state().needs = needs;
                tg::detail::ReplayRandom again(*rng);
                outs = replay(xs, &scratch);
                keep = output ? outs.at(k) : scratch.get_saved_variables().at(k);
            }
            outs.clear();
            return keep;
        };
    };
    std::vector<detail::BudgetMade> made;
    for (Tensor* o : differentiable)
        made.push_back({o, make(true, size_t(o - outputs.data())), why});
    for (size_t k = 0; k < st.to_save.size(); ++k)
        if (intermediate[k])
            made.push_back({&st.to_save[k], make(false, k), why});
    detail::budget_recorded_outputs(*detail::budget_slot(), name, inputs, std::move(made));
}

}  // namespace

void record_custom(const char* type_name, const std::shared_ptr<AutogradContext>& ctx,
                   const tensor_list& inputs, const std::vector<int>& slots, tensor_list& outputs,
                   CustomBackward backward, CustomReplay replay) {
    CustomState& st = ctx->state();
    const char* name = node_name(type_name);
    bool rec = GradMode::is_enabled();
    if (rec) {
        rec = false;
        for (const Tensor& t : inputs)
            rec = rec || (t.defined() && t.requires_grad());
    }
    for (const Tensor& o : outputs)
        if (!o.defined())
            throw autograd_error(std::string(name) + ": forward returned an undefined tensor");
    if (!rec)  // nothing to record: backward will never run (to_save stays as it is)
        return;
    // Note [Custom function outputs]
    std::vector<Tensor*> differentiable;
    for (Tensor& o : outputs) {
        const bool is_input = [&] {
            for (const Tensor& in : inputs)
                if (in.defined() && in.impl() == o.impl())
                    return true;
            return false;
        }();
        if (contains(st.dirty, o.impl())) {
            if (o.is_leaf() && o.requires_grad())
                throw autograd_error(
                    std::string(name) + ": a leaf tensor that requires grad (shape " +
                    shape_str(o.sizes()) + ") was modified in place by forward (mark_dirty)");
        } else if (is_input) {
            o = o.detach();  // an alias: the input keeps its history
        }
        if (!contains(st.non_differentiable, o.impl()))
            differentiable.push_back(&o);
    }
    if (differentiable.empty())  // every output non-differentiable: nothing to record
        return;
    std::vector<bool> intermediate;
    for (const Tensor& t : st.to_save) {
        bool is_output = false, is_input = false;
        for (const Tensor* o : differentiable)
            is_output = is_output || (t.defined() && o->impl() == t.impl());
        for (const Tensor& in : inputs)
            is_input = is_input || (t.defined() && in.impl() == t.impl());
        st.saved.push_back(!t.defined() ? Saved()
                           : is_output  ? save_output(t)
                           : is_input   ? save(t)
                                        : save_intermediate(t));
        intermediate.push_back(t.defined() && !is_output && !is_input);
    }
    if (st.rng && detail::budget_slot())
        add_replays(name, st, inputs, outputs, differentiable, intermediate, std::move(replay));
    st.to_save.clear();
    st.recorded = true;

    std::vector<InputMeta> out_meta;
    for (const Tensor* o : differentiable)
        out_meta.push_back({o->sizes(), o->dtype(), o->device()});
    const size_t n_inputs = inputs.size();
    auto fn = [ctx, backward = std::move(backward), slots, out_meta, name, n_inputs](
                  Grads& dys, const Node& n) {
        CustomState& s = ctx->state();
        for (size_t i = 0; i < n_inputs; ++i)
            s.needs[i] = needs(n, i);
        tensor_list g;
        for (size_t i = 0; i < out_meta.size(); ++i) {
            Tensor d = i < dys.size() ? dys[i] : Tensor();
            if (!d.defined() && s.materialize)
                d = zeros(out_meta[i].sizes,
                          TensorOptions(out_meta[i].dtype).device(out_meta[i].device));
            g.push_back(d);
        }
        tensor_list r = backward(ctx.get(), std::move(g));
        // extra gradients are fine when all undefined (a forward's defaulted arguments), as
        // LibTorch truncates them
        bool extra_undefined = r.size() > slots.size();
        for (size_t i = slots.size(); i < r.size(); ++i)
            extra_undefined = extra_undefined && !r[i].defined();
        if (extra_undefined)
            r.resize(slots.size());
        if (r.size() != slots.size())
            throw autograd_error(std::string(name) + ": backward returned " +
                                 std::to_string(r.size()) + " gradients for " +
                                 std::to_string(slots.size()) +
                                 " forward arguments (one per argument, undefined for the "
                                 "non-tensor ones)");
        Grads out(n_inputs);
        for (size_t p = 0; p < slots.size(); ++p) {
            if (!r[p].defined())
                continue;
            if (slots[p] < 0)
                throw autograd_error(std::string(name) + ": backward returned a gradient for " +
                                     "forward argument " + std::to_string(p) +
                                     ", which is not a tensor");
            const size_t i = size_t(slots[p]);
            if (!needs(n, i))
                continue;
            const Shape& want = in_shape(n, i);
            Tensor gi = r[p];
            if (!(gi.sizes() == want)) {
                bool ok = true;
                try {
                    ok = broadcast_shapes(want, gi.sizes(), name) == gi.sizes();
                } catch (const shape_error&) {
                    ok = false;
                }
                if (!ok)
                    throw autograd_error(std::string(name) +
                                         ": backward returned a gradient of "
                                         "shape " +
                                         shape_str(gi.sizes()) + " for input " + std::to_string(i) +
                                         " of shape " + shape_str(want));
                gi = sum_to(gi, want);
            }
            out[i] = gi;
        }
        return out;
    };
    detail::record_list(name, inputs, differentiable, std::move(fn));
}

}  // namespace function_detail

}  // namespace tg::autograd
