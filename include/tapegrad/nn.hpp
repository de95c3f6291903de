#pragma once
/// tg::nn: modules, layers, losses, initialisations and gradient utilities (LibTorch's torch::nn).
#include "tapegrad/nn/activation.hpp"
#include "tapegrad/nn/checkpoint_sequential.hpp"
#include "tapegrad/nn/dropout.hpp"
#include "tapegrad/nn/flatten.hpp"
#include "tapegrad/nn/holder.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/nn/linear.hpp"
#include "tapegrad/nn/loss.hpp"
#include "tapegrad/nn/module.hpp"
#include "tapegrad/nn/sequential.hpp"
#include "tapegrad/nn/utils.hpp"
