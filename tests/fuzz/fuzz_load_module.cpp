// libFuzzer target: tg::load of arbitrary bytes into a small model, then a training step on
// what loaded. Only tg::io_error may come out, and a failed load must leave the model as it was.
#include <exception>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static fuzz::InputFile file;
    const std::vector<uint8_t> bytes =
        fuzz::tgsv_input(data, size);  // Note [Fuzzing past the checksum]
    const std::string& path = file.set(bytes.data(), bytes.size());
    tg::nn::Sequential model = fuzz::make_model();
    const auto before = fuzz::bits_of(model->parameters());
    try {
        tg::load(model, path);
    } catch (const tg::io_error&) {
        if (fuzz::bits_of(model->parameters()) != before)
            fuzz::finding("a failed load changed the model");
        return 0;
    } catch (const std::exception& e) {
        fuzz::finding(std::string("load threw another exception: ") + e.what());
    }
    tg::optim::SGD opt(model->parameters(), tg::optim::SGDOptions(0.1).momentum(0.9));
    fuzz::train_step(model, opt);
    return 0;
}
