#include "tapegrad/nn/embedding.hpp"

#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/functional.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& opts) : Module("Embedding"), options(opts) {
    const int64_t n = options.num_embeddings(), d = options.embedding_dim();
    if (n <= 0 || d <= 0)
        throw shape_error("Embedding(" + std::to_string(n) + ", " + std::to_string(d) +
                          "): sizes must be positive");
    if (const auto& p = options.padding_idx()) {
        if (*p < -n || *p >= n)
            throw value_error("Embedding(" + std::to_string(n) + ", " + std::to_string(d) +
                              "): padding_idx " + std::to_string(*p) + " is not within [" +
                              std::to_string(-n) + ", " + std::to_string(n) + ")");
        options.padding_idx(*p < 0 ? *p + n : *p);
    }
    weight = register_parameter("weight", empty({n, d}));
    reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
    init::normal_(weight);
    if (const auto& p = options.padding_idx()) {
        NoGradGuard guard;
        weight.narrow(0, *p, 1).zero_();
    }
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
    if (!indices.defined())
        throw value_error(label() + ": undefined indices");
    if (indices.dtype() != kInt64)
        throw dtype_error(label() + ": indices must be int64, got " + dtype_name(indices.dtype()) +
                          " " + shape_str(indices.sizes()));
    return embedding(weight, indices, options.padding_idx().value_or(-1));
}

void EmbeddingImpl::pretty_print(std::ostream& os) const {
    os << "Embedding(num_embeddings=" << options.num_embeddings()
       << ", embedding_dim=" << options.embedding_dim();
    if (options.padding_idx())
        os << ", padding_idx=" << *options.padding_idx();
    os << ")";
}

namespace functional {

Tensor embedding(const Tensor& indices, const Tensor& weight, const EmbeddingFuncOptions& o) {
    int64_t padding_idx = -1;  // ATen's "none"
    if (const auto& p = o.padding_idx()) {
        const int64_t V = weight.defined() && weight.dim() == 2 ? weight.size(0) : 0;
        if (*p < -V || *p >= V)
            throw value_error("F::embedding: padding_idx " + std::to_string(*p) +
                              " is not within [" + std::to_string(-V) + ", " + std::to_string(V) +
                              ") for weight " +
                              (weight.defined() ? shape_str(weight.sizes()) : "undefined"));
        padding_idx = *p < 0 ? *p + V : *p;
    }
    return tg::embedding(weight, indices, padding_idx, o.scale_grad_by_freq(), o.sparse());
}

}  // namespace functional

}  // namespace tg::nn
