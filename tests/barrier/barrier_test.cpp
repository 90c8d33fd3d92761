// Tests for postbox/barrier/barrier.hpp: every barrier × p in {1, 2, 3, 5, 8, 13, 32, 64}
// (oversubscribed on small machines), run from std::thread and from OpenMP threads.
#include "postbox/barrier/barrier.hpp"

#include "barrier_support.hpp"
#include "scoped_env.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/runtime/calibrate.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox {
namespace {

// One barrier configuration under test.
struct Row {
  const char* file;
  int line;
  const char* label;
  const char* name;  // for make_barrier
  std::optional<SendRecv> send_recv;
  const char* synthetic;  // topology for hier/default, nullptr: the machine
};

SendRecv sr(std::int64_t s, std::int64_t r) { return SendRecv{Rational(s), Rational(r)}; }

const Row kRows[] = {
    {__FILE__, __LINE__, "central", "central", std::nullopt, nullptr},
    {__FILE__, __LINE__, "dissemination", "dissemination", std::nullopt, nullptr},
    {__FILE__, __LINE__, "combine_l1", "combine", sr(1, 0), nullptr},
    {__FILE__, __LINE__, "combine_l2", "combine", std::nullopt, nullptr},
    {__FILE__, __LINE__, "combine_l3", "combine", sr(1, 2), nullptr},
    {__FILE__, __LINE__, "combine_l2_6", "combine", sr(5, 8), nullptr},  // λ = 2.6 → ⌈λ⌉ = 3
    {__FILE__, __LINE__, "mcs", "mcs", std::nullopt, nullptr},
    {__FILE__, __LINE__, "tournament", "tournament", std::nullopt, nullptr},
    {__FILE__, __LINE__, "fibo_l2", "fibo", std::nullopt, nullptr},
    {__FILE__, __LINE__, "fibo_s1_r3", "fibo", sr(1, 3), nullptr},
    {__FILE__, __LINE__, "hier_2pack", "hier", std::nullopt, "pack:2 core:4 pu:2"},
    {__FILE__, __LINE__, "default", "default", std::nullopt, nullptr},
};
const int kPs[] = {1, 2, 3, 5, 8, 13, 32, 64};

struct Param {
  Row row;
  int p;
};

std::string param_name(const testing::TestParamInfo<Param>& info) {
  return std::string(info.param.row.label) + "_p" + std::to_string(info.param.p);
}

std::vector<Param> all_params() {
  std::vector<Param> v;
  for (const Row& row : kRows) {
    for (int p : kPs) v.push_back({row, p});
  }
  return v;
}

// Episodes for a test whose Release budget is `base` at p <= 8: fewer for p = 13 and the
// heavily oversubscribed p >= 32 (every phase there costs a round of context switches on a
// 2-core machine), and under ThreadSanitizer, so the suite stays within its time budget.
int episodes(int p, int base) {
#ifdef POSTBOX_TSAN
  base /= 20;
#endif
  if (p >= 64) base /= 40;
  else if (p >= 32) base /= 20;
  else if (p >= 13) base /= 5;
  return std::max(10, base);
}

BarrierOptions options_for(const Row& row) {
  BarrierOptions o;
  o.send_recv = row.send_recv;
  if (row.synthetic != nullptr) o.topology = std::make_shared<const Topology>(Topology::synthetic(row.synthetic));
  return o;
}

using test::expect_no_errors;
using test::run_ranks;

class BarrierTest : public testing::TestWithParam<Param> {
 protected:
  std::unique_ptr<AnyBarrier> make(BarrierOptions o) const {
    const Row& row = GetParam().row;
    o.send_recv = row.send_recv;
    if (row.synthetic != nullptr) o.topology = std::make_shared<const Topology>(Topology::synthetic(row.synthetic));
    return make_barrier(row.name, GetParam().p, std::move(o));
  }
  std::unique_ptr<AnyBarrier> make() const { return make(BarrierOptions{}); }
  int p() const { return GetParam().p; }
  void trace() const { SCOPED_TRACE(testing::Message() << GetParam().row.file << ":" << GetParam().row.line); }
};

// Nobody leaves early, nobody is lost: before arriving at phase k each rank writes k into its
// cell of buffer k % 2 and bumps a counter; after leaving it reads every cell (plain reads:
// the barrier's memory ordering makes them race-free) and checks the counter's bounds.
TEST_P(BarrierTest, PhaseCounter) {
  SCOPED_TRACE(testing::Message() << GetParam().row.file << ":" << GetParam().row.line);
  auto b = make();
  const int n = p();
  const int E = episodes(n, 10'000);
  std::vector<std::vector<int>> cell(2, std::vector<int>(static_cast<std::size_t>(n), -1));
  std::atomic<long> arrivals{0};
  std::atomic<long> failures{0};
  expect_no_errors(run_ranks(n, [&](int rank) {
    for (int k = 0; k < E; ++k) {
      cell[static_cast<std::size_t>(k % 2)][static_cast<std::size_t>(rank)] = k;
      arrivals.fetch_add(1, std::memory_order_relaxed);
      b->arrive_and_wait(rank);
      const long a = arrivals.load(std::memory_order_relaxed);
      if (a < static_cast<long>(k + 1) * n || a > static_cast<long>(k + 2) * n - 1) failures.fetch_add(1);
      for (int j = 0; j < n; ++j) {
        if (cell[static_cast<std::size_t>(k % 2)][static_cast<std::size_t>(j)] != k) failures.fetch_add(1);
      }
    }
  }));
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(arrivals.load(), static_cast<long>(E) * n);
}

// The completion function runs exactly once per phase, after all arrived and before anyone
// leaves; its plain writes are visible to everyone afterwards.
TEST_P(BarrierTest, CompletionOncePerPhase) {
  const int n = p();
  const int E = episodes(n, 1'000);
  long completions = 0;  // plain: only the completion step writes it
  std::atomic<long> arrivals{0};
  std::atomic<long> failures{0};
  BarrierOptions o;
  o.completion = [&] {
    ++completions;
    if (arrivals.load(std::memory_order_relaxed) != completions * n) failures.fetch_add(1);
  };
  auto b = make(std::move(o));
  expect_no_errors(run_ranks(n, [&](int rank) {
    for (int k = 0; k < E; ++k) {
      arrivals.fetch_add(1, std::memory_order_relaxed);
      b->arrive_and_wait(rank);
      if (completions != k + 1) failures.fetch_add(1);
    }
  }));
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(completions, E);
}

// Reductions are exact: an integer sum, and a non-commutative associative op (composition of
// affine maps x → a·x + b mod 2^64) folded in rank order.
struct Affine {
  std::uint64_t a = 1, b = 0;
  bool operator==(const Affine&) const = default;
};
Affine compose(const Affine& f, const Affine& g) { return {f.a * g.a, f.b * g.a + g.b}; }  // g(f(x))

TEST_P(BarrierTest, ReduceExact) {
  const int n = p();
  const int E = episodes(n, 1'000);
  auto b = make();
  std::atomic<long> failures{0};
  expect_no_errors(run_ranks(n, [&](int rank) {
    for (int k = 0; k < E; ++k) {
      const std::int64_t sum = b->arrive_and_reduce(rank, std::int64_t{rank + 1} * (k + 1),
                                                    [](std::int64_t x, std::int64_t y) { return x + y; });
      if (sum != std::int64_t{n} * (n + 1) / 2 * (k + 1)) failures.fetch_add(1);
      const Affine mine{static_cast<std::uint64_t>(2 * rank + 3), static_cast<std::uint64_t>(rank + k)};
      const Affine got = b->arrive_and_reduce(rank, mine, compose);
      Affine want{static_cast<std::uint64_t>(3), static_cast<std::uint64_t>(k)};
      for (int j = 1; j < n; ++j) {
        want = compose(want, Affine{static_cast<std::uint64_t>(2 * j + 3), static_cast<std::uint64_t>(j + k)});
      }
      if (!(got == want)) failures.fetch_add(1);
    }
  }));
  EXPECT_EQ(failures.load(), 0);
}

// Split phase with work between arrive() and wait(); half the ranks use arrive_and_wait.
TEST_P(BarrierTest, SplitPhase) {
  const int n = p();
  const int E = episodes(n, 1'000);
  auto b = make();
  std::vector<std::vector<int>> cell(2, std::vector<int>(static_cast<std::size_t>(n), -1));
  std::atomic<long> failures{0};
  expect_no_errors(run_ranks(n, [&](int rank) {
    std::uint64_t work = static_cast<std::uint64_t>(rank);
    for (int k = 0; k < E; ++k) {
      cell[static_cast<std::size_t>(k % 2)][static_cast<std::size_t>(rank)] = k;
      if (rank % 2 == 0) {
        BarrierToken t = b->arrive(rank);
        for (int i = 0; i < 50 + rank * 7; ++i) work = work * 6364136223846793005ULL + 1442695040888963407ULL;
        b->wait(rank, t);
      } else {
        b->arrive_and_wait(rank);
      }
      for (int j = 0; j < n; ++j) {
        if (cell[static_cast<std::size_t>(k % 2)][static_cast<std::size_t>(j)] != k) failures.fetch_add(1);
      }
    }
    if (work == 42) failures.fetch_add(0);  // keeps the work from being optimised away
  }));
  EXPECT_EQ(failures.load(), 0);
}

// arrive_and_drop: ranks r with r % 3 == 0 (the root/leader, rank 0, among them) drop at
// episode 5 + r; every phase still completes once, with exactly the remaining participants.
TEST_P(BarrierTest, ArriveAndDrop) {
  const int n = p();
  const int E = std::max(episodes(n, 1'000), 5 + n + 10);
  auto drops_at = [](int r) { return r % 3 == 0 ? 5 + r : -1; };
  // expected[k]: total arrivals after phase k completes.
  std::vector<long> expected(static_cast<std::size_t>(E));
  long total = 0;
  for (int k = 0; k < E; ++k) {
    for (int r = 0; r < n; ++r) {
      if (drops_at(r) < 0 || k <= drops_at(r)) ++total;
    }
    expected[static_cast<std::size_t>(k)] = total;
  }
  long phases = 0;
  std::atomic<long> arrivals{0};
  std::atomic<long> failures{0};
  BarrierOptions o;
  o.completion = [&] {
    if (arrivals.load(std::memory_order_relaxed) != expected[static_cast<std::size_t>(phases)]) failures.fetch_add(1);
    ++phases;
  };
  auto b = make(std::move(o));
  int last_phase = 0;  // the last phase in which anyone arrives
  for (int k = 0; k < E; ++k) {
    if (k == 0 || expected[static_cast<std::size_t>(k)] != expected[static_cast<std::size_t>(k - 1)]) last_phase = k;
  }
  expect_no_errors(run_ranks(n, [&](int rank) {
    for (int k = 0; k < E; ++k) {
      arrivals.fetch_add(1, std::memory_order_relaxed);
      if (k == drops_at(rank)) {
        b->arrive_and_drop(rank);
        return;
      }
      b->arrive_and_wait(rank);
      if (arrivals.load(std::memory_order_relaxed) < expected[static_cast<std::size_t>(k)]) failures.fetch_add(1);
    }
  }));
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(phases, last_phase + 1);
  int remaining = 0;
  for (int r = 0; r < n; ++r) remaining += drops_at(r) < 0 ? 1 : 0;
  EXPECT_EQ(b->participants(), remaining);
}

// An exception from the completion function propagates to the thread that ran it; every other
// participant leaves that phase with BarrierBroken, and later calls throw BarrierBroken.
TEST_P(BarrierTest, CompletionThrows) {
  const int n = p();
  constexpr int kThrowAt = 3;
  int phase = 0;
  BarrierOptions o;
  o.completion = [&] {
    if (++phase == kThrowAt) throw std::runtime_error("boom");
  };
  auto b = make(std::move(o));
  std::atomic<int> boom{0}, broken{0}, later_broken{0}, completed{0};
  expect_no_errors(run_ranks(n, [&](int rank) {
    try {
      for (int k = 0; k < 10; ++k) {
        b->arrive_and_wait(rank);
        completed.fetch_add(1);
      }
    } catch (const BarrierBroken&) {
      broken.fetch_add(1);
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()) == "boom") boom.fetch_add(1);
    }
    try {
      b->arrive_and_wait(rank);
    } catch (const BarrierBroken&) {
      later_broken.fetch_add(1);
    }
  }));
  EXPECT_EQ(boom.load(), 1);
  EXPECT_EQ(broken.load(), n - 1);
  EXPECT_EQ(later_broken.load(), n);
  EXPECT_EQ(completed.load(), (kThrowAt - 1) * n);
}

// External OpenMP threads (libgomp) with omp_get_thread_num() as the rank.
TEST_P(BarrierTest, OpenMpThreads) {
#ifdef POSTBOX_TSAN
  GTEST_SKIP() << "libgomp is not built with ThreadSanitizer: its own synchronisation would be reported";
#else
  const int n = p();
  const int E = episodes(n, 1'000);
  auto b = make();
  std::vector<std::vector<int>> cell(2, std::vector<int>(static_cast<std::size_t>(n), -1));
  std::atomic<long> failures{0};
  std::atomic<int> team{0};
  omp_set_dynamic(0);
#pragma omp parallel num_threads(n)
  {
    const int rank = omp_get_thread_num();
    if (rank == 0) team.store(omp_get_num_threads());
    for (int k = 0; k < E; ++k) {
      cell[static_cast<std::size_t>(k % 2)][static_cast<std::size_t>(rank)] = k;
      b->arrive_and_wait(rank);
      for (int j = 0; j < n; ++j) {
        if (cell[static_cast<std::size_t>(k % 2)][static_cast<std::size_t>(j)] != k) failures.fetch_add(1);
      }
    }
  }
  EXPECT_EQ(team.load(), n);
  EXPECT_EQ(failures.load(), 0);
#endif
}

// abort() releases every waiter: ranks 0..p-2 wait in phase 0 for rank p − 1, which never
// comes; once they all announced their arrival another thread aborts. Each leaves with
// postbox::Aborted (from its wait, or at entry if the abort came first), later calls too.
TEST_P(BarrierTest, AbortReleasesWaiters) {
  const int n = p();
  auto b = make();
  std::atomic<int> entering{0}, aborted{0};
  std::thread aborter([&] {
    while (entering.load() < n - 1) std::this_thread::yield();
    b->abort();
    b->abort();  // idempotent
  });
  expect_no_errors(run_ranks(n - 1, [&](int rank) {
    entering.fetch_add(1);
    try {
      b->arrive_and_wait(rank);
    } catch (const Aborted&) {
      aborted.fetch_add(1);
    }
  }));
  aborter.join();
  EXPECT_EQ(aborted.load(), n - 1);
  EXPECT_THROW(b->arrive_and_wait(n - 1), Aborted);
  EXPECT_THROW((void)b->arrive(0), Aborted);
}

INSTANTIATE_TEST_SUITE_P(All, BarrierTest, testing::ValuesIn(all_params()), param_name);

// ---- Misuse fails fast (death tests) ---------------------------------------------------------

class BarrierDeathTest : public testing::TestWithParam<Row> {};

TEST_P(BarrierDeathTest, RankOutOfRange) {
  auto b = make_barrier(GetParam().name, 2, options_for(GetParam()));
  EXPECT_DEATH(b->arrive_and_wait(2), "rank 2 outside 0..1");
  EXPECT_DEATH(b->arrive_and_wait(-1), "rank -1 outside 0..1");
}

TEST_P(BarrierDeathTest, TwoThreadsOneRank) {
  auto b = make_barrier(GetParam().name, 2, options_for(GetParam()));
  // Whichever thread enters second dies; the first waits for rank 1, which never comes.
  EXPECT_DEATH(
      {
        std::thread t([&] { b->arrive_and_wait(0); });
        b->arrive_and_wait(0);
        t.join();
      },
      "two threads use rank 0 at once");
}

TEST_P(BarrierDeathTest, ArriveTwiceInOnePhase) {
  auto b = make_barrier(GetParam().name, 3, options_for(GetParam()));
  EXPECT_DEATH(
      {
        BarrierToken t = b->arrive(1);
        (void)t;
        b->arrive_and_wait(1);
      },
      "rank 1 arrives twice in one phase");
}

TEST_P(BarrierDeathTest, WaitWithoutArrive) {
  auto b = make_barrier(GetParam().name, 2, options_for(GetParam()));
  EXPECT_DEATH(b->wait(0, BarrierToken{1}), "rank 0 waits without a matching arrive");
}

TEST_P(BarrierDeathTest, UseAfterDrop) {
  auto b = make_barrier(GetParam().name, 1, options_for(GetParam()));
  EXPECT_DEATH(
      {
        b->arrive_and_drop(0);
        b->arrive_and_wait(0);
      },
      "rank 0 is used after arrive_and_drop");
}

TEST_P(BarrierDeathTest, ReduceWithDifferentTypes) {
  auto b = make_barrier(GetParam().name, 2, options_for(GetParam()));
  EXPECT_DEATH(
      {
        std::thread t([&] { (void)b->arrive_and_reduce(1, 1.0, [](double x, double y) { return x + y; }); });
        (void)b->arrive_and_reduce(0, 1, [](int x, int y) { return x + y; });
        t.join();
      },
      "different value or op types");
}

std::string row_name(const testing::TestParamInfo<Row>& info) { return info.param.label; }

INSTANTIATE_TEST_SUITE_P(All, BarrierDeathTest, testing::ValuesIn(kRows), row_name);

// ---- Debug mode ----------------------------------------------------------------------------

TEST(BarrierDebug, NamesRanksThatHaveNotArrived) {
  BarrierOptions o;
  o.debug_timeout = std::chrono::milliseconds(1);
  CentralBarrier b(3, o);
  std::atomic<bool> go{false};
  testing::internal::CaptureStderr();
  std::thread late([&] {
    while (!go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    b.arrive_and_wait(2);
  });
  std::thread early([&] { b.arrive_and_wait(1); });
  // Rank 0 waits with ranks 1 (maybe) and 2 (surely) missing; release rank 2 after it printed.
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    go.store(true);
  });
  b.arrive_and_wait(0);
  late.join();
  early.join();
  releaser.join();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("central barrier: rank "), std::string::npos) << err;
  EXPECT_NE(err.find("ranks not arrived: "), std::string::npos) << err;
  EXPECT_NE(err.find("2\n"), std::string::npos) << err;
}

// ---- The default's choice, the factory, the combine rounds -----------------------------------

// s and r: BarrierOptions::send_recv when given, else calibrated_latency() in whole ns; reason()
// says which and where from.
TEST(BarrierCalibration, GivenFiguresAreNamed) {
  BarrierOptions o;
  o.send_recv = SendRecv{Rational(3), Rational(7)};
  FiboBarrier f(4, o);
  EXPECT_NE(f.reason().find("s = 3, r = 7 ns"), std::string::npos) << f.reason();
  EXPECT_NE(f.reason().find("given in BarrierOptions::send_recv"), std::string::npos) << f.reason();
}

// FiboBarrier and CombineBarrier take calibrated_latency() (which measures once per process
// when nothing is saved); Barrier never measures: the saved figures, else s = r, said so.
TEST(BarrierCalibration, UncalibratedUsesTheCalibration) {
  auto figures = [](double s_ns, double r_ns) {
    return "s = " + std::to_string(std::max<long long>(1, std::llround(s_ns))) + ", r = " +
           std::to_string(std::max<long long>(0, std::llround(r_ns))) + " ns";
  };
  const Calibration& c = calibrated_latency();
  const std::vector<std::string> sources = {"from POSTBOX_S_NS and POSTBOX_R_NS", "from the saved calibration",
                                            "measured at first use", "assumed", "one from POSTBOX_S_NS/POSTBOX_R_NS"};
  FiboBarrier f(4);
  CombineBarrier cb(4);
  for (const std::string* reason : {&f.reason(), &cb.reason()}) {
    EXPECT_NE(reason->find(figures(c.s_ns, c.r_ns)), std::string::npos) << *reason;
    bool named = false;
    for (const auto& src : sources) named = named || reason->find(src) != std::string::npos;
    EXPECT_TRUE(named) << *reason;
  }
  BarrierOptions one_group;
  one_group.cpus = 4;
  one_group.topology = std::make_shared<const Topology>(Topology::synthetic("pack:1 core:4 pu:1"));
  Barrier d(4, one_group);
  const auto saved = saved_latency();
  if (saved) {
    EXPECT_NE(d.reason().find(figures(saved->s_ns, saved->r_ns)), std::string::npos) << d.reason();
  } else {
    EXPECT_NE(d.reason().find("s = 1, r = 1 ns (λ = 2, assumed: no saved calibration, and Barrier never measures"),
              std::string::npos)
        << d.reason();
  }
}

using testing_support::ScopedEnv;

// The default's choice depends on nothing measured: with no saved calibration every
// construction picks the same algorithm with the same reason, and says the figures are assumed.
TEST(BarrierChoice, NeverMeasuresAndIsTheSameEveryTime) {
  const ScopedEnv s("POSTBOX_S_NS", nullptr), r("POSTBOX_R_NS", nullptr);
  const ScopedEnv cache("XDG_CACHE_HOME", "/nonexistent-postbox-test-cache");
  ASSERT_FALSE(saved_latency().has_value());
  for (int p : {2, 3, 8, 17, 64}) {
    BarrierOptions o;
    o.cpus = 64;
    o.topology = std::make_shared<const Topology>(Topology::synthetic("pack:1 core:64 pu:1"));
    const Barrier first(p, o);
    // p = 2 takes the tournament, which uses no figures; above it, combine or fibo by λ.
    if (p > 2) {
      EXPECT_NE(first.reason().find("assumed: no saved calibration"), std::string::npos) << first.reason();
    }
    for (int k = 0; k < 9; ++k) {
      const Barrier again(p, o);
      EXPECT_STREQ(again.algorithm(), first.algorithm()) << "p = " << p;
      EXPECT_EQ(again.reason(), first.reason()) << "p = " << p;
    }
  }
}

// ... and with saved figures, the choice follows them: a large λ (r ≫ s) above 16 ranks takes
// the Fibo-tree's fewer messages, λ = 2 keeps the combine rounds.
TEST(BarrierChoice, FollowsTheSavedFigures) {
  BarrierOptions o;
  o.cpus = 64;
  o.topology = std::make_shared<const Topology>(Topology::synthetic("pack:1 core:64 pu:1"));
  {
    const ScopedEnv s("POSTBOX_S_NS", "10"), r("POSTBOX_R_NS", "1000");
    const Barrier b(17, o);
    EXPECT_STREQ(b.algorithm(), "fibo") << b.reason();
    EXPECT_NE(b.reason().find("from POSTBOX_S_NS and POSTBOX_R_NS"), std::string::npos) << b.reason();
  }
  {
    const ScopedEnv s("POSTBOX_S_NS", "10"), r("POSTBOX_R_NS", "10");
    const Barrier b(17, o);
    EXPECT_STREQ(b.algorithm(), "combine") << b.reason();
  }
}

TEST(BarrierChoice, OversubscribedPicksCentral) {
  BarrierOptions o;
  o.cpus = 2;
  Barrier b(8, o);
  EXPECT_STREQ(b.algorithm(), "central");
  EXPECT_NE(b.reason().find("oversubscribed"), std::string::npos) << b.reason();
}

// Two ranks that fit the CPUs: the tournament's one match lets the second arriver leave at once.
TEST(BarrierChoice, TwoRanksPickTournament) {
  BarrierOptions o;
  o.cpus = 4;
  Barrier b(2, o);
  EXPECT_STREQ(b.algorithm(), "tournament");
  EXPECT_EQ(b.reason().rfind("tournament: 2 ranks on 4 allowed CPUs", 0), 0U) << b.reason();
}

TEST(BarrierChoice, OneGroupPicksCombine) {
  BarrierOptions o;
  o.cpus = 8;
  o.topology = std::make_shared<const Topology>(Topology::synthetic("pack:1 core:8 pu:1"));
  Barrier b(8, o);
  EXPECT_STREQ(b.algorithm(), "combine");
  EXPECT_EQ(b.reason().rfind("combine:", 0), 0U) << b.reason();
}

TEST(BarrierChoice, TwoPackagesPickHier) {
  BarrierOptions o;
  o.cpus = 8;
  o.topology = std::make_shared<const Topology>(Topology::synthetic("pack:2 core:4 pu:1"));
  Barrier b(8, o);
  EXPECT_STREQ(b.algorithm(), "hier");
  EXPECT_NE(b.reason().find("2 L3/package groups"), std::string::npos) << b.reason();
}

TEST(BarrierChoice, FibersPickCentralAndSaySo) {
  BarrierOptions o;
  o.cpus = 8;
  o.topology = std::make_shared<const Topology>(Topology::synthetic("pack:2 core:4 pu:1"));  // hier on threads
  o.fibers = true;
  Barrier b(8, o);
  EXPECT_STREQ(b.algorithm(), "central");
  EXPECT_EQ(b.reason().rfind("central: the 8 ranks are fibers", 0), 0U) << b.reason();
  EXPECT_NE(b.reason().find("waiting: ranks are fibers: a waiting rank switches"), std::string::npos) << b.reason();
  Barrier one(1, o);
  EXPECT_EQ(one.reason().rfind("central: p = 1", 0), 0U) << one.reason();
  o.debug_timeout = std::chrono::milliseconds(5);
  FiboBarrier f(8, o);
  EXPECT_NE(f.reason().find("switches to the next ready rank of its worker, polling (debug mode)"), std::string::npos)
      << f.reason();
}

TEST(BarrierDebug, OnFibersPollsBySwitchingAndNamesTheMissingRank) {
  // One worker: were the poll a sleep, rank 2 could still run between sleeps, so this checks
  // the report; TeamFibers covers the switching itself.
  TeamOptions t;
  t.ranks = RanksMode::fibers;
  t.workers = 1;
  t.pin = false;
  Team team(3, t);
  BarrierOptions o;
  o.debug_timeout = std::chrono::milliseconds(1);
  o.fibers = true;
  CentralBarrier b(3, o);
  testing::internal::CaptureStderr();
  team.run([&](RankContext& ctx) {
    if (ctx.rank() == 2) {
      // Late by 20 ms of other ranks' polls (not a timing assertion: only an order).
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
      while (std::chrono::steady_clock::now() < until) test::yield_rank();
    }
    b.arrive_and_wait(ctx.rank());
  });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ranks not arrived: 2\n"), std::string::npos) << err;
}

// barrier.hpp, CentralBarrier: on fibers the first phase's completion groups the ranks by worker
// (one shared increment per worker from then on); on threads nothing is grouped. The grouped
// phases keep the contract (G1 checked here; every contract test runs on fibers as well).
TEST(CentralOnFibers, TheFirstPhaseGroupsTheRanksByWorkerAndLaterPhasesKeepTheContract) {
  constexpr int kP = 64;
  constexpr int kPhases = 20;
  for (const bool fibers : {false, true}) {
    SCOPED_TRACE(fibers ? "fibers" : "threads");
    BarrierOptions o;
    o.fibers = fibers;
    CentralBarrier b(kP, o);
    std::atomic<int> arrived{0};
    std::atomic<int> early{0};
    auto body = [&](int rank) {
      for (int k = 0; k < kPhases; ++k) {
        arrived.fetch_add(1);
        b.arrive_and_wait(rank);
        if (arrived.load() < (k + 1) * kP) early.fetch_add(1);  // G1
      }
    };
    if (fibers) {
      TeamOptions t;
      t.ranks = RanksMode::fibers;
      t.workers = 2;
      t.pin = false;
      Team team(kP, t);
      team.run([&](RankContext& ctx) { body(ctx.rank()); });
      EXPECT_EQ(internal::BarrierTesting::central_groups(b), 2);
      // The same ranks on another team's 4 workers: arrivals from other workers regroup.
      arrived.store(0);
      t.workers = 4;
      Team other(kP, t);
      other.run([&](RankContext& ctx) { body(ctx.rank()); });
      EXPECT_EQ(internal::BarrierTesting::central_groups(b), 4);
    } else {
      std::vector<std::thread> threads;
      for (int r = 0; r < kP; ++r) threads.emplace_back(body, r);
      for (auto& th : threads) th.join();
      EXPECT_EQ(internal::BarrierTesting::central_groups(b), 0);
    }
    EXPECT_EQ(early.load(), 0);
  }
}

TEST(BarrierChoice, ReasonIsOneLine) {
  Barrier b(2);
  EXPECT_FALSE(b.reason().empty());
  EXPECT_EQ(b.reason().find('\n'), std::string::npos);
}

TEST(BarrierFactory, NamesAndUnknown) {
  for (const std::string& name : barrier_names()) {
    auto b = make_barrier(name, 3);
    EXPECT_EQ(b->name(), name);
    EXPECT_EQ(b->size(), 3);
  }
  EXPECT_EQ(make_barrier("mcs", 2)->algorithm(), std::string("mcs"));
  EXPECT_THROW((void)make_barrier("fastest", 2), InputError);
  EXPECT_THROW((void)make_barrier("central", 0), InputError);
  BarrierOptions bad;
  bad.send_recv = SendRecv{Rational(0), Rational(1)};
  EXPECT_THROW((void)make_barrier("fibo", 2, bad), InputError);
}

struct LambdaRow {
  const char* file;
  int line;
  std::int64_t s, r;
};

std::string lambda_row_name(const testing::TestParamInfo<LambdaRow>& row) {
  return "s" + std::to_string(row.param.s) + "_r" + std::to_string(row.param.r);
}

class CombineLambdaTest : public testing::TestWithParam<LambdaRow> {};

// Bruck §3.3: an integer λ as it is; otherwise ⌊λ⌋ (delay-send) when its exact time T''_λ(p)
// is smaller than delay-receive's T'_λ(p) with ⌈λ⌉, else ⌈λ⌉ — for every p, the same rule as
// the postal allreduce (choose_postal).
TEST_P(CombineLambdaTest, FasterOfDelaySendAndDelayReceive) {
  const LambdaRow& row = GetParam();
  SCOPED_TRACE(testing::Message() << row.file << ":" << row.line);
  const SendRecv sr{Rational(row.s), Rational(row.r)};
  const Rational lambda = sr.lambda();
  for (int p : {2, 3, 5, 8, 13, 19, 64, 100}) {
    int want = 0;
    if (lambda.is_integer()) {
      want = static_cast<int>(lambda.num());
    } else {
      want = T_delay_send(lambda, p) < T_delay_receive(lambda, p) ? static_cast<int>(lambda.floor())
                                                                  : static_cast<int>(lambda.ceil());
    }
    EXPECT_EQ(combine_rounds_lambda(sr, p), want) << "p = " << p;
    EXPECT_EQ(combine_rounds_lambda(sr, p), choose_postal(lambda, p).L) << "p = " << p;
  }
}

INSTANTIATE_TEST_SUITE_P(All, CombineLambdaTest,
                         testing::Values(LambdaRow{__FILE__, __LINE__, 1, 0},     // λ = 1
                                         LambdaRow{__FILE__, __LINE__, 10, 4},    // λ = 1.4
                                         LambdaRow{__FILE__, __LINE__, 2, 1},     // λ = 1.5
                                         LambdaRow{__FILE__, __LINE__, 1, 1},     // λ = 2
                                         LambdaRow{__FILE__, __LINE__, 2, 3},     // λ = 2.5
                                         LambdaRow{__FILE__, __LINE__, 5, 8},     // λ = 2.6
                                         LambdaRow{__FILE__, __LINE__, 27, 88}),  // Cordsen's MANNA, λ ≈ 4.26
                         lambda_row_name);

}  // namespace
}  // namespace postbox
