// libFuzzer target: GOAL schedules (goal_parse.hpp: parse_goal, the reader `sim --goal` uses too).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/frontend/goal_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)postbox::parse_goal(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
  }
  return 0;
}
