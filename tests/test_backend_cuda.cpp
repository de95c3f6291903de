// The CUDA backend against the CPU: the same cases as test_backend_opencl.cpp
// (backend_device_tests.hpp). Skips cleanly without a CUDA device or when built without TG_CUDA.
#define BOOST_TEST_MODULE backend_cuda
#include <boost/test/unit_test.hpp>

#include "tapegrad/tapegrad.hpp"

namespace {
const tg::Device kDev = tg::Device::cuda(0);
}  // namespace

#include "backend_device_tests.hpp"
