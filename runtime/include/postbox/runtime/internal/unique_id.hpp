// Process-unique object ids for caches: unlike an address, an id is never reused after the
// object it named is gone, so a cache keyed on it cannot hand a new object an old one's entry.
#pragma once

#include <atomic>
#include <cstdint>

namespace postbox::internal {

// 1, 2, 3 ... (0 is never returned: callers may use it for "none").
inline std::uint64_t next_unique_id() noexcept {
  static std::atomic<std::uint64_t> next{1};
  // relaxed: only uniqueness matters, which the atomic increment gives in any order.
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace postbox::internal
