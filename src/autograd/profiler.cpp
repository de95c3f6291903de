// The profiler's state and its events (Note [What the profile times] in
// include/tapegrad/profiler.hpp).
#include "tapegrad/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <utility>

#include "autograd/profile_events.hpp"
#include "tapegrad/error.hpp"

namespace tg::autograd {

namespace detail {

struct ProfileState {
    using Clock = std::chrono::steady_clock;
    Clock::time_point last = Clock::now();
    int node_depth = 0;  // backward nodes in progress: what runs inside one is part of it
    // (name, phase) -> (calls, seconds), keyed by the names' addresses (string literals: no
    // string is built per op); ops() merges equal names that live at two addresses.
    std::map<std::pair<const char*, const char*>, std::pair<int64_t, double>> totals;

    /// Charges the time since the last event to (name, phase) and moves the last event to now.
    void charge(const char* name, const char* phase, int64_t calls = 1) {
        const Clock::time_point now = Clock::now();
        auto& e = totals[{name, phase}];
        e.first += calls;
        e.second += std::chrono::duration<double>(now - last).count();
        last = now;
    }
};

const char* const kOutside = "(outside ops)";

void profile_forward(ProfileState& p, const char* op) {
    if (p.node_depth == 0)
        p.charge(op, "forward");
}

void profile_node_begin(ProfileState& p) {
    if (p.node_depth++ == 0)
        p.charge(kOutside, "", 0);
}

void profile_node_end(ProfileState& p, const char* op) {
    if (--p.node_depth == 0)
        p.charge(op, "backward");
}

}  // namespace detail

namespace profiler {

struct Profile::State {
    detail::ProfileState state;
    bool running = true;
};

Profile::Profile() : s_(std::make_unique<State>()) {
    if (detail::profile_slot())
        throw autograd_error("profiler::Profile: a profile is already active on this thread");
    detail::profile_slot() = &s_->state;
}

Profile::~Profile() {
    stop();
}

void Profile::stop() {
    if (!s_->running)
        return;
    s_->state.charge(detail::kOutside, "", 0);
    s_->running = false;
    detail::profile_slot() = nullptr;
}

void Profile::reset() {
    s_->state.totals.clear();
    s_->state.last = detail::ProfileState::Clock::now();
}

std::vector<OpTime> Profile::ops() const {
    std::map<std::pair<std::string, std::string>, std::pair<int64_t, double>> merged;
    for (const auto& [key, e] : s_->state.totals) {
        auto& m = merged[{key.first, key.second}];
        m.first += e.first;
        m.second += e.second;
    }
    std::vector<OpTime> v;
    for (const auto& [key, e] : merged)
        v.push_back({key.first, key.second, e.first, e.second});
    std::stable_sort(v.begin(), v.end(),
                     [](const OpTime& a, const OpTime& b) { return a.seconds > b.seconds; });
    return v;
}

double Profile::total_seconds() const {
    double t = 0;
    for (const auto& kv : s_->state.totals)
        t += kv.second.second;
    return t;
}

std::string Profile::table(size_t max_rows) const {
    const std::vector<OpTime> v = ops();
    const double total = total_seconds();
    std::string out;
    char line[256];
    auto row = [&](const std::string& name, const std::string& phase, const std::string& calls,
                   double s, double per_call_ms) {
        std::snprintf(line, sizeof line, "%-32s %-9s %8s %11.3f %11.4f %6.1f%%\n", name.c_str(),
                      phase.c_str(), calls.c_str(), 1e3 * s, per_call_ms,
                      total > 0 ? 100 * s / total : 0.0);
        out += line;
    };
    std::snprintf(line, sizeof line, "%-32s %-9s %8s %11s %11s %7s\n", "op", "phase", "calls",
                  "total ms", "ms/call", "share");
    out += line;
    double rest = 0;
    int64_t rest_calls = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i < max_rows) {
            row(v[i].name, v[i].phase, std::to_string(v[i].calls), v[i].seconds,
                v[i].calls ? 1e3 * v[i].seconds / double(v[i].calls) : 0);
        } else {
            rest += v[i].seconds;
            rest_calls += v[i].calls;
        }
    }
    if (v.size() > max_rows)
        row("(" + std::to_string(v.size() - max_rows) + " more)", "", std::to_string(rest_calls),
            rest, 0);
    row("total", "", "", total, 0);
    return out;
}

RecordFunction::RecordFunction(const char* name) : name_(name), active_(false) {
    detail::ProfileState* p = detail::profile_slot();
    if (p && p->node_depth == 0) {
        p->charge(detail::kOutside, "", 0);
        active_ = true;
    }
}

RecordFunction::~RecordFunction() {
    if (detail::ProfileState* p = detail::profile_slot(); active_ && p)
        p->charge(name_, "scope");
}

}  // namespace profiler

}  // namespace tg::autograd
