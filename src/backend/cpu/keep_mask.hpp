#pragma once
// Dropout's keep masks (Note [Counter-based masks]).
#include <cstdint>

#include "tapegrad/dtype.hpp"

namespace tg::backend::cpu {

/// Note [Counter-based masks]: dropout's keep masks are not drawn element by element from a
/// generator. A mask takes one 64-bit number s from it, and element i keeps (holds `scale`,
/// else 0) when a 32-bit hash of (s, i) falls below keep·2³². So a mask costs one draw, fills in
/// parallel in any order, is the same on every device and for every thread count, can be made
/// again from s in backward instead of being kept, and a checkpoint replays it from the replayed
/// generator.
/// Writes the n elements of a float32 or float64 mask to host memory dst, on the CPU's threads.
void keep_mask(void* dst, Dtype d, int64_t n, double keep, double scale, uint64_t seed);

}  // namespace tg::backend::cpu
