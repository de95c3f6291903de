#include "tapegrad/nn/container.hpp"

namespace tg::nn {

std::shared_ptr<Module> ModuleListImpl::ptr(size_t i) const {
    if (i >= modules_.size())
        throw shape_error(name() + ": index " + std::to_string(i) + " out of range for " +
                          std::to_string(modules_.size()) + " modules");
    return modules_[i];
}

void ModuleListImpl::push_back_named(std::string key, std::shared_ptr<Module> m) {
    register_module(std::move(key), m);
    modules_.push_back(std::move(m));
}

ModuleDictImpl::ModuleDictImpl(const std::vector<Item>& items) : Module("ModuleDict") {
    update(items);
}

void ModuleDictImpl::insert(const std::string& key, std::shared_ptr<Module> m) {
    register_module(key, m);  // checks the key and the module
    items_.emplace_back(key, std::move(m));
}

void ModuleDictImpl::update(const std::vector<Item>& items) {
    for (const Item& item : items)
        insert(item.first, item.second);
}

bool ModuleDictImpl::contains(const std::string& key) const {
    for (const Item& item : items_)
        if (item.first == key)
            return true;
    return false;
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
    for (const Item& item : items_)
        if (item.first == key)
            return item.second;
    throw value_error("ModuleDict: no module named \"" + key + "\"");
}

std::vector<std::string> ModuleDictImpl::keys() const {
    std::vector<std::string> k;
    for (const Item& item : items_)
        k.push_back(item.first);
    return k;
}

std::vector<std::shared_ptr<Module>> ModuleDictImpl::values() const {
    std::vector<std::shared_ptr<Module>> v;
    for (const Item& item : items_)
        v.push_back(item.second);
    return v;
}

}  // namespace tg::nn
