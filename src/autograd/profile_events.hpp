#pragma once
// The events the profiler (include/tapegrad/profiler.hpp, Note [What the profile times]) hears
// from the tape: a recorded op (record.hpp) and a backward node's apply (engine.cpp). With no
// profile active on the thread each is one thread-local load.
namespace tg::autograd::detail {

struct ProfileState;
/// The active profile of this thread, or null.
inline ProfileState*& profile_slot() {
    static thread_local ProfileState* p = nullptr;
    return p;
}
/// An op named `op` was recorded (forward).
void profile_forward(ProfileState& p, const char* op);
/// A backward node starts / ends (nested nodes are part of the outermost one).
void profile_node_begin(ProfileState& p);
void profile_node_end(ProfileState& p, const char* op);

/// Times one backward node's apply, exceptions included.
class ProfileNode {
public:
    explicit ProfileNode(const char* op) : p_(profile_slot()), op_(op) {
        if (p_)
            profile_node_begin(*p_);
    }
    ~ProfileNode() {
        if (p_ && p_ == profile_slot())  // not if the profile stopped inside the node
            profile_node_end(*p_, op_);
    }
    ProfileNode(const ProfileNode&) = delete;
    ProfileNode& operator=(const ProfileNode&) = delete;

private:
    ProfileState* p_;
    const char* op_;
};

}  // namespace tg::autograd::detail
