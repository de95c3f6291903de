// saved_report(): what a graph keeps alive for backward.
#include <algorithm>
#include <iomanip>
#include <ostream>
#include <unordered_set>

#include "tapegrad/autograd.hpp"

namespace tg::autograd {

SavedReport saved_report(const Tensor& root) {
    SavedReport r;
    if (!root.defined())
        throw value_error("saved_report: undefined tensor");
    if (!root.grad_fn())
        return r;
    std::vector<Node*> nodes, stack{root.grad_fn().get()};
    std::unordered_set<Node*> seen{root.grad_fn().get()};
    while (!stack.empty()) {
        Node* n = stack.back();
        stack.pop_back();
        nodes.push_back(n);
        for (auto& e : n->next_)
            if (e.fn && seen.insert(e.fn.get()).second)
                stack.push_back(e.fn.get());
    }
    std::sort(nodes.begin(), nodes.end(), [](Node* a, Node* b) { return a->seq_ < b->seq_; });
    std::unordered_set<const void*> storages;
    for (Node* n : nodes) {
        if (n->saved_.empty())
            continue;
        int64_t bytes = 0, first = 0;
        for (const auto& s : n->saved_) {
            bytes += s.bytes;
            if (storages.insert(s.storage).second)
                first += s.bytes;
        }
        r.total_bytes += first;
        r.entries.push_back({n->name_, n->scope_, n->seq_, bytes, first});
    }
    return r;
}

std::vector<std::pair<std::string, int64_t>> SavedReport::by_scope(int depth) const {
    std::vector<std::pair<std::string, int64_t>> out;
    for (const Entry& e : entries) {
        std::string key = e.scope.empty() ? "-" : e.scope;
        size_t cut = std::string::npos;  // the depth-th dot
        for (int d = 0; d < std::max(depth, 1); ++d)
            if ((cut = key.find('.', d == 0 ? 0 : cut + 1)) == std::string::npos)
                break;
        if (cut != std::string::npos)
            key.resize(cut);
        auto it =
            std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == key; });
        if (it == out.end())
            out.emplace_back(key, e.first_bytes);
        else
            it->second += e.first_bytes;
    }
    return out;
}

std::ostream& operator<<(std::ostream& os, const SavedReport& r) {
    os << std::left << std::setw(8) << "tape#" << std::setw(24) << "op" << std::setw(24) << "scope"
       << "saved bytes\n";
    for (const auto& e : r.entries)
        os << std::setw(8) << e.seq << std::setw(24) << e.op << std::setw(24)
           << (e.scope.empty() ? "-" : e.scope) << e.bytes << "\n";
    return os << "total (each buffer once): " << r.total_bytes << " bytes\n";
}

}  // namespace tg::autograd
