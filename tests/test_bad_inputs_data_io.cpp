/// Bad-input catalogue (tests/bad_inputs.hpp): data loaders and data sets, saving and loading.
/// The same tables are in docs/errors.md. Corrupt and truncated files: tests/test_serialize.cpp
/// and tests/test_data_idx.cpp.
#define BOOST_TEST_MODULE test_bad_inputs_data_io
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/data.hpp"
#include "tapegrad/io.hpp"
#include "tapegrad/io_pt.hpp"
#include "tapegrad/io_safetensors.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/onnx.hpp"
#include "tapegrad/optim.hpp"

using tgtest::check_table;
namespace data = tg::data;
namespace nn = tg::nn;

namespace {
struct Fixtures {
    tg::Tensor images = tg::zeros({5, 2});
    tg::Tensor labels = tg::zeros({5}, tg::kInt64);
    tg::Tensor u;
    const double nan = std::nan("");
    // scratch files in the working directory, removed at the end
    const std::string model_file = "tg_bad_inputs_model.tgsv";
    const std::string optim_file = "tg_bad_inputs_optim.tgsv";
    nn::Linear fc{3, 2};
    tg::optim::SGD sgd{fc->parameters(), tg::optim::SGDOptions(0.1)};

    Fixtures() {
        tg::save(fc, model_file);
        tg::save(sgd, optim_file);
    }
    ~Fixtures() {
        std::remove(model_file.c_str());
        std::remove(optim_file.c_str());
    }
    data::Example<> past_the_end() const {
        data::DataLoader loader(images, labels, data::DataLoaderOptions(5));
        auto it = loader.begin();
        ++it;
        return *it;
    }
    /// export_model's options at opset 12
    static tg::onnx::ExportOptions opset12() {
        tg::onnx::ExportOptions o;
        o.opset = 12;
        return o;
    }
    std::shared_ptr<nn::Module> none;
    /// a float32 [2, 3] input for fc
    static tg::Tensor u3() { return tg::ones({2, 3}); }
    data::Example<> default_iterator() const { return *data::DataLoader::Iterator(); }
    void load_into(nn::Linear m, const std::string& path) const { tg::load(m, path); }
    void load_into(tg::optim::Optimizer& o, const std::string& path) const { tg::load(o, path); }
    /// fc's state dict without its bias, with an extra key, or with a weight of another shape
    tg::StateDict without_bias() const {
        auto sd = fc->state_dict();
        sd.erase("bias");
        return sd;
    }
    tg::StateDict with_extra() const {
        auto sd = fc->state_dict();
        sd.insert("scale", tg::ones({1}));
        return sd;
    }
    tg::StateDict wide_weight() const {
        auto sd = fc->state_dict();
        sd["weight"] = tg::zeros({2, 4});
        return sd;
    }
    tg::StateDict undefined_weight() const {
        auto sd = fc->state_dict();
        sd["weight"] = tg::Tensor();
        return sd;
    }
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(loaders_and_data_sets, Fixtures) {
    using data::DataLoader;
    using data::DataLoaderOptions;
    using data::Normalize;
    check_table(
        "Data loaders and data sets",
        {
            TG_BAD(DataLoader(images, tg::zeros({4}, tg::kInt64)), shape_error, "DataLoader",
                   "[5,2]", "[4]"),
            TG_BAD(DataLoader(tg::zeros({}), tg::zeros({})), shape_error, "DataLoader", "[]"),
            TG_BAD(DataLoader(u, labels), value_error, "DataLoader", "defined"),
            TG_BAD(DataLoader(images, labels, DataLoaderOptions(0)), value_error, "DataLoader",
                   "batch_size", "0"),
            TG_BAD(DataLoader(images, labels, DataLoaderOptions().batch_size(-3)), value_error,
                   "batch_size", "-3"),
            TG_BAD_AS("*it with it one past the last batch", past_the_end(), shape_error,
                      "DataLoader", "batch 1", "[0, 1)"),
            TG_BAD_AS("*tg::data::DataLoader::Iterator()", default_iterator(), error,
                      "DataLoader::Iterator"),
            TG_BAD(data::FashionMNIST(true, "", Normalize{0.5, 0}), value_error, "FashionMNIST",
                   "Normalize", "std"),
            TG_BAD(data::FashionMNIST(true, "", Normalize{nan, 1}), value_error, "FashionMNIST",
                   "mean"),
            TG_BAD(data::FashionMNIST(true, "/nonexistent"), io_error, "FashionMNIST",
                   "/nonexistent/train-images-idx3-ubyte", "not found"),
            TG_BAD(data::read_idx("/nonexistent.idx"), io_error, "read_idx", "/nonexistent.idx"),
            TG_BAD(data::samplers::DistributedRandomSampler(20, 2, 2), value_error,
                   "DistributedRandomSampler", "rank 2"),
            TG_BAD(data::samplers::DistributedSequentialSampler(20, 0), value_error,
                   "DistributedSequentialSampler", "num_replicas 0"),
        });
}

BOOST_FIXTURE_TEST_CASE(save_and_load, Fixtures) {
    check_table(
        "Saving and loading",
        {
            TG_BAD(tg::save(fc, "/nonexistent/dir/m.tgsv"), io_error, "save",
                   "/nonexistent/dir/m.tgsv"),
            TG_BAD(tg::load(fc, "/nonexistent.tgsv"), io_error, "load", "/nonexistent.tgsv"),
            TG_BAD(load_into(nn::Linear(4, 2), model_file), io_error, model_file, "weight", "[2,4]",
                   "[2,3]"),
            TG_BAD(load_into(fc, optim_file), io_error, optim_file, "optimizer state"),
            TG_BAD(load_into(sgd, model_file), io_error, model_file, "module parameters"),
        });
}

BOOST_FIXTURE_TEST_CASE(state_dicts_and_safetensors, Fixtures) {
    check_table(
        "State dicts, safetensors and .pt files",
        {
            TG_BAD(fc->load_state_dict(without_bias()), value_error,
                   "Error(s) in loading state_dict for Linear", "Missing key(s)", "\"bias\""),
            TG_BAD(fc->load_state_dict(with_extra()), value_error, "Unexpected key(s)",
                   "\"scale\""),
            TG_BAD(fc->load_state_dict(wide_weight(), false), value_error,
                   "size mismatch for weight", "[2,4]", "[2,3]"),
            TG_BAD(fc->load_state_dict(undefined_weight()), value_error, "undefined", "weight"),
            TG_BAD(tg::io::save_safetensors(undefined_weight(), "m.safetensors"), value_error,
                   "save_safetensors", "\"weight\"", "undefined"),
            TG_BAD(tg::io::save_safetensors(fc->state_dict(), "/nonexistent/dir/m.safetensors"),
                   io_error, "save_safetensors", "/nonexistent/dir/m.safetensors"),
            TG_BAD(tg::io::load_safetensors("/nonexistent.safetensors"), io_error,
                   "load_safetensors", "/nonexistent.safetensors", "cannot open"),
            TG_BAD(tg::io::load_safetensors(model_file), io_error, model_file, "header length",
                   "above 100 MB"),
            TG_BAD(tg::io::save_state_dict(undefined_weight(), "m.pt"), value_error,
                   "save_state_dict", "\"weight\"", "undefined"),
            TG_BAD(tg::io::save_state_dict(fc->state_dict(), "/nonexistent/dir/m.pt"), io_error,
                   "save_state_dict", "/nonexistent/dir/m.pt"),
            TG_BAD(tg::io::load_state_dict("/nonexistent.pt"), io_error, "load_state_dict",
                   "/nonexistent.pt", "cannot open"),
            TG_BAD(tg::io::load_state_dict(model_file), io_error, model_file,
                   "not a readable zip archive"),
        });
}

BOOST_FIXTURE_TEST_CASE(onnx_export, Fixtures) {
    check_table("ONNX export",
                {
                    TG_BAD(tg::onnx::export_model(nn::Sequential(nn::LogSigmoid()), u3(), "m.onnx"),
                           value_error, "onnx::export_model", "LogSigmoid 'LogSigmoid[0]'",
                           "which the ONNX tracer does not map"),
                    TG_BAD(tg::onnx::export_model(fc, u3(), "m.onnx", opset12()), value_error,
                           "onnx::export_model", "opset 12", "13 to 17"),
                    TG_BAD(tg::onnx::export_model(fc, u3().to(tg::kFloat64), "m.onnx"), dtype_error,
                           "onnx::export_model", "example input", "float64"),
                    TG_BAD(tg::onnx::export_model(fc, tg::Tensor(), "m.onnx"), value_error,
                           "onnx::export_model", "undefined example input"),
                    TG_BAD(tg::onnx::export_model(none, u3(), "m.onnx"), value_error,
                           "onnx::export_model", "null module"),
                    TG_BAD(tg::onnx::export_model(fc, u3(), "/nonexistent/dir/m.onnx"), io_error,
                           "onnx::export_model", "/nonexistent/dir/m.onnx"),
                });
}
