/// operator<< lays tensors out as LibTorch 1.13 does (issue 16): each expected text below is what
/// LibTorch 1.13 printed for the same tensor (number formats, scale factors, "Columns a to b",
/// one slice per leading index, the [ CPUFloatType{...} ] footer).
#define BOOST_TEST_MODULE test_print
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"

namespace {
std::string printed(const tg::Tensor& t) {
    std::ostringstream os;
    os << t;
    return os.str();
}
}  // namespace

BOOST_AUTO_TEST_CASE(prints_as_libtorch_does) {
    struct Case {
        const char* name;
        tg::Tensor t;
        const char* libtorch;
    };
    const std::vector<Case> cases = {
        {"int_matrix", tg::tensor({1.0, 2.0, 3.0, 4.0}).reshape({2, 2}),
         R"( 1  2
 3  4
[ CPUFloatType{2,2} ])"},
        {"fixed_matrix", tg::tensor({0.1, -2.5, 3.25, 4.0}).reshape({2, 2}),
         R"( 0.1000 -2.5000
 3.2500  4.0000
[ CPUFloatType{2,2} ])"},
        {"double_vector", tg::tensor({0.1, 2.5, 3.25}, tg::kFloat64),
         R"( 0.1000
 2.5000
 3.2500
[ CPUDoubleType{3} ])"},
        {"scalar", tg::scalar_tensor(3.5),
         R"(3.5
[ CPUFloatType{} ])"},
        {"long_vector", tg::tensor(std::vector<int64_t>{1, 20, -3}),
         R"(  1
 20
 -3
[ CPULongType{3} ])"},
        {"bool_vector", tg::tensor({1.0, 2.0}) > 1.5,
         R"( 0
 1
[ CPUBoolType{2} ])"},
        {"three_dims", tg::arange(12.0).reshape({2, 2, 3}),
         R"((1,.,.) = 
  0  1  2
  3  4  5

(2,.,.) = 
   6   7   8
   9  10  11
[ CPUFloatType{2,2,3} ])"},
        {"four_dims", tg::arange(24.0).reshape({2, 2, 2, 3}),
         R"((1,1,.,.) = 
  0  1  2
  3  4  5

(2,1,.,.) = 
  12  13  14
  15  16  17

(1,2,.,.) = 
   6   7   8
   9  10  11

(2,2,.,.) = 
  18  19  20
  21  22  23
[ CPUFloatType{2,2,2,3} ])"},
        {"scientific", tg::tensor({1e-5, 1.0, 1e5}),
         R"( 1.0000e-05
 1.0000e+00
 1.0000e+05
[ CPUFloatType{3} ])"},
        {"small_fixed", tg::tensor({1e-3, 0.5}),
         R"( 0.0010
 0.5000
[ CPUFloatType{2} ])"},
        {"non_finite", tg::tensor({std::nan(""), HUGE_VAL, 1.0}),
         R"(nan
inf
 1
[ CPUFloatType{3} ])"},
        {"empty", tg::zeros({0}), R"([ CPUFloatType{0} ])"},
        {"empty_matrix", tg::zeros({2, 0}), R"([ CPUFloatType{2,0} ])"},
        {"scaled_down", tg::tensor({0.001, 0.0025}),
         R"(0.001 *
 1.0000
 2.5000
[ CPUFloatType{2} ])"},
        {"scaled_negative", tg::tensor({-0.001, 0.0025}),
         R"(0.001 *
-1.0000
 2.5000
[ CPUFloatType{2} ])"},
        {"wide_range", tg::tensor({1234567.5, 2.0}),
         R"( 1.2346e+06
 2.0000e+00
[ CPUFloatType{2} ])"},
        {"five_digits", tg::tensor({12345.5, 2.0}),
         R"( 12345.5000
     2.0000
[ CPUFloatType{2} ])"},
        {"negative_first", tg::tensor({-12345.5, 2.0}),
         R"(-12345.5000
     2.0000
[ CPUFloatType{2} ])"},
        {"thirds", tg::tensor({1.0 / 3, 2.0}),
         R"( 0.3333
 2.0000
[ CPUFloatType{2} ])"},
        {"big_ints", tg::tensor({1e10, 2.0}),
         R"( 1.0000e+10
 2.0000e+00
[ CPUFloatType{2} ])"},
        {"negative_ints", tg::tensor({-1.0, -2.0}),
         R"(-1
-2
[ CPUFloatType{2} ])"},
        {"columns", tg::arange(30.0).reshape({2, 15}) * 1.5,
         R"(Columns 1 to 8  0.0000   1.5000   3.0000   4.5000   6.0000   7.5000   9.0000  10.5000
 22.5000  24.0000  25.5000  27.0000  28.5000  30.0000  31.5000  33.0000

Columns 9 to 15 12.0000  13.5000  15.0000  16.5000  18.0000  19.5000  21.0000
 34.5000  36.0000  37.5000  39.0000  40.5000  42.0000  43.5000
[ CPUFloatType{2,15} ])"},
        {"long_matrix", tg::arange(40.0, tg::kInt64).reshape({2, 20}),
         R"(  0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16  17  18  19
 20  21  22  23  24  25  26  27  28  29  30  31  32  33  34  35  36  37  38  39
[ CPULongType{2,20} ])"},
        {"scaled_matrix", tg::tensor({0.001, 0.002, 0.003, 0.0045}).reshape({2, 2}),
         R"(0.001 *
 1.0000  2.0000
  3.0000  4.5000
[ CPUFloatType{2,2} ])"},
        {"scaled_3d",
         tg::tensor({0.001, 0.002, 0.003, 0.0045, 0.01, 0.02, 0.03, 0.045}).reshape({2, 2, 2}),
         R"((1,.,.) = 
 0.001 *
  1.0000  2.0000
   3.0000  4.5000

(2,.,.) = 
 0.01 *
  1.0000  2.0000
   3.0000  4.5000
[ CPUFloatType{2,2,2} ])"},
        {"wide_3d", tg::arange(60.0).reshape({2, 2, 15}) / 7.0,
         R"((1,.,.) = 
 Columns 1 to 9  0.0000  0.1429  0.2857  0.4286  0.5714  0.7143  0.8571  1.0000  1.1429
  2.1429  2.2857  2.4286  2.5714  2.7143  2.8571  3.0000  3.1429  3.2857

Columns 10 to 15  1.2857  1.4286  1.5714  1.7143  1.8571  2.0000
  3.4286  3.5714  3.7143  3.8571  4.0000  4.1429

(2,.,.) = 
 Columns 1 to 9  4.2857  4.4286  4.5714  4.7143  4.8571  5.0000  5.1429  5.2857  5.4286
  6.4286  6.5714  6.7143  6.8571  7.0000  7.1429  7.2857  7.4286  7.5714

Columns 10 to 15  5.5714  5.7143  5.8571  6.0000  6.1429  6.2857
  7.7143  7.8571  8.0000  8.1429  8.2857  8.4286
[ CPUFloatType{2,2,15} ])"},
    };
    for (const Case& c : cases)
        BOOST_TEST_CONTEXT(c.name) {
            BOOST_TEST(printed(c.t) == std::string(c.libtorch));
        }
}

BOOST_AUTO_TEST_CASE(devices_undefined_tensors_and_the_short_form) {
    BOOST_TEST(printed(tg::Tensor()) == "[ Tensor (undefined) ]");
    if (tg::opencl::is_available())
        BOOST_TEST(printed(tg::ones({2}).to("opencl:0")) == " 1\n 1\n[ OpenCLFloatType{2} ]");
    std::ostringstream os;  // the stream's own format is left alone
    os << std::setprecision(3) << tg::tensor({0.5}) << 0.123456;
    BOOST_TEST(os.str() == " 0.5000\n[ CPUFloatType{1} ]0.123");
    // repr: tapegrad's short form, with the autograd state
    const tg::Tensor x = tg::arange(20.0).requires_grad_(true);
    const std::string r = tg::repr(x * 2.0);
    BOOST_TEST(r.find("[0, 2, 4, ..., 34, 36, 38]") != std::string::npos, r);
    BOOST_TEST(r.find("grad_fn=MulBackward1") != std::string::npos, r);
    BOOST_TEST(tg::repr(x).find("requires_grad") != std::string::npos);
}
