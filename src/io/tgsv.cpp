// TGSV file reading and writing: Note [TGSV format] in include/tapegrad/io.hpp.
#include "io/tgsv.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "io/posix_file.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/io.hpp"

namespace tg::io_detail {
namespace {

constexpr char kMagic[4] = {'T', 'G', 'S', 'V'};

/// The dtype codes of the format: 0-3 in version 1, 4-9 since version 2.
constexpr Dtype kCodes[] = {kFloat32, kFloat64, kInt64, kBool,    kUInt8,
                            kInt8,    kInt16,   kInt32, kFloat16, kBFloat16};
constexpr uint8_t kVersion1Codes = 4;

uint8_t dtype_code(Dtype d) {
    uint8_t c = 0;
    while (kCodes[c] != d)
        ++c;
    return c;
}

/// A tensor's elements as contiguous little-endian bytes (copied to the host if needed).
std::vector<uint8_t> tensor_bytes(const Tensor& t) {
    NoGradGuard guard;
    Tensor c = t.detach();
    if (!c.device().is_cpu())
        c = c.to(Device::cpu());
    c = c.contiguous();
    std::vector<uint8_t> out(size_t(c.numel()) * element_size(c.dtype()));
    if (out.empty())
        return out;
    dispatch_all(c.dtype(), [&](auto tag) {
        using T = decltype(tag);
        std::memcpy(out.data(), c.data_ptr<T>(), out.size());
    });
    if (!host_is_little_endian()) {
        const size_t es = element_size(c.dtype());
        for (size_t i = 0; i < out.size(); i += es)
            std::reverse(&out[i], &out[i + es]);
    }
    return out;
}

}  // namespace

OutRecord record_of(std::string name, const Tensor& t) {
    return {std::move(name), t.dtype(), t.sizes(), tensor_bytes(t)};
}

OutRecord scalar_record(std::string name, double v) {
    return record_of(std::move(name), scalar_tensor(v, kFloat64));
}

OutRecord int_record(std::string name, int64_t v) {
    return record_of(std::move(name), scalar_tensor(double(v), kInt64));
}

namespace {

/// Appends little-endian integers and strings to a byte buffer.
struct Bytes {
    std::vector<uint8_t> b;
    void u8(uint8_t v) { b.push_back(v); }
    void u32(uint32_t v) {
        for (int i = 0; i < 4; ++i)
            b.push_back(uint8_t(v >> (8 * i)));
    }
    void u64(uint64_t v) {
        for (int i = 0; i < 8; ++i)
            b.push_back(uint8_t(v >> (8 * i)));
    }
    void str(const std::string& s) {
        u32(uint32_t(s.size()));
        b.insert(b.end(), s.begin(), s.end());
    }
};

uint32_t crc_update(uint32_t crc, const uint8_t* p, size_t n) {
    while (n > 0) {  // zlib takes uInt lengths
        uInt chunk = uInt(std::min<size_t>(n, 1u << 30));
        crc = uint32_t(crc32(crc, p, chunk));
        p += chunk;
        n -= chunk;
    }
    return crc;
}

}  // namespace

void write_file(const std::string& path, uint32_t kind, const std::string& type,
                const std::vector<OutRecord>& records) {
    // every record's header in memory; the data is streamed from the records
    std::vector<Bytes> heads(records.size());
    uint64_t total = 4 + 4 + 4 + 8 + 4 + type.size() + 8 + 4;
    uint32_t version = 1;  // a file without the newer dtypes stays readable by older builds
    for (size_t i = 0; i < records.size(); ++i) {
        if (dtype_code(records[i].dtype) >= kVersion1Codes)
            version = kSerializationVersion;
        const OutRecord& r = records[i];
        Bytes& h = heads[i];
        h.str(r.name);
        h.u8(dtype_code(r.dtype));
        h.u32(uint32_t(r.sizes.size()));
        for (int64_t s : r.sizes)
            h.u64(uint64_t(s));
        h.u64(r.bytes.size());
        total += h.b.size() + r.bytes.size();
    }
    Bytes head;
    head.b.insert(head.b.end(), kMagic, kMagic + 4);
    head.u32(version);
    head.u32(kind);
    head.u64(total);
    head.str(type);
    head.u64(records.size());

    AtomicFile out(path, "save(" + path + ")");  // Note [Atomic save] in posix_file.cpp
    uint32_t crc = uint32_t(crc32(0L, Z_NULL, 0));
    auto put = [&](const std::vector<uint8_t>& b) {
        out.write(b.data(), b.size());
        crc = crc_update(crc, b.data(), b.size());
    };
    put(head.b);
    for (size_t i = 0; i < records.size(); ++i) {
        put(heads[i].b);
        put(records[i].bytes);
    }
    Bytes tail;
    tail.u32(crc);
    out.write(tail.b.data(), tail.b.size());
    out.commit();
}

namespace {

/// Reads little-endian fields from b[pos, end); running past end throws io_error.
struct Reader {
    const uint8_t* b;
    size_t pos, end;
    const std::string& where;
    std::string record = {};  // the record being read, named in errors
    size_t left() const { return end - pos; }
    const uint8_t* take(uint64_t n, const char* what) {
        if (n > left())
            throw io_error(where + ": " + (record.empty() ? "" : "record \"" + record + "\": ") +
                           "truncated or corrupt file: " + what + " runs past the end at byte " +
                           std::to_string(pos));
        const uint8_t* p = b + pos;
        pos += size_t(n);
        return p;
    }
    uint64_t uint(int n, const char* what) {
        const uint8_t* p = take(uint64_t(n), what);
        uint64_t v = 0;
        for (int i = 0; i < n; ++i)
            v |= uint64_t(p[i]) << (8 * i);
        return v;
    }
    std::string str(const char* what) {
        uint64_t n = uint(4, what);
        const uint8_t* p = take(n, what);
        return std::string(reinterpret_cast<const char*>(p), size_t(n));
    }
};

// magic, version, kind, file size: read before the rest, which their file size bounds
constexpr size_t kFixedHeader = 20;
// the smallest record: name length, dtype, ndim, nbytes
constexpr uint64_t kMinRecord = 4 + 1 + 4 + 8;
constexpr uint32_t kMaxDims = 64;
constexpr uint64_t kMaxInt64 = uint64_t(std::numeric_limits<int64_t>::max());

/// The buffer for a whole file of `size` bytes (the header has already matched it to the file).
std::vector<uint8_t> file_buffer(uint64_t size, const std::string& where) {
    try {
        return std::vector<uint8_t>(size_t(size));
    } catch (const std::bad_alloc&) {
        throw out_of_memory(where + ": cannot allocate " + std::to_string(size) +
                            " bytes to read the file");
    }
}

/// Reads one record's header and locates its data, checking every declared size against
/// overflow and against the bytes left before it believes it.
InRecord read_record(Reader& r, const std::string& where, uint32_t version) {
    InRecord rec;
    r.record.clear();
    rec.name = r.str("record name");
    r.record = rec.name;
    const std::string what = where + ": record \"" + rec.name + "\": ";
    uint8_t code = uint8_t(r.uint(1, "dtype"));
    if (code >= (version == 1 ? kVersion1Codes : sizeof kCodes))
        throw io_error(what + "unknown dtype code " + std::to_string(code) + " (format version " +
                       std::to_string(version) + ")");
    rec.dtype = kCodes[code];
    uint32_t ndim = uint32_t(r.uint(4, "ndim"));
    if (ndim > kMaxDims)
        throw io_error(what + "bad ndim " + std::to_string(ndim));
    // Every element count and stride of the shape must fit in int64, zero-sized or not, so the
    // product of the non-zero sizes must; the element count is 0 if any size is.
    int64_t nonzero_product = 1;
    bool empty = false;
    for (uint32_t d = 0; d < ndim; ++d) {
        uint64_t s = r.uint(8, "shape");
        if (s > kMaxInt64)
            throw io_error(what + "negative size " + std::to_string(int64_t(s)));
        rec.sizes.push_back(int64_t(s));
        if (s == 0)
            empty = true;
        else if (__builtin_mul_overflow(nonzero_product, int64_t(s), &nonzero_product))
            throw io_error(what + "shape " + shape_str(rec.sizes) + "...: too many elements");
    }
    const uint64_t esize = element_size(rec.dtype);
    const uint64_t numel = empty ? 0 : uint64_t(nonzero_product);
    if (numel > kMaxInt64 / esize)
        throw io_error(what + "shape " + shape_str(rec.sizes) + ": too many elements");
    const uint64_t nbytes = r.uint(8, "data size");
    if (nbytes != numel * esize)
        throw io_error(what + "data size " + std::to_string(nbytes) + " does not match shape " +
                       shape_str(rec.sizes) + " (" + std::to_string(numel * esize) + " bytes)");
    rec.data = r.take(nbytes, "tensor data");
    rec.nbytes = size_t(nbytes);
    if (rec.dtype == kBool)  // a byte other than 0 or 1 is no bool
        for (uint64_t i = 0; i < nbytes; ++i)
            if (rec.data[i] > 1)
                throw io_error(what + "bool element " + std::to_string(i) + " is " +
                               std::to_string(int(rec.data[i])) + ", not 0 or 1");
    return rec;
}

}  // namespace

InFile read_file(const std::string& path, const std::string& where) {
    RegularFile in(path, where);  // a directory, a device or a FIFO is refused here
    const uint64_t size = in.size();
    uint8_t head[kFixedHeader];
    const size_t head_size = size_t(std::min<uint64_t>(size, kFixedHeader));
    in.read_exactly(head, head_size);
    if (head_size < 4 || std::memcmp(head, kMagic, 4) != 0)
        throw io_error(where + ": not a tapegrad file (bad magic; expected \"TGSV\")");
    Reader h{head, 4, head_size, where};
    uint32_t version = uint32_t(h.uint(4, "version"));
    if (version < 1 || version > kSerializationVersion)
        throw io_error(where + ": format version " + std::to_string(version) +
                       ", this build reads versions 1 to " + std::to_string(kSerializationVersion));
    InFile f;
    f.kind = uint32_t(h.uint(4, "kind"));
    uint64_t total = h.uint(8, "file size");
    if (total != size)
        throw io_error(where + ": " + (size < total ? "truncated" : "corrupt") + " file: " +
                       std::to_string(size) + " bytes, header says " + std::to_string(total));
    if (size < kFixedHeader + 4)
        throw io_error(where + ": truncated file: " + std::to_string(size) + " bytes");
    // Only now, with the declared size equal to the file's, is the whole file read.
    f.buffer = file_buffer(size, where);
    auto& b = f.buffer;
    std::memcpy(b.data(), head, kFixedHeader);
    in.read_exactly(b.data() + kFixedHeader, b.size() - kFixedHeader);
    if (!in.at_end())
        throw io_error(where + ": corrupt file: it grew while being read");
    uint32_t stored = 0;
    for (int i = 0; i < 4; ++i)
        stored |= uint32_t(b[b.size() - 4 + i]) << (8 * i);
    uint32_t crc = crc_update(uint32_t(crc32(0L, Z_NULL, 0)), b.data(), b.size() - 4);
    if (crc != stored)
        throw io_error(where + ": checksum mismatch: the file is corrupt");
    Reader r{b.data(), kFixedHeader, b.size() - 4, where};  // the records end at the checksum
    f.type = r.str("type name");
    uint64_t count = r.uint(8, "record count");
    if (count > r.left() / kMinRecord)
        throw io_error(where + ": corrupt file: " + std::to_string(count) +
                       " records cannot fit in " + std::to_string(r.left()) + " bytes");
    for (uint64_t i = 0; i < count; ++i)
        f.records.push_back(read_record(r, where, version));
    r.record.clear();
    if (r.left() != 0)
        throw io_error(where + ": corrupt file: trailing bytes");
    return f;
}

/// A CPU tensor holding a record's elements (converted from little-endian).
Tensor tensor_of(const InRecord& rec) {
    Tensor t = empty(rec.sizes, TensorOptions(rec.dtype));
    if (rec.nbytes == 0)
        return t;
    dispatch_all(rec.dtype, [&](auto tag) {
        using T = decltype(tag);
        uint8_t* dst = reinterpret_cast<uint8_t*>(t.data_ptr<T>());
        std::memcpy(dst, rec.data, rec.nbytes);
        if (!host_is_little_endian())
            for (size_t i = 0; i < rec.nbytes; i += sizeof(T))
                std::reverse(dst + i, dst + i + sizeof(T));
    });
    return t;
}

void check_matches(const std::string& where, const std::string& what, const InRecord& rec,
                   Dtype dtype, const Shape& sizes, const char* target) {
    if (rec.sizes != sizes)
        throw io_error(where + ": " + what + ": shape " + shape_str(rec.sizes) + " in file, " +
                       shape_str(sizes) + " in " + target);
    if (rec.dtype != dtype)
        throw io_error(where + ": " + what + ": dtype " + dtype_name(rec.dtype) + " in file, " +
                       dtype_name(dtype) + " in " + target);
}

}  // namespace tg::io_detail
