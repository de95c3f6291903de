// Printing a tensor. operator<< and print() lay it out as LibTorch 1.13 does (so output and
// tests written against LibTorch read the same); repr() is tapegrad's short form, with the
// middle of long dims elided and the autograd state shown.
#include <cmath>
#include <functional>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <vector>

#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

/// LibTorch's type name: "CPUFloatType", "CUDALongType", "OpenCLBoolType", "CPUByteType".
std::string type_string(const Tensor& t) {
    const Device d = t.device();
    const char* dev = d.is_cpu() ? "CPU" : d.type == DeviceType::CUDA ? "CUDA" : "OpenCL";
    return std::string(dev) + dtype_torch_name(t.dtype()) + "Type";
}

/// How a block of values is written: a field width, a divisor printed once as "scale *", and
/// the stream's notation. Note [LibTorch's number format]: integers print bare unless their
/// magnitude reaches 10 digits; other values get 4 decimals, fixed when the exponents of the
/// smallest and largest magnitudes differ by at most 4 (with a power-of-ten scale factor when
/// the largest is below 0.1 or above 99999), scientific otherwise. Non-finite values are
/// skipped when choosing. (LibTorch compares the largest magnitude against signed values, so a
/// negative number never sets it: kept, so the layouts match.)
struct Format {
    double scale = 1;
    int width = 0;
    enum { Default, Fixed, Scientific } notation = Default;

    explicit Format(const std::vector<double>& v) {
        if (v.empty()) {
            width = 0;
            return;
        }
        bool ints = true;
        for (double z : v)
            if (std::isfinite(z) && z != std::ceil(z))
                ints = false;
        size_t first = 0;
        while (first < v.size() && !std::isfinite(v[first]))
            ++first;
        double lo = 1, hi = 1;
        if (first < v.size()) {
            lo = hi = std::fabs(v[first]);
            for (size_t i = first; i < v.size(); ++i) {
                if (!std::isfinite(v[i]))
                    continue;
                lo = std::min(lo, std::fabs(v[i]));
                if (v[i] > hi)
                    hi = std::fabs(v[i]);
            }
            lo = lo != 0 ? std::floor(std::log10(lo)) + 1 : 1;
            hi = hi != 0 ? std::floor(std::log10(hi)) + 1 : 1;
        }
        if (ints) {
            if (hi > 9) {
                width = 11, notation = Scientific;
            } else {
                width = int(hi) + 1;
            }
        } else if (hi - lo > 4) {
            width = std::fabs(hi) > 99 || std::fabs(lo) > 99 ? 12 : 11;
            notation = Scientific;
        } else if (hi > 5 || hi < 0) {
            width = 7, scale = std::pow(10, hi - 1), notation = Fixed;
        } else {
            width = hi == 0 ? 7 : int(hi) + 6;
            notation = Fixed;
        }
    }
    void apply(std::ostream& os) const {
        if (notation == Fixed)
            os << std::fixed << std::setprecision(4);
        else if (notation == Scientific)
            os << std::scientific << std::setprecision(4);
    }
    void print_scale(std::ostream& os) const {
        std::ostringstream s;
        s << scale;
        os << s.str() << " *\n";
    }
};

void indent(std::ostream& os, int n) {
    for (int i = 0; i < n; ++i)
        os << ' ';
}

/// A [rows, cols] block (row-major values) in columns that fit `linesize`.
void print_matrix(std::ostream& os, const std::vector<double>& v, int64_t rows, int64_t cols,
                  int64_t linesize, int ind) {
    const Format f(v);
    f.apply(os);
    indent(os, ind);
    const int64_t per_line = std::max<int64_t>(1, (linesize - ind) / (f.width + 1));
    for (int64_t first = 0; first < cols; first += per_line) {
        const int64_t last = std::min(first + per_line, cols) - 1;
        if (per_line < cols) {
            if (first != 0)
                os << "\n";
            os << "Columns " << first + 1 << " to " << last + 1;
            indent(os, ind);
        }
        if (f.scale != 1) {
            f.print_scale(os);
            indent(os, ind);
        }
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t c = first; c <= last; ++c) {
                os << std::setw(f.width) << v[size_t(r * cols + c)] / f.scale;
                if (c != last) {
                    os << ' ';
                    continue;
                }
                os << "\n";
                if (r != rows - 1) {
                    indent(os, ind);
                    if (f.scale != 1)
                        os << ' ';
                }
            }
        }
    }
}

}  // namespace

std::ostream& print(std::ostream& os, const Tensor& t, int64_t linesize) {
    if (!t.defined())
        return os << "[ Tensor (undefined) ]";
    std::ostringstream out;  // the caller's stream keeps its own format flags
    const std::vector<double> v = t.to_vector<double>();
    const Shape& s = t.sizes();
    const std::string type = type_string(t);
    if (s.empty()) {
        out << v[0] << "\n[ " << type << "{}";
    } else if (s.size() == 1) {
        if (!v.empty()) {
            const Format f(v);
            if (f.scale != 1)
                f.print_scale(out);
            f.apply(out);
            for (double z : v)
                out << std::setw(f.width) << z / f.scale << "\n";
        }
        out << "[ " << type << "{" << s[0] << "}";
    } else {
        if (!v.empty() && s.size() == 2) {
            print_matrix(out, v, s[0], s[1], linesize, 0);
        } else if (!v.empty()) {
            // one [rows, cols] slice per index of the leading dims, the first dim fastest, as
            // LibTorch walks them
            const int64_t rows = s[s.size() - 2], cols = s.back(), lead = int64_t(s.size()) - 2;
            std::vector<int64_t> at(size_t(lead), 0);
            const Shape st = contiguous_strides(s);
            for (bool first = true;; first = false) {
                if (!first) {
                    int64_t k = 0;
                    while (k < lead && ++at[size_t(k)] == s[size_t(k)])
                        at[size_t(k++)] = 0;
                    if (k == lead)
                        break;
                    out << "\n";
                }
                out << "(";
                int64_t base = 0;
                for (int64_t k = 0; k < lead; ++k) {
                    out << at[size_t(k)] + 1 << ",";
                    base += at[size_t(k)] * st[size_t(k)];
                }
                out << ".,.) = \n";
                std::ostringstream block;
                print_matrix(block,
                             std::vector<double>(v.begin() + base, v.begin() + base + rows * cols),
                             rows, cols, linesize, 1);
                out << block.str();
            }
        }
        out << "[ " << type << "{";
        for (size_t k = 0; k < s.size(); ++k)
            out << (k ? "," : "") << s[k];
        out << "}";
    }
    out << " ]";
    return os << out.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
    return print(os, t, 80);
}

std::string repr(const Tensor& t) {
    if (!t.defined())
        return "[ undefined tensor ]";
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
    out << "\n[ " << dtype_name(t.dtype()) << " " << shape_str(s) << " on " << t.device().str();
    if (t.grad_fn())
        out << ", grad_fn=" << t.grad_fn()->name();
    else if (t.requires_grad())
        out << ", requires_grad";
    out << " ]";
    return out.str();
}

}  // namespace tg
