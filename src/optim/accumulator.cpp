// Accumulator: gradient accumulation with the loss scaled by the global batch size.
#include "tapegrad/optim/accumulator.hpp"

#include <string>

#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"

namespace tg::optim {

Accumulator::Accumulator(Optimizer& optimizer, int64_t global_batch, bool set_to_none)
    : opt_(optimizer), global_(global_batch), set_to_none_(set_to_none) {
    if (global_batch < 1)
        throw value_error("Accumulator: global batch must be >= 1, got " +
                          std::to_string(global_batch));
}

void Accumulator::backward(const Tensor& loss, int64_t micro_batch, Reduction reduction) {
    const std::string who =
        "Accumulator::backward(micro_batch=" + std::to_string(micro_batch) + ")";
    if (micro_batch < 1)
        throw value_error(who + ": micro_batch must be >= 1");
    if (!loss.defined())
        throw value_error(who + ": undefined loss");
    if (seen_ + micro_batch > global_)
        throw value_error(who + ": " + std::to_string(seen_) + " of " + std::to_string(global_) +
                          " samples already seen; this micro-batch would bring the step to " +
                          std::to_string(seen_ + micro_batch) + ", more than the global batch " +
                          "(call step() after each " + std::to_string(global_) + " samples)");
    Tensor root = loss;
    double scale = 1.0;
    switch (reduction) {
        case Reduction::Mean:
        case Reduction::Sum:
            if (loss.numel() != 1)
                throw shape_error(
                    who + ": a " + std::string(reduction == Reduction::Mean ? "mean" : "sum") +
                    "-reduced loss must be a scalar, got shape " + shape_str(loss.sizes()));
            scale = reduction == Reduction::Mean ? double(micro_batch) / double(global_) : 1.0;
            break;
        case Reduction::None:
            if (loss.dim() == 0 || loss.size(0) != micro_batch)
                throw shape_error(
                    who + ": an unreduced loss must have one entry per sample (first dim " +
                    std::to_string(micro_batch) + "), got shape " + shape_str(loss.sizes()));
            root = loss.sum();  // the global batch's mean over all entries, as Reduction::Mean
            scale = double(micro_batch) / (double(global_) * double(loss.numel()));
            break;
    }
    if (!root.requires_grad())
        throw autograd_error(who +
                             ": the loss does not require grad (computed under NoGradGuard?)");
    // the scale enters as the root gradient: no extra node, the graph is freed by backward
    autograd::backward({root}, {full(root.sizes(), scale, root.options())});
    seen_ += micro_batch;
}

void Accumulator::step() {
    if (seen_ != global_)
        throw error("Accumulator::step: " + std::to_string(seen_) + " of " +
                    std::to_string(global_) + " samples seen; backpropagate the remaining " +
                    std::to_string(global_ - seen_) + " before stepping");
    opt_.step();
    opt_.zero_grad(set_to_none_);
    seen_ = 0;
    ++steps_;
}

}  // namespace tg::optim
