// The thread-local modes of autograd: grad mode, anomaly mode, the record scope.
#include <string>

#include "tapegrad/autograd.hpp"

namespace tg {

namespace {
thread_local bool t_grad_mode = true;
thread_local bool t_anomaly = false;
thread_local std::string t_scope;
}  // namespace

bool GradMode::is_enabled() {
    return t_grad_mode;
}
void GradMode::set_enabled(bool on) {
    t_grad_mode = on;
}

namespace autograd {

AnomalyMode::AnomalyMode() : prev_(t_anomaly) {
    t_anomaly = true;
}
AnomalyMode::~AnomalyMode() {
    t_anomaly = prev_;
}
bool AnomalyMode::is_enabled() {
    return t_anomaly;
}

RecordScope::RecordScope(std::string name) : prev_len_(t_scope.size()) {
    if (!t_scope.empty())
        t_scope += '.';
    t_scope += name;
}
RecordScope::~RecordScope() {
    t_scope.resize(prev_len_);
}
const std::string& RecordScope::current() {
    return t_scope;
}

}  // namespace autograd
}  // namespace tg
