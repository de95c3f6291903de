// tg::distributed::save_sharded, and what it shares with load_sharded (fsdp_checkpoint.hpp):
// Note [Sharded checkpoint format] in include/tapegrad/sharded_checkpoint.hpp.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "distributed/fsdp_checkpoint.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/factories.hpp"
#include "tapegrad/optim/adam.hpp"
#include "tapegrad/optim/sgd.hpp"
#include "tapegrad/sharded_checkpoint.hpp"

namespace tg::distributed {
namespace detail {

using io_detail::InRecord;
using io_detail::OutRecord;

std::string manifest_path(const std::string& dir) {
    return (std::filesystem::path(dir) / "manifest.tgsv").string();
}

std::string shard_path(const std::string& dir, int64_t rank, int64_t world) {
    char name[64];
    std::snprintf(name, sizeof name, "shard-%05lld-of-%05lld.tgsv", static_cast<long long>(rank),
                  static_cast<long long>(world));
    return (std::filesystem::path(dir) / name).string();
}

namespace {
enum Kind : int64_t { kOther = 0, kIo, kValue, kMemory, kDistributed };

[[noreturn]] void throw_kind(int64_t kind, const std::string& msg) {
    switch (kind) {
        case kIo:
            throw io_error(msg);
        case kValue:
            throw value_error(msg);
        case kMemory:
            throw out_of_memory(msg);
        case kDistributed:
            throw distributed_error(msg);
        default:
            throw error(msg);
    }
}
}  // namespace

void on_every_rank(ProcessGroup& g, const std::function<void()>& fn) {
    std::string msg;
    int64_t kind = -1;
    try {
        fn();
    } catch (const io_error& e) {
        msg = e.what(), kind = kIo;
    } catch (const value_error& e) {
        msg = e.what(), kind = kValue;
    } catch (const out_of_memory& e) {
        msg = e.what(), kind = kMemory;
    } catch (const distributed_error& e) {
        msg = e.what(), kind = kDistributed;
    } catch (const std::exception& e) {
        msg = e.what(), kind = kOther;
    }
    Tensor first = full({1}, kind < 0 ? double(g.size()) : double(g.rank()), kInt64);
    g.all_reduce(first, ReduceOp::Min)->wait();
    const int64_t root = first.item<int64_t>();
    if (root == g.size())
        return;
    Tensor head = tensor(std::vector<int64_t>{kind, int64_t(msg.size())});
    g.broadcast(head, int(root))->wait();
    const int64_t n = head[1].item<int64_t>();
    Tensor text = zeros({n + 1}, kInt64);  // never empty
    if (g.rank() == root)
        for (int64_t i = 0; i < n; ++i)
            text.data_ptr<int64_t>()[i] = static_cast<unsigned char>(msg[size_t(i)]);
    g.broadcast(text, int(root))->wait();
    std::string all(size_t(n), ' ');
    for (int64_t i = 0; i < n; ++i)
        all[size_t(i)] = char(text.data_ptr<int64_t>()[i]);
    if (root != g.rank())
        all = "rank " + std::to_string(root) + ": " + all;
    throw_kind(head[0].item<int64_t>(), all);
}

OutRecord string_record(std::string name, const std::string& s) {
    Tensor t = empty({int64_t(s.size())}, kUInt8);
    if (!s.empty())
        std::memcpy(t.data_ptr<uint8_t>(), s.data(), s.size());
    return io_detail::record_of(std::move(name), t);
}

Records index_records(const io_detail::InFile& f, const std::string& where) {
    Records out;
    for (const InRecord& r : f.records)
        if (!out.emplace(r.name, &r).second)
            throw io_error(where + ": record \"" + r.name + "\" appears twice");
    return out;
}

const InRecord& need(const Records& f, const std::string& name, const std::string& where) {
    auto it = f.find(name);
    if (it == f.end())
        throw io_error(where + ": record \"" + name + "\" is missing");
    return *it->second;
}

int64_t int_of(const InRecord& r, const std::string& where) {
    if (r.dtype != kInt64 || !r.sizes.empty())
        throw io_error(where + ": record \"" + r.name + "\": expected an int64 scalar, got " +
                       dtype_name(r.dtype) + " " + shape_str(r.sizes));
    return io_detail::tensor_of(r).item<int64_t>();
}

std::string string_of(const InRecord& r, const std::string& where) {
    if (r.dtype != kUInt8 || r.sizes.size() != 1)
        throw io_error(where + ": record \"" + r.name + "\": expected a string (uint8 [n])");
    return std::string(reinterpret_cast<const char*>(r.data), r.nbytes);
}

void check_optimizer_params(const nn::FsdpState& s, const optim::Optimizer& opt, const char* what) {
    std::unordered_map<const TensorImpl*, size_t> shards;
    for (size_t k = 0; k < s.units.size(); ++k)
        shards[s.units[k].mine.impl()] = k;
    const auto ps = opt.parameters();
    for (size_t i = 0; i < ps.size(); ++i)
        if (!shards.count(ps[i].impl()))
            throw value_error(std::string(what) + ": the optimizer's parameter " +
                              std::to_string(i) + " (" + shape_str(ps[i].sizes()) +
                              ") is not one of the model's shards (model->parameters()); "
                              "save other parameters with tg::save");
}

namespace {
/// The optimizer's type and options, group by group.
void options_records(const optim::Optimizer& opt, std::vector<OutRecord>& out) {
    using io_detail::scalar_record;
    out.push_back(string_record("optimizer", opt.type_name()));
    out.push_back(io_detail::int_record("groups", int64_t(opt.param_groups().size())));
    for (size_t g = 0; g < opt.param_groups().size(); ++g) {
        const optim::OptimizerOptions& o = opt.param_groups()[g].options();
        const std::string at = "group." + std::to_string(g) + ".";
        out.push_back(scalar_record(at + "lr", o.get_lr()));
        auto adam = [&](const auto& a) {
            out.push_back(io_detail::record_of(
                at + "betas", tensor({std::get<0>(a.betas()), std::get<1>(a.betas())}, kFloat64)));
            out.push_back(scalar_record(at + "eps", a.eps()));
            out.push_back(scalar_record(at + "weight_decay", a.weight_decay()));
            out.push_back(io_detail::int_record(at + "amsgrad", a.amsgrad()));
        };
        if (auto* a = dynamic_cast<const optim::AdamOptions*>(&o))
            adam(*a);
        else if (auto* w = dynamic_cast<const optim::AdamWOptions*>(&o))
            adam(*w);
        else if (auto* s = dynamic_cast<const optim::SGDOptions*>(&o)) {
            out.push_back(scalar_record(at + "momentum", s->momentum()));
            out.push_back(scalar_record(at + "dampening", s->dampening()));
            out.push_back(scalar_record(at + "weight_decay", s->weight_decay()));
            out.push_back(io_detail::int_record(at + "nesterov", s->nesterov()));
        }
    }
}

/// The optimizer's state of a shard, or null.
optim::OptimizerParamState* state_of(const optim::Optimizer& opt, const Tensor& shard) {
    auto it = opt.state().find(shard.impl());
    return it == opt.state().end() ? nullptr : it->second.get();
}
}  // namespace
}  // namespace detail

void save_sharded(nn::FullyShardedDataParallel& model, const optim::Optimizer& opt,
                  const std::string& dir) {
    using namespace detail;
    using io_detail::int_record;
    nn::FsdpState& s = nn::FsdpAccess::state(model);
    ProcessGroup& g = *s.group;
    const int64_t world = g.size(), rank = g.rank(), nu = int64_t(s.units.size());
    on_every_rank(g, [&] {
        check_optimizer_params(s, opt, "save_sharded");
        if (rank == 0)
            std::filesystem::create_directories(dir);
    });
    Tensor id = zeros({1}, kInt64);
    if (rank == 0) {  // one random id for the files of this save
        std::random_device rd;
        const uint64_t t = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
        id.data_ptr<int64_t>()[0] = int64_t(((uint64_t(rd()) << 31) ^ t ^ rd()) >> 2);
    }
    g.broadcast(id, 0)->wait();
    const int64_t the_id = id.item<int64_t>();
    Tensor steps = full({nu}, -1.0, kInt64);  // each unit's step count on this rank
    for (int64_t k = 0; k < nu; ++k)
        if (auto* st = state_of(opt, s.units[size_t(k)].mine))
            steps.data_ptr<int64_t>()[k] = st->step();
    std::vector<Tensor> all_steps;
    for (int64_t r = 0; r < world; ++r)
        all_steps.push_back(empty({nu}, kInt64));
    if (nu > 0)
        g.all_gather(all_steps, steps)->wait();
    on_every_rank(g, [&] {
        std::vector<OutRecord> recs = {int_record("id", the_id), int_record("rank", rank),
                                       int_record("world_size", world)};
        for (int64_t k = 0; k < nu; ++k) {
            const nn::Unit& u = s.units[size_t(k)];
            const std::string at = "unit." + std::to_string(k);
            recs.push_back(io_detail::record_of(at, u.mine));
            auto* st = state_of(opt, u.mine);
            if (!st)
                continue;
            recs.push_back(int_record(at + ".step", st->step()));
            for (auto& [name, t] : st->tensors())
                if (t->defined())
                    recs.push_back(io_detail::record_of(at + ".state." + name, *t));
        }
        io_detail::write_file(shard_path(dir, rank, world), io_detail::kKindTensors, "FsdpShard",
                              recs);
    });
    on_every_rank(g, [&] {  // rank 0's manifest, once every shard is on disk
        if (rank != 0)
            return;
        std::vector<OutRecord> recs = {int_record("format", kShardedFormat),
                                       int_record("id", the_id), int_record("world_size", world),
                                       int_record("stage", s.stage), int_record("units", nu)};
        options_records(opt, recs);
        for (int64_t k = 0; k < nu; ++k) {
            const std::string at = "unit." + std::to_string(k);
            recs.push_back(int_record(at + ".shard", s.units[size_t(k)].shard));
            Tensor per_rank = empty({world}, kInt64);
            for (int64_t r = 0; r < world; ++r)
                per_rank.data_ptr<int64_t>()[r] = all_steps[size_t(r)].data_ptr<int64_t>()[k];
            recs.push_back(io_detail::record_of(at + ".steps", per_rank));
        }
        for (size_t i = 0; i < s.params.size(); ++i) {
            const Tensor& p = s.params[i];
            const size_t k = s.unit_of[i];
            const nn::Unit& u = s.units[k];
            int64_t offset = 0;
            for (size_t j = 0; j < u.params.size(); ++j)
                if (u.params[j] == i)
                    offset = u.offsets[j];
            const std::string at = "param." + std::to_string(i);
            recs.push_back(string_record(at + ".name", s.names[i]));
            recs.push_back(io_detail::record_of(
                at + ".where", tensor(std::vector<int64_t>{int64_t(k), offset, p.numel()})));
            Tensor shape = empty({int64_t(p.dim())}, kInt64);
            for (int64_t d = 0; d < p.dim(); ++d)
                shape.data_ptr<int64_t>()[d] = p.sizes()[size_t(d)];
            recs.push_back(io_detail::record_of(at + ".shape", shape));
            recs.push_back(io_detail::record_of(at + ".dtype", empty({0}, p.dtype())));
        }
        for (auto& [name, b] : model.module()->named_buffers())
            if (b.defined())
                recs.push_back(io_detail::record_of("buffer." + name, b));
        for (auto& [name, p] : model.module()->named_parameters())
            if (!p.requires_grad())
                recs.push_back(io_detail::record_of("frozen." + name, p));
        io_detail::write_file(manifest_path(dir), io_detail::kKindTensors, "FsdpManifest", recs);
    });
}

}  // namespace tg::distributed
