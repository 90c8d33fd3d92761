// Two facts every synchronisation structure of postbox shares: the cache line it pads its hot
// words to, and the wrap-safe comparison of 64-bit phase counters. The mailboxes' rings, the
// barrier engine, the cluster barrier, the Team and the fiber workers take them from here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace postbox::internal {

// One cache line. Written out rather than std::hardware_destructive_interference_size, whose
// value g++ declines to promise across compiler versions (-Winterference-size).
inline constexpr std::size_t kCacheLine = 64;

// Wrap-safe "phase a is phase b or a later one": true when a − b, read as a signed 64-bit
// number, is not negative, so the answer is right across the wrap from 2^64 − 1 to 0 as long as
// the two phases are less than 2^63 apart.
constexpr bool reached(std::uint64_t a, std::uint64_t b) noexcept { return static_cast<std::int64_t>(a - b) >= 0; }

}  // namespace postbox::internal
