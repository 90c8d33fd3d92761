#include "postbox/collectives/s2p.hpp"
#include "postbox/frontend/selection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/check.hpp"
#include "s2p_sim.hpp"

namespace postbox {
namespace {

std::uint8_t pattern(int source, std::uint64_t t) { return static_cast<std::uint8_t>(source * 131 + t * 7 + 1); }

// Runs the plan on the reference executor and checks every rank ends with all s messages in
// source order. Returns "" or the first problem.
std::string run_and_check(const Plan& plan, const std::vector<int>& sources, std::uint64_t bytes, std::uint64_t seed) {
  const int p = plan.p;
  const auto s = sources.size();
  std::vector<std::vector<std::uint8_t>> user(static_cast<std::size_t>(p), std::vector<std::uint8_t>(s * bytes, 0xCD));
  for (std::size_t k = 0; k < s; ++k) {
    for (std::uint64_t t = 0; t < bytes; ++t) user[static_cast<std::size_t>(sources[k])][k * bytes + t] = pattern(static_cast<int>(k), t);
  }
  auto res = testing::simulate(plan, std::move(user), seed);
  if (!res.error.empty()) return res.error;
  for (int r = 0; r < p; ++r) {
    for (std::size_t k = 0; k < s; ++k) {
      for (std::uint64_t t = 0; t < bytes; ++t) {
        if (res.user[static_cast<std::size_t>(r)][k * bytes + t] != pattern(static_cast<int>(k), t)) {
          return "rank " + std::to_string(r) + " has a wrong byte " + std::to_string(t) + " of source #" + std::to_string(k);
        }
      }
    }
  }
  return "";
}

std::vector<int> counts_of(int p) {
  std::set<int> c{1, 2, p / 2, p};
  std::vector<int> out;
  for (int x : c) {
    if (x >= 1 && x <= p) out.push_back(x);
  }
  return out;
}

// True when `big` is `small` with every offset and size multiplied by k: the same ops, peers,
// tags and deps. The reference executor moves contiguous regions only, so byte q of every
// k-byte unit of `big` goes exactly where the corresponding byte of `small` goes: `big` is
// exact iff `small` is.
std::string scaling_problem(const Plan& small, const Plan& big, std::uint64_t k) {
  auto scaled = [k](Region g) {
    g.offset *= k;
    g.bytes *= k;
    return g;
  };
  if (big.p != small.p || big.bytes != small.bytes * k) return "p or bytes differ";
  for (int r = 0; r < small.p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (big.user_bytes[i] != small.user_bytes[i] * k || big.scratch_bytes[i] != small.scratch_bytes[i] * k) {
      return "buffer sizes of rank " + std::to_string(r) + " do not scale";
    }
    const RankOps x = small.ops(r);
    const RankOps y = big.ops(r);
    if (x.size() != y.size()) return "rank " + std::to_string(r) + " has a different number of ops";
    for (std::size_t j = 0; j < x.size(); ++j) {
      const bool two = x[j].code == OpCode::copy || x[j].code == OpCode::reduce;
      if (x[j].code != y[j].code || x[j].peer != y[j].peer || x[j].tag != y[j].tag || !std::ranges::equal(x[j].deps, y[j].deps) ||
          !(scaled(x[j].a) == y[j].a) || (two && !(scaled(x[j].b) == y[j].b))) {
        return "rank " + std::to_string(r) + " op " + std::to_string(j) + " does not scale";
      }
    }
  }
  return "";
}

class S2PMatrix : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

// Every algorithm × distribution (+ an explicit, unsorted list) × s ∈ {1, 2, p/2, p} × bytes
// ∈ {0, 8, 4096} on one mesh: exact result on every rank. Identical source lists are run once.
// While p·s <= 4096 every list runs at every size on the reference executor. Beyond that (10x10
// and 16x16 with many sources) every list runs at 8 bytes, and the first list of each s also at
// 0 bytes and at 4096 bytes, the latter checked as the 8-byte plan scaled by 512, which is as
// exact and far cheaper than moving up to 256 MiB byte by byte.
TEST_P(S2PMatrix, ExactResultOnEveryRank) {
  const auto& [algo, mesh_text] = GetParam();
  const Mesh mesh = parse_mesh(mesh_text);
  const int p = mesh.p();
  std::set<std::vector<int>> seen;
  for (int s : counts_of(p)) {
    std::vector<std::vector<int>> lists;
    for (const auto& d : source_distribution_names()) lists.push_back(source_distribution(d, mesh, s, 42));
    auto expl = source_distribution("random", mesh, s, 7);
    std::reverse(expl.begin(), expl.end());  // source order differs from rank order
    lists.push_back(expl);
    const bool big = p * s > 4096;
    for (const auto& src : lists) {
      if (!seen.insert(src).second) continue;
      const bool all_sizes = !big || src == lists.front();
      const Plan eight = build_s2p_plan(S2PRequest{algo, mesh, src, 8});
      ASSERT_EQ(eight.op, "s2p");
      ASSERT_EQ(eight.p, p);
      for (std::uint64_t bytes : {0ULL, 8ULL, 4096ULL}) {
        if (bytes != 8 && !all_sizes) continue;
        const Plan other = bytes == 8 ? Plan{} : build_s2p_plan(S2PRequest{algo, mesh, src, bytes});
        const Plan& plan = bytes == 8 ? eight : other;
        const auto err = bytes == 4096 && big ? scaling_problem(eight, plan, 512)
                                              : run_and_check(plan, src, bytes, bytes + static_cast<std::uint64_t>(s));
        ASSERT_EQ(err, "") << algo << " on " << mesh_text << ", s = " << s << ", bytes = " << bytes;
      }
      if (p <= 16) {
        ASSERT_EQ(testing::find_race(eight), "") << algo << " on " << mesh_text << ", s = " << s;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, S2PMatrix,
                         ::testing::Combine(::testing::ValuesIn(s2p_algorithm_names()),
                                            ::testing::Values("1x1", "2x2", "3x5", "4x4", "10x10", "16x16")),
                         [](const auto& param_info) {
                           std::string n = std::get<0>(param_info.param) + "_" + std::get<1>(param_info.param);
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// ---- distributions ----

class Distributions : public ::testing::TestWithParam<std::string> {};

TEST_P(Distributions, GiveSDistinctSortedRanks) {
  for (const char* mt : {"1x1", "2x2", "3x5", "5x3", "4x4", "10x10", "16x16", "1x7", "7x1"}) {
    const Mesh m = parse_mesh(mt);
    for (int s = 1; s <= m.p(); ++s) {
      const auto v = source_distribution(GetParam(), m, s, 3);
      ASSERT_EQ(static_cast<int>(v.size()), s) << mt;
      ASSERT_TRUE(std::is_sorted(v.begin(), v.end()));
      ASSERT_EQ(std::adjacent_find(v.begin(), v.end()), v.end()) << "duplicate source";
      ASSERT_GE(v.front(), 0);
      ASSERT_LT(v.back(), m.p());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, Distributions, ::testing::ValuesIn(source_distribution_names()),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

std::vector<int> rows_hit(const Mesh& m, const std::vector<int>& v) {
  std::set<int> r;
  for (int x : v) r.insert(x / m.cols);
  return {r.begin(), r.end()};
}

TEST(Distributions, RowOf30On10x10IsThreeEvenlySpacedFullRows) {
  const Mesh m{10, 10};
  const auto v = source_distribution("row", m, 30);
  EXPECT_EQ(rows_hit(m, v), (std::vector<int>{0, 3, 6}));
}

TEST(Distributions, RowFillsAllButTheLastRow) {
  const Mesh m{10, 10};
  const auto v = source_distribution("row", m, 25);
  EXPECT_EQ(rows_hit(m, v), (std::vector<int>{0, 3, 6}));
  EXPECT_EQ(std::count_if(v.begin(), v.end(), [](int r) { return r / 10 == 6; }), 5);
}

TEST(Distributions, ColumnIsTheTransposeOfRow) {
  const Mesh m{10, 10};
  const auto v = source_distribution("col", m, 20);
  std::set<int> cols;
  for (int x : v) cols.insert(x % 10);
  EXPECT_EQ(cols, (std::set<int>{0, 5}));
}

TEST(Distributions, EqualStartsAtTheCornerAndSpacesEvenly) {
  const Mesh m{4, 4};
  EXPECT_EQ(source_distribution("equal", m, 4), (std::vector<int>{0, 4, 8, 12}));
  EXPECT_EQ(source_distribution("equal", m, 3), (std::vector<int>{0, 5, 10}));
}

TEST(Distributions, DiagonalsIncludeTheMainAndTheAntiDiagonal) {
  const Mesh m{10, 10};
  const auto r = source_distribution("diag-right", m, 10);
  const auto l = source_distribution("diag-left", m, 10);
  for (int x = 0; x < 10; ++x) {
    EXPECT_TRUE(std::binary_search(r.begin(), r.end(), m.rank(x, x)));
    EXPECT_TRUE(std::binary_search(l.begin(), l.end(), m.rank(x, 9 - x)));
  }
  // Same number of sources in every row and every column (§4).
  const auto r30 = source_distribution("diag-right", m, 30);
  for (int x = 0; x < 10; ++x) {
    EXPECT_EQ(std::count_if(r30.begin(), r30.end(), [x](int q) { return q / 10 == x; }), 3);
    EXPECT_EQ(std::count_if(r30.begin(), r30.end(), [x](int q) { return q % 10 == x; }), 3);
  }
}

TEST(Distributions, BlockIsASquareAtTheCorner) {
  const Mesh m{10, 10};
  const auto v = source_distribution("block", m, 9);
  EXPECT_EQ(v, (std::vector<int>{0, 1, 2, 10, 11, 12, 20, 21, 22}));
}

TEST(Distributions, CrossIsTheUnionOfARowAndAColumnDistribution) {
  // s-to-p §4: a row distribution and a column distribution with about as many sources each.
  // s = 19 on 10×10: R(10) is row 0; the other 9 fill column 0 below it.
  const Mesh m{10, 10};
  std::vector<int> l;
  for (int q = 0; q < 10; ++q) l.push_back(q);
  for (int x = 1; x < 10; ++x) l.push_back(10 * x);
  std::sort(l.begin(), l.end());
  EXPECT_EQ(source_distribution("cross", m, 19), l);
  // s = 30: R(15) is row 0 and half of row 5 (spaced as R spaces rows); the other 15 fill
  // columns 0 and 5 (spaced as C spaces columns) from the top, skipping row-part cells.
  const auto v = source_distribution("cross", m, 30);
  ASSERT_EQ(v.size(), 30U);
  for (int q : v) EXPECT_TRUE(q / 10 == 0 || q / 10 == 5 || q % 10 == 0 || q % 10 == 5) << q;
  for (int q = 0; q < 10; ++q) EXPECT_TRUE(std::binary_search(v.begin(), v.end(), q)) << q;
  for (int x = 0; x < 10; ++x) EXPECT_TRUE(std::binary_search(v.begin(), v.end(), 10 * x)) << x;
  const auto in_row_part = std::count_if(v.begin(), v.end(), [](int q) { return q < 10 || (q >= 50 && q < 55); });
  EXPECT_EQ(in_row_part, 15);
}

TEST(Distributions, RandomIsSeeded) {
  const Mesh m{16, 16};
  EXPECT_EQ(source_distribution("random", m, 40, 9), source_distribution("random", m, 40, 9));
  EXPECT_NE(source_distribution("random", m, 40, 9), source_distribution("random", m, 40, 10));
}

// ---- algorithm structure ----

int count_sends(const Plan& plan) {
  int n = 0;
  for (int r = 0; r < plan.p; ++r) {
    for (const OpView op : plan.ops(r)) n += op.code == OpCode::send;
  }
  return n;
}

TEST(S2PAlgorithms, BrLinFromOneSourceIsABinomialBroadcast) {
  const Mesh m{4, 4};
  const Plan plan = build_s2p_plan(S2PRequest{"br-lin", m, {0}, 8});
  EXPECT_EQ(count_sends(plan), 15);
  EXPECT_EQ(plan.ops(0).size(), 4u);  // 4 sends, nothing received
}

TEST(S2PAlgorithms, XorSendsEverySourceToEveryRank) {
  const Mesh m{3, 5};
  const Plan plan = build_s2p_plan(S2PRequest{"xor", m, {1, 7, 9}, 8});
  EXPECT_EQ(count_sends(plan), 3 * 14);
}

TEST(S2PAlgorithms, TwoStepFunnelsIntoRankZero) {
  const Mesh m{4, 4};
  const Plan plan = build_s2p_plan(S2PRequest{"2-step", m, {3, 5, 10}, 8});
  int into_zero = 0;
  for (const OpView op : plan.ops(0)) into_zero += op.code == OpCode::recv;
  EXPECT_EQ(into_zero, 3);
}

TEST(S2PAlgorithms, XySourceGoesAlongRowsFirstForAColumnDistribution) {
  // Sources in one column: every row has 1 source, the column has 4 → rows first, so the
  // first messages travel inside rows (same row index at both ends).
  const Mesh m{4, 4};
  const Plan plan = build_s2p_plan(S2PRequest{"br-xy-source", m, {1, 5, 9, 13}, 8});
  for (const OpView op : plan.ops(1)) {
    if (op.code == OpCode::send) {
      EXPECT_EQ(op.peer / 4, 0);
      break;
    }
  }
}

TEST(S2PAlgorithms, CombinedMessagesTravelAsOneSend) {
  // Br_Lin with every rank a source on 2x2: 2 rounds, each rank sends once per round.
  const Mesh m{2, 2};
  const Plan plan = build_s2p_plan(S2PRequest{"br-lin", m, {0, 1, 2, 3}, 8});
  EXPECT_EQ(count_sends(plan), 8);
  for (int r = 0; r < plan.p; ++r) {
    std::vector<std::uint64_t> sizes;
    for (const OpView op : plan.ops(r)) {
      if (op.code == OpCode::send) sizes.push_back(op.a.bytes);
    }
    EXPECT_EQ(sizes, (std::vector<std::uint64_t>{8, 16}));
  }
}

TEST(S2PAlgorithms, RepositioningMovesOnlySourcesOffTheTargets) {
  // repos-xy-source's targets are the first s ranks (full top rows): sources already there stay.
  const Mesh m{4, 4};
  const Plan plan = build_s2p_plan(S2PRequest{"repos-xy-source", m, {0, 1, 2, 3}, 8});
  const Plan bx = build_s2p_plan(S2PRequest{"br-xy-source", m, {0, 1, 2, 3}, 8});
  EXPECT_EQ(count_sends(plan), count_sends(bx));
}

TEST(S2PRegistry, IsBuiltInWithoutRegistering) {
  // No register_s2p_plans() here: the registry loads s2p and the C³ ops on first use, so
  // postbox run --list, plan export and sim see them.
  std::set<std::pair<std::string, std::string>> listed;
  for (const auto& b : list_plan_builders()) listed.emplace(b.op, b.algo);
  for (const auto& a : s2p_algorithm_names()) EXPECT_TRUE(listed.contains({"s2p", a})) << a;
  for (const char* op : {"one-to-all", "all-to-one", "all-to-all"}) {
    EXPECT_TRUE(listed.contains({op, "1-lev-dir"})) << op;
  }
  PlanRequest req;
  req.op = "s2p";
  req.algo = "br-xy-dim";
  req.p = 15;
  req.bytes = 8;
  req.mesh = Mesh{3, 5};
  req.sources = source_distribution("band", Mesh{3, 5}, 4);
  const Plan plan = build_plan(req);
  EXPECT_EQ(plan.op, "s2p");
  EXPECT_EQ(plan.user_bytes[0], 4u * 8u);
}

// derive_dependencies / validate() treat a 0-byte region as the byte at its offset (a 0-byte
// message is a notification that a relay must wait for), so every 0-byte region of a 0-byte
// s2p plan sits at offset 0 and the builders must order the ops that touch it.
TEST(S2PZeroBytes, PlansValidate) {
  for (const auto& algo : s2p_algorithm_names()) {
    for (const char* mt : {"1x1", "2x2", "3x5", "4x4"}) {
      const Mesh m = parse_mesh(mt);
      for (int s : counts_of(m.p())) {
        for (const char* dist : {"row", "diag-left", "random"}) {
          const Plan plan = build_s2p_plan(S2PRequest{algo, m, source_distribution(dist, m, s, 11), 0});
          const auto problem = validate(plan);
          ASSERT_FALSE(problem.has_value()) << algo << " " << mt << " s=" << s << " " << dist << ": " << *problem;
        }
      }
    }
  }
}

// The message of the FieldError build_plan(req) throws, as the library writes it ("" if none).
std::string field_error_of(const PlanRequest& req) {
  try {
    (void)build_plan(req);
  } catch (const FieldError& e) {
    return e.what();
  }
  return "";
}

TEST(S2PRegistry, RefusesAMeshThatIsNotPAndBadSourcesNamingTheField) {
  register_s2p_plans();
  PlanRequest req;
  req.op = "s2p";
  req.algo = "br-lin";
  req.p = 16;
  req.mesh = Mesh{3, 5};
  EXPECT_EQ(field_error_of(req), "mesh 3x5 does not have p = 16 ranks");
  req.mesh = Mesh{-4, -4};  // rows·cols = 16 = p, but no mesh has negative sides
  EXPECT_EQ(field_error_of(req), "mesh -4x-4 does not have p = 16 ranks");
  req.mesh = Mesh{4, 4};
  req.sources = {1, 16};
  EXPECT_EQ(field_error_of(req), "sources: rank 16 is outside 0..15");
  req.sources = {-1};
  EXPECT_EQ(field_error_of(req), "sources: rank -1 is outside 0..15");
  req.sources = {3, 1, 3};
  EXPECT_EQ(field_error_of(req), "sources: rank 3 is given twice");
  req.sources = {3, 1};
  EXPECT_EQ(field_error_of(req), "");
}

TEST(S2PRegistry, NoSourcesMeansTheOneEqualSource) {
  PlanRequest req;
  req.op = "s2p";
  req.p = 12;
  EXPECT_EQ(s2p_request_sources(req, s2p_request_mesh(req)), source_distribution("equal", near_square_mesh(12), 1, 1));
}

// ---- bad input ----

TEST(S2PInput, Rejected) {
  const Mesh m{4, 4};
  EXPECT_THROW(source_distribution("row", m, 0), InputError);
  EXPECT_THROW(source_distribution("row", m, 17), InputError);
  EXPECT_THROW(source_distribution("spiral", m, 3), InputError);
  EXPECT_THROW(build_s2p_plan(S2PRequest{"br-plane", m, {0}, 8}), InputError);
  EXPECT_THROW(build_s2p_plan(S2PRequest{"br-lin", m, {0, 3, 0}, 8}), InputError);
  EXPECT_THROW(build_s2p_plan(S2PRequest{"br-lin", m, {16}, 8}), InputError);
  EXPECT_THROW(build_s2p_plan(S2PRequest{"br-lin", m, {}, 8}), InputError);
  EXPECT_THROW(parse_mesh("4by4"), InputError);
  EXPECT_THROW(parse_mesh("0x4"), InputError);
  EXPECT_EQ(parse_mesh("3X5").p(), 15);
}

TEST(S2PMesh, SnakeOrderAlternatesDirection) {
  EXPECT_EQ(snake_order(Mesh{3, 3}), (std::vector<int>{0, 1, 2, 5, 4, 3, 6, 7, 8}));
  EXPECT_EQ(near_square_mesh(256).rows, 16);
  EXPECT_EQ(near_square_mesh(15).rows, 3);
  EXPECT_EQ(near_square_mesh(7).rows, 1);
}

}  // namespace
}  // namespace postbox
