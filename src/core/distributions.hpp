#pragma once
// The samplers behind tapegrad's random ops, each drawing from a generator's state exactly what
// LibTorch 1.13's CPU kernel of the same op draws from its generator (Note [LibTorch's random
// streams] in core/random.cpp). Each writes n values to host memory in the order LibTorch's
// kernel visits them; runtime/random_fill.cpp places them in a tensor.
#include <cstdint>

#include "core/random.hpp"
#include "tapegrad/dtype.hpp"

namespace tg::detail {

/// uniform_(from, to) of a float32 or float64 tensor: per element one 32-bit draw (float32, 24
/// bits used) or two (float64, 53 bits), x·(to - from) + from fused, in the tensor's type.
void uniform(void* dst, Dtype d, int64_t n, double from, double to, Engine& e);

/// normal_(mean, std) of a float32 or float64 tensor. A contiguous tensor of 16 or more elements
/// is filled as LibTorch's normal_fill does (n uniforms, then Box-Muller on each 16, the last 16
/// drawn again when 16 does not divide n; float32 with LibTorch's AVX2 float arithmetic, see
/// normal_fill.cpp); anything else one element at a time from normal_distribution<double>, which
/// keeps Box-Muller's second value in the engine for its next call.
void normal(void* dst, Dtype d, int64_t n, double mean, double std, bool contiguous, Engine& e);

/// exponential_(lambd) of a float32 or float64 tensor: per element a 53-bit uniform u (two 32-bit
/// draws), -1/lambd · log(1 - u) in double, then rounded to the tensor's type.
void exponential(void* dst, Dtype d, int64_t n, double lambd, Engine& e);

/// LibTorch's normal_distribution<double>(mean, std): Box-Muller on two 53-bit uniforms, the
/// pair's second value kept in the engine for the next call.
double normal_one(double mean, double std, Engine& e);

/// The draws of geometric_(p), cauchy_(median, sigma) and log_normal_(mean, std), one element at
/// a time as LibTorch's serial kernels (distributions_more.cpp): the value in double from 53-bit
/// uniforms (log_normal: normal_one), then rounded to d (geometric: any non-bool dtype; the others
/// float32 or float64).
void geometric(void* dst, Dtype d, int64_t n, double p, Engine& e);
void cauchy(void* dst, Dtype d, int64_t n, double median, double sigma, Engine& e);
void log_normal(void* dst, Dtype d, int64_t n, double mean, double std, Engine& e);

/// random_() without bounds: floating types draw % (2^digits + 1) (float64 from random64()),
/// int64 random64() % 2^63, other integers random() % (max + 1), bool random() & 1.
void random_full(void* dst, Dtype d, int64_t n, Engine& e);

/// multinomial with replacement of `rows` rows of `cats` non-negative weights (contiguous, float32
/// or float64, each row with a positive sum): per row the cumulative sums in the weights' type,
/// divided by their total, the last set to 1; per sample the first category whose cumulative sum
/// is not below a 53-bit uniform. out: rows × samples indices.
void multinomial_replacement(int64_t* out, const void* w, Dtype d, int64_t rows, int64_t cats,
                             int64_t samples, Engine& e);

/// random_(from, to) / randint: base + draw % range, the draw 64-bit when range >= 2³² and the
/// dtype is float32, float64 or int64, else 32-bit. Any dtype (bool: the value's truth).
void random_from_to(void* dst, Dtype d, int64_t n, uint64_t range, int64_t base, Engine& e);

/// randperm(n): 0..n-1, then for i < n - 1 swap element i with element i + random() % (n - i).
void randperm(int64_t* dst, int64_t n, Engine& e);

/// bernoulli_(p) with a scalar p: per element one 53-bit uniform u (two 32-bit draws); `one`
/// where u < p, else 0, in dtype d (any dtype). Dropout's masks pass 1/(1-p) as `one`.
void bernoulli(void* dst, Dtype d, int64_t n, double p, double one, Engine& e);

/// Dropout's y = x * mask in one pass: out[i] = x[i] · (one when element i of bernoulli(p) above
/// is 1, else 0), the same draws and the same bits as drawing the mask and multiplying. x and out:
/// n contiguous float32 or float64 values of dtype d in host memory.
void bernoulli_mul(void* out, const void* x, Dtype d, int64_t n, double p, double one, Engine& e);

/// bernoulli_(p) with a p per element (p: n values of dtype pd, float32 or float64): a float64 p
/// is compared with a 53-bit uniform, a float32 one with a 24-bit uniform (one 32-bit draw).
/// value_error naming `op` for a p outside [0, 1] or NaN, before any draw.
void bernoulli(void* dst, Dtype d, const void* p, Dtype pd, int64_t n, Engine& e, const char* op);

/// bernoulli(p) as bits: bit i % 64 of out[i / 64] is element i (the draws of bernoulli above).
void bernoulli_bits(uint64_t* out, int64_t n, double p, Engine& e);

}  // namespace tg::detail
