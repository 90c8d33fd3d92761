#include "postbox/runtime/internal/inject.hpp"
#include "postbox/runtime/internal/splitmix.hpp"

#include <chrono>
#include <thread>
#include <unordered_map>

#include "fiber.hpp"
#include "postbox/runtime/wait.hpp"

namespace postbox::internal {

#if defined(POSTBOX_INJECT_DELAYS)

std::atomic<bool> g_inject_on{false};

namespace {

std::atomic<std::uint64_t> g_seed{1};
std::atomic<std::uint32_t> g_yield{0};
std::atomic<std::uint32_t> g_sleep{0};
std::atomic<std::uint32_t> g_max_sleep{1};
std::atomic<std::uint64_t> g_epoch{0};  // bumped by inject_start: threads reseed
std::atomic<std::uint64_t> g_next_key{1'000'000};
std::atomic<std::uint64_t> g_points{0};
std::atomic<std::uint64_t> g_delays{0};

std::uint64_t next(std::uint64_t& s) noexcept { return splitmix64_next(s); }

struct ThreadState {
  bool keyed = false;
  std::uint64_t key = 0;
  std::uint64_t epoch = ~0ULL;
  std::uint64_t state = 0;
};
thread_local ThreadState t_state;

// A rank that is a fiber has a sequence of its own (its key is its own, and several ranks share
// the worker's thread); the map lives as long as the worker thread.
ThreadState& state() noexcept {
  if (const void* f = current_fiber()) {
    thread_local std::unordered_map<const void*, ThreadState> per_fiber;
    return per_fiber[f];
  }
  return t_state;
}

void reseed(ThreadState& t) noexcept {
  if (!t.keyed) {
    t.key = g_next_key.fetch_add(1, std::memory_order_relaxed);
    t.keyed = true;
  }
  t.epoch = g_epoch.load(std::memory_order_acquire);
  t.state = g_seed.load(std::memory_order_relaxed) * 0x100000001b3ULL ^ (t.key + 0x632be59bd9b4e019ULL);
}

}  // namespace

bool inject_compiled() noexcept { return true; }

void inject_start(const InjectConfig& c) noexcept {
  g_seed.store(c.seed, std::memory_order_relaxed);
  g_yield.store(c.yield_permille, std::memory_order_relaxed);
  g_sleep.store(c.sleep_permille, std::memory_order_relaxed);
  g_max_sleep.store(c.max_sleep_us == 0 ? 1 : c.max_sleep_us, std::memory_order_relaxed);
  g_points.store(0, std::memory_order_relaxed);
  g_delays.store(0, std::memory_order_relaxed);
  // release: a thread that sees the new epoch sees the parameters above.
  g_epoch.fetch_add(1, std::memory_order_release);
  g_inject_on.store(true, std::memory_order_relaxed);
}

void inject_stop() noexcept { g_inject_on.store(false, std::memory_order_relaxed); }

void inject_bind_thread(std::uint64_t key) noexcept {
  ThreadState& t = state();
  t.keyed = true;
  t.key = key;
  t.epoch = ~0ULL;
}

std::uint64_t inject_points() noexcept { return g_points.load(std::memory_order_relaxed); }
std::uint64_t inject_delays() noexcept { return g_delays.load(std::memory_order_relaxed); }

void sync_point_slow() noexcept {
  ThreadState& t = state();
  if (t.epoch != g_epoch.load(std::memory_order_acquire)) reseed(t);
  g_points.fetch_add(1, std::memory_order_relaxed);
  const auto roll = static_cast<std::uint32_t>(next(t.state) % 1000);
  const std::uint32_t y = g_yield.load(std::memory_order_relaxed);
  const std::uint32_t s = g_sleep.load(std::memory_order_relaxed);
  if (roll < s) {
    const std::uint32_t us = 1 + static_cast<std::uint32_t>(next(t.state) % g_max_sleep.load(std::memory_order_relaxed));
    g_delays.fetch_add(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::microseconds(us));
  } else if (roll < s + y) {
    g_delays.fetch_add(1, std::memory_order_relaxed);
    // On a fiber the yield is a switch to the worker's other ready ranks: an interleaving of
    // the ranks of one worker that their waits alone would never produce. (A sleep, above,
    // stalls the whole worker, as a preempted kernel thread would.)
    if (current_fiber() != nullptr) {
      fiber_yield();
    } else {
      std::this_thread::yield();
    }
  }
}

#else

bool inject_compiled() noexcept { return false; }
void inject_start(const InjectConfig&) noexcept {}
void inject_stop() noexcept {}
void inject_bind_thread(std::uint64_t) noexcept {}
std::uint64_t inject_points() noexcept { return 0; }
std::uint64_t inject_delays() noexcept { return 0; }

#endif

}  // namespace postbox::internal
