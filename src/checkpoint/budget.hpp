#pragma once
// The state of a MemoryBudget (budget.cpp, Note [Dynamic rematerialization]).
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/budget.hpp"
#include "autograd/hooks.hpp"
#include "tapegrad/memory_budget.hpp"

namespace tg::autograd::detail {

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
    double cost = 0;  // seconds: measured
    uint64_t last_use = 0;
    bool pinned = false;
    bool awaiting_op = false;  // saved as an output before its op recorded
    /// Saved tensors that hold it (BudgetHandle); 0: only another entry's recomputation needs it
    std::atomic<int> handles{0};
};

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
    /// The entry's buffer, recomputed (recursively) if it was evicted: a new alias of it.
    Tensor materialize(BudgetEntry& e);
    /// Drops entries nothing needs any more (no handle, no recipe, the caller let go).
    void prune();
    void name_pending(const char* name);
    /// Whether the budget keeps an alias of this buffer (in-place ops discount it).
    bool keeps(const Storage* st) const { return by_storage_.count(st) != 0; }

    std::recursive_mutex mu;
    int64_t limit;
    int64_t resident = 0;
    MemoryBudgetReport report;

private:
    void settle();
    void ensure_room(int64_t n, const std::string& what);
    void add_resident(BudgetEntry& e, const Tensor& t);
    void drop_resident(BudgetEntry& e);
    void pin(BudgetEntry& e, const std::string& why);

    std::vector<std::shared_ptr<BudgetEntry>> entries_;            // in the order made
    std::unordered_map<const Storage*, BudgetEntry*> by_storage_;  // the resident ones
    size_t prune_at_ = 64;
    uint64_t clock_ = 0;
    Clock::time_point last_record_ = Clock::now();
    BudgetEntry* last_made_ = nullptr;   // the latest op's output: its recipe may follow
    std::vector<BudgetEntry*> unnamed_;  // pinned buffers saved before their op recorded
};

}  // namespace tg::autograd::detail
