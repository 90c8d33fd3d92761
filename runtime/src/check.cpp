#include "postbox/runtime/check.hpp"

#include <cstdio>
#include <cstdlib>

namespace postbox {

namespace {
std::string joined(const std::vector<FieldError::Part>& parts, std::string_view field_prefix) {
  std::string out;
  for (const FieldError::Part& part : parts) {
    if (part.is_field) out += field_prefix;
    out += part.text;
  }
  return out;
}
}  // namespace

FieldError::FieldError(std::vector<Part> parts) : InputError(joined(parts, "")), parts_(std::move(parts)) {}

std::string FieldError::render(std::string_view field_prefix) const { return one_line(joined(parts_, field_prefix)); }

std::string FieldError::render(const std::function<std::string(const std::string&)>& name_of) const {
  std::string out;
  for (const Part& part : parts_) out += part.is_field ? name_of(part.text) : part.text;
  return one_line(out);
}

std::string one_line(std::string_view text) {
  // Control characters first (an escape is four characters, counted in the word it stands in).
  std::string clean;
  clean.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n' || c == '\r' || c == '\t') {
      clean += ' ';
    } else if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      clean += "\\x";
      clean += hex[c >> 4];
      clean += hex[c & 0xf];
    } else {
      clean += ch;
    }
  }
  // Then every word (a run without spaces) longer than kMaxEchoedWord: its head and tail.
  constexpr std::size_t kHead = 44, kTail = 23;  // with "...": kMaxEchoedWord
  std::string out;
  out.reserve(clean.size());
  std::size_t i = 0;
  while (i < clean.size()) {
    if (clean[i] == ' ') {
      out += ' ';
      ++i;
      continue;
    }
    const std::size_t end = clean.find(' ', i);
    const std::size_t stop = end == std::string::npos ? clean.size() : end;
    if (stop - i > kMaxEchoedWord) {
      out.append(clean, i, kHead);
      out += "...";
      out.append(clean, stop - kTail, kTail);
    } else {
      out.append(clean, i, stop - i);
    }
    i = stop;
  }
  return out;
}

namespace internal {

void check_failed(const char* file, int line, const char* cond, const std::string& msg) noexcept {
  std::fprintf(stderr, "%s:%d: postbox: check failed: %s: %s\n", file, line, cond, msg.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace internal
}  // namespace postbox
