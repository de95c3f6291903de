#pragma once
/// Flatten: joins dims start..end into one ([N,1,28,28] -> [N,784] with the defaults).
#include <cstdint>
#include <ostream>

#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class FlattenImpl : public Module {
public:
    explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1)
        : Module("Flatten"), start_(start_dim), end_(end_dim) {}
    /// tg::flatten(x, start_dim, end_dim).
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;

private:
    int64_t start_, end_;
};
TG_MODULE(Flatten);

}  // namespace tg::nn

#pragma GCC visibility pop
