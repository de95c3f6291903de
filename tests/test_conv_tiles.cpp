/// The tiled 3-D convolution paths (Note [Depth tiles] in src/ops/conv_tiles.cpp): with
/// TG_CONV_TILE_BYTES set small, the small convolutions of test_nn_conv3d run a few rows or depths
/// at a time (Forward, Weight, and Input folded tile by tile) and must still give LibTorch
/// 1.13's values (forward, input, weight and bias gradients to 1e-12 in float64), on the CPU and
/// on OpenCL.
#define BOOST_TEST_MODULE test_conv_tiles
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "nn_conv3d_reference.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
using tg::Tensor;

namespace {

Tensor input(const tg::Shape& shape, int k, tg::Device d = tg::Device::cpu()) {
    tg::NoGradGuard no_grad;
    Tensor t =
        (tg::arange(tg::numel_of(shape), tg::kFloat64) * 0.37 + 0.1 * k).sin().reshape(shape);
    return t.to(d).detach().requires_grad_(true);
}

/// The reference case's y and gradients, from conv3d with tiles of `bytes` bytes.
void check(const std::string& name, const char* bytes, tg::Device d) {
    setenv("TG_CONV_TILE_BYTES", bytes, 1);
    const auto& ref = conv3d_ref::values();
    BOOST_TEST_CONTEXT(name << " with " << bytes << "-byte tiles on " << d.str()) {
        Tensor x, w, b, y;
        if (name == "conv3d") {
            x = input({2, 2, 3, 5, 4}, 0, d), w = input({3, 2, 2, 3, 3}, 1, d),
            b = input({3}, 2, d);
            y = tg::conv3d(x, w, b, {1, 2, 1}, {1, 0, 1}, {1, 1, 2});
        } else {
            x = input({1, 4, 3, 3, 3}, 0, d), w = input({4, 2, 2, 3, 2}, 1, d);
            y = tg::conv3d(x, w, {}, 1, tg::kSame, 1, 2);
        }
        check_close(y.to(tg::Device::cpu()), ref.at(name), 1e-12, 1e-12);
        const Tensor up = (tg::arange(y.numel(), tg::kFloat64) * 0.21).cos().reshape(y.sizes());
        (y * up.to(d)).sum().backward();
        check_close(x.grad().to(tg::Device::cpu()), ref.at(name + "_grad0"), 1e-12, 1e-12);
        check_close(w.grad().to(tg::Device::cpu()), ref.at(name + "_grad1"), 1e-12, 1e-12);
        if (b.defined())
            check_close(b.grad().to(tg::Device::cpu()), ref.at(name + "_grad2"), 1e-12, 1e-12);
    }
    unsetenv("TG_CONV_TILE_BYTES");
}

}  // namespace

BOOST_AUTO_TEST_CASE(tiles_of_rows_and_of_depths_give_libtorchs_values) {
    // rows, rows, depths (of conv3d; rows of the other), depths of conv3d_same_groups (too big a
    // tile for conv3d, which runs untiled)
    for (const char* bytes : {"64", "1200", "2000", "3500"})
        for (const char* name : {"conv3d", "conv3d_same_groups"})
            check(name, bytes, tg::Device::cpu());
}

BOOST_AUTO_TEST_CASE(tiles_on_opencl_give_libtorchs_values) {
    if (!tg::is_available(tg::Device::opencl(0))) {
        BOOST_TEST_MESSAGE("no OpenCL device: skipped");
        return;
    }
    for (const char* name : {"conv3d", "conv3d_same_groups"})
        check(name, "1200", tg::Device::opencl(0));
}
