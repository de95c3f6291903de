#include "tapegrad/nn/distance.hpp"

#include "tapegrad/ops.hpp"

namespace tg::nn {

Tensor CosineSimilarityImpl::forward(const Tensor& x1, const Tensor& x2) {
    return cosine_similarity(x1, x2, options.dim(), options.eps());
}

void CosineSimilarityImpl::pretty_print(std::ostream& os) const {
    os << "CosineSimilarity(dim=" << options.dim() << ", eps=" << options.eps() << ")";
}

Tensor PairwiseDistanceImpl::forward(const Tensor& x1, const Tensor& x2) {
    return pairwise_distance(x1, x2, options.p(), options.eps(), options.keepdim());
}

void PairwiseDistanceImpl::pretty_print(std::ostream& os) const {
    os << "PairwiseDistance(p=" << options.p() << ", eps=" << options.eps()
       << ", keepdim=" << (options.keepdim() ? "true" : "false") << ")";
}

namespace functional {
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2,
                         const CosineSimilarityFuncOptions& options) {
    return tg::cosine_similarity(x1, x2, options.dim(), options.eps());
}
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2,
                         const PairwiseDistanceFuncOptions& options) {
    return tg::pairwise_distance(x1, x2, options.p(), options.eps(), options.keepdim());
}
Tensor pdist(const Tensor& input, double p) {
    return tg::pdist(input, p);
}
}  // namespace functional

}  // namespace tg::nn
