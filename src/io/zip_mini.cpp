// Reading and writing the stored zip archives of PyTorch's checkpoints (zip_mini.hpp).
// Layout (APPNOTE.TXT): [local header, name, extra, data]... central directory entries,
// [zip64 end record, zip64 locator], end record. All integers little-endian.
#include "io/zip_mini.hpp"

#include <zlib.h>

#include <set>

#include "tapegrad/error.hpp"

namespace tg::io_detail {
namespace {

constexpr uint32_t kLocal = 0x04034b50, kCentral = 0x02014b50, kEnd = 0x06054b50,
                   kEnd64 = 0x06064b50, kLocator64 = 0x07064b50;
constexpr uint64_t kAlign = 64;

uint64_t get(const uint8_t* p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}

void put_le(std::vector<uint8_t>& out, uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
        out.push_back(uint8_t(v >> (8 * i)));
}

uint32_t crc_of(const uint8_t* p, uint64_t n) {
    uLong crc = crc32(0L, Z_NULL, 0);
    while (n > 0) {
        const uInt chunk = uInt(std::min<uint64_t>(n, 1u << 30));
        crc = crc32(crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return uint32_t(crc);
}

struct Reader {
    const uint8_t* data;
    uint64_t size;
    const std::string& where;
    [[noreturn]] void fail(const std::string& what) const {
        throw io_error(where + ": not a readable zip archive: " + what);
    }
    /// The n bytes at [at, at + len) exist.
    const uint8_t* at(uint64_t pos, uint64_t len, const char* what) const {
        if (pos > size || len > size - pos)
            fail(std::string(what) + " at byte " + std::to_string(pos) + " passes the end of the " +
                 std::to_string(size) + "-byte file (truncated?)");
        return data + pos;
    }
};

/// The zip64 extra field's values replace the 0xFFFFFFFF ones, in the order usize, csize,
/// offset.
void apply_zip64(const Reader& r, const uint8_t* extra, uint64_t len, uint64_t& usize,
                 uint64_t& csize, uint64_t& offset, const std::string& name) {
    for (uint64_t i = 0; i + 4 <= len;) {
        const uint64_t id = get(extra + i, 2), n = get(extra + i + 2, 2);
        if (i + 4 + n > len)
            r.fail("entry \"" + name + "\": an extra field passes its end");
        if (id == 1) {
            uint64_t j = 0;
            for (uint64_t* v : {&usize, &csize, &offset})
                if (*v == 0xFFFFFFFFu) {
                    if (j + 8 > n)
                        r.fail("entry \"" + name + "\": zip64 field too short");
                    *v = get(extra + i + 4 + j, 8);
                    j += 8;
                }
        }
        i += 4 + n;
    }
}

}  // namespace

std::vector<ZipEntry> zip_entries(const uint8_t* data, uint64_t size, const std::string& where) {
    const Reader r{data, size, where};
    if (size < 22)
        r.fail(std::to_string(size) + " bytes, too short for a zip end record");
    // the end record is the last one with a comment that reaches exactly the end of the file
    uint64_t end = size - 22;
    const uint64_t lowest = size - 22 > 0xFFFF ? size - 22 - 0xFFFF : 0;
    for (;; --end) {
        if (get(data + end, 4) == kEnd && end + 22 + get(data + end + 20, 2) == size)
            break;
        if (end == lowest)
            r.fail("no end-of-central-directory record (truncated, or not a zip file)");
    }
    const uint8_t* e = data + end;
    if (get(e + 4, 2) != 0 || get(e + 6, 2) != 0)
        r.fail("a multi-disk archive");
    uint64_t count = get(e + 10, 2), dir_size = get(e + 12, 4), dir_at = get(e + 16, 4);
    if (count == 0xFFFF || dir_size == 0xFFFFFFFFu || dir_at == 0xFFFFFFFFu) {
        if (end < 20 || get(data + end - 20, 4) != kLocator64)
            r.fail("a zip64 end record is needed but its locator is missing");
        const uint64_t at64 = get(data + end - 20 + 8, 8);
        const uint8_t* e64 = r.at(at64, 56, "the zip64 end record");
        if (get(e64, 4) != kEnd64)
            r.fail("bad zip64 end record signature");
        count = get(e64 + 32, 8);
        dir_size = get(e64 + 40, 8);
        dir_at = get(e64 + 48, 8);
    }
    const uint8_t* dir = r.at(dir_at, dir_size, "the central directory");
    if (count > dir_size / 46)
        r.fail(std::to_string(count) + " entries cannot fit a " + std::to_string(dir_size) +
               "-byte central directory");
    std::vector<ZipEntry> out;
    std::set<std::string> names;
    uint64_t pos = 0;
    for (uint64_t k = 0; k < count; ++k) {
        if (pos + 46 > dir_size || get(dir + pos, 4) != kCentral)
            r.fail("central directory entry " + std::to_string(k) + " is malformed");
        const uint8_t* c = dir + pos;
        const uint64_t flags = get(c + 8, 2), method = get(c + 10, 2);
        uint64_t csize = get(c + 20, 4), usize = get(c + 24, 4), local = get(c + 42, 4);
        const uint64_t nlen = get(c + 28, 2), xlen = get(c + 30, 2), clen = get(c + 32, 2);
        if (pos + 46 + nlen + xlen + clen > dir_size)
            r.fail("central directory entry " + std::to_string(k) + " passes the directory's end");
        ZipEntry z;
        z.name.assign(reinterpret_cast<const char*>(c + 46), nlen);
        apply_zip64(r, c + 46 + nlen, xlen, usize, csize, local, z.name);
        if (flags & 1)
            r.fail("entry \"" + z.name + "\" is encrypted");
        if (method != 0)
            throw io_error(where + ": entry \"" + z.name + "\" is compressed (method " +
                           std::to_string(method) +
                           "); torch.save stores entries uncompressed, and tapegrad reads only "
                           "stored ones");
        if (csize != usize)
            r.fail("stored entry \"" + z.name + "\" has sizes " + std::to_string(csize) + " and " +
                   std::to_string(usize));
        if (get(c + 34, 2) != 0)
            r.fail("entry \"" + z.name + "\" is on another disk");
        const uint8_t* l = r.at(local, 30, "a local header");
        if (get(l, 4) != kLocal)
            r.fail("entry \"" + z.name + "\": bad local header signature");
        const uint64_t lnlen = get(l + 26, 2), lxlen = get(l + 28, 2);
        const uint8_t* lname = r.at(local + 30, lnlen + lxlen, "a local header's name");
        if (lnlen != nlen || std::string(reinterpret_cast<const char*>(lname), lnlen) != z.name)
            r.fail("entry \"" + z.name + "\": the local header names another file");
        z.offset = local + 30 + lnlen + lxlen;
        z.size = usize;
        z.crc = uint32_t(get(c + 16, 4));
        r.at(z.offset, z.size, ("entry \"" + z.name + "\"").c_str());
        if (!names.insert(z.name).second)
            r.fail("entry \"" + z.name + "\" appears twice");
        out.push_back(std::move(z));
        pos += 46 + nlen + xlen + clen;
    }
    return out;
}

void zip_check_crc(const uint8_t* data, const ZipEntry& e, const std::string& where) {
    if (crc_of(data + e.offset, e.size) != e.crc)
        throw io_error(where + ": entry \"" + e.name + "\" fails its CRC-32: the file is corrupt");
}

void ZipWriter::put(const std::vector<uint8_t>& bytes) {
    out_.write(bytes.data(), bytes.size());
    at_ += bytes.size();
}

void ZipWriter::add(const std::string& name, const void* data, size_t n) {
    if (name.size() > 0xFFFF)
        throw io_error(where_ + ": entry name of " + std::to_string(name.size()) + " bytes");
    const uint32_t crc = crc_of(static_cast<const uint8_t*>(data), n);
    const bool big = n > max_;  // the sizes go in a zip64 extra field
    const uint64_t zip64_len = big ? 4 + 16 : 0;
    // an extra field ("FB", as torch's writer names it) pads the data to a 64-byte boundary
    const uint64_t pad = (kAlign - (at_ + 30 + name.size() + zip64_len + 4) % kAlign) % kAlign;
    std::vector<uint8_t> h;
    put_le(h, kLocal, 4);
    put_le(h, big ? 45 : 20, 2);  // version needed: 4.5 for zip64, else 2.0
    put_le(h, 0, 2);              // flags
    put_le(h, 0, 2);              // stored
    put_le(h, 0, 2);              // time
    put_le(h, 0x21, 2);           // date: 1980-01-01
    put_le(h, crc, 4);
    put_le(h, big ? 0xFFFFFFFFu : n, 4);
    put_le(h, big ? 0xFFFFFFFFu : n, 4);
    put_le(h, name.size(), 2);
    put_le(h, zip64_len + 4 + pad, 2);
    h.insert(h.end(), name.begin(), name.end());
    if (big) {
        put_le(h, 1, 2);  // the zip64 extended information: usize, csize
        put_le(h, 16, 2);
        put_le(h, n, 8);
        put_le(h, n, 8);
    }
    put_le(h, 0x4246, 2);  // "FB"
    put_le(h, pad, 2);
    h.insert(h.end(), pad, 'Z');
    written_.push_back({name, at_, uint64_t(n), crc});
    put(h);
    if (n > 0)
        out_.write(data, n);
    at_ += n;
}

void ZipWriter::finish() {
    const uint64_t dir_at = at_;
    bool any64 = false;
    std::vector<uint8_t> d;
    for (auto& w : written_) {
        // an entry past zip32_max, or larger, has its sizes and offset all in the zip64 field:
        // miniz (torch.load's reader) checks the 32-bit offset whenever the sizes are not zip64
        const bool z = w.size > max_ || w.header > max_;
        any64 = any64 || z;
        put_le(d, kCentral, 4);
        put_le(d, z ? 45 : 20, 2);  // made by
        put_le(d, z ? 45 : 20, 2);  // needed
        put_le(d, 0, 2);
        put_le(d, 0, 2);
        put_le(d, 0, 2);
        put_le(d, 0x21, 2);
        put_le(d, w.crc, 4);
        put_le(d, z ? 0xFFFFFFFFu : w.size, 4);
        put_le(d, z ? 0xFFFFFFFFu : w.size, 4);
        put_le(d, w.name.size(), 2);
        put_le(d, z ? 4 + 24 : 0, 2);  // extra
        put_le(d, 0, 2);               // comment
        put_le(d, 0, 2);               // disk
        put_le(d, 0, 2);               // internal attributes
        put_le(d, 0, 4);               // external attributes
        put_le(d, z ? 0xFFFFFFFFu : w.header, 4);
        d.insert(d.end(), w.name.begin(), w.name.end());
        if (z) {  // the replaced values, in the order usize, csize, offset
            put_le(d, 1, 2);
            put_le(d, 24, 2);
            put_le(d, w.size, 8);
            put_le(d, w.size, 8);
            put_le(d, w.header, 8);
        }
    }
    const uint64_t dir_size = d.size(), count = written_.size();
    const bool end64 = any64 || count >= 0xFFFF || dir_size > max_ || dir_at > max_;
    if (end64) {
        const uint64_t at64 = dir_at + dir_size;
        put_le(d, kEnd64, 4);
        put_le(d, 44, 8);  // the record's size after this field
        put_le(d, 45, 2);  // made by
        put_le(d, 45, 2);  // needed
        put_le(d, 0, 4);   // this disk
        put_le(d, 0, 4);   // the directory's disk
        put_le(d, count, 8);
        put_le(d, count, 8);
        put_le(d, dir_size, 8);
        put_le(d, dir_at, 8);
        put_le(d, kLocator64, 4);
        put_le(d, 0, 4);  // the zip64 end record's disk
        put_le(d, at64, 8);
        put_le(d, 1, 4);  // disks
    }
    put_le(d, kEnd, 4);
    put_le(d, 0, 4);  // disks
    put_le(d, end64 ? 0xFFFF : count, 2);
    put_le(d, end64 ? 0xFFFF : count, 2);
    put_le(d, end64 ? 0xFFFFFFFFu : dir_size, 4);
    put_le(d, end64 ? 0xFFFFFFFFu : dir_at, 4);
    put_le(d, 0, 2);  // comment
    put(d);
}

}  // namespace tg::io_detail
