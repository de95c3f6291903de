// libFuzzer target: tg::load of arbitrary bytes into each optimizer type (SGD, Adam, AdamW)
// over a small model, then a step of the one that loaded. Only tg::io_error may come out of a
// load, a failed load must leave the optimizer as it was, and the step may only refuse a step
// count at its limit.
#include <exception>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static fuzz::InputFile file;
    const std::vector<uint8_t> bytes =
        fuzz::tgsv_input(data, size);  // Note [Fuzzing past the checksum]
    const std::string& path = file.set(bytes.data(), bytes.size());
    tg::nn::Sequential model = fuzz::make_model();
    for (auto& opt : fuzz::make_optimizers(model->parameters())) {
        fuzz::train_step(model, *opt);  // some state to keep on failure
        const auto before = fuzz::snapshot(*opt);
        try {
            tg::load(*opt, path);
        } catch (const tg::io_error&) {
            if (fuzz::snapshot(*opt) != before)
                fuzz::finding("a failed load changed the " + opt->type_name() + " optimizer");
            continue;
        } catch (const std::exception& e) {
            fuzz::finding("load into " + opt->type_name() +
                          " threw another exception: " + e.what());
        }
        try {
            fuzz::train_step(model, *opt);
        } catch (const tg::value_error&) {
            // a loaded step count of exactly 2^53 cannot count one more step: refused, not UB
        } catch (const std::exception& e) {
            fuzz::finding("a step after a successful load threw: " + std::string(e.what()));
        }
    }
    return 0;
}
