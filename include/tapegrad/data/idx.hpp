#pragma once
/// The IDX file format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/):
///
///     bytes 0-1   0x00 0x00
///     byte  2     element type: 0x08 = unsigned byte (the only type MNIST files use)
///     byte  3     number of dims n (1 for labels, 3 for images)
///     n x uint32  the dims, big-endian
///     then        prod(dims) elements, row-major
///
/// So labels start with the magic number 0x00000801 and images with 0x00000803.
#include <cstdint>
#include <string>
#include <vector>
#pragma GCC visibility push(default)

namespace tg::data {

/// The content of an IDX file of unsigned bytes: its dims and its elements, row-major.
struct IdxArray {
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
};

/// Reads an IDX file of unsigned bytes, plain or gzip-compressed (detected from the content, not
/// the name). Throws tg::io_error naming the file and the problem when it is missing, not a
/// regular file (a directory, a FIFO or a device such as /dev/zero), unreadable, empty, truncated,
/// has bytes after the data, a bad magic number, an unsupported element type, or fails gzip's CRC
/// check.
IdxArray read_idx(const std::string& path);

}  // namespace tg::data

#pragma GCC visibility pop
