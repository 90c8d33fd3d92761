// Tests for postbox/barrier/parallel_for.hpp.
#include "postbox/barrier/parallel_for.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace postbox {
namespace {

TeamOptions unpinned() {
  TeamOptions o;
  o.pin = false;
  return o;
}

// Every index lands in exactly one block, blocks are contiguous and in rank order.
TEST(StaticBlock, PartitionsExactly) {
  for (int p : {1, 2, 3, 5, 8, 13}) {
    for (std::int64_t n : {0, 1, 2, 7, 13, 100}) {
      std::int64_t next = 10;
      for (int r = 0; r < p; ++r) {
        const Block b = static_block(10, 10 + n, r, p);
        EXPECT_EQ(b.lo, next) << "p=" << p << " n=" << n << " r=" << r;
        EXPECT_GE(b.hi, b.lo);
        EXPECT_LE(b.hi - b.lo, n / p + 1);
        next = b.hi;
      }
      EXPECT_EQ(next, 10 + n) << "p=" << p << " n=" << n;
    }
  }
}

class ParallelForTest : public testing::TestWithParam<int> {};

TEST_P(ParallelForTest, EachIndexOnce) {
  Team team(GetParam(), unpinned());
  std::vector<std::atomic<int>> hits(1000);
  parallel_for(team, 0, 1000, [&](std::int64_t i) { hits[static_cast<std::size_t>(i)].fetch_add(1); });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

// Phase k reads what other ranks wrote in phase k − 1 (a shift by one cell across blocks).
TEST_P(ParallelForTest, PhasesSeeThePreviousPhase) {
  const int p = GetParam();
  Team team(p, unpinned());
  constexpr int kN = 257;
  constexpr int kPhases = 300;
  std::vector<std::int64_t> buf[2] = {std::vector<std::int64_t>(kN), std::vector<std::int64_t>(kN)};
  for (int i = 0; i < kN; ++i) buf[0][static_cast<std::size_t>(i)] = i;
  parallel_for_phases(team, kPhases, 0, kN, [&](int k, std::int64_t i) {
    const auto& src = buf[k % 2];
    buf[(k + 1) % 2][static_cast<std::size_t>(i)] = src[static_cast<std::size_t>((i + 1) % kN)];
  });
  for (int i = 0; i < kN; ++i) EXPECT_EQ(buf[kPhases % 2][static_cast<std::size_t>(i)], (i + kPhases) % kN);
}

TEST_P(ParallelForTest, BodyExceptionStopsEveryRank) {
  const int p = GetParam();
  Team team(p, unpinned());
  std::atomic<int> calls_after{0};
  EXPECT_THROW(parallel_for_phases(team, 50, 0, 64,
                                   [&](int k, std::int64_t i) {
                                     if (k == 3 && i == 0) throw std::runtime_error("body failed");
                                     if (k > 3) calls_after.fetch_add(1);
                                   }),
               std::runtime_error);
  EXPECT_EQ(calls_after.load(), 0);
}

// Team::abort() from inside a body (a failure the body does not throw) reaches the barrier
// through the Team's abort listener: the ranks waiting in phase 3 leave with Aborted, nobody
// runs a later phase, and Team::run rethrows Aborted.
TEST_P(ParallelForTest, TeamAbortReleasesTheBarrier) {
  const int p = GetParam();
  Team team(p, unpinned());
  std::atomic<int> calls_after{0};
  EXPECT_THROW(parallel_for_phases(team, 50, 0, 64,
                                   [&](int k, std::int64_t i) {
                                     if (k == 3 && i == 0) team.abort();
                                     if (k > 3) calls_after.fetch_add(1);
                                   }),
               Aborted);
  EXPECT_EQ(calls_after.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(P, ParallelForTest, testing::Values(1, 2, 3, 8));

}  // namespace
}  // namespace postbox
