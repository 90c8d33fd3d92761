// Error conventions shared by every postbox area.
//
// Two kinds of failure, never mixed:
//  * Bad input from a user (a CLI argument, a profile file, an environment variable):
//    throw postbox::InputError with a one-line message that names the problem. The CLI
//    prints it and exits with code 2. Library entry points that take user-facing values
//    (parsers, builders given p, root, lambda...) validate and throw InputError.
//  * Programming errors (library misuse such as a rank outside the team inside a running
//    program, a broken invariant): PB_CHECK fails fast, printing file:line and the message
//    to stderr, then aborts. Death tests cover these.
#pragma once

#include <stdexcept>
#include <string>

namespace postbox {

// Recoverable, user-caused error. what() is one line, no trailing newline.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace internal {
[[noreturn]] void check_failed(const char* file, int line, const char* cond, const std::string& msg) noexcept;
}  // namespace internal

}  // namespace postbox

// PB_CHECK(cond, msg): aborts with "file:line: postbox: check failed: cond: msg" when cond is false.
// msg may be any expression convertible to std::string; it is evaluated only on failure.
#define PB_CHECK(cond, msg)                                                          \
  do {                                                                               \
    if (!(cond)) [[unlikely]] {                                                      \
      ::postbox::internal::check_failed(__FILE__, __LINE__, #cond, std::string(msg)); \
    }                                                                                \
  } while (0)
