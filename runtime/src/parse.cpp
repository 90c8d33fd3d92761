#include "postbox/runtime/parse.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

std::string quoted(std::string_view what, std::string_view text, const char* must) {
  return std::string(what) + " must be " + must + ", got '" + std::string(text) + "'";
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

std::int64_t parse_int(std::string_view text, std::string_view what, std::int64_t lo, std::int64_t hi) {
  const bool neg = !text.empty() && text.front() == '-';
  if (!all_digits(neg ? text.substr(1) : text)) throw InputError(quoted(what, text, "an integer"));
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  // Digits that overflow 64 bits are still a number the user typed: report it against the bound.
  const bool below = ec == std::errc::result_out_of_range ? neg : v < lo;
  const bool above = ec == std::errc::result_out_of_range ? !neg : v > hi;
  if (below && lo == 0) throw InputError(std::string(what) + " must not be negative, got " + std::string(text));
  if (below) throw InputError(std::string(what) + " must be at least " + std::to_string(lo) + ", got " + std::string(text));
  if (above) throw InputError(std::string(what) + " must be at most " + std::to_string(hi) + ", got " + std::string(text));
  PB_CHECK(ec == std::errc() && end == text.data() + text.size(), "parse_int: digits not consumed");
  return v;
}

std::uint64_t parse_uint(std::string_view text, std::string_view what, std::uint64_t hi) {
  if (!text.empty() && text.front() == '-' && all_digits(text.substr(1))) {
    throw InputError(std::string(what) + " must not be negative, got " + std::string(text));
  }
  if (!all_digits(text)) throw InputError(quoted(what, text, "an unsigned integer"));
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  if (ec == std::errc::result_out_of_range || v > hi) {
    throw InputError(std::string(what) + " must be at most " + std::to_string(hi) + ", got " + std::string(text));
  }
  PB_CHECK(ec == std::errc() && end == text.data() + text.size(), "parse_uint: digits not consumed");
  return v;
}

double parse_real(std::string_view text, std::string_view what) {
  // from_chars takes "inf", "nan" and "infinity" too; they are refused below as not finite.
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::general);
  if (text.empty() || end != text.data() + text.size() || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    throw InputError(quoted(what, text, "a number"));
  }
  if (ec == std::errc::result_out_of_range) throw InputError(quoted(what, text, "a number within the range of a double"));
  if (!std::isfinite(v)) throw InputError(quoted(what, text, "a finite number"));
  return v;
}

std::vector<std::string_view> split_list(std::string_view text, char sep, std::string_view what) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = text.find(sep, start);
    const std::string_view item = text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start);
    if (item.empty()) {
      throw InputError(std::string(what) + " has an empty element" + (text.empty() ? "" : " in '" + std::string(text) + "'"));
    }
    out.push_back(item);
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

}  // namespace postbox
