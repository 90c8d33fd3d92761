// Adversarial schedules for the mailboxes: the traffic patterns of
// mailbox_traffic.hpp under delay injection (runtime/internal/inject.hpp), many seeds each.
//
// In a build with -DPOSTBOX_INJECT_DELAYS=ON every synchronisation step of the mailboxes and of
// the wait path may be preceded by a yield or a short sleep chosen by a generator seeded from
// (seed, thread key); each row runs seeds 1..POSTBOX_INJECT_SEEDS (default 40), or only
// POSTBOX_INJECT_SEED=N to replay one. A failing seed is printed with the line that replays it.
// In a normal build the same patterns run once, without injection.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "mailbox_traffic.hpp"
#include "postbox/runtime/internal/inject.hpp"
#include "postbox/runtime/mailbox.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox {
namespace {

using testing_support::Mode;
namespace inj = internal;

#ifdef POSTBOX_TSAN
constexpr std::uint64_t kDefaultSeeds = 8;
#else
constexpr std::uint64_t kDefaultSeeds = 40;
#endif

// A positive integer from the environment, or `fallback` when unset; anything else fails the
// test with the variable's name.
std::uint64_t env_count(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || x == 0) {
    ADD_FAILURE() << name << " must be a positive integer, got '" << v << "'";
    return 0;
  }
  return x;
}

// The seeds this run covers: POSTBOX_INJECT_SEED=N alone, else 1..POSTBOX_INJECT_SEEDS. Without
// injection compiled in, one pass (seed 1: the patterns run as they are).
std::vector<std::uint64_t> seeds() {
  if (std::getenv("POSTBOX_INJECT_SEED") != nullptr) return {env_count("POSTBOX_INJECT_SEED", 1)};
  if (!inj::inject_compiled()) return {1};
  std::vector<std::uint64_t> out;
  const std::uint64_t n = env_count("POSTBOX_INJECT_SEEDS", kDefaultSeeds);
  for (std::uint64_t s = 1; s <= n; ++s) out.push_back(s);
  return out;
}

struct InjectRow {
  const char* file;
  int line;
  const char* pattern;  // all_to_all | fan_in | ping_pong | abort
  int p;
  Mode mode;
  long messages;  // per pair (all_to_all), per source (fan_in), round trips (ping_pong)
  std::size_t ring_bytes;
  WaitPolicy wait;
  bool membarrier;
  int queued_messages = MailboxOptions{}.queued_messages;
  std::size_t ring_budget = kDefaultRingBudgetBytes;  // 0: every pair stays on the queue
};

std::ostream& operator<<(std::ostream& os, const InjectRow& r) {
  return os << r.file << ":" << r.line << " " << r.pattern << " p=" << r.p << " " << testing_support::mode_name(r.mode)
            << " n=" << r.messages << " ring=" << r.ring_bytes << " spin=" << r.wait.spin_ns
            << " yield=" << r.wait.yield_ns << (r.membarrier ? "" : " portable-handshake")
            << " queued=" << r.queued_messages << " budget=" << r.ring_budget;
}

std::string run_pattern(const InjectRow& row, const testing_support::ThreadHook& bind) {
  MailboxOptions o;
  o.ring_bytes = row.ring_bytes;
  o.wait = row.wait;
  o.use_membarrier = row.membarrier;
  o.queued_messages = row.queued_messages;
  o.ring_budget_bytes = row.ring_budget;
  Mailboxes mb(row.p, o);
  const std::string pattern = row.pattern;
  // Messages up to 3/4 ring: streamed ones, and full rings, without slowing the run down.
  const std::size_t max_bytes = row.ring_bytes * 3 / 4;
  if (pattern == "all_to_all") return testing_support::all_to_all(mb, row.mode, row.messages, max_bytes, bind);
  if (pattern == "fan_in") return testing_support::fan_in(mb, row.messages, max_bytes, bind);
  if (pattern == "ping_pong") return testing_support::ping_pong(mb, row.messages, bind);
  if (pattern == "abort") return testing_support::abort_then_reuse(mb, row.ring_bytes, bind);
  return "unknown pattern " + pattern;
}

// Runs fn on a thread of its own and waits for it; a pattern that has not finished after
// `limit` is a hang: the seed is printed and the process aborts (no later test could run).
std::string run_or_report_hang(const std::function<std::string()>& fn, std::chrono::seconds limit,
                               const std::string& what) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::string result;
  std::thread worker([&] {
    std::string r = fn();
    std::lock_guard<std::mutex> lock(mu);
    result = std::move(r);
    done = true;
    cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(mu);
  if (!cv.wait_for(lock, limit, [&] { return done; })) {
    std::fprintf(stderr, "%s: no progress after %lld s (a hang)\n", what.c_str(), static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::abort();
  }
  lock.unlock();
  worker.join();
  return result;
}

class MailboxInject : public testing::TestWithParam<InjectRow> {};

TEST_P(MailboxInject, EveryPatternSurvivesEverySeed) {
  const InjectRow& row = GetParam();
  SCOPED_TRACE(testing::PrintToString(row));
  const auto bind = [](std::uint64_t key) { inj::inject_bind_thread(key); };
  std::uint64_t points = 0;
  std::uint64_t delays = 0;
  for (const std::uint64_t seed : seeds()) {
    const std::string replay = "failing seed " + std::to_string(seed) + ": replay with POSTBOX_INJECT_SEED=" +
                               std::to_string(seed) + " --gtest_filter=" +
                               testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "." +
                               testing::UnitTest::GetInstance()->current_test_info()->name();
    inj::InjectConfig config;
    config.seed = seed;
    inj::inject_start(config);
    const std::string err =
        run_or_report_hang([&] { return run_pattern(row, bind); }, std::chrono::seconds(60), replay);
    inj::inject_stop();
    points += inj::inject_points();
    delays += inj::inject_delays();
    ASSERT_EQ(err, "") << replay;
  }
  if (inj::inject_compiled()) {
    // The sync points are wired in: the patterns passed through them and some were delayed.
    EXPECT_GT(points, 0U);
    EXPECT_GT(delays, 0U);
  }
}

// inject.hpp: on a rank fiber an injected yield switches to the worker's other ready ranks.
// Two ranks on one worker never wait, so without the switch one would run all its steps before
// the other started; with a yield at every sync point they interleave.
TEST(InjectOnFibers, AnInjectedYieldSwitchesToTheWorkersOtherRanks) {
  if (!inj::inject_compiled()) GTEST_SKIP() << "needs a build with POSTBOX_INJECT_DELAYS";
  TeamOptions t;
  t.ranks = RanksMode::fibers;
  t.workers = 1;
  t.pin = false;
  Team team(2, t);
  std::vector<int> order;  // one worker: its ranks never run at once
  inj::InjectConfig config;
  config.yield_permille = 1000;
  config.sleep_permille = 0;
  inj::inject_start(config);
  team.run([&](RankContext& ctx) {
    inj::inject_bind_thread(static_cast<std::uint64_t>(ctx.rank()));
    for (int i = 0; i < 50; ++i) {
      inj::sync_point();
      order.push_back(ctx.rank());
    }
  });
  inj::inject_stop();
  ASSERT_EQ(order.size(), 100U);
  int changes = 0;
  for (std::size_t i = 1; i < order.size(); ++i) changes += order[i] != order[i - 1] ? 1 : 0;
  EXPECT_GT(changes, 10) << "the two ranks ran one after the other: the injected yields did not switch";
}

constexpr WaitPolicy kBlockAtOnce{0, 0};
constexpr WaitPolicy kShort{1'000, 10'000};

INSTANTIATE_TEST_SUITE_P(
    Rows, MailboxInject,
    testing::Values(InjectRow{__FILE__, __LINE__, "all_to_all", 2, Mode::kRecv, 200, 4096, kShort, true},
                    InjectRow{__FILE__, __LINE__, "all_to_all", 3, Mode::kRecvAny, 60, 4096, kBlockAtOnce, true},
                    InjectRow{__FILE__, __LINE__, "all_to_all", 5, Mode::kTryRecv, 20, 4096, kShort, true},
                    InjectRow{__FILE__, __LINE__, "all_to_all", 3, Mode::kRecv, 60, 4096, kBlockAtOnce, false},
                    InjectRow{__FILE__, __LINE__, "fan_in", 5, Mode::kRecvAny, 60, 4096, kBlockAtOnce, true},
                    InjectRow{__FILE__, __LINE__, "fan_in", 8, Mode::kRecvAny, 30, 4096, kShort, false},
                    InjectRow{__FILE__, __LINE__, "ping_pong", 2, Mode::kRecv, 300, 4096, kBlockAtOnce, true},
                    InjectRow{__FILE__, __LINE__, "ping_pong", 2, Mode::kRecv, 300, 4096, kShort, false},
                    InjectRow{__FILE__, __LINE__, "abort", 3, Mode::kRecv, 0, 4096, kBlockAtOnce, true},
                    InjectRow{__FILE__, __LINE__, "abort", 5, Mode::kRecv, 0, 4096, kShort, false},
                    // Rings made on a pair's later message while its first ones may still be
                    // queued (receiver polling, recv_any scanning, try_recv), budgets that leave
                    // some pairs or all of them on the queue, abort and reset with queued pairs.
                    InjectRow{__FILE__, __LINE__, "all_to_all", 3, Mode::kRecv, 40, 4096, kBlockAtOnce, true, 1,
                              4 * (4096 + 256)},
                    InjectRow{__FILE__, __LINE__, "all_to_all", 4, Mode::kRecvAny, 20, 4096, kShort, false, 3,
                              6 * (4096 + 256)},
                    InjectRow{__FILE__, __LINE__, "all_to_all", 3, Mode::kTryRecv, 30, 4096, kBlockAtOnce, false, 2,
                              kDefaultRingBudgetBytes},
                    InjectRow{__FILE__, __LINE__, "fan_in", 5, Mode::kRecvAny, 40, 4096, kBlockAtOnce, true, 2, 0},
                    InjectRow{__FILE__, __LINE__, "ping_pong", 2, Mode::kRecv, 200, 4096, kBlockAtOnce, false, 2, 0},
                    InjectRow{__FILE__, __LINE__, "abort", 3, Mode::kRecv, 0, 4096, kBlockAtOnce, true, 2, 0},
                    InjectRow{__FILE__, __LINE__, "abort", 4, Mode::kRecv, 0, 4096, kShort, false, 1, 2 * (4096 + 256)}));

}  // namespace
}  // namespace postbox
