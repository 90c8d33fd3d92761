// run.hpp: the timed loop checks the warm-up, every verify_every-th timed run and the last,
// stops at the first failed check and says which run it was; run_plan() verifies a correct plan
// on threads and on fibers, and refuses to verify a plan whose buffers are not the op's.
#include "postbox/collectives/run.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace postbox {
namespace {

TEST(TimedRuns, ChecksTheWarmUpEveryKthAndTheLast) {
  RunOptions o;
  o.iters = 5;
  o.verify = true;
  o.verify_every = 2;
  int fills = 0, runs = 0;
  std::vector<int> checked_at;  // the run index (0: warm-up) of each check
  const RunStats s = timed_runs(
      o, [&] { ++fills; }, [&] { return static_cast<double>(++runs); },
      [&]() -> std::optional<std::string> {
        checked_at.push_back(runs - 1);
        return std::nullopt;
      });
  EXPECT_EQ(fills, 6);
  EXPECT_EQ(s.ns, (std::vector<double>{2, 3, 4, 5, 6}));  // the warm-up is not timed
  EXPECT_EQ(checked_at, (std::vector<int>{0, 2, 4, 5}));
  EXPECT_EQ(s.checked, 4);
  EXPECT_EQ(s.verified, std::optional<bool>(true));
  EXPECT_TRUE(s.failure.empty());
}

TEST(TimedRuns, StopsAtTheFirstFailureAndNamesTheRun) {
  RunOptions o;
  o.iters = 10;
  o.verify = true;
  int runs = 0;
  const RunStats s = timed_runs(
      o, [] {}, [&] { return static_cast<double>(++runs); },
      [&]() -> std::optional<std::string> {
        if (runs == 4) return std::string("rank 2: byte 7 is 0x01, expected 0x02");
        return std::nullopt;
      });
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(s.verified, std::optional<bool>(false));
  EXPECT_EQ(s.failure, "rank 2: byte 7 is 0x01, expected 0x02 (timed run 3)");
  o.iters = 3;
  runs = 0;
  const RunStats w = timed_runs(
      o, [] {}, [&] { return static_cast<double>(++runs); },
      []() -> std::optional<std::string> { return std::string("bad"); });
  EXPECT_EQ(w.failure, "bad (warm-up run)");
  EXPECT_TRUE(w.ns.empty());
}

// RunOptions::progress: once after each timed run (not the warm-up), with (done, iters).
TEST(TimedRuns, ProgressIsReportedAfterEachTimedRun) {
  RunOptions o;
  o.iters = 3;
  std::vector<std::pair<int, int>> seen;
  int runs = 0;
  o.progress = [&](int done, int all) { seen.emplace_back(done, all); };
  const RunStats s = timed_runs(
      o, [] {}, [&] { return static_cast<double>(++runs); }, [] { return std::optional<std::string>{}; });
  EXPECT_EQ(runs, 4);  // the warm-up and three timed runs
  EXPECT_EQ(s.ns.size(), 3U);
  EXPECT_EQ(seen, (std::vector<std::pair<int, int>>{{1, 3}, {2, 3}, {3, 3}}));
}

TEST(TimedRuns, WithoutVerifyNothingIsChecked) {
  RunOptions o;
  o.iters = 3;
  const RunStats s = timed_runs(
      o, [] {}, [] { return 1.0; }, []() -> std::optional<std::string> { return std::string("never asked"); });
  EXPECT_EQ(s.checked, 0);
  EXPECT_FALSE(s.verified.has_value());
  EXPECT_EQ(s.ns.size(), 3U);
}

PlanRequest request(const std::string& op, const std::string& algo, int p, std::int64_t bytes) {
  PlanRequest r;
  r.op = op;
  r.algo = algo;
  r.p = p;
  r.bytes = bytes;
  r.elem_bytes = op == "allreduce" || op == "reduce" ? 8 : 1;
  r.lambda = Rational(2);
  return r;
}

TEST(RunPlan, VerifiesOnThreadsAndFibers) {
  for (const RanksMode mode : {RanksMode::threads, RanksMode::fibers}) {
    for (const PlanRequest& req : {request("bcast", "binomial", 5, 64), request("allreduce", "recursive-doubling", 4, 64)}) {
      TeamOptions t;
      t.ranks = mode;
      RunOptions o;
      o.iters = 3;
      o.verify = true;
      const PlanRun run = run_plan(cached_plan(req), req, t, o);
      EXPECT_FALSE(run.buffer_mismatch) << req.op;
      EXPECT_EQ(run.stats.verified, std::optional<bool>(true)) << req.op << ": " << run.stats.failure;
      EXPECT_EQ(run.stats.checked, 4) << req.op;
      EXPECT_EQ(run.stats.ns.size(), 3U);
      EXPECT_EQ(run.fibers, mode == RanksMode::fibers);
    }
  }
}

TEST(RunPlan, RefusesToVerifyBuffersThatAreNotTheOps) {
  const std::shared_ptr<const Plan> plan = cached_plan(request("bcast", "binomial", 4, 8));
  RunOptions o;
  o.iters = 2;
  o.verify = true;
  const PlanRun run = run_plan(plan, request("bcast", "binomial", 4, 16), TeamOptions{}, o);
  ASSERT_TRUE(run.buffer_mismatch.has_value());
  EXPECT_NE(run.buffer_mismatch->find("16"), std::string::npos) << *run.buffer_mismatch;
  EXPECT_TRUE(run.stats.ns.empty());
  // Without verify it runs, on zeros.
  o.verify = false;
  const PlanRun unverified = run_plan(plan, request("bcast", "binomial", 4, 16), TeamOptions{}, o);
  EXPECT_EQ(unverified.stats.ns.size(), 2U);
  EXPECT_FALSE(unverified.stats.verified.has_value());
}

}  // namespace
}  // namespace postbox
