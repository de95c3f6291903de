#pragma once
/// tapegrad: tensors that record, and a tape that runs backward.
///
///     #include <tapegrad/tapegrad.hpp>
///     tg::manual_seed(0);
///     auto w = tg::randn({784, 10}, tg::TensorOptions().requires_grad(true));
///     auto x = tg::randn({64, 784});
///     auto loss = tg::mse_loss(tg::tanh(tg::matmul(x, w)), tg::zeros({64, 10}));
///     loss.backward();   // w.grad() now holds dloss/dw; a second backward adds to it
///
/// Every op on a tensor that requires grad records a node (its grad_fn) holding the op's
/// backward closure and exactly what that closure saved. backward() runs the nodes in reverse
/// recording order and adds into the leaves' grad(). A graph nobody holds is freed at once.
/// Names follow LibTorch: torch:: becomes tg::. Like <torch/torch.h>, this header gives
/// everything: the tensor API, tg::nn (with nn::functional), tg::optim, tg::data and the files
/// of tg::io; the fine-grained headers stay for those who want less.
///
/// It also brings every standard header that <torch/torch.h> brings with it (LibTorch 1.13 with
/// GCC, found with `g++ -H`): programs that call std::sqrt, assert, std::cout or std::map after
/// including only <torch/torch.h> compile unchanged once ported.
#include <algorithm>
#include <array>
#include <atomic>
#include <bitset>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <clocale>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cwchar>
#include <cwctype>
#include <deque>
#include <exception>
#include <forward_list>
#include <functional>
#include <initializer_list>
#include <iomanip>
#include <ios>
#include <iosfwd>
#include <iostream>
#include <istream>
#include <iterator>
#include <limits>
#include <list>
#include <locale>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <optional>
#include <ostream>
#include <queue>
#include <ratio>
#include <set>
#include <shared_mutex>
#include <sstream>
#include <stack>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tapegrad/array_ref.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/check.hpp"
#include "tapegrad/checkpoint.hpp"
#include "tapegrad/custom_function.hpp"
#include "tapegrad/device.hpp"
#include "tapegrad/distributed.hpp"
#include "tapegrad/dtype.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/expanding_array.hpp"
#include "tapegrad/generator.hpp"
#include "tapegrad/indexing.hpp"
#include "tapegrad/memory.hpp"
#include "tapegrad/memory_budget.hpp"
#include "tapegrad/ops.hpp"
#include "tapegrad/profiler.hpp"
#include "tapegrad/saved_hooks.hpp"
#include "tapegrad/shape.hpp"
#include "tapegrad/tensor.hpp"
#include "tapegrad/threads.hpp"
#include "tapegrad/utility.hpp"
// the rest of the library, as <torch/torch.h> has it
#include "tapegrad/data.hpp"
#include "tapegrad/io.hpp"
#include "tapegrad/io_pt.hpp"
#include "tapegrad/io_safetensors.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/nn/distributed_data_parallel.hpp"
#include "tapegrad/nn/fully_sharded_data_parallel.hpp"
#include "tapegrad/onnx.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/sharded_checkpoint.hpp"
