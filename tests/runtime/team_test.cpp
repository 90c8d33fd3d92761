#include "postbox/runtime/team.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/wait.hpp"

namespace postbox {
namespace internal {
// The test seam team.hpp declares: a hook run() calls between deciding that a run aborted and
// resetting (the window in which an abort used to be lost).
struct TeamTestPeer {
  static void set_reset_hook(Team& team, std::function<void()> hook) { team.reset_hook_ = std::move(hook); }
};
}  // namespace internal

namespace {

int thread_count() {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++n;
  }
  return n;
}

std::shared_ptr<const Topology> synthetic(const char* desc) {
  return std::make_shared<const Topology>(Topology::synthetic(desc));
}

TEST(Team, RejectsFewerThanOneRank) {
  EXPECT_THROW(Team(0), InputError);
  EXPECT_THROW(Team(-4), InputError);
}

TEST(Team, RejectsAListNamingAMissingPu) {
  TeamOptions o;
  o.topology = synthetic("pack:1 core:2 pu:1");
  o.placement = Placement::parse("0,2");
  EXPECT_THROW(Team(2, o), InputError);
}

TEST(Team, SingleRankRunsOnItsOwnThreadPinned) {
  Team team(1);
  EXPECT_EQ(team.size(), 1);
  ASSERT_EQ(team.placement().size(), 1U);
  EXPECT_EQ(team.placement()[0], 0);
  EXPECT_EQ(team.pinned(), team.topology().can_bind());
  EXPECT_FALSE(team.wrapped());
  int seen_rank = -1;
  int seen_size = -1;
  std::thread::id who;
  team.run([&](RankContext& ctx) {
    seen_rank = ctx.rank();
    seen_size = ctx.size();
    who = std::this_thread::get_id();
  });
  EXPECT_EQ(seen_rank, 0);
  EXPECT_EQ(seen_size, 1);
  EXPECT_NE(who, std::this_thread::get_id());
}

TEST(Team, WritesBeforeRunReachRanksAndRankWritesReachTheCaller) {
  constexpr int p = 256;  // far more ranks than this box's cores
  Team team(p);
  EXPECT_EQ(team.wrapped(), team.workers() > team.topology().pus());
  std::vector<std::uint64_t> input(p);
  std::vector<std::uint64_t> output(p, 0);
  std::vector<int> ranks(p, -1);
  for (int round = 0; round < 3; ++round) {
    for (int r = 0; r < p; ++r) input[static_cast<std::size_t>(r)] = static_cast<std::uint64_t>(r * 1000 + round);
    team.run([&](RankContext& ctx) {
      const auto r = static_cast<std::size_t>(ctx.rank());
      output[r] = input[r] * 2;  // plain accesses: run() orders them (TSan checks)
      ranks[r] = ctx.rank();
    });
    for (int r = 0; r < p; ++r) {
      ASSERT_EQ(output[static_cast<std::size_t>(r)], static_cast<std::uint64_t>(r * 1000 + round) * 2);
      ASSERT_EQ(ranks[static_cast<std::size_t>(r)], r);
    }
  }
}

TEST(Team, PlacementFollowsTheOptionsAndSyntheticTopologiesAreNotPinned) {
  TeamOptions o;
  o.ranks = RanksMode::threads;
  o.topology = synthetic("pack:2 core:4 pu:2");
  o.placement = Placement::scatter();
  Team team(4, o);
  EXPECT_EQ(team.placement(), (std::vector<int>{0, 8, 2, 10}));
  EXPECT_FALSE(team.pinned());
  EXPECT_STREQ(team.topology().source_name(), "synthetic");
  std::atomic<int> sum{0};
  team.run([&](RankContext& ctx) { sum.fetch_add(ctx.rank() + 1, std::memory_order_relaxed); });
  EXPECT_EQ(sum.load(), 10);
}

TEST(Team, PinCanBeSwitchedOff) {
  TeamOptions o;
  o.pin = false;
  Team team(2, o);
  EXPECT_FALSE(team.pinned());
}

TEST(Team, WrappingIsSaidOnceOnStderr) {
  const int pus = Topology::machine().pus();
  TeamOptions o;
  o.ranks = RanksMode::threads;
  testing::internal::CaptureStderr();
  {
    Team team(pus + 1, o);
    team.run([](RankContext&) {});
    team.run([](RankContext&) {});
  }
  const std::string wrapped = testing::internal::GetCapturedStderr();
  testing::internal::CaptureStderr();
  { Team team(pus, o); }
  const std::string fits = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(wrapped.begin(), wrapped.end(), '\n'), 1) << wrapped;
  EXPECT_NE(wrapped.find("wrapping"), std::string::npos) << wrapped;
  EXPECT_EQ(fits, "");
  // announce_wrap = false: nothing printed, the same line in wrap_note() for the caller.
  o.announce_wrap = false;
  testing::internal::CaptureStderr();
  std::string note;
  {
    Team team(pus + 1, o);
    EXPECT_TRUE(team.wrapped());
    note = team.wrap_note();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(note + "\n", wrapped);
  EXPECT_EQ(Team(pus, o).wrap_note(), "");
}

// ---- failures ----------------------------------------------------------------------------

struct FailCase {
  int p;
  int failing_rank;
};

class TeamFailure : public testing::TestWithParam<FailCase> {};

TEST_P(TeamFailure, OneRankThrowsRunRethrowsAfterAllReturnedAndTheTeamIsReusable) {
  const FailCase c = GetParam();
  Team team(c.p);
  std::atomic<int> returned{0};
  try {
    team.run([&](RankContext& ctx) {
      if (ctx.rank() == c.failing_rank) throw std::runtime_error("rank " + std::to_string(ctx.rank()) + " failed");
      returned.fetch_add(1, std::memory_order_relaxed);
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "rank " + std::to_string(c.failing_rank) + " failed");
  }
  EXPECT_EQ(returned.load(), c.p - 1);
  EXPECT_FALSE(team.aborted());
  std::atomic<int> ran{0};
  team.run([&](RankContext&) { ran.fetch_add(1, std::memory_order_relaxed); });
  EXPECT_EQ(ran.load(), c.p);
}

INSTANTIATE_TEST_SUITE_P(Ranks, TeamFailure,
                         testing::Values(FailCase{1, 0}, FailCase{8, 0}, FailCase{8, 5}, FailCase{8, 7},
                                         FailCase{64, 63}));

TEST(Team, EveryRankThrowsRunRethrowsOneOfThem) {
  constexpr int p = 16;
  Team team(p);
  for (int round = 0; round < 20; ++round) {
    try {
      team.run([](RankContext& ctx) { throw std::invalid_argument("rank " + std::to_string(ctx.rank())); });
      FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      ASSERT_EQ(what.rfind("rank ", 0), 0U) << what;
      const int r = std::stoi(what.substr(5));
      EXPECT_GE(r, 0);
      EXPECT_LT(r, p);
    }
  }
  team.run([](RankContext&) {});
}

TEST(Team, AbortListenerReleasesARankBlockedOnItsOwnWord) {
  constexpr int p = 4;
  Team team(p);
  std::atomic<std::uint32_t> word{0};
  std::atomic<bool> never{false};
  const Team::ListenerId id = team.add_abort_listener([&] { wake(word); });
  bool released = false;
  try {
    team.run([&](RankContext& ctx) {
      if (ctx.rank() == 2) throw std::runtime_error("root cause");
      if (ctx.rank() == 0) {
        wait_until(word, [&] { return never.load(std::memory_order_acquire) || ctx.aborted(); });
        released = true;
        throw Aborted();
      }
    });
    FAIL() << "no exception";
  } catch (const Aborted&) {
    FAIL() << "Aborted reported instead of the root cause";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "root cause");
  }
  EXPECT_TRUE(released);
  team.remove_abort_listener(id);
}

TEST(Team, AbortWithoutAnyFailureMakesRunThrowAborted) {
  Team team(3);
  EXPECT_THROW(team.run([](RankContext& ctx) {
    if (ctx.rank() == 1) ctx.team().abort();
  }),
               Aborted);
  EXPECT_FALSE(team.aborted());
  team.run([](RankContext&) {});
}

// Regression: an abort() that arrived while run() reset the abort
// state found the team still aborted, returned, and was then cleared with the run's own abort.
TEST(Team, AbortArrivingWhileRunResetsIsNotLostItAbortsTheNextRun) {
  Team team(3);
  std::mutex mu;
  std::vector<std::thread::id> listener_threads;
  const Team::ListenerId id = team.add_abort_listener([&] {
    std::lock_guard<std::mutex> lock(mu);
    listener_threads.push_back(std::this_thread::get_id());
  });
  bool hook_ran = false;
  internal::TeamTestPeer::set_reset_hook(team, [&] {
    hook_ran = true;
    std::thread other([&] { team.abort(); });  // abort() never waits, so this join cannot hang
    other.join();
  });
  EXPECT_THROW(team.run([](RankContext& ctx) {
    if (ctx.rank() == 1) throw std::runtime_error("rank 1 failed");
  }),
               std::runtime_error);
  internal::TeamTestPeer::set_reset_hook(team, {});
  ASSERT_TRUE(hook_ran);
  EXPECT_TRUE(team.aborted()) << "the abort that arrived during the reset was lost";
  EXPECT_TRUE(team.mailboxes().aborted()) << "team and mailboxes disagree";
  {
    // Once for the failing rank's abort (on its thread), once for the late one, applied by run().
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(listener_threads.size(), 2U);
    EXPECT_NE(listener_threads[0], std::this_thread::get_id());
    EXPECT_EQ(listener_threads[1], std::this_thread::get_id());
  }
  team.remove_abort_listener(id);
  std::atomic<int> saw_abort{0};
  EXPECT_THROW(team.run([&](RankContext& ctx) {
    if (ctx.aborted()) saw_abort.fetch_add(1, std::memory_order_relaxed);
  }),
               Aborted);
  EXPECT_EQ(saw_abort.load(), 3);
  EXPECT_FALSE(team.aborted());
  team.run([](RankContext& ctx) { EXPECT_FALSE(ctx.aborted()); });
}

TEST(Team, AbortFromAListenerOrFromTheResettingThreadIsHarmless) {
  Team team(2);
  const Team::ListenerId id = team.add_abort_listener([&] { team.abort(); });
  EXPECT_THROW(team.run([](RankContext& ctx) {
    if (ctx.rank() == 0) ctx.team().abort();
  }),
               Aborted);
  EXPECT_FALSE(team.aborted());
  team.remove_abort_listener(id);
  // The hook runs on run()'s own thread, inside the reset.
  internal::TeamTestPeer::set_reset_hook(team, [&] { team.abort(); });
  EXPECT_THROW(team.run([](RankContext& ctx) { ctx.team().abort(); }), Aborted);
  internal::TeamTestPeer::set_reset_hook(team, {});
  EXPECT_TRUE(team.aborted());
  EXPECT_THROW(team.run([](RankContext&) {}), Aborted);
  team.run([](RankContext&) {});
}

// Aborts from another thread at arbitrary moments of runs that fail or not: whenever nobody is
// aborting, the team and its mailboxes agree, and a team left aborted aborts exactly the next run.
TEST(Team, ConcurrentAbortsKeepTeamAndMailboxesInAgreement) {
#ifdef POSTBOX_TSAN
  constexpr int kIterations = 60;
#else
  constexpr int kIterations = 400;
#endif
  Team team(2);
  for (int i = 0; i < kIterations; ++i) {
    std::atomic<bool> go{false};
    std::thread aborter([&] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (int k = 0; k < i % 7; ++k) std::this_thread::yield();
      team.abort();
    });
    try {
      team.run([&](RankContext& ctx) {
        go.store(true, std::memory_order_release);
        if (ctx.rank() == 0 && i % 3 == 0) throw std::runtime_error("failed");
        if (ctx.rank() == 1 && i % 3 == 1) (void)ctx.recv(0);  // blocks until the abort
      });
      ASSERT_NE(i % 3, 0) << "the failing rank's exception was lost";
    } catch (const std::runtime_error&) {
      // the rank's exception or Aborted (derives from runtime_error)
    }
    aborter.join();
    ASSERT_EQ(team.aborted(), team.mailboxes().aborted()) << "iteration " << i;
    if (team.aborted()) {
      ASSERT_THROW(team.run([](RankContext&) {}), Aborted) << "iteration " << i;
      ASSERT_FALSE(team.aborted());
    }
  }
}

// ---- oversubscription --------------------------------------------------------------------

TEST(TeamDeathTest, RanksBeyondTheAllowedCpusSkipTheSpinPhaseAndMembarrier) {
  TeamOptions o;
  o.ranks = RanksMode::threads;
  o.mailbox.wait = WaitPolicy{5'000, 10'000};
  {
    Team fits(1, o);
    EXPECT_EQ(fits.mailboxes().options().wait.spin_ns, 5'000);
    EXPECT_TRUE(fits.mailboxes().options().use_membarrier);
  }
  // A child process allowed one CPU (as under `taskset -c 0`): two ranks oversubscribe it,
  // whatever std::thread::hardware_concurrency() says.
  EXPECT_EXIT(
      {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(sched_getcpu(), &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) std::_Exit(3);
        Team team(2, o);
        const MailboxOptions& m = team.mailboxes().options();
        std::fprintf(stderr, "allowed %d spin %lld membarrier %d\n", allowed_cpu_count(),
                     static_cast<long long>(m.wait.spin_ns), m.use_membarrier ? 1 : 0);
        std::_Exit(m.wait.spin_ns == 0 && !m.use_membarrier ? 0 : 4);
      },
      testing::ExitedWithCode(0), "allowed 1 spin 0 membarrier 0");
}

// ---- lifetime ----------------------------------------------------------------------------

TEST(Team, ThreadsArePersistentAndNeverLeak) {
  const int before = thread_count();
  constexpr int p = 8;
  {
    Team team(p);
    EXPECT_EQ(team.workers(), team.fibers() ? std::min(p, allowed_cpu_count()) : p);
    EXPECT_EQ(thread_count(), before + team.workers());
    std::vector<int> count(p, 0);
    for (int i = 0; i < 1000; ++i) {
      team.run([&](RankContext& ctx) { ++count[static_cast<std::size_t>(ctx.rank())]; });
    }
    EXPECT_EQ(thread_count(), before + team.workers());
    for (int r = 0; r < p; ++r) EXPECT_EQ(count[static_cast<std::size_t>(r)], 1000);
  }
  EXPECT_EQ(thread_count(), before);
  TeamOptions quiet;  // four PUs: no wrap-around line per team
  quiet.topology = synthetic("core:4 pu:1");
  for (int i = 0; i < 50; ++i) {
    Team team(4, quiet);
    team.run([](RankContext&) {});
  }
  EXPECT_EQ(thread_count(), before);
}

TEST(TeamDeathTest, RunFromInsideARankIsAProgrammingError) {
  EXPECT_DEATH(
      {
        Team team(2);
        team.run([](RankContext& ctx) { ctx.team().run([](RankContext&) {}); });
      },
      "while the team is running");
}

// ---- mailbox traffic ---------------------------------------------------------------------

TEST(Team, RankBlockedInRecvIsReleasedByAnotherRanksException) {
  constexpr int p = 4;
  Team team(p);
  std::atomic<int> aborted_receivers{0};
  try {
    team.run([&](RankContext& ctx) {
      if (ctx.rank() == 3) throw std::logic_error("rank 3 gave up");
      try {
        (void)ctx.recv((ctx.rank() + 1) % p);  // nobody sends
      } catch (const Aborted&) {
        aborted_receivers.fetch_add(1, std::memory_order_relaxed);
        throw;
      }
    });
    FAIL() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "rank 3 gave up");
  }
  EXPECT_EQ(aborted_receivers.load(), p - 1);
  // Reusable, and nothing from the failed run lingers.
  team.run([&](RankContext& ctx) {
    const int next = (ctx.rank() + 1) % p;
    const int prev = (ctx.rank() + p - 1) % p;
    const auto v = static_cast<std::uint32_t>(ctx.rank());
    ctx.send(next, std::as_bytes(std::span(&v, 1)));
    const std::vector<std::byte> got = ctx.recv(prev);
    ASSERT_EQ(got.size(), sizeof(std::uint32_t));
    std::uint32_t w = 0;
    std::memcpy(&w, got.data(), sizeof w);
    EXPECT_EQ(w, static_cast<std::uint32_t>(prev));
  });
}

class TeamRing : public testing::TestWithParam<int> {};

TEST_P(TeamRing, TokenCirclesAndEveryRankAddsToIt) {
  const int p = GetParam();
  Team team(p);
  constexpr int rounds = 40;
  std::uint64_t final_value = 0;
  team.run([&](RankContext& ctx) {
    const int r = ctx.rank();
    const int next = (r + 1) % p;
    const int prev = (r + p - 1) % p;
    std::uint64_t token = 0;
    std::size_t size = 0;
    for (int k = 0; k < rounds; ++k) {
      if (r == 0) {
        token += 1;
        if (p > 1) {
          ctx.send(next, std::as_bytes(std::span(&token, 1)));
          size = ctx.recv(prev, std::as_writable_bytes(std::span(&token, 1)));
          ASSERT_EQ(size, sizeof token);
        }
      } else {
        size = ctx.recv(prev, std::as_writable_bytes(std::span(&token, 1)));
        ASSERT_EQ(size, sizeof token);
        token += static_cast<std::uint64_t>(r) + 1;
        ctx.send(next, std::as_bytes(std::span(&token, 1)));
      }
    }
    if (r == 0) final_value = token;
  });
  EXPECT_EQ(final_value, static_cast<std::uint64_t>(rounds) * static_cast<std::uint64_t>(p) * (p + 1) / 2);
}

INSTANTIATE_TEST_SUITE_P(Sizes, TeamRing, testing::Values(1, 2, 3, 8, 64));

TEST(Team, NotifyAndRecvAnyCountEveryRank) {
  constexpr int p = 16;
  Team team(p);
  std::vector<int> from(p, 0);
  team.run([&](RankContext& ctx) {
    if (ctx.rank() != 0) {
      ctx.notify(0);
      return;
    }
    for (int i = 0; i < p - 1; ++i) {
      std::size_t size = 99;
      const int src = ctx.recv_any({}, size);
      EXPECT_EQ(size, 0U);
      ++from[static_cast<std::size_t>(src)];
    }
  });
  EXPECT_EQ(from[0], 0);
  for (int r = 1; r < p; ++r) EXPECT_EQ(from[static_cast<std::size_t>(r)], 1) << r;
}


// ---- fibers (team.hpp, "Fibers") ---------------------------------------------------------

TeamOptions fiber_options(int workers) {
  TeamOptions o;
  o.ranks = RanksMode::fibers;
  o.workers = workers;
  return o;
}

// Restores POSTBOX_RANKS (the fiber ctest run sets it) when a test changes it.
class RanksEnv {
 public:
  RanksEnv() {
    if (const char* v = std::getenv("POSTBOX_RANKS")) saved_ = v, had_ = true;
  }
  ~RanksEnv() {
    if (had_) ::setenv("POSTBOX_RANKS", saved_.c_str(), 1);
    else ::unsetenv("POSTBOX_RANKS");
  }

 private:
  std::string saved_;
  bool had_ = false;
};

TEST(TeamFibers, ModesParsePrintAndComeFromTheEnvironment) {
  for (RanksMode m : {RanksMode::threads, RanksMode::fibers, RanksMode::automatic}) {
    EXPECT_EQ(parse_ranks_mode(to_string(m)), m);
  }
  EXPECT_STREQ(to_string(RanksMode::automatic), "auto");
  EXPECT_THROW(parse_ranks_mode("fiber"), InputError);
  EXPECT_THROW(parse_ranks_mode(""), InputError);
  RanksEnv keep;
  ::unsetenv("POSTBOX_RANKS");
  EXPECT_EQ(default_ranks_mode(), RanksMode::threads);
  EXPECT_EQ(default_ranks_mode(RanksMode::automatic), RanksMode::automatic);  // postbox run's fallback
  EXPECT_EQ(TeamOptions{}.ranks, RanksMode::threads);
  ::setenv("POSTBOX_RANKS", "", 1);  // empty: not set
  EXPECT_EQ(default_ranks_mode(RanksMode::automatic), RanksMode::automatic);
  ::setenv("POSTBOX_RANKS", "fibers", 1);
  EXPECT_EQ(TeamOptions{}.ranks, RanksMode::fibers);
  EXPECT_EQ(default_ranks_mode(RanksMode::automatic), RanksMode::fibers);
  ::setenv("POSTBOX_RANKS", "green", 1);
  try {
    (void)default_ranks_mode();
    ADD_FAILURE() << "POSTBOX_RANKS=green accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("POSTBOX_RANKS"), std::string::npos) << e.what();
  }
}

TEST(TeamFibers, AutomaticMeansFibersExactlyWhenRanksExceedTheAllowedCpus) {
  const int cpus = allowed_cpu_count();
  EXPECT_EQ(resolve_ranks_mode(RanksMode::automatic, cpus), RanksMode::threads);
  EXPECT_EQ(resolve_ranks_mode(RanksMode::automatic, cpus + 1), RanksMode::fibers);
  EXPECT_EQ(resolve_ranks_mode(RanksMode::threads, cpus + 1), RanksMode::threads);
  EXPECT_EQ(resolve_ranks_mode(RanksMode::fibers, 1), RanksMode::fibers);
  TeamOptions o;
  o.ranks = RanksMode::automatic;
  EXPECT_TRUE(Team(cpus + 1, o).fibers());
  EXPECT_FALSE(Team(1, o).fibers());
}

TEST(TeamFibers, BadWorkerCountOrStackIsAnInputError) {
  EXPECT_THROW(Team(4, fiber_options(-1)), InputError);
  TeamOptions o = fiber_options(0);
  o.fiber_stack_bytes = 8 * 1024;
  EXPECT_THROW(Team(4, o), InputError);
}

TEST(TeamFibers, MailboxesOfAFiberTeamNeverUseMembarrier) {
  TeamOptions threads;
  threads.ranks = RanksMode::threads;
  const bool thread_default = Team(1, threads).mailboxes().options().use_membarrier;
  EXPECT_TRUE(thread_default);  // one rank fits: the thread team keeps the asymmetric handshake
  EXPECT_FALSE(Team(1, fiber_options(1)).mailboxes().options().use_membarrier);
}

TEST(TeamFibers, WorkersDefaultToTheAllowedCpusAtMostPAndOwnConsecutiveBlocks) {
  EXPECT_EQ(Team(64, fiber_options(0)).workers(), std::min(64, allowed_cpu_count()));
  EXPECT_EQ(Team(2, fiber_options(8)).workers(), 2);
  Team team(10, fiber_options(3));
  EXPECT_TRUE(team.fibers());
  EXPECT_EQ(team.workers(), 3);  // the kernel threads: ThreadsArePersistentAndNeverLeak counts them
  // worker w: ranks w*p/k .. (w+1)*p/k - 1 = {0,1,2}, {3,4,5}, {6,7,8,9}
  const std::vector<int> want{0, 0, 0, 1, 1, 1, 2, 2, 2, 2};
  for (int r = 0; r < 10; ++r) EXPECT_EQ(team.worker_of(r), want[static_cast<std::size_t>(r)]) << "rank " << r;
  EXPECT_DEATH((void)team.worker_of(10), "worker_of");
}

TEST(TeamFibers, RanksNeverMigrateAndShareTheirWorkersThread) {
  constexpr int p = 12;
  Team team(p, fiber_options(3));
  std::vector<std::thread::id> first(p);
  std::vector<std::thread::id> now(p);
  for (int round = 0; round < 20; ++round) {
    team.run([&](RankContext& ctx) {
      const auto r = static_cast<std::size_t>(ctx.rank());
      // A wait in the middle switches ranks; the rank comes back on the same thread.
      if (ctx.rank() % 2 == 0) ctx.notify(ctx.rank() + 1);
      else (void)ctx.recv(ctx.rank() - 1);
      now[r] = std::this_thread::get_id();
    });
    if (round == 0) first = now;
    ASSERT_EQ(now, first) << "round " << round;
  }
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      EXPECT_EQ(first[static_cast<std::size_t>(a)] == first[static_cast<std::size_t>(b)],
                team.worker_of(a) == team.worker_of(b))
          << a << " " << b;
    }
  }
}

TEST(TeamFibers, PlacementAndPinningApplyToTheWorkers) {
  TeamOptions o = fiber_options(4);
  o.topology = synthetic("pack:2 core:4 pu:2");
  o.placement = Placement::scatter();
  Team team(8, o);
  // Four workers placed as a team of four threads would be: 0, 8, 2, 10; two ranks each.
  EXPECT_EQ(team.placement(), (std::vector<int>{0, 0, 8, 8, 2, 2, 10, 10}));
  EXPECT_FALSE(team.pinned());
  EXPECT_FALSE(team.wrapped());
  TeamOptions small = fiber_options(3);
  small.topology = synthetic("core:2 pu:1");
  testing::internal::CaptureStderr();
  {
    Team wraps(6, small);
    EXPECT_TRUE(wraps.wrapped());
  }
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
  EXPECT_NE(said.find("fiber workers"), std::string::npos) << said;
  if (Topology::machine().can_bind()) {
    EXPECT_TRUE(Team(4, fiber_options(1)).pinned());
  }
}

TEST(TeamFibers, OneRankOfAWorkerRunsAtATimeAndAWaitSwitchesToTheNext) {
  // One worker: rank 0 receives before rank 1 sends. Were the wait not a switch, the worker
  // would block in rank 0 and nobody would run rank 1.
  constexpr int p = 16;
  Team team(p, fiber_options(1));
  int inside = 0;  // plain int: one rank at a time (TSan checks the switches synchronize)
  int most = 0;
  team.run([&](RankContext& ctx) {
    ++inside;
    most = std::max(most, inside);
    --inside;
    if (ctx.rank() + 1 < p) (void)ctx.recv(ctx.rank() + 1);  // wait for the next rank
    ++inside;
    most = std::max(most, inside);
    --inside;
    if (ctx.rank() > 0) ctx.notify(ctx.rank() - 1);
  });
  EXPECT_EQ(most, 1);
}

TEST(TeamFibers, ABlockingCallStopsTheOtherRanksOfItsWorker) {
  // The documented caveat: a rank that blocks its kernel thread (here in a sleep) is not
  // switched out; no other rank of its worker runs meanwhile.
  Team team(2, fiber_options(1));
  std::atomic<int> phase{0};
  bool overlapped = false;
  team.run([&](RankContext& ctx) {
    if (phase.fetch_add(1, std::memory_order_relaxed) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      phase.fetch_add(10, std::memory_order_relaxed);
    } else {
      // The first rank either had not started (no: it incremented phase first) or finished.
      overlapped = phase.load(std::memory_order_relaxed) == 1;
    }
    (void)ctx;
  });
  EXPECT_FALSE(overlapped);
}

TEST(TeamFibersDeathTest, StackOverflowFaultsOnTheGuardPage) {
  TeamOptions o = fiber_options(1);
  o.fiber_stack_bytes = 16 * 1024;
  EXPECT_DEATH(
      {
        Team team(2, o);
        std::function<int(int)> deep = [&](int n) -> int {
          volatile char pad[1024];
          pad[0] = static_cast<char>(n);
          return n == 0 ? pad[0] : deep(n - 1) + pad[0];
        };
        team.run([&](RankContext&) { (void)deep(1 << 20); });
      },
      "");
}

TEST(TeamFibers, ThousandsOfRanksOnFewWorkersPassATokenAroundTheRing) {
#if defined(POSTBOX_TSAN)
  constexpr int p = 512;  // ThreadSanitizer's shadow of 4096 stacks and p² ring slots: GiBs
#else
  constexpr int p = 4096;
#endif
  TeamOptions o = fiber_options(0);
  o.mailbox.ring_bytes = 4096;
  Team team(p, o);
  for (int round = 0; round < 2; ++round) {
    std::vector<std::uint64_t> got(p, 0);
    team.run([&](RankContext& ctx) {
      const int r = ctx.rank();
      std::uint64_t token = 0;
      if (r != 0) (void)ctx.recv(r - 1, std::as_writable_bytes(std::span(&token, 1)));
      token += static_cast<std::uint64_t>(r) + 1;
      got[static_cast<std::size_t>(r)] = token;
      if (r + 1 < p) ctx.send(r + 1, std::as_bytes(std::span(&token, 1)));
    });
    EXPECT_EQ(got[p - 1], std::uint64_t{p} * (p + 1) / 2);
  }
  // A failure among thousands of fibers aborts the others, which are blocked in recv.
  EXPECT_THROW(team.run([&](RankContext& ctx) {
                 if (ctx.rank() == p / 2) throw std::runtime_error("rank failed");
                 (void)ctx.recv((ctx.rank() + 1) % p);
               }),
               std::runtime_error);
}

TEST(TeamFibers, TheWaitingReportNamesTheRanksSuspendedInAWait) {
  Team team(4, fiber_options(1));
  std::atomic<std::uint32_t> word{0};
  std::atomic<bool> go{false};
  std::string seen;
  std::thread watcher([&] {
    // Ranks 1 and 3 wait; 0 and 2 return. The report converges to exactly those two.
    for (;;) {
      seen = internal::fiber_waiting_report();
      if (seen.find("rank 1, rank 3") != std::string::npos) break;
      std::this_thread::yield();
    }
    go.store(true, std::memory_order_release);
    wake(word);
  });
  team.run([&](RankContext& ctx) {
    if (ctx.rank() % 2 == 1) wait_until(word, [&] { return go.load(std::memory_order_acquire); });
  });
  watcher.join();
  EXPECT_EQ(seen, "fiber worker 0: waiting: rank 1, rank 3\n");
  EXPECT_EQ(internal::fiber_waiting_report(), "");
}

// Run only by the ctest entry watchdog.names_waiting_fibers (tests/runtime/CMakeLists.txt), with
// a 2 s watchdog: a lost wake-up must end in a report naming rank 2.
TEST(TeamFibers, DISABLED_LostWakeupHangsUntilTheWatchdogNamesTheRank) {
  Team team(3, fiber_options(1));
  std::atomic<std::uint32_t> word{0};
  team.run([&](RankContext& ctx) {
    if (ctx.rank() == 2) wait_until(word, [] { return false; });
  });
}

}  // namespace
}  // namespace postbox
