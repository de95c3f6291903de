#pragma once
/// The tapegrad children's op profile: a few more steps after the timed ones, run under
/// tg::autograd::profiler::Profile (the timed steps are not profiled), written as one value of
/// the child's result line for the driver's profile table (profile_table() in bench_driver.hpp).
#include <string>

#include "bench_common.hpp"
#include "tapegrad/profiler.hpp"

namespace bench {

/// Runs step() n times under a profile; returns its entries as "name|phase|calls|ms;..." with
/// spaces as '_' (result values have none).
template <class Step>
std::string profile_steps(int n, Step&& step) {
    tg::autograd::profiler::Profile prof;
    for (int i = 0; i < n; ++i)
        step();
    prof.stop();
    std::string out;
    for (const auto& e : prof.ops()) {
        std::string name = e.name;
        for (char& c : name)
            if (c == ' ' || c == '|' || c == ';')
                c = '_';
        out += (out.empty() ? "" : ";") + name + "|" + (e.phase.empty() ? "-" : e.phase) + "|" +
               std::to_string(e.calls) + "|" + fmt(1e3 * e.seconds, 4);
    }
    return out;
}

}  // namespace bench
