// splitmix64 (internal): a small, well-mixed 64-bit generator whose whole state is one word,
// used where a sequence must be the same on every platform (delay injection's decisions, the
// emulator's noise offsets and draws), which the standard's distributions do not promise.
#pragma once

#include <cstdint>

namespace postbox::internal {

inline constexpr std::uint64_t kSplitmixGolden = 0x9E3779B97F4A7C15ULL;

// The output for state x: x advanced by the golden gamma, then mixed.
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += kSplitmixGolden;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The next output of the sequence whose state is s (s advances).
constexpr std::uint64_t splitmix64_next(std::uint64_t& s) noexcept {
  const std::uint64_t out = splitmix64(s);
  s += kSplitmixGolden;
  return out;
}

}  // namespace postbox::internal
