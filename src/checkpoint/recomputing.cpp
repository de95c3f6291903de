#include "checkpoint/recomputing.hpp"

namespace tg::checkpointing {

namespace {
thread_local bool t_recomputing = false;
}

bool recomputing() {
    return t_recomputing;
}

RecomputeScope::RecomputeScope() : prev_(t_recomputing) {
    t_recomputing = true;
}

RecomputeScope::~RecomputeScope() {
    t_recomputing = prev_;
}

}  // namespace tg::checkpointing
