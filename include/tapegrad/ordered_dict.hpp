#pragma once
/// tg::OrderedDict<Key, Value>, as torch::OrderedDict: items kept in insertion order and found
/// by key. Module::named_parameters(), named_buffers(), named_children() and named_modules()
/// return one:
///
///     auto params = model->named_parameters();
///     tg::Tensor w = params["fc1.weight"];              // value_error if there is none
///     if (tg::Tensor* b = params.find("fc1.bias")) ...  // null if there is none
///     for (auto& item : params) std::cout << item.key() << " " << item->sizes() << "\n";
///     for (auto& [name, p] : params) ...                 // an item is also a std::pair
///
/// A missing key throws tg::value_error "<key description> '<key>' is not defined" (LibTorch
/// throws c10::Error with that message: catch tg::error to catch both), an index past the end
/// or front()/back() of an empty dict tg::shape_error, a second insert of a key tg::value_error
/// "<description> '<key>' already defined", as LibTorch words them.
#include <cstddef>
#include <initializer_list>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tapegrad/error.hpp"
#pragma GCC visibility push(default)

namespace tg {

template <class Key, class Value>
class OrderedDict {
public:
    /// A (key, value) entry: key(), value(), pair(), *item and item-> for the value; it is a
    /// std::pair too (first, second), so structured bindings work.
    class Item : public std::pair<Key, Value> {
    public:
        Item(Key key, Value value) : std::pair<Key, Value>(std::move(key), std::move(value)) {}
        const Key& key() const noexcept { return this->first; }
        Value& value() noexcept { return this->second; }
        const Value& value() const noexcept { return this->second; }
        const std::pair<Key, Value>& pair() const noexcept { return *this; }
        Value& operator*() { return this->second; }
        const Value& operator*() const { return this->second; }
        Value* operator->() { return &this->second; }
        const Value* operator->() const { return &this->second; }
    };
    using Iterator = typename std::vector<Item>::iterator;
    using ConstIterator = typename std::vector<Item>::const_iterator;

    /// key_description names the keys in error messages ("Key", "Submodule", ...).
    explicit OrderedDict(std::string key_description = "Key")
        : description_(std::move(key_description)) {}
    OrderedDict(std::initializer_list<Item> items) : OrderedDict() {
        for (const Item& i : items)
            insert(i.key(), i.value());
    }
    const std::string& key_description() const noexcept { return description_; }

    Item& front() { return items_.at(checked(0, "front()")); }
    const Item& front() const { return items_.at(checked(0, "front()")); }
    Item& back() { return items_.at(checked(items_.size() - 1, "back()")); }
    const Item& back() const { return items_.at(checked(items_.size() - 1, "back()")); }
    /// The index-th item; shape_error "Index i is out of bounds" past the end.
    Item& operator[](size_t index) { return items_[checked(index, nullptr)]; }
    const Item& operator[](size_t index) const { return items_[checked(index, nullptr)]; }
    /// The value under key; value_error "<description> '<key>' is not defined" without one.
    Value& operator[](const Key& key) { return items_[index_of(key)].value(); }
    const Value& operator[](const Key& key) const { return items_[index_of(key)].value(); }
    /// The value under key, or null.
    Value* find(const Key& key) noexcept {
        auto it = index_.find(key);
        return it == index_.end() ? nullptr : &items_[it->second].value();
    }
    const Value* find(const Key& key) const noexcept {
        auto it = index_.find(key);
        return it == index_.end() ? nullptr : &items_[it->second].value();
    }
    bool contains(const Key& key) const noexcept { return index_.count(key) != 0; }

    Iterator begin() { return items_.begin(); }
    ConstIterator begin() const { return items_.begin(); }
    Iterator end() { return items_.end(); }
    ConstIterator end() const { return items_.end(); }
    size_t size() const noexcept { return items_.size(); }
    bool is_empty() const noexcept { return items_.empty(); }
    void reserve(size_t n) {
        index_.reserve(n);
        items_.reserve(n);
    }

    /// Adds (key, value) at the end; value_error if key is taken. Returns the stored value.
    template <class K, class V>
    Value& insert(K&& key, V&& value) {
        if (index_.count(key) != 0)
            throw value_error(described(key) + " already defined");
        items_.emplace_back(Key(key), Value(std::forward<V>(value)));
        index_.emplace(std::forward<K>(key), items_.size() - 1);
        return items_.back().value();
    }
    Value& insert(Key key, Value&& value) {
        return insert<Key, Value>(std::move(key), std::move(value));
    }
    /// Inserts every item of other (value_error on a taken key).
    void update(const OrderedDict& other) {
        reserve(size() + other.size());
        for (const Item& i : other)
            insert(i.key(), i.value());
    }
    /// Removes key; value_error "Key '<key>' doesn't exist" without one.
    void erase(const Key& key) {
        auto it = index_.find(key);
        if (it == index_.end())
            throw value_error("Key '" + text(key) + "' doesn't exist");
        const size_t at = it->second;
        index_.erase(it);
        items_.erase(items_.begin() + std::ptrdiff_t(at));
        for (auto& [k, i] : index_)
            if (i > at)
                --i;
    }
    void clear() {
        index_.clear();
        items_.clear();
    }

    const std::vector<Item>& items() const noexcept { return items_; }
    std::vector<Key> keys() const {
        std::vector<Key> out;
        out.reserve(size());
        for (const Item& i : items_)
            out.push_back(i.key());
        return out;
    }
    std::vector<Value> values() const {
        std::vector<Value> out;
        out.reserve(size());
        for (const Item& i : items_)
            out.push_back(i.value());
        return out;
    }
    std::vector<std::pair<Key, Value>> pairs() const {
        return std::vector<std::pair<Key, Value>>(items_.begin(), items_.end());
    }

private:
    static std::string text(const Key& key) {
        std::ostringstream os;
        os << key;
        return os.str();
    }
    std::string described(const Key& key) const { return description_ + " '" + text(key) + "'"; }
    size_t index_of(const Key& key) const {
        auto it = index_.find(key);
        if (it == index_.end())
            throw value_error(described(key) + " is not defined");
        return it->second;
    }
    size_t checked(size_t index, const char* what) const {
        if (what && items_.empty())
            throw shape_error(std::string("Called ") + what + " on an empty OrderedDict");
        if (index >= items_.size())
            throw shape_error("Index " + std::to_string(index) + " is out of bounds");
        return index;
    }

    std::unordered_map<Key, size_t> index_;
    std::vector<Item> items_;
    std::string description_;
};

}  // namespace tg

#pragma GCC visibility pop
