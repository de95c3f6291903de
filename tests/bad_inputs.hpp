#pragma once
/// The bad-input catalogue (tests/test_bad_inputs_<area>.cpp, and docs/errors.md, which holds the
/// same tables): for every public function, the invalid inputs it can be given and the typed
/// exception each must throw, as tables of rows {call, exception type, message substrings}.
///
/// Adding a row: one TG_BAD(call, type, "substring", ...) line in the table of its area (TG_BAD_AS
/// when the call is a helper that its source text would not explain), and the same row in
/// docs/errors.md (run the test with TG_CATALOGUE_MARKDOWN=1 to print its tables in that format).
/// The type is exact: a row expecting value_error fails on a plain tg::error, and a row expecting
/// tg::error (`error`) fails on any subclass. A call that does not throw the right exception today,
/// because another part of the library has still to be fixed, is written with TG_PENDING and what
/// happens today: the row is listed but not run (it may crash), until the fix lands and the row
/// becomes a TG_BAD.
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"

namespace tgtest {

/// tg::error and its subclasses (include/tapegrad/error.hpp), by name.
enum class Err {
    shape_error,
    dtype_error,
    device_error,
    backend_unavailable,
    autograd_error,
    io_error,
    value_error,
    out_of_memory,
    distributed_error,
    error
};

inline const char* err_name(Err e) {
    switch (e) {
        case Err::shape_error:
            return "shape_error";
        case Err::dtype_error:
            return "dtype_error";
        case Err::device_error:
            return "device_error";
        case Err::backend_unavailable:
            return "backend_unavailable";
        case Err::autograd_error:
            return "autograd_error";
        case Err::io_error:
            return "io_error";
        case Err::value_error:
            return "value_error";
        case Err::out_of_memory:
            return "out_of_memory";
        case Err::distributed_error:
            return "distributed_error";
        case Err::error:
            return "error";
    }
    return "?";
}

/// The most derived tapegrad type of e.
inline Err err_of(const tg::error& e) {
    if (dynamic_cast<const tg::shape_error*>(&e))
        return Err::shape_error;
    if (dynamic_cast<const tg::dtype_error*>(&e))
        return Err::dtype_error;
    if (dynamic_cast<const tg::device_error*>(&e))
        return Err::device_error;
    if (dynamic_cast<const tg::backend_unavailable*>(&e))
        return Err::backend_unavailable;
    if (dynamic_cast<const tg::autograd_error*>(&e))
        return Err::autograd_error;
    if (dynamic_cast<const tg::io_error*>(&e))
        return Err::io_error;
    if (dynamic_cast<const tg::value_error*>(&e))
        return Err::value_error;
    if (dynamic_cast<const tg::out_of_memory*>(&e))
        return Err::out_of_memory;
    if (dynamic_cast<const tg::distributed_error*>(&e))
        return Err::distributed_error;
    return Err::error;
}

/// One row: what is passed (the call's source text), what it must throw, what the message must
/// name, and, for a row that cannot pass yet, what happens today (TG_PENDING).
struct BadInput {
    std::string call;
    std::function<void()> run;
    Err expect;
    std::vector<std::string> needles;
    std::string pending;
};

// clang-format off
/// A row: the call, the type it throws (a name of Err), the substrings of its message.
#define TG_BAD(call, type, ...) \
    ::tgtest::BadInput{#call, [&] { (void)(call); }, ::tgtest::Err::type, {__VA_ARGS__}, ""}
/// As TG_BAD, shown as `what` (for a call to a helper that does several things).
#define TG_BAD_AS(what, call, type, ...) \
    ::tgtest::BadInput{what, [&] { (void)(call); }, ::tgtest::Err::type, {__VA_ARGS__}, ""}
/// A row that cannot pass yet: listed with what happens `today`, not run.
#define TG_PENDING(today, call, type, ...) \
    ::tgtest::BadInput{#call, [&] { (void)(call); }, ::tgtest::Err::type, {__VA_ARGS__}, today}
// clang-format on

/// Prints a table as docs/errors.md writes it: | call | exception | message names |.
inline void print_markdown(const std::string& title, const std::vector<BadInput>& rows) {
    std::cout << "\n### " << title << "\n\n| what you pass | what you get | the message names |\n"
              << "|---|---|---|\n";
    for (const BadInput& r : rows) {
        std::string call = r.call, names;
        for (size_t i = 0; i < call.size(); ++i)  // a | would end the cell
            if (call[i] == '|')
                call.replace(i++, 1, "\\|");
        for (const char* gap : {"( ", " ->"})  // where a call was split over lines
            for (size_t at; (at = call.find(gap)) != std::string::npos;)
                call.erase(gap[0] == '(' ? at + 1 : at, 1);
        for (const auto& n : r.needles)
            names += (names.empty() ? "`" : ", `") + n + "`";
        std::cout << "| `" << call << "` | `" << err_name(r.expect) << "`"
                  << (r.pending.empty() ? "" : " (planned; today: " + r.pending + ")") << " | "
                  << names << " |\n";
    }
}

/// Runs every row of a table (TG_CATALOGUE_MARKDOWN=1: prints it first).
inline void check_table(const std::string& title, const std::vector<BadInput>& rows) {
    if (const char* md = std::getenv("TG_CATALOGUE_MARKDOWN"); md && std::string(md) == "1")
        print_markdown(title, rows);
    for (const BadInput& r : rows) {
        BOOST_TEST_CONTEXT(title << ": " << r.call) {
            if (!r.pending.empty()) {
                BOOST_TEST_MESSAGE("pending, not run: " << r.call << " (" << r.pending << ")");
                continue;
            }
            try {
                r.run();
                BOOST_ERROR("expected " << err_name(r.expect) << ", nothing was thrown");
            } catch (const tg::error& e) {
                const std::string msg = e.what();
                BOOST_TEST_CONTEXT("message: \"" << msg << "\"") {
                    BOOST_TEST(err_name(err_of(e)) == err_name(r.expect));
                    for (const auto& n : r.needles)
                        BOOST_TEST(msg.find(n) != std::string::npos,
                                   "message lacks \"" << n << "\"");
                }
            } catch (const std::exception& e) {
                BOOST_ERROR("not a tg::error: " << e.what());
            }
        }
    }
}

}  // namespace tgtest
