#pragma once
/// The spatial arguments of convolutions and pools (ops.hpp and the nn options use them):
/// IntArg, one value per spatial dim, given as LibTorch gives an ExpandingArray, and the
/// padding modes a convolution takes by name: "same" / "valid", or tg::kSame / tg::kValid.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/array_ref.hpp"
#include "tapegrad/expanding_array.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// A spatial argument as LibTorch's ExpandingArray: one value for every spatial dim (3), one
/// per dim ({3, 5}, a vector, an IntArrayRef or an ExpandingArray<D>), or none ({}: the op's
/// default, e.g. stride = kernel_size for pooling).
class IntArg {
public:
    IntArg(int64_t v);                                // NOLINT: implicit, as LibTorch's
    IntArg(std::initializer_list<int64_t> v);         // NOLINT
    IntArg(std::vector<int64_t> v);                   // NOLINT
    IntArg(ArrayRef<int64_t> v) : IntArg(v.vec()) {}  // NOLINT
    template <size_t D>
    IntArg(const ExpandingArray<D, int64_t>& v)  // NOLINT
        : IntArg(std::vector<int64_t>((*v).begin(), (*v).end())) {}
    const std::vector<int64_t>& values() const { return v_; }

private:
    std::vector<int64_t> v_;
};

/// LibTorch's padding-mode tags for convolutions (torch::kSame, torch::kValid).
namespace enumtype {
struct kSame {};
struct kValid {};
}  // namespace enumtype
inline constexpr enumtype::kSame kSame{};
inline constexpr enumtype::kValid kValid{};

/// A convolution's padding by name: "same" or "valid" (LibTorch's string forms), or kSame /
/// kValid.
class PaddingMode {
public:
    PaddingMode(const char* name) : name_(name ? name : "") {}  // NOLINT: implicit
    PaddingMode(std::string name) : name_(std::move(name)) {}   // NOLINT
    PaddingMode(enumtype::kSame) : name_("same") {}             // NOLINT
    PaddingMode(enumtype::kValid) : name_("valid") {}           // NOLINT
    const std::string& name() const { return name_; }

private:
    std::string name_;
};

}  // namespace tg

#pragma GCC visibility pop
