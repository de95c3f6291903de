#pragma once
/// AdaptiveLogSoftmaxWithLoss, LibTorch 1.13's (Grave et al., "Efficient softmax approximation
/// for GPUs"): a head over the shortlist classes [0, cutoffs[0]) and one entry per cluster, and
/// per cluster i a tail Linear(in, in / div_value^(i+1)) -> Linear(.., cluster size), both
/// without bias. Its parameters are drawn as LibTorch's (head, then each tail's two Linears), so
/// after tg::manual_seed(s) they equal LibTorch's.
///     nn::AdaptiveLogSoftmaxWithLoss asm_(nn::AdaptiveLogSoftmaxWithLossOptions(64, 1000,
///                                         {100, 500}).div_value(2.0));
///     nn::ASMoutput out = asm_(hidden, targets);   // out.output [N], out.loss a double
///     out.output.neg().mean().backward();          // the loss to train on (a tensor)
#include <cstdint>
#include <ostream>
#include <vector>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/container.hpp"
#include "tapegrad/nn/linear.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// LibTorch's AdaptiveLogSoftmaxWithLossOptions: in_features, n_classes, cutoffs (sorted,
/// unique, in [1, n_classes - 1]), div_value (4), head_bias (false).
struct AdaptiveLogSoftmaxWithLossOptions {
    AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes,
                                      std::vector<int64_t> cutoffs)
        : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
    TG_ARG(int64_t, in_features);
    TG_ARG(int64_t, n_classes);
    TG_ARG(std::vector<int64_t>, cutoffs);
    TG_ARG(double, div_value) = 4.0;
    TG_ARG(bool, head_bias) = false;
};

/// What forward returns, as LibTorch 1.13's ASMoutput: the log-probability of each sample's
/// target (differentiable) and the mean negative log-likelihood as a number.
struct ASMoutput {
    ASMoutput(Tensor output_, double loss_) : output(std::move(output_)), loss(loss_) {}
    Tensor output;
    double loss;
};

class AdaptiveLogSoftmaxWithLossImpl : public Module {
public:
    using Options = AdaptiveLogSoftmaxWithLossOptions;
    AdaptiveLogSoftmaxWithLossImpl(int64_t in_features, int64_t n_classes,
                                   std::vector<int64_t> cutoffs_)
        : AdaptiveLogSoftmaxWithLossImpl(
              AdaptiveLogSoftmaxWithLossOptions(in_features, n_classes, std::move(cutoffs_))) {}
    /// value_error for cutoffs that are not sorted, unique and in [1, n_classes - 1], for a
    /// div_value of 0 or one that makes a tail's hidden size 0.
    explicit AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options);
    /// input [N, in_features] with target int64 [N] (or [in_features] with a 0-D target).
    ASMoutput forward(const Tensor& input, const Tensor& target);
    /// The log-probabilities of every class [N, n_classes].
    Tensor log_prob(const Tensor& input);
    /// The most likely class of each sample (int64 [N]), computing the clusters only for the
    /// samples whose head prediction is a cluster.
    Tensor predict(const Tensor& input);
    /// log_prob from the head's output.
    Tensor _get_full_log_prob(const Tensor& input, const Tensor& head_output);
    /// Every Linear drawn again, as LibTorch's reset_parameters.
    void reset_parameters();
    void pretty_print(std::ostream& os) const override;

    AdaptiveLogSoftmaxWithLossOptions options;
    std::vector<int64_t> cutoffs;  // options.cutoffs() and n_classes
    int64_t shortlist_size = 0, n_clusters = 0, head_size = 0;
    Linear head{nullptr};
    ModuleList tail{nullptr};
};
TG_MODULE(AdaptiveLogSoftmaxWithLoss);

}  // namespace tg::nn

#pragma GCC visibility pop
