// The protocol 2 pickle writer of pickle_mini.hpp: the opcodes Python's pickler writes for
// the same objects (Lib/pickletools.py).
#include <cstdint>

#include "io/pickle_mini.hpp"

namespace tg::io_detail {

void PickleWriter::global(const std::string& module, const std::string& name) {
    out_.push_back('c');
    out_.insert(out_.end(), module.begin(), module.end());
    out_.push_back('\n');
    out_.insert(out_.end(), name.begin(), name.end());
    out_.push_back('\n');
}

void PickleWriter::integer(int64_t v) {
    auto le = [&](uint64_t x, int n) {
        for (int i = 0; i < n; ++i)
            out_.push_back(uint8_t(x >> (8 * i)));
    };
    if (v >= 0 && v < 256) {
        out_.push_back('K');
        le(uint64_t(v), 1);
    } else if (v >= 0 && v < 65536) {
        out_.push_back('M');
        le(uint64_t(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        out_.push_back('J');
        le(uint64_t(v), 4);
    } else {
        out_.push_back(0x8a);
        out_.push_back(8);
        le(uint64_t(v), 8);
    }
}

void PickleWriter::boolean(bool v) {
    out_.push_back(v ? 0x88 : 0x89);
}

void PickleWriter::string(const std::string& s) {
    out_.push_back('X');
    for (int i = 0; i < 4; ++i)
        out_.push_back(uint8_t(uint64_t(s.size()) >> (8 * i)));
    out_.insert(out_.end(), s.begin(), s.end());
}

void PickleWriter::int_tuple(const std::vector<int64_t>& v) {
    if (v.size() > 3)
        mark();
    for (int64_t x : v)
        integer(x);
    if (v.empty())
        op(')');
    else if (v.size() <= 3)
        op(char(0x84 + v.size()));
    else
        op('t');
}

}  // namespace tg::io_detail
