#pragma once
/// Loss modules: forward(input, target) over the loss ops of ops.hpp, with a Reduction
/// (Mean by default, Sum, or None). Call them through the holder: `loss_fn(logits, labels)`.
#include <ostream>

#include "tapegrad/nn/module.hpp"
#include "tapegrad/ops.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// Shared by the loss modules: the reduction and its printing.
class LossImpl : public Module {
public:
    LossImpl(std::string name, Reduction r) : Module(std::move(name)), reduction_(r) {}
    using Module::forward;  // losses take (input, target); forward(x) throws
    Reduction reduction() const { return reduction_; }
    void pretty_print(std::ostream& os) const override;

protected:
    Reduction reduction_;
};

/// mean((x - y)²)
class MSELossImpl : public LossImpl {
public:
    explicit MSELossImpl(Reduction r = Reduction::Mean) : LossImpl("MSELoss", r) {}
    Tensor forward(const Tensor& input, const Tensor& target);
};
TG_MODULE(MSELoss);

/// mean(|x - y|)
class L1LossImpl : public LossImpl {
public:
    explicit L1LossImpl(Reduction r = Reduction::Mean) : LossImpl("L1Loss", r) {}
    Tensor forward(const Tensor& input, const Tensor& target);
};
TG_MODULE(L1Loss);

/// nll_loss(log_softmax(logits, 1), labels): logits [N,C], labels [N] int64
class CrossEntropyLossImpl : public LossImpl {
public:
    explicit CrossEntropyLossImpl(Reduction r = Reduction::Mean)
        : LossImpl("CrossEntropyLoss", r) {}
    Tensor forward(const Tensor& logits, const Tensor& labels);
};
TG_MODULE(CrossEntropyLoss);

/// -logp[i, label_i]: logp [N,C] log-probabilities, labels [N] int64
class NLLLossImpl : public LossImpl {
public:
    explicit NLLLossImpl(Reduction r = Reduction::Mean) : LossImpl("NLLLoss", r) {}
    Tensor forward(const Tensor& logp, const Tensor& labels);
};
TG_MODULE(NLLLoss);

/// max(x,0) - x·y + log(1 + e^-|x|): logits x and targets y in [0,1] of the same shape
class BCEWithLogitsLossImpl : public LossImpl {
public:
    explicit BCEWithLogitsLossImpl(Reduction r = Reduction::Mean)
        : LossImpl("BCEWithLogitsLoss", r) {}
    Tensor forward(const Tensor& logits, const Tensor& targets);
};
TG_MODULE(BCEWithLogitsLoss);

}  // namespace tg::nn

#pragma GCC visibility pop
