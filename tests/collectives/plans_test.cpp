// Plan builders: the registry and its refusals, every op × algorithm × p × size × root
// validated and exported to GOAL and read back, the postal deficiency schedule, a symbolic
// run of every combining plan that tracks which contributions each value holds, in order, and
// the barrier plans against their barrier_shape() (messages, order, causality, emulated time).
#include "algo_table.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/collectives/plans.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <numeric>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "postbox/collectives/barrier_shape.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/plan_export.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox {
namespace {

#ifdef POSTBOX_TSAN
const std::vector<int> kPs{1, 2, 3, 5, 8, 13};
#else
const std::vector<int> kPs{1, 2, 3, 5, 8, 13, 16, 31, 64};
#endif
const std::vector<std::int64_t> kBytes{0, 1, 8, 4096, 65536};

using testing_support::Algo;
using testing_support::kAlgos;

bool combines(const std::string& op) { return op == "reduce" || op == "allreduce"; }

std::vector<int> roots_for(int p) {
  std::set<int> r{0, p / 2, p - 1};
  return {r.begin(), r.end()};
}

PlanRequest request(const Algo& a, int p, std::int64_t bytes, int root) {
  PlanRequest req;
  req.op = a.op;
  req.algo = a.algo;
  req.p = p;
  req.bytes = bytes;
  req.root = root;
  req.elem_bytes = combines(a.op) && bytes % 8 == 0 ? 8 : 1;
  req.lambda = Rational(5, 2);  // non-integer: exercises the delay-recv/delay-send choice
  return req;
}

// The GOAL text, read back, says exactly what the plan says.
void expect_goal_matches(const Plan& plan) {
  const GoalSchedule g = parse_goal(plan_to_goal(plan));
  ASSERT_EQ(g.num_ranks, plan.p);
  ASSERT_EQ(g.ranks.size(), static_cast<std::size_t>(plan.p));
  for (int r = 0; r < plan.p; ++r) {
    const RankOps ops = plan.ops(r);
    const GoalRank& gr = g.ranks[static_cast<std::size_t>(r)];
    ASSERT_EQ(gr.rank, r);
    ASSERT_EQ(gr.ops.size(), ops.size());
    std::size_t ndeps = 0;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const GoalOp& go = gr.ops[j];
      EXPECT_EQ(go.label, "l" + std::to_string(j));
      // calc is the reduce/copy's CPU time: 0 with the default (free) costs.
      const bool message = ops[j].code == OpCode::send || ops[j].code == OpCode::recv;
      EXPECT_EQ(go.size, message ? ops[j].a.bytes : 0U);
      switch (ops[j].code) {
        case OpCode::send: EXPECT_EQ(go.kind, GoalOp::Kind::send); break;
        case OpCode::recv: EXPECT_EQ(go.kind, GoalOp::Kind::recv); break;
        default: EXPECT_EQ(go.kind, GoalOp::Kind::calc); break;
      }
      if (ops[j].code == OpCode::send || ops[j].code == OpCode::recv) {
        EXPECT_EQ(go.peer, ops[j].peer);
        EXPECT_EQ(go.tag, static_cast<std::int64_t>(ops[j].tag));
      }
      for (std::uint32_t d : ops[j].deps) {
        ASSERT_LT(ndeps, gr.deps.size());
        EXPECT_EQ(gr.deps[ndeps], (GoalDep{"l" + std::to_string(j), "l" + std::to_string(d), false}));
        ++ndeps;
      }
    }
    EXPECT_EQ(ndeps, gr.deps.size());
  }
}

// Symbolic run in program order: every value is the sequence of ranks combined into it.
// Regions of combining plans are whole `bytes`-sized slots, so a slot is named by its offset.
using Seq = std::vector<int>;
std::vector<std::map<std::pair<int, std::uint64_t>, Seq>> symbolic_run(const Plan& plan) {
  const int p = plan.p;
  std::vector<std::map<std::pair<int, std::uint64_t>, Seq>> mem(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) mem[static_cast<std::size_t>(r)][{0, 0}] = Seq{r};
  std::map<std::pair<int, int>, std::deque<Seq>> wire;
  std::vector<std::size_t> pc(static_cast<std::size_t>(p), 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const RankOps ops = plan.ops(r);
      auto& m = mem[static_cast<std::size_t>(r)];
      for (auto& i = pc[static_cast<std::size_t>(r)]; i < ops.size(); ++i, progress = true) {
        const OpView op = ops[i];
        const std::pair<int, std::uint64_t> a{static_cast<int>(op.a.buffer), op.a.offset};
        const std::pair<int, std::uint64_t> b{static_cast<int>(op.b.buffer), op.b.offset};
        if (op.code == OpCode::send) {
          wire[{r, op.peer}].push_back(m[a]);
        } else if (op.code == OpCode::recv) {
          auto& q = wire[{op.peer, r}];
          if (q.empty()) break;
          m[a] = q.front();
          q.pop_front();
        } else if (op.code == OpCode::copy) {
          m[a] = m[b];
        } else {
          Seq out = op.src_first ? m[b] : m[a];
          const Seq& tail = op.src_first ? m[a] : m[b];
          out.insert(out.end(), tail.begin(), tail.end());
          m[a] = out;
        }
      }
    }
  }
  for (int r = 0; r < p; ++r) EXPECT_EQ(pc[static_cast<std::size_t>(r)], plan.ops(r).size());
  return mem;
}

Seq iota_seq(int p) {
  Seq s(static_cast<std::size_t>(p));
  std::iota(s.begin(), s.end(), 0);
  return s;
}

class PlansGrid : public testing::TestWithParam<std::tuple<Algo, int>> {};

TEST_P(PlansGrid, ValidExportedAndCombinedExactlyOnce) {
  const auto& [a, p] = GetParam();
  for (std::int64_t bytes : kBytes) {
    for (int root : roots_for(p)) {
      if (std::string(a.op) == "allreduce" && root != 0) continue;  // rootless
      SCOPED_TRACE(std::string(a.op) + "/" + a.algo + " p=" + std::to_string(p) + " bytes=" + std::to_string(bytes) +
                   " root=" + std::to_string(root));
      const Plan plan = build_plan(request(a, p, bytes, root));
      ASSERT_EQ(validate(plan), std::nullopt);
      EXPECT_EQ(plan.p, p);
      const bool postal = std::string(a.algo).rfind("postal", 0) == 0;
      EXPECT_EQ(plan.needs_commutative, postal);
      // Everything but the postal combine is safe even with the smallest rings.
      if (!postal) {
        EXPECT_EQ(validate_rings(plan, 4096), std::nullopt);
      }
      EXPECT_EQ(validate_rings(plan, ring_bytes_needed(plan)), std::nullopt);
      if (bytes == 8 || (bytes == 0 && p <= 16)) expect_goal_matches(plan);
      if (bytes == 8 && combines(a.op)) {
        const auto mem = symbolic_run(plan);
        if (std::string(a.op) == "reduce") {
          EXPECT_EQ(mem[static_cast<std::size_t>(root)].at({0, 0}), iota_seq(p));
        } else {
          for (int r = 0; r < p; ++r) {
            const Seq got = mem[static_cast<std::size_t>(r)].at({0, 0});
            if (postal) {
              // A cyclic window starting at r: d_r ⊕ … ⊕ d_{p−1} ⊕ d_0 ⊕ … ⊕ d_{r−1}.
              Seq want(static_cast<std::size_t>(p));
              for (int k = 0; k < p; ++k) want[static_cast<std::size_t>(k)] = (r + k) % p;
              EXPECT_EQ(got, want) << "rank " << r;
            } else {
              EXPECT_EQ(got, iota_seq(p)) << "rank " << r;
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, PlansGrid, testing::Combine(testing::ValuesIn(kAlgos), testing::ValuesIn(kPs)),
                         [](const testing::TestParamInfo<std::tuple<Algo, int>>& c) {
                           std::string n = std::string(std::get<0>(c.param).op) + "_" + std::get<0>(c.param).algo + "_p" +
                                           std::to_string(std::get<1>(c.param));
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// Bruck §3 for every n up to 300 and L up to 6: N_ε(t) = n with t = T_L(n), and the plan's
// windows are exactly the cyclic windows (checked symbolically).
class PostalSchedules : public testing::TestWithParam<int> {};

TEST_P(PostalSchedules, DeficiencyHitsEveryN) {
  const int L = GetParam();
  for (std::int64_t n = 1; n <= 300; ++n) {
    const PostalSchedule s = postal_schedule(n, L);
    ASSERT_EQ(s.N.back(), n);
    EXPECT_EQ(Rational(s.t), T_lambda(Rational(L), n)) << "n=" << n << " L=" << L;
    for (std::size_t r = 1; r < s.N.size(); ++r) EXPECT_GE(s.N[r], s.N[r - 1]);
    for (int e : s.eps) EXPECT_TRUE(e == 0 || e == 1);
  }
}

TEST_P(PostalSchedules, PlanWindowsAreCyclicForEveryN) {
  const int L = GetParam();
  for (int n = 1; n <= 70; ++n) {
    PlanRequest req;
    req.op = "allreduce";
    req.algo = "postal";
    req.p = n;
    req.bytes = 8;
    req.lambda = Rational(L);
    const Plan plan = build_plan(req);
    ASSERT_EQ(validate(plan), std::nullopt) << "n=" << n;
    const auto mem = symbolic_run(plan);
    for (int r = 0; r < n; ++r) {
      Seq want(static_cast<std::size_t>(n));
      for (int k = 0; k < n; ++k) want[static_cast<std::size_t>(k)] = (r + k) % n;
      ASSERT_EQ(mem[static_cast<std::size_t>(r)].at({0, 0}), want) << "n=" << n << " L=" << L << " rank " << r;
    }
    // One message per rank per round at most: the postal model's single output port.
    const PostalSchedule s = postal_schedule(n, L);
    for (int r = 0; r < n; ++r) {
      std::size_t sends = 0;
      for (const OpView op : plan.ops(r)) sends += op.code == OpCode::send ? 1 : 0;
      EXPECT_LE(static_cast<std::int64_t>(sends), std::max<std::int64_t>(0, s.t - L + 1));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(L, PostalSchedules, testing::Values(1, 2, 3, 4, 6));

TEST(PostalChoice, IntegerAndBreakEven) {
  EXPECT_EQ(choose_postal(Rational(3), 100).L, 3);
  EXPECT_EQ(choose_postal(Rational(3), 100).variant, "integer");
  for (const Rational lambda : {Rational(11, 10), Rational(13, 10), Rational(3, 2), Rational(19, 10), Rational(5, 2)}) {
    for (std::int64_t n : {2, 8, 64, 1000}) {
      const PostalChoice c = choose_postal(lambda, n);
      const Rational tr = T_delay_receive(lambda, n), ts = T_delay_send(lambda, n);
      if (ts < tr) {
        EXPECT_EQ(c.variant, "delay-send");
        EXPECT_EQ(c.L, lambda.floor());
      } else {
        EXPECT_EQ(c.variant, "delay-recv");
        EXPECT_EQ(c.L, lambda.ceil());
      }
    }
  }
  // Table 2: below the break-even point (≈1.44 for ⌊λ⌋ = 1) delay-send wins for large n.
  EXPECT_EQ(choose_postal(Rational(11, 10), 1000).variant, "delay-send");
  EXPECT_EQ(choose_postal(Rational(19, 10), 1000).variant, "delay-recv");
}

TEST(PlanRegistry, ListsEveryBuiltIn) {
  std::set<std::string> have;
  for (const auto& b : list_plan_builders()) {
    have.insert(b.op + "/" + b.algo);
    EXPECT_FALSE(b.description.empty());
  }
  for (const Algo& a : kAlgos) {
    std::string name = std::string(a.op) + "/" + a.algo;
    if (name == "bcast/kary:3") name = "bcast/kary:K";
    EXPECT_TRUE(have.contains(name)) << name;
  }
}

TEST(PlanRegistry, PluggableBuilders) {
  register_plan_builder("test-op", "echo:N", "test builder", [](const PlanRequest& r) {
    Plan plan;
    plan.op = r.op;
    plan.algo = r.algo;
    plan.p = r.p;
    plan.user_bytes.assign(static_cast<std::size_t>(r.p), 0);
    plan.scratch_bytes.assign(static_cast<std::size_t>(r.p), 0);
    plan.set_programs(std::vector<RankProgram>(static_cast<std::size_t>(r.p)));
    return plan;
  });
  PlanRequest req;
  req.op = "test-op";
  req.algo = "echo:7";
  req.p = 4;
  EXPECT_EQ(build_plan(req).algo, "echo:7");
}

struct BadRequest {
  const char* name;
  PlanRequest req;
  const char* expect;
};
class PlanRequestBad : public testing::TestWithParam<BadRequest> {};
TEST_P(PlanRequestBad, IsAnInputError) {
  try {
    (void)build_plan(GetParam().req);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().expect), std::string::npos) << e.what();
  }
}
PlanRequest req_of(const char* op, const char* algo, int p, std::int64_t bytes, int root, std::uint32_t elem = 1) {
  PlanRequest r;
  r.op = op;
  r.algo = algo;
  r.p = p;
  r.bytes = bytes;
  r.root = root;
  r.elem_bytes = elem;
  return r;
}
INSTANTIATE_TEST_SUITE_P(
    Cases, PlanRequestBad,
    testing::Values(BadRequest{"unknown_op", req_of("scan", "binomial", 4, 8, 0), "unknown op 'scan'"},
                    BadRequest{"unknown_algo", req_of("bcast", "spiral", 4, 8, 0), "spiral"},
                    BadRequest{"unknown_allreduce", req_of("allreduce", "ring", 4, 8, 0), "unknown algo 'ring' for op allreduce"},
                    BadRequest{"p_zero", req_of("bcast", "binomial", 0, 8, 0), "p must be at least 1"},
                    BadRequest{"root_high", req_of("bcast", "binomial", 4, 8, 4), "root 4 is outside 0..3"},
                    BadRequest{"root_negative", req_of("reduce", "binomial", 4, 8, -1), "outside"},
                    BadRequest{"negative_bytes", req_of("gather", "binomial", 4, -8, 0), "must not be negative"},
                    BadRequest{"not_divisible", req_of("allreduce", "postal", 4, 12, 0, 8), "not a multiple"},
                    BadRequest{"not_divisible_reduce", req_of("reduce", "binomial", 4, 7, 0, 2), "not a multiple"},
                    BadRequest{"bad_kary", req_of("bcast", "kary:x", 4, 8, 0), "kary"}),
    [](const testing::TestParamInfo<BadRequest>& c) { return std::string(c.param.name); });

TEST(PlanCache, RepeatedRequestIsOneBuild) {
  PlanRequest req = req_of("bcast", "fibo", 13, 64, 3);
  const auto a = cached_plan(req);
  const auto b = cached_plan(req);
  EXPECT_EQ(a.get(), b.get());
  req.root = 4;
  EXPECT_NE(cached_plan(req).get(), a.get());
}

// Every rank's program, op by op.
bool same_ops(const Plan& x, const Plan& y) {
  if (x.p != y.p) return false;
  for (int r = 0; r < x.p; ++r) {
    auto a = x.ops(r), b = y.ops(r);
    auto i = a.begin(), j = b.begin();
    for (; i != a.end() && j != b.end(); ++i, ++j) {
      const OpView u = *i, v = *j;
      if (u.code != v.code || u.peer != v.peer || !(u.a == v.a) || !(u.b == v.b)) return false;
    }
    if (i != a.end() || j != b.end()) return false;
  }
  return true;
}

PlanRequest hier_barrier(const Topology* topology, const std::vector<int>* placement) {
  PlanRequest req;
  req.op = "barrier";
  req.algo = "hier";
  req.p = 8;
  req.topology = topology;
  req.placement = placement;
  return req;
}

// The cache once keyed on the topology's address: a topology made where a destroyed one lived
// got the old one's plan.
TEST(PlanCache, TopologyMadeWhereAnOldOneLivedGetsItsOwnPlan) {
  std::optional<Topology> topo;  // one place in memory for both
  topo.emplace(Topology::synthetic("pack:2 core:4 pu:1"));
  const Topology* where = &*topo;
  const auto first = cached_plan(hier_barrier(where, nullptr));
  topo.reset();
  topo.emplace(Topology::synthetic("pack:4 core:2 pu:1"));
  ASSERT_EQ(&*topo, where);
  const auto second = cached_plan(hier_barrier(&*topo, nullptr));
  EXPECT_TRUE(same_ops(*second, build_plan(hier_barrier(&*topo, nullptr))));
  EXPECT_FALSE(same_ops(*first, *second)) << "the two topologies must give different plans for the test to mean anything";
  // A copy is the same topology: it shares the id, and the plan.
  const Topology copy = *topo;
  EXPECT_EQ(copy.id(), topo->id());
  EXPECT_EQ(cached_plan(hier_barrier(&copy, nullptr)).get(), second.get());
}

// Likewise a placement vector changed in place (same address).
TEST(PlanCache, PlacementChangedInPlaceGetsItsOwnPlan) {
  static const Topology topo = Topology::synthetic("pack:2 core:4 pu:1");
  std::vector<int> placement = topo.place(Placement::compact(), 8);
  const auto first = cached_plan(hier_barrier(&topo, &placement));
  placement = topo.place(Placement::scatter(), 8);
  const auto second = cached_plan(hier_barrier(&topo, &placement));
  EXPECT_TRUE(same_ops(*second, build_plan(hier_barrier(&topo, &placement))));
  EXPECT_FALSE(same_ops(*first, *second)) << "the two placements must give different plans for the test to mean anything";
}

TEST(PlanGather, BlocksLandAtRankOffsets) {
  const Plan plan = build_plan(req_of("gather", "binomial", 13, 16, 5));
  EXPECT_EQ(plan.user_bytes[5], 13U * 16U);
  // Every block reaches the root exactly once: the root receives p−1 blocks' worth of bytes.
  std::uint64_t at_root = 0;
  for (const OpView op : plan.ops(5))
    if (op.code == OpCode::recv) at_root += op.a.bytes;
  EXPECT_EQ(at_root, 12U * 16U);
}

// ---- the largest message (1 GiB, the mailboxes' limit) ----

std::uint64_t largest_send(const Plan& plan) {
  std::uint64_t most = 0;
  for (int r = 0; r < plan.p; ++r) {
    for (const OpView op : plan.ops(r))
      if (op.code == OpCode::send) most = std::max<std::uint64_t>(most, op.a.bytes);
  }
  return most;
}

// Gather, s2p and the C³ ops combine blocks into one message. oversized_message() finds the
// largest from the op before building, and build_plan() refuses (InputError) before it calls
// the builder: at bytes = 1 GiB / blocks the plan builds, one byte more is refused. Gather over
// 5 ranks at 1 GiB per block aborted in build_plan's check of the finished plan.
TEST(PlanMessages, RefusedExactlyAboveOneGiB) {
  const std::vector<std::pair<std::string, std::string>> kinds{
      {"gather", "binomial"},         {"bcast", "binomial"},          {"s2p", "br-lin"},
      {"s2p", "br-xy-source"},        {"s2p", "br-xy-dim"},           {"s2p", "xor"},
      {"s2p", "2-step"},              {"s2p", "repos-lin"},           {"s2p", "repos-xy-source"},
      {"s2p", "part-lin"},            {"s2p", "part-xy-source"},      {"one-to-one", "1-lev-dir"},
      {"one-to-all", "1-lev-dir"},    {"one-to-all", "1-lev-our-br"}, {"one-to-all", "1-lev-sys-br"},
      {"one-to-all", "2-lev-rec"},    {"one-to-all", "3-lev-sq"},     {"one-to-all", "logp-lev-sq"},
      {"one-to-all", "logp-lev-rec:0.75"}, {"all-to-one", "1-lev-dir"}, {"all-to-one", "2-lev-rec"},
      {"all-to-one", "3-lev-sq"},     {"all-to-one", "logp-lev-sq"},  {"all-to-all", "1-lev-dir"},
      {"all-to-all", "1-lev-perm:linear"}, {"all-to-all", "2-lev-sq"}, {"all-to-all", "2-lev-rc"},
      {"all-to-all", "logp-lev-bfly"}};
  int refused = 0;
  for (const auto& [op, algo] : kinds) {
    for (int p : {2, 5, 9, 16}) {
      for (int root : {0, p - 1}) {
        const bool rooted = op == "gather" || op == "bcast" || op == "one-to-all" || op == "all-to-one";
        if (root != 0 && !rooted) continue;
        SCOPED_TRACE(op + "/" + algo + " p=" + std::to_string(p) + " root=" + std::to_string(root));
        PlanRequest req = req_of(op.c_str(), algo.c_str(), p, 8, root);
        if (op == "s2p") req.sources = source_distribution("equal", near_square_mesh(p), p / 2 + 1);
        if (algo == "logp-lev-bfly" && (p & (p - 1)) != 0) continue;  // a power of two only
        const std::uint64_t blocks = largest_send(build_plan(req)) / 8;
        ASSERT_GE(blocks, 1U);
        req.bytes = kMaxPlanBytes / static_cast<std::int64_t>(blocks);
        EXPECT_FALSE(oversized_message(req).has_value());
        EXPECT_EQ(largest_send(build_plan(req)), blocks * static_cast<std::uint64_t>(req.bytes));
        if (blocks == 1) continue;  // one byte more is above kMaxPlanBytes itself
        req.bytes += 1;
        const auto problem = oversized_message(req);
        ASSERT_TRUE(problem.has_value());
        EXPECT_NE(problem->find(op + "/" + algo + " would send a message of " +
                                std::to_string(blocks * static_cast<std::uint64_t>(req.bytes)) + " bytes"),
                  std::string::npos)
            << *problem;
        EXPECT_THROW((void)build_plan(req), InputError);
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 50);
}

// ---- barrier (the barrier on the plan road) ----

const std::vector<int> kBarrierPs{1, 2, 3, 5, 8, 13, 19, 64};
const std::vector<std::string> kBarrierAlgos{"central", "dissemination", "combine", "mcs", "tournament", "fibo", "hier"};

// hier on a fixed topology (two packages of four two-PU cores), ranks scattered over it, so
// the shape does not depend on the machine the test runs on.
const Topology& barrier_topology() {
  static const Topology t = Topology::synthetic("pack:2 core:4 pu:2");
  return t;
}

struct BarrierCase {
  PlanRequest req;
  std::vector<int> placement;
  BarrierCase(const std::string& algo, int p, std::int64_t bytes)
      : placement(barrier_topology().place(Placement::scatter(), p)) {
    req.op = "barrier";
    req.algo = algo;
    req.p = p;
    req.bytes = bytes;
    req.lambda = Rational(5, 2);  // non-integer: combine picks delay-recv or delay-send; fibo s = 1, r = 3/2
    req.topology = &barrier_topology();
    req.placement = &placement;
  }
  BarrierCase(const BarrierCase&) = delete;
  [[nodiscard]] BarrierShape shape() const {
    return barrier_shape(*parse_barrier_algorithm(req.algo), req.p, model_of(req), req.topology, req.placement);
  }
};

struct Msg {
  OpCode code;
  int peer;
  friend bool operator==(const Msg&, const Msg&) = default;
};
std::ostream& operator<<(std::ostream& o, const Msg& m) { return o << to_string(m.code) << ' ' << m.peer; }

// What rank v must send and receive, in order, per the shape: tree and central, arrival (a
// receive from each arrival child in the tree's order, a send to the parent) before wake-up (a
// receive from the wake-up parent, a send to each child in send order); rounds, per round k a
// send to v + offset[k−1] (k <= m), then the receive of send round j = k − λ + 1 from
// v − offset[j−1].
std::vector<Msg> expected_messages(const BarrierShape& s, int v) {
  std::vector<Msg> out;
  const auto i = static_cast<std::size_t>(v);
  if (s.family == BarrierShape::Family::rounds) {
    for (std::int64_t k = 1; k <= s.t; ++k) {
      if (k <= s.m) out.push_back({OpCode::send, static_cast<int>((v + s.offset[static_cast<std::size_t>(k - 1)]) % s.n)});
      const std::int64_t j = k - s.lambda + 1;
      if (j >= 1 && j <= s.m)
        out.push_back({OpCode::recv, static_cast<int>((v - s.offset[static_cast<std::size_t>(j - 1)] + s.n) % s.n)});
    }
    return out;
  }
  for (int c : s.arrival.children[i]) out.push_back({OpCode::recv, c});
  if (s.arrival.parent[i] >= 0) out.push_back({OpCode::send, s.arrival.parent[i]});
  if (s.wakeup.parent[i] >= 0) out.push_back({OpCode::recv, s.wakeup.parent[i]});
  for (int c : s.wakeup.children[i]) out.push_back({OpCode::send, c});
  return out;
}

// Causality through the plan's dependencies and messages (the order every executor keeps): the
// set of ranks whose arrival (the start of its program) happens before each op completes. A
// barrier lets no rank leave (finish its program) before every rank has arrived.
std::vector<std::uint64_t> exit_knowledge(const Plan& plan) {
  const int p = plan.p;
  std::vector<std::vector<std::uint64_t>> know(static_cast<std::size_t>(p));
  std::map<std::tuple<int, int, std::uint32_t>, std::pair<int, std::size_t>> send_of;  // (from, to, tag) → op
  for (int r = 0; r < p; ++r) {
    const RankOps ops = plan.ops(r);
    know[static_cast<std::size_t>(r)].assign(ops.size(), std::uint64_t{1} << r);
    for (std::size_t j = 0; j < ops.size(); ++j)
      if (ops[j].code == OpCode::send) send_of[std::tuple{r, ops[j].peer, ops[j].tag}] = {r, j};
  }
  for (bool changed = true; changed;) {  // least fixpoint: sets only grow, the graph is acyclic
    changed = false;
    for (int r = 0; r < p; ++r) {
      const RankOps ops = plan.ops(r);
      for (std::size_t j = 0; j < ops.size(); ++j) {
        std::uint64_t k = know[static_cast<std::size_t>(r)][j];
        for (std::uint32_t d : ops[j].deps) k |= know[static_cast<std::size_t>(r)][d];
        if (ops[j].code == OpCode::recv) {
          const auto [q, sj] = send_of.at(std::tuple{ops[j].peer, r, ops[j].tag});
          k |= know[static_cast<std::size_t>(q)][sj];
        }
        if (k != know[static_cast<std::size_t>(r)][j]) {
          know[static_cast<std::size_t>(r)][j] = k;
          changed = true;
        }
      }
    }
  }
  std::vector<std::uint64_t> out(static_cast<std::size_t>(p), 0);
  for (int r = 0; r < p; ++r) {
    out[static_cast<std::size_t>(r)] = std::uint64_t{1} << r;
    for (std::uint64_t k : know[static_cast<std::size_t>(r)]) out[static_cast<std::size_t>(r)] |= k;
  }
  return out;
}

class BarrierPlans : public testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(BarrierPlans, AreTheirShapeAsMessages) {
  const auto& [algo, p] = GetParam();
  for (std::int64_t bytes : {0, 8}) {
    SCOPED_TRACE("barrier/" + algo + " p=" + std::to_string(p) + " bytes=" + std::to_string(bytes));
    const BarrierCase c(algo, p, bytes);
    const Plan plan = build_plan(c.req);
    const BarrierShape shape = c.shape();
    ASSERT_EQ(validate(plan), std::nullopt);
    EXPECT_EQ(validate_rings(plan, 4096), std::nullopt);
    EXPECT_EQ(plan.root, -1);
    EXPECT_EQ(static_cast<std::int64_t>(message_count(plan)), barrier_messages(shape));
    for (int v = 0; v < p; ++v) {
      std::vector<Msg> got;
      std::uint64_t slots = 0;
      for (const OpView op : plan.ops(v)) {
        if (op.code == OpCode::send || op.code == OpCode::recv) {
          got.push_back({op.code, op.peer});
          EXPECT_EQ(op.a.bytes, static_cast<std::uint64_t>(bytes));
          slots += op.code == OpCode::recv && op.a.buffer == Buffer::scratch ? 1 : 0;
        }
      }
      EXPECT_EQ(got, expected_messages(shape, v)) << "rank " << v;
      // One scratch slot per received signal (a byte each at 0 bytes, so each has its place).
      EXPECT_EQ(plan.scratch_bytes[static_cast<std::size_t>(v)], slots * std::max<std::uint64_t>(bytes, 1));
    }
    const std::uint64_t all = p == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << p) - 1;
    const auto known = exit_knowledge(plan);
    for (int v = 0; v < p; ++v) EXPECT_EQ(known[static_cast<std::size_t>(v)], all) << "rank " << v << " leaves early";
    if (p <= 19) expect_goal_matches(plan);
  }
}

INSTANTIATE_TEST_SUITE_P(All, BarrierPlans, testing::Combine(testing::ValuesIn(kBarrierAlgos), testing::ValuesIn(kBarrierPs)),
                         [](const testing::TestParamInfo<std::tuple<std::string, int>>& c) {
                           return std::get<0>(c.param) + "_p" + std::to_string(std::get<1>(c.param));
                         });

// The causality check above is not vacuous: a wake-up that does not wait for the arrival
// (here: the root's first wake-up send moved before its arrival receives) is caught.
TEST(BarrierPlans, EarlyWakeUpIsCaught) {
  const BarrierCase c("central", 3, 0);
  Plan plan = build_plan(c.req);
  std::vector<RankProgram> progs = plan.programs();
  auto& root = progs[0].ops;
  const auto first_send = std::find_if(root.begin(), root.end(), [](const Op& op) { return op.code == OpCode::send; });
  ASSERT_NE(first_send, root.end());
  Op early = *first_send;
  root.erase(first_send);
  early.deps.clear();
  for (Op& op : root) op.deps.clear();
  root.insert(root.begin(), early);
  plan.set_programs(std::move(progs));
  derive_dependencies(plan);
  plan.finalize();
  ASSERT_EQ(validate(plan), std::nullopt);
  EXPECT_NE(exit_knowledge(plan)[static_cast<std::size_t>(early.peer)], std::uint64_t{7});
}

// A tournament plays its matches in increasing round order (the smallest subtree's winner is
// known first) and wakes in reverse round order (the last round's loser, heading the largest
// subtree, first): docs/barrier.md's table.
TEST(BarrierPlans, TournamentMatchesSmallestFirstAndWakesLargestFirst) {
  for (int p : kBarrierPs) {
    const BarrierShape s = BarrierCase("tournament", p, 0).shape();
    std::vector<int> size(static_cast<std::size_t>(p), 1);
    for (int v = p - 1; v > 0; --v) {  // binomial: every parent is below its child
      size[static_cast<std::size_t>(s.arrival.parent[static_cast<std::size_t>(v)])] += size[static_cast<std::size_t>(v)];
    }
    auto sizes = [&](const std::vector<int>& kids) {
      std::vector<int> out;
      for (int c : kids) out.push_back(size[static_cast<std::size_t>(c)]);
      return out;
    };
    for (int v = 0; v < p; ++v) {
      const auto up = sizes(s.arrival.children[static_cast<std::size_t>(v)]);
      const auto down = sizes(s.wakeup.children[static_cast<std::size_t>(v)]);
      EXPECT_TRUE(std::is_sorted(up.begin(), up.end())) << "p=" << p << " rank " << v;
      EXPECT_TRUE(std::is_sorted(down.rbegin(), down.rend())) << "p=" << p << " rank " << v;
      EXPECT_EQ(s.arrival.parent, s.wakeup.parent);
    }
    EXPECT_TRUE(s.match_per_child);
  }
}

// The engine's family and round-flag count come from barrier_shape.hpp: barrier_family() is the
// family barrier_shape() gives, and barrier_max_send_rounds() covers the send rounds of every
// shape over 1..n participants (the rebuilds after drops), for dissemination and for combine
// at λ values whose integer choice changes with n.
TEST(BarrierPlans, FamilyAndMaxSendRoundsComeFromTheShape) {
  for (const char* name : {"central", "dissemination", "combine", "mcs", "tournament", "fibo"}) {
    const BarrierAlgorithm a = *parse_barrier_algorithm(name);
    EXPECT_EQ(barrier_family(a), barrier_shape(a, 9, SendRecv{Rational(1), Rational(1)}).family) << name;
  }
  for (const char* name : {"dissemination", "combine"}) {
    const BarrierAlgorithm a = *parse_barrier_algorithm(name);
    for (const SendRecv m : {SendRecv{Rational(1), Rational(1)}, SendRecv{Rational(2), Rational(3)},
                             SendRecv{Rational(1), Rational(9, 4)}, SendRecv{Rational(4), Rational(0)}}) {
      for (int n = 1; n <= 70; ++n) {
        const std::int64_t most = barrier_max_send_rounds(a, n, m);
        EXPECT_GE(most, 1);
        for (int k = 1; k <= n; ++k) EXPECT_LE(barrier_shape(a, k, m).m, most) << name << " n " << n << " k " << k;
      }
    }
  }
  EXPECT_EQ(barrier_max_send_rounds(BarrierAlgorithm::fibo, 8, SendRecv{Rational(1), Rational(1)}), 0);
  EXPECT_EQ(barrier_shape(BarrierAlgorithm::dissemination, 9, SendRecv{Rational(1), Rational(1)}).offset,
            (std::vector<std::int64_t>{1, 2, 4, 8}));
}

TEST(BarrierPlans, RefuseAParameter) {
  PlanRequest req = req_of("barrier", "fibo:3", 4, 0, 0);
  EXPECT_THROW((void)build_plan(req), InputError);
  req.algo = "default";
  EXPECT_THROW((void)build_plan(req), InputError);
}

TEST(BarrierPlans, HierWithoutTopologyUsesTheMachine) {
  const Plan plan = build_plan(req_of("barrier", "hier", 6, 0, 0));
  EXPECT_EQ(validate(plan), std::nullopt);
  EXPECT_EQ(message_count(plan), 10U);
}

// ---- barrier plans in the emulator (docs/barrier.md, "The barrier on the emulator") ----

sim::SimResult emulate_barrier(const std::string& algo, int p, const sim::Machine& m, const Rational& lambda) {
  PlanRequest req = req_of("barrier", algo.c_str(), p, 0, 0);
  req.lambda = lambda;
  return sim::simulate(build_plan(req), m);
}

const Rational kCordsenLambda(4);  // s = 1, r = 3: the Fibo-tree Cordsen built for MANNA (§5)

// Flat arrival: p − 1 arrivals land at s and the root takes r for each; flat wake-up: p − 1
// sends of s, the last received r later. On the send/receive model that is s + (p − 1)r +
// (p − 1)s + r = p(s + r), exactly.
TEST(BarrierEmulated, CentralOnMannaIsPTimesSPlusR) {
  const sim::Machine manna = sim::load_machine("manna");
  for (int p = 2; p <= 19; ++p) {
    EXPECT_DOUBLE_EQ(emulate_barrier("central", p, manna, kCordsenLambda).time_us, p * (27.0 + 88.0)) << p;
  }
  EXPECT_DOUBLE_EQ(emulate_barrier("central", 1, manna, kCordsenLambda).time_us, 0.0);
}

TEST(BarrierEmulated, FiboOnMannaP19IsDeterministic) {
  const sim::Machine manna = sim::load_machine("manna");
  const sim::SimResult a = emulate_barrier("fibo", 19, manna, kCordsenLambda);
  const sim::SimResult b = emulate_barrier("fibo", 19, manna, kCordsenLambda);
  EXPECT_TRUE(std::isfinite(a.time_us));
  EXPECT_GT(a.time_us, 0);
  EXPECT_EQ(a.time_us, b.time_us);
  EXPECT_EQ(a.per_rank_us, b.per_rank_us);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.messages, 36U);
}

// Cordsen §2: a barrier is a reduction phase, then a distribution phase. On the send/receive
// model (MANNA, no contention) every tree barrier's emulated time is the arrival time at the
// root plus its wake-up tree's multicast time, each computed here without the emulator:
// arrival, a node takes r per child signal in the order they land, a signal landing s after
// the child's own token is complete; wake-up, the i-th child of a node active at a is active
// at a + i·s + r (Cordsen §2.2.1).
double arrival_sr(const Tree& t, int v, double s, double r) {
  std::vector<double> lands;
  for (int c : t.children[static_cast<std::size_t>(v)]) lands.push_back(arrival_sr(t, c, s, r) + s);
  std::sort(lands.begin(), lands.end());
  double done = 0;
  for (double at : lands) done = std::max(done, at) + r;
  return done;
}
double wakeup_sr(const Tree& t, int v, double active, double s, double r) {
  double last = active, i = 0;
  for (int c : t.children[static_cast<std::size_t>(v)]) last = std::max(last, wakeup_sr(t, c, active + ++i * s + r, s, r));
  return last;
}

TEST(BarrierEmulated, TreeBarrierIsArrivalThenMulticastOnManna) {
  const sim::Machine manna = sim::load_machine("manna");
  for (const char* algo : {"central", "mcs", "tournament", "fibo", "hier"}) {
    for (int p = 1; p <= 19; ++p) {
      BarrierCase c(algo, p, 0);
      c.req.lambda = kCordsenLambda;
      const BarrierShape shape = c.shape();
      const double want = arrival_sr(shape.arrival, 0, 27, 88) + wakeup_sr(shape.wakeup, 0, 0, 27, 88);
      EXPECT_DOUBLE_EQ(sim::simulate(build_plan(c.req), manna).time_us, want) << algo << " p=" << p;
    }
  }
}

// The order docs/barrier.md reports for MANNA at p = 19: dissemination (everyone works in every
// round) < fibo (binomial reduction + Fibo distribution, Cordsen's barrier) < tournament (the
// same reduction, binomial distribution) < mcs < central; combine, built for the postal model,
// falls behind dissemination (its receives cost r here).
TEST(BarrierEmulated, OrderOnMannaAtP19) {
  const sim::Machine manna = sim::load_machine("manna");
  auto t = [&](const char* algo) { return emulate_barrier(algo, 19, manna, kCordsenLambda).time_us; };
  EXPECT_LT(t("dissemination"), t("fibo"));
  EXPECT_LT(t("fibo"), t("tournament"));
  EXPECT_LT(t("tournament"), t("mcs"));
  EXPECT_LT(t("mcs"), t("central"));
  EXPECT_LT(t("dissemination"), t("combine"));
}

// The doc's claims for every p of its table: dissemination is never slower than another shape,
// and from p = 3 on Cordsen's barrier spends longer in the reduction than in the distribution.
TEST(BarrierEmulated, DisseminationFirstAndReductionLongerOnManna) {
  const sim::Machine manna = sim::load_machine("manna");
  for (int p = 2; p <= 19; ++p) {
    const double d = emulate_barrier("dissemination", p, manna, kCordsenLambda).time_us;
    for (const char* algo : {"central", "combine", "mcs", "tournament", "fibo"}) {
      EXPECT_LE(d, emulate_barrier(algo, p, manna, kCordsenLambda).time_us) << algo << " p=" << p;
    }
    PlanRequest bcast = req_of("bcast", "fibo", p, 0, 0);
    bcast.lambda = kCordsenLambda;
    const double distribution = sim::simulate(build_plan(bcast), manna).time_us;
    const double reduction = emulate_barrier("fibo", p, manna, kCordsenLambda).time_us - distribution;
    if (p >= 3) {
      EXPECT_GT(reduction, distribution) << "p=" << p;
    }
  }
}

}  // namespace
}  // namespace postbox

namespace postbox {
namespace {

// Bruck §3.2–3.3: the emulator charges the global combine's idles, so the paced
// plans take exactly T'_λ(n) (delay-receive: receives idle to ⌈λ⌉ sends) and T''_λ(n)
// (delay-send: sends idle to λ/⌊λ⌋ sends) on the postal machine with that λ, in exact ticks.
TEST(PostalCombineEmulated, ChargesTheIdlesExactly) {
  for (const char* text : {"1.1", "1.3", "1.5", "1.9", "2.5"}) {
    const Rational lambda = Rational::parse(text, "lambda");
    const sim::Machine m = sim::load_machine(std::string("postal:") + text);
    for (int n : {2, 3, 8, 13, 64}) {
      for (const auto& [algo, want] : {std::pair{"postal-delay-recv", T_delay_receive(lambda, n)},
                                       std::pair{"postal-delay-send", T_delay_send(lambda, n)}}) {
        PlanRequest req = req_of("allreduce", algo, n, 8, 0);
        req.lambda = lambda;
        const Rational ticks = want * Rational(1000000);
        ASSERT_EQ(ticks.den(), 1);
        EXPECT_EQ(sim::simulate(build_plan(req), m).time_ticks, ticks.num())
            << algo << " lambda=" << lambda.to_double() << " n=" << n;
      }
    }
  }
}

}  // namespace
}  // namespace postbox
