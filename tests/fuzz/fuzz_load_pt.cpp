// libFuzzer target: tg::io::load_state_dict of arbitrary bytes as a .pt file (flat, and the
// state dict under "model"). Only tg::io_error may come out; a state dict that loads must load
// into the fuzz model without crashing (non-strict) and survive a round trip through
// save_state_dict: the same names, dtypes, shapes and bytes.
//
// Every zip entry carries a CRC-32, so a mutated pickle would almost never get past it: as the
// TGSV targets (Note [Fuzzing past the checksum] in fuzz_common.hpp), an input starts with a
// flag byte, and with bit 0 set the target writes each entry's true CRC-32 into its local and
// central headers before loading. Seeds carry 3, the TGSV seeds' flag (bit 1 is unused here).
#include <exception>

#include "fuzz_common.hpp"
#include "tapegrad/io_pt.hpp"

namespace {

struct CopyPath {
    std::string path = (::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                       std::string("/fuzz_load_pt_") + std::to_string(::getpid());
    ~CopyPath() { std::remove(path.c_str()); }
};

uint64_t get(const std::vector<uint8_t>& b, uint64_t at, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = (v << 8) | b[at + uint64_t(i)];
    return v;
}

/// Writes the true CRC-32 of every entry the central directory lists (where the bytes allow).
void fix_crcs(std::vector<uint8_t>& b) {
    if (b.size() < 22)
        return;
    const uint64_t end = b.size() - 22;  // the end record without a comment
    if (get(b, end, 4) != 0x06054b50)
        return;
    uint64_t pos = get(b, end + 16, 4);
    for (uint64_t k = 0, n = get(b, end + 10, 2); k < n; ++k) {
        if (pos + 46 > b.size() || get(b, pos, 4) != 0x02014b50)
            return;
        const uint64_t size = get(b, pos + 24, 4), local = get(b, pos + 42, 4);
        if (local + 30 <= b.size()) {
            const uint64_t data = local + 30 + get(b, local + 26, 2) + get(b, local + 28, 2);
            if (data <= b.size() && size <= b.size() - data) {
                const uint32_t crc = uint32_t(crc32(0L, b.data() + data, uInt(size)));
                for (int i = 0; i < 4; ++i) {
                    b[pos + 16 + uint64_t(i)] = uint8_t(crc >> (8 * i));
                    b[local + 14 + uint64_t(i)] = uint8_t(crc >> (8 * i));
                }
            }
        }
        pos += 46 + get(b, pos + 28, 2) + get(b, pos + 30, 2) + get(b, pos + 32, 2);
    }
}

void round_trip(const tg::StateDict& sd, const std::string& copy) {
    for (auto& [name, t] : sd)
        if (t.numel() > (int64_t(1) << 22))  // a stride-0 view of a small storage (PyTorch's
            return;  // files may hold one): its contiguous copy would pass -rss_limit_mb
    tg::nn::Sequential model = fuzz::make_model();
    try {
        (void)model->load_state_dict(sd, false);
    } catch (const tg::value_error&) {  // a size mismatch
    }
    try {
        tg::io::save_state_dict(sd, copy);
        const tg::StateDict back = tg::io::load_state_dict(copy);
        fuzz::check_round_trip(sd, back);
    } catch (const std::exception& e) {
        fuzz::finding(std::string("the round trip threw: ") + e.what());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static fuzz::InputFile file;
    static const CopyPath copy_path;
    if (size == 0)
        return 0;
    std::vector<uint8_t> bytes(data + 1, data + size);
    if (data[0] & 1)
        fix_crcs(bytes);
    const std::string& path = file.set(bytes.data(), bytes.size());
    for (bool nested : {false, true}) {
        tg::StateDict sd;
        try {
            sd = nested ? tg::io::load_state_dict(path, "model") : tg::io::load_state_dict(path);
        } catch (const tg::io_error&) {
            continue;
        } catch (const std::exception& e) {
            fuzz::finding(std::string("load_state_dict threw another exception: ") + e.what());
        }
        round_trip(sd, copy_path.path);
    }
    return 0;
}
