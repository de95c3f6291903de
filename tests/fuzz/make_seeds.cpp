// Writes the seed corpora of the fuzz targets, all made by the library itself (or, for IDX,
// written as the format describes): valid files for the model and optimizers fuzz_common.hpp
// builds, and a few near misses (other shapes, float64, other kinds). TGSV seeds start with the
// flag byte of Note [Fuzzing past the checksum] in fuzz_common.hpp.
// safetensors seeds are files save_safetensors writes (no flag byte); .pt seeds files
// save_state_dict writes after the same flag byte as TGSV seeds (fuzz_load_pt reads its bit 0 as
// "fix the CRC-32s").
//   fuzz_seeds DIR   ->   DIR/idx/  DIR/load_module/  DIR/load_optimizer/  DIR/load_safetensors/
//                         DIR/load_pt/
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>

#include "fuzz_common.hpp"
#include "tapegrad/io_pt.hpp"
#include "tapegrad/io_safetensors.hpp"

namespace fs = std::filesystem;

namespace {

void write_idx(const fs::path& path, const std::vector<uint32_t>& dims, bool gzip) {
    std::vector<uint8_t> b = {0, 0, 0x08, uint8_t(dims.size())};
    uint64_t count = 1;
    for (uint32_t d : dims) {
        for (int s = 24; s >= 0; s -= 8)
            b.push_back(uint8_t(d >> s));
        count *= d;
    }
    for (uint64_t i = 0; i < count; ++i)
        b.push_back(uint8_t(i * 37 % 256));
    if (gzip) {
        gzFile f = gzopen(path.c_str(), "wb");
        if (!f || gzwrite(f, b.data(), unsigned(b.size())) != int(b.size()) || gzclose(f) != Z_OK)
            fuzz::finding("cannot write " + path.string());
    } else {
        std::ofstream(path, std::ios::binary)
            .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    }
}

/// The file at path as a TGSV target's input (Note [Fuzzing past the checksum]): flag byte 3.
void to_input(const fs::path& path) {
    std::vector<char> b;
    {
        std::ifstream in(path, std::ios::binary);
        b.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    b.insert(b.begin(), char(3));
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(b.data(), std::streamsize(b.size()));
}

/// One tensor of every dtype (named by it), an empty tensor and a scalar.
tg::StateDict every_dtype() {
    tg::StateDict all;
    const tg::Tensor base = tg::tensor({0.0, 1.5, -2.0, 3.0});
    for (tg::Dtype d : {tg::kFloat32, tg::kFloat64, tg::kFloat16, tg::kBFloat16, tg::kInt64,
                        tg::kInt32, tg::kInt16, tg::kInt8, tg::kUInt8, tg::kBool})
        all.insert(tg::dtype_name(d), (d == tg::kUInt8 ? base.abs() : base).to(d));
    all.insert("empty", tg::zeros({0, 3}));
    all.insert("scalar", tg::scalar_tensor(2.5, tg::kFloat64));
    return all;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: fuzz_seeds DIR\n";
        return 2;
    }
    const fs::path root = argv[1];
    for (const char* d : {"idx", "load_module", "load_optimizer", "load_safetensors", "load_pt"})
        fs::create_directories(root / d);

    write_idx(root / "idx" / "labels", {10}, false);
    write_idx(root / "idx" / "images", {2, 4, 4}, false);
    write_idx(root / "idx" / "labels.gz", {10}, true);
    write_idx(root / "idx" / "images.gz", {2, 3, 3}, true);

    const fs::path mod = root / "load_module";
    auto model = fuzz::make_model();
    tg::save(model, (mod / "model.tgsv").string());
    auto trained = fuzz::make_model();
    tg::optim::SGD sgd(trained->parameters(), tg::optim::SGDOptions(0.5));
    fuzz::train_step(trained, sgd);
    tg::save(trained, (mod / "trained.tgsv").string());
    auto wide = tg::nn::Sequential(tg::nn::Linear(4, 5), tg::nn::ReLU(), tg::nn::Linear(5, 2));
    tg::save(wide, (mod / "other_shapes.tgsv").string());
    {  // non-finite parameters are data a file may hold: the step after loading must cope
        auto odd = fuzz::make_model();
        tg::NoGradGuard guard;
        auto ps = odd->parameters();
        ps[0].data_ptr<float>()[0] = std::numeric_limits<float>::quiet_NaN();
        ps[0].data_ptr<float>()[1] = std::numeric_limits<float>::infinity();
        ps[2].data_ptr<float>()[0] = -std::numeric_limits<float>::infinity();
        tg::save(odd, (mod / "non_finite.tgsv").string());
    }
    model->to(tg::kFloat64);
    tg::save(model, (mod / "float64.tgsv").string());

    const fs::path opt = root / "load_optimizer";
    auto net = fuzz::make_model();
    for (auto& o : fuzz::make_optimizers(net->parameters())) {
        tg::save(*o, (opt / (o->type_name() + "_fresh.tgsv")).string());
        fuzz::train_step(net, *o);
        fuzz::train_step(net, *o);
        tg::save(*o, (opt / (o->type_name() + ".tgsv")).string());
        fs::copy_file(opt / (o->type_name() + ".tgsv"), mod / (o->type_name() + ".tgsv"),
                      fs::copy_options::overwrite_existing);  // the wrong kind, for the other
    }
    fs::copy_file(mod / "model.tgsv", opt / "module.tgsv", fs::copy_options::overwrite_existing);
    for (const fs::path& dir : {mod, opt})
        for (auto& e : fs::directory_iterator(dir))
            to_input(e.path());

    const fs::path st = root / "load_safetensors";
    tg::io::save_safetensors(fuzz::make_model()->state_dict(), (st / "model.safetensors").string(),
                             {{"format", "pt"}});
    {  // every dtype, an empty tensor, a scalar, a name with escapes
        tg::StateDict all = every_dtype();
        all.insert("q\"\u00e9\n", tg::ones({1, 1}));
        tg::io::save_safetensors(all, (st / "dtypes.safetensors").string(),
                                 {{"k", "v"}, {"\u00fc", "\t"}});
    }
    tg::io::save_safetensors(tg::StateDict(), (st / "empty.safetensors").string());

    const fs::path pt = root / "load_pt";
    tg::io::save_state_dict(fuzz::make_model()->state_dict(), (pt / "model.pt").string());
    {  // every dtype, an empty tensor, a scalar, views sharing a storage
        tg::StateDict all = every_dtype();
        const tg::Tensor w = tg::tensor({0.0, 1.5, -2.0, 3.0}).reshape({2, 2});
        all.insert("w", w);
        all.insert("wt", w.t());
        all.insert("row", w.select(0, 1));
        tg::io::save_state_dict(all, (pt / "dtypes.pt").string());
    }
    tg::io::save_state_dict(tg::StateDict(), (pt / "empty.pt").string());
    for (auto& e : fs::directory_iterator(pt))
        to_input(e.path());  // its flag's bit 0 fixes the CRC-32s
    std::cout << "fuzz seeds written to " << root << "\n";
    return 0;
}
