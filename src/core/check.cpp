#include "tapegrad/check.hpp"

#include <iostream>
#include <mutex>

namespace tg::check_impl {

std::string internal_assert_message(const char* cond, const char* file, uint32_t line,
                                    const std::string& message) {
    std::string out =
        std::string(cond) + " INTERNAL ASSERT FAILED at \"" + file + "\":" + std::to_string(line);
    if (!message.empty())
        out += ", " + message;
    return out;
}

void warn(const char* func, const char* file, uint32_t line, const std::string& message) {
    // one line at a time when threads warn together
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    std::cerr << "[W " << file << ":" << line << "] Warning: " << message << " (function " << func
              << ")" << std::endl;
}

}  // namespace tg::check_impl
