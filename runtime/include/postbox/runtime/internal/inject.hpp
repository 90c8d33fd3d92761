// Adversarial schedules for tests (internal; not part of the public API).
//
// In a build configured with -DPOSTBOX_INJECT_DELAYS=ON, every synchronisation step of the
// barrier engine and of the mailboxes calls sync_point() first; while a test has injection
// started, sync_point() may yield or sleep for a few microseconds, as decided by a generator
// seeded from (seed, the calling thread's key). The same seed gives every thread the same
// sequence of decisions, so a failing seed can be replayed (the OS scheduler still adds its
// own variation; a seed that fails once usually fails again within a few runs).
// In other builds sync_point() is an empty inline function and inject_compiled() is false.
#pragma once

#include <atomic>
#include <cstdint>

namespace postbox::internal {

struct InjectConfig {
  std::uint64_t seed = 1;
  // Per sync point, out of 1000: the chance of a std::this_thread::yield() and of a sleep.
  std::uint32_t yield_permille = 150;
  std::uint32_t sleep_permille = 15;
  // A sleep lasts 1..max_sleep_us microseconds (uniform).
  std::uint32_t max_sleep_us = 30;
};

// True in a build with POSTBOX_INJECT_DELAYS.
bool inject_compiled() noexcept;
// Starts injecting with `config` in every thread (no effect where !inject_compiled()).
void inject_start(const InjectConfig& config) noexcept;
void inject_stop() noexcept;
// Gives the calling thread its key (e.g. its rank): its decisions are the sequence of
// (seed, key). On a rank fiber (RanksMode::fibers) the key and the sequence belong to the
// fiber, and an injected yield switches to the worker's other ready ranks (fiber_yield()). Unkeyed threads take keys 1000000, 1000001, ... in the order they first
// reach a sync point. Resets the thread's sequence.
void inject_bind_thread(std::uint64_t key) noexcept;
// Sync points passed, and delays injected, since inject_start (all threads).
std::uint64_t inject_points() noexcept;
std::uint64_t inject_delays() noexcept;

#if defined(POSTBOX_INJECT_DELAYS)
extern std::atomic<bool> g_inject_on;
void sync_point_slow() noexcept;
inline void sync_point() noexcept {
  // relaxed: a test switch; a thread that sees it late merely injects a little later.
  if (g_inject_on.load(std::memory_order_relaxed)) sync_point_slow();
}
#else
inline void sync_point() noexcept {}
#endif

}  // namespace postbox::internal
