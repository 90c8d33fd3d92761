// The wait policy: spin for a time budget, then yield for a time budget, then block.
//
// Every blocking wait of the library goes through wait_until(): the mailboxes (a receive, a
// send that finds its ring or queue full), a Team (start, park, join) and the barrier engine
// (barrier/src/engine.cpp). A waiter that cannot succeed soon gives its core to the thread it
// is waiting for, so a team with far more threads than cores still makes progress. It has two
// modes: fixed budgets (the mailboxes, a Team), and an adaptive mode in which a waiter's spin
// budget and yield phase follow how its own last waits ended (the barrier's ranks;
// docs/barrier.md, "Waiting").
//
// Budgets are nanoseconds of wall-clock time, not loop iterations, so they mean the same on
// every machine. Defaults come from the environment (POSTBOX_SPIN_NS, POSTBOX_YIELD_NS) when
// set, else from the constants below; set_default_wait_policy() changes them per process.
//
// Protocol between a waiter and a waker, on one std::atomic<std::uint32_t> "word":
//   waker:  make the condition true (stores with release or stronger), then wake(word).
//   waiter: wait_until(policy, word, pred) returns once pred() is true.
// Memory ordering: wake() is a seq_cst read-modify-write of word; wait_until() loads word
// (seq_cst) before each evaluation of pred() in its block phase, and blocks only with that
// value, so a wake() that happens after the load changes word and unblocks the futex; a wake()
// that happened before it made pred() true already. Everything the waker wrote before wake()
// is visible to the waiter after wait_until() returns, provided pred() reads with acquire.
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

// One waiter's adaptive state for wait_until()'s adaptive mode, kept by the waiter from one
// wait to the next (a barrier keeps one per rank). Not shared between threads.
struct AdaptiveWait {
  // The spin budget at the start and after reset(), at most the policy's.
  static constexpr std::int64_t kInitialSpinNs = 20'000;
  std::int64_t spin_ns = kInitialSpinNs;  // the current spin budget
  std::uint32_t probe = 0;                // waits since the last probe while the budget is 0
  std::uint32_t no_yield = 0;             // waits left that skip the yield phase
  std::uint32_t yield_backoff = 0;        // the length of the last such back-off
  // The waiter shares its CPU with the threads it waits for (more threads than CPUs): a slow
  // yield after which the condition holds handed the core to them and counts as a success. Else
  // (the default) such a yield lost a time slice to another process, and backs off.
  bool shares_cpu = false;
  void reset(const WaitPolicy& policy) noexcept { spin_ns = policy.spin_ns < kInitialSpinNs ? policy.spin_ns : kInitialSpinNs; }
};

namespace internal {

// The futex on a 32-bit word. Not std::atomic::wait: libstdc++'s (GCC 12) spins and calls
// sched_yield four times before the futex, and on a loaded machine every yield hands the core
// to another process for a whole time slice; wait_until() has spun and yielded by its own
// budgets already. futex_wait returns at once when word != seen; spurious returns are the
// caller's loop's business.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t seen) noexcept;
void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept;

// The spin phase: polls pred() for budget_ns of wall-clock time, the first `polls` times
// before the first clock read (most waits that succeed at all end within them, and a clock
// read costs as much as several polls), then reading the clock every 64 polls (about 1 us of
// pause instructions). True when pred() held.
template <class Pred>
bool spin_phase(std::int64_t budget_ns, int polls, Pred& pred) {
  for (int i = 0; i < polls; ++i) {
    cpu_relax();
    if (pred()) return true;
  }
  using clock = std::chrono::steady_clock;
  const auto spin_end = clock::now() + std::chrono::nanoseconds(budget_ns);
  while (clock::now() < spin_end) {
    internal::sync_point();
    for (int i = 0; i < 64; ++i) {
      cpu_relax();
      if (pred()) return true;
    }
  }
  return false;
}

// The adaptive spin: a wait that ends while spinning grows the budget by half plus 1 us (at
// most policy.spin_ns), a spin that times out halves it, and below 1 us it is 0 (no spin)
// except for a 2 us probe every 64th wait. A partner that shares this core, or that another
// process preempted, does not make pred() true while this thread spins: there spinning only
// delays it, and the budget falls to 0; a co-scheduled partner's quick waits raise it again.
// A wait that ends within the first 32 polls counts as a success like any other (a probe that
// succeeds there must restore the budget, or the waiter stays without spin although its
// partner now runs).
template <class Pred>
bool adaptive_spin(const WaitPolicy& policy, AdaptiveWait& a, Pred& pred) {
  std::int64_t budget = a.spin_ns;
  if (budget == 0 && policy.spin_ns > 0 && (++a.probe & 63U) == 0) budget = policy.spin_ns < 2'000 ? policy.spin_ns : 2'000;
  if (budget <= 0) return false;
  if (spin_phase(budget, 32, pred)) {
    const std::int64_t grown = budget + budget / 2 + 1'000;
    a.spin_ns = grown < policy.spin_ns ? grown : policy.spin_ns;
    return true;
  }
  a.spin_ns = budget / 2 < 1'000 ? 0 : budget / 2;
  return false;
}

// One yield and the clock that times it: adaptive_yield's default; tests pass a fake with the
// same two members to make a yield look fast or slow.
struct SchedYield {
  using time_point = std::chrono::steady_clock::time_point;
  time_point now() const noexcept { return std::chrono::steady_clock::now(); }
  void yield() const noexcept { std::this_thread::yield(); }
};

// The adaptive yield: a yield hands the core to a thread that still has to make pred() true,
// which is cheaper than a futex sleep and wake-up; but when another process is runnable here,
// one yield can cost a whole time slice. So each yield is timed: one that took longer than
// 200 us ends the yield phase and turns yielding off for the next 16, 32, ..., 1024 waits; a
// wait that ends after fast yields halves that back-off. A slow yield after which pred() holds
// is a success only for a waiter that shares its CPU with the threads it waits for
// (AdaptiveWait::shares_cpu: the partner did its work in the time given to it). For one that
// does not, its partner runs on another CPU and arrived during the slice given to another
// process: that backs off too (counted as a success, it let two ranks and a CPU-bound process on
// 2 CPUs pay a 2 ms slice per barrier for whole runs).
template <class Pred, class Yield = SchedYield>
bool adaptive_yield(const WaitPolicy& policy, AdaptiveWait& a, Pred& pred, const Yield& y = Yield{}) {
  constexpr auto kSlowYield = std::chrono::microseconds(200);
  if (policy.yield_ns <= 0) return false;
  if (a.no_yield > 0) {
    --a.no_yield;
    return false;
  }
  const auto back_off = [&a] {
    const std::uint32_t doubled = a.yield_backoff * 2 < 16 ? 16 : a.yield_backoff * 2;
    a.yield_backoff = doubled > 1024 ? 1024 : doubled;
    a.no_yield = a.yield_backoff;
  };
  auto prev = y.now();
  const auto yield_end = prev + std::chrono::nanoseconds(policy.yield_ns);
  for (;;) {
    y.yield();
    internal::sync_point();
    // Sharing the CPU, the condition is checked before the clock is read: whatever the yield's
    // time, the wait is over when it holds.
    if (a.shares_cpu && pred()) {
      a.yield_backoff /= 2;
      return true;
    }
    const auto now = y.now();
    const bool slow = now - prev > kSlowYield;
    if (!a.shares_cpu && pred()) {
      if (slow) {
        back_off();
      } else {
        a.yield_backoff /= 2;
      }
      return true;
    }
    if (slow) {
      back_off();
      return false;
    }
    if (now >= yield_end) return false;
    prev = now;
  }
}

struct YieldAlways {
  bool operator()() const noexcept { return true; }
};

}  // namespace internal

// Wakes every thread blocked in wait_until() on `word`, and every fiber worker blocked with all
// its ranks waiting. It always makes the futex call (about a microsecond even when nobody
// sleeps): where waits are frequent and sleeps rare, the waker first checks a count of the
// sleepers, as wait_counted()/wake_counted() below and the mailboxes' sleeping flags do.
inline void wake(std::atomic<std::uint32_t>& word) noexcept {
  internal::sync_point();
  // seq_cst: orders the condition's stores before the change of word seen by the futex.
  word.fetch_add(1, std::memory_order_seq_cst);
  internal::futex_wake_all(word);
  internal::notify_blocked_workers();
}

// Returns once pred() is true. pred must be cheap and side-effect free; it is called
// repeatedly (on a fiber, by the worker, from the worker's own stack). Returns the number of
// phases used (0 spin, 1 yield, 2 block), for tests; on a fiber 0 when pred() held at once, 1
// when the rank was switched out, 2 when its worker ran before_block() to block meanwhile.
//
// Fixed mode (no AdaptiveWait): the first 64 polls come before the first clock read, and the
// spin budget is counted from that first read, so spinning lasts spin_ns plus those 64 polls
// (about 1 us); then yields until yield_ns more have passed.
//
// Adaptive mode (an AdaptiveWait, and may_yield): the spin budget and the yield phase adapt to
// how the waiter's last waits ended (internal::adaptive_spin, internal::adaptive_yield); after
// a spin that timed out, may_yield() decides whether to yield at all or to block at once (a
// barrier rank that shares its CPU with a partner blocks, so that the wake-up can move it).
//
// before_block() runs once, after the yield phase and before the first load of word: the
// place for a waiter to announce that it is about to sleep (see mailbox.hpp). pred() is
// re-evaluated after it, with the protocol above, so nothing it announces can be missed.
template <class Pred, class BeforeBlock, class MayYield>
int wait_until(const WaitPolicy& policy, std::atomic<std::uint32_t>& word, Pred&& pred, BeforeBlock&& before_block,
               AdaptiveWait* adaptive, MayYield&& may_yield) {
  // Delay injection (internal/inject.hpp) at every phase change and every outer poll; empty
  // in normal builds.
  internal::sync_point();
  if (pred()) return 0;
  if (internal::FiberWorker* const worker = internal::current_fiber_worker()) [[unlikely]] {
    return internal::fiber_wait(*worker, internal::fiber_wait_of(pred, before_block));
  }
  if (adaptive != nullptr) {
    if (internal::adaptive_spin(policy, *adaptive, pred)) return 0;
    if (may_yield() && internal::adaptive_yield(policy, *adaptive, pred)) return 1;
  } else {
    if (internal::spin_phase(policy.spin_ns, 64, pred)) return 0;
    using clock = std::chrono::steady_clock;
    const auto yield_end = clock::now() + std::chrono::nanoseconds(policy.yield_ns);
    while (clock::now() < yield_end) {
      std::this_thread::yield();
      internal::sync_point();
      if (pred()) return 1;
    }
  }
  internal::sync_point();
  before_block();
  for (;;) {
    internal::sync_point();
    // seq_cst: pairs with the fetch_add in wake(); see the protocol above.
    const std::uint32_t seen = word.load(std::memory_order_seq_cst);
    internal::sync_point();
    if (pred()) break;
    internal::futex_wait(word, seen);
  }
  return 2;
}

template <class Pred, class BeforeBlock>
int wait_until(const WaitPolicy& policy, std::atomic<std::uint32_t>& word, Pred&& pred, BeforeBlock&& before_block) {
  return wait_until(policy, word, static_cast<Pred&&>(pred), static_cast<BeforeBlock&&>(before_block), nullptr,
                    internal::YieldAlways{});
}

template <class Pred>
int wait_until(const WaitPolicy& policy, std::atomic<std::uint32_t>& word, Pred&& pred) {
  return wait_until(policy, word, static_cast<Pred&&>(pred), [] {});
}

template <class Pred>
int wait_until(std::atomic<std::uint32_t>& word, Pred&& pred) {
  return wait_until(default_wait_policy(), word, static_cast<Pred&&>(pred));
}

// A wait whose wakers pay the futex call only when someone sleeps: the waiter counts itself in
// `sleepers` just before it blocks (before_block) and uncounts itself once it returns, and
// wake_counted() reads the count first. On a fiber the worker counts the rank when it is about
// to block. Used by the barrier engine (its count on the word's own line), a Team and the
// cluster barrier's progress thread.
template <class Pred, class MayYield>
int wait_counted(const WaitPolicy& policy, std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& sleepers,
                 Pred&& pred, AdaptiveWait* adaptive, MayYield&& may_yield) {
  bool counted = false;
  const int phase = wait_until(
      policy, word, static_cast<Pred&&>(pred),
      [&] {
        // seq_cst: the waiter's half of wake_counted()'s Dekker (sleepers, then the condition).
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        counted = true;
      },
      adaptive, static_cast<MayYield&&>(may_yield));
  // relaxed: a count; a late decrement costs a waker one needless futex call at most.
  if (counted) sleepers.fetch_sub(1, std::memory_order_relaxed);
  return phase;
}

template <class Pred>
int wait_counted(const WaitPolicy& policy, std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& sleepers,
                 Pred&& pred) {
  return wait_counted(policy, word, sleepers, static_cast<Pred&&>(pred), nullptr, internal::YieldAlways{});
}

// wake(word) when a waiter of wait_counted() sleeps on it; otherwise no futex call and word
// unchanged (only blocked fiber workers are woken, see below). The caller made the condition
// true before. sleepers is read with a read-modify-write (adding 0): it reads the latest count,
// and a waiter whose increment comes after it in the count's order reads from this RMW, so it
// sees the condition (release, then the waiter's acquire). (A fence and a load would do as
// well but ThreadSanitizer does not model fences.) A caller whose condition change is itself
// a seq_cst read-modify-write may load sleepers plainly (the barrier engine's signal()).
inline void wake_counted(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& sleepers) noexcept {
  if (sleepers.fetch_add(0, std::memory_order_seq_cst) != 0) {
    wake(word);
  } else {
    // A fiber worker whose ranks all wait may be blocked on a rank that was not counted (a
    // parked rank of a Team): one load when none is.
    internal::notify_blocked_workers();
  }
}

}  // namespace postbox
