#pragma once
// The zip subset torch.save writes (PyTorch >= 1.6): stored (uncompressed) entries, zip64 when
// large, no encryption, no data descriptors needed. Reading validates the whole directory
// against the bytes; writing aligns every entry's data to 64 bytes as torch's writer does.
#include <cstdint>
#include <string>
#include <vector>

#include "io/posix_file.hpp"

namespace tg::io_detail {

struct ZipEntry {
    std::string name;
    uint64_t offset = 0;  // of the entry's data in the archive
    uint64_t size = 0;
    uint32_t crc = 0;
};

/// The entries of the zip archive data[0, size), in central-directory order. Throws
/// io_error("<where>: ...") for a missing or inconsistent end record or central directory,
/// an entry that is compressed, encrypted, split over disks or out of bounds, a local header
/// that disagrees with the directory, or a name given twice.
std::vector<ZipEntry> zip_entries(const uint8_t* data, uint64_t size, const std::string& where);
/// Throws io_error unless the entry's bytes have its CRC-32.
void zip_check_crc(const uint8_t* data, const ZipEntry& e, const std::string& where);

/// The largest size or offset a zip field holds without zip64 (0xFFFFFFFF marks zip64).
constexpr uint64_t kZip32Max = 0xFFFFFFFEu;

/// Writes a stored zip archive to an AtomicFile: add() each entry, then finish(). A size or
/// offset above `zip32_max` (kZip32Max, or less in tests) goes in zip64 fields, as torch's
/// writer does for archives past 4 GB; so does an archive of 65535 entries or more.
class ZipWriter {
public:
    ZipWriter(AtomicFile& out, std::string where, uint64_t zip32_max = kZip32Max)
        : out_(out), where_(std::move(where)), max_(zip32_max) {}
    void add(const std::string& name, const void* data, size_t n);
    void finish();

private:
    struct Written {
        std::string name;
        uint64_t header, size;
        uint32_t crc;
    };
    void put(const std::vector<uint8_t>& bytes);
    AtomicFile& out_;
    std::string where_;
    uint64_t max_;
    std::vector<Written> written_;
    uint64_t at_ = 0;
};

}  // namespace tg::io_detail
