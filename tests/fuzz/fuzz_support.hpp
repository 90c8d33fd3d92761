// Shared by the libFuzzer targets of the parsers users feed files to. Each target
// hands the input to one parser: it must return or throw InputError (never crash, hang, throw
// anything else or read out of bounds: ASan and UBSan abort). What it accepts must be what the
// input said: every field the parser's own export writes back equals the input's field (a real
// 1.5 read as 1, or 4294967297 as 1, is a silent clamp: abort).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "postbox/runtime/check.hpp"

namespace postbox::fuzz {

[[noreturn]] inline void violation(const std::string& what) {
  std::fprintf(stderr, "fuzz: VIOLATION: %s\n", what.c_str());
  std::abort();
}

// A refusal keeps check.hpp's promise: InputError's what() is one non-empty line.
inline void one_line(const postbox::InputError& e) {
  const std::string_view m = e.what();
  if (m.empty()) violation("an InputError with an empty message");
  if (m.find_first_of("\n\r") != std::string_view::npos) violation("an InputError of more than one line: " + std::string(m));
}

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Every key of `exported` that `input` also has holds the same value (numbers by value, so 8 and
// 8.0 agree), recursively through objects and same-length arrays.
inline void same_where_given(const nlohmann::json& input, const nlohmann::json& exported, const std::string& at) {
  if (input.is_object() && exported.is_object()) {
    for (const auto& [key, value] : exported.items())
      if (input.contains(key)) same_where_given(input.at(key), value, at + "." + key);
    return;
  }
  if (input.is_array() && exported.is_array() && input.size() == exported.size()) {
    for (std::size_t i = 0; i < input.size(); ++i) same_where_given(input[i], exported[i], at + "[" + std::to_string(i) + "]");
    return;
  }
  if (input != exported) violation("accepted " + at + " = " + input.dump() + " but read it as " + exported.dump());
}

}  // namespace postbox::fuzz
