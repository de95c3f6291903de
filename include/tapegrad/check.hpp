#pragma once
/// LibTorch's error and warning macros and c10::str, for programs ported by renaming
/// (scripts/port-from-libtorch.sh turns TORCH_X into TG_X and AT_ASSERT into TG_ASSERT):
///
///     TG_CHECK(x.dim() == 2, "expected a matrix, got ", x.dim(), " dims");   // TORCH_CHECK
///     TG_INTERNAL_ASSERT(n >= 0);                                            // AT_ASSERT too
///     TG_WARN("lr ", lr, " is large");                                       // TORCH_WARN
///     std::string s = tg::str("sample-", k, ".pt");                          // torch::str
///
/// TG_CHECK throws tg::error (c10::Error; catch it as tg::Error) whose what() is the message:
/// the arguments streamed together with operator<< as c10::str does, or, with none, LibTorch's
/// "Expected <cond> to be true, but got false." (without its request to report to PyTorch).
/// The message arguments are evaluated only on failure. TG_CHECK_VALUE, TG_CHECK_INDEX and
/// TG_CHECK_TYPE throw tg::value_error, tg::shape_error and tg::dtype_error (c10::ValueError,
/// IndexError and TypeError). TG_INTERNAL_ASSERT (= TG_ASSERT, TG_ASSERTM) throws tg::error
/// "<cond> INTERNAL ASSERT FAILED at "file":line, <message>"; TG_ERROR(...) (AT_ERROR) throws
/// tg::error with the message. TG_WARN writes "[W file:line] Warning: <message> (function f)"
/// to stderr, as LibTorch's default handler without glog; TG_WARN_ONCE only the first time
/// its line runs. LibTorch's what() also carries a backtrace; tapegrad's is the message alone.
#include <cstdint>
#include <sstream>
#include <string>

#include "tapegrad/error.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// The arguments written one after the other with operator<< (c10::str): str("x-", 3, ".pt")
/// is "x-3.pt"; bools print as 1/0 and doubles as std::ostream prints them, as in LibTorch.
template <class... Args>
std::string str(const Args&... args) {
    std::ostringstream os;
    ((void)(os << args), ...);
    return os.str();
}

namespace check_impl {
/// The message of a failed check: the default one, or the arguments streamed together.
inline std::string check_message(const char* fallback) {
    return fallback;
}
template <class... Args>
std::string check_message(const char* /*fallback*/, const Args&... args) {
    return str(args...);
}
/// "<cond> INTERNAL ASSERT FAILED at "file":line, <message>".
std::string internal_assert_message(const char* cond, const char* file, uint32_t line,
                                    const std::string& message);
/// Writes "[W file:line] Warning: message (function func)" to std::cerr.
void warn(const char* func, const char* file, uint32_t line, const std::string& message);
}  // namespace check_impl

}  // namespace tg

#define TG_CHECK_WITH_(error_type, cond, ...)                                     \
    do {                                                                          \
        if (!(cond))                                                              \
            throw error_type(::tg::check_impl::check_message(                     \
                "Expected " #cond " to be true, but got false.", ##__VA_ARGS__)); \
    } while (false)

/// TORCH_CHECK(cond, message parts...): throws tg::error when cond is false.
#define TG_CHECK(cond, ...) TG_CHECK_WITH_(::tg::error, cond, ##__VA_ARGS__)
/// TORCH_CHECK_VALUE, TORCH_CHECK_INDEX, TORCH_CHECK_TYPE.
#define TG_CHECK_VALUE(cond, ...) TG_CHECK_WITH_(::tg::value_error, cond, ##__VA_ARGS__)
#define TG_CHECK_INDEX(cond, ...) TG_CHECK_WITH_(::tg::shape_error, cond, ##__VA_ARGS__)
#define TG_CHECK_TYPE(cond, ...) TG_CHECK_WITH_(::tg::dtype_error, cond, ##__VA_ARGS__)
/// TORCH_CHECK_ARG(cond, argN, ...): "invalid argument argN: ..." as LibTorch.
#define TG_CHECK_ARG(cond, argN, ...) TG_CHECK(cond, "invalid argument ", argN, ": ", __VA_ARGS__)

/// TORCH_INTERNAL_ASSERT(cond, message parts...); AT_ASSERT and AT_ASSERTM are the same.
#define TG_INTERNAL_ASSERT(cond, ...)                                                       \
    do {                                                                                    \
        if (!(cond))                                                                        \
            throw ::tg::error(::tg::check_impl::internal_assert_message(                    \
                #cond, __FILE__, static_cast<uint32_t>(__LINE__), ::tg::str(__VA_ARGS__))); \
    } while (false)
#define TG_ASSERT(...) TG_INTERNAL_ASSERT(__VA_ARGS__)
#define TG_ASSERTM(cond, ...) TG_INTERNAL_ASSERT(cond, __VA_ARGS__)
/// TORCH_INTERNAL_ASSERT_DEBUG_ONLY: checks only without NDEBUG, as LibTorch's.
#ifdef NDEBUG
#define TG_INTERNAL_ASSERT_DEBUG_ONLY(...) \
    while (false)                          \
    TG_INTERNAL_ASSERT(__VA_ARGS__)
#else
#define TG_INTERNAL_ASSERT_DEBUG_ONLY(...) TG_INTERNAL_ASSERT(__VA_ARGS__)
#endif
/// AT_ERROR(message parts...): throws tg::error with the message.
#define TG_ERROR(...) throw ::tg::error(::tg::str(__VA_ARGS__))

/// TORCH_WARN(message parts...): a warning on stderr naming the file, line and function.
#define TG_WARN(...)                                                            \
    ::tg::check_impl::warn(__func__, __FILE__, static_cast<uint32_t>(__LINE__), \
                           ::tg::str(__VA_ARGS__))
/// TORCH_WARN_ONCE: TG_WARN the first time this line runs (in any thread), never again.
#define TG_WARN_ONCE(...)                         \
    do {                                          \
        static const bool tg_warned_once_ = [&] { \
            TG_WARN(__VA_ARGS__);                 \
            return true;                          \
        }();                                      \
        (void)tg_warned_once_;                    \
    } while (false)

#pragma GCC visibility pop
