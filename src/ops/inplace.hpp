#pragma once
// The in-place form of any out-of-place op (Note [In-place ops] in inplace.cpp).
#include <functional>
#include <initializer_list>

#include "tapegrad/tensor.hpp"

namespace tg::detail {

/// self <- f(self): LibTorch's in-place spelling of an out-of-place op f. f's result must have
/// self's shape (shape_error naming `name`) and a dtype that casts to self's (dtype_error, as
/// LibTorch's "result type Float can't be cast to the desired output type Long"); nothing is
/// written otherwise. Recording (self or one of `others` requires grad), self takes over f's
/// history; f then reads a copy of self's old value when keep_old (its backward reads its input,
/// which the write destroys), else a header on self's storage that must not be saved.
Tensor& apply_inplace(Tensor& self, const char* name, std::initializer_list<const Tensor*> others,
                      const std::function<Tensor(const Tensor&)>& f, bool keep_old);

}  // namespace tg::detail
