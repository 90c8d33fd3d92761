// The emulator against hand-computed cases, LogGOPSim's rules, T_λ, and itself (determinism).
#include "postbox/emulator/simulator.hpp"
#include "postbox/frontend/trace_writer.hpp"
#include "postbox/frontend/writers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../collectives/algo_table.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/plan_export.hpp"
#include "postbox/emulator/calibrate.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"

namespace postbox::sim {
namespace {

Op op(OpCode code, int peer, std::uint64_t bytes, std::vector<std::uint32_t> deps = {}) {
  Op o;
  o.code = code;
  o.peer = peer;
  o.a = Region{Buffer::user, 0, bytes};
  o.deps = std::move(deps);
  return o;
}

// A hand-made plan: its programs written directly, packed by plan() (tags numbered).
struct Hand {
  Plan meta;
  std::vector<RankProgram> ranks;
  [[nodiscard]] Plan plan() const {
    Plan out = meta;
    out.set_programs(ranks);
    out.finalize();
    return out;
  }
};

Hand empty_plan(int p, std::uint64_t bytes) {
  Hand h;
  h.meta.op = "test";
  h.meta.algo = "hand";
  h.meta.p = p;
  h.meta.bytes = bytes;
  h.meta.user_bytes.assign(static_cast<std::size_t>(p), bytes);
  h.meta.scratch_bytes.assign(static_cast<std::size_t>(p), 0);
  h.ranks.resize(static_cast<std::size_t>(p));
  return h;
}

// Broadcast plan from a parent array with children in send order: recv, then sends in order.
Plan tree_plan(const std::vector<std::vector<int>>& children, int root, std::uint64_t bytes) {
  const int p = static_cast<int>(children.size());
  Hand plan = empty_plan(p, bytes);
  plan.meta.root = root;
  std::vector<int> parent(static_cast<std::size_t>(p), -1);
  for (int v = 0; v < p; ++v)
    for (int c : children[v]) parent[c] = v;
  for (int v = 0; v < p; ++v) {
    auto& ops = plan.ranks[static_cast<std::size_t>(v)].ops;
    if (v != root) ops.push_back(op(OpCode::recv, parent[v], bytes));
    for (int c : children[v]) {
      std::vector<std::uint32_t> deps;
      if (!ops.empty()) deps.push_back(static_cast<std::uint32_t>(ops.size() - 1));
      ops.push_back(op(OpCode::send, c, bytes, deps));
    }
  }
  return plan.plan();
}

// Bruck §2.3's greedy λ-tree (two queues, ties to the old queue), built here independently of
// collectives/ so the emulator is checked against T_λ, not against itself.
std::vector<std::vector<int>> greedy_lambda_tree(int n, const Rational& lambda) {
  std::vector<std::vector<int>> children(static_cast<std::size_t>(n));
  std::deque<std::pair<Rational, int>> old_q, new_q;
  new_q.emplace_back(Rational(0), 0);
  for (int s = 1; s < n; ++s) {
    const bool take_old = !old_q.empty() && (new_q.empty() || !(new_q.front().first < old_q.front().first));
    auto [t, i] = take_old ? old_q.front() : new_q.front();
    (take_old ? old_q : new_q).pop_front();
    children[i].push_back(s);
    new_q.emplace_back(t + lambda, s);
    old_q.emplace_back(t + Rational(1), i);
  }
  return children;
}

Machine mesh_machine(std::vector<int> dims, Switching sw) {
  Machine m;
  m.name = "test-mesh";
  m.kind = ModelKind::mesh;
  m.mesh.dims = std::move(dims);
  m.mesh.switching = sw;
  m.mesh.packet_bytes = 0;
  m.mesh.header_bytes = 0;
  m.mesh.link_bytes_per_us = 1;
  m.mesh.router_delay_us = 1;
  m.mesh.send_buffer_packets = 1;
  m.send_mode = SendMode::nonblocking;
  return m;
}

// ---- complete-graph models, one row per hand-computed case ----
struct Case {
  const char* file;
  int line;
  const char* machine;
  int shape;  // 0 single message, 1 chain of 4, 2 flat to 3 (11 B), 3 two senders to one
  double time;
  std::vector<double> per_rank;
};

Plan case_plan(int shape) {
  switch (shape) {
    case 0: return tree_plan({{1}, {}}, 0, 11);
    case 1: return tree_plan({{1}, {2}, {3}, {}}, 0, 11);
    case 2: return tree_plan({{1, 2}, {}, {}}, 0, 11);
    default: {
      Hand plan = empty_plan(3, 1);
      plan.ranks[0].ops = {op(OpCode::recv, 1, 1), op(OpCode::recv, 2, 1)};
      plan.ranks[1].ops = {op(OpCode::send, 0, 1)};
      plan.ranks[2].ops = {op(OpCode::send, 0, 1)};
      return plan.plan();
    }
  }
}

// One message of `bytes` from rank 0 to rank 1.
Plan one_message_plan(std::uint64_t bytes) { return tree_plan({{1}, {}}, 0, bytes); }

SimResult run_goal_on(const std::string& text, const char* machine) {
  return simulate(read_goal_schedule(text).schedule, load_machine(machine));
}

class HandCase : public ::testing::TestWithParam<Case> {};

TEST_P(HandCase, MatchesHandComputation) {
  const Case& c = GetParam();
  SCOPED_TRACE(std::string(c.file) + ":" + std::to_string(c.line));
  const SimResult r = simulate(case_plan(c.shape), load_machine(c.machine));
  EXPECT_DOUBLE_EQ(r.time_us, c.time);
  ASSERT_EQ(r.per_rank_us.size(), c.per_rank.size());
  for (std::size_t i = 0; i < c.per_rank.size(); ++i) EXPECT_DOUBLE_EQ(r.per_rank_us[i], c.per_rank[i]) << "rank " << i;
}

// LogGP rows follow LogGOPSim.cpp: a send keeps the CPU o and the NIC g + (s−1)G and arrives at
// t + o + L; acceptance keeps the CPU o + (s−1)G and the receive NIC g + (s−1)G.
// logp:5:2:3:0.5, 11 bytes: (s−1)G = 5.
INSTANTIATE_TEST_SUITE_P(
    Models, HandCase,
    ::testing::Values(
        Case{__FILE__, __LINE__, "postal:2.5", 0, 2.5, {1, 2.5}},
        Case{__FILE__, __LINE__, "postal:2.5", 1, 7.5, {1, 3.5, 6, 7.5}},
        Case{__FILE__, __LINE__, "postal:2.5", 2, 3.5, {2, 2.5, 3.5}},
        Case{__FILE__, __LINE__, "sr:27:88", 0, 115, {27, 115}},
        Case{__FILE__, __LINE__, "sr:27:88", 2, 142, {54, 115, 142}},
        Case{__FILE__, __LINE__, "sr:27:88", 1, 345, {27, 142, 257, 345}},
        // single: arrive 0+2+5 = 7, accept 7 + 2 + 5 = 14
        Case{__FILE__, __LINE__, "logp:5:2:3:0.5", 0, 14, {2, 14}},
        // flat: second send waits for the gap 3 + 5 = 8; arrives 15, done 22
        Case{__FILE__, __LINE__, "logp:5:2:3:0.5", 2, 22, {10, 14, 22}},
        // chain: 14, then rank 1 sends at 14 (CPU free at 14): 28, 42
        Case{__FILE__, __LINE__, "logp:5:2:3:0.5", 1, 42, {2, 16, 30, 42}},
        // two 1-byte messages arrive at 7; the second waits for the receive gap (7 + 3 = 10)
        Case{__FILE__, __LINE__, "logp:5:2:3:0", 3, 12, {12, 2, 2}}));

TEST(Postal, OptimalTreeFinishesAtTLambda) {
  for (const Rational lambda : {Rational(1), Rational(3, 2), Rational(2), Rational(5, 2), Rational(9, 5), Rational(7, 2)}) {
    for (int n : {2, 3, 5, 8, 13, 14, 21, 50, 100, 257}) {
      const Plan plan = tree_plan(greedy_lambda_tree(n, lambda), 0, 8);
      Machine m = load_machine("postal:" + std::to_string(lambda.to_double()));
      m.lambda = lambda.to_double();
      const SimResult r = simulate(plan, m);
      EXPECT_NEAR(r.time_us, T_lambda(lambda, n).to_double(), 1e-9) << "λ=" << lambda.to_double() << " n=" << n;
    }
  }
}

// SimOptions::progress: after every 65 536th completed operation, with the schedule's count;
// the result does not depend on it.
TEST(Progress, CalledEvery65536OperationsWithTheTotal) {
  PlanRequest request;
  request.op = "bcast";
  request.algo = "binomial";
  request.p = 100000;
  request.bytes = 8;
  const Plan plan = build_plan(request);
  const Schedule schedule = schedule_of(plan);
  const Machine m = load_machine("postal:2");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  SimOptions opt;
  opt.progress = [&calls](std::uint64_t done, std::uint64_t total) { calls.emplace_back(done, total); };
  const SimResult with = simulate(schedule, m, opt);
  const SimResult without = simulate(schedule, m);
  EXPECT_EQ(with.time_ticks, without.time_ticks);
  EXPECT_EQ(with.events, without.events);
  ASSERT_EQ(calls.size(), schedule.ops() / 65536);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].first, 65536u * (i + 1));
    EXPECT_EQ(calls[i].second, schedule.ops());
  }
}

TEST(SendRecv, FlatDistributionOfCordsen) {
  // Cordsen §5: the i-th child of a sequential distribution is activated at i·s + r.
  std::vector<std::vector<int>> flat(19);
  for (int c = 1; c < 19; ++c) flat[0].push_back(c);
  const SimResult r = simulate(tree_plan(flat, 0, 4), load_machine("sr:27:88"));
  for (int c = 1; c < 19; ++c) EXPECT_DOUBLE_EQ(r.per_rank_us[c], c * 27 + 88);
  EXPECT_DOUBLE_EQ(r.time_us, 18 * 27 + 88);
}

TEST(LogGP, ReduceCostsComputationPerByte) {
  Machine m = load_machine("logp:5:2:3:0");
  m.reduce_us_per_byte = 0.25;
  Hand plan = empty_plan(2, 8);
  plan.ranks[1].ops = {op(OpCode::send, 0, 8)};
  Op red = op(OpCode::reduce, -1, 8, {0});
  red.b = Region{Buffer::scratch, 0, 8};
  plan.ranks[0].ops = {op(OpCode::recv, 1, 8), red};
  const SimResult r = simulate(plan.plan(), m);
  // accept at 7 for o = 2 (G = 0): 9, then 8 bytes × 0.25 = 2
  EXPECT_DOUBLE_EQ(r.per_rank_us[0], 11);
}

// ---- LogGOPS: O (CPU time per byte) and S (rendezvous above S bytes) ----
// Hand-computed from LogGOPSim.cpp: a send keeps the CPU o + (s−1)O and the NIC g + (s−1)G, its
// message arrives at t + o + L whatever O; accepting it keeps the CPU o + max((s−1)O, (s−1)G).
// A message of more than S bytes travels the same way, but its send completes only when the
// receiver matches it: at the acceptance when the receive was posted, else when the receive is
// posted; the sender's dependents start then at the earliest.

// logp:5:2:3:0.5 (L 5, o 2, g 3, G 0.5), one 11-byte message: (s − 1) = 10.
TEST(LogGOPS, OIsChargedPerByteOnBothCPUs) {
  const Plan one = case_plan(0);
  // O = 0.25: send 2 + 2.5 = 4.5; arrival 0 + 2 + 5 = 7; accept 2 + max(2.5, 5) = 7 → 14.
  EXPECT_EQ(simulate(one, load_machine("logp:5:2:3:0.5:O=0.25")).per_rank_us, (std::vector<double>{4.5, 14}));
  // O = 1: send 2 + 10 = 12; arrival still 7; accept 2 + max(10, 5) = 12 → 19.
  EXPECT_EQ(simulate(one, load_machine("logp:5:2:3:0.5:O=1")).per_rank_us, (std::vector<double>{12, 19}));
  // O = 0 is LogGP: 2 and 7 + 2 + 5 = 14.
  EXPECT_EQ(simulate(one, load_machine("logp:5:2:3:0.5:O=0")).per_rank_us, (std::vector<double>{2, 14}));
  // A zero-byte message is charged no O (postbox charges no per-byte cost for it): 2, 7 + 2 = 9.
  EXPECT_EQ(simulate(one_message_plan(0), load_machine("logp:5:2:3:0.5:O=1")).per_rank_us, (std::vector<double>{2, 9}));
}

// The receive is posted at 0, so the 11-byte message is matched when it is accepted at 7.
TEST(LogGOPS, EagerUpToSRendezvousAbove) {
  const Plan one = case_plan(0);
  for (const char* m : {"logp:5:2:3:0.5", "logp:5:2:3:0.5:S=11", "logp:5:2:3:0.5:S=12"}) {
    SCOPED_TRACE(m);
    const SimResult eager = simulate(one, load_machine(m));
    EXPECT_EQ(eager.per_rank_us, (std::vector<double>{2, 14}));
    EXPECT_EQ(eager.rendezvous, 0U);
  }
  for (const char* m : {"logp:5:2:3:0.5:S=10", "logp:5:2:3:0.5:S=0"}) {
    SCOPED_TRACE(m);
    const SimResult rdv = simulate(one, load_machine(m));
    EXPECT_EQ(rdv.per_rank_us, (std::vector<double>{7, 14}));  // the send completes at the match, 7
    EXPECT_EQ(rdv.rendezvous, 1U);
    EXPECT_EQ(rdv.messages, 1U);
    EXPECT_EQ(frontend::sim_result_json(rdv, m, "test", "hand", 2, 11)["rendezvous"], 1U);  // sim --json's field
  }
  // S = 0: a zero-byte message is not more than S bytes, so it is eager.
  EXPECT_EQ(simulate(one_message_plan(0), load_machine("logp:5:2:3:0.5:S=0")).rendezvous, 0U);
}

// The receiver is busy (a copy of 11 bytes at C = 4: 44) when the message arrives at 7: it is
// accepted at 44 (unexpected: the receive is posted after it, at 44), and the rendezvous send
// completes when the receive is posted, 44. Eager, rank 0 is done at 2. Rank 1: 44 + 2 + 5 = 51.
TEST(LogGOPS, RendezvousWaitsForTheReceiveToBePosted) {
  Hand h = empty_plan(2, 11);
  h.ranks[0].ops = {op(OpCode::send, 1, 11)};
  Op cp = op(OpCode::copy, -1, 11);
  cp.b = Region{Buffer::scratch, 0, 11};
  h.ranks[1].ops = {cp, op(OpCode::recv, 0, 11, {0})};
  const Plan plan = h.plan();
  EXPECT_EQ(simulate(plan, load_machine("logp:5:2:3:0.5:4")).per_rank_us, (std::vector<double>{2, 51}));
  const SimResult rdv = simulate(plan, load_machine("logp:5:2:3:0.5:4:S=10"));
  EXPECT_EQ(rdv.per_rank_us, (std::vector<double>{44, 51}));
  SimOptions ref;
  ref.reference_queue = true;
  EXPECT_EQ(simulate(plan, load_machine("logp:5:2:3:0.5:4:S=10"), ref).per_rank_ticks, rdv.per_rank_ticks);
}

// The GOAL form of the same two cases (dynamic matching): docs/emulator.md's schedule, a
// 100-byte message to a receive posted after calc 50. Eager: rank 0 done at o = 2; rank 1
// accepts at 50: 50 + 2 + 99·0.5 = 101.5. Rendezvous: rank 0's send completes at 50, and its
// calc 10 (requires the send) runs 50..60. Posted first: matched at the acceptance, 7.
TEST(LogGOPS, GoalRendezvousCompletesTheSendAtTheMatch) {
  const std::string late =
      "num_ranks 2\nrank 0 {\nl1: send 100b to 1\nl2: calc 10\nl2 requires l1\n}\n"
      "rank 1 {\nl1: calc 50\nl2: recv 100b from 0\nl2 requires l1\n}\n";
  EXPECT_EQ(run_goal_on(late, "logp:5:2:3:0.5:S=100").per_rank_us, (std::vector<double>{12, 101.5}));
  const SimResult rdv = run_goal_on(late, "logp:5:2:3:0.5:S=99");
  EXPECT_EQ(rdv.per_rank_us, (std::vector<double>{60, 101.5}));
  EXPECT_EQ(rdv.rendezvous, 1U);
  const std::string posted =
      "num_ranks 2\nrank 0 {\nl1: send 100b to 1\nl2: calc 10\nl2 requires l1\n}\n"
      "rank 1 {\nl1: recv 100b from -1 tag -1\n}\n";
  // arrival 7, accept 7 + 2 + 49.5 = 58.5; the send completes at 7, calc 7..17.
  EXPECT_EQ(run_goal_on(posted, "logp:5:2:3:0.5:S=99").per_rank_us, (std::vector<double>{17, 58.5}));
  EXPECT_EQ(run_goal_on(posted, "logp:5:2:3:0.5").per_rank_us, (std::vector<double>{12, 58.5}));
}

// A match that completes both a receive and a rendezvous send creates the lower rank's newly
// ready ops first (LogGOPSim visits the hosts that completed something in rank order), whichever
// of the two sent. logp:5:0:3:0:S=10 (o = 0, G = 0): the 100-byte message arrives at 5 and is
// matched at once; both ranks then send 1 byte to rank 2 at 5, both messages arrive at 10, and
// rank 2 accepts first the one whose send was created first (the other after the gap, at 13).
TEST(LogGOPS, AMatchCreatesTheLowerRanksOpsFirst) {
  const std::string tail = "rank 2 {\nl1: recv 1b from -1 tag -1\nl2: recv 1b from -1 tag -1\n}\n";
  const std::string sender_lower =
      "num_ranks 3\nrank 0 {\nl1: send 100b to 1\nl2: send 1b to 2\nl2 requires l1\n}\n"
      "rank 1 {\nl1: recv 100b from 0\nl2: send 1b to 2\nl2 requires l1\n}\n" + tail;
  const std::string sender_higher =
      "num_ranks 3\nrank 0 {\nl1: recv 100b from 1\nl2: send 1b to 2\nl2 requires l1\n}\n"
      "rank 1 {\nl1: send 100b to 0\nl2: send 1b to 2\nl2 requires l1\n}\n" + tail;
  for (const std::string& text : {sender_lower, sender_higher}) {
    SimOptions opt;
    opt.trace = true;
    const SimResult r = simulate(read_goal_schedule(text).schedule, load_machine("logp:5:0:3:0:S=10"), opt);
    EXPECT_EQ(r.rendezvous, 1U);
    std::vector<std::pair<double, int>> accepts;
    for (const Span& sp : r.rank_spans)
      if (sp.track == 2 && sp.what == 1) accepts.emplace_back(sp.begin_us, sp.peer);
    EXPECT_EQ(accepts, (std::vector<std::pair<double, int>>{{10, 0}, {13, 1}}));
  }
}

// Two ranks that each send, then receive what the other sent, run eagerly; above S each send
// waits for a receive that waits for the send: the run says so in one line.
TEST(LogGOPS, RendezvousDeadlockIsAnInputErrorSayingWhy) {
  const std::string text =
      "num_ranks 2\nrank 0 {\nl1: send 100b to 1\nl2: recv 100b from 1\nl2 requires l1\n}\n"
      "rank 1 {\nl1: send 100b to 0\nl2: recv 100b from 0\nl2 requires l1\n}\n";
  EXPECT_EQ(run_goal_on(text, "logp:5:2:3:0.5:S=100").rendezvous, 0U);
  try {
    (void)run_goal_on(text, "logp:5:2:3:0.5:S=99");
    FAIL() << "a rendezvous deadlock ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("GOAL line 3: rank 0 op l1 (send) never completes: a rendezvous send (100 bytes, "
                                         "more than the machine's S) waits for its receive to be posted"),
              std::string::npos)
        << e.what();
  }
  Hand h = empty_plan(2, 100);
  h.ranks[0].ops = {op(OpCode::send, 1, 100), op(OpCode::recv, 1, 100, {0})};
  h.ranks[1].ops = {op(OpCode::send, 0, 100), op(OpCode::recv, 0, 100, {0})};
  EXPECT_EQ(simulate(h.plan(), load_machine("logp:5:2:3:0.5")).rendezvous, 0U);
  try {
    (void)simulate(h.plan(), load_machine("logp:5:2:3:0.5:S=99"));
    FAIL() << "a rendezvous deadlock ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("plan deadlocks in the emulator: rank 0 op 0 never completes: a rendezvous send"),
              std::string::npos)
        << e.what();
  }
}

// ---- matching-queue statistics (SimOptions::queue_stats) ----
// Rank 0 posts its receive from rank 3 at 0; ranks 1 and 2 send at 0, rank 3 after 100. The
// messages of 1 and 2 are accepted at 7 and 10 (the receive gap) and find one posted receive
// (from 3) each: unexpected. Rank 3's is accepted at 107 and finds that receive: posted samples
// 1, 1, 1. Then the receives from 1 and 2 are posted and find 2, then 1 unexpected messages; the
// first receive found 0: unexpected samples 0, 2, 1.
TEST(QueueStats, SampledWhereLogGOPSimSamplesThem) {
  const QueueStats rank0{1, 1.0, 2, 1.0};
  SimOptions opt;
  opt.queue_stats = true;
  const std::string goal =
      "num_ranks 4\nrank 0 {\nl1: recv 8b from 3\nl2: recv 8b from 1\nl3: recv 8b from 2\nl2 requires l1\n"
      "l3 requires l1\n}\nrank 1 {\nl1: send 8b to 0\n}\nrank 2 {\nl1: send 8b to 0\n}\n"
      "rank 3 {\nl1: calc 100\nl2: send 8b to 0\nl2 requires l1\n}\n";
  const Schedule g = read_goal_schedule(goal).schedule;
  const SimResult rg = simulate(g, load_machine("logp:5:2:3:0"), opt);
  ASSERT_EQ(rg.queues.size(), 4U);
  EXPECT_EQ(rg.queues[0], rank0);
  for (int r = 1; r < 4; ++r) EXPECT_EQ(rg.queues[static_cast<std::size_t>(r)], QueueStats{}) << r;
  EXPECT_EQ(frontend::sim_result_json(rg, "m", "goal", "x", 4, 8)["queues"]["max_unexpected"][0], 2);  // sim --json
  // The same as a plan (matched before the run), rank 3's delay a copy of 100 bytes at C = 1.
  Hand h = empty_plan(4, 8);
  h.ranks[0].ops = {op(OpCode::recv, 3, 8), op(OpCode::recv, 1, 8, {0}), op(OpCode::recv, 2, 8, {0})};
  h.ranks[1].ops = {op(OpCode::send, 0, 8)};
  h.ranks[2].ops = {op(OpCode::send, 0, 8)};
  Op cp = op(OpCode::copy, -1, 100);
  cp.b = Region{Buffer::scratch, 0, 100};
  h.meta.user_bytes[3] = 100;
  h.meta.scratch_bytes[3] = 100;
  h.ranks[3].ops = {cp, op(OpCode::send, 0, 8, {0})};
  const Plan plan = h.plan();
  const SimResult rp = simulate(plan, load_machine("logp:5:2:3:0:1"), opt);
  EXPECT_EQ(rp.per_rank_ticks, rg.per_rank_ticks);
  EXPECT_EQ(rp.queues, rg.queues);
  opt.reference_queue = true;
  EXPECT_EQ(simulate(plan, load_machine("logp:5:2:3:0:1"), opt).queues, rp.queues);
  EXPECT_TRUE(simulate(plan, load_machine("logp:5:2:3:0:1")).queues.empty());  // only when asked
}

// ---- mesh ----
Plan one_message(int p, int from, int to, std::uint64_t bytes) {
  Hand plan = empty_plan(p, bytes);
  plan.ranks[static_cast<std::size_t>(from)].ops = {op(OpCode::send, to, bytes)};
  plan.ranks[static_cast<std::size_t>(to)].ops = {op(OpCode::recv, from, bytes)};
  return plan.plan();
}

TEST(Mesh, WormholeThreeHops) {
  // header: 3 router delays of 1 µs; body: 10 bytes at 1 byte/µs → 13
  const SimResult r = simulate(one_message(4, 0, 3, 10), mesh_machine({1, 4}, Switching::wormhole));
  EXPECT_DOUBLE_EQ(r.time_us, 13);
}

TEST(Mesh, StoreAndForwardThreeHops) {
  // inject 10, three links of 1 + 10, eject 10 → 53
  const SimResult r = simulate(one_message(4, 0, 3, 10), mesh_machine({1, 4}, Switching::store_and_forward));
  EXPECT_DOUBLE_EQ(r.time_us, 53);
}

TEST(Mesh, TwoWormsCrossingOneLink) {
  // 0→2 and 1→3 on a 1×4 line share link 1→2. The 1→3 worm takes it at t = 0 and finishes at
  // 2 + 10 = 12; the 0→2 worm arrives there at 1, waits holding 0→1 until 12, then 13 + 10 = 23.
  Hand plan = empty_plan(4, 10);
  plan.ranks[0].ops = {op(OpCode::send, 2, 10)};
  plan.ranks[1].ops = {op(OpCode::send, 3, 10)};
  plan.ranks[2].ops = {op(OpCode::recv, 0, 10)};
  plan.ranks[3].ops = {op(OpCode::recv, 1, 10)};
  const SimResult r = simulate(plan.plan(), mesh_machine({1, 4}, Switching::wormhole));
  EXPECT_DOUBLE_EQ(r.per_rank_us[3], 12);
  EXPECT_DOUBLE_EQ(r.per_rank_us[2], 23);
  EXPECT_EQ(r.channel_waits, 1U);  // the 0→2 header at link 1→2
  EXPECT_EQ(r.channel_ties, 0U);   // taken at an earlier tick
}

// Senders (rank, bytes) to one receiver `to`, which receives in that order.
Plan to_one(int p, int to, const std::vector<std::pair<int, std::uint64_t>>& senders) {
  std::uint64_t most = 0;
  for (const auto& sender : senders) most = std::max(most, sender.second);
  Hand plan = empty_plan(p, most);
  for (const auto& [from, bytes] : senders) {
    plan.ranks[static_cast<std::size_t>(from)].ops = {op(OpCode::send, to, bytes)};
    plan.ranks[static_cast<std::size_t>(to)].ops.push_back(op(OpCode::recv, from, bytes));
  }
  return plan.plan();
}

// The plan on m by default and with every mesh step an event (SimOptions::per_hop_mesh).
std::pair<SimResult, SimResult> default_and_per_hop(const Plan& plan, const Machine& m) {
  SimOptions per_hop;
  per_hop.per_hop_mesh = true;
  return {simulate(plan, m), simulate(plan, m, per_hop)};
}

TEST(Mesh, TwoHeadersAtOneTickAreATie) {
  // 0→1 and 2→1 on a 1×3 line: both headers cross one link and ask for node 1's ejection channel
  // at t = 1; one takes it, the other waits: one wait, and a tie.
  const auto [r, q] = default_and_per_hop(to_one(3, 1, {{0, 10}, {2, 10}}), mesh_machine({1, 3}, Switching::wormhole));
  EXPECT_EQ(r.channel_waits, 1U);
  EXPECT_EQ(r.channel_ties, 1U);
  EXPECT_EQ(q.channel_ties, 1U);
  EXPECT_DOUBLE_EQ(r.per_rank_us[1], 21);  // the second worm streams its 10 bytes after the first's end at 11
}

// The tie rule (docs/emulator.md): headers asking for a channel at one tick are served by the
// input port they come through, dimension 0 first, + before −; not by the order the loop runs
// them. On a 2×2 mesh, 1→0 comes through node 0's −x input, 2→0 through its −y input (dimension
// 0): 2's worm takes the ejection channel first, though rank 1's send is created first.
TEST(Mesh, HeadersAskingAtOneTickAreServedByInputPort) {
  const Plan plan = to_one(4, 0, {{1, 10}, {2, 10}});
  const Machine m = mesh_machine({2, 2}, Switching::wormhole);
  for (const bool per_hop : {false, true}) {
    SimOptions opt;
    opt.trace = true;
    opt.per_hop_mesh = per_hop;
    const SimResult r = simulate(plan, m, opt);
    const Span* first = nullptr;
    for (const Span& sp : r.link_spans)
      if (link_name(r.links[static_cast<std::size_t>(sp.track)]) == "node 0 eject" && (first == nullptr || sp.begin_us < first->begin_us))
        first = &sp;
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->peer, 2) << "per_hop " << per_hop;
    EXPECT_DOUBLE_EQ(first->begin_us, 1);
    EXPECT_EQ(r.channel_waits, 1U);
    EXPECT_EQ(r.channel_ties, 1U);
  }
}

// Link places are typed; their names (the trace's track names, the explorer's labels) come
// from them: the axis letter up to the sixth axis, then the dim's index; the vc only where the
// mesh has more than one; and every traced link span's track has a place.
TEST(Mesh, LinkPlacesNameTheirTracks) {
  using K = LinkPlace::Kind;
  EXPECT_EQ(link_name(LinkPlace{K::link, 3, 0, 2, false, 1, 2}), "node 3 -x vc1");
  EXPECT_EQ(link_name(LinkPlace{K::link, 3, 1, 1, true, 0, 1}), "node 3 +y");
  EXPECT_EQ(link_direction(LinkPlace{K::link, 0, 7, 0, true, 0, 1}), "+d0");
  EXPECT_EQ(link_name(LinkPlace{K::inject, 5, 0, 0, true, 0, 2}), "node 5 inject");
  EXPECT_EQ(link_name(LinkPlace{K::eject, 6, 0, 0, true, 0, 1}), "node 6 eject");
  EXPECT_EQ(link_direction(LinkPlace{K::eject, 6, 0, 0, true, 0, 1}), "");
  const Plan plan = to_one(4, 0, {{1, 10}, {2, 10}, {3, 10}});
  SimOptions opt;
  opt.trace = true;
  const SimResult r = simulate(plan, mesh_machine({2, 2}, Switching::wormhole), opt);
  ASSERT_FALSE(r.link_spans.empty());
  for (const Span& sp : r.link_spans) {
    ASSERT_LT(static_cast<std::size_t>(sp.track), r.links.size());
    const LinkPlace& place = r.links[static_cast<std::size_t>(sp.track)];
    EXPECT_NE(place.kind, K::unused);
    EXPECT_TRUE(place.node >= 0 && place.node < 4) << place.node;
  }
}

TEST(Mesh, StoreAndForwardCountsEachBusyChannel) {
  // 0→2 (10 bytes) and 1→2 (20 bytes) on a 1×3 line, store-and-forward, link 1 byte/µs, router 1:
  // 1's packet holds link 1→2 over [20, 41) and the ejection over [41, 61); 0's packet reaches
  // link 1→2 at 21 (waits), crosses it over [41, 52), reaches the ejection at 52 (waits).
  const auto [r, q] =
      default_and_per_hop(to_one(3, 2, {{0, 10}, {1, 20}}), mesh_machine({1, 3}, Switching::store_and_forward));
  EXPECT_EQ(r.channel_waits, 2U);
  EXPECT_EQ(q.channel_waits, 2U);
  EXPECT_DOUBLE_EQ(r.per_rank_us[2], 71);  // 0's ejection over [61, 71)
}

TEST(Mesh, BlockingSendWaitsForInjectionNonblockingDoesNot) {
  // 10 bytes in 4-byte packets (4, 4, 2), one-packet send buffer, overhead 5, one hop:
  // packets finish at 10, 15, 18; csend returns when the last packet fits the buffer (15).
  Machine m = mesh_machine({1, 2}, Switching::wormhole);
  m.mesh.packet_bytes = 4;
  m.send_overhead = Cost{5, 0, 0};
  m.isend_overhead = Cost{5, 0, 0};
  m.send_mode = SendMode::blocking;
  const SimResult blocking = simulate(one_message(2, 0, 1, 10), m);
  EXPECT_DOUBLE_EQ(blocking.per_rank_us[0], 15);
  EXPECT_DOUBLE_EQ(blocking.per_rank_us[1], 18);
  m.send_mode = SendMode::nonblocking;
  const SimResult nonblocking = simulate(one_message(2, 0, 1, 10), m);
  EXPECT_DOUBLE_EQ(nonblocking.per_rank_us[0], 5);
  EXPECT_DOUBLE_EQ(nonblocking.per_rank_us[1], 18);
  EXPECT_EQ(nonblocking.packets, 3U);
  EXPECT_EQ(nonblocking.channel_waits, 0U);  // packets 2 and 3 queue for their own injection channel: not counted
}

TEST(Mesh, TorusTakesTheShortWayRound) {
  Machine m = mesh_machine({1, 8}, Switching::wormhole);
  m.mesh.wrap = true;
  const SimResult r = simulate(one_message(8, 0, 7, 10), m);  // one hop backwards over the wrap
  EXPECT_DOUBLE_EQ(r.time_us, 11);
  m.mesh.wrap = false;
  EXPECT_DOUBLE_EQ(simulate(one_message(8, 0, 7, 10), m).time_us, 17);
}

TEST(Mesh, SmallerThanPIsAnInputError) {
  EXPECT_THROW((void)simulate(one_message(5, 0, 4, 1), mesh_machine({2, 2}, Switching::wormhole)), InputError);
}

TEST(Plan, MissingReceiveIsAnInputError) {
  Hand plan = empty_plan(2, 4);
  plan.ranks[0].ops = {op(OpCode::send, 1, 4)};
  EXPECT_THROW((void)simulate(plan.plan(), load_machine("postal:2")), InputError);
}

TEST(Plan, DeadlockIsAnInputError) {
  Hand plan = empty_plan(2, 4);
  plan.ranks[0].ops = {op(OpCode::recv, 1, 4), op(OpCode::send, 1, 4, {0})};
  plan.ranks[1].ops = {op(OpCode::recv, 0, 4), op(OpCode::send, 0, 4, {0})};
  EXPECT_THROW((void)simulate(plan.plan(), load_machine("postal:2")), InputError);
}

// ---- determinism ----
std::string traced(const Machine& m, const Plan& plan) {
  SimOptions opt;
  opt.trace = true;
  const SimResult r = simulate(plan, m, opt);
  std::ostringstream out;
  write_chrome_trace(out, r, plan, m);
  for (double t : r.per_rank_us) out << t << ' ';
  out << r.events;
  return out.str();
}

TEST(Determinism, SameInputsSameBytes) {
  Machine m = mesh_machine({8, 8}, Switching::wormhole);
  m.mesh.packet_bytes = 64;
  m.mesh.header_bytes = 8;
  m.placement = parse_placement("random", 42);
  std::vector<std::vector<int>> children = greedy_lambda_tree(64, Rational(9, 5));
  const Plan plan = tree_plan(children, 0, 300);
  const std::string a = traced(m, plan);
  const std::string b = traced(m, plan);
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("\"pid\":2"), std::string::npos);  // link tracks present
  m.placement = parse_placement("random", 43);
  EXPECT_NE(traced(m, plan), a);  // the seed matters
}

// ---- Bruck's λ experiments ----
TEST(Calibrate, RecoversTheModelsLambda) {
  for (const char* spec : {"postal:1.8", "postal:3", "sr:27:88", "logp:5:2:3:0.01"}) {
    const Machine m = load_machine(spec);
    const LambdaFit f = measure_lambda(m, 100);
    EXPECT_NEAR(f.lambda_exp1, nominal_lambda(m, 100), 1e-9) << spec;
    EXPECT_NEAR(f.lambda_exp2, nominal_lambda(m, 100), 1e-9) << spec;
    EXPECT_LT(f.max_residual_us, 1e-9) << spec;
  }
}

TEST(Calibrate, RejectsTooFewK) { EXPECT_THROW((void)measure_lambda(load_machine("postal:2"), 8, 3, 3), InputError); }


// ---- the two disciplines, and work proportional to the schedule ----

Machine small_delta() {
  Machine m = load_machine("delta");
  m.mesh.dims = {4, 4};
  return m;
}

// The T3D's torus (wrap links, two virtual channels), on 4×4×4 nodes.
Machine small_t3d() {
  Machine m = load_machine("t3d");
  m.mesh.dims = {4, 4, 4};
  return m;
}

std::vector<Machine> machines_for_checks() {
  return {load_machine("postal:2.5"), load_machine("sr:27:88"), load_machine("logp:5:2:3:0.5:0.25"),
          load_machine("logp:3:2:0.5:0.004"), small_delta(), small_t3d()};
}

PlanRequest plan_request(const char* op, const char* algo, int p, std::int64_t bytes) {
  PlanRequest req;
  req.op = op;
  req.algo = algo;
  req.p = p;
  req.bytes = bytes;
  req.elem_bytes = 8;
  req.lambda = Rational(5, 2);
  return req;
}

// Every built-in plan, the C3 all-to-all and an s-to-p plan: the per-rank queues reproduce the
// put-back loop of the first landing exactly (same finishing tick of every rank, same events
// counting the mesh steps handled inline);
// and the work is one event per op start and per message (ops + messages, plus the network's
// steps on a mesh), however many events wait at once.
TEST(Disciplines, PerRankQueuesEqualThePutBackLoop) {
  std::vector<PlanRequest> reqs;
  for (const auto& a : testing_support::kAlgos)
    for (int p : {1, 2, 7, 13}) reqs.push_back(plan_request(a.op, a.algo, p, 64));
  reqs.push_back(plan_request("all-to-all", "1-lev-dir", 16, 64));
  reqs.push_back(plan_request("all-to-all", "2-lev-rc", 16, 64));
  PlanRequest s2p = plan_request("s2p", "br-xy-source", 16, 64);
  s2p.mesh = Mesh{4, 4};
  s2p.sources = source_distribution("equal", Mesh{4, 4}, 5);
  reqs.push_back(s2p);
  for (const PlanRequest& req : reqs) {
    const Plan plan = build_plan(req);
    const Schedule sched = schedule_of(plan);
    for (const Machine& m : machines_for_checks()) {
      SCOPED_TRACE(req.op + "/" + req.algo + " p=" + std::to_string(req.p) + " on " + m.name);
      SimOptions ref;
      ref.reference_queue = true;
      const SimResult a = simulate(sched, m);
      const SimResult b = simulate(sched, m, ref);
      EXPECT_EQ(a.per_rank_ticks, b.per_rank_ticks);
      if (m.kind == ModelKind::mesh) EXPECT_LE(a.events, b.events);  // the put-back loop takes every mesh step as an event
      else EXPECT_EQ(a.events, b.events);
      EXPECT_EQ(a.channel_waits, b.channel_waits);
      EXPECT_EQ(a.channel_ties, b.channel_ties);
      EXPECT_EQ(a.postponed, 0U);
      if (m.kind != ModelKind::mesh) {
        EXPECT_EQ(a.events, sched.ops() + a.messages);
      }
    }
  }
}

// The default discipline creates a rank's first events when the run reaches their keys, so a
// broadcast's events never all wait at once: they peak with the messages in flight, fewer
// than half the ranks in a binomial tree's last round, never one per rank as at time 0.
TEST(Disciplines, FirstEventsAreNotAllWaitingAtTimeZero) {
  for (const char* algo : {"binomial", "fibo"}) {
    for (int p : {1024, 4096}) {
      const Schedule sched = schedule_of(build_plan(plan_request("bcast", algo, p, 8)));
      const SimResult r = simulate(sched, load_machine("postal:2"));
      SCOPED_TRACE(std::string(algo) + " p=" + std::to_string(p));
      EXPECT_GT(r.max_waiting_events, 0U);
      // Made at once, the first events alone would be p (a receive posted per rank, the root's
      // send); measured 0.41-0.42·p for binomial, 0.64·p for the Fibonacci tree.
      EXPECT_LT(r.max_waiting_events, static_cast<std::uint64_t>(p) * 2 / 3);
      SimOptions ref;
      ref.reference_queue = true;
      EXPECT_EQ(simulate(sched, load_machine("postal:2"), ref).max_waiting_events, 0U);
    }
  }
}

// Regression: a flat broadcast made O(p) events per message and the C3
// all-to-all about 384. Now ops + messages, exactly: 3 per message.
TEST(Disciplines, EventsGrowLinearlyWithMessages) {
  for (const auto& [op, algo] : {std::pair{"bcast", "flat"}, std::pair{"all-to-all", "1-lev-dir"}}) {
    for (int p : {16, 32, 64}) {
      const Schedule sched = schedule_of(build_plan(plan_request(op, algo, p, 8)));
      const SimResult r = simulate(sched, load_machine("postal:2"));
      SCOPED_TRACE(std::string(op) + " p=" + std::to_string(p));
      EXPECT_EQ(r.events, sched.ops() + r.messages);
      EXPECT_LT(r.events, 4 * r.messages + static_cast<std::uint64_t>(p));
      SimOptions ref;
      ref.reference_queue = true;
      // The put-back loop handles the same events plus O(p) put-backs per message.
      const SimResult b = simulate(sched, load_machine("postal:2"), ref);
      EXPECT_GT(b.postponed, r.messages * static_cast<std::uint64_t>(p) / 8);
    }
  }
}

// The mesh models: per packet one step for each channel its header takes (injection, every
// link, ejection) and one when it is done, plus two per message, whatever the contention; so
// the work grows with messages × packets × hops, never with the ranks waiting. The
// per-hop discipline makes each step a queue event; by default a step due before every other
// event is handled inside the one before it, with the same result.
TEST(Disciplines, MeshEventsArePerPacketPerHop) {
  for (const char* profile : {"delta", "paragon"}) {
    Machine m = load_machine(profile);
    m.mesh.dims = {8, 8};
    const int cols = m.mesh.dims[1];
    for (const auto& [op, algo] : {std::pair{"bcast", "flat"}, std::pair{"all-to-all", "1-lev-dir"}}) {
      for (int p : {16, 32, 64}) {
        for (std::int64_t bytes : {8, 2048}) {
          const Schedule sched = schedule_of(build_plan(plan_request(op, algo, p, bytes)));
          std::uint64_t expected = sched.ops();
          std::uint64_t messages = 0;
          for (std::uint32_t g = 0; g < sched.ops(); ++g) {
            const auto& it = sched.items[g];
            if (it.kind != Work::send) continue;
            const int src = sched.rank_of(g), dst = it.peer;  // row-major placement: rank i on node i
            const std::uint64_t hops = static_cast<std::uint64_t>(std::abs(src / cols - dst / cols) +
                                                                  std::abs(src % cols - dst % cols));
            const std::uint64_t packets =
                m.mesh.packet_bytes == 0 ? 1 : std::max<std::uint64_t>(1, (it.size + m.mesh.packet_bytes - 1) / m.mesh.packet_bytes);
            expected += packets * (hops + 3) + 2;
            ++messages;
          }
          SCOPED_TRACE(std::string(profile) + " " + op + " p=" + std::to_string(p) + " bytes=" + std::to_string(bytes));
          SimOptions per_hop;
          per_hop.per_hop_mesh = true;
          const SimResult r = simulate(sched, m, per_hop);
          EXPECT_EQ(r.messages, messages);
          EXPECT_EQ(r.events, expected);
          EXPECT_EQ(r.inline_steps, 0U);
          const SimResult d = simulate(sched, m);
          EXPECT_EQ(d.per_rank_ticks, r.per_rank_ticks);
          EXPECT_LE(d.events, expected);
          EXPECT_EQ(d.channel_waits, r.channel_waits);
          EXPECT_EQ(d.channel_ties, r.channel_ties);
        }
      }
    }
  }
}

// A message alone on a wormhole mesh: its send, the injection (its first packet's header takes
// the whole path at once, its worm's end follows, and so does every later packet of the stream),
// its acceptance and its receive: 4 events whatever its packets and hops (the per-hop
// discipline: k(h + 3) + 4 for k packets over h hops).
TEST(Disciplines, LoneWormholeMessageIsFourEvents) {
  Machine m = load_machine("delta");
  m.mesh.dims = {16, 16};
  for (const std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{5000}, std::uint64_t{70000}}) {
    Hand h = empty_plan(256, bytes);
    h.ranks[0].ops.push_back(op(OpCode::send, 255, bytes));
    h.ranks[255].ops.push_back(op(OpCode::recv, 0, bytes));
    const Plan plan = h.plan();
    const std::uint64_t k = (bytes + 511) / 512, hops = 30;
    SimOptions per_hop;
    per_hop.per_hop_mesh = true;
    const SimResult a = simulate(plan, m), b = simulate(plan, m, per_hop);
    SCOPED_TRACE(bytes);
    EXPECT_EQ(a.per_rank_ticks, b.per_rank_ticks);
    EXPECT_EQ(a.events, 4U);
    EXPECT_EQ(b.events, k * (hops + 3) + 4);
    EXPECT_EQ(a.channel_waits, 0U);
    EXPECT_EQ(b.channel_waits, 0U);
  }
}

// Bruck's λ experiments (what `sim` runs on a mesh without --lambda) send messages one
// after another; at 16 MiB each is 32 768 Delta packets. A packet of a message alone on its path
// costs no event of its own, so the work is a few events per message, not per packet, and the
// times are the per-hop discipline's.
TEST(Disciplines, PacketStreamsCostEventsPerMessage) {
  const Machine m = load_machine("delta");
  for (const std::uint64_t bytes : {std::uint64_t{4096}, std::uint64_t{1} << 20}) {
    for (int experiment : {1, 2}) {
      const Plan plan = bruck_experiment_plan(experiment, 6, bytes);
      SimOptions per_hop;
      per_hop.per_hop_mesh = true;
      const SimResult a = simulate(plan, m), b = simulate(plan, m, per_hop);
      SCOPED_TRACE(std::to_string(bytes) + " bytes, experiment " + std::to_string(experiment));
      EXPECT_EQ(a.per_rank_ticks, b.per_rank_ticks);
      EXPECT_LE(a.events, b.events);
      EXPECT_EQ(a.channel_waits, b.channel_waits);
      EXPECT_EQ(a.channel_ties, b.channel_ties);
      EXPECT_LE(a.events, 8 * a.messages);
      EXPECT_GE(b.events, a.packets * 4);
    }
  }
}

// A packet's header goes through the free channels of its path inside one event, so
// a wormhole packet costs O(1) events, not one per channel: on the Delta's all-to-all, doubling
// the mesh's sides doubles the mean path and leaves the events per packet about where they were
// (they follow the waits, about two per packet); the per-hop discipline's grow with the path.
TEST(Disciplines, MeshEventsPerPacketDoNotGrowWithThePath) {
  double per_packet[2] = {0, 0}, per_hop_per_packet[2] = {0, 0};
  int i = 0;
  for (const std::vector<int>& dims : {std::vector<int>{4, 8}, std::vector<int>{8, 16}}) {
    Machine m = load_machine("delta");
    m.mesh.dims = dims;
    const int p = dims[0] * dims[1];
    const Schedule sched = schedule_of(build_plan(plan_request("all-to-all", "1-lev-dir", p, 480)));
    SimOptions ph;
    ph.per_hop_mesh = true;
    const SimResult a = simulate(sched, m), b = simulate(sched, m, ph);
    SCOPED_TRACE(p);
    EXPECT_EQ(a.per_rank_ticks, b.per_rank_ticks);
    // Per message: the send, the receive, the injection and the acceptance; per packet: its end;
    // and one per step that found its channel busy when its header was routed ahead.
    const std::uint64_t network = a.events - 4 * a.messages;
    EXPECT_LE(network, a.packets + 2 * a.channel_waits);
    per_packet[i] = static_cast<double>(network) / static_cast<double>(a.packets);
    per_hop_per_packet[i] = static_cast<double>(b.events - 4 * b.messages) / static_cast<double>(b.packets);
    ++i;
  }
  // Network events per packet: mean path 4 → 8 hops.
  EXPECT_LT(per_packet[1], 1.25 * per_packet[0]) << per_packet[0] << " → " << per_packet[1];
  EXPECT_GT(per_hop_per_packet[1], 1.5 * per_hop_per_packet[0]) << per_hop_per_packet[0] << " → " << per_hop_per_packet[1];
}

// Random traffic (rounds of random sends with random sizes, some any-source receives, local work,
// equal start times so that worms meet and tie) on mesh variants chosen to make steps coincide
// (no router delay, one packet per message, torus, store-and-forward, non-blocking sends): the
// default discipline gives the per-hop one's ticks on every rank, waits and ties, in no more
// events. 200 rounds: at stop 22 trial 162 (non-blocking sends) was the first to catch a packet
// cut back while routed ahead being queued before its header got there; 9 000 more runs over
// six other seeds passed after the fix.
TEST(Disciplines, MeshStepsInlineMatchPerHopOnRandomTraffic) {
  std::vector<Machine> ms;
  Machine d = small_delta();
  ms.push_back(d);
  Machine v = d;
  v.mesh.router_delay_us = 0;
  ms.push_back(v);
  v = d;
  v.mesh.packet_bytes = 0;
  ms.push_back(v);
  v = d;
  v.mesh.wrap = true;
  ms.push_back(v);
  v = d;
  v.mesh.switching = Switching::store_and_forward;
  ms.push_back(v);
  v = d;
  v.send_mode = SendMode::nonblocking;
  v.mesh.router_delay_us = 0.5;
  ms.push_back(v);
  std::uint64_t state = 12345;
  auto rnd = [&](std::uint64_t n) {  // splitmix64: fixed by this code, not by the library
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (z ^ (z >> 31)) % n;
  };
  std::uint64_t inlined = 0, waits = 0;
  int ran = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int p = 6 + static_cast<int>(rnd(11));
    std::vector<std::vector<std::string>> prog(static_cast<std::size_t>(p));
    std::vector<std::vector<std::string>> deps(static_cast<std::size_t>(p));
    std::vector<std::vector<int>> last(static_cast<std::size_t>(p));  // labels of the previous round
    int tag = 0;
    for (int round = 0; round < 4; ++round) {
      std::vector<std::vector<int>> now(static_cast<std::size_t>(p));
      auto add = [&](int r, const std::string& text) {
        auto& pr = prog[static_cast<std::size_t>(r)];
        const int label = static_cast<int>(pr.size()) + 1;
        pr.push_back("l" + std::to_string(label) + ": " + text);
        for (int x : last[static_cast<std::size_t>(r)])
          if (rnd(3) != 0) deps[static_cast<std::size_t>(r)].push_back("l" + std::to_string(label) + " requires l" + std::to_string(x));
        now[static_cast<std::size_t>(r)].push_back(label);
      };
      const int sends = 1 + static_cast<int>(rnd(static_cast<std::uint64_t>(2 * p)));
      for (int i = 0; i < sends; ++i) {
        const int a = static_cast<int>(rnd(static_cast<std::uint64_t>(p)));
        int b = static_cast<int>(rnd(static_cast<std::uint64_t>(p - 1)));
        if (b >= a) ++b;
        static const int sizes[] = {8, 8, 500, 1500, 4000};
        const int bytes = sizes[rnd(5)];
        add(a, "send " + std::to_string(bytes) + "b to " + std::to_string(b) + " tag " + std::to_string(tag));
        add(b, rnd(4) == 0 ? "recv 4000b from -1 tag " + std::to_string(tag)
                           : "recv " + std::to_string(bytes) + "b from " + std::to_string(a) + " tag " + std::to_string(tag));
        ++tag;
        if (rnd(4) == 0) add(a, "calc " + std::to_string(rnd(3) * 20));
      }
      for (int r = 0; r < p; ++r)
        if (!now[static_cast<std::size_t>(r)].empty()) last[static_cast<std::size_t>(r)] = now[static_cast<std::size_t>(r)];
    }
    std::string text = "num_ranks " + std::to_string(p) + "\n";
    for (int r = 0; r < p; ++r) {
      text += "rank " + std::to_string(r) + " {\n";
      for (const auto& line : prog[static_cast<std::size_t>(r)]) text += line + "\n";
      for (const auto& line : deps[static_cast<std::size_t>(r)]) text += line + "\n";
      text += "}\n";
    }
    const Schedule sched = read_goal_schedule(text).schedule;
    for (std::size_t mk = 0; mk < ms.size(); ++mk) {
      const Machine& m = ms[mk];
      SCOPED_TRACE("trial " + std::to_string(trial) + " machine " + std::to_string(mk) + " p=" + std::to_string(p) + "\n" + text);
      SimOptions per_hop;
      per_hop.per_hop_mesh = true;
      SimResult a, b;
      b = simulate(sched, m, per_hop);
      a = simulate(sched, m);
      EXPECT_EQ(a.per_rank_ticks, b.per_rank_ticks);
      EXPECT_LE(a.events, b.events);
      EXPECT_EQ(a.channel_waits, b.channel_waits);
      EXPECT_EQ(a.channel_ties, b.channel_ties);
      inlined += a.inline_steps;
      waits += a.channel_waits;
      ++ran;
    }
  }
  EXPECT_EQ(ran, 200 * 6);
  EXPECT_GT(inlined, 0U);  // the fast path ran
  EXPECT_GT(waits, 0U);    // and the traffic contended
}

// ---- exact time ----

// The same machine in µs and in ns strings: with doubles the first gave 79.828 µs and the
// second 73 736 (1-ulp differences broke ties the other way). Ticks are exact.
TEST(ExactTime, SameAnswerInAnyUnit) {
  const Plan plan = build_plan(plan_request("allreduce", "recursive-doubling", 19, 1024));
  const SimResult us = simulate(plan, load_machine("logp:3:2:0.5:0.004"));
  const SimResult ns = simulate(plan, load_machine("logp:3000:2000:500:4"));
  EXPECT_EQ(us.time_ticks * 1000, ns.time_ticks);
  EXPECT_EQ(us.time_ticks, 73'736'000);  // 73.736 µs, what LogGOPSim gives in ns
  for (int r = 0; r < 19; ++r) EXPECT_EQ(us.per_rank_ticks[r] * 1000, ns.per_rank_ticks[r]) << r;
  const Plan flat = build_plan(plan_request("bcast", "flat", 19, 4));
  EXPECT_EQ(simulate(flat, load_machine("sr:0.027:0.088")).time_ticks * 1000, simulate(flat, load_machine("sr:27:88")).time_ticks);
}

// Tie-break: two messages arrive at rank 1 in the same tick; the one whose event was created
// first (rank 0's send: ready ops are created rank by rank) is accepted first, the other after
// the receive gap.
TEST(ExactTime, TiesGoToTheEventCreatedFirst) {
  SimOptions opt;
  opt.trace = true;
  const SimResult r = simulate(case_plan(3), load_machine("logp:5:2:3:0"), opt);
  std::vector<std::pair<double, int>> accepts;
  for (const Span& s : r.rank_spans)
    if (s.track == 0 && s.what == 1) accepts.emplace_back(s.begin_us, s.peer);
  ASSERT_EQ(accepts.size(), 2U);
  EXPECT_EQ(accepts[0], (std::pair<double, int>{7, 1}));
  EXPECT_EQ(accepts[1], (std::pair<double, int>{10, 2}));
}

TEST(ExactTime, ModelStringsCarryTheComputationCost) {
  Machine m = load_machine("logp:5:2:3:0:0.25");
  EXPECT_EQ(m.reduce_us_per_byte, 0.25);
  EXPECT_EQ(m.copy_us_per_byte, 0.25);
  EXPECT_EQ(load_machine("postal:2:0.5").reduce_us_per_byte, 0.5);
  EXPECT_EQ(load_machine("sr:1:2:3").copy_us_per_byte, 3);
  EXPECT_EQ(load_machine("logp:5:2:3:0").reduce_us_per_byte, 0);
  EXPECT_THROW((void)load_machine("logp:5:2:3:0:1:2"), InputError);
  EXPECT_THROW((void)load_machine("postal:2:-1"), InputError);
}

// ---- GOAL schedules ----

SimResult run_goal(const std::string& text, const char* machine) {
  return simulate(read_goal_schedule(text).schedule, load_machine(machine));
}

// Ready operations of one rank start sends first (LogGOPSim's order by type), whatever their
// program order: rank 0's send (o 2) starts at 0 before its calc 10, so rank 1 has the message
// at 2 + L 3 + 7·G 0.004 and accepts it by 7.028; in program order it would be 17.028.
TEST(Goal, ReadyOpsStartSendsFirst) {
  const SimResult r = run_goal("num_ranks 2\nrank 0 {\nl1: calc 10\nl2: send 8b to 1 tag 0\n}\n"
                               "rank 1 {\nl1: recv 8b from 0 tag 0\n}\n",
                               "logp:3:2:0.5:0.004");
  EXPECT_DOUBLE_EQ(r.per_rank_us[0], 12);
  EXPECT_DOUBLE_EQ(r.per_rank_us[1], 7.028);
}

// Virtual time past 2^62 ticks is an InputError (simulator.hpp), not a wrapped or infinite time.
// A calc is at most 2^56 - 2 ticks (about 20 h in µs), so 2^62 takes a chain of 64 of 20 h.
TEST(Goal, VirtualTimePastTheLimitIsAnInputError) {
  std::string text = "num_ranks 1\nrank 0 {\n";
  for (int i = 0; i < 70; ++i) {
    text += "l" + std::to_string(i) + ": calc 70000000000\n";
    if (i > 0) text += "l" + std::to_string(i) + " requires l" + std::to_string(i - 1) + "\n";
  }
  text += "}\n";
  try {
    (void)run_goal(text, "logp:3:2:0.5:0.004");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("virtual time passes 2^62 ticks"), std::string::npos) << e.what();
  }
}

// logp:5:2:3:0 (L 5, o 2, g 3): rank 0's tag-5 message arrives at 7, rank 1's tag-7 one at 17
// (after calc 10). Rank 2's any-source any-tag receive was posted first, so it takes the first
// message (accepted 7..9); the tag-7 receive takes the second (17..19); calc 3 ends at 22.
TEST(Goal, AnySourceAndTagMatchInPostingOrder) {
  const SimResult r = run_goal(
      "num_ranks 3\nrank 0 {\nl1: send 8b to 2 tag 5\n}\nrank 1 {\nl1: calc 10\nl2: send 8b to 2 tag 7\nl2 requires l1\n}\n"
      "rank 2 {\nl1: recv 8b from -1 tag -1\nl2: recv 8b from -1 tag 7\nl3: calc 3\nl3 requires l1\nl3 requires l2\n}\n",
      "logp:5:2:3:0");
  EXPECT_EQ(r.per_rank_ticks, (std::vector<Ticks>{2'000'000, 12'000'000, 22'000'000}));
  EXPECT_EQ(r.events, 6U + 2U);  // one per op start, one per message accepted
  // The other way round the tag-7 message would take the any receive and leave the tag-5 one
  // unmatched: an error naming the receive that never completes.
  EXPECT_THROW((void)run_goal("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 7\nl2: send 8b to 1 tag 5\n}\n"
                              "rank 1 {\nl1: recv 8b from -1 tag -1\nl2: recv 8b from 0 tag 7\nl2 requires l1\n}\n",
                              "postal:2"),
               InputError);
}

// irequires: l2 may start once l1 has started. With it the exchange completes; with requires
// both ranks wait for a receive whose send waits for it.
TEST(Goal, IrequiresStartsWithTheOtherOp) {
  const std::string body =
      "rank 0 {\nl1: recv 8b from 1 tag 0\nl2: send 8b to 1 tag 0\nl2 %s l1\n}\n"
      "rank 1 {\nl1: recv 8b from 0 tag 0\nl2: send 8b to 0 tag 0\nl2 %s l1\n}\n";
  auto text = [&](const char* dep) {
    std::string t = "num_ranks 2\n" + body;
    for (int i = 0; i < 2; ++i) t.replace(t.find("%s"), 2, dep);
    return t;
  };
  const SimResult r = run_goal(text("irequires"), "postal:2");
  EXPECT_EQ(r.time_ticks, 2'000'000);  // both post at 0 and send at 0; the messages are usable at λ = 2
  try {
    (void)run_goal(text("requires"), "postal:2");
    FAIL() << "a deadlock ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("GOAL line 3: rank 0 op l1 (recv) never completes"), std::string::npos) << e.what();
  }
}

struct GoalBadRun {
  const char* text;
  const char* expect;
};
class GoalRunBad : public ::testing::TestWithParam<GoalBadRun> {};
TEST_P(GoalRunBad, IsOneLineNamingTheLine) {
  try {
    (void)run_goal(GetParam().text, "postal:2");
    FAIL() << "ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().expect), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}
INSTANTIATE_TEST_SUITE_P(
    Cases, GoalRunBad,
    ::testing::Values(GoalBadRun{"num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 3\n}\n", "GOAL line 3: rank 0 op l1 (send) to 1 (tag 3) is never received"},
                      GoalBadRun{"num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag -1\n}\n", "GOAL line 3: a send needs a tag"},
                      GoalBadRun{"num_ranks 2\nrank 0 {\nl1: send 16b to 1\n}\nrank 1 {\nl1: recv 8b from 0\n}\n",
                                 "GOAL line 6: rank 1 op l1 (recv) receives 8 bytes but the message from 0 (tag 0) has 16"},
                      GoalBadRun{"num_ranks 1\nrank 0 {\nl1: calc 1\nl2: calc 1\nl1 requires l2\nl2 requires l1\n}\n",
                                 "never completes"},
                      GoalBadRun{"num_ranks 2\nrank 0 {\n// postbox: round 3\n}\n",
                                 "GOAL line 4: the 'round' of line 3 is not followed by an operation of its rank"},
                      GoalBadRun{"num_ranks 1\nrank 0 {\nl0: calc 1\nl1: calc 1\n// postbox: round 3\nl1 requires l0\n}\n",
                                 "GOAL line 6: the 'round' of line 5 is not followed by an operation of its rank"},
                      GoalBadRun{"num_ranks 1\nrank 0 {\n// postbox: round 3\n// postbox: round 4\nl0: calc 1\n}\n",
                                 "GOAL line 4: a second 'round' before an operation (the first is on line 3)"},
                      GoalBadRun{"num_ranks 1\nrank 0 {\n// postbox: round 3\nl0: calc 1 // postbox: round 4\n}\n",
                                 "GOAL line 4: 'round' given twice for one operation"},
                      GoalBadRun{"num_ranks 1\n// postbox: round 3\nrank 0 {\nl0: calc 1\n}\n",
                                 "GOAL line 2: 'round' must come before an operation inside a rank block"},
                      GoalBadRun{"num_ranks 1\nrank 0 { // postbox: round 3\nl0: calc 1\n}\n",
                                 "GOAL line 2: 'round' must follow an operation on its line, or stand on the line before one"},
                      GoalBadRun{"num_ranks 2\n// postbox: time-unit 1e-9\n", "GOAL line 2: time-unit must be"},
                      GoalBadRun{"num_ranks 2\n// postbox: warp 9\n", "unknown postbox directive"},
                      GoalBadRun{"num_ranks 2\nrank 0 {\n}\nrank 0 {\n}\n", "GOAL line 4: rank 0 is given twice"},
                      GoalBadRun{"num_ranks 2\nrank 0 {\n}\nnum_ranks 3\n", "GOAL line 4: num_ranks changes after a rank block"},
                      // An op's size is 56 bits: a larger size or calc is refused, not truncated.
                      GoalBadRun{"num_ranks 2\nrank 0 {\nl1: send 72057594037927935b to 1 tag 0\n}\n",
                                 "GOAL line 3: a size of 2^56 - 1 bytes or more is too large"},
                      GoalBadRun{"num_ranks 1\nrank 0 {\nl1: calc 72057594037927935\n}\n",
                                 "GOAL line 3: calc of 2^56 - 1 or more is too long"},
                      GoalBadRun{"num_ranks 1\nrank 0 {\nl1: calc 72057594037928\n}\n", "GOAL line 3: calc 72057594037928 is too long"},
                      // The schedule's checks name the lowest rank's op, whatever the block order.
                      GoalBadRun{"num_ranks 3\nrank 2 {\nx: send 8b to 0 tag -1\n}\nrank 1 {\ny: calc 1\ny requires y\n}\n",
                                 "GOAL line 6: 'y' requires itself"}));

// Rank blocks in any order make the same schedule as in rank order: the same run, and the same
// labels in its messages (an op without a label, one with l<j> of another number, one with l<j>).
TEST(Goal, BlocksInAnyRankOrderRunTheSame) {
  const Plan plan = build_plan(plan_request("allreduce", "recursive-doubling", 16, 8));
  const std::string text = plan_to_goal(plan);
  std::vector<std::string> blocks;
  std::string head;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find("}\n", at);
    const std::size_t open = text.find("rank ", at);
    if (open == std::string::npos || end == std::string::npos) break;
    if (blocks.empty()) head = text.substr(0, open);
    blocks.push_back(text.substr(open, end + 2 - open));
    at = end + 2;
  }
  ASSERT_EQ(blocks.size(), 16U);
  std::string shuffled = head;
  for (int i : {5, 0, 15, 3, 9, 1, 2, 14, 4, 6, 7, 13, 8, 10, 11, 12}) shuffled += blocks[static_cast<std::size_t>(i)];
  const Machine m = load_machine("logp:3:2:0.5:0.004");
  const SimResult a = simulate(read_goal_schedule(text).schedule, m);
  const SimResult b = simulate(read_goal_schedule(shuffled).schedule, m);
  EXPECT_EQ(a.time_ticks, b.time_ticks);
  EXPECT_EQ(a.per_rank_ticks, b.per_rank_ticks);
  EXPECT_EQ(a.events, b.events);
  const Schedule s = read_goal_schedule("num_ranks 3\nrank 2 {\nl0: calc 1\nsend 8b to 0\n}\nrank 1 {\nl0: calc 1\n}\n"
                                        "rank 0 {\nl7: calc 1\nl1: recv 8b from 2\n}\n").schedule;
  ASSERT_EQ(s.ops(), 5U);
  EXPECT_EQ(s.where(0), "GOAL line 10: rank 0 op l7 (calc)");
  EXPECT_EQ(s.where(1), "GOAL line 11: rank 0 op l1 (recv)");
  EXPECT_EQ(s.where(2), "GOAL line 7: rank 1 op l0 (calc)");
  EXPECT_EQ(s.where(4), "GOAL line 4: rank 2 op #1 (send)");
}

// plan export --format goal, read back and run, gives the plan's time: every built-in plan, on
// every kind of model, with a reduce cost that needs the finer time unit.
TEST(Goal, ExportedPlansRunAsThePlan) {
  std::vector<Machine> ms = machines_for_checks();
  ms.push_back(load_machine("logp:3:2:0.5:0.004:0.001"));
  for (const auto& a : testing_support::kAlgos) {
    for (int p : {2, 5, 13}) {
      const Plan plan = build_plan(plan_request(a.op, a.algo, p, 1024));
      for (const Machine& m : ms) {
        SCOPED_TRACE(std::string(a.op) + "/" + a.algo + " p=" + std::to_string(p) + " on " + m.name);
        GoalExportOptions opt;
        opt.reduce_per_byte = m.reduce_us_per_byte;
        opt.copy_per_byte = m.copy_us_per_byte;
        const SimResult from_goal = simulate(read_goal_schedule(plan_to_goal(plan, opt)).schedule, m);
        const SimResult from_plan = simulate(plan, m);
        EXPECT_EQ(from_goal.per_rank_ticks, from_plan.per_rank_ticks);
      }
    }
  }
}

// Every built-in plan with every message by rendezvous (S = 0) and O charged: the per-rank
// queues equal the put-back loop, the GOAL export (matched while running) equals the plan
// (matched before), and the count is every message of a byte or more. On the cluster the
// inter-node level has the S, so only messages between nodes go by rendezvous.
TEST(LogGOPS, EveryBuiltInPlanRunsByRendezvous) {
  const Machine m = load_machine("logp:5:2:3:0.5:O=0.25:S=0");
  std::string two_levels = "name = \"c\"\n[model]\nkind = \"cluster\"\n[cluster]\nnodes = 2\ncores_per_node = 4\n"
                           "[intra]\nkind = \"sr\"\nsend_us = 0.2\nrecv_us = 0.5\n[inter]\nkind = \"logp\"\nL_us = 5\n"
                           "o_us = 2\ng_us = 3\nG_us_per_byte = 0.5\nS_bytes = 0\n";
  const Machine cluster = parse_profile(two_levels, "c.toml");
  for (const auto& a : testing_support::kAlgos) {
    for (int p : {2, 5, 8}) {
      const Plan plan = build_plan(plan_request(a.op, a.algo, p, 64));
      SCOPED_TRACE(std::string(a.op) + "/" + a.algo + " p=" + std::to_string(p));
      SimOptions ref;
      ref.reference_queue = true;
      const SimResult r = simulate(plan, m);
      EXPECT_EQ(simulate(plan, m, ref).per_rank_ticks, r.per_rank_ticks);
      EXPECT_EQ(r.rendezvous, r.messages);
      const SimResult g = simulate(read_goal_schedule(plan_to_goal(plan)).schedule, m);
      EXPECT_EQ(g.per_rank_ticks, r.per_rank_ticks);
      EXPECT_EQ(g.rendezvous, r.rendezvous);
      const SimResult c = simulate(plan, cluster);
      std::uint64_t between = 0;
      for (std::uint32_t op = 0; op < plan.op_count(); ++op)
        if (plan.code_at(op) == OpCode::send && plan.rank_of(op) / 4 != plan.peer_at(op) / 4) ++between;
      EXPECT_EQ(c.rendezvous, between);
      EXPECT_EQ(simulate(plan, cluster, ref).per_rank_ticks, c.per_rank_ticks);
    }
  }
}

// ---- bounded mesh work (delta at 1 GiB used to run for minutes) ----

// More than kMaxMeshPackets packets in one run, or in the λ experiments, is refused before any
// event runs (these calls return at once).
TEST(Mesh, PacketsAreBoundedUpFront) {
  const std::uint64_t gib = std::uint64_t{1} << 30;  // 2^21 packets of 512 bytes on the Delta
  Hand h = empty_plan(2, gib);
  for (int i = 0; i < 9; ++i) {  // 9 · 2^21 > 2^24
    h.ranks[0].ops.push_back(op(OpCode::send, 1, gib));
    h.ranks[1].ops.push_back(op(OpCode::recv, 0, gib));
  }
  try {
    (void)simulate(h.plan(), load_machine("delta"));
    FAIL() << "ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the run sends 18874368 packets through the mesh"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)measure_lambda(load_machine("delta"), gib), InputError);
}

// ---- the cluster machine ----

Machine two_level(int nodes, int cores) {
  return parse_profile("name = \"c\"\n[model]\nkind = \"cluster\"\n[cluster]\nnodes = " + std::to_string(nodes) +
                           "\ncores_per_node = " + std::to_string(cores) +
                           "\n[intra]\nkind = \"sr\"\nsend_us = 2\nrecv_us = 3\n"
                           "[inter]\nkind = \"logp\"\nL_us = 5\no_us = 2\ng_us = 3\nG_us_per_byte = 0.5\n",
                       "c.toml");
}

// A message between two ranks of one node costs the intra-node model's time, between nodes the
// inter-node model's, tick for tick: the same exchange on the level's own machine gives the
// same finishing ticks.
TEST(Cluster, EachMessagePaysItsLevel) {
  const Machine m = two_level(2, 2);  // ranks 0, 1 on node 0; 2, 3 on node 1
  for (const auto& [peer, alone] : {std::pair{1, "sr:2:3"}, std::pair{2, "logp:5:2:3:0.5"}, std::pair{3, "logp:5:2:3:0.5"}}) {
    Hand h = empty_plan(4, 64);
    h.ranks[0].ops.push_back(op(OpCode::send, peer, 64));
    h.ranks[static_cast<std::size_t>(peer)].ops.push_back(op(OpCode::recv, 0, 64));
    const SimResult r = simulate(h.plan(), m);
    Hand two = empty_plan(2, 64);
    two.ranks[0].ops.push_back(op(OpCode::send, 1, 64));
    two.ranks[1].ops.push_back(op(OpCode::recv, 0, 64));
    const SimResult ref = simulate(two.plan(), load_machine(alone));
    SCOPED_TRACE(peer);
    EXPECT_EQ(r.per_rank_ticks[0], ref.per_rank_ticks[0]);
    EXPECT_EQ(r.per_rank_ticks[static_cast<std::size_t>(peer)], ref.per_rank_ticks[1]);
  }
  // sr: s + r = 5 µs inside; LogGP: o + L + o + 63 G = 40.5 µs across.
  Hand h = empty_plan(4, 64);
  h.ranks[0].ops.push_back(op(OpCode::send, 1, 64));
  h.ranks[0].ops.push_back(op(OpCode::send, 2, 64, {0}));
  h.ranks[1].ops.push_back(op(OpCode::recv, 0, 64));
  h.ranks[2].ops.push_back(op(OpCode::recv, 0, 64));
  const SimResult r = simulate(h.plan(), m);
  EXPECT_EQ(r.per_rank_ticks[1], 5'000'000);
  EXPECT_EQ(r.per_rank_ticks[2], 2'000'000 + 40'500'000);  // the second send starts when the first's s = 2 ends
  EXPECT_THROW((void)simulate(h.plan(), two_level(1, 3)), InputError);  // 3 cores, p = 4
}

// Every built-in plan simulates on a cluster machine (3 nodes of 3 cores, p = 7 and 9), the
// per-rank queues and the put-back loop agree, and with one node it is the intra model alone.
TEST(Cluster, PlansSimulate) {
  const Machine m = two_level(3, 3);
  const Machine one = two_level(1, 16);
  for (const auto& a : testing_support::kAlgos) {
    for (int p : {7, 9}) {
      const Plan plan = build_plan(plan_request(a.op, a.algo, p, 64));
      SCOPED_TRACE(std::string(a.op) + "/" + a.algo + " p=" + std::to_string(p));
      SimOptions ref;
      ref.reference_queue = true;
      const SimResult r = simulate(plan, m);
      EXPECT_EQ(r.per_rank_ticks, simulate(plan, m, ref).per_rank_ticks);
      EXPECT_GT(r.time_ticks, 0);
      EXPECT_EQ(simulate(plan, one).per_rank_ticks, simulate(plan, load_machine("sr:2:3")).per_rank_ticks);
    }
  }
}

// hier on a cluster machine is built on the cluster's topology (a package per node): its tree
// crosses nodes once per node (the leaders), where the host's topology would not know nodes.
TEST(Cluster, HierPlacesItsLevelsByNode) {
  for (const auto& [nodes, cores] : {std::pair{4, 4}, std::pair{3, 5}, std::pair{8, 2}}) {
    const std::string machine = "cluster:" + std::to_string(nodes) + "x" + std::to_string(cores);
    const int p = nodes * cores;
    const EmulatedRun run = select_emulated_run(
        {{"machine", machine}, {"op", "bcast"}, {"algo", "hier"}, {"p", std::to_string(p)}, {"bytes", "8"}});
    ASSERT_NE(run.request.topology, nullptr);
    const Schedule sched = schedule_of(build_plan(run.request));
    int across = 0, messages = 0;
    for (std::uint32_t g = 0; g < sched.ops(); ++g) {
      if (sched.items[g].kind != Work::send) continue;
      ++messages;
      if (sched.rank_of(g) / cores != sched.items[g].peer / cores) ++across;
    }
    SCOPED_TRACE(machine);
    EXPECT_EQ(messages, p - 1);
    EXPECT_EQ(across, nodes - 1);
    EXPECT_GT(simulate(sched, run.machine).time_ticks, 0);
  }
}

}  // namespace
}  // namespace postbox::sim
