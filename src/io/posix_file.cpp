// Atomic, durable writes and bounded reads of files (posix_file.hpp).
//
// Note [Atomic save]
// A save must never publish a partial or mixed file at `path`, even with several savers of one
// path at once (threads or processes) or a saver killed at any instruction:
//  - The data goes to a temporary in path's directory (the same file system, so rename(2) is
//    atomic) with a fresh random name, `path.tmp.XXXXXX`, created with O_EXCL: no two savers
//    ever share a temporary, and each rename publishes one complete file (the last one wins).
//    Not mkstemp(3): it creates the file 0600, while a saved file should get the permissions
//    the user's umask gives any new file.
//  - fsync(2) of the file before the rename, so after a power cut the name never points to data
//    that never reached the disk; fsync of the directory after it, so the rename itself lasts.
//  - Every error path removes the temporary. A killed saver cannot, so each saver holds an
//    exclusive flock(2) on its temporary for as long as it exists: the kernel drops the lock
//    when the process dies, however it dies, and every save first removes the temporaries of
//    its path that nobody holds. A sweeping saver may catch another's temporary in the instant
//    between its creation and its lock, so a saver that has taken its lock checks that the name
//    still refers to its file (same inode) and otherwise starts again with a new name.
#include "io/posix_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include "tapegrad/error.hpp"

namespace tg::io_detail {
namespace {

std::string errno_str(int e) {
    return std::strerror(e);
}

/// The directory that holds path ("." for a bare file name).
std::string directory_of(const std::string& path) {
    std::string dir = std::filesystem::path(path).parent_path().string();
    return dir.empty() ? "." : dir;
}

constexpr char kNameChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr size_t kSuffixLength = 6;

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t entropy() {
    try {
        std::random_device rd;
        return (uint64_t(rd()) << 32) ^ rd();
    } catch (const std::exception&) {  // no entropy source: the clock and pid below still vary
        return 0;
    }
}

/// Six random name characters. The pid is mixed in at every call: a forked child inherits its
/// parent's thread-local state and must not try the same names in the same order.
std::string random_suffix() {
    thread_local uint64_t state = entropy() ^ uint64_t(reinterpret_cast<uintptr_t>(&state));
    state += 0x9E3779B97F4A7C15ull;
    uint64_t x = mix(state ^ (uint64_t(::getpid()) << 40) ^
                     uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::string s;
    for (size_t i = 0; i < kSuffixLength; ++i, x /= 62)
        s += kNameChars[x % 62];
    return s;
}

bool is_temp_name(const std::string& name, const std::string& prefix) {
    if (name.size() != prefix.size() + kSuffixLength || name.compare(0, prefix.size(), prefix) != 0)
        return false;
    for (size_t i = prefix.size(); i < name.size(); ++i)
        if (!std::strchr(kNameChars, name[i]) || name[i] == '\0')
            return false;
    return true;
}

bool same_file(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/// Whether the name still refers to the open file fd.
bool names_file(const std::string& name, int fd) {
    struct stat held {
    }, now{};
    return ::fstat(fd, &held) == 0 && ::lstat(name.c_str(), &now) == 0 && same_file(held, now);
}

int lock(int fd, int how) {
    int rc;
    do
        rc = ::flock(fd, how);
    while (rc != 0 && errno == EINTR);
    return rc;
}

/// Removes the temporaries of path whose savers are gone (Note [Atomic save]). Best effort:
/// whatever cannot be opened or locked is left alone.
void remove_stale_temporaries(const std::string& path) {
    const std::string dir = directory_of(path);
    if (std::filesystem::path(path).filename().empty())
        return;  // "dir/": no file name to sweep for, and the rename will fail
    const std::string prefix = std::filesystem::path(temp_prefix(path)).filename().string();
    DIR* d = ::opendir(dir.c_str());
    if (!d)
        return;  // creating the temporary reports the problem
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (!is_temp_name(name, prefix))
            continue;
        const std::string full = dir + "/" + name;
        int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
            continue;
        struct stat st {};
        if (lock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            names_file(full, fd))
            ::unlink(full.c_str());
        ::close(fd);
    }
    ::closedir(d);
}

}  // namespace

std::string temp_prefix(const std::string& path) {
    return path + ".tmp.";
}

AtomicFile::AtomicFile(std::string path, std::string where)
    : path_(std::move(path)), where_(std::move(where)) {
    remove_stale_temporaries(path_);
    const std::string prefix = temp_prefix(path_);
    constexpr int kAttempts = 100;
    for (int attempt = 1;; ++attempt) {
        std::string tmp = prefix + random_suffix();
        int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) {
            if (errno == EEXIST && attempt < kAttempts)
                continue;
            throw io_error(where_ + ": cannot open a temporary file " + tmp +
                           " for writing: " + errno_str(errno));
        }
        // Without flock (some network file systems) the temporary is simply never swept.
        if (lock(fd, LOCK_EX) != 0 || names_file(tmp, fd)) {
            fd_ = fd;
            tmp_ = std::move(tmp);
            return;
        }
        ::close(fd);  // swept before we locked it: it is gone, take another name
        if (attempt >= kAttempts)
            throw io_error(where_ + ": cannot keep a temporary file next to " + path_ +
                           ": it was removed " + std::to_string(kAttempts) + " times");
    }
}

AtomicFile::~AtomicFile() {
    if (fd_ < 0)
        return;
    ::unlink(tmp_.c_str());  // still locked: no sweeper can be removing a newer file by this name
    ::close(fd_);
}

void AtomicFile::fail(const std::string& what) {
    throw io_error(where_ + ": " + what);
}

void AtomicFile::write(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        ssize_t got = ::write(fd_, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            fail("error while writing " + tmp_ + ": " + errno_str(got < 0 ? errno : EIO));
        p += got;
        n -= size_t(got);
    }
}

void AtomicFile::commit() {
    if (::fsync(fd_) != 0)
        fail("cannot flush " + tmp_ + " to disk: " + errno_str(errno));
    if (::rename(tmp_.c_str(), path_.c_str()) != 0)
        fail("cannot rename " + tmp_ + " to " + path_ + ": " + errno_str(errno));
    ::close(fd_);  // only now drop the lock: until the rename a sweeper could take the file
    fd_ = -1;
    const std::string dir = directory_of(path_);
    int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0)
        return;  // e.g. a directory we may write into but not read: nothing more we can do
    int rc = ::fsync(d);
    int e = errno;
    ::close(d);
    if (rc != 0 && e != EINVAL)  // EINVAL: the file system cannot sync directories
        fail("saved " + path_ + ", but cannot flush its directory " + dir +
             " to disk: " + errno_str(e));
}

namespace {

const char* type_name(mode_t m) {
    return S_ISDIR(m)    ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

}  // namespace

RegularFile::RegularFile(const std::string& path, std::string where) : where_(std::move(where)) {
    // Look before opening: opening some devices does something, and a FIFO blocks.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw io_error(where_ + ": cannot open file: " + errno_str(errno));
    if (!S_ISREG(st.st_mode))
        throw io_error(where_ + ": not a regular file (" + type_name(st.st_mode) + ")");
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0)
        throw io_error(where_ + ": cannot open file: " + errno_str(errno));
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced since the stat
        ::close(fd_);
        throw io_error(where_ + ": not a regular file (" + type_name(st.st_mode) + ")");
    }
    size_ = uint64_t(st.st_size);
}

RegularFile::~RegularFile() {
    ::close(fd_);
}

void RegularFile::read_exactly(uint8_t* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t got = ::read(fd_, dst + done, n - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            throw io_error(where_ + ": read error: " + errno_str(errno));
        if (got == 0)
            throw io_error(where_ + ": truncated file: it ended at byte " + std::to_string(pos_) +
                           " while being read, " + std::to_string(size_) + " bytes before");
        done += size_t(got);
        pos_ += uint64_t(got);
    }
}

bool RegularFile::at_end() {
    uint8_t byte;
    ssize_t got;
    do
        got = ::read(fd_, &byte, 1);
    while (got < 0 && errno == EINTR);
    return got == 0;
}

}  // namespace tg::io_detail
