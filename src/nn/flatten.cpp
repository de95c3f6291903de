#include "tapegrad/nn/flatten.hpp"

#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

Tensor FlattenImpl::forward(const Tensor& x) {
    return flatten(x, options.start_dim(), options.end_dim());
}

void FlattenImpl::pretty_print(std::ostream& os) const {
    os << "Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

namespace {
std::string sizes_str(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}
}  // namespace

UnflattenImpl::UnflattenImpl(UnflattenOptions o) : Module("Unflatten"), options(std::move(o)) {}

Tensor UnflattenImpl::forward(const Tensor& x) {
    if (!x.defined())
        throw value_error(label() + ": undefined input");
    const int64_t d = wrap_dim(options.dim(), x.dim(), "Unflatten");
    const std::vector<int64_t>& sizes = options.sizes();
    // checked here, not at construction: LibTorch's options are read by forward only
    if (sizes.empty())
        throw value_error(label() + ": sizes must be non-empty");
    int64_t inferred = 0;
    for (int64_t s : sizes) {
        if (s < -1)
            throw value_error(label() + ": size " + std::to_string(s) + " in " + sizes_str(sizes) +
                              " is invalid");
        inferred += s == -1;
    }
    if (inferred > 1)
        throw value_error(label() + ": sizes " + sizes_str(sizes) +
                          ": only one dimension can be inferred");
    int64_t known = 1;
    size_t unknown = sizes.size();
    for (size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i] == -1)
            unknown = i;
        else
            known *= sizes[i];
    const int64_t n = x.size(d);
    const bool fits = unknown == sizes.size() ? known == n : (known != 0 && n % known == 0);
    if (!fits)
        throw shape_error(label() + ": sizes " + sizes_str(sizes) +
                          " don't multiply up to the size of dim " + std::to_string(d) + " (" +
                          std::to_string(n) + ") of the input " + shape_str(x.sizes()));
    Shape shape(x.sizes().begin(), x.sizes().begin() + d);
    for (size_t i = 0; i < sizes.size(); ++i)
        shape.push_back(i == unknown ? n / known : sizes[i]);
    shape.insert(shape.end(), x.sizes().begin() + d + 1, x.sizes().end());
    return x.reshape(shape);
}

void UnflattenImpl::pretty_print(std::ostream& os) const {
    os << "Unflatten(dim=" << options.dim() << ", unflattened_size={";
    for (size_t i = 0; i < options.sizes().size(); ++i)
        os << (i ? ", " : "") << options.sizes()[i];
    os << "})";
}

}  // namespace tg::nn
