#pragma once
/// Dropout: zeroes elements with probability p in training mode and scales the rest by 1/(1-p);
/// the identity in eval mode. Masks come from the global generator (tg::manual_seed).
#include <ostream>

#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class DropoutImpl : public Module {
public:
    /// Throws value_error unless 0 <= p < 1.
    explicit DropoutImpl(double p = 0.5);
    /// tg::dropout(x, p, is_training()).
    Tensor forward(const Tensor& x) override;
    double p() const { return p_; }
    void pretty_print(std::ostream& os) const override;

private:
    double p_;
};
TG_MODULE(Dropout);

}  // namespace tg::nn

#pragma GCC visibility pop
