#pragma once
// The state of a MemoryBudget (budget.cpp, Note [Dynamic rematerialization]).
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "autograd/budget.hpp"
#include "autograd/hooks.hpp"
#include "tapegrad/memory_budget.hpp"

namespace tg::autograd::detail {

/// A MemoryBudget made while another was active on the thread (Note [Nested budgets] in
/// memory_budget.cpp): a tighter cap, while it is alive, on the bytes of the entries made under
/// it (and under the ones nested in it), inside the budget's own.
struct BudgetCap {
    int64_t limit = 0;
    int64_t resident = 0;  // its entries' resident bytes
    bool alive = true;
    std::shared_ptr<BudgetCap> outer;  // the cap it was made under, or null: the budget's own
    MemoryBudgetReport report;         // for its entries
};

/// One buffer the budget keeps: an activation, resident or evicted, and how to make it again.
struct BudgetEntry : std::enable_shared_from_this<BudgetEntry> {
    Tensor t;  // the budget's own alias of the buffer (never handed out); undefined: evicted
    Shape sizes, strides;
    int64_t offset = 0;
    Dtype dtype = Dtype::Float32;
    int64_t nbytes = 0;
    uint32_t version = 0;  // the buffer's version when it was made (and is remade at)
    std::string name;      // the op that made it
    Recipe recipe;         // empty: pinned
    struct Input {
        std::shared_ptr<BudgetEntry> entry;  // the entry of its buffer, or null:
        Tensor plain;                        // a leaf (or undefined), held as it is
        Shape sizes, strides;                // with entry: the input's view of the buffer
        int64_t offset = 0;
        uint32_t version = 0;  // the buffer's (or leaf's) version when the op used it
    };
    std::vector<Input> inputs;
    double cost = 0;  // seconds: measured (the last time it was made)
    /// The mean of every measured time of its op at its size (Note [Op cost]); null: `cost`
    const std::pair<double, int64_t>* mean = nullptr;
    double seconds() const { return mean ? mean->first / double(mean->second) : cost; }
    uint64_t last_use = 0;
    uint64_t made = 0;  // when it was first made (its place in the forward; backward runs back)
    bool pinned = false;
    bool awaiting_op = false;  // saved as an output before its op recorded
    /// Saved tensors that hold it (BudgetHandle); 0: only another entry's recomputation needs it
    std::atomic<int> handles{0};
    uint32_t scratch = 0;            // its index during evicted_neighbourhood
    std::shared_ptr<BudgetCap> cap;  // the innermost nested budget alive when it was made
};

/// f on each cap that counts e, innermost first.
template <class F>
void for_caps(const BudgetEntry& e, F&& f) {
    for (BudgetCap* c = e.cap.get(); c; c = c->outer.get())
        f(*c);
}

/// A new alias of t's buffer with the given geometry (or t's), without history (budget.cpp).
Tensor alias(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset);
Tensor alias(const Tensor& t);

/// Per entry of `all` (the budget's entries, in order): its own cost plus that of the evicted
/// entries next to it (Note [Evicted neighbourhood] in budget_evict.cpp); meaningful for the
/// resident ones.
std::vector<double> evicted_neighbourhood(const std::vector<std::shared_ptr<BudgetEntry>>& all);

/// How long until the entry is needed (Note [Looking ahead in backward] in budget_evict.cpp):
/// in forward the time since its last use, in backward how far before the entry the backward
/// read last it was made.
double staleness(const BudgetEntry& e, uint64_t clock, bool backward, uint64_t frontier);

/// Note [create_graph through a kept tensor] (budget_custom.cpp): what a handle keeps of the
/// saved tensor's history (its grad_fn, without the buffer), and the unpacked tensor given it.
std::shared_ptr<TensorImpl> saved_history(const Tensor& t, SavedKind kind);
Tensor with_history(Tensor t, SavedKind kind, const std::shared_ptr<TensorImpl>& history);

struct Budget final : SavedHooks, std::enable_shared_from_this<Budget> {
    using Clock = std::chrono::steady_clock;
    explicit Budget(int64_t bytes);
    ~Budget() override;
    std::shared_ptr<PackedSaved> pack(const Tensor& t, SavedKind kind) override;
    void recorded(const char* name, std::initializer_list<const Tensor*> inputs, const Tensor& out);
    void set_recipe(const Tensor& out, Recipe r);
    /// What a record_list op made, each with its recipe (budget_custom.cpp).
    void recorded_outputs(const char* name, const std::vector<Tensor>& inputs,
                          std::vector<BudgetMade> made);
    /// The entry's buffer, recomputed (recursively) if it was evicted: a new alias of it
    /// (budget_backward.cpp).
    Tensor materialize(BudgetEntry& e);
    /// Drops entries nothing needs any more (no handle, no recipe, the caller let go).
    void prune();
    void name_pending(const char* name);
    /// Whether the budget keeps an alias of this buffer (in-place ops discount it).
    bool keeps(const Storage* st) const { return by_storage_.count(st) != 0; }
    /// A backward reads the entry (before materialize): victims are chosen by how soon the
    /// backward needs them, until the next save or recorded op.
    void reading(const BudgetEntry& e) {
        backward_ = true;
        frontier_ = e.made;
    }
    /// After a backward's read: the next recorded op's cost is measured from here.
    void read_done() { last_record_ = Clock::now(); }

    std::recursive_mutex mu;
    int64_t limit;
    int64_t resident = 0;
    MemoryBudgetReport report;
    std::shared_ptr<BudgetCap> cap;  // the innermost nested budget alive, or null

private:
    void settle();
    /// Room for n more bytes under the budget and under each live cap from `in` out.
    void ensure_room(int64_t n, const std::string& what, BudgetCap* in);
    void evict(BudgetEntry& e);
    void add_resident(BudgetEntry& e, const Tensor& t);
    /// A resident entry for an op's new output buffer, room made for it first.
    BudgetEntry* new_entry(const Tensor& out, const char* name);
    void drop_resident(BudgetEntry& e);
    void pin(BudgetEntry& e, const std::string& why);
    /// e (an output of op e.name) took `seconds` to make (Note [Op cost] in budget_evict.cpp).
    void measured(BudgetEntry& e, double seconds);

    std::vector<std::shared_ptr<BudgetEntry>> entries_;            // in the order made
    std::unordered_map<const Storage*, BudgetEntry*> by_storage_;  // the resident ones
    size_t prune_at_ = 64;
    uint64_t clock_ = 0;
    bool backward_ = false;
    uint64_t frontier_ = 0;  // in backward: when the entry read last was made
    Clock::time_point last_record_ = Clock::now();
    BudgetEntry* last_made_ = nullptr;   // the latest op's output: its recipe may follow
    std::vector<BudgetEntry*> unnamed_;  // pinned buffers saved before their op recorded
    /// Per op name and output bytes: the summed measured seconds and how many (Note [Op cost])
    std::unordered_map<std::string, std::pair<double, int64_t>> op_cost_;
};

}  // namespace tg::autograd::detail
