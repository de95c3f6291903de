/// The convolution paths chosen by shape (Note [The convolution strategy by shape] in
/// src/ops/conv_direct.cpp): the 1x1 stride-1 GEMMs straight on x, the depthwise direct
/// kernels, the chunked GEMMs (one GEMM over a chunk of samples) and whole-batch chunks each
/// give the per-sample im2col path's y, dx, dw and db in float64 to 1e-12, at shapes that select
/// them: groups, dilation, padding, strides, odd sizes, batch 1 and an empty batch; and the
/// direct paths pass gradcheck and gradgradcheck. The dense 3-D kernel (float32 only) gives the
/// float64 path's values to float32 rounding, as the float32 GEMM paths do, and the same bits on 1
/// and 2 threads.
#define BOOST_TEST_MODULE test_conv_paths
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
using tg::Tensor;

namespace {

Tensor input(const tg::Shape& shape, int k) {
    tg::NoGradGuard no_grad;
    Tensor t =
        (tg::arange(tg::numel_of(shape), tg::kFloat64) * 0.37 + 0.1 * k).sin().reshape(shape);
    return t.detach().requires_grad_(true);
}

using Conv = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;

/// Sets an environment variable for its lifetime, then restores it (CTest's second run of this
/// suite sets TG_CONV_DNNL=1 for all of it).
struct SetEnv {
    const char* name;
    bool had;
    std::string old;
    SetEnv(const char* n, const char* v) : name(n), had(std::getenv(n) != nullptr) {
        if (had)
            old = std::getenv(n);
        setenv(n, v, 1);
    }
    ~SetEnv() {
        if (had)
            setenv(name, old.c_str(), 1);
        else
            unsetenv(name);
    }
};

struct Result {
    Tensor y, dx, dw, db;
};

/// y = f(x, w, b) and the gradients of sum(y * up), under the environment `env` (NAME=VALUE
/// pairs; the conv variables not named are unset).
Result run(const Conv& f, const tg::Shape& xs, const tg::Shape& ws, int64_t nb,
           const std::vector<std::pair<const char*, const char*>>& env) {
    for (const char* v : {"TG_CONV_DIRECT", "TG_CONV_BATCHED", "TG_CONV_CHUNK_BYTES"})
        unsetenv(v);
    for (const auto& [k, v] : env)
        setenv(k, v, 1);
    Tensor x = input(xs, 0), w = input(ws, 1), b = nb ? input({nb}, 2) : Tensor();
    Tensor y = f(x, w, b);
    const Tensor up = (tg::arange(y.numel(), tg::kFloat64) * 0.21).cos().reshape(y.sizes());
    (y * up).sum().backward();
    for (const char* v : {"TG_CONV_DIRECT", "TG_CONV_BATCHED", "TG_CONV_CHUNK_BYTES"})
        unsetenv(v);
    return {y.detach(), x.grad(), w.grad(), nb ? b.grad() : Tensor()};
}

/// f's results on the default path and under `env` equal the per-sample path's.
void same_as_per_sample(const std::string& what, const Conv& f, const tg::Shape& xs,
                        const tg::Shape& ws, int64_t nb,
                        const std::vector<std::pair<const char*, const char*>>& env = {}) {
    BOOST_TEST_CONTEXT(what) {
        const Result ref = run(f, xs, ws, nb, {{"TG_CONV_DIRECT", "0"}, {"TG_CONV_BATCHED", "0"}});
        const Result got = run(f, xs, ws, nb, env);
        check_close(got.y, ref.y, 1e-12, 1e-12);
        BOOST_TEST_REQUIRE(got.dx.defined());
        check_close(got.dx, ref.dx, 1e-12, 1e-12);
        check_close(got.dw, ref.dw, 1e-12, 1e-12);
        if (nb)
            check_close(got.db, ref.db, 1e-12, 1e-12);
    }
}

Conv conv2d(tg::IntArg s, tg::IntArg p, tg::IntArg d, int64_t g) {
    return [=](const Tensor& x, const Tensor& w, const Tensor& b) {
        return tg::conv2d(x, w, b, s, p, d, g);
    };
}

}  // namespace

BOOST_AUTO_TEST_CASE(pointwise_gemms_on_x_match_the_per_sample_path) {
    // 16x16 = 256 positions: the 1x1 path (fewer positions keep the chunked im2col)
    for (int64_t n : {3, 1, 0}) {
        const std::string at = " N=" + std::to_string(n);
        same_as_per_sample("1x1" + at, conv2d(1, 0, 1, 1), {n, 6, 16, 16}, {4, 6, 1, 1}, 4);
        same_as_per_sample("1x1 groups 2 no bias" + at, conv2d(1, 0, 1, 2), {n, 6, 17, 19},
                           {4, 3, 1, 1}, 0);
        same_as_per_sample("1x1 dilation 2" + at, conv2d(1, 0, 2, 1), {n, 5, 16, 17}, {7, 5, 1, 1},
                           7);
    }
    same_as_per_sample(
        "conv1d 1x1, 300 positions",
        [](const Tensor& x, const Tensor& w, const Tensor& b) { return tg::conv1d(x, w, b); },
        {2, 3, 300}, {5, 3, 1}, 5);
    same_as_per_sample(
        "conv_transpose2d 1x1 (Input on the 1x1 path)",
        [](const Tensor& x, const Tensor& w, const Tensor& b) {
            return tg::conv_transpose2d(x, w, b, 1, 0, 0, 1);
        },
        {2, 4, 16, 16}, {4, 3, 1, 1}, 3);
}

BOOST_AUTO_TEST_CASE(depthwise_direct_kernels_match_the_per_sample_path) {
    for (int64_t n : {2, 1, 0}) {
        const std::string at = " N=" + std::to_string(n);
        same_as_per_sample("3x3 p1" + at, conv2d(1, 1, 1, 5), {n, 5, 7, 9}, {5, 1, 3, 3}, 5);
        same_as_per_sample("3x3 s2 p1 no bias" + at, conv2d(2, 1, 1, 4), {n, 4, 9, 8}, {4, 1, 3, 3},
                           0);
        same_as_per_sample("2x3 s(2,3) p(0,2) d(2,1)" + at, conv2d({2, 3}, {0, 2}, {2, 1}, 3),
                           {n, 3, 11, 10}, {3, 1, 2, 3}, 3);
        same_as_per_sample("5x5 p2 d2" + at, conv2d(1, 2, 2, 2), {n, 2, 6, 13}, {2, 1, 5, 5}, 2);
        same_as_per_sample("5x5 p2 over one column (taps wholly in the padding)" + at,
                           conv2d(1, 2, 1, 2), {n, 2, 4, 1}, {2, 1, 5, 5}, 2);
    }
    same_as_per_sample(
        "conv1d depthwise k3 s2 p1",
        [](const Tensor& x, const Tensor& w, const Tensor& b) {
            return tg::conv1d(x, w, b, 2, 1, 1, 6);
        },
        {2, 6, 37}, {6, 1, 3}, 6);
    same_as_per_sample(
        "conv_transpose2d depthwise 4x4 s2 p1 (Input on the direct kernel)",
        [](const Tensor& x, const Tensor& w, const Tensor& b) {
            return tg::conv_transpose2d(x, w, b, 2, 1, 0, 3);
        },
        {2, 3, 5, 6}, {3, 1, 4, 4}, 3);
}

BOOST_AUTO_TEST_CASE(chunked_and_whole_batch_gemms_match_the_per_sample_path) {
    const std::vector<std::pair<const char*, const char*>>
        chunked = {{"TG_CONV_BATCHED", "1"}},
        whole = {{"TG_CONV_BATCHED", "1"}, {"TG_CONV_CHUNK_BYTES", "1073741824"}},
        small = {{"TG_CONV_BATCHED", "1"}, {"TG_CONV_CHUNK_BYTES", "4000"}};
    for (const auto* env : {&chunked, &whole, &small})
        for (int64_t n : {5, 1, 0}) {
            const std::string at = std::string(" N=") + std::to_string(n) + " " +
                                   (*env)[env->size() - 1].first + "=" +
                                   (*env)[env->size() - 1].second;
            same_as_per_sample("3x3 p1" + at, conv2d(1, 1, 1, 1), {n, 3, 7, 9}, {4, 3, 3, 3}, 4,
                               *env);
            same_as_per_sample("groups 2, s2, d2, odd" + at, conv2d(2, {1, 2}, 2, 2), {n, 4, 11, 9},
                               {6, 2, 3, 2}, 0, *env);
            same_as_per_sample("depthwise multiplier 2" + at, conv2d(1, 1, 1, 3), {n, 3, 6, 7},
                               {6, 1, 3, 3}, 6, *env);
            same_as_per_sample(
                "conv_transpose2d 4x4 s2 p1" + at,
                [](const Tensor& x, const Tensor& w, const Tensor& b) {
                    return tg::conv_transpose2d(x, w, b, 2, 1, 0, 1);
                },
                {n, 4, 4, 5}, {4, 3, 4, 4}, 3, *env);
        }
}

BOOST_AUTO_TEST_CASE(direct_paths_pass_gradcheck_and_gradgradcheck) {
    const std::vector<std::pair<std::string, std::vector<Tensor>>> cases = {
        {"depthwise", {input({2, 3, 5, 6}, 0), input({3, 1, 3, 3}, 1), input({3}, 2)}},
        {"pointwise", {input({2, 4, 16, 16}, 0), input({3, 4, 1, 1}, 1), input({3}, 2)}}};
    for (const auto& [name, in] : cases) {
        BOOST_TEST_CONTEXT(name) {
            auto f = [name = name](const std::vector<Tensor>& v) {
                return name == "depthwise" ? tg::conv2d(v[0], v[1], v[2], {2, 1}, 1, {1, 2}, 3)
                                           : tg::conv2d(v[0], v[1], v[2]);
            };
            BOOST_TEST(tg::gradcheck(f, in));
            BOOST_TEST(tg::gradgradcheck(f, in));
        }
    }
}

namespace {

/// y and the gradients of sum(y * up) of f in float32 (inputs as run's, rounded), on the dense
/// 3-D kernel (Note [Direct dense convolutions]) or, with TG_CONV_DENSE=0, on the GEMM paths,
/// on `threads` threads; not on oneDNN (TG_DNNL), which promises the same bits for a fixed
/// thread count only.
Result run_f32(const Conv& f, const tg::Shape& xs, const tg::Shape& ws, int64_t nb, bool dense,
               int threads) {
    const SetEnv own("TG_CONV_DNNL", "0");
    if (!dense)
        setenv("TG_CONV_DENSE", "0", 1);
    const int before = tg::get_num_threads();
    tg::set_num_threads(threads);
    auto f32 = [](const Tensor& t) { return t.detach().to(tg::kFloat32).requires_grad_(true); };
    Tensor x = f32(input(xs, 0)), w = f32(input(ws, 1)), b = nb ? f32(input({nb}, 2)) : Tensor();
    Tensor y = f(x, w, b);
    const Tensor up = (tg::arange(y.numel(), tg::kFloat64) * 0.21).cos().reshape(y.sizes());
    (y * up.to(tg::kFloat32)).sum().backward();
    tg::set_num_threads(before);
    unsetenv("TG_CONV_DENSE");
    return {y.detach(), x.grad(), w.grad(), nb ? b.grad() : Tensor()};
}

/// The same bits in what the dense kernels compute, y, dx and dw (db comes from BLAS GEMVs,
/// which may split over threads).
void same_bits(const Result& a, const Result& b) {
    check_close(a.y, b.y, 0, 0);
    check_close(a.dx, b.dx, 0, 0);
    check_close(a.dw, b.dw, 0, 0);
}

/// f in float32 on the dense kernel: the float64 per-sample path's values to float32 rounding
/// (as the float32 GEMM paths are), and the same bits on 1 and 2 threads.
void dense_matches(const std::string& what, const Conv& f, const tg::Shape& xs, const tg::Shape& ws,
                   int64_t nb) {
    BOOST_TEST_CONTEXT(what) {
        const Result ref = run(f, xs, ws, nb, {{"TG_CONV_DIRECT", "0"}, {"TG_CONV_BATCHED", "0"}});
        const Result gemm = run_f32(f, xs, ws, nb, false, 1);
        const Result one = run_f32(f, xs, ws, nb, true, 1), two = run_f32(f, xs, ws, nb, true, 2);
        for (const Result* r : {&gemm, &one}) {
            check_close(r->y, ref.y, 2e-5, 2e-5);
            check_close(r->dx, ref.dx, 2e-5, 2e-5);
            check_close(r->dw, ref.dw, 1e-4, 2e-5);
            if (nb)
                check_close(r->db, ref.db, 1e-4, 2e-5);
        }
        same_bits(one, two);
    }
}

Conv conv3d(tg::IntArg p, tg::IntArg d) {
    return [=](const Tensor& x, const Tensor& w, const Tensor& b) {
        return tg::conv3d(x, w, b, 1, p, d);
    };
}

}  // namespace

BOOST_AUTO_TEST_CASE(dense_3d_kernel_matches_the_float64_path_in_float32) {
    for (int64_t n : {2, 1, 0}) {
        const std::string at = " N=" + std::to_string(n);
        // 13 channels: blocks of 7 and 6; 35 columns: a step of 32 and a masked one
        dense_matches("3x3x3 p1, 35 columns" + at, conv3d(1, 1), {n, 3, 4, 6, 35}, {13, 3, 3, 3, 3},
                      13);
        dense_matches("one input channel, 9 columns" + at, conv3d(1, 1), {n, 1, 5, 7, 9},
                      {16, 1, 3, 3, 3}, 16);
        dense_matches("2x3x3 p(0,2,1) d(1,2,2), no bias" + at, conv3d({0, 2, 1}, {1, 2, 2}),
                      {n, 2, 6, 7, 20}, {5, 2, 2, 3, 3}, 0);
        // padding 3 > k-1: the input gradient's front padding is negative
        dense_matches("p3 (taps wholly in the padding)" + at, conv3d(3, 1), {n, 2, 3, 4, 5},
                      {3, 2, 3, 3, 3}, 3);
    }
    dense_matches(
        "'same' with even kernels (the odd padding at the end)",
        [](const Tensor& x, const Tensor& w, const Tensor& b) {
            return tg::conv3d(x, w, b, 1, tg::kSame);
        },
        {2, 3, 5, 6, 7}, {4, 3, 2, 2, 4}, 4);
    dense_matches("1x2x1 windows (kw 1)", conv3d(0, 1), {2, 3, 4, 5, 6}, {4, 3, 1, 2, 1}, 4);
    dense_matches("1x1x5 windows (kw 5: dw on the GEMM path)", conv3d({0, 0, 2}, 1),
                  {2, 3, 4, 5, 6}, {4, 3, 1, 1, 5}, 4);
    dense_matches("tiled on the GEMM path (one sample unfolds to 2.2 MB)", conv3d(1, 1),
                  {1, 4, 8, 16, 40}, {20, 4, 3, 3, 3}, 20);
    dense_matches(
        "conv_transpose3d stride 1 (Input on the dense kernel)",
        [](const Tensor& x, const Tensor& w, const Tensor& b) {
            return tg::conv_transpose3d(x, w, b, 1, 1, 0, 1);
        },
        {2, 4, 3, 5, 18}, {4, 6, 3, 3, 3}, 6);
}

namespace {

/// f's y, dx, dw and db in float32 on `threads` threads under TG_CONV_DNNL=`dnnl` (1: oneDNN
/// for every float32 convolution when built with TG_DNNL; 0: tapegrad's own paths).
Result run_dnnl(const Conv& f, const tg::Shape& xs, const tg::Shape& ws, int64_t nb,
                const char* dnnl, int threads = 1) {
    const SetEnv on("TG_CONV_DNNL", dnnl);
    const int before = tg::get_num_threads();
    tg::set_num_threads(threads);
    auto f32 = [](const Tensor& t) { return t.detach().to(tg::kFloat32).requires_grad_(true); };
    Tensor x = f32(input(xs, 0)), w = f32(input(ws, 1)), b = nb ? f32(input({nb}, 2)) : Tensor();
    Tensor y = f(x, w, b);
    const Tensor up = (tg::arange(y.numel(), tg::kFloat64) * 0.21).cos().reshape(y.sizes());
    (y * up.to(tg::kFloat32)).sum().backward();
    tg::set_num_threads(before);
    return {y.detach(), x.grad(), w.grad(), nb ? b.grad() : Tensor()};
}

/// f in float32 on oneDNN (with TG_DNNL; else both runs take the same path): tapegrad's own
/// paths' y, dx, dw and db to float32 rounding (sums of up to a few hundred products of values
/// below 1), on 1 and 2 threads.
void dnnl_matches(const std::string& what, const Conv& f, const tg::Shape& xs, const tg::Shape& ws,
                  int64_t nb) {
    BOOST_TEST_CONTEXT(what) {
        const Result ref = run_dnnl(f, xs, ws, nb, "0");
        for (int threads : {1, 2}) {
            const Result got = run_dnnl(f, xs, ws, nb, "1", threads);
            check_close(got.y, ref.y, 1e-4, 1e-5);
            BOOST_TEST_REQUIRE(got.dx.defined());
            check_close(got.dx, ref.dx, 1e-4, 1e-5);
            check_close(got.dw, ref.dw, 2e-4, 1e-5);
            if (nb)
                check_close(got.db, ref.db, 2e-4, 1e-5);
        }
    }
}

Conv transposed(tg::IntArg s, tg::IntArg p, tg::IntArg op, int64_t g, tg::IntArg d) {
    return [=](const Tensor& x, const Tensor& w, const Tensor& b) {
        return tg::conv_transpose2d(x, w, b, s, p, op, g, d);
    };
}

}  // namespace

BOOST_AUTO_TEST_CASE(onednn_convolutions_match_tapegrads_paths_in_float32) {
    for (int64_t n : {3, 1, 0}) {
        const std::string at = " N=" + std::to_string(n);
        dnnl_matches("3x3 p1" + at, conv2d(1, 1, 1, 1), {n, 5, 7, 9}, {6, 5, 3, 3}, 6);
        // 10 rows, k3 s2 p0: rows 0..8 read, the last one unused (negative end padding)
        dnnl_matches("3x3 s2, unused last row and column, no bias" + at, conv2d(2, 0, 1, 1),
                     {n, 4, 10, 8}, {5, 4, 3, 3}, 0);
        dnnl_matches("groups 2, s(2,1) p(1,2) d(2,1)" + at, conv2d({2, 1}, {1, 2}, {2, 1}, 2),
                     {n, 4, 11, 9}, {6, 2, 3, 2}, 6);
        dnnl_matches("depthwise 3x3 s2 p1" + at, conv2d(2, 1, 1, 5), {n, 5, 9, 8}, {5, 1, 3, 3}, 5);
        dnnl_matches("1x1" + at, conv2d(1, 0, 1, 1), {n, 6, 5, 4}, {3, 6, 1, 1}, 3);
    }
    dnnl_matches(
        "conv1d k3 s2 p1 d2 groups 3",
        [](const Tensor& x, const Tensor& w, const Tensor& b) {
            return tg::conv1d(x, w, b, 2, 1, 2, 3);
        },
        {2, 6, 37}, {9, 2, 3}, 9);
    dnnl_matches(
        "conv3d 3x2x3 s(1,2,1) p1",
        [](const Tensor& x, const Tensor& w, const Tensor& b) {
            return tg::conv3d(x, w, b, {1, 2, 1}, 1);
        },
        {2, 3, 4, 7, 6}, {4, 3, 3, 2, 3}, 4);
    dnnl_matches(
        "'same' with an even kernel (the odd padding at the end)",
        [](const Tensor& x, const Tensor& w, const Tensor& b) {
            return tg::conv2d(x, w, b, 1, tg::kSame);
        },
        {2, 3, 6, 7}, {4, 3, 2, 4}, 4);
    dnnl_matches("conv_transpose2d 4x4 s2 p1 output_padding 1", transposed(2, 1, 1, 1, 1),
                 {2, 4, 4, 5}, {4, 3, 4, 4}, 3);
    dnnl_matches("conv_transpose2d 3x3 s3 groups 2 dilation 2 output_padding (2,1)",
                 transposed(3, 1, {2, 1}, 2, 2), {2, 4, 3, 4}, {4, 3, 3, 3}, 6);
    dnnl_matches("conv_transpose2d empty batch", transposed(2, 1, 0, 1, 1), {0, 4, 4, 5},
                 {4, 3, 4, 4}, 3);
}
