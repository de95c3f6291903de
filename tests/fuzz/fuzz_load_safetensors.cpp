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
        fuzz::check_round_trip(sd, back);
    } catch (const std::exception& e) {
        fuzz::finding(std::string("the round trip threw: ") + e.what());
    }
    return 0;
}
