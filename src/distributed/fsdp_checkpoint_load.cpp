// tg::distributed::load_sharded: Note [Sharded checkpoint format] in
// include/tapegrad/sharded_checkpoint.hpp. Every rank reads the manifest, works out which parts
// of which old shards make up its new shards (by parameter: a parameter's elements sit at its
// offset in its unit, whatever the padding), reads only those shard files, and assembles its
// shards and their optimizer state on the host; only when every rank has succeeded does any
// rank change its model and optimizer.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "distributed/fsdp_checkpoint.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/factories.hpp"
#include "tapegrad/sharded_checkpoint.hpp"

namespace tg::distributed {
namespace {

using detail::int_of;
using detail::need;
using io_detail::InFile;
using io_detail::InRecord;

struct OldParam {
    int64_t unit = 0, offset = 0, numel = 0;
    const InRecord* shape = nullptr;
    const InRecord* dtype = nullptr;
};

struct Manifest {
    std::string where;
    InFile file;
    detail::Records recs;
    int64_t id = 0, world = 0;
    std::string optimizer;
    std::vector<int64_t> shard;               // S of each old unit
    std::vector<std::vector<int64_t>> steps;  // [old unit][old rank], -1: no state
    std::map<std::string, OldParam> params;
};

/// Reads and checks the manifest against the model (names, shapes, dtypes) and the optimizer.
void read_manifest(Manifest& m, const std::string& dir, nn::FsdpState& s, nn::Module& module,
                   const optim::Optimizer& opt) {
    const std::string path = detail::manifest_path(dir);
    m.where = "load_sharded(" + path + ")";
    const std::string& w = m.where;
    m.file = io_detail::read_file(path, w);
    if (m.file.type != "FsdpManifest")
        throw io_error(w + ": not a sharded checkpoint's manifest (type \"" + m.file.type + "\")");
    m.recs = detail::index_records(m.file, w);
    const int64_t format = int_of(need(m.recs, "format", w), w);
    if (format != detail::kShardedFormat)
        throw io_error(w + ": format " + std::to_string(format) + ", this build reads " +
                       std::to_string(detail::kShardedFormat));
    m.id = int_of(need(m.recs, "id", w), w);
    m.world = int_of(need(m.recs, "world_size", w), w);
    const int64_t units = int_of(need(m.recs, "units", w), w);
    if (m.world < 1 || units < 0 || units > int64_t(m.file.records.size()))
        throw io_error(w + ": corrupt manifest: world size " + std::to_string(m.world) + ", " +
                       std::to_string(units) + " units");
    m.optimizer = detail::string_of(need(m.recs, "optimizer", w), w);
    if (m.optimizer != opt.type_name())
        throw io_error(w + ": optimizer " + m.optimizer + " in file, " + opt.type_name() +
                       " given");
    for (int64_t k = 0; k < units; ++k) {
        const std::string at = "unit." + std::to_string(k);
        m.shard.push_back(int_of(need(m.recs, at + ".shard", w), w));
        if (m.shard.back() < 1)
            throw io_error(w + ": corrupt manifest: unit " + std::to_string(k) + " has shards of " +
                           std::to_string(m.shard.back()) + " elements");
        const InRecord& st = need(m.recs, at + ".steps", w);
        io_detail::check_matches(w, at + ".steps", st, kInt64, {m.world}, "a manifest");
        Tensor t = io_detail::tensor_of(st);
        m.steps.emplace_back(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + m.world);
    }
    std::set<std::string> in_model(s.names.begin(), s.names.end());
    for (size_t i = 0;; ++i) {
        const std::string at = "param." + std::to_string(i);
        if (!m.recs.count(at + ".name"))
            break;
        const std::string name = detail::string_of(*m.recs.at(at + ".name"), w);
        if (!in_model.count(name))
            throw io_error(w + ": parameter \"" + name + "\" is in the file, not in the model");
        const InRecord& where = need(m.recs, at + ".where", w);
        io_detail::check_matches(w, at + ".where", where, kInt64, {3}, "a manifest");
        Tensor v = io_detail::tensor_of(where);
        OldParam p{v.data_ptr<int64_t>()[0], v.data_ptr<int64_t>()[1], v.data_ptr<int64_t>()[2],
                   &need(m.recs, at + ".shape", w), &need(m.recs, at + ".dtype", w)};
        if (p.unit < 0 || p.unit >= units || p.offset < 0 || p.numel < 0 ||
            p.offset + p.numel > m.shard[size_t(p.unit)] * m.world)
            throw io_error(w + ": corrupt manifest: parameter \"" + name +
                           "\" lies outside its unit");
        m.params[name] = p;
    }
    for (size_t i = 0; i < s.params.size(); ++i) {
        const std::string& name = s.names[i];
        if (!m.params.count(name))
            throw io_error(w + ": parameter \"" + name + "\" of the model is not in the file");
        const OldParam& old = m.params.at(name);
        const Tensor& p = s.params[i];
        if (old.shape->dtype != kInt64 || old.shape->sizes.size() != 1)
            throw io_error(w + ": parameter \"" + name + "\": corrupt shape record");
        Tensor shape = io_detail::tensor_of(*old.shape);
        Shape sizes(shape.data_ptr<int64_t>(), shape.data_ptr<int64_t>() + shape.numel());
        if (sizes != p.sizes())
            throw io_error(w + ": parameter \"" + name + "\": shape " + shape_str(sizes) +
                           " in file, " + shape_str(p.sizes()) + " in model");
        if (old.dtype->dtype != p.dtype())
            throw io_error(w + ": parameter \"" + name + "\": dtype " +
                           dtype_name(old.dtype->dtype) + " in file, " + dtype_name(p.dtype()) +
                           " in model");
        if (old.numel != p.numel())
            throw io_error(w + ": corrupt manifest: parameter \"" + name + "\" has " +
                           std::to_string(old.numel) + " elements in its unit");
    }
    for (auto& [name, b] : module.named_buffers())
        if (b.defined())
            io_detail::check_matches(w, "buffer \"" + name + "\"",
                                     need(m.recs, "buffer." + name, w), b.dtype(), b.sizes(),
                                     "model");
    for (auto& [name, p] : module.named_parameters())
        if (!p.requires_grad())
            io_detail::check_matches(w, "parameter \"" + name + "\"",
                                     need(m.recs, "frozen." + name, w), p.dtype(), p.sizes(),
                                     "model");
}

/// One old shard file, read when a new shard needs it.
struct OldShard {
    std::string where;
    InFile file;
    detail::Records recs;
};

struct Loader {
    Manifest& m;
    const std::string& dir;
    std::map<int64_t, OldShard> shards;
    std::map<std::pair<int64_t, std::string>, Tensor> records;  // old rank, name: its elements

    OldShard& shard(int64_t r) {
        auto it = shards.find(r);
        if (it != shards.end())
            return it->second;
        const std::string path = detail::shard_path(dir, r, m.world);
        OldShard& o = shards[r];
        o.where = "load_sharded(" + path + ")";
        o.file = io_detail::read_file(path, o.where);
        if (o.file.type != "FsdpShard")
            throw io_error(o.where + ": not a checkpoint shard (type \"" + o.file.type + "\")");
        o.recs = detail::index_records(o.file, o.where);
        if (int_of(need(o.recs, "id", o.where), o.where) != m.id ||
            int_of(need(o.recs, "rank", o.where), o.where) != r ||
            int_of(need(o.recs, "world_size", o.where), o.where) != m.world)
            throw io_error(o.where + ": the shard belongs to another save than " + m.where);
        return o;
    }

    /// Copies elements [from, from + n) of old unit k's flat record `suffix` ("" for the values)
    /// into dst[at, at + n).
    void copy(int64_t k, const std::string& suffix, Dtype dtype, int64_t from, int64_t n,
              Tensor& dst, int64_t at) {
        const int64_t S = m.shard[size_t(k)];
        while (n > 0) {
            const int64_t r = from / S, in = from % S, take = std::min(n, S - in);
            OldShard& o = shard(r);
            const std::string name = "unit." + std::to_string(k) + suffix;
            Tensor& src = records[{r, name}];
            if (!src.defined()) {
                const InRecord& rec = need(o.recs, name, o.where);
                io_detail::check_matches(o.where, name, rec, dtype, {S}, "the manifest's unit");
                src = io_detail::tensor_of(rec);
            }
            NoGradGuard g;
            dst.narrow(0, at, take).copy_(src.narrow(0, in, take));
            from += take, at += take, n -= take;
        }
    }
};

/// What a rank loads for one of its units.
struct NewShard {
    Tensor values;
    std::unique_ptr<optim::OptimizerParamState> state;
};

NewShard assemble(Loader& L, const nn::FsdpState& s, size_t k, const optim::Optimizer& opt) {
    const nn::Unit& u = s.units[k];
    const int64_t S = u.shard, lo = s.group->rank() * S, hi = lo + S;
    const Dtype dt = u.mine.dtype();
    const TensorOptions on = TensorOptions(dt).device(u.mine.device());
    NewShard out{zeros({S}, on), nullptr};
    // the old units this unit's parameters come from: their step counts must agree
    std::set<int64_t> olds;
    for (size_t i : u.params)
        olds.insert(L.m.params.at(s.names[i]).unit);
    int64_t step = -2;
    for (int64_t ok : olds)
        for (int64_t r = 0; r < L.m.world; ++r) {
            const int64_t t = L.m.steps[size_t(ok)][size_t(r)];
            if (step != -2 && t != step)
                throw io_error(L.m.where + ": the step counts of the old shards of parameter \"" +
                               s.names[u.params.front()] + "\"'s unit differ (" +
                               std::to_string(step) + " and " + std::to_string(t) + " at unit " +
                               std::to_string(ok) + ", rank " + std::to_string(r) + ")");
            step = t;
        }
    std::vector<std::pair<std::string, Tensor*>> slots;
    if (step >= 0) {
        out.state = opt.make_state();
        out.state->step(step);
        slots = out.state->tensors();
    }
    for (size_t j = 0; j < u.params.size(); ++j) {  // the part of parameter j in [lo, hi)
        const OldParam& op = L.m.params.at(s.names[u.params[j]]);
        const int64_t o = u.offsets[j], n = s.params[u.params[j]].numel();
        const int64_t a = std::max(o, lo), b = std::min(o + n, hi);
        if (a >= b)
            continue;
        L.copy(op.unit, "", dt, op.offset + (a - o), b - a, out.values, a - lo);
        OldShard& first = L.shard((op.offset + (a - o)) / L.m.shard[size_t(op.unit)]);
        for (size_t t = 0; t < slots.size(); ++t) {
            const std::string suffix = ".state." + slots[t].first;
            if (!first.recs.count("unit." + std::to_string(op.unit) + suffix))
                continue;
            if (!slots[t].second->defined())
                *slots[t].second = zeros({S}, on);
            L.copy(op.unit, suffix, dt, op.offset + (a - o), b - a, *slots[t].second, a - lo);
        }
    }
    if (out.state)
        out.state->validate();
    return out;
}

}  // namespace

void load_sharded(nn::FullyShardedDataParallel& model, optim::Optimizer& opt,
                  const std::string& dir) {
    nn::FsdpState& s = nn::FsdpAccess::state(model);
    Manifest m;
    std::vector<NewShard> mine;
    std::vector<std::pair<Tensor, Tensor>> whole;  // buffers and frozen parameters: to, from
    detail::on_every_rank(*s.group, [&] {
        detail::check_optimizer_params(s, opt, "load_sharded");
        read_manifest(m, dir, s, *model.module(), opt);
        Loader L{m, dir, {}, {}};
        for (size_t k = 0; k < s.units.size(); ++k)
            mine.push_back(assemble(L, s, k, opt));
        for (auto& [name, b] : model.module()->named_buffers())
            if (b.defined())
                whole.emplace_back(
                    b, io_detail::tensor_of(*m.recs.at("buffer." + name)).to(b.device()));
        for (auto& [name, p] : model.module()->named_parameters())
            if (!p.requires_grad())
                whole.emplace_back(
                    p, io_detail::tensor_of(*m.recs.at("frozen." + name)).to(p.device()));
    });
    // every rank has everything it needs, on its devices: below, only copies in place
    NoGradGuard no_grad;
    std::set<const TensorImpl*> in_opt;
    for (const Tensor& p : opt.parameters())
        in_opt.insert(p.impl());
    opt.state().clear();
    for (size_t k = 0; k < s.units.size(); ++k) {
        nn::Unit& u = s.units[k];
        u.mine.detach().copy_(mine[k].values);
        u.mine.set_grad(Tensor());
        if (mine[k].state && in_opt.count(u.mine.impl()))
            opt.state()[u.mine.impl()] = std::move(mine[k].state);
    }
    for (auto& [to, from] : whole)
        to.copy_(from);
    if (s.stage == 3)  // gathered copies are stale: the next forward gathers again
        for (size_t k = 0; k < s.units.size(); ++k)
            s.release(k);
    s.dirty = true;
}

}  // namespace tg::distributed
