#include "postbox/runtime/wait.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox {
namespace {

constexpr std::int64_t kForever = 1'000'000'000'000;  // 1000 s: a budget no test outlives

// The scheduler state of a thread of this process ('R' running, 'S' sleeping in the kernel).
char thread_state(pid_t tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(f, line);
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

struct PhaseRow {
  const char* file;
  int line;
  const char* name;
  WaitPolicy policy;
  int want_phase;
  long min_calls;  // the waker makes the condition true only after this many predicate calls
  bool wait_for_sleep;
};

std::ostream& operator<<(std::ostream& os, const PhaseRow& r) {
  return os << r.file << ":" << r.line << " " << r.name;
}

class WaitPhase : public testing::TestWithParam<PhaseRow> {};

TEST_P(WaitPhase, ReturnsWhenWokenInThatPhase) {
  const PhaseRow& row = GetParam();
  SCOPED_TRACE(testing::PrintToString(row));
  std::atomic<std::uint32_t> word{0};
  std::atomic<bool> cond{false};
  std::atomic<long> calls{0};
  std::atomic<pid_t> waiter_tid{0};
  int phase = -1;
  std::jthread waiter([&] {
    waiter_tid.store(static_cast<pid_t>(::syscall(SYS_gettid)));
    phase = wait_until(row.policy, word, [&] {
      const bool c = cond.load(std::memory_order_acquire);  // read before counting: see below
      calls.fetch_add(1, std::memory_order_release);
      return c;
    });
  });
  // Once `calls` reaches min_calls, every call so far read cond == false, so the waiter is in
  // the phase the budgets force (the spin phase checks the clock every 64 calls, so with a
  // zero spin budget call 66 is the block phase's first).
  while (calls.load(std::memory_order_acquire) < row.min_calls) std::this_thread::yield();
  if (row.wait_for_sleep) {
    while (thread_state(waiter_tid.load()) != 'S') std::this_thread::yield();
  }
  cond.store(true, std::memory_order_release);
  wake(word);
  waiter.join();
  EXPECT_EQ(phase, row.want_phase);
}

INSTANTIATE_TEST_SUITE_P(Rows, WaitPhase,
                         testing::Values(PhaseRow{__FILE__, __LINE__, "spin", {kForever, 0}, 0, 2000, false},
                                         PhaseRow{__FILE__, __LINE__, "yield", {0, kForever}, 1, 2000, false},
                                         PhaseRow{__FILE__, __LINE__, "block", {0, 0}, 2, 66, true}));

TEST(Wait, ReturnsAtOnceWhenTheConditionHolds) {
  std::atomic<std::uint32_t> word{0};
  EXPECT_EQ(wait_until(WaitPolicy{0, 0}, word, [] { return true; }), 0);
}

// The first 64 polls come before the first clock read: a condition that turns true on the
// 40th poll returns from the spin phase even with a zero spin budget.
TEST(Wait, TheFirstPollsNeedNoSpinBudget) {
  std::atomic<std::uint32_t> word{0};
  int calls = 0;
  bool blocked = false;
  EXPECT_EQ(wait_until(WaitPolicy{0, 0}, word, [&] { return ++calls == 40; }, [&] { blocked = true; }), 0);
  EXPECT_EQ(calls, 40);
  EXPECT_FALSE(blocked);
}

// before_block() runs once, just before blocking, and the condition is checked after it: a
// waiter whose announcement itself makes the condition true must not sleep (it would sleep
// forever here: nobody calls wake()).
TEST(Wait, BeforeBlockRunsOnceAndTheConditionIsCheckedAfterIt) {
  std::atomic<std::uint32_t> word{0};
  std::atomic<bool> cond{false};
  int announced = 0;
  const int phase = wait_until(
      WaitPolicy{0, 0}, word, [&] { return cond.load(std::memory_order_acquire); },
      [&] {
        ++announced;
        cond.store(true, std::memory_order_release);
      });
  EXPECT_EQ(phase, 2);
  EXPECT_EQ(announced, 1);
}

// wait_counted(): the waiter counts itself in `sleepers` only while it blocks, and
// wake_counted() wakes it; with nobody counted, wake_counted() leaves the word alone (no futex
// call), and the count is back to 0 once the waiter has returned.
TEST(WaitCounted, TheWaiterIsCountedWhileItBlocksAndWakeCountedWakesIt) {
  std::atomic<std::uint32_t> word{0};
  std::atomic<std::uint32_t> sleepers{0};
  wake_counted(word, sleepers);
  EXPECT_EQ(word.load(), 0U) << "nobody asleep: the word is not touched";
  std::atomic<bool> cond{false};
  std::atomic<pid_t> waiter_tid{0};
  int phase = -1;
  std::jthread waiter([&] {
    waiter_tid.store(static_cast<pid_t>(::syscall(SYS_gettid)));
    phase = wait_counted(WaitPolicy{0, 0}, word, sleepers, [&] { return cond.load(std::memory_order_acquire); });
  });
  while (sleepers.load() == 0 || thread_state(waiter_tid.load()) != 'S') std::this_thread::yield();
  EXPECT_EQ(sleepers.load(), 1U);
  cond.store(true, std::memory_order_release);
  wake_counted(word, sleepers);
  waiter.join();
  EXPECT_EQ(phase, 2);
  EXPECT_EQ(word.load(), 1U);
  EXPECT_EQ(sleepers.load(), 0U);
}

// A waiter that returns before blocking is never counted.
TEST(WaitCounted, AWaitThatEndsBeforeBlockingIsNotCounted) {
  std::atomic<std::uint32_t> word{0};
  std::atomic<std::uint32_t> sleepers{0};
  int calls = 0;
  EXPECT_EQ(wait_counted(WaitPolicy{0, 0}, word, sleepers, [&] { return ++calls == 3; }), 0);
  EXPECT_EQ(sleepers.load(), 0U);
}

// Adaptive mode: a wait that ends while spinning grows the budget by half plus 1 us (capped by
// the policy); a spin that times out halves it.
TEST(WaitAdaptive, TheSpinBudgetGrowsOnSuccessAndHalvesOnTimeout) {
  std::atomic<std::uint32_t> word{0};
  const WaitPolicy policy{10'000, 0};
  AdaptiveWait a;
  a.spin_ns = 4'000;
  int calls = 0;
  EXPECT_EQ(wait_until(policy, word, [&] { return ++calls == 10; }, [] {}, &a, internal::YieldAlways{}), 0);
  EXPECT_EQ(a.spin_ns, 7'000);
  EXPECT_EQ(wait_until(policy, word, [&] { return ++calls == 20; }, [] {}, &a, internal::YieldAlways{}), 0);
  EXPECT_EQ(a.spin_ns, 10'000);  // 7000 + 3500 + 1000, capped by the policy
  bool cond = false;
  EXPECT_EQ(wait_until(policy, word, [&] { return cond; }, [&] { cond = true; }, &a, internal::YieldAlways{}), 2);
  EXPECT_EQ(a.spin_ns, 5'000);
  a.spin_ns = 1'500;
  cond = false;
  EXPECT_EQ(wait_until(policy, word, [&] { return cond; }, [&] { cond = true; }, &a, internal::YieldAlways{}), 2);
  EXPECT_EQ(a.spin_ns, 0);  // 750 is below 1 us: no spin
}

// With a zero budget the waiter does not poll at all, except for a 2 us probe every 64th wait,
// whose timeout leaves a 1 us budget.
TEST(WaitAdaptive, AZeroBudgetSkipsTheSpinExceptEvery64thWait) {
  std::atomic<std::uint32_t> word{0};
  const WaitPolicy policy{10'000, 0};
  AdaptiveWait a;
  a.spin_ns = 0;
  for (int i = 1; i <= 64; ++i) {
    int calls = 0;
    bool cond = false;
    EXPECT_EQ(wait_until(policy, word, [&] { ++calls; return cond; }, [&] { cond = true; }, &a, internal::YieldAlways{}), 2);
    if (i < 64) {
      EXPECT_EQ(calls, 2) << "wait " << i << ": the first check and the one after before_block";
      EXPECT_EQ(a.spin_ns, 0);
    } else {
      EXPECT_GE(calls, 2 + 32) << "the probe polls (32 before its first clock read)";
      EXPECT_EQ(a.spin_ns, 1'000);
    }
  }
}

// After a spin that timed out, may_yield() decides: false blocks at once (no yield phase).
// A waiter in its yield back-off skips the phase and counts the back-off down; a wait that ends
// while yielding ends in phase 1.
TEST(WaitAdaptive, MayYieldAndTheYieldBackOffDecideTheYieldPhase) {
  std::atomic<std::uint32_t> word{0};
  const WaitPolicy policy{0, kForever};
  AdaptiveWait a;
  a.spin_ns = 0;
  int asked = 0;
  bool cond = false;
  EXPECT_EQ(wait_until(policy, word, [&] { return cond; }, [&] { cond = true; }, &a, [&] { ++asked; return false; }), 2);
  EXPECT_EQ(asked, 1);
  a.no_yield = 3;
  cond = false;
  EXPECT_EQ(wait_until(policy, word, [&] { return cond; }, [&] { cond = true; }, &a, internal::YieldAlways{}), 2);
  EXPECT_EQ(a.no_yield, 2U);
  a.no_yield = 0;
  // True at the first poll after the first yield (the second call: the budget is 0, so there
  // is no spin): the wait ends in the yield phase, fast or slow (the back-off that follows from
  // the yield's time is tested with a fake clock below).
  int calls = 0;
  EXPECT_EQ(wait_until(policy, word, [&] { return ++calls == 2; }, [] {}, &a, internal::YieldAlways{}), 1);
}

// A yield whose time a test sets: each yield advances a fake clock by `step`.
struct FakeYield {
  using time_point = std::chrono::steady_clock::time_point;
  mutable time_point t{};
  std::chrono::nanoseconds step;
  mutable int yields = 0;
  time_point now() const noexcept { return t; }
  void yield() const noexcept {
    t += step;
    ++yields;
  }
};

// wait.hpp, the adaptive yield: a yield over 200 us turns yielding off for the next 16, 32, ...,
// 1024 waits even when the condition became true during it (a partner on another CPU arrives
// during the time slice given away: counted as a success, the back-off never grew and every
// barrier paid a slice), unless the waiter shares its CPU with its partners; a wait that ends
// after fast yields halves the back-off.
TEST(WaitAdaptive, ASlowYieldBacksOffEvenWhenTheWaitEndsDuringIt) {
  const WaitPolicy policy{0, 50'000};
  AdaptiveWait a;
  bool cond = false;
  auto pred = [&] { return cond; };
  const FakeYield slow{{}, std::chrono::milliseconds(2)};
  cond = true;  // true after the first (slow) yield
  EXPECT_TRUE(internal::adaptive_yield(policy, a, pred, slow));
  EXPECT_EQ(a.yield_backoff, 16U);
  EXPECT_EQ(a.no_yield, 16U);
  // The next 16 waits skip the phase without yielding.
  for (int i = 0; i < 16; ++i) EXPECT_FALSE(internal::adaptive_yield(policy, a, pred, slow));
  EXPECT_EQ(slow.yields, 1);
  EXPECT_EQ(a.no_yield, 0U);
  // A slow yield with the condition still false ends the phase and doubles the back-off.
  cond = false;
  EXPECT_FALSE(internal::adaptive_yield(policy, a, pred, slow));
  EXPECT_EQ(a.yield_backoff, 32U);
  for (int i = 0; i < 6; ++i) {
    a.no_yield = 0;
    (void)internal::adaptive_yield(policy, a, pred, slow);
  }
  EXPECT_EQ(a.yield_backoff, 1024U) << "capped at 1024";
  // Fast yields (1 us each): a wait that ends while yielding halves the back-off, ...
  a.no_yield = 0;
  cond = true;
  const FakeYield fast{{}, std::chrono::microseconds(1)};
  EXPECT_TRUE(internal::adaptive_yield(policy, a, pred, fast));
  EXPECT_EQ(a.yield_backoff, 512U);
  EXPECT_EQ(a.no_yield, 0U);
  // ... and one that does not end within the 50 us phase leaves it as it was, after 50 yields.
  cond = false;
  const FakeYield fast2{{}, std::chrono::microseconds(1)};
  EXPECT_FALSE(internal::adaptive_yield(policy, a, pred, fast2));
  EXPECT_EQ(fast2.yields, 50);
  EXPECT_EQ(a.yield_backoff, 512U);
  // A waiter that shares its CPU with its partners: a slow yield that ends the wait handed the
  // core to them, a success (halves); one that does not end it backs off as for any waiter.
  a.shares_cpu = true;
  cond = true;
  const FakeYield slow2{{}, std::chrono::milliseconds(2)};
  EXPECT_TRUE(internal::adaptive_yield(policy, a, pred, slow2));
  EXPECT_EQ(a.yield_backoff, 256U);
  EXPECT_EQ(a.no_yield, 0U);
  cond = false;
  EXPECT_FALSE(internal::adaptive_yield(policy, a, pred, slow2));
  EXPECT_EQ(a.yield_backoff, 512U);
  EXPECT_EQ(a.no_yield, 512U);
}

// reset() starts the budget at 20 us, or at the policy's spin budget when that is smaller.
TEST(WaitAdaptive, ResetStartsAtTheInitialBudgetCappedByThePolicy) {
  AdaptiveWait a;
  a.spin_ns = 0;
  a.reset(WaitPolicy{50'000, 0});
  EXPECT_EQ(a.spin_ns, AdaptiveWait::kInitialSpinNs);
  a.reset(WaitPolicy{3'000, 0});
  EXPECT_EQ(a.spin_ns, 3'000);
}

// Lost-wakeup stress: pairs of threads ping-pong through wait_until/wake many times. A lost
// wakeup leaves a pair blocked forever, which the watchdog reports.
struct PairsRow {
  const char* file;
  int line;
  WaitPolicy policy;
  int pairs;
  int rounds;
};

std::ostream& operator<<(std::ostream& os, const PairsRow& r) {
  return os << r.file << ":" << r.line << " spin=" << r.policy.spin_ns << " yield=" << r.policy.yield_ns
            << " pairs=" << r.pairs;
}

class WaitStress : public testing::TestWithParam<PairsRow> {};

TEST_P(WaitStress, NoLostWakeupBetweenManyPairs) {
  const PairsRow& row = GetParam();
  SCOPED_TRACE(testing::PrintToString(row));
  struct alignas(64) Pair {
    std::atomic<std::uint64_t> ping{0}, pong{0};
    std::atomic<std::uint32_t> ping_word{0}, pong_word{0};
  };
  std::vector<Pair> pairs(static_cast<std::size_t>(row.pairs));
  std::vector<int> blocked(static_cast<std::size_t>(row.pairs) * 2, 0);
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < row.pairs; ++i) {
      Pair& pr = pairs[static_cast<std::size_t>(i)];
      int& a_blocked = blocked[static_cast<std::size_t>(2 * i)];
      int& b_blocked = blocked[static_cast<std::size_t>(2 * i + 1)];
      threads.emplace_back([&pr, &row, &a_blocked] {
        for (std::uint64_t k = 1; k <= static_cast<std::uint64_t>(row.rounds); ++k) {
          pr.ping.store(k, std::memory_order_release);
          wake(pr.ping_word);
          a_blocked += wait_until(row.policy, pr.pong_word, [&] { return pr.pong.load(std::memory_order_acquire) >= k; }) == 2;
        }
      });
      threads.emplace_back([&pr, &row, &b_blocked] {
        for (std::uint64_t k = 1; k <= static_cast<std::uint64_t>(row.rounds); ++k) {
          b_blocked += wait_until(row.policy, pr.ping_word, [&] { return pr.ping.load(std::memory_order_acquire) >= k; }) == 2;
          pr.pong.store(k, std::memory_order_release);
          wake(pr.pong_word);
        }
      });
    }
  }
  int total_blocked = 0;
  for (const Pair& pr : pairs) {
    EXPECT_EQ(pr.ping.load(), static_cast<std::uint64_t>(row.rounds));
    EXPECT_EQ(pr.pong.load(), static_cast<std::uint64_t>(row.rounds));
  }
  for (int b : blocked) total_blocked += b;
  if (row.policy.spin_ns == 0 && row.policy.yield_ns == 0) {
    EXPECT_GT(total_blocked, 0) << "a zero budget must reach the block phase";
  }
}

#ifdef POSTBOX_TSAN
constexpr int kRounds = 300;
#else
constexpr int kRounds = 3000;
#endif

INSTANTIATE_TEST_SUITE_P(Rows, WaitStress,
                         testing::Values(PairsRow{__FILE__, __LINE__, {0, 0}, 8, kRounds},
                                         PairsRow{__FILE__, __LINE__, {0, 0}, 1, kRounds * 4},
                                         PairsRow{__FILE__, __LINE__, {500, 2'000}, 8, kRounds},
                                         PairsRow{__FILE__, __LINE__, {20'000, 0}, 4, kRounds}));

// Many waiters on one word, released generation by generation by one waker.
TEST(Wait, OneWakeReleasesEveryWaiterOnTheWord) {
  constexpr int kWaiters = 12;
  constexpr std::uint64_t kGenerations = 200;
  std::atomic<std::uint32_t> word{0}, ack_word{0};
  std::atomic<std::uint64_t> generation{0};
  std::atomic<int> acks{0};
  {
    std::vector<std::jthread> waiters;
    for (int w = 0; w < kWaiters; ++w) {
      waiters.emplace_back([&] {
        for (std::uint64_t g = 1; g <= kGenerations; ++g) {
          (void)wait_until(WaitPolicy{0, 0}, word, [&] { return generation.load(std::memory_order_acquire) >= g; });
          acks.fetch_add(1, std::memory_order_acq_rel);
          wake(ack_word);
        }
      });
    }
    for (std::uint64_t g = 1; g <= kGenerations; ++g) {
      generation.store(g, std::memory_order_release);
      wake(word);
      const int want = static_cast<int>(g) * kWaiters;
      (void)wait_until(WaitPolicy{0, 0}, ack_word, [&] { return acks.load(std::memory_order_acquire) >= want; });
    }
  }
  EXPECT_EQ(acks.load(), static_cast<int>(kGenerations) * kWaiters);
}

// ---------------------------------------------------------------------------------------------
// WaitPolicy::from_env

struct EnvRow {
  const char* file;
  int line;
  const char* spin;   // nullptr: unset
  const char* yield;  // nullptr: unset
  std::optional<WaitPolicy> want;  // nullopt: InputError
  const char* error_names;         // the variable the error message must name
};

std::ostream& operator<<(std::ostream& os, const EnvRow& r) {
  return os << r.file << ":" << r.line << " SPIN=" << (r.spin ? r.spin : "(unset)")
            << " YIELD=" << (r.yield ? r.yield : "(unset)");
}

class WaitPolicyEnv : public testing::TestWithParam<EnvRow> {
 protected:
  void TearDown() override {
    ::unsetenv("POSTBOX_SPIN_NS");
    ::unsetenv("POSTBOX_YIELD_NS");
  }
};

void set_or_unset(const char* name, const char* value) {
  if (value == nullptr) {
    ::unsetenv(name);
  } else {
    ::setenv(name, value, 1);
  }
}

TEST_P(WaitPolicyEnv, ParsesOrRejects) {
  const EnvRow& row = GetParam();
  SCOPED_TRACE(testing::PrintToString(row));
  set_or_unset("POSTBOX_SPIN_NS", row.spin);
  set_or_unset("POSTBOX_YIELD_NS", row.yield);
  const WaitPolicy defaults{111, 222};
  if (row.want) {
    const WaitPolicy got = WaitPolicy::from_env(defaults);
    EXPECT_EQ(got.spin_ns, row.want->spin_ns);
    EXPECT_EQ(got.yield_ns, row.want->yield_ns);
  } else {
    try {
      (void)WaitPolicy::from_env(defaults);
      ADD_FAILURE() << "expected InputError";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), testing::HasSubstr(row.error_names));
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, WaitPolicyEnv,
    testing::Values(EnvRow{__FILE__, __LINE__, nullptr, nullptr, WaitPolicy{111, 222}, ""},
                    EnvRow{__FILE__, __LINE__, "123", nullptr, WaitPolicy{123, 222}, ""},
                    EnvRow{__FILE__, __LINE__, nullptr, "456", WaitPolicy{111, 456}, ""},
                    EnvRow{__FILE__, __LINE__, "0", "0", WaitPolicy{0, 0}, ""},
                    EnvRow{__FILE__, __LINE__, "5000000000", "7", WaitPolicy{5'000'000'000, 7}, ""},
                    EnvRow{__FILE__, __LINE__, "", "", WaitPolicy{111, 222}, ""},  // empty means unset
                    EnvRow{__FILE__, __LINE__, "-1", nullptr, std::nullopt, "POSTBOX_SPIN_NS"},
                    EnvRow{__FILE__, __LINE__, nullptr, "-20", std::nullopt, "POSTBOX_YIELD_NS"},
                    EnvRow{__FILE__, __LINE__, "12x", nullptr, std::nullopt, "POSTBOX_SPIN_NS"},
                    EnvRow{__FILE__, __LINE__, "abc", nullptr, std::nullopt, "POSTBOX_SPIN_NS"},
                    EnvRow{__FILE__, __LINE__, "1e3", nullptr, std::nullopt, "POSTBOX_SPIN_NS"},
                    EnvRow{__FILE__, __LINE__, nullptr, "2.5", std::nullopt, "POSTBOX_YIELD_NS"},
                    EnvRow{__FILE__, __LINE__, "99999999999999999999", nullptr, std::nullopt, "POSTBOX_SPIN_NS"},
                    // parse.hpp's one leniency rule: no spaces, no '+'.
                    EnvRow{__FILE__, __LINE__, " 5", nullptr, std::nullopt, "POSTBOX_SPIN_NS"},
                    EnvRow{__FILE__, __LINE__, "5 ", nullptr, std::nullopt, "POSTBOX_SPIN_NS"},
                    EnvRow{__FILE__, __LINE__, nullptr, "+5", std::nullopt, "POSTBOX_YIELD_NS"}));

TEST(WaitPolicyEnvDefaults, NoArgumentMeansTheBuiltInDefaults) {
  ::unsetenv("POSTBOX_SPIN_NS");
  ::unsetenv("POSTBOX_YIELD_NS");
  const WaitPolicy got = WaitPolicy::from_env();
  EXPECT_EQ(got.spin_ns, WaitPolicy{}.spin_ns);
  EXPECT_EQ(got.yield_ns, WaitPolicy{}.yield_ns);
}

TEST(WaitPolicyDefault, SetDefaultIsReadBack) {
  const WaitPolicy saved = default_wait_policy();
  set_default_wait_policy(WaitPolicy{7, 9});
  EXPECT_EQ(default_wait_policy().spin_ns, 7);
  EXPECT_EQ(default_wait_policy().yield_ns, 9);
  set_default_wait_policy(saved);
}

TEST(WaitPolicyDeathTest, NegativeDefaultFailsFast) {
  EXPECT_DEATH(set_default_wait_policy(WaitPolicy{-1, 0}), "wait budgets must be non-negative");
}


// ---- on fibers (wait.hpp: "On a fiber ...") -----------------------------------------------

TeamOptions one_worker() {
  TeamOptions o;
  o.ranks = RanksMode::fibers;
  o.workers = 1;
  o.pin = false;
  return o;
}

TEST(WaitOnFibers, AFalseConditionSwitchesToTheNextRankOfTheWorker) {
  // One worker: rank 0 waits for a flag that only rank 1, on the same thread, raises. A wait
  // that spun or blocked the thread would never return. Either rank may start first: rank 1
  // raises the flag only once rank 0 has started, so rank 0's first check always sees it down.
  Team team(2, one_worker());
  std::atomic<std::uint32_t> word{0};
  std::atomic<bool> flag{false};
  std::atomic<bool> started{false};
  int phase = -1;
  int before_block_calls = 0;
  team.run([&](RankContext& ctx) {
    if (ctx.rank() == 0) {
      started.store(true, std::memory_order_release);
      phase = wait_until(WaitPolicy{kForever, kForever}, word, [&] { return flag.load(std::memory_order_acquire); },
                         [&] { ++before_block_calls; });
    } else {
      wait_until(WaitPolicy{kForever, kForever}, word, [&] { return started.load(std::memory_order_acquire); });
      flag.store(true, std::memory_order_release);  // no wake(): the worker polls the predicate
    }
  });
  EXPECT_EQ(phase, 1);
  EXPECT_EQ(before_block_calls, 0);
  EXPECT_EQ(wait_until(word, [] { return true; }), 0);  // off fibers: as before
}

TEST(WaitOnFibers, ABlockedWorkerRunsBeforeBlockOnceAndIsWokenByWake) {
  // Every rank of the worker waits for a thread outside the team, which changes the condition
  // only once the worker counts itself blocked: wake() must find it through the epoch.
  TeamOptions o = one_worker();
  o.mailbox.wait = WaitPolicy{0, 0};  // the worker blocks at once
  Team team(3, o);
  std::atomic<std::uint32_t> word{0};
  std::atomic<int> flag{0};
  std::atomic<int> entered{0};
  std::vector<int> phase(3, -1);
  std::vector<int> before_block_calls(3, 0);
  std::vector<bool> flag_at_before_block(3, true);
  std::thread outside([&] {
    // acquire: the worker left its park before the ranks entered, so a count seen after all
    // three entered is this wait's.
    while (entered.load(std::memory_order_acquire) < 3) std::this_thread::yield();
    while (internal::blocked_workers.load(std::memory_order_acquire) == 0) std::this_thread::yield();
    flag.store(1, std::memory_order_release);
    wake(word);
  });
  team.run([&](RankContext& ctx) {
    const auto r = static_cast<std::size_t>(ctx.rank());
    entered.fetch_add(1, std::memory_order_release);
    phase[r] = wait_until(WaitPolicy{0, 0}, word, [&] { return flag.load(std::memory_order_acquire) != 0; },
                          [&] {
                            ++before_block_calls[r];
                            flag_at_before_block[r] = flag.load(std::memory_order_acquire) != 0;
                          });
  });
  outside.join();
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(phase[r], 2) << "rank " << r;
    EXPECT_EQ(before_block_calls[r], 1) << "rank " << r;
    EXPECT_FALSE(flag_at_before_block[r]) << "rank " << r;
  }
}

TEST(WaitOnFibers, NoLostWakeupWhenWorkersBlockAndWakersRace) {
  // Two workers, no spin or yield: ranks 0, 1 run on worker 0 and 2, 3 on worker 1, and rank r
  // plays ping-pong with rank r ^ 2, so every hand-off that finds the other worker blocked goes
  // through the epoch. A lost wake-up hangs (the watchdog reports it).
  TeamOptions o = one_worker();
  o.workers = 2;
  o.mailbox.wait = WaitPolicy{0, 0};
  Team team(4, o);
  constexpr std::uint32_t kPingPongs = 2000;
  std::vector<std::atomic<std::uint32_t>> words(2);
  std::vector<std::atomic<std::uint32_t>> ball(2);
  std::vector<std::uint32_t> hits(4, 0);
  team.run([&](RankContext& ctx) {
    const auto r = static_cast<std::size_t>(ctx.rank());
    const std::size_t pair = r & 1U;
    const std::uint32_t side = r < 2 ? 0 : 1;
    for (std::uint32_t i = 0; i < kPingPongs; ++i) {
      (void)wait_until(WaitPolicy{0, 0}, words[pair],
                       [&] { return ball[pair].load(std::memory_order_acquire) == 2 * i + side; });
      ++hits[r];
      ball[pair].store(2 * i + side + 1, std::memory_order_release);
      wake(words[pair]);
    }
  });
  EXPECT_EQ(hits, (std::vector<std::uint32_t>(4, kPingPongs)));
}

}  // namespace
}  // namespace postbox
