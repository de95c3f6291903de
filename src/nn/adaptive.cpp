#include "tapegrad/nn/adaptive.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "tapegrad/nn/sequential.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

AdaptiveLogSoftmaxWithLossImpl::AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions o)
    : Module("AdaptiveLogSoftmaxWithLoss"), options(std::move(o)) {
    const auto& c = options.cutoffs();
    if (c.empty())
        throw value_error(
            "AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of length "
            "larger than 0");
    if (!std::is_sorted(c.begin(), c.end()) || c.front() <= 0 ||
        c.back() > options.n_classes() - 1 ||
        std::set<int64_t>(c.begin(), c.end()).size() != c.size())
        throw value_error(
            "AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, "
            "positive integers sorted in an increasing order, where each value is "
            "between 1 and n_classes-1 (n_classes " +
            std::to_string(options.n_classes()) + ")");
    if (options.div_value() == 0)
        throw value_error("AdaptiveLogSoftmaxWithLoss: div_value should not be equal to 0");
    cutoffs = c;
    cutoffs.push_back(options.n_classes());
    shortlist_size = cutoffs[0];
    n_clusters = int64_t(cutoffs.size()) - 1;
    head_size = shortlist_size + n_clusters;
    // the draws in LibTorch's order: the head, then each tail's two Linears
    head = register_module(
        "head", Linear(LinearOptions(options.in_features(), head_size).bias(options.head_bias())));
    tail = register_module("tail", ModuleList());
    for (int64_t i = 0; i < n_clusters; ++i) {
        const auto hsz = static_cast<int64_t>(std::floor(
            double(options.in_features()) / std::pow(options.div_value(), double(i + 1))));
        if (hsz <= 0)
            throw value_error("AdaptiveLogSoftmaxWithLoss: in_features " +
                              std::to_string(options.in_features()) + " / div_value^" +
                              std::to_string(i + 1) + " leaves cluster " + std::to_string(i) +
                              " a hidden size of 0");
        const int64_t osz = cutoffs[size_t(i + 1)] - cutoffs[size_t(i)];
        tail->push_back(Sequential(Linear(LinearOptions(options.in_features(), hsz).bias(false)),
                                   Linear(LinearOptions(hsz, osz).bias(false))));
    }
}

void AdaptiveLogSoftmaxWithLossImpl::reset_parameters() {
    head->reset_parameters();
    for (const auto& projection : *tail)
        for (const auto& linear : projection->children())
            linear->as<Linear>()->reset_parameters();
}

ASMoutput AdaptiveLogSoftmaxWithLossImpl::forward(const Tensor& input_, const Tensor& target_) {
    if (!input_.defined() || !target_.defined())
        throw value_error(label() + ": undefined input or target");
    const int64_t td = target_.dim();
    if (td > 1)
        throw shape_error(label() + ": 0D or 1D target tensor expected, got " +
                          shape_str(target_.sizes()));
    if (input_.dim() != td + 1)
        throw shape_error(label() + ": a " + std::to_string(td) + "D target tensor expects " +
                          std::to_string(td + 1) + "D input tensors, but found input " +
                          shape_str(input_.sizes()));
    if (target_.dtype() != kInt64)
        throw dtype_error(label() + ": target must be int64 class indices, got " +
                          dtype_name(target_.dtype()));
    const bool batched = td > 0;
    const Tensor input = batched ? input_ : input_.unsqueeze(0);
    const Tensor target = batched ? target_ : target_.unsqueeze(0);
    const int64_t B = target.size(0);
    if (input.size(0) != B)
        throw shape_error(label() + ": input " + shape_str(input.sizes()) + " and target " +
                          shape_str(target.sizes()) + " differ in the batch size");
    const std::vector<int64_t> tv = target.to(kCPU).contiguous().to_vector<int64_t>();
    for (int64_t y : tv)
        if (y < 0 || y >= options.n_classes()) {
            const auto [lo, hi] = std::minmax_element(tv.begin(), tv.end());
            throw value_error(label() + ": Target values should be in [0, " +
                              std::to_string(options.n_classes() - 1) + "], but values in range [" +
                              std::to_string(*lo) + ", " + std::to_string(*hi) + "] were found");
        }
    std::vector<int64_t> gather_inds(static_cast<size_t>(B));
    Tensor output = zeros({B}, input.options());
    for (int64_t i = 0; i <= n_clusters; ++i) {
        const int64_t low = i == 0 ? 0 : cutoffs[size_t(i - 1)], high = cutoffs[size_t(i)];
        std::vector<int64_t> rows, relative;
        for (int64_t b = 0; b < B; ++b)
            if (tv[size_t(b)] >= low && tv[size_t(b)] < high) {
                rows.push_back(b);
                relative.push_back(tv[size_t(b)] - low);
                gather_inds[size_t(b)] = i == 0 ? tv[size_t(b)] : shortlist_size + i - 1;
            }
        if (i == 0 || rows.empty())
            continue;
        const Tensor idx = tensor(rows).to(input.device());
        const Tensor cluster_output =
            tail->at<SequentialImpl>(size_t(i - 1)).forward(index_select(input, 0, idx));
        const Tensor local = gather(log_softmax(cluster_output, 1), 1,
                                    tensor(relative).to(input.device()).unsqueeze(1))
                                 .squeeze(1);
        output = output + index_add(local, {B}, 0, idx);
    }
    const Tensor head_logprob = log_softmax(head(input), 1);
    output =
        output +
        gather(head_logprob, 1, tensor(gather_inds).to(input.device()).unsqueeze(1)).squeeze(1);
    double loss;
    {
        NoGradGuard g;
        loss = (-output).mean().item<double>();
    }
    return ASMoutput(batched ? output : output.squeeze(0), loss);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::_get_full_log_prob(const Tensor& input,
                                                          const Tensor& head_output) {
    const Tensor head_logprob = log_softmax(head_output, 1);
    std::vector<Tensor> parts{narrow(head_logprob, 1, 0, shortlist_size)};
    for (int64_t i = 0; i < n_clusters; ++i) {
        const Tensor cluster_logprob =
            log_softmax(tail->at<SequentialImpl>(size_t(i)).forward(input), 1);
        parts.push_back(cluster_logprob + narrow(head_logprob, 1, shortlist_size + i, 1));
    }
    return cat(parts, 1);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::log_prob(const Tensor& input) {
    return _get_full_log_prob(input, head(input));
}

Tensor AdaptiveLogSoftmaxWithLossImpl::predict(const Tensor& input) {
    const Tensor head_output = head(input);
    Tensor output = argmax(head_output, 1);
    std::vector<int64_t> out = output.to(kCPU).contiguous().to_vector<int64_t>(), rows;
    for (size_t b = 0; b < out.size(); ++b)
        if (out[b] >= shortlist_size)
            rows.push_back(int64_t(b));
    if (rows.empty())
        return output;
    if (rows.size() == out.size())
        return argmax(_get_full_log_prob(input, head_output), 1);
    const Tensor idx = tensor(rows).to(input.device());
    const std::vector<int64_t> best =
        argmax(_get_full_log_prob(index_select(input, 0, idx), index_select(head_output, 0, idx)),
               1)
            .to(kCPU)
            .contiguous()
            .to_vector<int64_t>();
    for (size_t k = 0; k < rows.size(); ++k)
        out[size_t(rows[k])] = best[k];
    return tensor(out).to(input.device());
}

void AdaptiveLogSoftmaxWithLossImpl::pretty_print(std::ostream& os) const {
    os << "AdaptiveLogSoftmaxWithLoss";
}

}  // namespace tg::nn
