// tg::save / tg::load of modules and optimizers, as records of a TGSV file (io/tgsv.hpp).
#include <map>
#include <set>
#include <unordered_map>

#include "io/tgsv.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/io.hpp"

namespace tg {
namespace {

using namespace io_detail;

const char* kind_name(uint32_t k) {
    return k == kKindModule      ? "module parameters"
           : k == kKindOptimizer ? "optimizer state"
           : k == kKindTensors   ? "tensors"
                                 : "unknown data";
}

/// Runs check(), turning the value, shape and dtype errors of the checks it reuses into an
/// io_error naming the file and `what`: a bad file is always an io_error.
template <class F>
void as_io_error(const std::string& where, const std::string& what, F&& check) {
    try {
        check();
    } catch (const value_error& e) {
        throw io_error(where + ": " + what + ": " + e.what());
    } catch (const shape_error& e) {
        throw io_error(where + ": " + what + ": " + e.what());
    } catch (const dtype_error& e) {
        throw io_error(where + ": " + what + ": " + e.what());
    }
}

/// What a module file holds: the parameters, then the buffers, by their dotted names.
std::vector<std::pair<std::string, Tensor>> state_of(const nn::Module& m) {
    auto out = m.named_parameters().pairs();
    for (auto& b : m.named_buffers())
        out.push_back(b.pair());
    return out;
}

}  // namespace

void save(const nn::Module& m, const std::string& path) {
    std::vector<OutRecord> records;
    for (auto& [name, p] : state_of(m))
        records.push_back(record_of(name, p));
    write_file(path, kKindModule, m.name(), records);
}

void load(nn::Module& m, const std::string& path) {
    const std::string where = "load(" + path + ")";
    InFile f = read_file(path, where);
    if (f.kind != kKindModule)
        throw io_error(where + ": the file holds " + kind_name(f.kind) + ", not module parameters");
    auto params = state_of(m);
    std::map<std::string, const InRecord*> by_name;
    for (auto& rec : f.records)
        if (!by_name.emplace(rec.name, &rec).second)
            throw io_error(where + ": parameter \"" + rec.name + "\" appears twice in the file");
    std::set<std::string> model_names;
    const size_t num_params = m.named_parameters().size();
    for (size_t i = 0; i < params.size(); ++i) {
        const auto& [name, p] = params[i];
        const std::string what = (i < num_params ? "parameter \"" : "buffer \"") + name + "\"";
        model_names.insert(name);
        auto it = by_name.find(name);
        if (it == by_name.end())
            throw io_error(where + ": " + what + " of the model is missing from the file");
        check_matches(where, what, *it->second, p.dtype(), p.sizes(), "model");
    }
    for (auto& rec : f.records)
        if (!model_names.count(rec.name))
            throw io_error(where + ": parameter \"" + rec.name +
                           "\" in the file is not in the model");
    // everything validated: convert all, then copy (a copy into the model cannot fail on shape)
    std::vector<Tensor> values;
    for (auto& [name, p] : params)  // read on the host, then moved to the parameter's device
        values.push_back(tensor_of(*by_name.at(name)).to(p.device()));
    NoGradGuard guard;
    for (size_t i = 0; i < params.size(); ++i)
        Tensor(params[i].second).copy_(values[i]);
}

void save(const optim::Optimizer& o, const std::string& path) {
    std::vector<OutRecord> records;
    const auto& groups = o.param_groups();
    for (size_t g = 0; g < groups.size(); ++g) {
        const std::string pre = "param_groups." + std::to_string(g);
        records.push_back(scalar_record(pre + ".lr", groups[g].options().get_lr()));
        records.push_back(int_record(pre + ".size", int64_t(groups[g].params().size())));
    }
    auto params = o.parameters();
    for (size_t i = 0; i < params.size(); ++i) {
        auto it = o.state().find(params[i].impl());
        if (it == o.state().end())
            continue;
        const std::string pre = "state." + std::to_string(i);
        records.push_back(int_record(pre + ".step", it->second->step()));
        for (auto& [name, t] : it->second->tensors())
            if (t->defined())
                records.push_back(record_of(pre + "." + name, *t));
    }
    write_file(path, kKindOptimizer, o.type_name(), records);
}

void load(optim::Optimizer& o, const std::string& path) {
    const std::string where = "load(" + path + ")";
    InFile f = read_file(path, where);
    if (f.kind != kKindOptimizer)
        throw io_error(where + ": the file holds " + kind_name(f.kind) + ", not optimizer state");
    if (f.type != o.type_name())
        throw io_error(where + ": the file holds " + f.type + " state, the optimizer is " +
                       o.type_name());
    auto& groups = o.param_groups();
    auto params = o.parameters();
    std::set<std::string> names;
    for (auto& rec : f.records)
        if (!names.insert(rec.name).second)
            throw io_error(where + ": record \"" + rec.name + "\" appears twice in the file");
    std::vector<bool> seen_lr(groups.size()), seen_size(groups.size());
    std::map<size_t, std::unique_ptr<optim::OptimizerParamState>> states;
    std::vector<std::pair<Tensor*, const InRecord*>> fills;  // validated, applied below
    auto bad_name = [&](const std::string& n) {
        return io_error(where + ": unexpected record \"" + n + "\" for " + o.type_name() +
                        " with " + std::to_string(groups.size()) + " group(s) of " +
                        std::to_string(params.size()) + " parameter(s)");
    };
    auto index_of = [&](const std::string& s, size_t limit, const std::string& n) {
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9)
            throw bad_name(n);
        size_t i = size_t(std::stoul(s));
        if (i >= limit)
            throw bad_name(n);
        return i;
    };
    auto scalar_of = [&](const InRecord& rec, Dtype d) {
        check_matches(where, "\"" + rec.name + "\"", rec, d, {}, "format");
        return tensor_of(rec);
    };
    // pass 1: step records create the states; pass 2: the state tensors fill them
    for (int pass = 0; pass < 2; ++pass)
        for (auto& rec : f.records) {
            const std::string& n = rec.name;
            size_t dot1 = n.find('.'), dot2 = n.find('.', dot1 == std::string::npos ? 0 : dot1 + 1);
            if (dot1 == std::string::npos || dot2 == std::string::npos)
                throw bad_name(n);
            std::string head = n.substr(0, dot1), idx = n.substr(dot1 + 1, dot2 - dot1 - 1),
                        field = n.substr(dot2 + 1);
            if (head == "param_groups") {
                size_t g = index_of(idx, groups.size(), n);
                if (pass == 1)
                    continue;
                if (field == "lr") {
                    // not applied (LibTorch's load keeps the options), but a bad lr is a bad
                    // file: the check every optimizer applies to its options, on a copy
                    auto options = groups[g].options().clone();
                    options->set_lr(scalar_of(rec, kFloat64).item<double>());
                    as_io_error(where, "param group " + idx,
                                [&] { options->validate(o.type_name()); });
                    seen_lr[g] = true;
                } else if (field == "size") {
                    int64_t size = scalar_of(rec, kInt64).item<int64_t>();
                    if (size != int64_t(groups[g].params().size()))
                        throw io_error(where + ": param group " + idx + ": " +
                                       std::to_string(size) + " parameters in file, " +
                                       std::to_string(groups[g].params().size()) + " in optimizer");
                    seen_size[g] = true;
                } else {
                    throw bad_name(n);
                }
            } else if (head == "state") {
                size_t i = index_of(idx, params.size(), n);
                if (field == "step") {
                    if (pass == 1)
                        continue;
                    auto st = o.make_state();
                    const int64_t step = scalar_of(rec, kInt64).item<int64_t>();
                    as_io_error(where, "\"" + n + "\"", [&] { st->step(step); });
                    states.emplace(i, std::move(st));
                    continue;
                }
                if (pass == 0)
                    continue;
                auto it = states.find(i);
                if (it == states.end())
                    throw io_error(where + ": \"" + n + "\" has no step count in the file");
                Tensor* slot = nullptr;
                for (auto& [tname, t] : it->second->tensors())
                    if (tname == field)
                        slot = t;
                if (!slot)
                    throw bad_name(n);
                check_matches(where, "state \"" + n + "\"", rec, params[i].dtype(),
                              params[i].sizes(), "optimizer");
                fills.emplace_back(slot, &rec);
            } else {
                throw bad_name(n);
            }
        }
    for (size_t g = 0; g < groups.size(); ++g)
        if (!seen_lr[g] || !seen_size[g])
            throw io_error(where + ": param group " + std::to_string(g) +
                           " is missing from the file (the file has fewer groups)");
    // build the new state beside the optimizer's, and check its values as a whole
    for (auto& [slot, rec] : fills)
        *slot = tensor_of(*rec);
    for (auto& entry : states) {
        const optim::OptimizerParamState& st = *entry.second;
        as_io_error(where, "state of parameter " + std::to_string(entry.first),
                    [&] { st.validate(); });
    }
    std::unordered_map<const TensorImpl*, std::unique_ptr<optim::OptimizerParamState>> new_state;
    for (auto& [i, st] : states) {
        if (!params[i].device().is_cpu())
            for (auto& [tname, t] : st->tensors())
                if (t->defined())
                    *t = t->to(params[i].device());
        new_state[params[i].impl()] = std::move(st);
    }
    // everything validated and built: only now change the optimizer (nothing below throws).
    // The groups' options stay as the program set them, as LibTorch's load leaves them.
    o.state() = std::move(new_state);
}

}  // namespace tg
