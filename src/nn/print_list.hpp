#pragma once
// How the modules' pretty_print writes a list of sizes: [1, 2, 2, 1], as LibTorch does.
#include <cstdint>
#include <ostream>
#include <vector>

namespace tg::nn::detail {

inline void print_list(std::ostream& os, const std::vector<int64_t>& v) {
    os << "[";
    for (size_t i = 0; i < v.size(); ++i)
        os << (i ? ", " : "") << v[i];
    os << "]";
}

}  // namespace tg::nn::detail
