#pragma once
/// ModuleList and ModuleDict: modules held by index or by name, registered as children (so their
/// parameters are the container's: "0.weight", "encoder.bias"), with no forward of their own;
/// as LibTorch's.
///
///     tg::nn::ModuleList blocks;
///     for (int i = 0; i < 6; ++i) blocks->push_back(Block(256, 4));
///     for (auto& b : *blocks) x = b->as<BlockImpl>()->forward(x);   // or blocks->at<BlockImpl>(i)
///     tg::nn::ModuleDict heads({{"cls", tg::nn::Linear(256, 10).ptr()}});
///     auto y = heads->at<tg::nn::LinearImpl>("cls").forward(x);
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// Modules by index, registered as "0", "1", ... Sequential is a ModuleList with a forward.
class ModuleListImpl : public Module {
public:
    using Iterator = std::vector<std::shared_ptr<Module>>::iterator;
    using ConstIterator = std::vector<std::shared_ptr<Module>>::const_iterator;

    ModuleListImpl() : Module("ModuleList") {}
    /// Appends each argument (holders such as Linear(...) or shared_ptrs to modules).
    template <class... Modules>
    explicit ModuleListImpl(Modules&&... modules) : Module("ModuleList") {
        (push_back(std::forward<Modules>(modules)), ...);
    }

    /// Appends a module under the name std::to_string(size()).
    template <class M>
    void push_back(std::shared_ptr<M> m) {
        push_back_named(std::to_string(modules_.size()), std::move(m));
    }
    template <class Impl>
    void push_back(const ModuleHolder<Impl>& holder) {
        push_back(holder.ptr());
    }
    /// Appends a module under a chosen name.
    template <class M>
    void push_back(std::string name, std::shared_ptr<M> m) {
        push_back_named(std::move(name), std::move(m));
    }
    template <class Impl>
    void push_back(std::string name, const ModuleHolder<Impl>& holder) {
        push_back_named(std::move(name), holder.ptr());
    }

    /// The i-th module; throws shape_error when i >= size().
    std::shared_ptr<Module> operator[](size_t i) const { return ptr(i); }
    std::shared_ptr<Module> ptr(size_t i) const;
    std::shared_ptr<Module> at(size_t i) const { return ptr(i); }
    /// The i-th module as M; throws tg::error if it is not an M.
    template <class M>
    M& at(size_t i) const {
        auto* m = dynamic_cast<M*>(ptr(i).get());
        if (!m)
            throw error(name() + "::at<T>(" + std::to_string(i) + "): module is a " +
                        ptr(i)->name() + ", not the requested type");
        return *m;
    }
    size_t size() const { return modules_.size(); }
    bool is_empty() const { return modules_.empty(); }

    Iterator begin() { return modules_.begin(); }
    Iterator end() { return modules_.end(); }
    ConstIterator begin() const { return modules_.begin(); }
    ConstIterator end() const { return modules_.end(); }

protected:
    /// For containers built on this one (Sequential): `name` is their type name.
    struct Named {
        const char* name;
    };
    explicit ModuleListImpl(Named n) : Module(n.name) {}

private:
    void push_back_named(std::string name, std::shared_ptr<Module> m);
    std::vector<std::shared_ptr<Module>> modules_;
};
TG_MODULE(ModuleList);

/// Modules by name, in insertion order.
class ModuleDictImpl : public Module {
public:
    using Item = std::pair<std::string, std::shared_ptr<Module>>;
    ModuleDictImpl() : Module("ModuleDict") {}
    /// Inserts each (name, module) in order.
    explicit ModuleDictImpl(const std::vector<Item>& items);

    /// Adds `m` under `key`; throws value_error for a taken, empty or dotted key.
    void insert(const std::string& key, std::shared_ptr<Module> m);
    template <class Impl>
    void insert(const std::string& key, const ModuleHolder<Impl>& holder) {
        insert(key, std::shared_ptr<Module>(holder.ptr()));
    }
    /// Inserts each (name, module) of items.
    void update(const std::vector<Item>& items);
    bool contains(const std::string& key) const;
    /// The module under key; throws value_error naming the key when there is none.
    std::shared_ptr<Module> operator[](const std::string& key) const;
    /// The module under key as M; throws tg::error if it is not an M.
    template <class M>
    M& at(const std::string& key) const {
        auto* m = dynamic_cast<M*>((*this)[key].get());
        if (!m)
            throw error("ModuleDict::at<T>(\"" + key + "\"): module is a " + (*this)[key]->name() +
                        ", not the requested type");
        return *m;
    }
    std::vector<std::string> keys() const;
    std::vector<std::shared_ptr<Module>> values() const;
    const std::vector<Item>& items() const { return items_; }
    size_t size() const { return items_.size(); }
    bool empty() const { return items_.empty(); }
    std::vector<Item>::const_iterator begin() const { return items_.begin(); }
    std::vector<Item>::const_iterator end() const { return items_.end(); }

private:
    std::vector<Item> items_;
};
TG_MODULE(ModuleDict);

}  // namespace tg::nn

#pragma GCC visibility pop
