#pragma once
// Publishing a file atomically and durably, and reading one back with bounded sizes
// (Note [Atomic save] in posix_file.cpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tg::io_detail {

/// A file written under a unique temporary name in the directory of `path` and renamed over
/// `path` by commit(). Destroying it before commit() removes the temporary. Every failure throws
/// io_error("<where>: ...").
class AtomicFile {
public:
    AtomicFile(std::string path, std::string where);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(const void* data, size_t n);
    /// Flushes the file to disk, renames it over path, then flushes the directory entry.
    void commit();

private:
    [[noreturn]] void fail(const std::string& what);
    std::string path_, where_, tmp_;
    int fd_ = -1;
};

/// What every temporary name of `path` starts with: path + ".tmp.".
std::string temp_prefix(const std::string& path);

/// An open regular file for reading; anything else (a directory, a device, a FIFO) is refused
/// with io_error("<where>: ...") before a byte is read, so a read can never block or run forever.
class RegularFile {
public:
    RegularFile(const std::string& path, std::string where);
    ~RegularFile();
    RegularFile(const RegularFile&) = delete;
    RegularFile& operator=(const RegularFile&) = delete;

    /// The size fstat reported when the file was opened.
    uint64_t size() const { return size_; }
    /// Reads exactly n bytes into dst; throws io_error if the file ends first.
    void read_exactly(uint8_t* dst, size_t n);
    /// Whether the file has no more bytes (it has not grown since it was measured).
    bool at_end();

private:
    std::string where_;
    int fd_ = -1;
    uint64_t size_ = 0, pos_ = 0;
};

}  // namespace tg::io_detail
