// nn::FullyShardedDataParallel's units at stage 3: which modules the wrapper runs one after the
// other, each between the gather and the release of its parameters (ShardingOptions::wrap_policy).
#include <algorithm>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <utility>

#include "distributed/fsdp.hpp"
#include "tapegrad/nn/container.hpp"
#include "tapegrad/nn/sequential.hpp"

namespace tg::nn {

SequentialImpl* as_sequential(Module& m) {
    return typeid(m) == typeid(SequentialImpl) ? static_cast<SequentialImpl*>(&m) : nullptr;
}

namespace {
/// m's parameter elements outside the modules below it that are units of
/// wrap_size_based(min), and whether m is one.
std::pair<int64_t, bool> unwrapped_elements(const Module& m, int64_t min) {
    int64_t n = 0;
    for (const Tensor& p : m.parameters(false))
        n += p.numel();
    for (const auto& c : m.children())
        if (c) {
            const auto [cn, unit] = unwrapped_elements(*c, min);
            n += unit ? 0 : cn;
        }
    const bool container = dynamic_cast<const ModuleListImpl*>(&m) != nullptr ||
                           dynamic_cast<const ModuleDictImpl*>(&m) != nullptr;
    return {n, !container && n >= min};
}
}  // namespace

WrapPolicy wrap_size_based(int64_t min_num_params) {
    if (min_num_params < 1)
        throw value_error("wrap_size_based: min_num_params must be at least 1, got " +
                          std::to_string(min_num_params));
    return
        [min_num_params](const Module& m) { return unwrapped_elements(m, min_num_params).second; };
}

namespace {
bool holds_selected(Module& m, const WrapPolicy& policy) {
    for (const auto& sub : m.modules(false))
        if (sub && policy(*sub))
            return true;
    return false;
}

void open(const std::shared_ptr<Module>& m, const std::string& path, const WrapPolicy& policy,
          std::vector<UnitStep>& out) {
    for (auto& [name, child] : m->named_children()) {
        const std::string p = path.empty() ? name : path + "." + name;
        if (policy && !policy(*child) && as_sequential(*child) && holds_selected(*child, policy))
            open(child, p, policy, out);
        else
            out.push_back({p, child});
    }
}
}  // namespace

std::vector<UnitStep> unit_steps(const std::shared_ptr<Module>& root, const WrapPolicy& policy,
                                 std::vector<UnitStep>* called) {
    std::vector<UnitStep> steps;
    if (!as_sequential(*root)) {
        steps.push_back({"", root});
    } else {
        open(root, "", policy, steps);
    }
    if (!policy)
        return steps;
    // a selected module must be a step or inside a selected step: the wrapper runs steps only
    for (auto& [path, m] : root->named_modules()) {
        if (!m || path.empty() || !policy(*m))
            continue;
        bool covered = false;
        for (const UnitStep& st : steps)
            if (path == st.path ||
                (policy(*st.module) && (st.path.empty() || path.rfind(st.path + ".", 0) == 0)))
                covered = true;
        if (called)  // inside a selected module its parent calls: part of that unit
            for (const UnitStep& c : *called)
                if (path.rfind(c.path + ".", 0) == 0)
                    covered = true;
        if (covered)
            continue;
        if (!called)
            throw value_error(
                "FullyShardedDataParallel: wrap_policy selects '" + path + "' (" + m->name() +
                "), which its parent's own forward calls: with checkpoint, or below stage 3, the "
                "wrapper gathers a unit only around a module it runs itself (a child of a "
                "Sequential, nested Sequentials included); hold the selected modules in a "
                "Sequential, or select a module that holds them");
        called->push_back({path, m});
    }
    return steps;
}

UnitGroups unit_groups(const std::vector<UnitStep>& steps, const std::vector<UnitStep>& called,
                       const FsdpState& s) {
    // the order: each step's own parameters, then the called units inside it, in order
    std::vector<const UnitStep*> order;
    UnitGroups out;
    std::vector<char> placed(called.size(), 0);
    for (size_t c = 0; c < steps.size(); ++c) {
        order.push_back(&steps[c]);
        out.slot.push_back({false, c});
        for (size_t i = 0; i < called.size(); ++i)
            if (!placed[i] &&
                (steps[c].path.empty() || called[i].path.rfind(steps[c].path + ".", 0) == 0)) {
                placed[i] = 1;
                order.push_back(&called[i]);
                out.slot.push_back({true, i});
            }
    }
    std::unordered_map<const TensorImpl*, size_t> index;
    for (size_t i = 0; i < s.params.size(); ++i)
        index[s.params[i].impl()] = i;
    std::vector<int64_t> owner(s.params.size(), -1);
    out.groups.resize(order.size());
    // the called units claim their parameters first; a step keeps the rest of its own
    for (bool inner : {true, false})
        for (size_t g = 0; g < order.size(); ++g) {
            if (out.slot[g].first != inner)
                continue;
            for (auto& [name, p] : order[g]->module->named_parameters()) {
                auto it = index.find(p.impl());
                if (it == index.end() || owner[it->second] == int64_t(g))
                    continue;
                if (const int64_t o = owner[it->second]; o >= 0) {
                    const std::string& op = order[size_t(o)]->path;
                    const bool inside =
                        !inner && out.slot[size_t(o)].first &&
                        (order[g]->path.empty() || op.rfind(order[g]->path + ".", 0) == 0);
                    if (!inside)
                        throw value_error("FullyShardedDataParallel: stage 3: parameter '" +
                                          s.names[it->second] + "' is used by units '" + op +
                                          "' and '" + order[g]->path +
                                          "'; wrap a module that holds both as one unit");
                    continue;
                }
                owner[it->second] = int64_t(g);
                out.groups[g].push_back(it->second);
            }
        }
    for (size_t i = 0; i < owner.size(); ++i)
        if (owner[i] < 0)
            throw value_error("FullyShardedDataParallel: stage 3: parameter '" + s.names[i] +
                              "' belongs to none of the units");
    return out;
}

std::vector<std::vector<size_t>> step_units(const FsdpState& s) {
    std::unordered_map<const TensorImpl*, size_t> index;
    for (size_t i = 0; i < s.params.size(); ++i)
        index[s.params[i].impl()] = i;
    std::vector<std::vector<size_t>> out;
    for (const UnitStep& st : s.steps) {
        out.emplace_back();
        for (const Tensor& p : st.module->parameters()) {
            auto it = index.find(p.impl());
            if (it != index.end())
                out.back().push_back(s.unit_of[it->second]);
        }
        std::sort(out.back().begin(), out.back().end());
        out.back().erase(std::unique(out.back().begin(), out.back().end()), out.back().end());
    }
    return out;
}

}  // namespace tg::nn
