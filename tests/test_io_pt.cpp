// tg::io::save_state_dict / load_state_dict: PyTorch's .pt checkpoints (Note [.pt format] in
// include/tapegrad/io_pt.hpp). Round trips in tapegrad; hostile files crafted here byte by
// byte (a stored zip and a hand-written pickle), each an io_error naming the file and the
// problem; and, with Debian's python3-torch, the round trip with real PyTorch
// (tests/python/pt_roundtrip.py): PyTorch's MLP and Fashion-MNIST CNN load and give PyTorch's
// outputs, what tapegrad saves torch.load reads, a PyTorch-trained checkpoint fine-tunes here,
// and the CNN's safetensors file goes both ways (written and read in Python by the format).
#define BOOST_TEST_MODULE io_pt
#include <zlib.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <cstring>

#include "io/pt_types.hpp"  // io_detail::save_pt: zip64 at small sizes
#include "serialize_util.hpp"
#include "tapegrad/io_pt.hpp"
#include "tapegrad/tapegrad.hpp"

namespace nn = tg::nn;
using tg::Tensor;
using tgtest::Bytes;
using namespace std::string_literals;

namespace {

std::vector<double> values(const Tensor& t) {
    return t.to(tg::kFloat64).contiguous().to_vector<double>();
}

void le(Bytes& b, uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
        b.push_back(uint8_t(v >> (8 * i)));
}

/// A stored zip archive of the entries (method: what the local and central headers declare).
Bytes zip_of(const std::vector<std::pair<std::string, std::string>>& entries, uint16_t method = 0) {
    Bytes out, dir;
    for (auto& [name, data] : entries) {
        const uint32_t crc =
            uint32_t(crc32(0, reinterpret_cast<const Bytef*>(data.data()), uInt(data.size())));
        const uint64_t at = out.size();
        for (Bytes* b : {&out, &dir}) {
            le(*b, b == &out ? 0x04034b50 : 0x02014b50, 4);
            if (b == &dir)
                le(*b, 20, 2);
            le(*b, 20, 2);
            le(*b, 0, 2);
            le(*b, method, 2);
            le(*b, 0, 4);  // time, date
            le(*b, crc, 4);
            le(*b, data.size(), 4);
            le(*b, data.size(), 4);
            le(*b, name.size(), 2);
            le(*b, 0, 2);
            if (b == &dir) {
                le(*b, 0, 6);  // comment length, disk, internal attributes
                le(*b, 0, 4);
                le(*b, at, 4);
            }
            b->insert(b->end(), name.begin(), name.end());
            if (b == &out)
                out.insert(out.end(), data.begin(), data.end());
        }
    }
    const uint64_t dir_at = out.size();
    out.insert(out.end(), dir.begin(), dir.end());
    le(out, 0x06054b50, 4);
    le(out, 0, 4);
    le(out, entries.size(), 2);
    le(out, entries.size(), 2);
    le(out, dir.size(), 4);
    le(out, dir_at, 4);
    le(out, 0, 2);
    return out;
}

const std::string kOrderedDict = "ccollections\nOrderedDict\n)R";
const std::string kRebuild = "ctorch._utils\n_rebuild_tensor_v2\n";

/// BINUNICODE s.
std::string str(const std::string& s) {
    std::string out = "X";
    for (int i = 0; i < 4; ++i)
        out += char(uint8_t(s.size() >> (8 * i)));
    return out + s;
}
/// _rebuild_tensor_v2 of storage key "0" (type, numel) with the given offset, size and stride
/// (pickled tuples, e.g. "K\x02K\x03\x86").
std::string tensor_pkl(const std::string& type, const std::string& numel, const std::string& offset,
                       const std::string& size, const std::string& stride) {
    return kRebuild + "((" + str("storage") + "ctorch\n" + type + "\n" + str("0") + str("cpu") +
           numel + "tQ" + offset + size + stride + "\x89" + kOrderedDict + "tR";
}
/// An archive "a/" holding the pickle and storage "0".
Bytes pt_of(const std::string& pickle, const std::string& storage) {
    return zip_of({{"a/data.pkl", pickle}, {"a/data/0", storage}, {"a/version", "3\n"}});
}
/// {"x": tensor}, as an OrderedDict.
std::string one_tensor(const std::string& tensor) {
    return "\x80\x02" + kOrderedDict + "(" + str("x") + tensor + "u.";
}
const std::string kSixFloats(24, '\0');
/// A [2, 3] float tensor on a 6-element storage.
const std::string kFloat6 =
    tensor_pkl("FloatStorage", "K\x06"s, "K\x00"s, "K\x02K\x03\x86"s, "K\x03K\x01\x86"s);

/// The message of the io_error that loading bytes as a .pt file throws ("" if it loads).
std::string load_error(const tgtest::TempDir& dir, const Bytes& bytes) {
    const std::string path = dir.file("h.pt");
    tgtest::write_bytes(path, bytes);
    try {
        tg::io::load_state_dict(path);
    } catch (const tg::io_error& e) {
        const std::string m = e.what();
        BOOST_TEST(m.find("load_state_dict(" + path + ")") != std::string::npos, m);
        return m;
    }
    return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_dtype_strides_and_shared_storage_round_trip) {
    tgtest::TempDir dir;
    tg::StateDict sd;
    const Tensor w = tg::arange(12, tg::kFloat64).reshape({3, 4});
    sd.insert("w", w);
    sd.insert("wt", w.t());            // strides (1, 4), same storage
    sd.insert("row", w.select(0, 1));  // offset 4
    sd.insert("f", tg::tensor({1.5f, -2.0f}));
    sd.insert("h", tg::tensor({0.5f, -3.0f}).to(tg::kFloat16));
    sd.insert("bf", tg::tensor({0.25f, -8.0f}).to(tg::kBFloat16));
    sd.insert("l", tg::tensor(std::vector<int64_t>{-(int64_t(1) << 40), 7}));
    sd.insert("i", tg::tensor({-3, 9}).to(tg::kInt32));
    sd.insert("s", tg::tensor({-300, 2}).to(tg::kInt16));
    sd.insert("c", tg::tensor({-100, 2}).to(tg::kInt8));
    sd.insert("u", tg::tensor({200, 2}).to(tg::kUInt8));
    sd.insert("b", tg::tensor({true, false}));
    sd.insert("scalar", tg::scalar_tensor(5, tg::kInt64));
    sd.insert("empty", tg::zeros({0, 3}));
    const std::string path = dir.file("all.pt");
    tg::io::save_state_dict(sd, path);
    BOOST_TEST(dir.others("all.pt").empty());  // no temporary left
    const tg::StateDict back = tg::io::load_state_dict(path);
    BOOST_TEST(back.keys() == sd.keys(), boost::test_tools::per_element());
    for (auto& [name, t] : sd) {
        BOOST_TEST_CONTEXT(name) {
            BOOST_TEST(back[name].dtype() == t.dtype());
            BOOST_TEST(back[name].sizes() == t.sizes(), boost::test_tools::per_element());
            BOOST_TEST(values(back[name]) == values(t), boost::test_tools::per_element());
        }
    }
    // w's views come back as views of one storage, with their strides and offset
    BOOST_TEST(back["wt"].impl()->storage == back["w"].impl()->storage);
    BOOST_TEST(back["row"].impl()->storage == back["w"].impl()->storage);
    BOOST_TEST(back["wt"].strides() == (tg::Shape{1, 4}), boost::test_tools::per_element());
    BOOST_TEST(back["row"].storage_offset() == 4);
    BOOST_TEST(back["f"].impl()->storage != back["w"].impl()->storage);
}

BOOST_AUTO_TEST_CASE(model_round_trip_gives_equal_outputs) {
    tgtest::TempDir dir;
    nn::Sequential a(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::BatchNorm2d(4),
                     nn::ReLU(), nn::Flatten(), nn::Linear(4 * 5 * 5, 3));
    const Tensor x = tg::randn({2, 1, 5, 5});
    a->train();
    a->forward(x);  // running statistics and num_batches_tracked move
    a->eval();
    const std::string path = dir.file("m.pt");
    tg::io::save_state_dict(a->state_dict(), path);
    tg::manual_seed(99);
    nn::Sequential b(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::BatchNorm2d(4),
                     nn::ReLU(), nn::Flatten(), nn::Linear(4 * 5 * 5, 3));
    b->eval();
    b->load_state_dict(tg::io::load_state_dict(path));
    BOOST_TEST(values(b->forward(x)) == values(a->forward(x)), boost::test_tools::per_element());
    BOOST_TEST(b->state_dict()["1.num_batches_tracked"].item<int64_t>() == 1);
}

BOOST_AUTO_TEST_CASE(hand_written_files_are_read) {
    tgtest::TempDir dir;
    std::string six;
    for (float v : {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}) {
        char b[4];
        std::memcpy(b, &v, 4);  // the test host is little-endian (x86-64, aarch64)
        six.append(b, 4);
    }
    const std::string path = dir.file("hand.pt");
    // an OrderedDict with a _metadata attribute (BUILD), as state_dict() pickles
    tgtest::write_bytes(path, pt_of("\x80\x02"s + kOrderedDict + "q\x01(" + str("x") + kFloat6 +
                                        "u}" + str("_metadata") + kOrderedDict + "(" + str("") +
                                        "}" + str("version") + "K\x01su" + "sb.",
                                    six));
    tg::StateDict sd = tg::io::load_state_dict(path);
    BOOST_TEST(sd.keys() == std::vector<std::string>{"x"}, boost::test_tools::per_element());
    BOOST_TEST(values(sd["x"]) == (std::vector<double>{1, 2, 3, 4, 5, 6}),
               boost::test_tools::per_element());
    // a plain dict, a transposed view (stride (1, 2), offset 1 into a 7-element storage),
    // memo gets and puts, protocol 4 framing and short strings
    tgtest::write_bytes(path, pt_of("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01y"s +
                                        tensor_pkl("FloatStorage", "K\x07"s, "K\x01"s,
                                                   "K\x03K\x02\x86"s, "K\x01K\x02\x86"s) +
                                        "u.",
                                    six + std::string(4, '\0')));
    sd = tg::io::load_state_dict(path);
    BOOST_TEST(values(sd["y"]) == (std::vector<double>{2, 4, 3, 5, 4, 6}),
               boost::test_tools::per_element());
    // a nested checkpoint: the state dict under a key, other entries skipped
    tgtest::write_bytes(
        path, pt_of("\x80\x02}("s + str("epoch") + "K\x03" + str("model") + kOrderedDict + "(" +
                        str("x") + kFloat6 + "u" + str("lr") + "G\x3f\x84\x7a\xe1\x47\xae\x14\x7b" +
                        str("h") + "]" + "(K\x01N\x88\x89" + str("s") + "eu.",
                    six));
    sd = tg::io::load_state_dict(path, "model");
    BOOST_TEST(values(sd["x"]) == (std::vector<double>{1, 2, 3, 4, 5, 6}),
               boost::test_tools::per_element());
    BOOST_CHECK_EXCEPTION(tg::io::load_state_dict(path), tg::io_error, [](const tg::io_error& e) {
        return std::string(e.what()).find("\"epoch\" is an int, not a tensor") != std::string::npos;
    });
    BOOST_CHECK_EXCEPTION(
        tg::io::load_state_dict(path, "opt"), tg::io_error, [](const tg::io_error& e) {
            return std::string(e.what()).find("no key \"opt\"") != std::string::npos;
        });
}

BOOST_AUTO_TEST_CASE(hostile_files_are_io_errors) {
    tgtest::TempDir dir;
    auto has = [&](const Bytes& bytes, const std::string& what) {
        const std::string m = load_error(dir, bytes);
        BOOST_TEST(m.find(what) != std::string::npos,
                   "\"" << m << "\" should say \"" << what << "\"");
    };
    // a FloatStorage tensor (numel, offset, sizes, strides as pickle ops) over six floats
    auto has_floats = [&](const std::string& numel, const std::string& offset,
                          const std::string& sizes, const std::string& strides,
                          const std::string& what) {
        has(pt_of(one_tensor(tensor_pkl("FloatStorage", numel, offset, sizes, strides)),
                  kSixFloats),
            what);
    };
    const std::string good = one_tensor(kFloat6);
    BOOST_TEST(load_error(dir, pt_of(good, kSixFloats)).empty());  // the base case loads
    // the archive
    has({}, "too short for a zip end record");
    has(Bytes(100, 'x'), "no end-of-central-directory record");
    Bytes z = pt_of(good, kSixFloats);
    has(Bytes(z.begin(), z.end() - 1), "no end-of-central-directory record");
    Bytes bad_dir = z;
    bad_dir[bad_dir.size() - 6] ^= 0x40;  // the directory's offset
    has(bad_dir, "central directory");
    has(zip_of({{"a/data.pkl", good}, {"a/data/0", kSixFloats}}, 8), "is compressed (method 8)");
    has(zip_of({{"data.pkl", good}}), "not in a folder");
    has(zip_of({{"a/version", "3\n"}}), "no entry a/data.pkl");
    has(zip_of({{"a/data.pkl", good}, {"a/byteorder", "big"}, {"a/data/0", kSixFloats}}),
        "little-endian checkpoints only");
    has(zip_of({{"a/data.pkl", good}}), "storage \"0\" has no entry a/data/0");
    Bytes flipped = z;
    flipped[40] ^= 1;  // inside data.pkl
    has(flipped, "fails its CRC-32");
    has(Bytes{0x80, 0x02, 0x8a, 0x0a}, "a legacy torch.save file");
    // the pickle
    has(pt_of("\x80\x02\xff."s, kSixFloats), "unknown or unsupported opcode 0xff");
    has(pt_of("\x80\x02R."s, kSixFloats), "stack underflow");
    has(pt_of("\x80\x02(K\x01R."s, kSixFloats), "stack underflow");  // not below a MARK
    has(pt_of("\x80\x02u."s, kSixFloats), "no MARK");
    has(pt_of("\x80\x02h\x05."s, kSixFloats), "never stored");
    has(pt_of("\x80\x02K\x01K\x02."s, kSixFloats), "STOP with 2 objects");
    has(pt_of(good.substr(0, good.size() - 3), kSixFloats), "truncated");
    has(pt_of("\x80\x02X\xff\xff\xff\x7f"s, kSixFloats), "truncated");
    has(pt_of("\x80\x02"s + "cos\nsystem\n" + str("ls") + "\x85R.", kSixFloats),
        "refuses the global os.system");
    has(pt_of("\x80\x02" + str("builtins") + str("eval") + "\x93."s, kSixFloats),
        "refuses the global builtins.eval");
    has(pt_of("\x80\x02"s + "ctorch._utils\n_rebuild_qtensor\n)R.", kSixFloats),
        "refuses the global torch._utils._rebuild_qtensor");
    has(pt_of("\x80\x02" + kOrderedDict + "K\x01" + "b."s, kSixFloats),
        "BUILD of a dict from an int");
    has(pt_of(one_tensor("K\x05"s), kSixFloats), "\"x\" is an int, not a tensor");
    has(pt_of("\x80\x02]."s, kSixFloats), "is a list, not a dict of tensors");
    // storages and tensors
    has_floats("K\x06"s, "K\x00"s, "K\x03K\x03\x86"s, "K\x03K\x01\x86"s,
               "a storage shorter than its tensor");
    has_floats("K\x06"s, "K\x01"s, "K\x02K\x03\x86"s, "K\x03K\x01\x86"s,
               "reach element 6 of storage \"0\", which has 6");
    has_floats("K\x07"s, "K\x00"s, "K\x07\x85"s, "K\x01\x85"s,
               "7 float32 elements, but its entry has 24 bytes");
    has_floats("\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f"s, "K\x00"s, "K\x01\x85"s, "K\x01\x85"s,
               "but its entry has 24 bytes");
    const std::string huge = "\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40"s;  // 2^62
    has_floats("K\x06"s, "K\x00"s, huge + "K\x04\x86"s, "K\x04K\x01\x86"s,
               "overflows 64-bit sizes");
    has_floats("K\x06"s, "K\x00"s, "K\x04K\x02\x86"s, huge + "K\x01\x86"s,
               "overflows 64-bit sizes");
    // 2^61 float32 elements (a stride-0 view): 2^63 bytes, past int64
    has_floats("K\x06"s, "K\x00"s, "\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x20\x85"s, "K\x00\x85"s,
               "overflows 64-bit sizes");
    has_floats("K\x06"s, "J\xff\xff\xff\xff"s, "K\x01\x85"s, "K\x01\x85"s,
               "a negative storage offset");
    has_floats("K\x06"s, "K\x00"s, "J\xfe\xff\xff\xff\x85"s, "K\x01\x85"s, "non-negative ints");
    has(pt_of(one_tensor(tensor_pkl("ComplexFloatStorage", "K\x06"s, "K\x00"s, "K\x01\x85"s,
                                    "K\x01\x85"s)),
              kSixFloats),
        "refuses the global torch.ComplexFloatStorage");
    has(pt_of(one_tensor(tensor_pkl("BoolStorage", "K\x02"s, "K\x00"s, "K\x02\x85"s, "K\x01\x85"s)),
              "\x01\x02"s),
        "holds the byte 2");
    has(pt_of(one_tensor(kRebuild + "(K\x01K\x00)"s + ")\x89" + kOrderedDict + "tR"), kSixFloats),
        "a tensor's storage is an int, not a storage");
    has(pt_of(one_tensor(kRebuild + "((" + str("storage") + "K\x01tQ" + ")R"), kSixFloats),
        "not ('storage', type, key, location, numel)");
}

BOOST_AUTO_TEST_CASE(every_truncation_and_byte_flip_of_a_saved_file_is_an_io_error_or_loads) {
    tgtest::TempDir dir;
    tg::StateDict sd;
    sd.insert("w", tg::tensor({1.5f, -2.0f, 3.0f}));
    sd.insert("n", tg::scalar_tensor(5, tg::kInt64));
    const std::string path = dir.file("t.pt");
    tg::io::save_state_dict(sd, path);
    const Bytes whole = tgtest::read_bytes(path);
    int errors = 0;
    for (size_t n = 0; n < whole.size(); ++n)
        errors += !load_error(dir, Bytes(whole.begin(), whole.begin() + std::ptrdiff_t(n))).empty();
    BOOST_TEST(errors == int(whole.size()));  // every truncation is refused
    for (size_t i = 0; i < whole.size(); ++i) {
        Bytes b = whole;
        b[i] ^= 0x5a;
        load_error(dir, b);  // an io_error (checked in load_error) or a load; never a crash
    }
}

BOOST_AUTO_TEST_CASE(save_refuses_undefined_tensors) {
    tgtest::TempDir dir;
    tg::StateDict sd;
    sd.insert("x", Tensor());
    BOOST_CHECK_THROW(tg::io::save_state_dict(sd, dir.file("u.pt")), tg::value_error);
    BOOST_CHECK_THROW(tg::io::save_state_dict(tg::StateDict(), dir.file("no/such/dir/u.pt")),
                      tg::io_error);
}

#ifndef TG_TORCH_PYTHON
#define TG_TORCH_PYTHON "python3"
#endif

namespace {

nn::Sequential torch_mlp() {
    return nn::Sequential(nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 4));
}
nn::Sequential torch_cnn() {  // examples/fashion_mnist_cnn.cpp
    return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::BatchNorm2d(32),
                          nn::ReLU(), nn::MaxPool2d(2),
                          nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::BatchNorm2d(64),
                          nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Dropout(0.25),
                          nn::Linear(64 * 7 * 7, 128), nn::ReLU(), nn::Linear(128, 10));
}

/// examples/char_gpt.cpp's model (its Python twin is pt_roundtrip.py's Gpt), small by default.
struct GptImpl : nn::Module {
    GptImpl(int64_t vocab = 11, int64_t d = 16, int64_t heads = 4, int64_t context = 8,
            int layers = 2)
        : Module("Gpt") {
        tok = register_module("tok", nn::Embedding(vocab, d));
        pos = register_module("pos", nn::Embedding(context, d));
        blocks = register_module("blocks", nn::ModuleList());
        for (int i = 0; i < layers; ++i)
            blocks->push_back(
                nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(d, heads)
                                                .dim_feedforward(4 * d)
                                                .activation(tg::kGELU)
                                                .norm_first(true)
                                                .batch_first(true)));
        ln_f = register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({d})));
        head = register_module("head", nn::Linear(d, vocab));
    }
    Tensor forward(const Tensor& ids) override {
        Tensor h = tok(ids) + pos(tg::arange(ids.size(1), tg::kInt64));
        for (size_t i = 0; i < blocks->size(); ++i)
            h = blocks->at<nn::TransformerEncoderLayerImpl>(i).forward(h, {}, {}, true);
        return head(ln_f(h));
    }
    nn::Embedding tok{nullptr}, pos{nullptr};
    nn::ModuleList blocks{nullptr};
    nn::LayerNorm ln_f{nullptr};
    nn::Linear head{nullptr};
};

int run_script(const std::string& mode, const std::string& dir) {
    return std::system(
        (std::string(TG_TORCH_PYTHON) + " " + TG_PT_SCRIPT + " " + mode + " " + dir).c_str());
}

/// max |a - b| over max(1, max |b|): float32 outputs agree to 1e-6 of their scale (a deep model's
/// logits of a few units differ by a few float32 ulps where the libraries sum in other orders).
double scaled_diff(const Tensor& a, const Tensor& b) {
    BOOST_TEST_REQUIRE(a.sizes() == b.sizes(), boost::test_tools::per_element());
    const auto x = values(a), y = values(b);
    double m = 0, scale = 1;
    for (size_t i = 0; i < x.size(); ++i) {
        m = std::max(m, std::abs(x[i] - y[i]));
        scale = std::max(scale, std::abs(y[i]));
    }
    return m / scale;
}

}  // namespace

BOOST_AUTO_TEST_CASE(pytorch_round_trip) {
    if (std::system(
            (std::string(TG_TORCH_PYTHON) + " -c 'import torch' > /dev/null 2>&1").c_str()) != 0) {
        // scripts/test.sh (CI) installs python3-torch and sets TG_REQUIRE_PYTORCH=1
        BOOST_TEST_REQUIRE(std::getenv("TG_REQUIRE_PYTORCH") == nullptr,
                           TG_TORCH_PYTHON " cannot import torch, and TG_REQUIRE_PYTORCH is set");
        BOOST_TEST_MESSAGE(TG_TORCH_PYTHON
                           " cannot import torch (Debian: apt-get install "
                           "python3-torch): the PyTorch round trip is skipped");
        return;
    }
    tgtest::TempDir dir;
    const std::string d = dir.path.string();
    BOOST_TEST_REQUIRE(run_script("make", d) == 0);
    // PyTorch's state dicts load into the same architectures and give PyTorch's outputs:
    // char_gpt's blocks (attention's in_proj, pre-norm, GELU, causal) small and at the
    // example's size (6 blocks, d_model 256, context 128; a vocabulary of 96)
    const std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>> models = {
        {"mlp", torch_mlp().ptr()},
        {"cnn", torch_cnn().ptr()},
        {"gpt", std::make_shared<GptImpl>()},
        {"gpt_full", std::make_shared<GptImpl>(96, 256, 4, 128, 6)}};
    for (const auto& [name, model] : models) {
        BOOST_TEST_CONTEXT(name) {
            const tg::StateDict sd = tg::io::load_state_dict(dir.file(name + ".pt"));
            BOOST_TEST(sd.keys() == model->state_dict().keys(), boost::test_tools::per_element());
            model->load_state_dict(sd);
            model->eval();
            const tg::StateDict io = tg::io::load_state_dict(dir.file(name + "_io.pt"));
            const Tensor y = model->forward(io["x"]);
            BOOST_TEST(scaled_diff(y, io["y"]) <= 1e-6);
            BOOST_TEST_MESSAGE(name << ": " << scaled_diff(y, io["y"]) << " of the output's scale");
            tg::io::save_state_dict(model->state_dict(), dir.file("tg_" + name + ".pt"));
            tg::StateDict out;
            out.insert("y", y.detach());
            tg::io::save_state_dict(out, dir.file("tg_" + name + "_out.pt"));
        }
    }
    {  // safetensors both ways: PyTorch's CNN written by the format loads and gives its output
        nn::Sequential model = torch_cnn();
        const tg::StateDict sd = tg::io::load_safetensors(dir.file("cnn.safetensors"));
        BOOST_TEST(sd.keys() == model->state_dict().keys(), boost::test_tools::per_element());
        model->load_state_dict(sd);
        model->eval();
        const tg::StateDict io = tg::io::load_state_dict(dir.file("cnn_io.pt"));
        BOOST_TEST(scaled_diff(model->forward(io["x"]), io["y"]) <= 1e-6);
        tg::io::save_safetensors(model->state_dict(), dir.file("tg_cnn.safetensors"),
                                 {{"format", "pt"}});
    }
    const tg::StateDict ckpt = tg::io::load_state_dict(dir.file("cnn_ckpt.pt"), "model");
    BOOST_TEST(ckpt.keys() == torch_cnn()->state_dict().keys(), boost::test_tools::per_element());
    BOOST_TEST(ckpt["1.num_batches_tracked"].item<int64_t>() == 3);
    // a PyTorch-trained checkpoint fine-tunes here: SGD steps lower the loss it starts from
    nn::Sequential tuned = torch_mlp();
    tuned->load_state_dict(tg::io::load_state_dict(dir.file("trained.pt")));
    const tg::StateDict io = tg::io::load_state_dict(dir.file("trained_io.pt"));
    tg::optim::SGD opt(tuned->parameters(), tg::optim::SGDOptions(0.05));
    std::vector<double> losses;
    for (int step = 0; step < 6; ++step) {
        opt.zero_grad();
        Tensor loss = tg::cross_entropy(tuned->forward(io["x"]), io["y"]);
        losses.push_back(loss.item<double>());
        loss.backward();
        opt.step();
    }
    BOOST_TEST(std::abs(losses.front() - io["loss"].item<double>()) <= 1e-6);
    BOOST_TEST(losses.back() < losses.front());
    tg::io::save_state_dict(tuned->state_dict(), dir.file("tg_tuned.pt"));
    // tensors sharing a storage in PyTorch's file share it here, and in what tapegrad writes
    const tg::StateDict shared = tg::io::load_state_dict(dir.file("shared.pt"));
    for (const char* k : {"wt", "row", "col"})
        BOOST_TEST(shared[k].impl()->storage == shared["w"].impl()->storage, k);
    BOOST_TEST(values(shared["col"]) == (std::vector<double>{2, 6, 10}),
               boost::test_tools::per_element());
    BOOST_TEST(values(shared["h"]) == (std::vector<double>{1.5, -2}),
               boost::test_tools::per_element());
    tg::io::save_state_dict(shared, dir.file("tg_shared.pt"));
    // PyTorch reads all of it back (torch.load(weights_only=True)) and checks it
    BOOST_TEST(run_script("check", d) == 0);
}

BOOST_AUTO_TEST_CASE(zip64_archives_are_written_and_read) {
    tgtest::TempDir dir;
    tg::StateDict sd;
    sd.insert("w", tg::arange(12, tg::kFloat32).reshape({3, 4}));
    sd.insert("wt", sd["w"].t());  // shares w's storage
    sd.insert("n", tg::scalar_tensor(7, tg::kInt64));
    sd.insert("e", tg::zeros({0, 2}));
    // every size and offset above 0 in zip64 fields, as a checkpoint past 4 GB has them
    const std::string path = dir.file("z64.pt");
    tg::io_detail::save_pt(sd, path, 0);
    const Bytes b = tgtest::read_bytes(path);
    auto has_u32 = [&](uint32_t sig) {
        for (size_t i = 0; i + 4 <= b.size(); ++i) {
            const uint32_t v = uint32_t(b[i]) | uint32_t(b[i + 1]) << 8 | uint32_t(b[i + 2]) << 16 |
                               uint32_t(b[i + 3]) << 24;
            if (v == sig)
                return true;
        }
        return false;
    };
    BOOST_TEST(has_u32(0x06064b50u));                                   // the zip64 end record
    BOOST_TEST(has_u32(0x07064b50u));                                   // and its locator
    BOOST_TEST((b[b.size() - 12] == 0xff && b[b.size() - 9] == 0xff));  // size, offset: zip64
    const tg::StateDict back = tg::io::load_state_dict(path);
    BOOST_TEST(back.keys() == sd.keys(), boost::test_tools::per_element());
    for (const auto& item : sd)
        BOOST_TEST(tg::equal(back[item.key()], item.value()), item.key());
    BOOST_TEST(back["wt"].stride(0) == 1);
    // the same state dict without zip64: the only difference is the archive's fields
    tg::io::save_state_dict(sd, dir.file("z32.pt"));
    BOOST_TEST(tgtest::read_bytes(dir.file("z32.pt")).size() < b.size());
    // Python's zipfile (and PyTorch, when it is here) read it too
    const std::string py = std::string(TG_TORCH_PYTHON) + " -c \"import sys, zipfile; " +
                           "z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; " +
                           "assert len(z.infolist()) == 6, z.infolist()\" " + path;
    BOOST_TEST(std::system(py.c_str()) == 0);
    if (std::system(
            (std::string(TG_TORCH_PYTHON) + " -c 'import torch' > /dev/null 2>&1").c_str()) == 0) {
        const std::string torch_py =
            std::string(TG_TORCH_PYTHON) + " -c \"import sys, torch; " +
            "sd = torch.load(sys.argv[1], weights_only=True); " +
            "assert sd['w'].sum().item() == 66 and sd['n'].item() == 7, sd; " +
            "assert sd['wt'].stride() == (1, 4) and sd['e'].shape == (0, 2), sd\" " + path;
        BOOST_TEST(std::system(torch_py.c_str()) == 0);
    }
}
