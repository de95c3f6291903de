// Module::state_dict / load_state_dict: a module's parameters and buffers under PyTorch's keys.
#include <set>

#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/nn/module.hpp"

namespace tg::nn {
namespace {

// Note [State dict order]: PyTorch's Module.state_dict() writes, for each module depth first,
// its own parameters, then its own buffers, then recurses into its children; so a BatchNorm's
// running statistics follow its weight and bias, before the next layer's weight. This differs
// from named_parameters() followed by named_buffers() (all parameters first), which is what
// tg::save writes; the keys are the same dotted paths.
void collect(const Module& m, const std::string& prefix, StateDict& out) {
    for (auto& [name, p] : m.named_parameters(false))
        out.insert(prefix + name, p.detach());
    for (auto& [name, b] : m.named_buffers(false))
        out.insert(prefix + name, b.detach());
    for (auto& [name, child] : m.named_children())
        collect(*child, prefix + name + ".", out);
}

/// The module's tensors themselves (not detached), in state_dict() order.
void collect_targets(const Module& m, const std::string& prefix,
                     std::vector<std::pair<std::string, Tensor>>& out) {
    for (auto& [name, p] : m.named_parameters(false))
        out.emplace_back(prefix + name, p);
    for (auto& [name, b] : m.named_buffers(false))
        out.emplace_back(prefix + name, b);
    for (auto& [name, child] : m.named_children())
        collect_targets(*child, prefix + name + ".", out);
}

std::string quoted_list(const std::vector<std::string>& keys) {
    std::string s;
    for (auto& k : keys)
        s += (s.empty() ? "\"" : ", \"") + k + "\"";
    return s;
}

}  // namespace

StateDict Module::state_dict() const {
    StateDict out;
    collect(*this, "", out);
    return out;
}

LoadResult Module::load_state_dict(const StateDict& sd, bool strict) {
    std::vector<std::pair<std::string, Tensor>> targets;
    collect_targets(*this, "", targets);
    LoadResult result;
    std::vector<std::string> errors;
    std::vector<std::pair<Tensor, Tensor>> copies;  // (target, value), applied once all is checked
    std::set<std::string> known;
    for (auto& [key, target] : targets) {
        known.insert(key);
        const Tensor* value = sd.find(key);
        if (!value) {
            result.missing_keys.push_back(key);
            continue;
        }
        if (!value->defined()) {
            errors.push_back("undefined tensor for " + key + ".");
            continue;
        }
        Tensor v = value->detach();
        // PyTorch: a 1-D value for a 0-D parameter or buffer is read as its first element
        // (checkpoints of old BatchNorms hold num_batches_tracked as [1])
        if (target.dim() == 0 && v.dim() == 1 && v.size(0) >= 1)
            v = v.select(0, 0);
        if (v.sizes() != target.sizes()) {
            errors.push_back("size mismatch for " + key + ": copying a param with shape " +
                             shape_str(v.sizes()) +
                             " from checkpoint, the shape in current model is " +
                             shape_str(target.sizes()) + ".");
            continue;
        }
        copies.emplace_back(target, v);
    }
    for (auto& item : sd)
        if (!known.count(item.key()))
            result.unexpected_keys.push_back(item.key());
    if (strict) {
        if (!result.unexpected_keys.empty())
            errors.insert(errors.begin(), "Unexpected key(s) in state_dict: " +
                                              quoted_list(result.unexpected_keys) + ". ");
        if (!result.missing_keys.empty())
            errors.insert(errors.begin(), "Missing key(s) in state_dict: " +
                                              quoted_list(result.missing_keys) + ". ");
    }
    if (!errors.empty()) {
        std::string msg = "Error(s) in loading state_dict for " + name() + ":";
        for (auto& e : errors)
            msg += "\n\t" + e;
        throw value_error(msg);
    }
    // converted first (a conversion may throw, e.g. a device without memory), then copied
    for (auto& [target, v] : copies)
        v = v.to(target.dtype()).to(target.device());
    NoGradGuard guard;
    for (auto& [target, v] : copies)
        Tensor(target).copy_(v);
    return result;
}

}  // namespace tg::nn
