#pragma once
/// Where a training step's time goes, op by op (a small form of LibTorch's
/// torch::autograd::profiler):
///
///     tg::autograd::profiler::Profile prof;      // this thread, from now on
///     for (int i = 0; i < 10; ++i) train_step();
///     prof.stop();
///     std::cout << prof.table();                  // op, phase, calls, ms, share of the total
///
/// Note [What the profile times]: the profile is a stream of events on the thread that made it.
/// - A recorded op (one that gets a grad_fn) is charged, in phase "forward", the time since the
///   previous event: its own computation and whatever unrecorded work ran just before it (ops
///   are recorded after they compute; an op on tensors that need no gradient records nothing).
/// - A backward node (its grad_fn's apply) is timed exactly, in phase "backward", under the op
///   that recorded it ("linear", "conv2d"); what runs inside it (a checkpoint's recomputation, a
///   nested backward) is part of it. The engine's work between nodes is "(outside ops)".
/// - A RecordFunction scope is timed exactly, less the events inside it, in phase "scope"; the
///   optimizers' step() is one ("Optimizer.step#Adam.step", PyTorch's name).
/// - Anything else (time before a scope or a backward node, and up to stop()) is "(outside
///   ops)". The entries add up to the profile's wall time.
/// With no profile active an op pays one thread-local load.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#pragma GCC visibility push(default)

namespace tg::autograd::profiler {

/// One line of a profile: an op (or scope) in one phase.
struct OpTime {
    std::string name;   // the op ("linear"), scope name, or "(outside ops)"
    std::string phase;  // "forward", "backward", "scope" or "" (outside ops)
    int64_t calls = 0;
    double seconds = 0;
};

/// Profiles this thread from construction until stop() or destruction. One at a time per thread:
/// a second one on the same thread throws autograd_error.
class Profile {
public:
    Profile();
    ~Profile();
    Profile(const Profile&) = delete;
    Profile& operator=(const Profile&) = delete;
    /// Stops recording (the time since the last event is "(outside ops)"); idempotent.
    void stop();
    /// Forgets what was recorded so far and goes on recording (e.g. after warm-up steps).
    void reset();
    /// The entries, largest time first.
    std::vector<OpTime> ops() const;
    /// Wall time covered: the sum of the entries.
    double total_seconds() const;
    /// The entries as a text table: op, phase, calls, total ms, ms per call, share of the total;
    /// at most max_rows lines, the rest summed into one.
    std::string table(size_t max_rows = 25) const;

private:
    struct State;
    std::unique_ptr<State> s_;
};

/// Times its scope as one entry of the active profile of this thread, if any (LibTorch's
/// RECORD_FUNCTION); name must outlive the profile (a string literal).
class RecordFunction {
public:
    explicit RecordFunction(const char* name);
    ~RecordFunction();
    RecordFunction(const RecordFunction&) = delete;
    RecordFunction& operator=(const RecordFunction&) = delete;

private:
    const char* name_;
    bool active_;
};

}  // namespace tg::autograd::profiler

#pragma GCC visibility pop
