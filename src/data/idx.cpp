// IDX reader (see include/tapegrad/data/idx.hpp for the format).
//
// Note [Reading through zlib]: gzopen/gzread read gzip and plain files alike, so there is one
// code path. zlib checks a gzip member's CRC and length only when the reader reaches its end, so
// after the declared data we always read once more: that read must return 0 bytes with no error,
// which catches trailing bytes, truncated gzip streams and CRC errors in one place.
#include "tapegrad/data/idx.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "tapegrad/error.hpp"

namespace tg::data {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw io_error("read_idx(\"" + path + "\"): " + what);
}

std::string dims_str(const std::vector<int64_t>& dims) {
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i)
        s += (i ? "x" : "") + std::to_string(dims[i]);
    return s;
}

/// Owns a gzFile and reads from it, turning every zlib failure into an io_error.
class GzReader {
public:
    explicit GzReader(const std::string& path) : path_(path) {
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0)
            fail(path_, std::string("cannot open: ") + std::strerror(errno));
        // Only regular files: a FIFO would block the open and a device may never end.
        if (S_ISDIR(st.st_mode))
            fail(path_, "cannot open: not a regular file (a directory)");
        if (!S_ISREG(st.st_mode))
            fail(path_, "cannot open: not a regular file");
        errno = 0;
        file_ = gzopen(path.c_str(), "rb");
        if (!file_)
            fail(path_,
                 std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
        gzbuffer(file_, 1 << 17);
    }
    ~GzReader() {
        if (file_)
            gzclose_r(file_);
    }
    GzReader(const GzReader&) = delete;
    GzReader& operator=(const GzReader&) = delete;

    /// Reads up to n bytes into dst and returns how many were read (fewer only at the end).
    size_t read(uint8_t* dst, size_t n) {
        size_t done = 0;
        while (done < n) {
            unsigned chunk = unsigned(std::min<size_t>(n - done, 1u << 24));
            int got = gzread(file_, dst + done, chunk);
            if (got < 0)
                check_error();
            if (got <= 0)
                break;
            done += size_t(got);
        }
        check_error();  // a short read may come with a deferred error (truncated stream)
        return done;
    }

private:
    void check_error() {
        int code = Z_OK;
        const char* msg = gzerror(file_, &code);
        if (code == Z_OK)
            return;
        std::string what = msg ? msg : "unknown zlib error";
        if (what.rfind(path_ + ": ", 0) == 0)
            what.erase(0, path_.size() + 2);  // zlib prefixes the path
        if (code == Z_ERRNO)
            what = std::strerror(errno);
        if (code == Z_BUF_ERROR)
            what = "gzip stream truncated (" + what + ")";
        if (code == Z_DATA_ERROR)
            what = "corrupt gzip data (" + what + ")";
        fail(path_, what);
    }

    std::string path_;
    gzFile file_ = nullptr;
};

}  // namespace

IdxArray read_idx(const std::string& path) {
    GzReader in(path);
    uint8_t magic[4];
    size_t got = in.read(magic, 4);
    if (got == 0)
        fail(path, "empty file");
    if (got < 4)
        fail(path,
             "truncated: " + std::to_string(got) + " bytes, shorter than the 4-byte magic number");
    if (magic[0] != 0 || magic[1] != 0) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%02X%02X%02X%02X", magic[0], magic[1], magic[2],
                      magic[3]);
        fail(path, std::string("bad magic number ") + hex +
                       " (an IDX file starts 0x0000, e.g. 0x00000803)");
    }
    if (magic[2] != 0x08) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", magic[2]);
        fail(path,
             std::string("unsupported element type code ") + hex + " (only 0x08, unsigned byte)");
    }
    const int ndim = magic[3];
    if (ndim == 0)
        fail(path, "IDX header declares 0 dims");

    std::vector<uint8_t> raw(size_t(ndim) * 4);
    got = in.read(raw.data(), raw.size());
    if (got < raw.size())
        fail(path, "truncated header: " + std::to_string(ndim) + " dims need " +
                       std::to_string(raw.size()) + " bytes after the magic number, found " +
                       std::to_string(got));
    IdxArray out;
    uint64_t count = 1;
    bool overflow = false;
    for (int i = 0; i < ndim; ++i) {
        const uint8_t* b = &raw[size_t(i) * 4];
        uint64_t d = (uint64_t(b[0]) << 24) | (uint64_t(b[1]) << 16) | (uint64_t(b[2]) << 8) | b[3];
        out.shape.push_back(int64_t(d));
        if (d != 0 && count > std::numeric_limits<uint64_t>::max() / 2 / d)
            overflow = true;
        count *= d;
    }
    if (overflow || count > uint64_t(std::numeric_limits<int64_t>::max()))
        fail(path, "dims " + dims_str(out.shape) + " are too large");

    // Grow the buffer as data arrives, so corrupt dims cannot make us allocate terabytes.
    const size_t step = size_t(1) << 24;
    size_t have = 0;
    while (have < count) {
        size_t want = size_t(std::min<uint64_t>(count - have, step));
        out.data.resize(have + want);
        size_t n = in.read(out.data.data() + have, want);
        have += n;
        if (n < want) {
            fail(path, "truncated: dims " + dims_str(out.shape) + " need " + std::to_string(count) +
                           " data bytes, found " + std::to_string(have));
        }
    }
    uint8_t extra[64];
    size_t more = in.read(extra, sizeof extra);  // Note [Reading through zlib]
    if (more > 0) {
        fail(path, "dims " + dims_str(out.shape) + " account for " + std::to_string(count) +
                       " data bytes, but the file has more (wrong dims or trailing garbage)");
    }
    return out;
}

}  // namespace tg::data
