// What `plan export --format goal` writes is a schedule LogGOPSim's txt2bin reads: every built-in
// plan, exported with and without a machine, passes the txt2bin grammar (txt2bin_grammar.hpp),
// whose checker is itself checked here on texts txt2bin accepts and refuses.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "algos.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/plan_export.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/runtime/check.hpp"
#include "txt2bin_grammar.hpp"

namespace postbox {
namespace {

using testing_support::Txt2bin;
using testing_support::Txt2binVerdict;

std::string verdict_text(const Txt2binVerdict& v) {
  return v.ok ? "ok" : "line " + std::to_string(v.line) + " state " + std::to_string(v.state) + ": " + v.expected;
}

TEST(Txt2bin, AcceptsWhatTxt2binReads) {
  const char* text =
      "// a comment on a line of its own\n"
      "num_ranks 3\n"
      "/* a block\n   comment */\n"
      "rank 0 {\n"
      "l1: send 1b to 1 tag 0\n"
      "l2: send 8b to 2 tag 3 cpu 0 nic 0\n"
      "l3: calc 100 cpu 0\n"
      "l3 requires l1\n"
      "l3 irequires l2\n"
      "}\n"
      "\n"
      "rank 1 {\r\n"
      "l1: recv 1b from 0 tag 0\r\n"
      "}\n"
      "rank 2 {\n"
      "x_1: recv 8b from -1 tag -1\n"
      "calc 5\n"
      "}\n";
  const Txt2binVerdict v = Txt2bin::check(text);
  EXPECT_TRUE(v.ok) << verdict_text(v);
}

struct Refused {
  const char* text;
  int line;
  int state;
  const char* expected;
};
class Txt2binRefuses : public ::testing::TestWithParam<Refused> {};
TEST_P(Txt2binRefuses, WithItsStateAndLine) {
  const Txt2binVerdict v = Txt2bin::check(GetParam().text);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.line, GetParam().line);
  EXPECT_EQ(v.state, GetParam().state);
  EXPECT_EQ(v.expected, GetParam().expected) << verdict_text(v);
}
// The first row is the export postbox wrote for the paced postal allreduce before it put its
// round directive on a line of its own: txt2bin stops at it with "Expected: "cpu", "nic" or "\n"".
INSTANTIATE_TEST_SUITE_P(
    Cases, Txt2binRefuses,
    ::testing::Values(
        Refused{"num_ranks 2\nrank 0 {\nl0: send 8b to 1 tag 0 // postbox: round 1\n}\n", 3, 15, R"("cpu", "nic" or "\n")"},
        Refused{"num_ranks 2\nrank 0 {\nl0: send 8b to 1 // c\n}\n", 3, 13, R"("tag", "cpu", "nic" or "\n")"},
        Refused{"num_ranks 1\nrank 0 {\nl0: calc 4 // c\n}\n", 3, 7, R"("cpu" or "\n")"},
        Refused{"num_ranks 1\nrank 0 {\nl0: calc 4\nl1: calc 4\nl1 requires l0 // c\n}\n", 5, 6, R"("\n")"},
        Refused{"num_ranks 2\nrank 0 {\nl0: send 8 to 1\n}\n", 3, 10, R"("b")"},
        Refused{"num_ranks 2\nrank 0 {\nl0: send 8b to -1\n}\n", 3, 12, "an integer"},
        Refused{"num_ranks 2\nrank 0 {\nl0: send 8b to 1 nic 0 tag 1\n}\n", 3, 19, R"("\n")"},
        Refused{"num_ranks 1\nrank 0 {\nl0 : calc 1\nl1 needs l0\n}\n", 4, 1, R"(":", "requires" or "irequires")"},
        Refused{"num_ranks 1\nrank 0 {\nl0: calc 1\nl1 requires l0\n}\n", 4, -1, "a dependency references an undefined label"},
        Refused{"num_ranks 1\nrank 0 {\n  l0: calc 1\n}\n", 3, -1, "blanks where an item starts"},
        Refused{"num_ranks 2\nrank 0 {\n}\n", 0, -1, "the input ends before the block of rank num_ranks - 1 is closed"},
        Refused{"num_ranks 1\nrank 0 {\nl0: calc 1\n", 0, -1,
                "the input ends before the block of rank num_ranks - 1 is closed"}));

// Every registered plan family with a parameter, as concrete algorithms.
std::vector<std::string> concrete(const std::string& listed) {
  if (listed == "lambda") return {"lambda", "lambda:0.4"};
  if (listed == "hier") return {"hier", "hier:fibo,binomial"};
  return test::concrete_algos(listed);
}

// `plan export --format goal` (tools/cmd_plan.cpp): the selection, with --machine the emulated
// run's, the machine's reduce and copy costs, the ranks' mesh for s2p and the C³ ops.
std::string exported(std::map<std::string, std::string> given, const std::string& machine) {
  PlanRequest req;
  GoalExportOptions opt;
  if (machine.empty()) {
    req = select_plan(given);
  } else {
    given["machine"] = machine;
    const EmulatedRun run = select_emulated_run(given);
    req = run.request;
    opt.reduce_per_byte = run.machine.reduce_us_per_byte;
    opt.copy_per_byte = run.machine.copy_us_per_byte;
  }
  if (op_takes_mesh(req.op)) opt.mesh = s2p_request_mesh(req);
  return plan_to_goal(build_plan(req), opt);
}

// Every registered plan at a few p, without a machine and on machines whose exports carry each
// directive: rounds (postal:2.5, λ not an integer: the paced postal allreduce), a finer time
// unit (a reduce cost of 0.001 µs per byte), calc values (C = 0.25), the mesh (s2p, C³).
TEST(GoalExport, EveryBuiltInPlanReadsInTxt2bin) {
  std::set<std::string> exported_once;
  std::set<std::string> directives;
  int exports = 0;
  for (const PlanBuilderInfo& b : list_plan_builders()) {
    for (const std::string& algo : concrete(b.algo)) {
      for (const int p : {2, 7, 16}) {
        for (const std::string machine : {"", "postal:2.5", "logp:3:2:0.5:0.004:0.001", "sr:27:88:0.25"}) {
          std::map<std::string, std::string> given{{"op", b.op}, {"algo", algo}, {"p", std::to_string(p)}};
          given["bytes"] = b.op == "barrier" ? "0" : "64";
          if (b.op == "reduce" || b.op == "allreduce") given["elem-bytes"] = "8";
          if (b.op == "s2p") given["sources"] = std::to_string((p + 1) / 2);
          SCOPED_TRACE(b.op + "/" + algo + " p=" + std::to_string(p) + " machine '" + machine + "'");
          std::string text;
          try {
            text = exported(given, machine);
          } catch (const InputError&) {
            continue;  // a selection this p or machine does not allow (refused before any export)
          }
          ++exports;
          exported_once.insert(b.op + "/" + b.algo);
          for (const char* d : {"// postbox: round", "// postbox: time-unit", "// postbox: mesh", "// postbox: pacing"})
            if (text.find(d) != std::string::npos) directives.insert(d);
          const Txt2binVerdict v = Txt2bin::check(text);
          EXPECT_TRUE(v.ok) << verdict_text(v);
          if (!v.ok) return;
        }
      }
    }
  }
  EXPECT_GT(exports, 0);
  for (const PlanBuilderInfo& b : list_plan_builders()) EXPECT_TRUE(exported_once.contains(b.op + "/" + b.algo)) << b.op << "/" << b.algo;
  EXPECT_EQ(directives.size(), 4U);  // every directive was written and passed
}

// The round stands on the line before its op, and postbox reads it back onto that op; an op with
// the directive after it on its line (older exports) is read too.
TEST(GoalExport, RoundStandsOnTheLineBeforeItsOp) {
  PlanRequest req;
  req.op = "allreduce";
  req.algo = "postal-delay-send";
  req.p = 7;
  req.bytes = 8;
  req.elem_bytes = 8;
  req.lambda = Rational(5, 2);
  const Plan plan = build_plan(req);
  const std::string text = plan_to_goal(plan);
  const GoalSchedule goal = parse_goal(text);
  std::size_t paced = 0;
  for (int r = 0; r < plan.p; ++r) {
    const RankOps ops = plan.ops(r);
    ASSERT_EQ(goal.ranks[static_cast<std::size_t>(r)].ops.size(), ops.size());
    for (std::size_t j = 0; j < ops.size(); ++j) {
      EXPECT_EQ(goal.ranks[static_cast<std::size_t>(r)].ops[j].round, ops[j].round) << "rank " << r << " op " << j;
      paced += ops[j].round != 0;
    }
  }
  EXPECT_GT(paced, 0U);
  const auto at = text.find("// postbox: round ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_TRUE(at == 0 || text[at - 1] == '\n');
  const GoalSchedule old = parse_goal("num_ranks 2\nrank 0 {\nl0: send 8b to 1 tag 0 // postbox: round 2\n}\nrank 1 {\n"
                                      "// postbox: round 3\nl0: recv 8b from 0 tag 0\n}\n");
  EXPECT_EQ(old.ranks[0].ops[0].round, 2U);
  EXPECT_EQ(old.ranks[1].ops[0].round, 3U);
}

}  // namespace
}  // namespace postbox
