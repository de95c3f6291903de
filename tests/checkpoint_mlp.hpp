#pragma once
/// The tanh MLP with dropout of the checkpoint tests (test_checkpoint.cpp,
/// test_checkpoint_non_reentrant.cpp) and the helpers that run and compare it.
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

namespace ckpt_test {

using tg::Tensor;

struct Mlp {
    std::vector<Tensor> w, b;
    explicit Mlp(int layers, int width = 16) {
        tg::manual_seed(3);
        for (int i = 0; i < layers; ++i) {
            w.push_back(tg::randn({width, width}, tg::kFloat64).mul_(0.3).requires_grad_());
            b.push_back(tg::zeros({width}, tg::kFloat64).requires_grad_());
        }
    }
    Tensor layer(int i, const Tensor& h, double p) const {
        return tg::dropout(tg::tanh(tg::linear(h, w[size_t(i)], b[size_t(i)])), p, true);
    }
    void zero() {
        for (auto& t : w)
            t.set_grad({});
        for (auto& t : b)
            t.set_grad({});
    }
    std::vector<double> grads() const {
        std::vector<double> g;
        for (const auto* v : {&w, &b})
            for (const auto& t : *v) {
                auto x = t.grad().to_vector<double>();
                g.insert(g.end(), x.begin(), x.end());
            }
        return g;
    }
};

/// A second backward pass accumulated into .grad(): every gradient is twice the first's.
inline void check_doubled(const std::vector<double>& once, const std::vector<double>& twice) {
    BOOST_TEST_REQUIRE(twice.size() == once.size());
    for (size_t i = 0; i < once.size(); ++i)
        BOOST_TEST(twice[i] == 2 * once[i], boost::test_tools::tolerance(1e-12));
}

/// Runs the MLP in `segments` segments of `per` layers, checkpointed or not, and backprops.
inline Tensor forward(const Mlp& m, const Tensor& x, int segments, int per, bool ckpt, double p,
                      bool reentrant = true) {
    Tensor h = x;
    for (int s = 0; s < segments; ++s) {
        auto seg = [&m, s, per, p](const std::vector<Tensor>& in) {
            Tensor y = in[0];
            for (int i = 0; i < per; ++i)
                y = m.layer(s * per + i, y, p);
            return y;
        };
        h = ckpt ? tg::checkpoint(seg, {h}, reentrant) : seg({h});
    }
    return (h * h).mean();
}

}  // namespace ckpt_test
