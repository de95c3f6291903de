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
        int64_t bytes = 0;
        for (const auto& s : n->saved_) {
            bytes += s.bytes;
            if (storages.insert(s.storage).second)
                r.total_bytes += s.bytes;
        }
        r.entries.push_back({n->name_, n->scope_, n->seq_, bytes});
    }
    return r;
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
