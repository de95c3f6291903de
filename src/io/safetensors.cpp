// tg::io::save_safetensors / load_safetensors (Note [safetensors format] in
// include/tapegrad/io_safetensors.hpp).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>

#include "io/json_mini.hpp"
#include "io/posix_file.hpp"
#include "io/tgsv.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/io_safetensors.hpp"

namespace tg::io {
namespace {

using io_detail::JsonValue;

constexpr uint64_t kMaxHeader = 100'000'000;  // the reference reader's limit

struct DtypeName {
    Dtype dtype;
    const char* name;
};
// widest first: the order the reference writer sorts by (its Dtype enum, descending)
constexpr DtypeName kDtypes[] = {
    {kInt64, "I64"},   {kFloat64, "F64"}, {kFloat32, "F32"}, {kInt32, "I32"}, {kBFloat16, "BF16"},
    {kFloat16, "F16"}, {kInt16, "I16"},   {kInt8, "I8"},     {kUInt8, "U8"},  {kBool, "BOOL"}};

size_t rank_of(Dtype d) {
    for (size_t i = 0; i < std::size(kDtypes); ++i)
        if (kDtypes[i].dtype == d)
            return i;
    throw dtype_error(std::string("save_safetensors: no safetensors dtype for ") + dtype_name(d));
}

/// A private (copy-on-write) mapping of a whole regular file: tensors loaded from it view it
/// (Note [Zero-copy safetensors]), and writing into them changes their pages, never the file.
class Mapping {
public:
    Mapping(const std::string& path, const std::string& where) {
        fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd_ < 0)
            throw io_error(where + ": cannot open: " + std::strerror(errno));
        struct stat st {};
        if (::fstat(fd_, &st) != 0)
            fail(where, std::string("cannot stat: ") + std::strerror(errno));
        if (!S_ISREG(st.st_mode))
            fail(where, "not a regular file");
        size_ = uint64_t(st.st_size);
        if (size_ == 0)
            return;
        void* p = ::mmap(nullptr, size_t(size_), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd_, 0);
        if (p == MAP_FAILED)
            fail(where, std::string("cannot map: ") + std::strerror(errno));
        data_ = static_cast<const uint8_t*>(p);
    }
    ~Mapping() {
        if (data_)
            ::munmap(const_cast<uint8_t*>(data_), size_t(size_));
        if (fd_ >= 0)
            ::close(fd_);
    }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    uint8_t* data() const { return const_cast<uint8_t*>(data_); }
    uint64_t size() const { return size_; }

private:
    [[noreturn]] void fail(const std::string& where, const std::string& what) {
        ::close(fd_);
        fd_ = -1;
        throw io_error(where + ": " + what);
    }
    int fd_ = -1;
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
};

struct Entry {
    std::string name;
    Dtype dtype;
    Shape sizes;
    uint64_t begin, end;
};

struct Parsed {
    std::map<std::string, std::string> metadata;
    std::vector<Entry> entries;  // header order
    const uint8_t* buffer;
};

std::string quoted(const std::string& s) {
    return io_detail::json_quote(s);
}

const JsonValue& field(const JsonValue& obj, const char* key, JsonValue::Kind kind,
                       const std::string& where, const std::string& what) {
    const JsonValue* found = nullptr;
    for (auto& [k, v] : obj.object)
        if (k == key) {
            if (found)
                throw io_error(where + ": " + what + ": \"" + key + "\" given twice");
            found = &v;
        }
    if (!found)
        throw io_error(where + ": " + what + ": no \"" + key + "\"");
    if (found->kind != kind)
        throw io_error(where + ": " + what + ": \"" + key + "\" is " +
                       io_detail::json_kind_name(found->kind) + ", not " +
                       io_detail::json_kind_name(kind));
    return *found;
}

Entry entry_of(const std::string& name, const JsonValue& info, const std::string& where) {
    const std::string what = "tensor " + quoted(name);
    if (info.kind != JsonValue::Kind::Object)
        throw io_error(where + ": " + what + " is " + io_detail::json_kind_name(info.kind) +
                       ", not an object");
    // other fields are ignored, as the reference reader ignores them
    Entry e{name, kFloat32, {}, 0, 0};
    const std::string& dt = field(info, "dtype", JsonValue::Kind::String, where, what).string;
    auto known = std::find_if(std::begin(kDtypes), std::end(kDtypes),
                              [&](const DtypeName& d) { return dt == d.name; });
    if (known == std::end(kDtypes))
        throw io_error(where + ": " + what + ": unknown dtype " + quoted(dt) +
                       " (tapegrad reads F32 F64 F16 BF16 I64 I32 I16 I8 U8 BOOL)");
    e.dtype = known->dtype;
    const JsonValue& shape = field(info, "shape", JsonValue::Kind::Array, where, what);
    if (shape.array.size() > 64)
        throw io_error(where + ": " + what + ": " + std::to_string(shape.array.size()) +
                       " dimensions (at most 64)");
    // every dimension, and the product of the non-zero ones times the element size, must fit
    // in int64: an empty tensor with huge other dimensions would overflow its strides
    const uint64_t limit = uint64_t(std::numeric_limits<int64_t>::max());
    uint64_t numel = 1, span = element_size(e.dtype);
    for (auto& d : shape.array) {
        if (d.kind != JsonValue::Kind::Integer)
            throw io_error(where + ": " + what + ": the shape holds " +
                           io_detail::json_kind_name(d.kind) + ", not only integers");
        if (d.integer > limit || (d.integer > 0 && span > limit / d.integer))
            throw io_error(where + ": " + what + ": shape overflows 64-bit sizes");
        span *= std::max<uint64_t>(d.integer, 1);
        numel *= d.integer;
        e.sizes.push_back(int64_t(d.integer));
    }
    const JsonValue& off = field(info, "data_offsets", JsonValue::Kind::Array, where, what);
    if (off.array.size() != 2 || off.array[0].kind != JsonValue::Kind::Integer ||
        off.array[1].kind != JsonValue::Kind::Integer)
        throw io_error(where + ": " + what + ": data_offsets is not two integers [begin, end]");
    e.begin = off.array[0].integer;
    e.end = off.array[1].integer;
    const uint64_t nbytes = numel * element_size(e.dtype);
    if (e.end < e.begin || e.end - e.begin != nbytes)
        throw io_error(where + ": " + what + ": data_offsets [" + std::to_string(e.begin) + ", " +
                       std::to_string(e.end) + "] do not hold its " + std::to_string(nbytes) +
                       " bytes (" + dt + " " + shape_str(e.sizes) + ")");
    return e;
}

Parsed parse(const Mapping& file, const std::string& where) {
    if (file.size() < 8)
        throw io_error(where + ": " + std::to_string(file.size()) +
                       " bytes: too short for the 8-byte header length");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i)
        n = (n << 8) | file.data()[i];
    if (n > kMaxHeader)
        throw io_error(where + ": header length " + std::to_string(n) + " above 100 MB");
    if (n > file.size() - 8)
        throw io_error(where + ": header length " + std::to_string(n) + " past the end of the " +
                       std::to_string(file.size()) + "-byte file");
    JsonValue header;
    try {
        header = io_detail::json_parse(reinterpret_cast<const char*>(file.data() + 8), size_t(n));
    } catch (const io_detail::JsonError& e) {
        throw io_error(where + ": header: " + e.what());
    }
    if (header.kind != JsonValue::Kind::Object)
        throw io_error(where + ": the header is " + io_detail::json_kind_name(header.kind) +
                       ", not an object");
    Parsed out{{}, {}, file.data() + 8 + n};
    std::set<std::string> names;
    for (auto& [name, v] : header.object) {
        if (!names.insert(name).second)
            throw io_error(where + ": " + quoted(name) + " appears twice in the header");
        if (name == "__metadata__") {
            if (v.kind != JsonValue::Kind::Object)
                throw io_error(where + ": __metadata__ is " + io_detail::json_kind_name(v.kind) +
                               ", not an object");
            for (auto& [k, s] : v.object) {
                if (s.kind != JsonValue::Kind::String)
                    throw io_error(where + ": __metadata__ " + quoted(k) + " is " +
                                   io_detail::json_kind_name(s.kind) + ", not a string");
                if (!out.metadata.emplace(k, s.string).second)
                    throw io_error(where + ": __metadata__ " + quoted(k) + " given twice");
            }
            continue;
        }
        out.entries.push_back(entry_of(name, v, where));
    }
    // the tensors tile the buffer exactly: in offset order, each starts where the last ended
    std::vector<const Entry*> by_offset;
    for (auto& e : out.entries)
        by_offset.push_back(&e);
    std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) {
        return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    const uint64_t buffer = file.size() - 8 - n;
    uint64_t at = 0;
    for (const Entry* e : by_offset) {
        if (e->begin != at)
            throw io_error(where + ": tensor " + quoted(e->name) + " starts at byte " +
                           std::to_string(e->begin) + " of the buffer, where " +
                           (e->begin < at ? "the tensor before it overlaps it (it ends at "
                                          : "a gap begins (the tensors before it end at ") +
                           std::to_string(at) + ")");
        if (e->end > buffer)
            throw io_error(where + ": tensor " + quoted(e->name) + " ends at byte " +
                           std::to_string(e->end) + ", past the " + std::to_string(buffer) +
                           "-byte buffer (the file is truncated)");
        at = e->end;
    }
    if (at != buffer)
        throw io_error(where + ": the buffer has " + std::to_string(buffer) +
                       " bytes, its tensors " + std::to_string(at));
    return out;
}

}  // namespace

void save_safetensors(const StateDict& sd, const std::string& path,
                      const std::map<std::string, std::string>& metadata) {
    const std::string where = "save_safetensors(" + path + ")";
    std::vector<io_detail::OutRecord> records;
    for (auto& [name, t] : sd) {
        if (name == "__metadata__")
            throw value_error(where + ": a tensor cannot be named \"__metadata__\"");
        if (!t.defined())
            throw value_error(where + ": tensor \"" + name + "\" is undefined");
        rank_of(t.dtype());
        records.push_back(io_detail::record_of(name, t));
    }
    std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
        const size_t ra = rank_of(a.dtype), rb = rank_of(b.dtype);
        return ra != rb ? ra < rb : a.name < b.name;
    });
    std::string header = "{";
    if (!metadata.empty()) {
        header += "\"__metadata__\":{";
        for (auto& [k, v] : metadata)
            header += (header.back() == '{' ? "" : ",") + quoted(k) + ":" + quoted(v);
        header += "}";
    }
    uint64_t offset = 0;
    for (auto& r : records) {
        header += (header.size() == 1 ? "" : ",") + quoted(r.name) + ":{\"dtype\":\"" +
                  kDtypes[rank_of(r.dtype)].name + "\",\"shape\":[";
        for (size_t i = 0; i < r.sizes.size(); ++i)
            header += (i ? "," : "") + std::to_string(r.sizes[i]);
        header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
                  std::to_string(offset + r.bytes.size()) + "]}";
        offset += r.bytes.size();
    }
    header += "}";
    header.append((8 - header.size() % 8) % 8, ' ');
    uint8_t len[8];
    for (int i = 0; i < 8; ++i)
        len[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
    io_detail::AtomicFile out(path, where);
    out.write(len, 8);
    out.write(header.data(), header.size());
    for (auto& r : records)
        if (!r.bytes.empty())
            out.write(r.bytes.data(), r.bytes.size());
    out.commit();
}

// Note [Zero-copy safetensors]: load_safetensors maps the file and, on a little-endian host,
// each tensor whose data is aligned for its dtype is a view of the mapping (from_blob with a
// deleter that holds the mapping: it is unmapped when the last such tensor is gone), as the
// format intends; the others (a misaligned offset, a big-endian host) are copied. The mapping is
// private: in-place writes to a loaded tensor copy the pages they touch and leave the file as it
// was. Mapped bytes are not tapegrad allocations (memory::Stats does not count them), and, as
// with any mapping, the file must not be truncated or rewritten in place while its tensors live
// (save_safetensors replaces a file by renaming a new one over it: that is safe).
StateDict load_safetensors(const std::string& path) {
    const std::string where = "load_safetensors(" + path + ")";
    auto file = std::make_shared<Mapping>(path, where);
    Parsed parsed = parse(*file, where);
    StateDict out;
    for (auto& e : parsed.entries) {
        const uint8_t* data = parsed.buffer + e.begin;
        const size_t nbytes = size_t(e.end - e.begin);
        if (e.dtype == kBool)
            for (size_t i = 0; i < nbytes; ++i)
                if (data[i] > 1)
                    throw io_error(where + ": BOOL tensor " + quoted(e.name) + " holds the byte " +
                                   std::to_string(data[i]) + " (only 0 and 1 are booleans)");
        if (nbytes > 0 && io_detail::host_is_little_endian() &&
            reinterpret_cast<uintptr_t>(data) % element_size(e.dtype) == 0) {
            out.insert(e.name, from_blob(
                                   const_cast<uint8_t*>(data), e.sizes, [file](void*) {},
                                   TensorOptions(e.dtype)));
            continue;
        }
        io_detail::InRecord rec{e.name, e.dtype, e.sizes, data, nbytes};
        out.insert(e.name, io_detail::tensor_of(rec));
    }
    return out;
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
    const std::string where = "load_safetensors_metadata(" + path + ")";
    Mapping file(path, where);
    return parse(file, where).metadata;
}

}  // namespace tg::io
