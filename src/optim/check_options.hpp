#pragma once
// Validation of optimizer options, one function per optimizer: the constructors and every step()
// call it (options can change through param_groups() between steps), and so can code that sets
// options from elsewhere, such as a loaded file.
#include <string>

#include "tapegrad/optim/adam.hpp"
#include "tapegrad/optim/sgd.hpp"

namespace tg::optim::detail {

/// Throws value_error "<who>: invalid <option> <value>: must be <domain>" unless ok.
void require_option(bool ok, const std::string& who, const char* option, double value,
                    const char* domain);
/// lr, momentum, weight_decay finite and >= 0; dampening in [0, 1]; nesterov needs momentum > 0
/// and dampening 0. Throws value_error naming "SGD", the option and its value.
void check_options(const SGDOptions& o);
/// lr, eps, weight_decay finite and >= 0; beta1, beta2 in [0, 1). Throws value_error naming
/// "Adam", the option and its value.
void check_options(const AdamOptions& o);
/// As for Adam, naming "AdamW".
void check_options(const AdamWOptions& o);

}  // namespace tg::optim::detail
