#pragma once
/// Data sets and loading: IDX files, Fashion-MNIST, and a seeded mini-batch DataLoader.
#include "tapegrad/data/dataloader.hpp"
#include "tapegrad/data/datasets.hpp"
#include "tapegrad/data/distributed_sampler.hpp"
#include "tapegrad/data/fashion_mnist.hpp"
#include "tapegrad/data/idx.hpp"
