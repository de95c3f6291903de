#pragma once
/// Helpers for the save/load suites (test_serialize*.cpp): scratch directories, small models,
/// bit-exact comparisons, and a TGSV parser and writer for crafting files with valid checksums
/// (the layout of Note [TGSV format] in include/tapegrad/io.hpp).
#include <unistd.h>
#include <zlib.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tapegrad/io.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "test_util.hpp"

namespace tgtest {

using Bytes = std::vector<uint8_t>;

/// A fresh directory under the system temp dir, removed with everything in it at the end.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        static int counter = 0;
        path =
            std::filesystem::temp_directory_path() /
            ("tg_test_serialize_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string file(const std::string& name) const { return (path / name).string(); }
    /// Names in the directory other than `except`: what a save leaves besides its file.
    std::vector<std::string> others(const std::string& except) const {
        std::vector<std::string> out;
        for (auto& e : std::filesystem::directory_iterator(path))
            if (e.path().filename() != except)
                out.push_back(e.path().filename().string());
        return out;
    }
};

inline tg::nn::Sequential make_mlp(uint64_t seed, int64_t hidden = 16) {
    tg::manual_seed(seed);
    return tg::nn::Sequential(tg::nn::Linear(8, hidden), tg::nn::ReLU(), tg::nn::Linear(hidden, 3));
}

/// Raw bytes of every tensor, for bit-exact comparisons (undefined tensors give no bytes).
inline std::vector<Bytes> bits_of(const std::vector<tg::Tensor>& ts) {
    std::vector<Bytes> out;
    for (auto& t : ts) {
        if (!t.defined()) {
            out.emplace_back();
            continue;
        }
        tg::Tensor c = t.detach().contiguous();
        Bytes b(size_t(c.numel()) * tg::element_size(c.dtype()));
        tg::dispatch(c.dtype(), [&](auto tag) {
            using T = decltype(tag);
            std::memcpy(b.data(), c.data_ptr<T>(), b.size());
        });
        out.push_back(std::move(b));
    }
    return out;
}

inline Bytes read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const Bytes& b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

/// One training step on fixed data, so two models with equal parameters stay equal.
template <class Opt>
void train_step(tg::nn::Sequential& net, Opt& opt) {
    tg::manual_seed(123);
    tg::Tensor x = tg::randn({5, 8});
    tg::Tensor y = tg::tensor(std::vector<int64_t>{0, 1, 2, 1, 0});
    opt.zero_grad();
    tg::cross_entropy(net(x), y).backward();
    opt.step();
}

/// load(target, path) must throw io_error mentioning every needle and leave target's bits.
template <class Target>
void check_rejected(Target& target, const std::vector<tg::Tensor>& watched, const std::string& path,
                    const std::vector<std::string>& needles, const std::string& what) {
    auto before = bits_of(watched);
    std::vector<std::string> all = needles;
    all.push_back("load(" + path + ")");
    check_throws<tg::io_error>([&] { tg::load(target, path); }, all, what);
    BOOST_TEST((bits_of(watched) == before), what << ": the target changed");
}

/// One record of a TGSV file, as stored.
struct RawRecord {
    std::string name;
    uint8_t dtype = 0;  // 0 float32, 1 float64, 2 int64
    std::vector<uint64_t> sizes;
    uint64_t nbytes = 0;  // as declared; write() does not check it against the shape
    Bytes data;
};

/// A whole TGSV file, as stored.
struct RawFile {
    uint32_t kind = 1;
    std::string type;
    std::vector<RawRecord> records;

    RawRecord& at(const std::string& name) {
        for (auto& r : records)
            if (r.name == name)
                return r;
        BOOST_FAIL("no record " << name);
        throw;
    }

    /// Parses a well-formed file (one save wrote).
    static RawFile parse(const Bytes& b) {
        size_t pos = 12;
        auto uint = [&](int n) {
            uint64_t v = 0;
            for (int i = 0; i < n; ++i)
                v |= uint64_t(b.at(pos++)) << (8 * i);
            return v;
        };
        auto str = [&] {
            size_t n = size_t(uint(4));
            std::string s(b.begin() + long(pos), b.begin() + long(pos + n));
            pos += n;
            return s;
        };
        RawFile f;
        pos = 8;
        f.kind = uint32_t(uint(4));
        pos = 20;
        f.type = str();
        uint64_t count = uint(8);
        for (uint64_t i = 0; i < count; ++i) {
            RawRecord r;
            r.name = str();
            r.dtype = uint8_t(uint(1));
            uint64_t ndim = uint(4);
            for (uint64_t d = 0; d < ndim; ++d)
                r.sizes.push_back(uint(8));
            r.nbytes = uint(8);
            r.data.assign(b.begin() + long(pos), b.begin() + long(pos + r.nbytes));
            pos += r.nbytes;
            f.records.push_back(std::move(r));
        }
        return f;
    }

    /// The file's bytes with a correct size field and checksum, so only the content is wrong.
    Bytes bytes() const {
        Bytes b;
        auto uint = [&](uint64_t v, int n) {
            for (int i = 0; i < n; ++i)
                b.push_back(uint8_t(v >> (8 * i)));
        };
        auto str = [&](const std::string& s) {
            uint(s.size(), 4);
            b.insert(b.end(), s.begin(), s.end());
        };
        b = {'T', 'G', 'S', 'V'};
        uint(tg::kSerializationVersion, 4);
        uint(kind, 4);
        uint(0, 8);  // the size, patched below
        str(type);
        uint(records.size(), 8);
        for (auto& r : records) {
            str(r.name);
            uint(r.dtype, 1);
            uint(r.sizes.size(), 4);
            for (uint64_t s : r.sizes)
                uint(s, 8);
            uint(r.nbytes, 8);
            b.insert(b.end(), r.data.begin(), r.data.end());
        }
        const uint64_t total = b.size() + 4;
        for (int i = 0; i < 8; ++i)
            b[size_t(12 + i)] = uint8_t(total >> (8 * i));
        uint(uint32_t(crc32(0L, b.data(), uInt(b.size()))), 4);
        return b;
    }
};

/// The bytes of one value, as a record stores it (little-endian hosts).
template <class T>
Bytes bytes_of(T v) {
    Bytes b(sizeof(T));
    std::memcpy(b.data(), &v, sizeof(T));
    return b;
}

}  // namespace tgtest
