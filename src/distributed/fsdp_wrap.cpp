// nn::FullyShardedDataParallel's units at stage 3: which modules the wrapper runs one after the
// other, each between the gather and the release of its parameters (ShardingOptions::wrap_policy).
#include <algorithm>
#include <string>
#include <typeinfo>
#include <unordered_map>

#include "distributed/fsdp.hpp"
#include "tapegrad/nn/sequential.hpp"

namespace tg::nn {

SequentialImpl* as_sequential(Module& m) {
    return typeid(m) == typeid(SequentialImpl) ? static_cast<SequentialImpl*>(&m) : nullptr;
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

std::vector<UnitStep> unit_steps(const std::shared_ptr<Module>& root, const WrapPolicy& policy) {
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
        if (!covered)
            throw value_error(
                "FullyShardedDataParallel: wrap_policy selects '" + path + "' (" + m->name() +
                "), which its parent's own forward calls: the wrapper gathers a unit only around "
                "a module it runs itself (a child of a Sequential, nested Sequentials included); "
                "hold the selected modules in a Sequential, or select a module that holds them");
    }
    return steps;
}

std::vector<std::vector<size_t>> unit_groups(const std::vector<UnitStep>& steps,
                                             const FsdpState& s) {
    std::unordered_map<const TensorImpl*, size_t> index;
    for (size_t i = 0; i < s.params.size(); ++i)
        index[s.params[i].impl()] = i;
    std::vector<int64_t> step_of(s.params.size(), -1);
    std::vector<std::vector<size_t>> groups;
    for (const UnitStep& st : steps) {
        const int64_t c = int64_t(groups.size());
        groups.emplace_back();
        for (auto& [name, p] : st.module->named_parameters()) {
            auto it = index.find(p.impl());
            if (it == index.end() || step_of[it->second] == c)
                continue;
            if (step_of[it->second] >= 0)
                throw value_error("FullyShardedDataParallel: stage 3: parameter '" +
                                  s.names[it->second] + "' is used by units '" +
                                  steps[size_t(step_of[it->second])].path + "' and '" + st.path +
                                  "'; wrap a module that holds both as one unit");
            step_of[it->second] = c;
            groups.back().push_back(it->second);
        }
    }
    for (size_t i = 0; i < step_of.size(); ++i)
        if (step_of[i] < 0)
            throw value_error("FullyShardedDataParallel: stage 3: parameter '" + s.names[i] +
                              "' belongs to none of the units");
    return groups;
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
