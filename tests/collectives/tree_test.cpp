#include "postbox/collectives/tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "postbox/collectives/postal.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox {
namespace {

SendRecv sr(std::int64_t s, std::int64_t r) { return SendRecv{Rational(s), Rational(r)}; }

// Optimal broadcast time over all trees (see postal_test.cpp): the root's first child heads
// n − n' nodes (active at s + r), the root goes on with n' nodes from time s.
std::vector<Rational> optimum_dp(const SendRecv& m, int n_max) {
  std::vector<Rational> opt(static_cast<std::size_t>(n_max + 1), Rational(0));
  for (int n = 2; n <= n_max; ++n) {
    std::optional<Rational> best;
    for (int n1 = 1; n1 < n; ++n1) {
      const Rational c = std::max(m.s + opt[static_cast<std::size_t>(n1)], m.s + m.r + opt[static_cast<std::size_t>(n - n1)]);
      if (!best || c < *best) best = c;
    }
    opt[static_cast<std::size_t>(n)] = *best;
  }
  return opt;
}

// Spanning tree rooted at root, every rank once, children consistent with parent, and times
// a + i·s + r in send order.
void expect_valid(const Tree& t, int p, int root, const std::string& what) {
  SCOPED_TRACE(what + " p=" + std::to_string(p) + " root=" + std::to_string(root));
  ASSERT_EQ(t.p, p);
  ASSERT_EQ(t.root, root);
  ASSERT_EQ(t.parent.size(), static_cast<std::size_t>(p));
  ASSERT_EQ(t.children.size(), static_cast<std::size_t>(p));
  ASSERT_EQ(t.time.size(), static_cast<std::size_t>(p));
  EXPECT_EQ(t.parent[static_cast<std::size_t>(root)], -1);
  std::vector<int> seen(static_cast<std::size_t>(p), 0);
  seen[static_cast<std::size_t>(root)] = 1;
  EXPECT_EQ(t.time[static_cast<std::size_t>(root)], Rational(0));
  Rational done(0);
  for (int v = 0; v < p; ++v) {
    std::int64_t i = 0;
    for (int c : t.children[static_cast<std::size_t>(v)]) {
      ++i;
      ASSERT_GE(c, 0);
      ASSERT_LT(c, p);
      ++seen[static_cast<std::size_t>(c)];
      EXPECT_EQ(t.parent[static_cast<std::size_t>(c)], v);
      EXPECT_EQ(t.time[static_cast<std::size_t>(c)], t.time[static_cast<std::size_t>(v)] + Rational(i) * t.model.s + t.model.r);
    }
    done = std::max(done, t.time[static_cast<std::size_t>(v)]);
  }
  for (int v = 0; v < p; ++v) EXPECT_EQ(seen[static_cast<std::size_t>(v)], 1) << "rank " << v;
  // Acyclic: every rank walks up to the root.
  for (int v = 0; v < p; ++v) {
    int u = v, hops = 0;
    while (u != root && hops <= p) {
      u = t.parent[static_cast<std::size_t>(u)];
      ++hops;
      ASSERT_GE(u, 0);
    }
    EXPECT_EQ(u, root);
  }
  EXPECT_EQ(t.completion, done);
}

struct BuilderCase {
  const char* shape;
  std::int64_t s, r;
  bool optimal;  // completion == s·T_λ(p)
};

class EveryBuilder : public testing::TestWithParam<BuilderCase> {};

TEST_P(EveryBuilder, InvariantsForEveryPAndSampledRoots) {
  const auto& c = GetParam();
  const ShapeSpec spec = ShapeSpec::parse(c.shape);
  const SendRecv model = sr(c.s, c.r);
  const Rational lambda = model.lambda();
  const auto opt = optimum_dp(model, 300);
  for (int p = 1; p <= 300; ++p) {
    const Tree base = build_tree(spec, p, 0, model);
    expect_valid(base, p, 0, c.shape);
    EXPECT_EQ(base.shape, spec.name());
    EXPECT_GE(base.completion, opt[static_cast<std::size_t>(p)]);
    if (c.optimal) {
      EXPECT_EQ(base.completion, model.s * T_lambda(lambda, p)) << c.shape << " p=" << p;
      EXPECT_EQ(base.completion, opt[static_cast<std::size_t>(p)]) << c.shape << " p=" << p;
    }
    const std::set<int> roots{p - 1, (7 * p) / 11, p / 2};
    for (int root : roots) {
      if (root == 0) continue;
      const Tree t = build_tree(spec, p, root, model);
      expect_valid(t, p, root, c.shape);
      // Relabelling v → (v + root) mod p of the root-0 tree.
      for (int v = 0; v < p; ++v) {
        const auto w = static_cast<std::size_t>((v + root) % p);
        EXPECT_EQ(t.time[w], base.time[static_cast<std::size_t>(v)]);
        ASSERT_EQ(t.children[w].size(), base.children[static_cast<std::size_t>(v)].size());
      }
      EXPECT_EQ(t.completion, base.completion);
    }
  }
}

const BuilderCase kBuilders[] = {
    {"flat", 1, 1, false},      {"binary", 1, 3, false},     {"kary:3", 2, 5, false},    {"kary:8", 1, 3, false},
    {"kary:1", 1, 0, false},    {"binomial", 1, 3, false},   {"binomial", 1, 0, true},   {"lambda", 1, 1, true},
    {"lambda", 1, 3, true},     {"lambda", 5, 4, true},      {"lambda", 20, 19, true},   {"lambda", 1, 0, true},
    {"lambda:0.6", 1, 1, false}, {"greedy", 1, 1, true},     {"greedy", 1, 3, true},     {"greedy", 5, 4, true},
    {"greedy", 2, 3, true},     {"greedy", 1, 0, true},      {"fibo", 1, 1, true},       {"fibo", 1, 3, true},
    {"fibo", 5, 4, true},       {"fibo", 2, 3, true},        {"fibo", 1, 0, true},       {"fibo", 1, 8, true},
    {"lambda", 2, 3, true},     {"lambda", 1, 8, true},
};

INSTANTIATE_TEST_SUITE_P(Shapes, EveryBuilder, testing::ValuesIn(kBuilders),
                         [](const testing::TestParamInfo<BuilderCase>& i) {
                           std::string n = i.param.shape;
                           for (char& ch : n) {
                             if (ch == ':' || ch == '.') ch = '_';
                           }
                           return n + "_s" + std::to_string(i.param.s) + "_r" + std::to_string(i.param.r);
                         });

// ---- acceptance facts ---------------------------------------------------------------------------

TEST(TreeAcceptance, Lambda2N8) {
  const SendRecv m = SendRecv::from_lambda(Rational(2));
  EXPECT_EQ(build_tree(ShapeSpec::parse("lambda"), 8, 0, m).completion, Rational(5));
  EXPECT_EQ(build_tree(ShapeSpec::parse("greedy"), 8, 0, m).completion, Rational(5));
  EXPECT_EQ(build_tree(ShapeSpec::parse("fibo"), 8, 0, m).completion, Rational(5));
  EXPECT_EQ(build_tree(ShapeSpec::parse("binomial"), 8, 0, m).completion, Rational(6));
}

TEST(TreeAcceptance, CordsenS1R3P64) {
  const SendRecv m = sr(1, 3);
  EXPECT_EQ(build_tree(ShapeSpec::parse("fibo"), 64, 0, m).completion, Rational(15));
  EXPECT_EQ(build_tree(ShapeSpec::parse("binomial"), 64, 0, m).completion, Rational(24));
  // "a complete 2-level eight-ary tree" has 1 + 8 + 64 = 73 processes: (8s + r)·2 = 22.
  EXPECT_EQ(build_tree(ShapeSpec::parse("kary:8"), 73, 0, m).completion, Rational(22));
  // The 64-process heap-layout 8-ary tree lacks the slowest leaves of the last parents: 20.
  EXPECT_EQ(build_tree(ShapeSpec::parse("kary:8"), 64, 0, m).completion, Rational(20));
  // Eq. (1) for a complete 6-level binary tree (p = 127): (2s + r)·6 = 30 (the paper prints 25,
  // which is the 64-process heap-layout binary tree; docs/postal-model.md).
  EXPECT_EQ(build_tree(ShapeSpec::parse("binary"), 127, 0, m).completion, Rational(30));
  EXPECT_EQ(build_tree(ShapeSpec::parse("binary"), 64, 0, m).completion, Rational(25));
}

TEST(TreeAcceptance, BinomialMatchesCordsenFormulaForPowersOfTwo) {
  for (std::int64_t r : {0, 1, 3, 7}) {
    for (int k = 0; k <= 9; ++k) {
      EXPECT_EQ(build_tree(ShapeSpec::parse("binomial"), 1 << k, 0, sr(1, r)).completion, Rational((1 + r) * k));
    }
  }
}

TEST(TreeAcceptance, FiboRemovesOnlyLastStepNodes) {
  for (const SendRecv& m : {sr(1, 3), sr(1, 1), sr(2, 3), sr(1, 0)}) {
    for (int p = 2; p <= 300; ++p) {
      const Tree t = build_tree(ShapeSpec::parse("fibo"), p, 0, m);
      // Every node the full Fibo-tree F(steps) notifies before its last quantum is kept.
      std::int64_t early = 0;
      for (const Rational& a : t.time) early += a < t.completion ? 1 : 0;
      EXPECT_EQ(early, fibo_f(m.s, m.r, t.completion - Rational(1))) << "p=" << p;
    }
  }
}

TEST(TreeAcceptance, FixedAlphaWorksForLambda2ButNotFor195) {
  // Fig. 6: one α serves every n <= 250 for λ = 2; Fig. 7: none does for λ = 1.95.
  auto intersect = [](const Rational& lambda) {
    Rational lo(0), hi(1);
    for (const AlphaRange& a : alpha_ranges(lambda, 250)) {
      lo = std::max(lo, a.round_lo());
      hi = std::min(hi, a.round_hi());
    }
    return std::make_pair(lo, hi);
  };
  const auto [lo2, hi2] = intersect(Rational(2));
  ASSERT_LT(lo2, hi2);
  const Rational alpha = (lo2 + hi2) / Rational(2);
  ShapeSpec spec = ShapeSpec::parse("lambda");
  spec.alpha = alpha;
  const SendRecv m = SendRecv::from_lambda(Rational(2));
  for (int p = 1; p <= 250; ++p) EXPECT_EQ(build_tree(spec, p, 0, m).completion, T_lambda(Rational(2), p)) << p;
  const auto [lo195, hi195] = intersect(Rational(39, 20));
  EXPECT_GE(lo195, hi195);
}

TEST(TreeAcceptance, LargeTreesStayOptimal) {
  const SendRecv m = SendRecv::from_lambda(Rational(9, 5));
  for (const char* shape : {"lambda", "greedy", "fibo"}) {
    const Tree t = build_tree(ShapeSpec::parse(shape), 100'000, 4321, m);
    EXPECT_EQ(t.completion, T_lambda(Rational(9, 5), 100'000)) << shape;
  }
}

// ---- shape names ---------------------------------------------------------------------------------

class ShapeNames : public testing::TestWithParam<const char*> {};
TEST_P(ShapeNames, RoundTrip) { EXPECT_EQ(ShapeSpec::parse(ShapeSpec::parse(GetParam()).name()).name(), ShapeSpec::parse(GetParam()).name()); }
INSTANTIATE_TEST_SUITE_P(Names, ShapeNames,
                         testing::Values("flat", "binary", "kary:8", "binomial", "lambda", "lambda:0.6", "lambda:3/5",
                                         "greedy", "fibo", "hier", "hier:fibo,binomial", "hier:kary:4,lambda:0.6"));

class BadShapeNames : public testing::TestWithParam<const char*> {};
TEST_P(BadShapeNames, AreInputErrors) { EXPECT_THROW((void)ShapeSpec::parse(GetParam()), InputError); }
INSTANTIATE_TEST_SUITE_P(Names, BadShapeNames,
                         testing::Values("", "tree", "kary", "kary:0", "kary:x", "kary:-2", "lambda:1", "lambda:0",
                                         "lambda:1.5", "lambda:nan", "flat:2", "hier:", "hier:fibo,,flat",
                                         "hier:hier", "binomial:3"));

TEST(ShapeSpec, ParsesParameters) {
  EXPECT_EQ(ShapeSpec::parse("kary:8").k, 8);
  EXPECT_EQ(ShapeSpec::parse("lambda:0.6").alpha, Rational(3, 5));
  EXPECT_FALSE(ShapeSpec::parse("lambda:auto").alpha.has_value());
  EXPECT_EQ(ShapeSpec::parse("lambda:auto").name(), "lambda");
  const ShapeSpec h = ShapeSpec::parse("hier:fibo,kary:4");
  ASSERT_EQ(h.levels.size(), 2U);
  EXPECT_EQ(h.levels[1].k, 4);
  EXPECT_EQ(h.name(), "hier:fibo,kary:4");
}

TEST(BuildTree, BadInputThrows) {
  const ShapeSpec b = ShapeSpec::parse("binomial");
  EXPECT_THROW((void)build_tree(b, 0, 0, sr(1, 1)), InputError);
  EXPECT_THROW((void)build_tree(b, 4, 4, sr(1, 1)), InputError);
  EXPECT_THROW((void)build_tree(b, 4, -1, sr(1, 1)), InputError);
  EXPECT_THROW((void)build_tree(b, 4, 0, SendRecv{Rational(0), Rational(1)}), InputError);
  EXPECT_THROW((void)build_tree(b, 4, 0, SendRecv{Rational(1), Rational(-1)}), InputError);
  ShapeSpec l = ShapeSpec::parse("lambda");
  l.alpha = Rational(1);
  EXPECT_THROW((void)build_tree(l, 4, 0, sr(1, 1)), InputError);
  EXPECT_THROW((void)build_tree(ShapeSpec::parse("hier"), 4, 0, sr(1, 1)), InputError);
}

// s = 123456789.123456789 and r = 10^-9 (the model of a tree --compare that aborted): the
// exact times are whole multiples of 10^-9. Flat's last rank over 50 ranks is active at 49·s + r,
// which fits; over 100 ranks 99·s + r does not, and the int64 sum of quanta wrapped to a wrong
// completion. The lambda tree aborted in its look-up table; it and greedy reach 1000 ranks at
// the optimum s·T_λ(1000) = 10·s + 8·r. Fibo's table would need 1.2·10^17 quanta per send.
TEST(BuildTree, ExactTimesBeyond64BitsAreRefused) {
  const SendRecv m{Rational::parse("123456789.123456789"), Rational::parse("0.000000001")};
  EXPECT_EQ(build_tree(ShapeSpec::parse("flat"), 50, 0, m).completion, Rational(49) * m.s + m.r);
  EXPECT_THROW((void)build_tree(ShapeSpec::parse("flat"), 100, 0, m), InputError);
  EXPECT_THROW((void)build_tree(ShapeSpec::parse("flat"), 1000, 0, m), InputError);
  const Rational optimum(1234567891234567898, 1000000000);
  EXPECT_EQ(fibo_time(m.s, m.r, 1000), optimum);
  EXPECT_EQ(build_tree(ShapeSpec::parse("lambda"), 1000, 0, m).completion, optimum);
  EXPECT_EQ(build_tree(ShapeSpec::parse("greedy"), 1000, 0, m).completion, optimum);
  EXPECT_EQ(greedy_two_queue_tree(1000, m).completion, optimum);
  EXPECT_NO_THROW((void)build_tree(ShapeSpec::parse("binomial"), 1000, 0, m));
  EXPECT_THROW((void)build_tree(ShapeSpec::parse("fibo"), 1000, 0, m), InputError);
}

// s and r whose quanta S and R each fit 64 bits but S + R does not: λ = (S + R)/S and every
// time of a tree past its root leave 64 bits. Refused, where the sums aborted or wrapped.
TEST(BuildTree, QuantaWhoseSumLeaves64BitsAreRefused) {
  const SendRecv m{Rational(9000000001, 1000000001), Rational(8999999999, 999999999)};
  EXPECT_THROW((void)m.lambda(), InputError);
  EXPECT_THROW((void)build_tree(ShapeSpec::parse("lambda"), 10, 0, m), InputError);
  EXPECT_THROW((void)build_tree(ShapeSpec::parse("binomial"), 10, 0, m), InputError);
  EXPECT_THROW((void)greedy_two_queue_tree(10, m), InputError);
  EXPECT_THROW((void)build_tree(ShapeSpec::parse("fibo"), 10, 0, m), InputError);
  EXPECT_EQ(build_tree(ShapeSpec::parse("flat"), 1, 0, m).completion, Rational(0));
}

TEST(SendRecv, FromLambda) {
  const SendRecv m = SendRecv::from_lambda(Rational(9, 5));
  EXPECT_EQ(m.s, Rational(1));
  EXPECT_EQ(m.r, Rational(4, 5));
  EXPECT_EQ(m.lambda(), Rational(9, 5));
}

TEST(Tree, RecomputeTimesFollowsSendOrder) {
  Tree t = build_tree(ShapeSpec::parse("flat"), 4, 0, sr(2, 3));
  EXPECT_EQ(t.time, (std::vector<Rational>{Rational(0), Rational(5), Rational(7), Rational(9)}));
  std::reverse(t.children[0].begin(), t.children[0].end());
  t.recompute_times();
  EXPECT_EQ(t.time, (std::vector<Rational>{Rational(0), Rational(9), Rational(7), Rational(5)}));
  EXPECT_EQ(t.completion, Rational(9));
}

// ---- hier ------------------------------------------------------------------------------------------

std::set<std::pair<int, int>> cross_edges(const Tree& t, const std::vector<int>& cls) {
  std::set<std::pair<int, int>> e;
  for (int v = 0; v < t.p; ++v) {
    for (int c : t.children[static_cast<std::size_t>(v)]) {
      if (cls[static_cast<std::size_t>(v)] != cls[static_cast<std::size_t>(c)]) e.insert({v, c});
    }
  }
  return e;
}

TEST(Hier, ExplicitGroupsOneEdgeIntoEachOtherClass) {
  // 3 packages of 2 cores of 2 ranks: 12 ranks.
  const int p = 12;
  std::vector<int> pkg(p), core(p);
  for (int v = 0; v < p; ++v) {
    pkg[static_cast<std::size_t>(v)] = v / 4;
    core[static_cast<std::size_t>(v)] = v / 2;
  }
  for (int root = 0; root < p; ++root) {
    const Tree t = build_hier_tree({ShapeSpec::parse("flat"), ShapeSpec::parse("binomial")}, {pkg, core}, p, root, sr(1, 3));
    expect_valid(t, p, root, "hier");
    // Exactly one edge into each package other than the root's, each from the root.
    const auto pe = cross_edges(t, pkg);
    EXPECT_EQ(pe.size(), 2U);
    for (const auto& [from, to] : pe) EXPECT_EQ(from, root);
    // One edge into each core other than the root's.
    EXPECT_EQ(cross_edges(t, core).size(), 5U);
    // Outer level first: the root's first two children are the other packages' leaders.
    ASSERT_GE(t.children[static_cast<std::size_t>(root)].size(), 2U);
    EXPECT_NE(pkg[static_cast<std::size_t>(t.children[static_cast<std::size_t>(root)][0])], pkg[static_cast<std::size_t>(root)]);
    EXPECT_NE(pkg[static_cast<std::size_t>(t.children[static_cast<std::size_t>(root)][1])], pkg[static_cast<std::size_t>(root)]);
  }
}

// Per-level latencies: across processes the tree among the process leaders is the
// level's own builder run with the figures between processes, and inside each process the same
// builder with the figures inside; changing one level's figures changes that level's tree only.
std::set<std::pair<int, int>> edges_within(const Tree& t, int lo, int hi) {
  std::set<std::pair<int, int>> e;
  for (int v = lo; v < hi; ++v)
    for (int c : t.children[static_cast<std::size_t>(v)])
      if (c >= lo && c < hi) e.insert({v, c});
  return e;
}

std::set<std::pair<int, int>> scaled_edges(const Tree& t, int scale, int offset) {
  std::set<std::pair<int, int>> e;
  for (int v = 0; v < t.p; ++v)
    for (int c : t.children[static_cast<std::size_t>(v)]) e.insert({v * scale + offset, c * scale + offset});
  return e;
}

TEST(Hier, PerLevelLatenciesShapeEachLevel) {
  const int P = 8, T = 8, p = P * T;
  const auto groups = cluster_groups(P, T);
  const std::vector<ShapeSpec> shapes{ShapeSpec::parse("fibo")};
  const SendRecv fast = sr(1, 0), slow = sr(1, 20);
  for (const auto& [inter, intra] : {std::pair{slow, fast}, std::pair{fast, slow}, std::pair{slow, slow}}) {
    const Tree t = build_hier_tree(shapes, groups, p, 0, intra, {inter, intra});
    expect_valid(t, p, 0, "hier");
    // Process leaders 0, T, 2T, ...: the fibo tree of the figures between processes.
    EXPECT_EQ(cross_edges(t, groups[0]), scaled_edges(build_tree(shapes[0], P, 0, inter), T, 0));
    // Inside process 0 (and every other, each led by its lowest rank): the fibo tree of the figures inside.
    for (int q : {0, 3}) EXPECT_EQ(edges_within(t, q * T, (q + 1) * T), scaled_edges(build_tree(shapes[0], T, 0, intra), 1, q * T));
  }
  // The figures matter: each level's tree changes with its own figures and with nothing else.
  const Tree a = build_hier_tree(shapes, groups, p, 0, fast, {fast, fast});
  const Tree b = build_hier_tree(shapes, groups, p, 0, fast, {slow, fast});
  const Tree c = build_hier_tree(shapes, groups, p, 0, fast, {fast, slow});
  EXPECT_NE(cross_edges(a, groups[0]), cross_edges(b, groups[0]));
  EXPECT_EQ(edges_within(a, 0, T), edges_within(b, 0, T));
  EXPECT_EQ(cross_edges(a, groups[0]), cross_edges(c, groups[0]));
  EXPECT_NE(edges_within(a, 0, T), edges_within(c, 0, T));
  // Without level models: the single model everywhere (the overload without them).
  EXPECT_EQ(build_hier_tree(shapes, groups, p, 0, slow).children, build_hier_tree(shapes, groups, p, 0, fast, {slow}).children);
}

TEST(Hier, ClusterGroupsNameProcessesThenInnerClasses) {
  const auto g = cluster_groups(2, 4, {{0, 0, 2, 2}});
  ASSERT_EQ(g.size(), 2U);
  EXPECT_EQ(g[0], (std::vector<int>{0, 0, 0, 0, 4, 4, 4, 4}));
  EXPECT_EQ(g[1], (std::vector<int>{0, 0, 2, 2, 4, 4, 6, 6}));
  EXPECT_THROW((void)cluster_groups(0, 4), InputError);
  EXPECT_THROW((void)cluster_groups(2, 0), InputError);
  EXPECT_THROW((void)build_hier_tree({}, cluster_groups(2, 2), 4, 0, sr(1, 1), {sr(0, 1)}), InputError);
}

TEST(Hier, FromTopologyDistances) {
  const Topology topo = Topology::synthetic("pack:2 core:4 pu:2");
  for (int p : {1, 2, 5, 16, 23}) {
    const std::vector<int> place = topo.place(Placement::compact(), p);
    for (int root : {0, p - 1}) {
      const Tree t = build_tree(ShapeSpec::parse("hier:fibo,binomial"), p, root, sr(1, 3), &topo, &place);
      expect_valid(t, p, root, "hier topo");
      std::vector<int> pkg(static_cast<std::size_t>(p));
      for (int v = 0; v < p; ++v) pkg[static_cast<std::size_t>(v)] = topo.pu(place[static_cast<std::size_t>(v)]).package;
      const std::set<int> pkgs(pkg.begin(), pkg.end());
      EXPECT_EQ(cross_edges(t, pkg).size(), pkgs.size() - 1) << "p=" << p;
      EXPECT_EQ(t.shape, "hier:fibo,binomial");
    }
  }
}

}  // namespace
}  // namespace postbox
