/// Gradient tests of every op in the op table (op_cases.hpp, which says how to add one), one test
/// case per op family, plus tests of gradcheck itself. Forward values: test_ops_values.cpp.
///
/// Every row runs: gradcheck of the raw (possibly non-scalar) output, gradcheck of
/// sum(output * w) with a fixed random w (a non-uniform upstream gradient), gradgradcheck of the
/// latter, and float32 forward values and gradients against float64; its flags drop some of
/// these (kNoGG, kNoF32, kNoFD). kValuesOnly rows (non-differentiable outputs) check that the
/// output does not require grad, and float32 forward values against float64.
#define BOOST_TEST_MODULE test_ops_grad
#include <boost/test/unit_test.hpp>
#include <set>
#include <string>
#include <vector>

#include "op_cases.hpp"
#include "test_util.hpp"

namespace {

using opcases::OpCase;
using opcases::V;
using tgtest::check_close;
using tgtest::make_input;

/// The row's inputs again, as float32 leaves.
V to_float32(const V& inputs) {
    V x32;
    for (const auto& x : inputs) {
        x32.push_back(x.detach().to(tg::kFloat32));
        x32.back().requires_grad_(true);
    }
    return x32;
}

/// A kValuesOnly row: no gradient recorded; float32 values as float64's.
void run_values_only(const OpCase& c, const V& inputs, const tg::Tensor& out) {
    BOOST_TEST(!out.requires_grad());
    if (c.flags & opcases::kNoF32)
        return;
    try {
        const tg::Tensor out32 = c.fn(to_float32(inputs));
        BOOST_TEST(out32.dtype() == out.dtype());
        check_close(out32, out, 1e-4, 1e-4);
    } catch (const std::exception& e) {
        BOOST_ERROR("float32 forward threw: " << e.what());
    }
}

/// Runs every check of one table row; failures name the row and carry the library's message.
void run_case(const OpCase& c) {
    BOOST_TEST_CONTEXT("op case '" << c.name << "'") {
        const uint64_t seed = opcases::name_seed(c.name);
        V inputs;
        for (size_t i = 0; i < c.inputs.size(); ++i) {
            inputs.push_back(opcases::make_leaf(c.inputs[i], seed + i));
            if (c.inputs[i].layout != opcases::Layout::Contiguous &&
                c.inputs[i].shape.size() >= 2 && inputs.back().numel() > 0) {
                BOOST_TEST(!inputs.back().is_contiguous(), "input " << i << " should be strided");
            }
        }
        tg::Tensor out;
        try {
            out = c.fn(inputs);
        } catch (const std::exception& e) {
            BOOST_ERROR("forward threw: " << e.what());
            return;
        }
        if (c.flags & opcases::kValuesOnly) {
            run_values_only(c, inputs, out);
            return;
        }
        BOOST_TEST(out.requires_grad());
        BOOST_TEST(out.dtype() == tg::kFloat64);
        const tg::Tensor w = tgtest::make_const(out.sizes(), seed + 1000, -1.0, 1.0);
        auto weighted = [&c, w](const V& x) { return (c.fn(x) * w).sum(); };

        if (!(c.flags & opcases::kNoFD)) {
            try {
                BOOST_TEST(tg::gradcheck(c.fn, inputs), "gradcheck (raw output) returned false");
            } catch (const std::exception& e) {
                BOOST_ERROR("gradcheck (raw output) threw: " << e.what());
            }
            try {
                BOOST_TEST(tg::gradcheck(weighted, inputs), "gradcheck (weighted) returned false");
            } catch (const std::exception& e) {
                BOOST_ERROR("gradcheck (weighted) threw: " << e.what());
            }
        }
        if (!(c.flags & (opcases::kNoGG | opcases::kNoFD))) {
            try {
                BOOST_TEST(tg::gradgradcheck(weighted, inputs), "gradgradcheck returned false");
            } catch (const std::exception& e) {
                BOOST_ERROR("gradgradcheck threw: " << e.what());
            }
        }
        if (!(c.flags & opcases::kNoF32)) {  // float32 forward and backward against float64
            try {
                V x32 = to_float32(inputs);
                tg::Tensor out32 = c.fn(x32);
                BOOST_TEST(out32.dtype() == tg::kFloat32);
                check_close(out32, out, 1e-4, 1e-4);
                auto g32 = tg::autograd::grad({(out32 * w.to(tg::kFloat32)).sum()}, x32, {}, false,
                                              false, true);
                auto g64 = tg::autograd::grad({weighted(inputs)}, inputs, {}, false, false, true);
                for (size_t i = 0; i < g64.size(); ++i) {
                    BOOST_TEST_CONTEXT("float32 gradient of input " << i) {
                        BOOST_TEST(g32[i].defined() == g64[i].defined());
                        if (!g32[i].defined() || !g64[i].defined())
                            continue;
                        BOOST_TEST(g32[i].dtype() == tg::kFloat32);
                        check_close(g32[i], g64[i], 1e-3, 1e-3);
                    }
                }
            } catch (const std::exception& e) {
                BOOST_ERROR("float32 forward/backward threw: " << e.what());
            }
        }
    }
}

/// Every row of the family `name` (op_cases.hpp's all_families()).
void run_family(const std::string& name) {
    for (const opcases::Family& f : opcases::all_families()) {
        if (f.name != name)
            continue;
        BOOST_TEST_MESSAGE("running " << f.cases.size() << " op cases of " << name);
        for (const OpCase& c : f.cases)
            run_case(c);
        return;
    }
    BOOST_ERROR("no op family named " << name);
}

}  // namespace

// ============================================================================ the op table

// One test case per family of op_cases.hpp, named after it.
BOOST_AUTO_TEST_CASE(arithmetic) {
    run_family("arithmetic");
}

BOOST_AUTO_TEST_CASE(activations) {
    run_family("activations");
}

BOOST_AUTO_TEST_CASE(linear_algebra) {
    run_family("linear_algebra");
}

BOOST_AUTO_TEST_CASE(reductions) {
    run_family("reductions");
}

BOOST_AUTO_TEST_CASE(shape_ops) {
    run_family("shape_ops");
}

BOOST_AUTO_TEST_CASE(losses) {
    run_family("losses");
}

BOOST_AUTO_TEST_CASE(comparisons) {
    run_family("comparisons");
}

BOOST_AUTO_TEST_CASE(convolution) {
    run_family("convolution");
}

BOOST_AUTO_TEST_CASE(normalization) {
    run_family("normalization");
}

BOOST_AUTO_TEST_CASE(transformer) {
    run_family("transformer");
}

BOOST_AUTO_TEST_CASE(spatial) {
    run_family("spatial");
}

BOOST_AUTO_TEST_CASE(nn_more) {
    run_family("nn_more");
}

BOOST_AUTO_TEST_CASE(recurrent) {
    run_family("recurrent");
}

BOOST_AUTO_TEST_CASE(every_family_has_a_test_case_and_row_names_are_unique) {
    std::set<std::string> names;
    for (const opcases::Family& f : opcases::all_families()) {
        BOOST_TEST(boost::unit_test::framework::master_test_suite().get(f.name) !=
                       boost::unit_test::INV_TEST_UNIT_ID,
                   "family " << f.name << " has no test case here");
        for (const OpCase& c : f.cases)
            BOOST_TEST(names.insert(c.name).second, "row name " << c.name << " is used twice");
    }
}

// ============================================================================ gradcheck itself

BOOST_AUTO_TEST_CASE(gradcheck_detects_wrong_gradient) {
    // A hook that triples the gradient makes backward disagree with finite differences.
    tg::Tensor x = make_input({3}, 1);
    auto bad = [](const V& v) {
        tg::Tensor y = v[0] * 2.0;
        y.register_hook([](const tg::Tensor& g) { return g * 3.0; });
        return y.sum();
    };
    bool detected = false;
    try {
        detected = !tg::gradcheck(bad, {x});
    } catch (const tg::autograd_error&) {
        detected = true;
    }
    BOOST_TEST(detected);
}

BOOST_AUTO_TEST_CASE(gradgradcheck_on_hessian_nontrivial_function) {
    tg::Tensor x = make_input({4}, 2);
    tg::Tensor y = make_input({4}, 3);
    auto fn = [](const V& v) { return tg::sum(tg::exp(v[0] * v[1]) * tg::tanh(v[0])); };
    BOOST_TEST(tg::gradgradcheck(fn, {x, y}));
}
