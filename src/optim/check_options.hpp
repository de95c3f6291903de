#pragma once
// The domains of optimizer options, checked in one place: each options type's validate()
// (optimizer.hpp) calls these, and the constructors, every step() (options can change through
// param_groups() between steps) and load() (loaded learning rates) call validate().
#include <string>

#include "tapegrad/optim/adam.hpp"
#include "tapegrad/optim/sgd.hpp"

namespace tg::optim::detail {

/// Throws value_error "<who>: invalid <option> <value>: must be <domain>" unless ok.
void require_option(bool ok, const std::string& who, const char* option, double value,
                    const char* domain);
/// Whether v is finite and >= 0.
bool non_negative(double v);
/// momentum, weight_decay finite and >= 0; dampening in [0, 1]; nesterov needs momentum > 0
/// and dampening 0 (lr: OptimizerOptions::validate).
void check_sgd_options(const SGDOptions& o, const std::string& who);
/// eps, weight_decay finite and >= 0; beta1, beta2 in [0, 1) (lr: OptimizerOptions::validate).
void check_adam_options(const AdamOptions& o, const std::string& who);
void check_adam_options(const AdamWOptions& o, const std::string& who);

}  // namespace tg::optim::detail
