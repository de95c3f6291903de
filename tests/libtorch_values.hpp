#pragma once
/// Values printed by scripts/libtorch_reference.cpp (LibTorch 1.13 itself), pasted into a test as
/// a raw string: lines "name: v0 v1 ..." with longer lists wrapped onto lines that start with a
/// space; "none" stands for an undefined tensor (a gradient LibTorch does not produce). And the
/// inputs and the gradient check the script's show_grads() uses, so that a test compares
/// forward values and every input's gradient against LibTorch's in one call.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

namespace tgtest {

class LibTorchValues {
public:
    explicit LibTorchValues(const char* text) {
        std::istringstream in(text);
        std::string line, current;
        while (std::getline(in, line)) {
            if (line.empty())
                continue;
            std::istringstream words(line);
            if (line[0] != ' ') {
                words >> current;
                current.pop_back();  // the colon
                table_[current];
            }
            for (std::string w; words >> w;) {
                if (w == "none")
                    none_[current] = true;
                else
                    table_[current].push_back(std::stod(w));
            }
        }
    }
    /// The values printed under name (a test error if there are none).
    const std::vector<double>& operator()(const std::string& name) const {
        const auto it = table_.find(name);
        BOOST_TEST_REQUIRE((it != table_.end()), "no LibTorch values named " << name);
        return it->second;
    }
    bool has(const std::string& name) const { return table_.count(name) != 0; }
    /// Whether LibTorch printed "none" (an undefined tensor) under name.
    bool none(const std::string& name) const { return none_.count(name) != 0; }

private:
    std::map<std::string, std::vector<double>> table_;
    std::map<std::string, bool> none_;
};

/// The script's wave37(shape, phase): sin(0.37·i + phase) in float64, reshaped.
inline tg::Tensor wave37(const tg::Shape& shape, double phase = 0) {
    return (tg::arange(tg::numel_of(shape), tg::kFloat64) * 0.37 + phase).sin().reshape(shape);
}

/// The script's show_grads(): f(inputs) and the gradient of sum(f(inputs) * wave37(y, 1)) for each
/// input, compared with LibTorch's values `name`, `name_d0`, ... within tol (absolute and
/// relative). A gradient LibTorch leaves undefined must be undefined or zero here.
inline void check_grads(const LibTorchValues& ref, const std::string& name,
                        std::vector<tg::Tensor> in,
                        const std::function<tg::Tensor(const std::vector<tg::Tensor>&)>& f,
                        double tol = 1e-12) {
    BOOST_TEST_CONTEXT(name) {
        for (auto& t : in)
            t = t.detach().clone().requires_grad_(true);
        const tg::Tensor y = f(in);
        check_close(y, ref(name), tol, tol);
        if (ref.has(name + "_requires_grad")) {
            BOOST_TEST(!y.requires_grad());
            return;
        }
        (y * wave37(y.sizes(), 1.0)).sum().backward();
        for (size_t i = 0; i < in.size(); ++i) {
            const std::string g = name + "_d" + std::to_string(i);
            BOOST_TEST_CONTEXT(g) {
                if (ref.none(g)) {
                    const tg::Tensor d = in[i].grad();
                    BOOST_TEST((!d.defined() || tg::max(tg::abs(d)).item<double>() == 0));
                } else {
                    BOOST_TEST_REQUIRE(in[i].grad().defined());
                    check_close(in[i].grad(), ref(g), tol, tol);
                }
            }
        }
    }
}

}  // namespace tgtest
