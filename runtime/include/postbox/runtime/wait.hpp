// The wait policy: spin for a time budget, then yield for a time budget, then block.
//
// The mailboxes (a receive, a send that finds its ring or queue full) and a Team (start, park,
// join) wait through wait_until(), so a team with far more threads than cores still makes
// progress: a waiter that cannot succeed soon gives its core to the thread it is waiting for.
// The barrier engine (barrier/src/engine.cpp) has its own wait on kernel threads (an adaptive
// spin, a co-location check, a timed yield, then a raw futex; docs/barrier.md, "Waiting") and
// waits through wait_until() only when the rank is a fiber.
//
// Budgets are nanoseconds of wall-clock time, not loop iterations, so they mean the same on
// every machine. Defaults come from the environment (POSTBOX_SPIN_NS, POSTBOX_YIELD_NS) when
// set, else from the constants below; set_default_wait_policy() changes them per process.
//
// Protocol between a waiter and a waker, on one std::atomic<std::uint32_t> "word":
//   waker:  make the condition true (stores with release or stronger), then wake(word).
//   waiter: wait_until(policy, word, pred) returns once pred() is true.
// Memory ordering: wake() is a seq_cst read-modify-write of word; wait_until() loads word
// (seq_cst) before each evaluation of pred(), and blocks only with that value, so a wake()
// that happens after the load changes word and unblocks the futex; a wake() that happened
// before it made pred() true already. Everything the waker wrote before wake() is visible to
// the waiter after wait_until() returns, provided pred() reads with acquire.
//
// On a fiber (a rank of a Team with RanksMode::fibers), a wait whose predicate is false
// switches to the next ready rank of the same worker thread instead of spinning, yielding or
// blocking; the worker evaluates the waiting ranks' predicates itself and resumes a rank only
// once its predicate is true. A worker whose ranks all wait spins, yields and blocks as above,
// on a process-wide epoch word instead of `word`: it runs every waiting rank's before_block()
// first, counts itself in blocked_workers (seq_cst), loads the epoch, re-polls every predicate
// and only then sleeps; wake(word), after changing word, loads blocked_workers (seq_cst) and,
// when some worker is blocked, bumps the epoch and wakes it. Either the waker sees the count or
// the worker's re-poll sees the condition (docs/fibers.md, "Blocking").
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>

#include "postbox/runtime/internal/inject.hpp"

namespace postbox {

namespace internal {

// A fiber's wait, type-erased for the worker that polls it (runtime/src/fiber.cpp).
struct FiberWait {
  bool (*pred)(void*);
  void* pred_obj;
  void (*before_block)(void*);
  void* before_block_obj;
};
// The FiberWait of a predicate and a before_block callable, both living in the caller's frame.
template <class Pred, class BeforeBlock>
FiberWait fiber_wait_of(Pred& pred, BeforeBlock& before_block) noexcept {
  return FiberWait{[](void* o) -> bool { return (*static_cast<Pred*>(o))(); },
                   const_cast<void*>(static_cast<const volatile void*>(&pred)),
                   [](void* o) { (*static_cast<BeforeBlock*>(o))(); },
                   const_cast<void*>(static_cast<const volatile void*>(&before_block))};
}
class FiberWorker;
// The worker whose rank fiber is running on this thread; null outside rank fibers.
FiberWorker* current_fiber_worker() noexcept;
// Suspends the running fiber until wait.pred() is true (the caller saw it false). Returns 1
// when the worker never blocked meanwhile, 2 when it ran wait.before_block() to block.
int fiber_wait(FiberWorker& worker, const FiberWait& wait);
// As fiber_wait(), for a rank parked between two runs of its Team: every parked rank of a
// worker waits for the same event (the next run), so the worker polls only the first parked
// rank's predicate and, once it holds, makes all of them ready (docs/fibers.md, "Scheduling").
int fiber_park(FiberWorker& worker, const FiberWait& wait);
// On a fiber: lets every other ready rank of the worker run once, then returns. Elsewhere a
// no-op. For polling loops (debug modes) that must not stop the worker's other ranks.
void fiber_yield();

// Workers that are blocked (or about to) with every rank waiting, and the word they sleep on.
inline std::atomic<std::uint32_t> blocked_workers{0};
inline std::atomic<std::uint32_t> blocked_epoch{0};
void wake_blocked_workers() noexcept;
// One line per live fiber worker naming its ranks suspended in a wait; empty when none. A racy
// snapshot, for watchdogs (tests/support/watchdog_main.cpp).
std::string fiber_waiting_report();
// Called after every change a fiber may wait for; one load when no worker is blocked.
inline void notify_blocked_workers() noexcept {
  // seq_cst: Dekker with the worker's increment of blocked_workers then its re-poll.
  if (blocked_workers.load(std::memory_order_seq_cst) != 0) [[unlikely]] wake_blocked_workers();
}

}  // namespace internal

struct WaitPolicy {
  // Time to spin re-checking the condition before the first yield.
  std::int64_t spin_ns = 20'000;
  // Further time to re-check with std::this_thread::yield() in between before blocking.
  std::int64_t yield_ns = 200'000;

  // Reads POSTBOX_SPIN_NS and POSTBOX_YIELD_NS over `defaults`. A malformed or negative value
  // throws InputError naming the variable.
  static WaitPolicy from_env(WaitPolicy defaults);
  static WaitPolicy from_env();
};

// The process-wide default: from_env() at first use, or what set_default_wait_policy() set.
const WaitPolicy& default_wait_policy();
// Not thread-safe against concurrent waiters: call before starting teams.
void set_default_wait_policy(const WaitPolicy& policy);

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Wakes every thread blocked in wait_until() on `word`, and every fiber worker blocked with all
// its ranks waiting. Cheap when nobody is blocked (libstdc++ skips the futex call when it
// counts no waiters; one load of blocked_workers).
inline void wake(std::atomic<std::uint32_t>& word) noexcept {
  internal::sync_point();
  // seq_cst: orders the condition's stores before the change of word seen by the futex.
  word.fetch_add(1, std::memory_order_seq_cst);
  word.notify_all();
  internal::notify_blocked_workers();
}

// Returns once pred() is true. pred must be cheap and side-effect free; it is called
// repeatedly (on a fiber, by the worker, from the worker's own stack). Returns the number of
// phases used (0 spin, 1 yield, 2 block), for tests; on a fiber 0 when pred() held at once, 1
// when the rank was switched out, 2 when its worker ran before_block() to block meanwhile.
//
// The first 64 polls come before the first clock read: most waits that succeed at all end
// within them, and a clock read costs as much as several polls. The spin budget is counted
// from that first read, so spinning lasts spin_ns plus those 64 polls (about 1 us).
//
// before_block() runs once, after the yield phase and before the first load of word: the
// place for a waiter to announce that it is about to sleep (see mailbox.hpp). pred() is
// re-evaluated after it, with the protocol above, so nothing it announces can be missed.
template <class Pred, class BeforeBlock>
int wait_until(const WaitPolicy& policy, std::atomic<std::uint32_t>& word, Pred&& pred, BeforeBlock&& before_block) {
  // Delay injection (internal/inject.hpp) at every phase change and every outer poll; empty
  // in normal builds.
  internal::sync_point();
  if (pred()) return 0;
  if (internal::FiberWorker* const worker = internal::current_fiber_worker()) [[unlikely]] {
    return internal::fiber_wait(*worker, internal::fiber_wait_of(pred, before_block));
  }
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 64; ++i) {
    cpu_relax();
    if (pred()) return 0;
  }
  const auto spin_end = clock::now() + std::chrono::nanoseconds(policy.spin_ns);
  // The clock is read every 64 polls: about 1 us of pause instructions.
  while (clock::now() < spin_end) {
    internal::sync_point();
    for (int i = 0; i < 64; ++i) {
      cpu_relax();
      if (pred()) return 0;
    }
  }
  const auto yield_end = spin_end + std::chrono::nanoseconds(policy.yield_ns);
  while (clock::now() < yield_end) {
    std::this_thread::yield();
    internal::sync_point();
    if (pred()) return 1;
  }
  internal::sync_point();
  before_block();
  for (;;) {
    internal::sync_point();
    // seq_cst: pairs with the fetch_add in wake(); see the protocol above.
    const std::uint32_t seen = word.load(std::memory_order_seq_cst);
    internal::sync_point();
    if (pred()) return 2;
    word.wait(seen, std::memory_order_seq_cst);
  }
}

template <class Pred>
int wait_until(const WaitPolicy& policy, std::atomic<std::uint32_t>& word, Pred&& pred) {
  return wait_until(policy, word, static_cast<Pred&&>(pred), [] {});
}

template <class Pred>
int wait_until(std::atomic<std::uint32_t>& word, Pred&& pred) {
  return wait_until(default_wait_policy(), word, static_cast<Pred&&>(pred));
}

}  // namespace postbox
