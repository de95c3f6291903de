#pragma once
#include <random>

namespace tg::detail {
/// The global generator behind randn/rand/randint/dropout (manual_seed seeds it).
std::mt19937_64& generator();
}  // namespace tg::detail
