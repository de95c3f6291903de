// tg::io::save_state_dict (Note [.pt format] in include/tapegrad/io_pt.hpp) and the storage
// types and bytes that the reader shares (pt_types.hpp).
#include <algorithm>
#include <cstring>
#include <map>

#include "io/pickle_mini.hpp"
#include "io/posix_file.hpp"
#include "io/pt_types.hpp"
#include "io/tgsv.hpp"
#include "io/zip_mini.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/factories.hpp"
#include "tapegrad/io_pt.hpp"

namespace tg::io_detail {
namespace {

struct StorageName {
    Dtype dtype;
    const char* name;
};
constexpr StorageName kStorages[] = {{kFloat32, "FloatStorage"}, {kFloat64, "DoubleStorage"},
                                     {kFloat16, "HalfStorage"},  {kBFloat16, "BFloat16Storage"},
                                     {kInt64, "LongStorage"},    {kInt32, "IntStorage"},
                                     {kInt16, "ShortStorage"},   {kInt8, "CharStorage"},
                                     {kUInt8, "ByteStorage"},    {kBool, "BoolStorage"}};

void swap_elements(uint8_t* p, size_t nbytes, size_t width) {
    if (io_detail::host_is_little_endian() || width == 1)
        return;
    for (size_t i = 0; i < nbytes; i += width)
        std::reverse(p + i, p + i + width);
}

}  // namespace

std::optional<Dtype> dtype_of_storage(const std::string& name) {
    for (auto& s : kStorages)
        if (name == s.name)
            return s.dtype;
    return std::nullopt;
}

const char* storage_name(Dtype d) {
    for (auto& s : kStorages)
        if (s.dtype == d)
            return s.name;
    throw dtype_error(std::string("save_state_dict: no PyTorch storage type for ") + dtype_name(d));
}

Tensor tensor_from_le(const uint8_t* data, int64_t numel, Dtype d, const std::string& what) {
    Tensor t = empty({numel}, TensorOptions(d));
    const size_t nbytes = size_t(numel) * element_size(d);
    if (nbytes == 0)
        return t;
    if (d == kBool)
        for (size_t i = 0; i < nbytes; ++i)
            if (data[i] > 1)
                throw io_error(what + ": a bool storage holds the byte " + std::to_string(data[i]) +
                               " (only 0 and 1 are booleans)");
    uint8_t* dst = static_cast<uint8_t*>(t.impl()->storage->data);
    std::memcpy(dst, data, nbytes);
    swap_elements(dst, nbytes, element_size(d));
    return t;
}

std::vector<uint8_t> le_bytes(const void* p, size_t n, Dtype d) {
    const size_t nbytes = n * element_size(d);
    std::vector<uint8_t> out(nbytes);
    if (nbytes > 0)
        std::memcpy(out.data(), p, nbytes);
    swap_elements(out.data(), nbytes, element_size(d));
    return out;
}

void save_pt(const StateDict& sd, const std::string& path, uint64_t zip32_max) {
    const std::string where = "save_state_dict(" + path + ")";
    struct Stored {
        std::string key;
        std::vector<uint8_t> bytes;
    };
    std::vector<Stored> stored;
    std::map<std::pair<const Storage*, int>, size_t> shared;  // (CPU storage, dtype) -> index
    std::vector<Tensor> held;  // host copies stay alive, so no storage address is reused
    io_detail::PickleWriter p;
    p.global("collections", "OrderedDict");
    p.op(')');
    p.op('R');
    size_t in_batch = 0;
    for (auto& [name, value] : sd) {
        if (!value.defined())
            throw value_error(where + ": tensor \"" + name + "\" is undefined");
        const char* type = io_detail::storage_name(value.dtype());
        Tensor t = value.device().is_cpu() ? value.detach() : value.detach().to(Device::cpu());
        held.push_back(t);
        const Storage* s = t.impl()->storage.get();
        const size_t width = element_size(t.dtype());
        auto [it, fresh] = shared.emplace(std::make_pair(s, int(t.dtype())), stored.size());
        if (fresh)
            stored.push_back({std::to_string(stored.size()),
                              io_detail::le_bytes(s->data, s->nbytes / width, t.dtype())});
        const Stored& st = stored[it->second];
        if (in_batch == 0)
            p.mark();
        p.string(name);
        p.global("torch._utils", "_rebuild_tensor_v2");
        p.mark();
        p.mark();  // the persistent id
        p.string("storage");
        p.global("torch", type);
        p.string(st.key);
        p.string("cpu");
        p.integer(int64_t(st.bytes.size() / width));
        p.op('t');
        p.op('Q');
        p.integer(t.storage_offset());
        p.int_tuple(t.sizes());
        p.int_tuple(t.strides());
        p.boolean(false);
        p.global("collections", "OrderedDict");
        p.op(')');
        p.op('R');
        p.op('t');
        p.op('R');
        if (++in_batch == 1000) {  // the batches Python's pickler writes
            p.op('u');
            in_batch = 0;
        }
    }
    if (in_batch > 0)
        p.op('u');
    p.op('.');
    io_detail::AtomicFile out(path, where);
    io_detail::ZipWriter zip(out, where, zip32_max);
    zip.add("archive/data.pkl", p.bytes().data(), p.bytes().size());
    zip.add("archive/byteorder", "little", 6);
    for (auto& st : stored)
        zip.add("archive/data/" + st.key, st.bytes.data(), st.bytes.size());
    zip.add("archive/version", "3\n", 2);
    zip.finish();
    out.commit();
}

}  // namespace tg::io_detail

namespace tg::io {

void save_state_dict(const StateDict& sd, const std::string& path) {
    io_detail::save_pt(sd, path, io_detail::kZip32Max);
}

}  // namespace tg::io
