#pragma once
/// CosineSimilarity and PairwiseDistance, and F::cosine_similarity, F::pairwise_distance and
/// F::pdist, as LibTorch's (distance.h): the ops of tapegrad/distance_ops.hpp with their options.
///     tg::nn::CosineSimilarity cos(tg::nn::CosineSimilarityOptions().dim(1).eps(1e-8));
///     tg::Tensor s = cos(a, b);   // a, b [N, D] -> [N]
#include <cstdint>
#include <ostream>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// LibTorch's CosineSimilarityOptions: dim (1), eps (1e-8).
struct CosineSimilarityOptions {
    TG_ARG(int64_t, dim) = 1;
    TG_ARG(double, eps) = 1e-8;
};
/// LibTorch's PairwiseDistanceOptions: p (2), eps (1e-6), keepdim (false).
struct PairwiseDistanceOptions {
    TG_ARG(double, p) = 2.0;
    TG_ARG(double, eps) = 1e-6;
    TG_ARG(bool, keepdim) = false;
};

class CosineSimilarityImpl : public Module {
public:
    using Options = CosineSimilarityOptions;
    explicit CosineSimilarityImpl(const CosineSimilarityOptions& o = {})
        : Module("CosineSimilarity"), options(o) {}
    /// tg::cosine_similarity(x1, x2, dim, eps).
    Tensor forward(const Tensor& x1, const Tensor& x2);
    using Module::forward;
    void pretty_print(std::ostream& os) const override;
    CosineSimilarityOptions options;  // public, as LibTorch's
};
TG_MODULE(CosineSimilarity);

class PairwiseDistanceImpl : public Module {
public:
    using Options = PairwiseDistanceOptions;
    explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& o = {})
        : Module("PairwiseDistance"), options(o) {}
    /// tg::pairwise_distance(x1, x2, p, eps, keepdim).
    Tensor forward(const Tensor& x1, const Tensor& x2);
    using Module::forward;
    void pretty_print(std::ostream& os) const override;
    PairwiseDistanceOptions options;  // public, as LibTorch's
};
TG_MODULE(PairwiseDistance);

namespace functional {
using CosineSimilarityFuncOptions = CosineSimilarityOptions;
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2,
                         const CosineSimilarityFuncOptions& options = {});
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2,
                         const PairwiseDistanceFuncOptions& options = {});
/// tg::pdist(input, p), as LibTorch's F::pdist (whose p is a plain argument).
Tensor pdist(const Tensor& input, double p = 2.0);
}  // namespace functional

}  // namespace tg::nn

#pragma GCC visibility pop
