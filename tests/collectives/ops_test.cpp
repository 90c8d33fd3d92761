// Collectives on real threads, oversubscribed (p up to 64 on this 2-core box): every op ×
// algorithm × p × size × root, exact results on every rank. Combines are checked with integer
// sums (a value counted twice or lost changes the sum) and, where the algorithm allows it,
// with a non-commutative operator (2×2 matrix product), which also pins the combine order.
#include "algo_table.hpp"
#include "postbox/collectives/ops.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox {
namespace {

#ifdef POSTBOX_TSAN
const std::vector<int> kPs{1, 2, 3, 5, 8, 13, 16};
const std::vector<std::int64_t> kBytes{0, 1, 8, 4096};
#else
const std::vector<int> kPs{1, 2, 3, 5, 8, 13, 16, 31, 64};
const std::vector<std::int64_t> kBytes{0, 1, 8, 4096, 65536};
#endif

struct Mat {  // 2×2 matrix mod 2^16: associative, not commutative
  std::uint16_t a, b, c, d;
  friend bool operator==(const Mat&, const Mat&) = default;
};
struct MatMul {
  Mat operator()(const Mat& x, const Mat& y) const {
    auto m = [](unsigned p, unsigned q, unsigned r, unsigned s) { return static_cast<std::uint16_t>(p * q + r * s); };
    return Mat{m(x.a, y.a, x.b, y.c), m(x.a, y.b, x.b, y.d), m(x.c, y.a, x.d, y.c), m(x.c, y.b, x.d, y.d)};
  }
};
static_assert(sizeof(Mat) == 8);

Mat mat_of(int r, std::size_t i) {
  const auto v = static_cast<unsigned>(r * 7919 + static_cast<int>(i) * 104729);
  return Mat{static_cast<std::uint16_t>(v | 1U), static_cast<std::uint16_t>(v >> 3), static_cast<std::uint16_t>(v * 3 + 1),
             static_cast<std::uint16_t>((v >> 5) | 1U)};
}
std::uint64_t u64_of(int r, std::size_t i) { return (static_cast<std::uint64_t>(r) + 1) * 0x9E3779B97F4A7C15ULL + i * 1234567ULL; }
std::byte byte_of(int r, std::size_t i) { return static_cast<std::byte>((r * 31 + static_cast<int>(i) * 7 + 3) & 0xff); }

using testing_support::Algo;
using testing_support::kAlgos;

std::vector<int> roots_for(int p) {
  std::set<int> r{0, p / 2, p - 1};
  return {r.begin(), r.end()};
}

// Rings large enough for the biggest plan of this (op, algo, p), so the executor never refuses.
std::size_t ring_for(const Algo& a, int p) {
  std::size_t ring = 64 * 1024;
  for (std::int64_t bytes : kBytes) {
    PlanRequest req;
    req.op = a.op;
    req.algo = a.algo;
    req.p = p;
    req.bytes = bytes;
    req.elem_bytes = (std::string(a.op) == "reduce" || std::string(a.op) == "allreduce") && bytes % 8 == 0 ? 8 : 1;
    req.lambda = Rational(5, 2);
    const Plan plan = build_plan(req);
    if (validate_rings(plan, ring)) ring = ring_bytes_needed(plan);
  }
  return ring;
}

class OpsGrid : public testing::TestWithParam<std::tuple<Algo, int>> {};

TEST_P(OpsGrid, ExactOnEveryRank) {
  const auto& [a, p] = GetParam();
  const std::string op = a.op, algo = a.algo;
  TeamOptions opts;
  opts.pin = false;
  opts.mailbox.ring_bytes = ring_for(a, p);
  Team team(p, opts);
  const auto P = static_cast<std::size_t>(p);
  const std::optional<Rational> lambda = Rational(5, 2);
  for (std::int64_t bytes : kBytes) {
    const auto B = static_cast<std::size_t>(bytes);
    for (int root : roots_for(p)) {
      if (op == "allreduce" && root != 0) continue;
      SCOPED_TRACE(op + "/" + algo + " p=" + std::to_string(p) + " bytes=" + std::to_string(bytes) + " root=" + std::to_string(root));
      if (op == "bcast" || op == "gather") {
        std::vector<std::vector<std::byte>> data(P), all(P);
        for (int r = 0; r < p; ++r) {
          data[static_cast<std::size_t>(r)].resize(B);
          for (std::size_t i = 0; i < B; ++i) {
            const std::byte want = byte_of(op == "bcast" ? root : r, i);
            data[static_cast<std::size_t>(r)][i] = (op == "bcast" && r != root) ? ~want : want;
          }
          all[static_cast<std::size_t>(r)].assign(B * P, std::byte{0xEE});
        }
        for (int iter = 0; iter < 2; ++iter) {
          team.run([&](RankContext& ctx) {
            auto& mine = data[static_cast<std::size_t>(ctx.rank())];
            if (op == "bcast") broadcast(ctx, root, std::span(mine), algo);
            else gather(ctx, root, std::span<const std::byte>(mine), std::span(all[static_cast<std::size_t>(ctx.rank())]), algo);
          });
        }
        if (op == "bcast") {
          for (int r = 0; r < p; ++r)
            for (std::size_t i = 0; i < B; ++i) ASSERT_EQ(data[static_cast<std::size_t>(r)][i], byte_of(root, i)) << "rank " << r << " byte " << i;
        } else {
          for (int r = 0; r < p; ++r)
            for (std::size_t i = 0; i < B; ++i)
              ASSERT_EQ(all[static_cast<std::size_t>(root)][static_cast<std::size_t>(r) * B + i], byte_of(r, i)) << "block " << r << " byte " << i;
        }
        continue;
      }
      // Combining ops: integer sums (u64 where the size allows, else bytes), then matrices.
      const bool wide = bytes % 8 == 0;
      const std::size_t n = wide ? B / 8 : B;
      std::vector<std::vector<std::uint64_t>> w(P);
      std::vector<std::vector<std::uint8_t>> nb(P);
      auto fill = [&] {
        for (int r = 0; r < p; ++r) {
          w[static_cast<std::size_t>(r)].resize(wide ? n : 0);
          nb[static_cast<std::size_t>(r)].resize(wide ? 0 : n);
          for (std::size_t i = 0; i < n; ++i) {
            if (wide) w[static_cast<std::size_t>(r)][i] = u64_of(r, i);
            else nb[static_cast<std::size_t>(r)][i] = static_cast<std::uint8_t>(u64_of(r, i) >> 13);
          }
        }
      };
      for (int iter = 0; iter < 2; ++iter) {
        fill();
        team.run([&](RankContext& ctx) {
          const auto me = static_cast<std::size_t>(ctx.rank());
          if (op == "reduce") {
            if (wide) reduce(ctx, root, std::span(w[me]), std::plus<>{}, algo);
            else reduce(ctx, root, std::span(nb[me]), std::plus<>{}, algo);
          } else {
            if (wide) allreduce(ctx, std::span(w[me]), std::plus<>{}, algo, lambda);
            else allreduce(ctx, std::span(nb[me]), std::plus<>{}, algo, lambda);
          }
        });
        for (int r = 0; r < p; ++r) {
          if (op == "reduce" && r != root) continue;
          for (std::size_t i = 0; i < n; ++i) {
            std::uint64_t sum = 0;
            for (int q = 0; q < p; ++q) sum += wide ? u64_of(q, i) : static_cast<std::uint8_t>(u64_of(q, i) >> 13);
            if (wide) ASSERT_EQ(w[static_cast<std::size_t>(r)][i], sum) << "rank " << r << " elem " << i;
            else ASSERT_EQ(nb[static_cast<std::size_t>(r)][i], static_cast<std::uint8_t>(sum)) << "rank " << r << " elem " << i;
          }
        }
      }
      if (!wide) continue;
      std::vector<std::vector<Mat>> m(P, std::vector<Mat>(n));
      for (int r = 0; r < p; ++r)
        for (std::size_t i = 0; i < n; ++i) m[static_cast<std::size_t>(r)][i] = mat_of(r, i);
      const bool needs_comm = algo.rfind("postal", 0) == 0;
      auto run_mat = [&] {
        team.run([&](RankContext& ctx) {
          auto& mine = m[static_cast<std::size_t>(ctx.rank())];
          if (op == "reduce") reduce(ctx, root, std::span(mine), MatMul{}, algo);
          else allreduce(ctx, std::span(mine), MatMul{}, algo, lambda);
        });
      };
      if (needs_comm) {
        EXPECT_THROW(run_mat(), InputError);
        continue;
      }
      run_mat();
      for (int r = 0; r < p; ++r) {
        if (op == "reduce" && r != root) continue;
        for (std::size_t i = 0; i < n; ++i) {
          Mat want = mat_of(0, i);
          for (int q = 1; q < p; ++q) want = MatMul{}(want, mat_of(q, i));
          ASSERT_EQ(m[static_cast<std::size_t>(r)][i], want) << "rank " << r << " elem " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, OpsGrid, testing::Combine(testing::ValuesIn(kAlgos), testing::ValuesIn(kPs)),
                         [](const testing::TestParamInfo<std::tuple<Algo, int>>& c) {
                           std::string s = std::string(std::get<0>(c.param).op) + "_" + std::get<0>(c.param).algo + "_p" +
                                           std::to_string(std::get<1>(c.param));
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

void one_broadcast(Team& team) {
  team.run([](RankContext& ctx) {
    std::uint64_t v = ctx.rank() == 0 ? 42 : 0;
    broadcast(ctx, 0, std::span<std::uint64_t>(&v, 1));
    if (v != 42) throw InputError("broadcast lost its value");
  });
}

// The executor cache once keyed on the team's address: a team made where a destroyed one lived
// was handed the old team's executor.
TEST(ExecutorCache, TeamMadeWhereAnOldOneLivedIsAnotherTeam) {
  TeamOptions opts;
  opts.pin = false;
  std::optional<Team> team;  // one place in memory for both
  team.emplace(2, opts);
  const Team* where = &*team;
  const std::uint64_t first_id = team->id();
  one_broadcast(*team);
  const std::size_t after_first = cached_executor_count();
  team.reset();
  team.emplace(2, opts);
  ASSERT_EQ(&*team, where);
  EXPECT_NE(team->id(), first_id);
  one_broadcast(*team);
  EXPECT_EQ(cached_executor_count(), after_first + 1);
}

// Bounded like the plan cache: kPlanCacheEntries teams and more leave at most that many.
TEST(ExecutorCache, Bounded) {
  TeamOptions opts;
  opts.pin = false;
  std::size_t most = 0;
  for (std::size_t i = 0; i < kPlanCacheEntries + 8; ++i) {
    Team team(1, opts);
    one_broadcast(team);
    most = std::max(most, cached_executor_count());
  }
  EXPECT_LE(most, kPlanCacheEntries);
  EXPECT_GE(most, kPlanCacheEntries / 2) << "each team must have had an entry of its own";
  EXPECT_LT(cached_executor_count(), kPlanCacheEntries);
}

TEST(Ops, DefaultShapeAndAlgorithm) {
  Team team(5, TeamOptions{Placement::compact(), false, {}, {}});
  std::vector<std::vector<std::uint32_t>> d(5, std::vector<std::uint32_t>(3, 0));
  for (auto& x : d[2]) x = 42;
  team.run([&](RankContext& ctx) {
    auto& mine = d[static_cast<std::size_t>(ctx.rank())];
    broadcast(ctx, 2, std::span(mine));
    allreduce(ctx, std::span(mine), Commutative{[](std::uint32_t x, std::uint32_t y) { return x + y; }});
  });
  for (const auto& x : d) EXPECT_EQ(x, (std::vector<std::uint32_t>(3, 42 * 5)));
}

TEST(Ops, MismatchedRootIsAnInputError) {
  Team team(3, TeamOptions{Placement::compact(), false, {}, {}});
  std::vector<std::uint64_t> d(3 * 2);
  EXPECT_THROW(team.run([&](RankContext& ctx) { broadcast(ctx, 3, std::span(d).subspan(static_cast<std::size_t>(ctx.rank()) * 2, 2)); }),
               InputError);
}

}  // namespace
}  // namespace postbox
