#include "tapegrad/nn/module.hpp"

#include <algorithm>
#include <cctype>

#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"

namespace tg::nn {

Module::Module(std::string name) : name_(std::move(name)), label_(name_) {}
Module::~Module() = default;

Tensor Module::forward(const Tensor&) {
    throw error(label() + ": this module has no single-input forward(x)");
}

Tensor Module::operator()(const Tensor& x) {
    module_detail::CallScope call(*this);
    autograd::RecordScope scope(label());
    return forward(x);
}

void module_detail::set_call_hooks(Module& m, std::shared_ptr<CallHooks> hooks) {
    m.call_hooks_ = std::move(hooks);
}

void Module::check_new_name(const char* what, const std::string& name) const {
    if (name.empty() || name.find('.') != std::string::npos)
        throw value_error(label() + ": " + what + ": invalid name \"" + name +
                          "\" (empty or dotted)");
    for (auto* list : {&parameters_, &buffers_})
        for (auto& p : *list)
            if (p.first == name)
                throw value_error(label() + ": " + what + ": \"" + name +
                                  "\" is already registered");
}

Tensor& Module::register_parameter(std::string name, Tensor t, bool requires_grad) {
    check_new_name("register_parameter", name);
    if (!t.defined())
        throw value_error(label() + ": register_parameter(\"" + name + "\"): undefined tensor");
    if (requires_grad && !is_floating(t.dtype()))
        throw dtype_error(label() + ": register_parameter(\"" + name +
                          "\"): a parameter of shape " + shape_str(t.sizes()) + " and dtype " +
                          dtype_name(t.dtype()) +
                          " cannot require grad; register state with register_buffer");
    if (!t.is_leaf())
        t = t.detach();
    if (requires_grad)
        t.requires_grad_(true);
    parameters_.emplace_back(std::move(name), std::move(t));
    return parameters_.back().second;
}

Tensor& Module::register_buffer(std::string name, Tensor t) {
    check_new_name("register_buffer", name);
    if (!t.defined())
        throw value_error(label() + ": register_buffer(\"" + name + "\"): undefined tensor");
    buffers_.emplace_back(std::move(name), t.detach());
    return buffers_.back().second;
}

void Module::add_child(std::string name, std::shared_ptr<Module> m) {
    if (!m)
        throw value_error(label() + ": register_module(\"" + name + "\"): null module");
    if (name.empty() || name.find('.') != std::string::npos)
        throw value_error(label() + ": register_module: invalid name \"" + name +
                          "\" (empty or dotted)");
    for (auto& c : children_)
        if (c.first == name)
            throw value_error(label() + ": register_module: \"" + name +
                              "\" is already registered");
    m->registered_as_ = name;
    bool numeric = std::all_of(name.begin(), name.end(),
                               [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    m->label_ = numeric ? m->name_ + "[" + name + "]" : name;
    children_.emplace_back(std::move(name), std::move(m));
}

std::vector<Tensor> Module::parameters(bool recurse) const {
    std::vector<Tensor> out;
    for (auto& p : named_parameters(recurse))
        out.push_back(p.second);
    return out;
}

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
    OrderedDict<std::string, Tensor> out;
    for (auto& [pname, p] : parameters_)
        out.insert(pname, p);
    if (!recurse)
        return out;
    for (auto& [cname, child] : children_)
        for (auto& [pname, p] : child->named_parameters(true))
            out.insert(cname + "." + pname, p);
    return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
    std::vector<Tensor> out;
    for (auto& b : named_buffers(recurse))
        out.push_back(b.second);
    return out;
}

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
    OrderedDict<std::string, Tensor> out;
    for (auto& [bname, b] : buffers_)
        out.insert(bname, b);
    if (!recurse)
        return out;
    for (auto& [cname, child] : children_)
        for (auto& [bname, b] : child->named_buffers(true))
            out.insert(cname + "." + bname, b);
    return out;
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
    OrderedDict<std::string, std::shared_ptr<Module>> out("Submodule");
    for (auto& [cname, child] : children_)
        out.insert(cname, child);
    return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
    std::vector<std::shared_ptr<Module>> out;
    for (auto& c : children_)
        out.push_back(c.second);
    return out;
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& prefix,
                                                                        bool include_self) const {
    OrderedDict<std::string, std::shared_ptr<Module>> out;
    if (include_self) {
        // shared_from_this needs a shared owner; a stack-allocated root is listed as null.
        std::shared_ptr<Module> self;
        try {
            self = std::const_pointer_cast<Module>(shared_from_this());
        } catch (const std::bad_weak_ptr&) {
        }
        out.insert(prefix, self);
    }
    for (auto& [cname, child] : children_)
        for (auto& sub : child->named_modules(prefix.empty() ? cname : prefix + "." + cname))
            out.insert(sub.key(), sub.value());
    return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
    return named_modules("", include_self).values();
}

void Module::apply(const std::function<void(Module&)>& fn) {
    fn(*this);
    for (auto& c : children_)
        c.second->apply(fn);
}

void Module::apply(const std::function<void(const std::string&, Module&)>& fn,
                   const std::string& prefix) {
    fn(prefix, *this);
    for (auto& [cname, child] : children_)
        child->apply(fn, prefix.empty() ? cname : prefix + "." + cname);
}

void Module::train(bool on) {
    training_ = on;
    for (auto& c : children_)
        c.second->train(on);
}

void Module::eval() {
    train(false);
}

void Module::zero_grad(bool set_to_none) {
    NoGradGuard guard;
    for (auto& p : parameters()) {
        Tensor g = p.grad();
        if (!g.defined())
            continue;
        if (set_to_none)
            p.impl()->grad.reset();
        else
            g.zero_();
    }
}

// Note [Parameter identity]: to(device|dtype) replaces the data of each parameter's TensorImpl
// in place (storage, strides, dtype), as PyTorch's `param.data = ...` does. Every Tensor handle
// to the parameter (the module's members, an optimizer's param groups) therefore sees the new
// data, and the parameter stays a leaf that requires grad. Converting between a forward and its
// backward is not supported (the saved tensors would refer to the old data).
namespace {
void set_data(const Tensor& p, const Tensor& data) {
    TensorImpl* dst = p.impl();
    TensorImpl* src = data.impl();
    dst->storage = src->storage;
    dst->sizes = src->sizes;
    dst->strides = src->strides;
    dst->offset = src->offset;
    dst->dtype = src->dtype;
}
}  // namespace

void Module::to(Device d, bool /*non_blocking*/) {
    // parameters() recurses, so apply only to this module's own parameters here
    NoGradGuard guard;
    for (auto& [name, p] : parameters_) {
        (void)name;
        if (p.device() == d)
            continue;
        Tensor data = p.detach().to(d);
        Tensor g = p.grad();
        Tensor new_g = g.defined() ? g.detach().to(d) : Tensor();
        set_data(p, data);
        p.impl()->grad = new_g.defined() ? new_g.impl_ptr() : nullptr;
    }
    for (auto& [name, b] : buffers_) {
        (void)name;
        if (b.device() != d)
            set_data(b, b.to(d));
    }
    for (auto& c : children_)
        c.second->to(d);
}

void Module::to(Dtype d, bool /*non_blocking*/) {
    if (!is_floating(d))
        throw dtype_error(label() + ".to(" + dtype_name(d) +
                          "): parameters must be floating point");
    NoGradGuard guard;
    for (auto& [name, p] : parameters_) {
        (void)name;
        if (p.dtype() == d || !is_floating(p.dtype()))
            continue;
        Tensor data = p.detach().to(d);
        Tensor g = p.grad();
        Tensor new_g = g.defined() ? g.detach().to(d) : Tensor();
        set_data(p, data);
        p.impl()->grad = new_g.defined() ? new_g.impl_ptr() : nullptr;
    }
    for (auto& [name, b] : buffers_) {
        (void)name;
        if (b.dtype() != d && is_floating(b.dtype()))
            set_data(b, b.to(d));
    }
    for (auto& c : children_)
        c.second->to(d);
}

void Module::to(Device device, Dtype dtype, bool non_blocking) {
    to(dtype, non_blocking);
    to(device, non_blocking);
}

void Module::pretty_print(std::ostream& os) const {
    os << name_;
}

namespace {
void print_tree(std::ostream& os, const Module& m, int indent) {
    m.pretty_print(os);
    auto kids = m.named_children();
    if (kids.is_empty())
        return;
    os << "(\n";
    for (auto& [n, c] : kids) {
        os << std::string(indent + 2, ' ') << "(" << n << "): ";
        print_tree(os, *c, indent + 2);
        os << "\n";
    }
    os << std::string(indent, ' ') << ")";
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Module& m) {
    print_tree(os, m, 0);
    return os;
}

}  // namespace tg::nn
