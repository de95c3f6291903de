// libFuzzer target: tg::data::read_idx on arbitrary bytes (plain or gzip). Only tg::io_error
// may come out, and a file that reads must hold exactly the elements its dims declare.
#include <exception>

#include "fuzz_common.hpp"
#include "tapegrad/data/idx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static fuzz::InputFile file;
    const std::string& path = file.set(data, size);
    try {
        tg::data::IdxArray a = tg::data::read_idx(path);
        uint64_t count = 1;
        for (int64_t d : a.shape) {
            if (d < 0)
                fuzz::finding("negative dim");
            count *= uint64_t(d);
        }
        if (a.shape.empty() || count != a.data.size())
            fuzz::finding("the data does not match the dims");
    } catch (const tg::io_error&) {
    } catch (const std::exception& e) {
        fuzz::finding(std::string("read_idx threw another exception: ") + e.what());
    }
    return 0;
}
