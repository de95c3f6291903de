// tg::io::load_state_dict: PyTorch's checkpoint files (Note [.pt format] in
// include/tapegrad/io_pt.hpp), read from the zip archive (zip_mini) and its pickle (pickle_mini).
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "io/pickle_mini.hpp"
#include "io/posix_file.hpp"
#include "io/pt_types.hpp"
#include "io/zip_mini.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/factories.hpp"
#include "tapegrad/io_pt.hpp"

namespace tg::io {
namespace {

using io_detail::PickleReader;
using io_detail::PyObj;
using Kind = PyObj::Kind;

class PtReader {
public:
    PtReader(const std::string& path, std::string where) : where_(std::move(where)) {
        io_detail::RegularFile f(path, where_);
        bytes_.resize(size_t(f.size()));
        f.read_exactly(bytes_.data(), bytes_.size());
        if (bytes_.size() >= 2 && bytes_[0] == 0x80 && bytes_[1] <= 5)
            fail(
                "a legacy torch.save file (PyTorch < 1.6, not a zip archive); load it in "
                "PyTorch and torch.save it again");
        const auto listed = io_detail::zip_entries(bytes_.data(), bytes_.size(), where_);
        if (listed.empty())
            fail("an empty zip archive");
        for (auto& e : listed)
            entries_.emplace(e.name, e);
        const std::string& first = listed.front().name;  // torch's reader takes the first
        const size_t slash = first.find('/');
        if (slash == std::string::npos)
            fail("entry \"" + first + "\" is not in a folder: not a torch.save archive");
        prefix_ = first.substr(0, slash + 1);
        if (const auto* order = find("byteorder")) {
            const std::string v(reinterpret_cast<const char*>(bytes_.data() + order->offset),
                                size_t(order->size));
            if (v != "little")
                fail("byteorder \"" + v + "\": tapegrad reads little-endian checkpoints only");
        }
    }

    PyObj* root() {
        const io_detail::ZipEntry* pkl = find("data.pkl");
        if (!pkl)
            fail("no entry " + prefix_ + "data.pkl: not a torch.save archive");
        io_detail::zip_check_crc(bytes_.data(), *pkl, where_);
        PickleReader::Hooks hooks;
        hooks.allow_global = [](const std::string& module, const std::string& name) {
            if (module == "collections")
                return name == "OrderedDict";
            if (module == "torch._utils")
                return name == "_rebuild_tensor_v2" || name == "_rebuild_parameter";
            return module == "torch" && io_detail::dtype_of_storage(name).has_value();
        };
        hooks.persistent_load = [this](PickleReader& r, PyObj* pid) { return storage(r, pid); };
        hooks.reduce = [this](PickleReader& r, PyObj* f, PyObj* args) {
            return rebuild(r, f, args);
        };
        reader_.emplace(bytes_.data() + pkl->offset, size_t(pkl->size), where_, hooks);
        return reader_->load();
    }

    StateDict tensors_of(const PyObj* dict, const std::string& what) const {
        if (dict->kind != Kind::Dict)
            fail(what + " is " + io_detail::py_kind_name(dict->kind) + ", not a dict of tensors");
        StateDict out;
        for (auto& [k, v] : dict->entries) {
            if (k->kind != Kind::String)
                fail(what + " has a key that is " + io_detail::py_kind_name(k->kind));
            if (v->kind != Kind::Tensor)
                fail(what + ": \"" + k->text + "\" is " + io_detail::py_kind_name(v->kind) +
                     ", not a tensor");
            out.insert(k->text, v->tensor);
        }
        return out;
    }

    [[noreturn]] void fail(const std::string& what) const { throw io_error(where_ + ": " + what); }

private:
    const io_detail::ZipEntry* find(const std::string& name) const {
        auto it = entries_.find(prefix_ + name);
        return it == entries_.end() ? nullptr : &it->second;
    }

    static const PyObj* arg(PickleReader& r, const PyObj* t, size_t i, Kind k, const char* what) {
        if (t->items[i]->kind != k)
            r.fail(std::string(what) + " is " + io_detail::py_kind_name(t->items[i]->kind) +
                   ", not " + io_detail::py_kind_name(k));
        return t->items[i];
    }

    PyObj* storage(PickleReader& r, PyObj* pid) {
        if (pid->kind != Kind::Tuple || pid->items.size() != 5 ||
            pid->items[0]->kind != Kind::String || pid->items[0]->text != "storage")
            r.fail("a persistent id that is not ('storage', type, key, location, numel)");
        const PyObj* type = arg(r, pid, 1, Kind::Global, "a storage's type");
        const std::string& key = arg(r, pid, 2, Kind::String, "a storage's key")->text;
        arg(r, pid, 3, Kind::String, "a storage's location");  // any device: loaded to the CPU
        const int64_t numel = arg(r, pid, 4, Kind::Int, "a storage's size")->integer;
        const auto dtype = io_detail::dtype_of_storage(type->text.substr(type->text.find('.') + 1));
        if (!dtype)
            r.fail("a storage of type " + type->text);
        auto cached = storages_.find(key);
        if (cached != storages_.end()) {
            if (cached->second->dtype != *dtype)
                r.fail("storage \"" + key + "\" is read as two dtypes");
            return cached->second;
        }
        const io_detail::ZipEntry* e = find("data/" + key);
        if (!e)
            fail("storage \"" + key + "\" has no entry " + prefix_ + "data/" + key);
        const uint64_t width = element_size(*dtype);
        if (numel < 0 || uint64_t(numel) > e->size / width)
            fail("storage \"" + key + "\": " + std::to_string(numel) + " " + dtype_name(*dtype) +
                 " elements, but its entry has " + std::to_string(e->size) + " bytes");
        io_detail::zip_check_crc(bytes_.data(), *e, where_);
        PyObj* s = r.make(Kind::Storage);
        s->dtype = *dtype;
        s->text = key;
        s->tensor = io_detail::tensor_from_le(bytes_.data() + e->offset, numel, *dtype,
                                              where_ + ": storage \"" + key + "\"");
        storages_.emplace(key, s);
        return s;
    }

    PyObj* rebuild(PickleReader& r, PyObj* f, PyObj* args) {
        if (f->text == "torch._utils._rebuild_parameter") {
            if (args->items.size() != 3 || args->items[0]->kind != Kind::Tensor)
                r.fail("_rebuild_parameter without (tensor, requires_grad, hooks)");
            return args->items[0];
        }
        if (f->text != "torch._utils._rebuild_tensor_v2")
            r.fail("a call of " + f->text);
        if (args->items.size() != 6 && args->items.size() != 7)
            r.fail("_rebuild_tensor_v2 with " + std::to_string(args->items.size()) +
                   " arguments, not 6 or 7");
        const PyObj* s = arg(r, args, 0, Kind::Storage, "a tensor's storage");
        const int64_t offset = arg(r, args, 1, Kind::Int, "a tensor's offset")->integer;
        const PyObj* size = arg(r, args, 2, Kind::Tuple, "a tensor's size");
        const PyObj* stride = arg(r, args, 3, Kind::Tuple, "a tensor's stride");
        if (size->items.size() != stride->items.size() || size->items.size() > 64)
            r.fail("a tensor of " + std::to_string(size->items.size()) + " sizes and " +
                   std::to_string(stride->items.size()) + " strides (at most 64)");
        Shape sizes, strides;
        constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
        int64_t numel = 1, last = offset;  // the largest element index the tensor reaches
        bool empty = false;
        for (size_t i = 0; i < size->items.size(); ++i) {
            const PyObj* n = size->items[i];
            const PyObj* st = stride->items[i];
            if (n->kind != Kind::Int || st->kind != Kind::Int || n->integer < 0 || st->integer < 0)
                r.fail("a tensor's size and stride must be non-negative ints");
            sizes.push_back(n->integer);
            strides.push_back(st->integer);
            empty = empty || n->integer == 0;
        }
        if (offset < 0)
            r.fail("a negative storage offset");
        for (size_t i = 0; i < sizes.size() && !empty; ++i) {
            if (numel > kMax / int64_t(element_size(s->dtype)) / sizes[i] ||
                (sizes[i] > 1 && strides[i] > (kMax - last) / (sizes[i] - 1)))
                r.fail("tensor of size " + shape_str(sizes) + " and stride " + shape_str(strides) +
                       " overflows 64-bit sizes");
            numel *= sizes[i];
            last += (sizes[i] - 1) * strides[i];
        }
        const int64_t have = s->tensor.numel();
        if (!empty && last >= have)
            r.fail("a storage shorter than its tensor: size " + shape_str(sizes) + ", stride " +
                   shape_str(strides) + " and offset " + std::to_string(offset) +
                   " reach element " + std::to_string(last) + " of storage \"" + s->text +
                   "\", which has " + std::to_string(have));
        if (empty && offset > have)
            r.fail("an offset past the end of its storage");
        auto impl = std::make_shared<TensorImpl>();
        impl->storage = s->tensor.impl()->storage;
        impl->sizes = std::move(sizes);
        impl->strides = std::move(strides);
        impl->offset = offset;
        impl->dtype = s->dtype;
        PyObj* t = r.make(Kind::Tensor);
        t->tensor = Tensor(std::move(impl));
        return t;
    }

    std::string where_;
    std::vector<uint8_t> bytes_;
    std::map<std::string, io_detail::ZipEntry> entries_;
    std::string prefix_;
    std::map<std::string, PyObj*> storages_;
    std::optional<PickleReader> reader_;  // owns every PyObj
};

}  // namespace

StateDict load_state_dict(const std::string& path) {
    PtReader r(path, "load_state_dict(" + path + ")");
    return r.tensors_of(r.root(), "the file's object");
}

StateDict load_state_dict(const std::string& path, const std::string& key) {
    PtReader r(path, "load_state_dict(" + path + ", \"" + key + "\")");
    const PyObj* root = r.root();
    if (root->kind != Kind::Dict)
        r.fail(std::string("the file holds ") + io_detail::py_kind_name(root->kind) +
               ", not a dict");
    for (auto& [k, v] : root->entries)
        if (k->kind == Kind::String && k->text == key)
            return r.tensors_of(v, "\"" + key + "\"");
    r.fail("the file's dict has no key \"" + key + "\"");
}

}  // namespace tg::io
