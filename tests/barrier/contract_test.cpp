// The guarantees of postbox/barrier/barrier.hpp (G1..G5, abort, reason, CPUs), one test each,
// for every barrier name and p in {2, 3, 5, 8, 13}. docs/barrier.md maps each guarantee
// sentence to the test here that fails when it is broken. A broken split phase or drop shows
// up as a hang, which the watchdog turns into a failure naming what each rank was doing.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "barrier_support.hpp"
#include "postbox/barrier/barrier.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox {
namespace {

using test::expect_no_errors;
using test::run_ranks;
using test::set_doing;
using test::test_options;

struct Config {
  std::string name;
  int p;
};

std::vector<Config> configs(std::initializer_list<int> ps) {
  std::vector<Config> v;
  for (const std::string& name : barrier_names()) {
    for (int p : ps) v.push_back({name, p});
  }
  return v;
}

std::string config_name(const testing::TestParamInfo<Config>& info) {
  return info.param.name + "_p" + std::to_string(info.param.p);
}

class Contract : public testing::TestWithParam<Config> {
 protected:
  std::unique_ptr<AnyBarrier> make(BarrierOptions o) const { return make_barrier(GetParam().name, p(), std::move(o)); }
  std::unique_ptr<AnyBarrier> make() const { return make(test_options(GetParam().name)); }
  BarrierOptions options() const { return test_options(GetParam().name); }
  int p() const { return GetParam().p; }
};

void spin_until(const std::atomic<int>& x, int value) {
  while (x.load() < value) test::yield_rank();
}

// G2, G3 (split phase): in each phase rank s = k mod p calls arrive(s), then waits for a
// condition the other ranks set only after they left the phase, then calls wait(s). Under
// std::barrier's contract the others leave while s works; a barrier that needs s's presence to
// complete or to wake the others hangs here.
TEST_P(Contract, SplitPhaseArrivalLetsTheOthersLeave) {
  const int n = p();
  auto b = make();
  constexpr int kPhases = 12;
  std::vector<std::atomic<int>> left(kPhases);
  expect_no_errors(run_ranks(n, [&](int rank) {
    for (int k = 0; k < kPhases; ++k) {
      const int s = k % n;
      if (rank == s) {
        set_doing(rank, "phase " + std::to_string(k) + ": arrive(), then waits for the others to leave");
        BarrierToken t = b->arrive(rank);
        spin_until(left[static_cast<std::size_t>(k)], n - 1);
        set_doing(rank, "phase " + std::to_string(k) + ": wait()");
        b->wait(rank, t);
      } else {
        set_doing(rank, "phase " + std::to_string(k) + ": arrive_and_wait()");
        b->arrive_and_wait(rank);
        left[static_cast<std::size_t>(k)].fetch_add(1);
      }
    }
    set_doing(rank, "done");
  }));
}

// G2, G3 with the split-phase rank arriving last: its arrive() completes the phase and the
// others leave before it calls wait().
TEST_P(Contract, SplitPhaseLastArriverCompletes) {
  const int n = p();
  auto b = make();
  constexpr int kPhases = 12;
  std::vector<std::atomic<int>> waiting(kPhases), left(kPhases);
  expect_no_errors(run_ranks(n, [&](int rank) {
    for (int k = 0; k < kPhases; ++k) {
      const int s = (3 * k + 1) % n;
      if (rank == s) {
        spin_until(waiting[static_cast<std::size_t>(k)], n - 1);
        set_doing(rank, "phase " + std::to_string(k) + ": last arrive(), then waits for the others to leave");
        BarrierToken t = b->arrive(rank);
        spin_until(left[static_cast<std::size_t>(k)], n - 1);
        b->wait(rank, t);
      } else {
        set_doing(rank, "phase " + std::to_string(k) + ": arrive_and_wait()");
        BarrierToken t = b->arrive(rank);  // split too, but waits at once
        waiting[static_cast<std::size_t>(k)].fetch_add(1);
        b->wait(rank, t);
        left[static_cast<std::size_t>(k)].fetch_add(1);
      }
    }
  }));
}

// G2, G3: every rank but one works between arrive() and wait(); the one arrive_and_wait()s and
// must leave while all the others are still away.
TEST_P(Contract, AllButOneAway) {
  const int n = p();
  auto b = make();
  constexpr int kPhases = 8;
  std::vector<std::atomic<int>> left(kPhases);
  expect_no_errors(run_ranks(n, [&](int rank) {
    for (int k = 0; k < kPhases; ++k) {
      const int present = (k * 5 + 2) % n;
      if (rank == present) {
        set_doing(rank, "phase " + std::to_string(k) + ": arrive_and_wait() while all others are away");
        b->arrive_and_wait(rank);
        left[static_cast<std::size_t>(k)].fetch_add(1);
      } else {
        set_doing(rank, "phase " + std::to_string(k) + ": away after arrive()");
        BarrierToken t = b->arrive(rank);
        spin_until(left[static_cast<std::size_t>(k)], 1);
        b->wait(rank, t);
      }
    }
  }));
}

// G2: arrive_and_drop returns before any other rank has arrived (a dropper that forwarded its
// subtree's arrival, or ran its rounds, would wait for them). The others arrive only after the
// dropper returned, then run more phases without it.
TEST_P(Contract, DropReturnsBeforeOthersArrive) {
  const int n = p();
  for (int dropper : {0, n - 1, n / 2}) {
    BarrierOptions o = options();
    std::atomic<int> completions{0};
    o.completion = [&] { completions.fetch_add(1); };
    auto b = make(std::move(o));
    std::atomic<int> dropped{0};
    expect_no_errors(run_ranks(n, [&](int rank) {
      if (rank == dropper) {
        set_doing(rank, "arrive_and_drop() before anyone else arrived");
        b->arrive_and_drop(rank);
        dropped.store(1);
        set_doing(rank, "dropped");
        return;
      }
      spin_until(dropped, 1);
      for (int k = 0; k < 5; ++k) {
        set_doing(rank, "phase " + std::to_string(k) + " after the drop");
        b->arrive_and_wait(rank);
      }
    }));
    EXPECT_EQ(completions.load(), 5) << "dropper " << dropper;
    EXPECT_EQ(b->participants(), n - 1) << "dropper " << dropper;
  }
}

// G1, G4: the completion function sees every participant's arrival, once per phase, and no
// rank leaves before it ran — with split phase, drop and reduce mixed in every phase.
TEST_P(Contract, CompletionOncePerPhaseMixed) {
  const int n = p();
  constexpr int kPhases = 40;
  std::atomic<long> arrivals{0};
  long completions = 0;  // plain: written only by the completion step
  std::vector<long> expected(kPhases + 1, 0);
  std::atomic<long> failures{0};
  auto drops_at = [n](int r) { return r % 4 == 1 && r < n - 1 ? 10 + 3 * r : -1; };
  long total = 0;
  for (int k = 0; k < kPhases; ++k) {
    for (int r = 0; r < n; ++r) total += drops_at(r) < 0 || k <= drops_at(r) ? 1 : 0;
    expected[static_cast<std::size_t>(k)] = total;
  }
  BarrierOptions o = options();
  o.completion = [&] {
    if (arrivals.load(std::memory_order_relaxed) != expected[static_cast<std::size_t>(completions)]) failures.fetch_add(1);
    ++completions;
  };
  auto b = make(std::move(o));
  expect_no_errors(run_ranks(n, [&](int rank) {
    for (int k = 0; k < kPhases; ++k) {
      set_doing(rank, "phase " + std::to_string(k));
      arrivals.fetch_add(1, std::memory_order_relaxed);
      if (k == drops_at(rank)) {
        b->arrive_and_drop(rank);
        return;
      }
      switch ((k + rank) % 3) {
        case 0: b->arrive_and_wait(rank); break;
        case 1: {
          BarrierToken t = b->arrive(rank);
          std::this_thread::yield();
          b->wait(rank, t);
          break;
        }
        default: (void)b->arrive_and_reduce(rank, 1, [](int x, int y) { return x + y; });
      }
      // G1/G4: after leaving, the completion of this phase has run.
      if (completions < k + 1) failures.fetch_add(1);
      if (arrivals.load(std::memory_order_relaxed) < expected[static_cast<std::size_t>(k)]) failures.fetch_add(1);
    }
  }));
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(completions, kPhases);
}

// Abort: rank 0 arrive()s, rank 1 waits in arrive_and_reduce, rank 2
// never comes; abort(). No completion or reduction may run for that phase (not every
// participant reached it), nothing may read rank 1's argument after it left, rank 1 leaves with
// Aborted, wait(0) throws Aborted, and so does every later call. Before that, kFull phases
// complete normally: the completion count must be exactly kFull.
TEST_P(Contract, AbortRunsNoCompletionForAnUnreachedPhase) {
  const int n = p();
  if (n < 3) GTEST_SKIP() << "needs three ranks";
  constexpr int kFull = 3;
  std::atomic<int> completions{0};
  BarrierOptions o = options();
  o.completion = [&] { completions.fetch_add(1); };
  auto b = make(std::move(o));
  std::atomic<int> full_done{0};
  expect_no_errors(run_ranks(n, [&](int rank) {
    for (int k = 0; k < kFull; ++k) (void)b->arrive_and_reduce(rank, rank, [](int x, int y) { return x + y; });
    full_done.fetch_add(1);
  }));
  ASSERT_EQ(completions.load(), kFull);
  // The unreached phase: ranks 3..n-1 arrive too; rank 2 never does.
  std::atomic<int> inside{0}, aborted{0}, folded{0};
  std::vector<std::thread> others;
  for (int r = 3; r < n; ++r) {
    others.emplace_back([&, r] {
      try {
        b->arrive_and_wait(r);
      } catch (const Aborted&) {
        aborted.fetch_add(1);
      }
    });
  }
  std::thread reducer([&] {
    try {
      inside.store(1);
      (void)b->arrive_and_reduce(1, 7, [&](int x, int y) {
        folded.fetch_add(1);
        return x + y;
      });
    } catch (const Aborted&) {
      aborted.fetch_add(1);
    }
  });
  BarrierToken t = b->arrive(0);
  spin_until(inside, 1);
  for (int i = 0; i < 100; ++i) std::this_thread::yield();
  b->abort();
  EXPECT_THROW(b->wait(0, t), Aborted);
  reducer.join();
  for (auto& th : others) th.join();
  EXPECT_EQ(aborted.load(), n - 2);
  EXPECT_EQ(completions.load(), kFull);
  EXPECT_EQ(folded.load(), 0);
  EXPECT_THROW(b->arrive_and_wait(2), Aborted);
  EXPECT_THROW((void)b->arrive(1), Aborted);
  EXPECT_THROW(b->arrive_and_drop(2), Aborted);
}

// Abort: wait() checks at entry — even when the phase completed before the abort.
TEST_P(Contract, WaitAfterAbortThrows) {
  const int n = p();
  auto b = make();
  std::vector<BarrierToken> tokens(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) tokens[static_cast<std::size_t>(r)] = b->arrive(r);  // the phase completes
  b->abort();
  for (int r = 0; r < n; ++r) EXPECT_THROW(b->wait(r, tokens[static_cast<std::size_t>(r)]), Aborted);
  EXPECT_THROW(b->arrive_and_wait(0), Aborted);
}

// G2 in one thread: arrive() never waits, so one thread can arrive for every rank (in a
// scrambled order, some dropping) and then wait for each; the last arrival completes the phase
// and the others' protocol work is done by proxies, with nobody to wait for.
TEST_P(Contract, OneThreadArrivesForAll) {
  const int n = p();
  int completions = 0;
  BarrierOptions o = options();
  o.completion = [&] { ++completions; };
  auto b = make(std::move(o));
  std::vector<int> alive;
  for (int r = 0; r < n; ++r) alive.push_back(r);
  std::uint64_t seed = 12345;
  for (int k = 0; k < 20; ++k) {
    std::vector<int> order = alive;
    for (std::size_t i = order.size(); i > 1; --i) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      std::swap(order[i - 1], order[static_cast<std::size_t>((seed >> 33) % i)]);
    }
    std::vector<BarrierToken> tokens(static_cast<std::size_t>(n));
    int dropper = -1;
    if (k % 5 == 4 && alive.size() > 1) dropper = order[order.size() / 2];
    for (int r : order) {
      if (r == dropper) {
        b->arrive_and_drop(r);
      } else {
        tokens[static_cast<std::size_t>(r)] = b->arrive(r);
      }
    }
    ASSERT_EQ(completions, k + 1) << "phase " << k;
    for (int r : order) {
      if (r != dropper) b->wait(r, tokens[static_cast<std::size_t>(r)]);
    }
    if (dropper >= 0) alive.erase(std::find(alive.begin(), alive.end(), dropper));
    EXPECT_EQ(b->participants(), static_cast<int>(alive.size()));
  }
}

// G5: phase counters continue from just below 2^31, 2^32, 2^63 and 2^64; reductions (which
// need a completion step that the round barriers do not run in plain phases) and plain phases
// alternate and stay exact across the wrap.
TEST_P(Contract, PhasesPastEveryWrap) {
  const int n = p();
  for (std::uint64_t start : {(std::uint64_t{1} << 31) - 3, (std::uint64_t{1} << 32) - 3,
                              (std::uint64_t{1} << 63) - 3, std::numeric_limits<std::uint64_t>::max() - 2}) {
    auto b = make();
    internal::BarrierTesting::set_phase(*b, start);
    std::atomic<long> failures{0};
    std::vector<int> cell(static_cast<std::size_t>(n), -1);
    expect_no_errors(run_ranks(n, [&](int rank) {
      for (int k = 0; k < 8; ++k) {
        set_doing(rank, "phase start + " + std::to_string(k + 1));
        cell[static_cast<std::size_t>(rank)] = k;
        if (k % 2 == 0) {
          b->arrive_and_wait(rank);
        } else {
          const int sum = b->arrive_and_reduce(rank, rank + k, [](int x, int y) { return x + y; });
          if (sum != n * (n - 1) / 2 + n * k) failures.fetch_add(1);
        }
        for (int j = 0; j < n; ++j) {
          if (cell[static_cast<std::size_t>(j)] < k) failures.fetch_add(1);
        }
        b->arrive_and_wait(rank);  // nobody rewrites a cell before everyone checked it
      }
    }));
    EXPECT_EQ(failures.load(), 0) << "start " << start;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Contract, testing::ValuesIn(configs({2, 3, 5, 8, 13})), config_name);

// reason() states the wait policy in use: the given one, or the oversubscribed one when p
// exceeds the CPUs, or the debug poll.
TEST(BarrierReason, TellsThePolicyInUse) {
  BarrierOptions o;
  o.cpus = 4;
  o.wait = WaitPolicy{7'000, 11'000};
  CentralBarrier fits(4, o);
  EXPECT_NE(fits.reason().find("spin up to 7 us (adaptive), yield up to 11 us, then block in a futex"), std::string::npos)
      << fits.reason();
  CentralBarrier over(5, o);
  EXPECT_NE(over.reason().find("oversubscribed (p = 5 > 4 CPUs): no spin, yield up to 100 us, then block in a futex"),
            std::string::npos)
      << over.reason();
  o.oversubscribed_wait = std::nullopt;
  CentralBarrier always(5, o);
  EXPECT_NE(always.reason().find("spin up to 7 us"), std::string::npos) << always.reason();
  o.debug_timeout = std::chrono::milliseconds(5);
  CentralBarrier debug(2, o);
  EXPECT_NE(debug.reason().find("then poll (debug mode)"), std::string::npos) << debug.reason();
}

// CPUs are counted from the process's allowed set: with the process (this thread is the main
// one, whose mask allowed_cpu_count() reads with the calling thread's) restricted to one CPU, a
// Barrier for two ranks is built as oversubscribed.
TEST(BarrierCpus, CountedFromTheAllowedSet) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mine)) {
      CPU_SET(c, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const int counted = allowed_cpu_count();
  Barrier b(2);
  const std::string reason = b.reason();
  const std::string algorithm = b.algorithm();
  ASSERT_EQ(sched_setaffinity(0, sizeof mine, &mine), 0);
  ASSERT_EQ(counted, 1) << "this test must run on the process's main thread";
  EXPECT_EQ(algorithm, "central");
  EXPECT_NE(reason.find("2 threads on 1 allowed CPUs are oversubscribed"), std::string::npos) << reason;
  EXPECT_NE(reason.find("oversubscribed (p = 2 > 1 CPUs)"), std::string::npos) << reason;
}

// Waiting (docs/barrier.md "Waiting", *Yield*): under the oversubscribed policy a rank shares
// its CPU with the ranks it waits for, so a slow yield that ends its wait was a hand-off to them;
// with no more ranks than CPUs it is a time slice lost to another process and backs off.
TEST(BarrierWait, OnlyOversubscribedWaitsCountASlowYieldAsAHandOff) {
  BarrierOptions fits;
  fits.cpus = 4;
  Barrier a(2, fits);
  EXPECT_FALSE(internal::BarrierTesting::waits_share_cpu(a)) << a.reason();
  BarrierOptions over;
  over.cpus = 1;
  Barrier b(2, over);
  EXPECT_TRUE(internal::BarrierTesting::waits_share_cpu(b)) << b.reason();
}

// Waiting (barrier.hpp: waiting "so any number of threads on any number of cores makes
// progress"; docs/barrier.md "Waiting", co-location): two ranks held on one CPU, with no more
// ranks than CPUs, find themselves co-located and try to move by blocking (at least once);
// since the affinity keeps them together, every move fails and the back-off bounds the tries
// (at most one per 16 waits after the first). Without the move the first count is 0; without
// the back-off every wait whose spin times out blocks.
TEST(BarrierWait, ColocatedRanksTryToMoveAndBackOff) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &mine)) first = c;
  ASSERT_GE(first, 0);
  BarrierOptions o;
  o.cpus = 2;  // the policy for p <= CPUs, whatever this machine has
  TournamentBarrier b(2, o);
  constexpr int kPhases = 2000;
  auto body = [&](int rank) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    for (int k = 0; k < kPhases; ++k) b.arrive_and_wait(rank);
  };
  std::thread other(body, 1);
  body(0);
  other.join();
  ASSERT_EQ(sched_setaffinity(0, sizeof mine, &mine), 0);
  const std::uint64_t moves = internal::BarrierTesting::colocation_moves(b);
  EXPECT_GE(moves, 1U);
  EXPECT_LE(moves, 2U * (kPhases / 16 + 1)) << "the back-off did not hold";
}

// The explicit co-location move leaves the thread's own CPU mask as it was, and does nothing
// where the mask allows no CPU but the one another rank last arrived on.
TEST(BarrierWait, MoveApartKeepsTheThreadsMaskAndNeedsAFreeCpu) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mine)) cpus.push_back(c);
  ASSERT_FALSE(cpus.empty());
  BarrierOptions o;
  o.cpus = 2;
  TournamentBarrier b(2, o);
  const auto pin = [](const std::vector<int>& set) {
    cpu_set_t m;
    CPU_ZERO(&m);
    for (int c : set) CPU_SET(c, &m);
    return sched_setaffinity(0, sizeof m, &m) == 0;
  };
  // Both ranks arrive on cpus[0], so it is taken.
  std::thread other([&] {
    ASSERT_TRUE(pin({cpus[0]}));
    for (int k = 0; k < 10; ++k) b.arrive_and_wait(1);
  });
  ASSERT_TRUE(pin({cpus[0]}));
  for (int k = 0; k < 10; ++k) b.arrive_and_wait(0);
  other.join();
  EXPECT_FALSE(internal::BarrierTesting::move_apart(b)) << "a mask of one CPU allows no move";
  cpu_set_t now;
  ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_EQ(CPU_COUNT(&now), 1);
  EXPECT_TRUE(CPU_ISSET(cpus[0], &now));
  if (cpus.size() >= 2) {
    ASSERT_TRUE(pin(cpus));
    // Moved (from cpus[0]) or not (the scheduler had already taken it elsewhere): either way its
    // mask is the one it had.
    (void)internal::BarrierTesting::move_apart(b);
    ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
    EXPECT_TRUE(CPU_EQUAL(&now, &mine));
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof mine, &mine), 0);
}

}  // namespace
}  // namespace postbox
