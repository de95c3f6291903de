#include <algorithm>
#include <string>
#include <vector>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/embedding.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

EmbeddingBagMode::EmbeddingBagMode(Reduction r) : mode_(r == kSum ? 0 : 1) {
    if (r == kNone)
        throw value_error("EmbeddingBagMode: kNone is not a mode (kSum, kMean or kMax)");
}

const char* EmbeddingBagMode::name() const {
    return mode_ == 0 ? "kSum" : mode_ == 1 ? "kMean" : "kMax";
}

EmbeddingBagImpl::EmbeddingBagImpl(const EmbeddingBagOptions& opts)
    : Module("EmbeddingBag"), options(opts) {
    const int64_t n = options.num_embeddings(), d = options.embedding_dim();
    const std::string where = "EmbeddingBag(" + std::to_string(n) + ", " + std::to_string(d) + ")";
    if (n <= 0 || d <= 0)
        throw value_error(where + ": sizes must be positive");
    if (const auto& p = options.padding_idx()) {
        if (*p < -n || *p >= n)
            throw value_error(where + ": padding_idx " + std::to_string(*p) + " is not within [" +
                              std::to_string(-n) + ", " + std::to_string(n) + ")");
        options.padding_idx(*p < 0 ? *p + n : *p);
    }
    if (options._weight().defined()) {
        if (options._weight().sizes() != Shape{n, d})
            throw value_error(where + ": _weight " + shape_str(options._weight().sizes()) +
                              " does not match num_embeddings and embedding_dim");
        weight = register_parameter("weight", options._weight());
    } else {
        weight = register_parameter("weight", empty({n, d}));
        reset_parameters();
    }
}

void EmbeddingBagImpl::reset_parameters() {
    init::normal_(weight);
}

Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets,
                                 const Tensor& per_sample_weights) {
    return functional::embedding_bag(input, weight,
                                     functional::EmbeddingBagFuncOptions()
                                         .offsets(offsets)
                                         .max_norm(options.max_norm())
                                         .norm_type(options.norm_type())
                                         .scale_grad_by_freq(options.scale_grad_by_freq())
                                         .mode(options.mode())
                                         .sparse(options.sparse())
                                         .per_sample_weights(per_sample_weights)
                                         .include_last_offset(options.include_last_offset())
                                         .padding_idx(options.padding_idx()));
}

void EmbeddingBagImpl::pretty_print(std::ostream& os) const {
    os << "EmbeddingBag(num_embeddings=" << options.num_embeddings()
       << ", embedding_dim=" << options.embedding_dim();
    if (options.max_norm())
        os << ", max_norm=" << *options.max_norm();
    if (options.norm_type() != 2)
        os << ", norm_type=" << options.norm_type();
    if (options.scale_grad_by_freq())
        os << ", scale_grad_by_freq=true";
    if (options.sparse())
        os << ", sparse=true";
    if (options.mode() != EmbeddingBagMode(kMean))
        os << ", mode=" << options.mode().name();
    if (options.include_last_offset())
        os << ", include_last_offset=true";
    if (options.padding_idx())
        os << ", padding_idx=" << *options.padding_idx();
    os << ")";
}

namespace functional {

namespace {
/// LibTorch's embedding_renorm_: each row of weight that indices read, once, scaled in place by
/// max_norm / (norm + 1e-7) where its norm_type-norm exceeds max_norm.
void renorm_rows(const Tensor& weight, const Tensor& indices, double max_norm, double norm_type) {
    NoGradGuard guard;
    std::vector<int64_t> rows =
        indices.to(Device::cpu()).to(kInt64).contiguous().to_vector<int64_t>();
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    const int64_t V = weight.size(0);
    for (int64_t r : rows) {
        if (r < 0 || r >= V)
            throw shape_error("F::embedding_bag: index " + std::to_string(r) +
                              " is out of range for " + std::to_string(V) + " embeddings");
        Tensor row = weight.narrow(0, r, 1);
        const double n = norm(row, norm_type).item<double>();
        if (n > max_norm)
            row.mul_(max_norm / (n + 1e-7));
    }
}
}  // namespace

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o) {
    if (!input.defined() || !weight.defined())
        throw value_error("F::embedding_bag: undefined input or weight");
    Tensor in = input, offsets = o.offsets(), psw = o.per_sample_weights();
    if (in.dim() == 2) {
        if (offsets.defined())
            throw value_error("F::embedding_bag: input " + shape_str(in.sizes()) +
                              " is 2-D, bags of fixed length: offsets must be undefined");
        std::vector<int64_t> starts(size_t(in.size(0)));
        for (size_t b = 0; b < starts.size(); ++b)
            starts[b] = int64_t(b) * in.size(1);
        offsets = tensor(starts).to(in.device());
        in = in.reshape({in.numel()});
        if (psw.defined())
            psw = psw.reshape({psw.numel()});
    } else if (in.dim() == 1) {
        if (!offsets.defined())
            throw value_error("F::embedding_bag: a 1-D input needs offsets");
        if (offsets.dim() != 1)
            throw shape_error("F::embedding_bag: offsets " + shape_str(offsets.sizes()) +
                              " must be 1-D");
    } else {
        throw shape_error("F::embedding_bag: input " + shape_str(in.sizes()) +
                          " must be 1-D (with offsets) or 2-D");
    }
    if (o.max_norm())
        renorm_rows(weight, in, *o.max_norm(), o.norm_type());
    return tg::embedding_bag(weight, in, offsets, o.scale_grad_by_freq(), o.mode().value(),
                             o.sparse(), psw, o.include_last_offset(), o.padding_idx());
}

}  // namespace functional

}  // namespace tg::nn
