#include "tapegrad/nn/parameter_list.hpp"

#include <algorithm>
#include <string>

#include "tapegrad/error.hpp"

namespace tg::nn {

namespace {

/// LibTorch's name of a dtype as its ScalarType prints ("Float", "Long").
const char* scalar_type_name(Dtype d) {
    switch (d) {
        case kFloat32:
            return "Float";
        case kFloat64:
            return "Double";
        case kInt64:
            return "Long";
        case kInt32:
            return "Int";
        case kInt16:
            return "Short";
        case kInt8:
            return "Char";
        case kUInt8:
            return "Byte";
        case kBool:
            return "Bool";
        case kFloat16:
            return "Half";
        case kBFloat16:
            return "BFloat16";
    }
    return "?";
}

/// "[2, 3]", as LibTorch prints sizes.
std::string sizes_of(const Tensor& t) {
    std::string s = "[";
    for (size_t i = 0; i < t.sizes().size(); ++i)
        s += (i ? ", " : "") + std::to_string(t.sizes()[i]);
    return s + "]";
}

template <class Items>
void print_items(std::ostream& os, const char* name, const Items& items) {
    os << name << "(\n";
    for (const auto& item : items)
        os << "(" << item.key() << "): Parameter containing: ["
           << scalar_type_name(item.value().dtype()) << " of size " << sizes_of(item.value())
           << "]\n";
    os << ")";
}

}  // namespace

void ParameterListImpl::append(const Tensor& param) {
    register_parameter(std::to_string(size()), param, param.defined() && param.requires_grad());
}

Tensor& ParameterListImpl::at(size_t idx) {
    if (idx >= size())
        throw shape_error(label() + ": index " + std::to_string(idx) + " is out of range (size " +
                          std::to_string(size()) + ")");
    return own_parameters()[idx].value();
}

const Tensor& ParameterListImpl::at(size_t idx) const {
    if (idx >= size())
        throw shape_error(label() + ": index " + std::to_string(idx) + " is out of range (size " +
                          std::to_string(size()) + ")");
    return own_parameters()[idx].value();
}

void ParameterListImpl::pretty_print(std::ostream& os) const {
    print_items(os, "ParameterList", own_parameters());
}

ParameterDictImpl::ParameterDictImpl(const OrderedDict<std::string, Tensor>& params)
    : Module("ParameterDict") {
    for (const auto& item : params)
        insert(item.key(), item.value());
}

Tensor& ParameterDictImpl::insert(std::string key, Tensor param) {
    const bool requires_grad = param.defined() && param.requires_grad();
    return register_parameter(std::move(key), std::move(param), requires_grad);
}

Tensor ParameterDictImpl::pop(const std::string& key) {
    auto& items = own_parameters();
    const auto it = std::find_if(items.begin(), items.end(),
                                 [&](const auto& item) { return item.key() == key; });
    if (it == items.end())
        throw value_error(label() + ": pop: key '" + key + "' is not defined");
    Tensor v = it->value();
    items.erase(it);
    return v;
}

std::vector<std::string> ParameterDictImpl::keys() const {
    std::vector<std::string> out;
    for (const auto& item : own_parameters())
        out.push_back(item.key());
    return out;
}

std::vector<Tensor> ParameterDictImpl::values() const {
    std::vector<Tensor> out;
    for (const auto& item : own_parameters())
        out.push_back(item.value());
    return out;
}

bool ParameterDictImpl::contains(const std::string& key) const noexcept {
    for (const auto& item : own_parameters())
        if (item.key() == key)
            return true;
    return false;
}

Tensor& ParameterDictImpl::get(const std::string& key) {
    for (auto& item : own_parameters())
        if (item.key() == key)
            return item.value();
    throw value_error(label() + ": key '" + key + "' is not defined");
}

const Tensor& ParameterDictImpl::get(const std::string& key) const {
    for (const auto& item : own_parameters())
        if (item.key() == key)
            return item.value();
    throw value_error(label() + ": key '" + key + "' is not defined");
}

void ParameterDictImpl::pretty_print(std::ostream& os) const {
    print_items(os, "ParameterDict", own_parameters());
}

}  // namespace tg::nn
