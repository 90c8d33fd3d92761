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

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace postbox {

// The one rule for user text echoed in an error line (the CLI's stderr and the explorer's
// 400 bodies alike, since both print InputError::what()): line breaks and tabs become spaces,
// every other control character (ESC, NUL, DEL, ...) is written as \xNN, so a quoted value can
// neither break the line nor drive the terminal; and a run of more than kMaxEchoedWord
// characters without a space (a value pasted whole, 100 kB of it) keeps its first 44 and last
// 23 around "..." (70 in all), so that a message with its value stays within 200 characters
// while still showing where the value begins and ends (a path of a usual depth stays whole).
inline constexpr std::size_t kMaxEchoedWord = 70;
std::string one_line(std::string_view text);

// Recoverable, user-caused error. what() is one line, no trailing newline: a line break in the
// message (a value quoted as typed may hold one) becomes a space.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(one_line(what)) {}
  explicit InputError(const char* what) : InputError(std::string(what)) {}
};

// An InputError whose message names fields of a typed request (the algorithm, the mesh, the
// placement) rather than the options or query parameters a front end spells them with: the
// library names the field, the front end maps it. what() writes a field as its bare name
// ("unknown algo 'ring' for op bcast"); render(prefix) writes it after prefix (the CLI and the
// explorer, whose query parameters are the CLI's option names, render with "--").
class FieldError : public InputError {
 public:
  struct Part {
    std::string text;
    bool is_field = false;
  };
  static Part field(std::string name) { return Part{std::move(name), true}; }
  explicit FieldError(std::vector<Part> parts);
  [[nodiscard]] std::string render(std::string_view field_prefix) const;
  // Each field as name_of(field) writes it (a file's reader: "field \"algo\"").
  [[nodiscard]] std::string render(const std::function<std::string(const std::string&)>& name_of) const;

 private:
  std::vector<Part> parts_;
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
