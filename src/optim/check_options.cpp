// Optimizer options against their domains (PyTorch's constructor checks, plus NaN and infinity,
// which would turn every parameter into NaN at the first step).
#include "optim/check_options.hpp"

#include <cmath>
#include <sstream>

#include "tapegrad/error.hpp"

namespace tg::optim::detail {

namespace {
bool in_unit_interval(double v) {  // [0, 1)
    return v >= 0 && v < 1;
}

template <class Options>
void check_adam(const Options& o, const std::string& who) {
    o.OptimizerOptions::validate(who);
    require_option(non_negative(o.eps()), who, "eps", o.eps(), "finite and >= 0");
    require_option(in_unit_interval(std::get<0>(o.betas())), who, "beta1", std::get<0>(o.betas()),
                   "in [0, 1)");
    require_option(in_unit_interval(std::get<1>(o.betas())), who, "beta2", std::get<1>(o.betas()),
                   "in [0, 1)");
    require_option(non_negative(o.weight_decay()), who, "weight_decay", o.weight_decay(),
                   "finite and >= 0");
}
}  // namespace

bool non_negative(double v) {
    return std::isfinite(v) && v >= 0;
}

void require_option(bool ok, const std::string& who, const char* option, double value,
                    const char* domain) {
    if (ok)
        return;
    std::ostringstream os;
    os << who << ": invalid " << option << " " << value << ": must be " << domain;
    throw value_error(os.str());
}

void check_sgd_options(const SGDOptions& o, const std::string& who) {
    o.OptimizerOptions::validate(who);
    require_option(non_negative(o.momentum()), who, "momentum", o.momentum(), "finite and >= 0");
    require_option(o.dampening() >= 0 && o.dampening() <= 1, who, "dampening", o.dampening(),
                   "in [0, 1]");
    require_option(non_negative(o.weight_decay()), who, "weight_decay", o.weight_decay(),
                   "finite and >= 0");
    if (o.nesterov() && (o.momentum() <= 0 || o.dampening() != 0)) {
        std::ostringstream os;
        os << who << ": nesterov momentum requires a momentum > 0 and zero dampening, got momentum "
           << o.momentum() << " and dampening " << o.dampening();
        throw value_error(os.str());
    }
}

void check_adam_options(const AdamOptions& o, const std::string& who) {
    check_adam(o, who);
}

void check_adam_options(const AdamWOptions& o, const std::string& who) {
    check_adam(o, who);
}

}  // namespace tg::optim::detail
