#pragma once
// Reading and writing TGSV files (Note [TGSV format] in include/tapegrad/io.hpp): the byte
// layout, checksum and record structure; posix_file.hpp publishes and reads the bytes.
// serialize.cpp maps modules and optimizers onto records.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tapegrad/tensor.hpp"

namespace tg::io_detail {

constexpr uint32_t kKindModule = 1, kKindOptimizer = 2, kKindTensors = 3;

/// One record to write: name, dtype, shape and the little-endian bytes.
struct OutRecord {
    std::string name;
    Dtype dtype;
    Shape sizes;
    std::vector<uint8_t> bytes;
};
/// A record of t (copied to the host, contiguous, little-endian).
OutRecord record_of(std::string name, const Tensor& t);
/// A float64 [] record.
OutRecord scalar_record(std::string name, double v);
/// An int64 [] record.
OutRecord int_record(std::string name, int64_t v);
/// Writes a temporary next to path and renames it over path (Note [Atomic save] in
/// posix_file.cpp); throws io_error("save(path): ...").
void write_file(const std::string& path, uint32_t kind, const std::string& type,
                const std::vector<OutRecord>& records);

/// A parsed record: its data points into InFile::buffer.
struct InRecord {
    std::string name;
    Dtype dtype;
    Shape sizes;
    const uint8_t* data;
    size_t nbytes;
};
struct InFile {
    uint32_t kind;
    std::string type;
    std::vector<InRecord> records;
    std::vector<uint8_t> buffer;
};
/// Reads and validates a whole regular file (magic, version, size, checksum, record structure,
/// every declared size against overflow and the bytes left); throws io_error prefixed with
/// `where`. Memory is bounded by the file's size, and the file is read only once its header
/// declares that size.
InFile read_file(const std::string& path, const std::string& where);
/// Whether this host stores the low byte of a number first (every format here is little-endian).
inline bool host_is_little_endian() {
    const uint16_t one = 1;
    uint8_t first;
    std::memcpy(&first, &one, 1);
    return first == 1;
}
/// A CPU tensor holding a record's elements.
Tensor tensor_of(const InRecord& rec);
/// Throws io_error("<where>: <what>: shape ... in file, ... in <target>") unless the record has
/// this dtype and shape.
void check_matches(const std::string& where, const std::string& what, const InRecord& rec,
                   Dtype dtype, const Shape& sizes, const char* target);

}  // namespace tg::io_detail
