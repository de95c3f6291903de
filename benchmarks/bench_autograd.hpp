#pragma once
/// bench_autograd: per-op autograd overhead on a chain of tiny ops.
/// The chain cycles y = y + a, y = y * b, y = tanh(y) over `ops` ops on n-element tensors;
/// each side (LibTorch, tapegrad) lives in its own translation unit and times itself.
#include <cstdint>
#include <string>

namespace bench {

/// One chain's configuration.
struct ChainConfig {
    int64_t n = 1;             // elements per tensor (1 or 16)
    int64_t ops = 10000;       // chain length
    bool leaves_grad = false;  // a and b are leaves that require grad (else constants)
};

/// Times of one chain, in seconds, plus a checksum of the gradients for a correctness check.
struct ChainTimes {
    double fwd = 0;         // forward with recording
    double bwd = 0;         // y.sum().backward() and freeing the graph
    double fwd_nograd = 0;  // the same forward under NoGradGuard
    double checksum = 0;    // sum of x.grad (+ a.grad + b.grad when they require grad)
};

/// Runs one chain (recorded forward, backward, then the no-grad forward) in LibTorch.
ChainTimes torch_chain(const ChainConfig& c);
/// The same chain in tapegrad.
ChainTimes tg_chain(const ChainConfig& c);
/// Sets LibTorch's intra-op threads; returns a one-line description of its configuration.
std::string torch_setup(int threads);

}  // namespace bench
