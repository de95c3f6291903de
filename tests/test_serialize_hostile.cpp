// tg::load of hostile input: paths that are not regular files, and crafted files with valid
// checksums whose declared counts, shapes and sizes overflow or exceed the file. Every one is an
// io_error naming the file, read with memory bounded by the file's size, target unchanged.
#define BOOST_TEST_MODULE serialize_hostile
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "serialize_util.hpp"
#include "tapegrad/data.hpp"

using namespace tgtest;

namespace {

constexpr uint64_t kHuge = uint64_t(1) << 62;

/// A module file for make_mlp(_, 16) whose first record is replaced by `bad`.
RawFile with_first_record(RawRecord bad) {
    TempDir dir;
    auto m = make_mlp(1);
    tg::save(m, dir.file("m.tgsv"));
    RawFile f = RawFile::parse(read_bytes(dir.file("m.tgsv")));
    f.records[0] = std::move(bad);
    return f;
}

}  // namespace

BOOST_AUTO_TEST_CASE(paths_that_are_not_regular_files) {
    TempDir dir;
    auto m = make_mlp(1);
    tg::optim::SGD sgd(m->parameters(), tg::optim::SGDOptions(0.1));
    const std::string sub = dir.file("a_directory");
    std::filesystem::create_directories(sub);
    check_rejected(m, m->parameters(), sub, {"not a regular file", "a directory"}, "directory");
    check_rejected(sgd, m->parameters(), sub, {"not a regular file", "a directory"},
                   "directory, optimizer");
    // a device that never ends: refused before anything is read
    check_rejected(m, m->parameters(), "/dev/zero", {"not a regular file", "character device"},
                   "/dev/zero");
    // a FIFO nobody writes to: refused without blocking
    const std::string fifo = dir.file("fifo");
    BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    check_rejected(m, m->parameters(), fifo, {"not a regular file", "FIFO"}, "FIFO");
    check_rejected(m, m->parameters(), dir.file("missing"), {"cannot open"}, "missing");
}

BOOST_AUTO_TEST_CASE(the_idx_reader_refuses_what_is_not_a_regular_file) {
    TempDir dir;
    const std::string fifo = dir.file("fifo");
    BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    check_throws<tg::io_error>([&] { tg::data::read_idx(fifo); }, {fifo, "not a regular file"},
                               "FIFO");
    check_throws<tg::io_error>([&] { tg::data::read_idx("/dev/zero"); },
                               {"/dev/zero", "not a regular file"}, "/dev/zero");
    check_throws<tg::io_error>([&] { tg::data::read_idx(dir.path.string()); },
                               {"not a regular file"}, "directory");
}

BOOST_AUTO_TEST_CASE(overflowing_shapes_are_rejected) {
    TempDir dir;
    const std::string path = dir.file("crafted.tgsv");
    auto m = make_mlp(2);
    struct Case {
        std::vector<uint64_t> sizes;
        uint8_t dtype;
        uint64_t nbytes;
        std::string needle;
    };
    const std::vector<Case> cases = {
        // the element count wraps to 0 in 64 bits, with no data
        {{uint64_t(1) << 32, uint64_t(1) << 32}, 0, 0, "too many elements"},
        // numel × 4 wraps to 4 in 64 bits: the data size matches the wrapped product
        {{kHuge + 1}, 0, 4, "too many elements"},
        // a zero size makes it empty, but its strides would still overflow
        {{kHuge, kHuge, 0}, 0, 0, "too many elements"},
        // a size that is negative as int64
        {{uint64_t(-5)}, 0, 0, "negative size"},
        // a plausible shape whose data would be far larger than the file
        {{uint64_t(1) << 40}, 1, uint64_t(1) << 43, "runs past the end"},
        {{3, 4}, 0, 40, "does not match shape [3,4]"},
    };
    for (auto& c : cases) {
        RawRecord r;
        r.name = "0.weight";
        r.dtype = c.dtype;
        r.sizes = c.sizes;
        r.nbytes = c.nbytes;
        r.data.assign(size_t(std::min<uint64_t>(c.nbytes, 64)), 0);
        write_bytes(path, with_first_record(r).bytes());
        check_rejected(m, m->parameters(), path, {"record \"0.weight\"", c.needle}, c.needle);
    }
}

BOOST_AUTO_TEST_CASE(counts_and_lengths_larger_than_the_file_are_rejected) {
    TempDir dir;
    const std::string path = dir.file("crafted.tgsv");
    auto m = make_mlp(2);
    RawFile f = with_first_record({});
    f.records.clear();
    Bytes b = f.bytes();  // no records
    // a record count of 2^60 with no records: patch the count and fix the checksum
    auto patch = [&](size_t at, uint64_t v, int n) {
        Bytes out(b.begin(), b.end() - 4);  // without the checksum
        for (int i = 0; i < n; ++i)
            out.at(at + size_t(i)) = uint8_t(v >> (8 * i));
        uint32_t crc = uint32_t(crc32(0L, out.data(), uInt(out.size())));
        for (int i = 0; i < 4; ++i)
            out.push_back(uint8_t(crc >> (8 * i)));
        return out;
    };
    const size_t count_at = 20 + 4 + f.type.size();
    write_bytes(path, patch(count_at, uint64_t(1) << 60, 8));
    check_rejected(m, m->parameters(), path, {"records cannot fit"}, "record count");
    // a type name longer than the file
    write_bytes(path, patch(20, 0xFFFFFFFFu, 4));
    check_rejected(m, m->parameters(), path, {"type name", "past the end"}, "string length");
    // the declared file size far larger than the file: refused before reading the rest
    Bytes big = b;
    big[19] = 0x7F;
    write_bytes(path, big);
    check_rejected(m, m->parameters(), path, {"truncated file", "header says"}, "file size");

    // a record name longer than the file
    RawRecord r;
    r.name = "0.weight";
    b = with_first_record(r).bytes();  // its name length follows the record count
    write_bytes(path, patch(count_at + 8, 0xFFFFFFFFu, 4));
    check_rejected(m, m->parameters(), path, {"record name", "past the end"}, "name length");
    // ndim past the limit
    r.sizes.assign(65, 1);
    r.nbytes = 4;
    r.data.assign(4, 0);
    write_bytes(path, with_first_record(r).bytes());
    check_rejected(m, m->parameters(), path, {"bad ndim 65"}, "ndim");
    // an unknown dtype code; and uint8's code (4) in a version-1 file, which has codes 0-3 only
    r.sizes = {1};
    r.dtype = 10;
    write_bytes(path, with_first_record(r).bytes());
    check_rejected(m, m->parameters(), path, {"unknown dtype code 10", "format version 2"},
                   "dtype");
    r.dtype = 4;
    r.nbytes = 1;
    r.data.assign(1, 0);
    b = with_first_record(r).bytes();
    write_bytes(path, patch(4, 1, 4));
    check_rejected(m, m->parameters(), path, {"unknown dtype code 4", "format version 1"},
                   "dtype in version 1");
}

BOOST_AUTO_TEST_CASE(crafted_optimizer_records_never_escape_as_other_errors) {
    // Records with shapes no optimizer state can have: io_error, never shape_error.
    TempDir dir;
    const std::string path = dir.file("opt.tgsv");
    auto m = make_mlp(1);
    tg::optim::Adam adam(m->parameters(), tg::optim::AdamOptions(0.01));
    train_step(m, adam);
    tg::save(adam, path);
    const RawFile good = RawFile::parse(read_bytes(path));
    auto watched = [&] {
        auto out = m->parameters();
        for (auto& p : m->parameters())
            out.push_back(
                static_cast<tg::optim::AdamParamState&>(*adam.state().at(p.impl())).exp_avg);
        return out;
    };
    RawFile f = good;
    f.at("state.0.exp_avg").sizes = {kHuge, kHuge, 0};
    f.at("state.0.exp_avg").nbytes = 0;
    f.at("state.0.exp_avg").data.clear();
    write_bytes(path, f.bytes());
    check_rejected(adam, watched(), path, {"too many elements"}, "exp_avg shape");

    f = good;
    f.at("param_groups.0.lr").sizes = {uint64_t(1) << 61};
    f.at("param_groups.0.lr").nbytes = 0;  // 2^61 × 8 wraps to 0
    f.at("param_groups.0.lr").data.clear();
    write_bytes(path, f.bytes());
    check_rejected(adam, watched(), path, {"too many elements"}, "lr shape");
}

BOOST_AUTO_TEST_CASE(non_finite_parameters_load_and_train) {
    // NaN and infinities are values a file may hold (a run that diverged): they load bit for
    // bit, and training on them gives NaN, never undefined behaviour (the fast float32 exp,
    // tanh and sigmoid kernels must not convert a NaN to int).
    TempDir dir;
    const std::string path = dir.file("odd.tgsv");
    auto a = make_mlp(1), b = make_mlp(2);
    {
        tg::NoGradGuard guard;
        auto ps = a->parameters();
        ps[0].data_ptr<float>()[0] = std::numeric_limits<float>::quiet_NaN();
        ps[0].data_ptr<float>()[1] = std::numeric_limits<float>::infinity();
        ps[2].data_ptr<float>()[0] = -std::numeric_limits<float>::infinity();
    }
    tg::save(a, path);
    tg::load(b, path);
    BOOST_TEST((bits_of(a->parameters()) == bits_of(b->parameters())));
    tg::optim::Adam adam(b->parameters(), tg::optim::AdamOptions(0.01));
    train_step(b, adam);
    BOOST_TEST(std::isnan(b->parameters()[0].data_ptr<float>()[0]));

    const float nan = std::numeric_limits<float>::quiet_NaN();
    tg::Tensor x = tg::tensor(std::vector<float>{nan, -nan, 0.5f});
    for (auto [name, y] : {std::pair{"exp", tg::exp(x)}, std::pair{"tanh", tg::tanh(x)},
                           std::pair{"sigmoid", tg::sigmoid(x)}}) {
        const float* v = y.data_ptr<float>();
        BOOST_TEST((std::isnan(v[0]) && std::isnan(v[1]) && std::isfinite(v[2])), name);
    }
}
