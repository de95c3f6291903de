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
#include "tapegrad/autograd.hpp"
#include "tapegrad/checkpoint.hpp"
#include "tapegrad/custom_function.hpp"
#include "tapegrad/device.hpp"
#include "tapegrad/distributed.hpp"
#include "tapegrad/dtype.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/generator.hpp"
#include "tapegrad/indexing.hpp"
#include "tapegrad/memory.hpp"
#include "tapegrad/ops.hpp"
#include "tapegrad/shape.hpp"
#include "tapegrad/tensor.hpp"
#include "tapegrad/threads.hpp"
// the rest of the library, as <torch/torch.h> has it
#include "tapegrad/data.hpp"
#include "tapegrad/io.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/nn/distributed_data_parallel.hpp"
#include "tapegrad/optim.hpp"
