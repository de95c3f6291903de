// The OpenCL backend against the CPU (backend_device_tests.hpp, backend_conformance.hpp): every
// op forward and backward, MLP training, zero host<->device bytes per optimizer step, device
// errors, allocator statistics. Skips cleanly without an OpenCL device (not built, no platform).
#define BOOST_TEST_MODULE backend_opencl
#include <boost/test/unit_test.hpp>

#include "tapegrad/tapegrad.hpp"

namespace {
const tg::Device kDev = tg::Device::opencl(0);
}  // namespace

#include "backend_device_tests.hpp"
