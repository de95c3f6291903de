// tg::io::save_safetensors / load_safetensors: a golden file written from the format's
// description, round trips of every dtype and of a model, hostile files (Note [safetensors
// format] in include/tapegrad/io_safetensors.hpp), and, when python3 is there, a reader written
// from the format with the standard library only.
#define BOOST_TEST_MODULE safetensors
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "serialize_util.hpp"
#include "tapegrad/io_safetensors.hpp"
#include "tapegrad/tapegrad.hpp"

namespace nn = tg::nn;
using tg::Tensor;
using tgtest::Bytes;

namespace {

Bytes le64(uint64_t v) {
    Bytes b;
    for (int i = 0; i < 8; ++i)
        b.push_back(uint8_t(v >> (8 * i)));
    return b;
}

/// A file: the 8-byte length `declared` (default: the header's), the header text, the buffer.
Bytes file_of(const std::string& header, const Bytes& buffer,
              std::optional<uint64_t> declared = std::nullopt) {
    Bytes b = le64(declared.value_or(header.size()));
    b.insert(b.end(), header.begin(), header.end());
    b.insert(b.end(), buffer.begin(), buffer.end());
    return b;
}

std::vector<double> values(const Tensor& t) {
    return t.to(tg::kFloat64).contiguous().to_vector<double>();
}

}  // namespace

BOOST_AUTO_TEST_CASE(golden_file_byte_for_byte) {
    tgtest::TempDir dir;
    tg::StateDict sd;
    sd.insert("w", tg::tensor({1.0f, -2.0f}));
    sd.insert("flag", tg::tensor({true, false}));
    sd.insert("n", tg::scalar_tensor(5, tg::kInt64));
    sd.insert("a\"b", tg::tensor({0.5f}));
    const std::string path = dir.file("golden.safetensors");
    tg::io::save_safetensors(sd, path, {{"format", "pt"}, {"author", "t\u00e9st\n"}});
    // the reference layout: metadata (sorted keys) first; tensors by dtype, widest first (I64,
    // F32, BOOL), then by name; compact JSON; padded with spaces to a multiple of 8
    std::string header =
        "{\"__metadata__\":{\"author\":\"t\u00e9st\\n\",\"format\":\"pt\"},"
        "\"n\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]},"
        "\"a\\\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]},"
        "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]},"
        "\"flag\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[20,22]}}";
    header.append((8 - header.size() % 8) % 8, ' ');
    Bytes buffer = le64(5);
    for (uint8_t b : {0x00, 0x00, 0x00, 0x3f,                          // 0.5f
                      0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0,  // 1, -2
                      0x01, 0x00})                                     // true, false
        buffer.push_back(b);
    const Bytes expected = file_of(header, buffer);
    BOOST_TEST(expected.size() % 8 == 22 % 8);  // the header is padded, the buffer is not
    BOOST_TEST(tgtest::read_bytes(path) == expected, boost::test_tools::per_element());
    // and it reads back
    auto back = tg::io::load_safetensors(path);
    BOOST_TEST(back.keys() == (std::vector<std::string>{"n", "a\"b", "w", "flag"}),
               boost::test_tools::per_element());
    BOOST_TEST(back["n"].item<int64_t>() == 5);
    BOOST_TEST(values(back["w"]) == (std::vector<double>{1, -2}), boost::test_tools::per_element());
    BOOST_TEST(back["flag"].dtype() == tg::kBool);
    auto meta = tg::io::load_safetensors_metadata(path);
    BOOST_TEST(meta.size() == 2u);
    BOOST_TEST(meta["author"] == "t\u00e9st\n");
}

BOOST_AUTO_TEST_CASE(every_dtype_round_trips) {
    tgtest::TempDir dir;
    tg::StateDict sd;
    const Tensor base = tg::tensor({0.0, 1.5, -2.25, 3.0, -4.0, 100.0}).reshape({2, 3});
    for (tg::Dtype d : {tg::kFloat32, tg::kFloat64, tg::kFloat16, tg::kBFloat16, tg::kInt64,
                        tg::kInt32, tg::kInt16, tg::kInt8, tg::kUInt8, tg::kBool})
        sd.insert(tg::dtype_name(d), (d == tg::kUInt8 ? base.abs() : base).to(d));
    sd.insert("transposed", tg::arange(6, tg::kFloat32).reshape({2, 3}).t());
    sd.insert("empty", tg::zeros({0, 3}));
    sd.insert("scalar", tg::scalar_tensor(7.5, tg::kFloat64));
    sd.insert("name with \u00fcml\u00e4ut and \"quotes\"\\", tg::ones({1}));
    const std::string path = dir.file("all.safetensors");
    tg::io::save_safetensors(sd, path);
    BOOST_TEST(tg::io::load_safetensors_metadata(path).empty());
    auto back = tg::io::load_safetensors(path);
    BOOST_TEST_REQUIRE(back.size() == sd.size());
    for (auto& [name, t] : sd)
        BOOST_TEST_CONTEXT(name) {
            const Tensor* got = back.find(name);
            BOOST_TEST_REQUIRE(got != nullptr);
            BOOST_TEST(got->dtype() == t.dtype());
            BOOST_TEST(got->sizes() == t.sizes());
            BOOST_TEST(got->device() == tg::Device::cpu());
            BOOST_TEST(values(*got) == values(t), boost::test_tools::per_element());
        }
}

BOOST_AUTO_TEST_CASE(model_round_trip_gives_equal_outputs) {
    tgtest::TempDir dir;
    tg::manual_seed(1);
    nn::Sequential a(nn::Linear(4, 6), nn::BatchNorm1d(6), nn::ReLU(), nn::Linear(6, 2));
    (void)a(tg::randn({5, 4}));
    a->eval();
    tg::manual_seed(2);
    nn::Sequential b(nn::Linear(4, 6), nn::BatchNorm1d(6), nn::ReLU(), nn::Linear(6, 2));
    b->eval();
    const std::string path = dir.file("model.safetensors");
    tg::io::save_safetensors(a->state_dict(), path, {{"format", "pt"}});
    const Tensor x = tg::randn({3, 4});
    BOOST_TEST(values(a(x)) != values(b(x)));
    b->load_state_dict(tg::io::load_safetensors(path));
    BOOST_TEST(values(a(x)) == values(b(x)), boost::test_tools::per_element());
    BOOST_TEST(b[1]->as<nn::BatchNorm1d>()->num_batches_tracked.item<int64_t>() == 1);
}

BOOST_AUTO_TEST_CASE(bad_arguments_to_save) {
    tgtest::TempDir dir;
    tg::StateDict sd;
    sd.insert("x", Tensor());
    tgtest::check_throws<tg::value_error>(
        [&] { tg::io::save_safetensors(sd, dir.file("u.safetensors")); }, {"\"x\"", "undefined"});
    tg::StateDict meta;
    meta.insert("__metadata__", tg::ones({1}));
    tgtest::check_throws<tg::value_error>(
        [&] { tg::io::save_safetensors(meta, dir.file("m.safetensors")); }, {"__metadata__"});
    tgtest::check_throws<tg::io_error>(
        [&] { tg::io::save_safetensors(tg::StateDict(), "/nonexistent/dir/m.safetensors"); },
        {"save_safetensors(/nonexistent/dir/m.safetensors)"});
}

BOOST_AUTO_TEST_CASE(hostile_files_are_io_errors) {
    tgtest::TempDir dir;
    const std::string path = dir.file("bad.safetensors");
    const std::string f32 = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    const Bytes eight(8, 0);
    struct Case {
        std::string what;
        Bytes file;
        std::string needle;
    };
    auto tensor = [](const std::string& name, const std::string& dtype, const std::string& shape,
                     uint64_t b, uint64_t e) {
        return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
               ",\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) + "]}";
    };
    const std::vector<Case> cases = {
        {"empty file", {}, "too short"},
        {"5 bytes", Bytes(5, 0), "too short"},
        {"header past the end", file_of(f32, eight, 1000), "past the end"},
        {"header above 100 MB", file_of(f32, eight, 200'000'000), "above 100 MB"},
        {"length 2^64 - 1", file_of(f32, eight, ~uint64_t(0)), "above 100 MB"},
        {"bad JSON", file_of("{\"x\":", {}), "bad JSON"},
        {"trailing text", file_of("{}x", {}), "after the value"},
        {"not UTF-8", file_of("{\"\xff\":1}", {}), "invalid UTF-8"},
        {"not an object", file_of("[]", {}), "not an object"},
        {"true", file_of("{\"x\":true}", {}), "unexpected character"},
        {"lone surrogate", file_of("{\"\\ud800\":{}}", {}), "surrogate"},
        {"unknown escape", file_of("{\"\\q\":{}}", {}), "unknown escape"},
        {"deep nesting", file_of(std::string(100, '[') + std::string(100, ']'), {}), "nested"},
        {"integer above 2^64", file_of("{\"x\":99999999999999999999}", {}), "above 2^64"},
        {"unknown dtype", file_of("{" + tensor("x", "C64", "[2]", 0, 8) + "}", eight),
         "unknown dtype \"C64\""},
        {"dtype not a string",
         file_of("{\"x\":{\"dtype\":3,\"shape\":[],\"data_offsets\":[0,4]}}", eight),
         "\"dtype\" is an integer, not a string"},
        {"no shape", file_of("{\"x\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", eight),
         "no \"shape\""},
        {"negative shape", file_of("{" + tensor("x", "F32", "[-2]", 0, 8) + "}", eight),
         "negative"},
        {"fractional shape", file_of("{" + tensor("x", "F32", "[2.0]", 0, 8) + "}", eight),
         "not an integer"},
        {"string in shape", file_of("{" + tensor("x", "F32", "[\"2\"]", 0, 8) + "}", eight),
         "not only integers"},
        {"overflowing shape",
         file_of("{" + tensor("x", "F32", "[4294967296,4294967296]", 0, 8) + "}", eight),
         "overflows"},
        {"overflowing empty shape",
         file_of("{" + tensor("x", "F32", "[0,4294967296,4294967296]", 0, 0) + "}", {}),
         "overflows"},
        {"offsets not matching the shape",
         file_of("{" + tensor("x", "F32", "[3]", 0, 8) + "}", eight), "do not hold its 12 bytes"},
        {"offsets reversed", file_of("{" + tensor("x", "F32", "[0]", 8, 0) + "}", eight),
         "data_offsets [8, 0]"},
        {"overlapping",
         file_of(
             "{" + tensor("x", "F32", "[2]", 0, 8) + "," + tensor("y", "F32", "[1]", 4, 8) + "}",
             eight),
         "overlaps"},
        {"gap", file_of("{" + tensor("x", "F32", "[1]", 4, 8) + "}", eight), "a gap"},
        {"offsets out of range", file_of("{" + tensor("x", "F32", "[4]", 0, 16) + "}", eight),
         "past the 8-byte buffer"},
        {"truncated data", file_of(f32, Bytes(5, 0)), "truncated"},
        {"buffer longer than its tensors", file_of(f32, Bytes(12, 0)), "the buffer has 12 bytes"},
        {"duplicate names",
         file_of(
             "{" + tensor("x", "F32", "[1]", 0, 4) + "," + tensor("x", "F32", "[1]", 4, 8) + "}",
             eight),
         "\"x\" appears twice"},
        {"duplicate field",
         file_of("{\"x\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],"
                 "\"data_offsets\":[0,8]}}",
                 eight),
         "given twice"},
        {"metadata not strings", file_of("{\"__metadata__\":{\"a\":1}}", {}), "not a string"},
        {"BOOL byte 2", file_of("{" + tensor("m", "BOOL", "[2]", 0, 2) + "}", Bytes{1, 2}),
         "only 0 and 1"},
    };
    for (const Case& c : cases)
        BOOST_TEST_CONTEXT(c.what) {
            tgtest::write_bytes(path, c.file);
            tgtest::check_throws<tg::io_error>([&] { (void)tg::io::load_safetensors(path); },
                                               {"load_safetensors(" + path + ")", c.needle});
        }
    tgtest::check_throws<tg::io_error>([&] { (void)tg::io::load_safetensors(dir.file("missing")); },
                                       {"missing", "cannot open"});
    tgtest::check_throws<tg::io_error>([&] { (void)tg::io::load_safetensors(dir.path.string()); },
                                       {"not a regular file"});
    tgtest::check_throws<tg::io_error>(
        [&] { (void)tg::io::load_safetensors_metadata(dir.file("missing")); },
        {"load_safetensors_metadata(", "cannot open"});
}

BOOST_AUTO_TEST_CASE(json_escapes_and_whitespace_are_read) {
    tgtest::TempDir dir;
    const std::string path = dir.file("escapes.safetensors");
    // \u escapes (a surrogate pair among them), the other escapes, whitespace between tokens
    const std::string header =
        " {\n \"__metadata__\" : { \"k\\/\\t\" : \"\\u00e9\\ud83d\\ude00\\\"\" } ,\r\n"
        "\t\"a\\u0062\" : { \"data_offsets\" : [ 0 , 4 ] , \"shape\" : [ 1 ] , \"dtype\" : \"I32\""
        ", \"extra\" : \"ignored\" } }  ";
    tgtest::write_bytes(path, file_of(header, Bytes{7, 0, 0, 0}));
    auto sd = tg::io::load_safetensors(path);
    BOOST_TEST(sd.keys() == std::vector<std::string>{"ab"}, boost::test_tools::per_element());
    BOOST_TEST(sd["ab"].dtype() == tg::kInt32);
    BOOST_TEST(values(sd["ab"]) == std::vector<double>{7}, boost::test_tools::per_element());
    auto meta = tg::io::load_safetensors_metadata(path);
    BOOST_TEST(meta["k/\t"] == "\u00e9\U0001F600\"");
}

BOOST_AUTO_TEST_CASE(tensors_view_the_mapped_file_and_writes_stay_private) {
    tgtest::TempDir dir;
    const std::string path = dir.file("big.safetensors");
    tg::StateDict sd;
    sd.insert("a", tg::arange(1 << 18, tg::kFloat32));  // 1 MiB
    sd.insert("b", tg::arange(6, tg::kFloat64));
    tg::io::save_safetensors(sd, path);
    const int64_t before = tg::memory::stats().current_bytes;
    Tensor a, b;
    {
        auto loaded = tg::io::load_safetensors(path);
        a = loaded["a"];
        b = loaded["b"];
    }
    // zero-copy: no tapegrad allocation of a's MiB, and both are views of one mapping, as far
    // apart as the file puts them (F64 first: the writer sorts the widest dtypes first)
    BOOST_TEST(tg::memory::stats().current_bytes - before < (1 << 18));
    BOOST_TEST(reinterpret_cast<const char*>(a.data_ptr<float>()) -
                   reinterpret_cast<const char*>(b.data_ptr<double>()) ==
               6 * 8);
    std::remove(path.c_str());  // the mapping outlives the file's name
    BOOST_TEST(a[12345].item<double>() == 12345);
    BOOST_TEST(values(b) == values(sd["b"]), boost::test_tools::per_element());
    // an in-place write changes the tensor, not the file
    tg::io::save_safetensors(sd, path);
    auto again = tg::io::load_safetensors(path);
    again["a"].mul_(2);
    BOOST_TEST(again["a"][3].item<double>() == 6);
    BOOST_TEST(tg::io::load_safetensors(path)["a"][3].item<double>() == 3);
}

BOOST_AUTO_TEST_CASE(a_misaligned_tensor_is_copied) {
    tgtest::TempDir dir;
    const std::string path = dir.file("odd.safetensors");
    // a U8 of 3 bytes, then an F32 at buffer offset 3 (the header padded to 8: the F32's address
    // is 3 mod 4, so it cannot be viewed)
    std::string header =
        "{\"u\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]},"
        "\"f\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[3,7]}}";
    header.append((8 - header.size() % 8) % 8, ' ');
    float v = 2.5f;
    Bytes buffer{1, 2, 3, 0, 0, 0, 0};
    std::memcpy(buffer.data() + 3, &v, 4);
    tgtest::write_bytes(path, file_of(header, buffer));
    auto sd = tg::io::load_safetensors(path);
    BOOST_TEST(sd["f"].item<double>() == 2.5);
    BOOST_TEST(reinterpret_cast<uintptr_t>(sd["f"].data_ptr<float>()) % alignof(float) == 0u);
    BOOST_TEST(values(sd["u"]) == (std::vector<double>{1, 2, 3}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(from_blob_calls_its_deleter_once_when_the_last_view_dies) {
    float buf[4] = {1, 2, 3, 4};
    int calls = 0;
    void* seen = nullptr;
    auto deleter = [&](void* p) { ++calls, seen = p; };
    {
        Tensor t = tg::from_blob(buf, {2, 2}, deleter);
        Tensor row = t[1];
        t = Tensor();
        BOOST_TEST(calls == 0);  // a view still holds it
        BOOST_TEST(row[1].item<double>() == 4);
    }
    BOOST_TEST(calls == 1);
    BOOST_TEST(seen == static_cast<void*>(buf));
    // when from_blob throws, the memory stays the caller's
    BOOST_CHECK_THROW(
        tg::from_blob(buf, {4}, deleter, tg::TensorOptions(tg::kInt32).requires_grad(true)),
        tg::error);
    BOOST_CHECK_THROW(tg::from_blob(buf, {4}, deleter, tg::Device::opencl(0)), tg::device_error);
    BOOST_TEST(calls == 1);
}

BOOST_AUTO_TEST_CASE(python_reader_reads_what_tapegrad_wrote) {
    if (std::system("python3 -c 'import json, struct' > /dev/null 2>&1") != 0) {
        BOOST_TEST_MESSAGE("python3 not found: skipped");
        return;
    }
    tgtest::TempDir dir;
    tg::StateDict sd;
    sd.insert("b", tg::tensor({1.5, -2.0, 3.25}).to(tg::kFloat64));
    sd.insert("a", tg::tensor(std::vector<int64_t>{-7, 9}));
    sd.insert("c", tg::tensor({0.25f, 8.0f}).reshape({2, 1}));
    const std::string path = dir.file("py.safetensors"), out = dir.file("py.txt");
    tg::io::save_safetensors(sd, path, {{"format", "pt"}});
    // written from the format alone: json for the header, struct for the little-endian values
    const std::string script =
        "import json, struct, sys\n"
        "b = open(sys.argv[1], 'rb').read()\n"
        "n = struct.unpack('<Q', b[:8])[0]\n"
        "assert n % 8 == 0\n"
        "h = json.loads(b[8:8 + n])\n"
        "data = b[8 + n:]\n"
        "fmt = {'F64': 'd', 'F32': 'f', 'I64': 'q'}\n"
        "for k in sorted(h):\n"
        "    if k == '__metadata__':\n"
        "        print(k, h[k]['format']); continue\n"
        "    t = h[k]; s, e = t['data_offsets']\n"
        "    v = struct.unpack('<%d%s' % ((e - s) // struct.calcsize(fmt[t['dtype']]),\n"
        "                      fmt[t['dtype']]), data[s:e])\n"
        "    print(k, t['dtype'], t['shape'], ' '.join(repr(x) for x in v))\n";
    const std::string script_path = dir.file("reader.py");
    { std::ofstream(script_path) << script; }
    BOOST_TEST_REQUIRE(std::system(("python3 " + script_path + " " + path + " > " + out).c_str()) ==
                       0);
    std::ifstream in(out);
    const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    BOOST_TEST(got ==
               "__metadata__ pt\n"
               "a I64 [2] -7 9\n"
               "b F64 [3] 1.5 -2.0 3.25\n"
               "c F32 [2, 1] 0.25 8.0\n");
}
