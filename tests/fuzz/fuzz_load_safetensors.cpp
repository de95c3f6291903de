// libFuzzer target: tg::io::load_safetensors of arbitrary bytes. Only tg::io_error may come out;
// a file that loads must load into the fuzz model without crashing (non-strict: whatever names
// and shapes match) and must survive a round trip: saved and loaded again, the same names,
// dtypes, shapes and bytes, and the same metadata.
#include <exception>

#include "fuzz_common.hpp"
#include "tapegrad/io_safetensors.hpp"

namespace {
/// Where round trips are written: memory (/dev/shm) where there is one, as every save syncs.
struct CopyPath {
    std::string path = (::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                       std::string("/fuzz_load_safetensors_") + std::to_string(::getpid());
    ~CopyPath() { std::remove(path.c_str()); }
};

/// A CPU tensor's bytes, any dtype (fuzz::bits_of knows the number dtypes only).
std::vector<uint8_t> bytes_of(const tg::Tensor& t) {
    const tg::Tensor c = t.contiguous();
    std::vector<uint8_t> out(size_t(c.numel()) * tg::element_size(c.dtype()));
    tg::dispatch_all(c.dtype(), [&](auto tag) {
        if (!out.empty())
            std::memcpy(out.data(), c.data_ptr<decltype(tag)>(), out.size());
    });
    return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static fuzz::InputFile file;
    static const CopyPath copy_path;
    const std::string& copy = copy_path.path;
    const std::string& path = file.set(data, size);
    tg::StateDict sd;
    std::map<std::string, std::string> meta;
    try {
        sd = tg::io::load_safetensors(path);
        meta = tg::io::load_safetensors_metadata(path);
    } catch (const tg::io_error&) {
        return 0;
    } catch (const std::exception& e) {
        fuzz::finding(std::string("load_safetensors threw another exception: ") + e.what());
    }
    tg::nn::Sequential model = fuzz::make_model();
    try {
        (void)model->load_state_dict(sd, false);
    } catch (const tg::value_error&) {  // a size mismatch
    }
    try {
        tg::io::save_safetensors(sd, copy, meta);
        const tg::StateDict back = tg::io::load_safetensors(copy);
        if (tg::io::load_safetensors_metadata(copy) != meta)
            fuzz::finding("the metadata changed in a round trip");
        if (back.size() != sd.size())
            fuzz::finding("a round trip changed the number of tensors");
        for (auto& [name, t] : sd) {
            const tg::Tensor* b = back.find(name);
            if (!b || b->dtype() != t.dtype() || b->sizes() != t.sizes() ||
                bytes_of(*b) != bytes_of(t))
                fuzz::finding("a round trip changed tensor \"" + name + "\"");
        }
    } catch (const std::exception& e) {
        fuzz::finding(std::string("the round trip threw: ") + e.what());
    }
    return 0;
}
