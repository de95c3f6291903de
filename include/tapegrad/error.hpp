#pragma once
/// Typed exceptions (DESIGN.md §1.6). Every message names the op and the shapes involved.
#include <stdexcept>
#include <string>
#pragma GCC visibility push(default)

namespace tg {

/// Base of every tapegrad exception.
struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
    /// The message, as c10::Error's msg() and what_without_backtrace() (tapegrad's what() has
    /// no backtrace).
    std::string msg() const { return what(); }
    const char* what_without_backtrace() const noexcept { return what(); }
};
/// Incompatible shapes, out-of-range dims or indices.
struct shape_error : error {
    using error::error;
};
/// Wrong or mismatched dtypes (e.g. int64 asked to require grad).
struct dtype_error : error {
    using error::error;
};
/// Tensors on different devices in one op.
struct device_error : error {
    using error::error;
};
/// A device that does not exist or was not built in.
struct backend_unavailable : error {
    using error::error;
};
/// Misuse of autograd: second backward without retain_graph, modified saved tensors, anomalies.
struct autograd_error : error {
    using error::error;
};
/// Missing, truncated or corrupt files.
struct io_error : error {
    using error::error;
};
/// An argument whose value is out of its domain: a negative learning rate, a dropout probability
/// outside [0, 1], an integer division by zero, a NaN bound (PyTorch's ValueError).
struct value_error : error {
    using error::error;
};
/// The host or a device has no memory left for an allocation (PyTorch's OutOfMemoryError).
struct out_of_memory : error {
    using error::error;
};

/// LibTorch's exception names (c10::Error, c10::ValueError, c10::IndexError, c10::TypeError),
/// so that `catch (const c10::Error& e)` ports by renaming.
using Error = error;
using ValueError = value_error;
using IndexError = shape_error;
using TypeError = dtype_error;

}  // namespace tg

#pragma GCC visibility pop
