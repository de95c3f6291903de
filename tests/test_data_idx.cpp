// Data loading from files: the IDX reader (plain, gzip, every kind of broken file) and
// FashionMNIST on a fake directory (and on the real one when installed). DataLoader:
// test_data_loader.cpp. LibTorch's data API (datasets::MNIST, map, Stack, make_data_loader) at the
// end.
#define BOOST_TEST_MODULE data_idx
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tapegrad/data.hpp"
#include "tapegrad/tapegrad.hpp"

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

namespace {

/// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() /
               ("tg_test_data_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string file(const std::string& name) const { return (path / name).string(); }
    static int& counter() {
        static int c = 0;
        return c;
    }
};

/// IDX bytes: magic (0,0,type,ndim), big-endian dims, then payload.
Bytes idx_bytes(const std::vector<uint32_t>& dims, const Bytes& payload, uint8_t type = 0x08) {
    Bytes b = {0, 0, type, uint8_t(dims.size())};
    for (uint32_t d : dims)
        for (int s = 24; s >= 0; s -= 8)
            b.push_back(uint8_t(d >> s));
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

Bytes iota_bytes(size_t n, uint8_t mod = 251) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = uint8_t(i % mod);
    return b;
}

void write_plain(const std::string& path, const Bytes& b) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

void write_gz(const std::string& path, const Bytes& b) {
    gzFile f = gzopen(path.c_str(), "wb");
    BOOST_REQUIRE(f != nullptr);
    if (!b.empty())
        BOOST_REQUIRE_EQUAL(gzwrite(f, b.data(), unsigned(b.size())), int(b.size()));
    BOOST_REQUIRE_EQUAL(gzclose(f), Z_OK);
}

Bytes read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), {});
}

/// Runs read_idx(path), expecting an io_error whose message names the file and contains `what`.
void expect_idx_error(const std::string& path, const std::string& what) {
    try {
        tg::data::read_idx(path);
        BOOST_ERROR("read_idx(" << path << ") did not throw; expected: " << what);
    } catch (const tg::io_error& e) {
        std::string msg = e.what();
        BOOST_TEST_INFO("message: " << msg);
        BOOST_CHECK(msg.find(path) != std::string::npos);
        BOOST_CHECK(msg.find(what) != std::string::npos);
    }
}

}  // namespace

// ---------------------------------------------------------------- IDX reader

BOOST_AUTO_TEST_CASE(idx_plain_and_gzip_round_trip) {
    TempDir dir;
    Bytes payload = iota_bytes(3 * 4 * 5);
    Bytes file = idx_bytes({3, 4, 5}, payload);
    write_plain(dir.file("a.idx"), file);
    write_gz(dir.file("a.idx.gz"), file);
    for (const char* name : {"a.idx", "a.idx.gz"}) {
        auto a = tg::data::read_idx(dir.file(name));
        BOOST_CHECK((a.shape == std::vector<int64_t>{3, 4, 5}));
        BOOST_CHECK(a.data == payload);
    }
    Bytes labels = {9, 0, 3, 7};
    write_gz(dir.file("l.gz"), idx_bytes({4}, labels));
    auto l = tg::data::read_idx(dir.file("l.gz"));
    BOOST_CHECK((l.shape == std::vector<int64_t>{4}));
    BOOST_CHECK(l.data == labels);
}

BOOST_AUTO_TEST_CASE(idx_zero_sized_dim_is_valid) {
    TempDir dir;
    write_plain(dir.file("z.idx"), idx_bytes({0, 28, 28}, {}));
    auto a = tg::data::read_idx(dir.file("z.idx"));
    BOOST_CHECK((a.shape == std::vector<int64_t>{0, 28, 28}));
    BOOST_CHECK(a.data.empty());
}

BOOST_AUTO_TEST_CASE(idx_missing_file_and_directory) {
    TempDir dir;
    expect_idx_error(dir.file("nope.gz"), "No such file");
    expect_idx_error(dir.path.string(), "directory");
}

BOOST_AUTO_TEST_CASE(idx_empty_files) {
    TempDir dir;
    write_plain(dir.file("empty"), {});
    write_gz(dir.file("empty.gz"), {});
    expect_idx_error(dir.file("empty"), "empty");
    expect_idx_error(dir.file("empty.gz"), "empty");
}

BOOST_AUTO_TEST_CASE(idx_bad_magic_and_type) {
    TempDir dir;
    Bytes good = idx_bytes({2, 2}, {1, 2, 3, 4});
    Bytes bad = good;
    bad[0] = 0x1f;  // neither IDX nor gzip
    write_plain(dir.file("magic"), bad);
    expect_idx_error(dir.file("magic"), "bad magic");
    write_gz(dir.file("magic.gz"), bad);
    expect_idx_error(dir.file("magic.gz"), "bad magic");
    write_plain(dir.file("float"), idx_bytes({1}, {0, 0, 0, 0}, 0x0D));
    expect_idx_error(dir.file("float"), "unsupported element type code 0x0D");
    Bytes nodims = {0, 0, 8, 0};
    write_plain(dir.file("nodims"), nodims);
    expect_idx_error(dir.file("nodims"), "0 dims");
    write_plain(dir.file("short"), {0, 0});
    expect_idx_error(dir.file("short"), "truncated");
}

BOOST_AUTO_TEST_CASE(idx_truncated_files) {
    TempDir dir;
    Bytes file = idx_bytes({10, 28, 28}, iota_bytes(10 * 28 * 28));
    // Truncated data, plain and as a complete gzip stream of the short content.
    Bytes cut(file.begin(), file.end() - 100);
    write_plain(dir.file("cut"), cut);
    expect_idx_error(dir.file("cut"), "truncated");
    write_gz(dir.file("cut.gz"), cut);
    expect_idx_error(dir.file("cut.gz"), "truncated");
    // Truncated header (dims cut short).
    write_plain(dir.file("hdr"), Bytes(file.begin(), file.begin() + 9));
    expect_idx_error(dir.file("hdr"), "truncated header");
    // A gzip file cut in the middle of its compressed stream.
    write_gz(dir.file("full.gz"), file);
    Bytes gz = read_all(dir.file("full.gz"));
    BOOST_REQUIRE(gz.size() > 40);
    write_plain(dir.file("gzcut.gz"), Bytes(gz.begin(), gz.begin() + long(gz.size() / 2)));
    expect_idx_error(dir.file("gzcut.gz"), "truncated");
    // Only the 8-byte gzip trailer (CRC, length) missing: the data is all there, the check is not.
    write_plain(dir.file("notrailer.gz"), Bytes(gz.begin(), gz.end() - 8));
    expect_idx_error(dir.file("notrailer.gz"), "truncated");
}

BOOST_AUTO_TEST_CASE(idx_wrong_dims_and_trailing_bytes) {
    TempDir dir;
    Bytes payload = iota_bytes(2 * 3 * 4);
    write_plain(dir.file("big"), idx_bytes({2, 3, 5}, payload));  // claims more than present
    expect_idx_error(dir.file("big"), "truncated: dims 2x3x5 need 30 data bytes, found 24");
    write_plain(dir.file("small"), idx_bytes({2, 3, 3}, payload));  // claims less than present
    expect_idx_error(dir.file("small"), "has more");
    write_gz(dir.file("small.gz"), idx_bytes({2, 3, 3}, payload));
    expect_idx_error(dir.file("small.gz"), "has more");
    // Absurd dims must fail cleanly, not try to allocate them.
    write_plain(dir.file("huge"), idx_bytes({0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, payload));
    expect_idx_error(dir.file("huge"), "too large");
    write_plain(dir.file("large"), idx_bytes({60000, 28, 28}, payload));
    expect_idx_error(dir.file("large"), "truncated");
}

BOOST_AUTO_TEST_CASE(idx_gzip_crc_error) {
    TempDir dir;
    write_gz(dir.file("ok.gz"), idx_bytes({4, 4}, iota_bytes(16)));
    Bytes gz = read_all(dir.file("ok.gz"));
    gz[gz.size() - 8] ^= 0xFF;  // first byte of the CRC-32 trailer
    write_plain(dir.file("crc.gz"), gz);
    expect_idx_error(dir.file("crc.gz"), "corrupt gzip");
    // A flipped bit inside the deflate stream is caught one way or another, never a crash.
    write_gz(dir.file("ok2.gz"), idx_bytes({20, 20}, iota_bytes(400, 7)));
    Bytes gz2 = read_all(dir.file("ok2.gz"));
    for (size_t pos = 12; pos + 8 < gz2.size(); pos += 3) {
        Bytes bad = gz2;
        bad[pos] ^= 0x55;
        write_plain(dir.file("flip.gz"), bad);
        BOOST_CHECK_THROW(tg::data::read_idx(dir.file("flip.gz")), tg::io_error);
    }
}

// ---------------------------------------------------------------- FashionMNIST

namespace {

/// Writes a tiny Fashion-MNIST directory: n train images (pixel value = (i*7 + k) % 256) and
/// labels i % 10, and m test images.
void write_fake_fashion(const TempDir& dir, uint32_t n, uint32_t m, bool gz = true) {
    for (auto [prefix, count] : {std::pair<std::string, uint32_t>{"train", n}, {"t10k", m}}) {
        Bytes pix(size_t(count) * 784), lab(count);
        for (size_t i = 0; i < count; ++i) {
            for (size_t k = 0; k < 784; ++k)
                pix[i * 784 + k] = uint8_t((i * 7 + k) % 256);
            lab[i] = uint8_t(i % 10);
        }
        auto write = gz ? write_gz : write_plain;
        std::string ext = gz ? ".gz" : "";
        write(dir.file(prefix + "-images-idx3-ubyte" + ext), idx_bytes({count, 28, 28}, pix));
        write(dir.file(prefix + "-labels-idx1-ubyte" + ext), idx_bytes({count}, lab));
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(fashion_mnist_fake_root) {
    TempDir dir;
    write_fake_fashion(dir, 12, 5);
    tg::data::FashionMNIST train(true, dir.path.string());
    BOOST_CHECK_EQUAL(train.size(), 12);
    BOOST_CHECK((train.images().sizes() == tg::Shape{12, 1, 28, 28}));
    BOOST_CHECK(train.images().dtype() == tg::kFloat32);
    BOOST_CHECK((train.labels().sizes() == tg::Shape{12}));
    BOOST_CHECK(train.labels().dtype() == tg::kInt64);
    auto px = train.images().to_vector<float>();
    auto lb = train.labels().to_vector<int64_t>();
    for (size_t i = 0; i < 12; ++i) {
        BOOST_CHECK_EQUAL(lb[i], int64_t(i % 10));
        for (size_t k : {size_t(0), size_t(300), size_t(783)}) {
            double raw = double((i * 7 + k) % 256) / 255.0;
            BOOST_CHECK_CLOSE(double(px[i * 784 + k]) + 10, (raw - 0.2860) / 0.3530 + 10, 1e-4);
        }
    }
    tg::data::FashionMNIST test(false, dir.path.string(), tg::data::Normalize{0, 1});
    BOOST_CHECK_EQUAL(test.size(), 5);
    auto tp = test.images().to_vector<float>();
    BOOST_CHECK_CLOSE(double(tp[784 + 10]), double((7 + 10) % 256) / 255.0, 1e-4);
    BOOST_CHECK_EQUAL(std::string(tg::data::FashionMNIST::class_names()[9]), "Ankle boot");
}

/// Sets an environment variable for one scope and restores its previous value.
struct ScopedEnv {
    std::string name;
    bool had;
    std::string old;
    ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
        const char* prev = std::getenv(name.c_str());
        had = prev != nullptr;
        if (had)
            old = prev;
        if (value)
            ::setenv(name.c_str(), value, 1);
        else
            ::unsetenv(name.c_str());
    }
    ~ScopedEnv() {
        if (had)
            ::setenv(name.c_str(), old.c_str(), 1);
        else
            ::unsetenv(name.c_str());
    }
};

BOOST_AUTO_TEST_CASE(fashion_mnist_uncompressed_and_env_root) {
    TempDir dir;
    write_fake_fashion(dir, 3, 2, /*gz=*/false);
    {
        ScopedEnv env("TG_FASHION_MNIST", dir.path.c_str());
        BOOST_CHECK_EQUAL(tg::data::default_root(), dir.path.string());
        tg::data::FashionMNIST train(true);  // found through the environment
        BOOST_CHECK_EQUAL(train.size(), 3);
        BOOST_CHECK_EQUAL(train.root(), dir.path.string());
        // An explicit root wins over the environment.
        TempDir other;
        write_fake_fashion(other, 4, 1);
        BOOST_CHECK_EQUAL(tg::data::FashionMNIST(true, other.path.string()).size(), 4);
    }
    ScopedEnv unset("TG_FASHION_MNIST", nullptr);
    BOOST_CHECK_EQUAL(tg::data::default_root(), "/usr/share/datasets/fashion-mnist");
}

BOOST_AUTO_TEST_CASE(fashion_mnist_errors_name_the_file) {
    TempDir dir;
    try {
        tg::data::FashionMNIST(true, dir.path.string());
        BOOST_ERROR("empty directory accepted");
    } catch (const tg::io_error& e) {
        BOOST_CHECK(std::string(e.what()).find("train-images-idx3-ubyte.gz") != std::string::npos);
        BOOST_CHECK(std::string(e.what()).find("TG_FASHION_MNIST") != std::string::npos);
    }
    // Counts that disagree.
    write_fake_fashion(dir, 4, 2);
    write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_bytes({3}, {1, 2, 3}));
    try {
        tg::data::FashionMNIST(true, dir.path.string());
        BOOST_ERROR("4 images with 3 labels accepted");
    } catch (const tg::io_error& e) {
        std::string msg = e.what();
        BOOST_CHECK(msg.find("4 images") != std::string::npos);
        BOOST_CHECK(msg.find("3 labels") != std::string::npos);
    }
    // Labels out of range, images of the wrong size, a corrupt file.
    write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_bytes({4}, {1, 2, 10, 3}));
    BOOST_CHECK_THROW(tg::data::FashionMNIST(true, dir.path.string()), tg::io_error);
    write_gz(dir.file("t10k-images-idx3-ubyte.gz"), idx_bytes({2, 14, 14}, iota_bytes(2 * 196)));
    BOOST_CHECK_THROW(tg::data::FashionMNIST(false, dir.path.string()), tg::io_error);
    write_plain(dir.file("t10k-images-idx3-ubyte.gz"), {0x1f, 0x8b, 8, 0, 0});
    try {
        tg::data::FashionMNIST(false, dir.path.string());
        BOOST_ERROR("corrupt image file accepted");
    } catch (const tg::io_error& e) {
        BOOST_CHECK(std::string(e.what()).find("t10k-images-idx3-ubyte.gz") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(fashion_mnist_real_data_if_installed) {
    const std::string root = "/usr/share/datasets/fashion-mnist";
    if (!fs::exists(root + "/t10k-images-idx3-ubyte.gz")) {
        BOOST_TEST_MESSAGE("skipped: " << root << " not installed");
        return;
    }
    tg::data::FashionMNIST test(false, root);
    BOOST_CHECK_EQUAL(test.size(), 10000);
    BOOST_CHECK((test.images().sizes() == tg::Shape{10000, 1, 28, 28}));
    // Normalised with the training statistics, the test split has mean near 0 and std near 1.
    auto px = test.images().to_vector<float>();
    double s = 0, s2 = 0;
    for (float v : px)
        s += v, s2 += double(v) * v;
    double mean = s / double(px.size()), sd = std::sqrt(s2 / double(px.size()) - mean * mean);
    BOOST_CHECK_SMALL(mean, 0.02);
    BOOST_CHECK_CLOSE(sd, 1.0, 2.0);
    std::vector<int64_t> per_class(10);
    for (int64_t l : test.labels().to_vector<int64_t>())
        per_class[size_t(l)]++;
    for (int64_t c : per_class)
        BOOST_CHECK_EQUAL(c, 1000);
    // The training files: only their headers are checked (reading 60,000 images takes ~0.5 s).
    auto labels = tg::data::read_idx(root + "/train-labels-idx1-ubyte.gz");
    BOOST_CHECK((labels.shape == std::vector<int64_t>{60000}));
}

// ---------------------------------------------------------------- LibTorch's data API

BOOST_AUTO_TEST_CASE(libtorch_mnist_map_stack_make_data_loader) {
    namespace data = tg::data;
    TempDir dir;
    write_fake_fashion(dir, 10, 3, /*gz=*/false);  // MNIST's file names, uncompressed
    data::datasets::MNIST raw(dir.path.string(), data::datasets::MNIST::Mode::kTrain);
    BOOST_TEST(raw.size().value() == 10u);
    BOOST_TEST(raw.is_train());
    const data::Example<> e = raw.get(3);
    BOOST_TEST(e.data.sizes() == tg::Shape({1, 28, 28}));
    BOOST_TEST(e.target.dim() == 0);
    BOOST_TEST(e.target.item<int64_t>() == 3);
    BOOST_TEST(e.data.to_vector<float>()[5] == float((3 * 7 + 5) % 256) / 255.f);
    BOOST_CHECK_THROW(raw.get(10), tg::shape_error);
    BOOST_CHECK_THROW(data::datasets::MNIST("/nonexistent"), tg::io_error);

    auto ds = data::datasets::MNIST(dir.path.string(), data::datasets::MNIST::Mode::kTrain)
                  .map(data::transforms::Normalize<>(0.5, 0.25))
                  .map(data::transforms::Stack<>());
    auto loader =
        data::make_data_loader(std::move(ds), data::DataLoaderOptions().batch_size(4).workers(2));
    for (int epoch = 0; epoch < 2; ++epoch) {
        std::vector<int64_t> seen;
        int64_t batches = 0;
        for (auto& batch : *loader) {
            ++batches;
            BOOST_TEST(batch.data.size(1) == 1);
            BOOST_TEST(batch.data.size(0) == batch.target.size(0));
            for (int64_t k = 0; k < batch.target.size(0); ++k) {
                const int64_t label = batch.target[k].item<int64_t>();  // == its index
                seen.push_back(label);
                const float want = (float((label * 7) % 256) / 255.f - 0.5f) / 0.25f;
                BOOST_TEST(std::abs(batch.data[k].to_vector<float>()[0] - want) < 1e-6);
            }
        }
        BOOST_TEST(batches == 3);  // 4 + 4 + 2
        std::sort(seen.begin(), seen.end());
        BOOST_TEST(seen == (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                   boost::test_tools::per_element());  // a permutation each epoch
    }
    // in order, without Stack: batches are std::vector<Example>
    auto in_order = data::make_data_loader<data::samplers::SequentialSampler>(
        data::datasets::MNIST(dir.path.string(), data::datasets::MNIST::Mode::kTest), 2);
    std::vector<int64_t> labels;
    for (std::vector<data::Example<>>& batch : *in_order)
        for (const data::Example<>& ex : batch)
            labels.push_back(ex.target.item<int64_t>());
    BOOST_TEST(labels == (std::vector<int64_t>{0, 1, 2}), boost::test_tools::per_element());
    BOOST_CHECK_THROW(data::make_data_loader(data::datasets::MNIST(dir.path.string()),
                                             data::DataLoaderOptions(0)),
                      tg::value_error);
}
