#pragma once
/// tg::optim: optimizers (SGD, Adam, AdamW) and learning-rate schedulers (LibTorch's torch::optim).
#include "tapegrad/optim/accumulator.hpp"
#include "tapegrad/optim/adam.hpp"
#include "tapegrad/optim/optimizer.hpp"
#include "tapegrad/optim/scheduler.hpp"
#include "tapegrad/optim/sgd.hpp"
