// mapped_storage.hpp: Array allocations inside a MappedStorage scope are file-backed (unlinked
// files in the scope's directory), outside it and below kMappedMin they are not; a run inside a
// scope gives the results of the same run outside it.
#include "postbox/emulator/mapped_storage.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/frontend/plan_export.hpp"
#include "postbox/runtime/check.hpp"

#include "scratch_dir.hpp"

namespace postbox::sim {
namespace {

namespace fs = std::filesystem;

using testing_support::ScratchDir;

// The lines of /proc/self/maps that map a file under dir.
int mappings_under(const fs::path& dir) {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);)
    if (line.find(dir.string() + "/postbox-sim-") != std::string::npos) ++n;
  return n;
}

TEST(MappedStorage, LargeArraysInAScopeAreUnlinkedFilesUnderItsDirectory) {
  ScratchDir dir{"postbox-mapped-test"};
  {
    const MappedStorage scope(dir.path().string());
    EXPECT_TRUE(MappedStorage::active());
    Array<std::uint64_t> big(kMappedMin / sizeof(std::uint64_t));
    Array<std::uint64_t> small(16);
    big.back() = 7;
    EXPECT_EQ(mappings_under(dir.path()), 1);  // the big one only
    EXPECT_EQ(MappedStorage::mapped_bytes(), kMappedMin);
    EXPECT_EQ(scope.peak_bytes(), kMappedMin);
    EXPECT_TRUE(MappedStorage::is_mapped(big.data()));
    EXPECT_FALSE(MappedStorage::is_mapped(small.data()));
    // Unlinked at once: the directory stays empty while the mapping lives.
    EXPECT_TRUE(fs::is_empty(dir.path()));
    big.push_back(8);  // grows into a new mapping, the old one unmapped
    EXPECT_EQ(mappings_under(dir.path()), 1);
    EXPECT_EQ(big[big.size() - 2], 7U);
  }
  EXPECT_FALSE(MappedStorage::active());
  EXPECT_EQ(mappings_under(dir.path()), 0);
  EXPECT_EQ(MappedStorage::mapped_bytes(), 0U);
}

TEST(MappedStorage, OutsideAScopeAndOnOtherThreadsArraysComeFromTheHeap) {
  ScratchDir dir{"postbox-mapped-test"};
  Array<std::uint64_t> before(kMappedMin / sizeof(std::uint64_t));
  const MappedStorage scope(dir.path().string());
  std::thread([] {
    EXPECT_FALSE(MappedStorage::active());
    Array<std::uint64_t> other(kMappedMin / sizeof(std::uint64_t));
    EXPECT_EQ(MappedStorage::mapped_bytes(), 0U);
  }).join();
  EXPECT_EQ(mappings_under(dir.path()), 0);
}

TEST(MappedStorage, AnotherThreadEntersTheScopeItWorksFor) {
  ScratchDir dir{"postbox-mapped-test"};
  const MappedStorage scope(dir.path().string());
  const std::string* mine = MappedStorage::current();
  ASSERT_NE(mine, nullptr);
  Array<std::uint64_t> made;
  std::thread([&made, mine] {
    EXPECT_EQ(MappedStorage::current(), nullptr);
    {
      const MappedStorage::Enter enter(mine);
      EXPECT_TRUE(MappedStorage::active());
      made.resize(kMappedMin / sizeof(std::uint64_t));
    }
    EXPECT_FALSE(MappedStorage::active());
  }).join();
  EXPECT_TRUE(MappedStorage::is_mapped(made.data()));
  EXPECT_EQ(mappings_under(dir.path()), 1);
}

TEST(MappedStorage, AnArrayMadeInAScopeCanBeFreedAfterItOnAnotherThread) {
  ScratchDir dir{"postbox-mapped-test"};
  Array<std::uint64_t> kept;
  {
    const MappedStorage scope(dir.path().string());
    kept.resize(kMappedMin / sizeof(std::uint64_t));
  }
  EXPECT_EQ(mappings_under(dir.path()), 1);
  std::thread([&kept] { Array<std::uint64_t>().swap(kept); }).join();
  EXPECT_EQ(mappings_under(dir.path()), 0);
  EXPECT_EQ(MappedStorage::mapped_bytes(), 0U);
}

TEST(MappedStorage, ScopesNestAndTheInnermostDirectoryIsUsed) {
  ScratchDir outer{"postbox-mapped-test"};
  const fs::path inner_dir = outer.path() / "inner";
  fs::create_directories(inner_dir);
  const MappedStorage a(outer.path().string());
  {
    const MappedStorage b(inner_dir.string());
    Array<char> x(kMappedMin);
    EXPECT_EQ(mappings_under(inner_dir), 1);
  }
  Array<char> y(kMappedMin);
  EXPECT_EQ(mappings_under(outer.path()), 1);  // y's; x's is gone
  EXPECT_EQ(mappings_under(inner_dir), 0);
}

TEST(MappedStorage, ADirectoryThatIsNotOneOrCannotBeWrittenIsAnInputError) {
  ScratchDir dir{"postbox-mapped-test"};
  const fs::path file = dir.path() / "plain";
  std::ofstream(file) << "x";
  EXPECT_THROW(MappedStorage(file.string()), InputError);
  EXPECT_THROW(MappedStorage((dir.path() / "missing").string()), InputError);
  EXPECT_THROW(MappedStorage(""), InputError);
  EXPECT_FALSE(MappedStorage::active());
}

TEST(MappedStorage, NoRoomForAnArrayIsAnInputErrorAtTheAllocation) {
  ScratchDir dir{"postbox-mapped-test"};
  // No room, without filling a disk: files may not grow past 1 MiB in this process (the write
  // that would fails with EFBIG once SIGXFSZ is ignored).
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = kMappedMin;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  {
    const MappedStorage scope(dir.path().string());
    Array<char> fits(kMappedMin);
    Array<char> too_big;
    EXPECT_THROW(too_big.resize(2 * kMappedMin), InputError);
    EXPECT_EQ(MappedStorage::mapped_bytes(), kMappedMin);
  }
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(MappedStorage::mapped_bytes(), 0U);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// A GOAL text read in pieces (oneTBB stages on other threads) inside a scope: the arrays the
// stages grow are file-backed too (here `round`, which no reservation covers: it is made at the
// first op with a round). Which thread runs the last stage is the scheduler's choice, so
// without MappedStorage::Enter this fails in some runs only; the test above is the exact one.
TEST(MappedStorage, AGoalTextReadInPiecesBuildsItsArraysInTheScope) {
  ScratchDir dir{"postbox-mapped-test"};
  std::string text = "num_ranks 70000\n";
  for (int r = 0; r < 70000; ++r) {
    text += "rank " + std::to_string(r) + " {\n";
    for (int j = 0; j < 4; ++j) text += "// postbox: round " + std::to_string(j + 1) + "\ncalc 1\n";
    text += "}\n";
  }
  const MappedStorage scope(dir.path().string());
  const GoalRead read = read_goal_schedule_in_pieces(text, "goal", 64 << 10);
  EXPECT_GT(read.pieces, 1);
  ASSERT_EQ(read.schedule.round.size(), 280000U);
  EXPECT_TRUE(MappedStorage::is_mapped(read.schedule.round.data()));
  EXPECT_TRUE(MappedStorage::is_mapped(read.schedule.items.data()));
}

// A run inside a scope gives the same results as outside it: a built plan and a GOAL schedule
// (with its receives matched while running, whose queues are Arrays too), large enough that
// their arrays are mapped.
TEST(MappedStorage, RunsInAScopeGiveTheSameResults) {
  ScratchDir dir{"postbox-mapped-test"};
  PlanRequest req;
  req.op = "allreduce";
  req.algo = "recursive-doubling";
  req.p = 4096;
  req.bytes = 64;
  req.lambda = Rational(1);
  const Machine m = load_machine("logp:5:1:2:0.01");
  const Plan plan = build_plan(req);
  const std::string goal = plan_to_goal(plan);
  const SimResult plain = simulate(plan, m);
  const SimResult plain_goal = simulate(read_goal_schedule(goal).schedule, m);
  const MappedStorage scope(dir.path().string());
  const SimResult mapped = simulate(plan, m);
  EXPECT_GT(scope.peak_bytes(), 0U);
  const SimResult mapped_goal = simulate(read_goal_schedule(goal).schedule, m);
  EXPECT_EQ(mapped.time_ticks, plain.time_ticks);
  EXPECT_EQ(mapped.events, plain.events);
  EXPECT_EQ(mapped.per_rank_ticks, plain.per_rank_ticks);
  EXPECT_EQ(mapped_goal.time_ticks, plain_goal.time_ticks);
  EXPECT_EQ(mapped_goal.events, plain_goal.events);
  EXPECT_EQ(mapped_goal.per_rank_ticks, plain_goal.per_rank_ticks);
  EXPECT_EQ(mapped_goal.time_ticks, plain.time_ticks);
  EXPECT_EQ(MappedStorage::mapped_bytes(), 0U);  // every array freed
}

}  // namespace
}  // namespace postbox::sim
