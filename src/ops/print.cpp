// Printing a tensor: shape, dtype, device and values, like LibTorch.
#include <functional>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "tapegrad/autograd.hpp"

namespace tg {

// ---- printing
std::ostream& operator<<(std::ostream& os, const Tensor& t) {
    if (!t.defined())
        return os << "[ undefined tensor ]";
    const std::vector<double> v = t.to_vector<double>();
    const Shape& s = t.sizes();
    std::ostringstream out;
    out << std::setprecision(6);
    std::vector<int64_t> st = contiguous_strides(s);
    // prints dim d starting at flat index base, eliding the middle of long dims
    std::function<void(size_t, int64_t)> rec = [&](size_t d, int64_t base) {
        if (d == s.size()) {
            out << v[size_t(base)];
            return;
        }
        out << "[";
        for (int64_t i = 0; i < s[d]; ++i) {
            if (s[d] > 8 && i == 3) {
                out << "..., ";
                i = s[d] - 3;
            }
            rec(d + 1, base + i * st[d]);
            if (i + 1 < s[d])
                out << (d + 1 == s.size() ? ", " : ",\n ");
        }
        out << "]";
    };
    if (t.numel() > 0)
        rec(0, 0);
    os << out.str() << "\n[ " << dtype_name(t.dtype()) << " " << shape_str(s) << " on "
       << t.device().str();
    if (t.grad_fn())
        os << ", grad_fn=" << t.grad_fn()->name();
    else if (t.requires_grad())
        os << ", requires_grad";
    return os << " ]";
}

}  // namespace tg
