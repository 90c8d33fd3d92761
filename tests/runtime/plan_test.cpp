// Plan checks (validate, validate_rings, derive_dependencies, finalize) and the exporters /
// GOAL reader on hand-built plans. Plans built by collectives/ are covered in plans_test.
#include "postbox/runtime/plan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/plan_export.hpp"

namespace postbox {
namespace {

Region U(std::uint64_t off, std::uint64_t n) { return {Buffer::user, off, n}; }
Region S(std::uint64_t off, std::uint64_t n) { return {Buffer::scratch, off, n}; }

// A hand-made plan: its metadata and its programs, packed into a Plan by pack().
struct Hand {
  Plan plan;
  std::vector<RankProgram> ranks;
  // Packs the programs as written; with derive, deps come from derive_dependencies and tags
  // from finalize().
  Plan pack(bool derive = true) {
    Plan out = plan;
    out.set_programs(ranks);
    if (derive) {
      derive_dependencies(out);
      out.finalize();
    }
    return out;
  }
};

Hand empty_plan(int p, std::uint64_t bytes) {
  Hand h;
  h.plan.op = "test";
  h.plan.algo = "hand";
  h.plan.p = p;
  h.plan.root = 0;
  h.plan.bytes = bytes;
  h.plan.user_bytes.assign(static_cast<std::size_t>(p), bytes);
  h.plan.scratch_bytes.assign(static_cast<std::size_t>(p), bytes);
  h.ranks.resize(static_cast<std::size_t>(p));
  return h;
}

void add(Hand& h, int r, Op op) { h.ranks[static_cast<std::size_t>(r)].ops.push_back(std::move(op)); }

std::vector<std::uint32_t> deps(const OpView& op) { return {op.deps.begin(), op.deps.end()}; }
Op send(int peer, Region a) { return Op{OpCode::send, peer, a, {}, false, 0, {}}; }
Op recv(int peer, Region a) { return Op{OpCode::recv, peer, a, {}, false, 0, {}}; }
Op reduce(Region a, Region b) { return Op{OpCode::reduce, -1, a, b, false, 0, {}}; }

// 0 → 1 → 2 chain broadcast of 8 bytes, with deps derived (as programs: chain_hand()).
Hand chain_hand() {
  Hand h = empty_plan(3, 8);
  add(h, 0, send(1, U(0, 8)));
  add(h, 1, recv(0, U(0, 8)));
  add(h, 1, send(2, U(0, 8)));
  add(h, 2, recv(1, U(0, 8)));
  h.ranks = h.pack().programs();
  return h;
}
Plan chain() { return chain_hand().pack(false); }

TEST(PlanValidate, SoundChainIsOk) {
  const Plan plan = chain();
  EXPECT_EQ(validate(plan), std::nullopt);
  ASSERT_EQ(plan.ops(1)[1].deps.size(), 1U);  // forward after receive
  EXPECT_EQ(plan.ops(1)[1].deps[0], 0U);
}

// Each case edits the chain's programs (derived deps and tags already in place); the plan is
// packed verbatim, except where a case asks for the deps to be derived again.
struct BadCase {
  const char* name;
  void (*mutate)(Hand&);
  const char* expect;  // substring of the message
  bool derive = false;
};

class PlanValidateBad : public testing::TestWithParam<BadCase> {};

TEST_P(PlanValidateBad, ReportsFirstProblem) {
  Hand h = chain_hand();
  GetParam().mutate(h);
  const Plan plan = h.pack(GetParam().derive);
  const auto problem = validate(plan);
  ASSERT_TRUE(problem.has_value()) << GetParam().name;
  EXPECT_NE(problem->find(GetParam().expect), std::string::npos) << *problem;
  EXPECT_EQ(problem->find('\n'), std::string::npos) << "one line";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PlanValidateBad,
    testing::Values(
        BadCase{"unmatched_send", [](Hand& h) { h.ranks[2].ops.clear(); }, "unmatched send: rank 1 op 1"},
        BadCase{"unmatched_recv", [](Hand& h) { h.ranks[0].ops.clear(); }, "unmatched recv: rank 1 op 0"},
        BadCase{"size_mismatch", [](Hand& h) { h.ranks[2].ops[0].a.bytes = 4; }, "size mismatch"},
        BadCase{"self_send", [](Hand& h) { h.ranks[0].ops[0].peer = 0; }, "sends to itself"},
        BadCase{"outside_buffer", [](Hand& h) { h.ranks[1].ops[1].a = U(4, 8); }, "lies outside its buffer"},
        BadCase{"scratch_outside", [](Hand& h) { h.plan.scratch_bytes[2] = 0; h.ranks[2].ops[0].a = S(0, 8); },
                "lies outside its buffer"},
        BadCase{"forward_dep", [](Hand& h) { h.ranks[1].ops[0].deps = {1}; }, "does not point backwards"},
        BadCase{"bad_tag", [](Hand& h) { h.ranks[0].ops[0].tag = 3; }, "call finalize()"},
        BadCase{"missing_dep", [](Hand& h) { h.ranks[1].ops[1].deps.clear(); }, "without a dependency"},
        BadCase{"peer_range", [](Hand& h) { h.ranks[0].ops[0].peer = 7; }, "outside 0..p-1"},
        BadCase{"reduce_partial_element",
                [](Hand& h) {
                  h.plan.elem_bytes = 3;
                  h.ranks[2].ops.push_back(reduce(U(0, 8), S(0, 8)));
                },
                "whole number", true},
        BadCase{"deadlock",
                [](Hand& h) {
                  // Rank 0 first waits for a message that rank 2 sends only after hearing from 0.
                  h.ranks[0].ops.insert(h.ranks[0].ops.begin(), recv(2, S(0, 8)));
                  h.ranks[2].ops.push_back(send(0, U(0, 8)));
                },
                "deadlock: rank 0 op 0 (recv)", true}),
    [](const testing::TestParamInfo<BadCase>& c) { return std::string(c.param.name); });

// validate() skips the hazard sweep of a rank whose ops touch disjoint bytes, found by merging
// the rank's sorted runs of regions: an overlap between ops of different runs is still found.
TEST(PlanValidate, HazardAcrossRunsOfRegionsIsFound) {
  auto plan_with_recv_at = [](std::uint64_t off) {
    Hand h = empty_plan(2, 64);
    for (std::uint64_t o : {32, 40, 0, 8}) add(h, 0, send(1, U(o, 8)));  // two runs upwards
    add(h, 0, recv(1, U(off, 8)));                                       // a third; no deps
    for (std::uint64_t o : {0, 8, 16, 24}) add(h, 1, recv(0, U(o, 8)));
    add(h, 1, send(0, U(48, 8)));
    Plan plan = h.pack(false);
    plan.finalize();
    return plan;
  };
  EXPECT_EQ(validate(plan_with_recv_at(16)), std::nullopt);  // disjoint: sound without deps
  for (std::uint64_t off : {12, 36, 44}) {  // overlaps the send of [8, 16), [32, 40), [40, 48)
    const auto problem = validate(plan_with_recv_at(off));
    ASSERT_TRUE(problem.has_value()) << off;
    EXPECT_NE(problem->find("without a dependency"), std::string::npos) << *problem;
  }
}

TEST(PlanValidate, ExchangeIsDeadlockFreeOnlyWithRoomyRings) {
  // Both ranks send 64 KiB first, then receive: fine with buffering, stuck with small rings.
  Hand h = empty_plan(2, 65536);
  for (int r = 0; r < 2; ++r) {
    add(h, r, send(1 - r, U(0, 65536)));
    add(h, r, recv(1 - r, S(0, 65536)));
  }
  const Plan plan = h.pack();
  EXPECT_EQ(validate(plan), std::nullopt);
  const auto small = validate_rings(plan, 4096);
  ASSERT_TRUE(small.has_value());
  EXPECT_NE(small->find("deadlock"), std::string::npos);
  const std::uint64_t need = ring_bytes_needed(plan);
  EXPECT_GE(need, 65536U + 8U);
  EXPECT_EQ(validate_rings(plan, need), std::nullopt);
}

TEST(PlanDeps, IndependentReceivesAreUnordered) {
  Hand h = empty_plan(3, 16);
  add(h, 0, recv(1, U(0, 8)));
  add(h, 0, recv(2, U(8, 8)));
  add(h, 0, reduce(U(0, 8), U(8, 8)));
  add(h, 1, send(0, U(0, 8)));
  add(h, 2, send(0, U(0, 8)));
  const Plan plan = h.pack();
  EXPECT_TRUE(plan.ops(0)[1].deps.empty());
  EXPECT_EQ(deps(plan.ops(0)[2]), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(validate(plan), std::nullopt);
  EXPECT_EQ(message_count(plan), 2U);
  EXPECT_EQ(total_message_bytes(plan), 16U);
}

// A region touched again as a whole (a barrier copying out the slot it just received into, or
// an earlier slot) follows its last writer, and without that dependency is a hazard; one op
// reading and writing one region (a copy onto itself) is none.
TEST(PlanDeps, RegionTouchedAgainFollowsItsLastWriter) {
  auto copy = [](Region a, Region b) { return Op{OpCode::copy, -1, a, b, false, 0, {}}; };
  Hand h = empty_plan(3, 16);
  add(h, 0, recv(1, S(0, 8)));            // 0
  add(h, 0, recv(2, S(8, 8)));            // 1
  add(h, 0, copy(U(8, 8), S(8, 8)));      // 2: the last slot written
  add(h, 0, copy(U(0, 8), S(0, 8)));      // 3: an earlier one
  add(h, 0, send(1, U(0, 8)));            // 4: what 3 wrote
  add(h, 1, send(0, U(0, 8)));
  add(h, 1, recv(0, U(8, 8)));
  add(h, 2, send(0, U(0, 8)));
  add(h, 2, copy(U(8, 8), U(8, 8)));
  Hand derived = h;
  derived.ranks = h.pack().programs();
  const Plan plan = derived.pack(false);
  EXPECT_EQ(deps(plan.ops(0)[2]), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(deps(plan.ops(0)[3]), (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(deps(plan.ops(0)[4]), (std::vector<std::uint32_t>{3}));
  EXPECT_TRUE(plan.ops(2)[1].deps.empty());
  EXPECT_EQ(validate(plan), std::nullopt);
  for (std::size_t j : {2, 3, 4}) {
    Hand bad = derived;
    bad.ranks[0].ops[j].deps.clear();
    const auto problem = validate(bad.pack(false));
    ASSERT_TRUE(problem.has_value()) << j;
    EXPECT_NE(problem->find("without a dependency"), std::string::npos) << *problem;
  }
}

TEST(PlanDeps, TransitivelyImpliedEdgesAreDropped) {
  Hand h = empty_plan(2, 8);
  add(h, 0, recv(1, U(0, 8)));     // 0 writes
  add(h, 0, reduce(U(0, 8), S(0, 8)));  // 1 reads+writes: dep 0
  add(h, 0, send(1, U(0, 8)));     // 2 reads: dep 1 only (0 implied)
  add(h, 1, send(0, U(0, 8)));
  add(h, 1, recv(0, U(0, 8)));
  const Plan plan = h.pack();
  EXPECT_EQ(deps(plan.ops(0)[2]), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(validate(plan), std::nullopt);
}

// Regression: derive_dependencies ignored 0-byte regions, so in a 0-byte broadcast a relay's
// forwarding sends had no dependency on its receive and could notify its subtree before it was
// notified itself. The binomial broadcast over 8 ranks (root 0; rank r receives from r minus its
// lowest set bit and forwards to r + 2^k for each 2^k below that bit), 0 bytes everywhere.
TEST(PlanDeps, ZeroByteRelayWaitsForItsReceive) {
  const int p = 8;
  Hand h = empty_plan(p, 0);
  for (int r = 0; r < p; ++r) {
    const int low = r == 0 ? p : (r & -r);
    if (r != 0) add(h, r, recv(r - low, U(0, 0)));
    for (int step = low / 2; step >= 1; step /= 2) add(h, r, send(r + step, U(0, 0)));
  }
  const Plan plan = h.pack();
  ASSERT_EQ(validate(plan), std::nullopt);
  int relayed = 0;
  for (int r = 1; r < p; ++r) {
    const RankOps ops = plan.ops(r);
    ASSERT_EQ(ops[0].code, OpCode::recv);
    // Transitive closure over the deps: reached[i] when op i must wait for the receive (op 0).
    std::vector<bool> reached(ops.size(), false);
    reached[0] = true;
    for (std::size_t j = 1; j < ops.size(); ++j) {
      for (std::uint32_t d : ops[j].deps) reached[j] = reached[j] || reached[d];
      EXPECT_TRUE(reached[j]) << "rank " << r << " forwards (op " << j << ") before it has received";
      ++relayed;
    }
  }
  EXPECT_EQ(relayed, p - 1 - 3);  // every send but the root's three
}

TEST(PlanExport, JsonRoundTripIsLossless) {
  Hand h = chain_hand();
  h.ranks[2].ops.push_back(Op{OpCode::reduce, -1, U(0, 8), S(0, 8), true, 0, {}});
  h.ranks[1].ops[1].round = 3;
  h.plan.pacing = Pacing::delay_send;
  h.plan.pacing_latency = 2;
  const Plan plan = h.pack();
  const Plan back = plan_from_json(plan_to_json(plan));
  EXPECT_EQ(plan_to_json(back), plan_to_json(plan));
  EXPECT_EQ(back.ops(2)[1].src_first, true);
  EXPECT_EQ(back.ops(2)[1].b, S(0, 8));
  EXPECT_EQ(back.ops(1)[1].round, 3U);
  EXPECT_EQ(back.pacing, Pacing::delay_send);
  EXPECT_EQ(back.pacing_latency, 2U);
}

TEST(PlanExport, JsonErrorsAreInputErrors) {
  EXPECT_THROW((void)plan_from_json("{"), InputError);
  EXPECT_THROW((void)plan_from_json("{\"op\": 3}"), InputError);
  EXPECT_THROW((void)plan_from_json("[]"), InputError);
  // nlohmann::json throws out_of_range, not parse_error, on a number beyond a double.
  try {
    (void)plan_from_json("{\"op\": 1e309}");
    ADD_FAILURE() << "accepted 1e309";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("plan JSON: not valid JSON ("), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1e309"), std::string::npos) << e.what();
  }
}

TEST(PlanExport, GoalMatchesThePlan) {
  const Plan plan = chain();
  const std::string text = plan_to_goal(plan);
  EXPECT_NE(text.find("num_ranks 3\n"), std::string::npos);
  EXPECT_NE(text.find("l0: send 8b to 1 tag 0\n"), std::string::npos);
  EXPECT_NE(text.find("l1 requires l0\n"), std::string::npos);
  const GoalSchedule g = parse_goal(text);
  ASSERT_EQ(g.num_ranks, 3);
  ASSERT_EQ(g.ranks.size(), 3U);
  EXPECT_EQ(g.ranks[1].ops[0], (GoalOp{GoalOp::Kind::recv, "l0", 8, 0, 0, 0, 0}));
  EXPECT_EQ(g.ranks[1].ops[1], (GoalOp{GoalOp::Kind::send, "l1", 8, 2, 0, 0, 0}));
  ASSERT_EQ(g.ranks[1].deps.size(), 1U);
  EXPECT_EQ(g.ranks[1].deps[0], (GoalDep{"l1", "l0", false}));
}

TEST(PlanExport, DotNamesEveryOpAndMessage) {
  const std::string dot = plan_to_dot(chain());
  EXPECT_EQ(dot.rfind("digraph plan {", 0), 0U);
  EXPECT_NE(dot.find("r1_1 -> r2_0 [style=dashed"), std::string::npos);
  EXPECT_NE(dot.find("r1_0 -> r1_1;"), std::string::npos);
}

TEST(GoalParse, AcceptsTheTxt2binGrammar) {
  const GoalSchedule g = parse_goal(
      "// comment\nnum_ranks 2\n/* block\n comment */\nrank 0 {\n  l1: send 8b to 1 tag 5 cpu 1 nic 0\n"
      "  calc 100 cpu 0\n  l2: calc 7\n  l2 irequires l1\n}\nrank 1 {\nl1: recv 8 b from -1 tag -1\n}\n");
  ASSERT_EQ(g.ranks.size(), 2U);
  EXPECT_EQ(g.ranks[0].ops.size(), 3U);
  EXPECT_EQ(g.ranks[0].ops[0].tag, 5);
  EXPECT_EQ(g.ranks[0].ops[0].cpu, 1);
  EXPECT_EQ(g.ranks[0].ops[1].label, "");
  EXPECT_TRUE(g.ranks[0].deps[0].immediate);
  EXPECT_EQ(g.ranks[1].ops[0].peer, -1);
  EXPECT_EQ(g.ranks[1].ops[0].tag, -1);
}

struct GoalBad {
  const char* text;
  const char* expect;
};
class GoalParseBad : public testing::TestWithParam<GoalBad> {};
TEST_P(GoalParseBad, Rejects) {
  try {
    (void)parse_goal(GetParam().text);
    FAIL() << "accepted: " << GetParam().text;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().expect), std::string::npos) << e.what();
  }
}
INSTANTIATE_TEST_SUITE_P(Cases, GoalParseBad,
                         testing::Values(GoalBad{"rank 0 {\n}\n", "before num_ranks"},
                                         GoalBad{"num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\n", "'b'"},
                                         GoalBad{"num_ranks 2\nrank 0 {\nl2 requires l1\n}\n", "undefined label"},
                                         GoalBad{"num_ranks 2\nrank 0 {\nl1: send 8b to 1\n", "not closed"},
                                         GoalBad{"num_ranks 2\nrank 0 {\nl1: send 8b from 1\n}\n", "'to'"},
                                         GoalBad{"num_ranks 2\nrank 0 {\nl1: send 8b to 5\n}\n", "outside"},
                                         GoalBad{"num_ranks 2\nrank 0 {\nl1: jump\n}\n", "expected"},
                                         GoalBad{"", "no num_ranks"}));

}  // namespace
}  // namespace postbox
