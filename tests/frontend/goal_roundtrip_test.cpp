// plan export --format goal, then sim --goal, gives sim's time to the tick on every machine, the
// mesh ones included: the export carries what sim gave the machine (the ranks' mesh of an s2p or
// C³ plan, the reduce and copy costs), and the selection applies it again (plan_export.hpp,
// goal_parse.hpp, selection.hpp: select_schedule_machine).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../collectives/algo_table.hpp"
#include "postbox/collectives/c3.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/emulator/schedule.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/plan_export.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

struct OpAlgo {
  std::string op, algo;
};

std::vector<OpAlgo> every_plan() {
  std::vector<OpAlgo> out;
  for (const auto& a : testing_support::kAlgos) out.push_back({a.op, a.algo});
  for (const auto& op : c3_ops())
    for (const auto& algo : c3_algorithm_names(op)) out.push_back({op, algo});
  for (const auto& algo : s2p_algorithm_names()) out.push_back({"s2p", algo});
  out.push_back({"barrier", "fibo"});
  return out;
}

// The CLI's two paths: sim of the selection, and sim --goal of its export.
void expect_round_trip(const std::map<std::string, std::string>& given) {
  const EmulatedRun run = select_emulated_run(given);
  const Plan plan = build_plan(run.request);
  GoalExportOptions opt;
  opt.reduce_per_byte = run.machine.reduce_us_per_byte;
  opt.copy_per_byte = run.machine.copy_us_per_byte;
  if (op_takes_mesh(run.request.op)) opt.mesh = s2p_request_mesh(run.request);
  const GoalRead goal = read_goal_schedule(plan_to_goal(plan, opt));
  std::optional<Mesh> ranks_mesh;
  if (goal.mesh_rows > 0) ranks_mesh = Mesh{goal.mesh_rows, goal.mesh_cols};
  const sim::Machine m = select_schedule_machine({{"machine", given.at("machine")}}, goal.schedule.p, ranks_mesh);
  const sim::SimResult from_goal = sim::simulate(goal.schedule, m);
  const sim::SimResult from_plan = sim::simulate(plan, run.machine);
  EXPECT_EQ(from_goal.time_ticks, from_plan.time_ticks);
  EXPECT_EQ(from_goal.per_rank_ticks, from_plan.per_rank_ticks);
}

TEST(GoalRoundTrip, EveryPlanOnTheMeshMachinesToTheTick) {
  for (const char* machine : {"delta", "paragon", "t3d"}) {
    for (const OpAlgo& a : every_plan()) {
      for (const char* p : {"4", "16"}) {
        for (const char* bytes : {"0", "64"}) {
          if ((a.op == "reduce" || a.op == "allreduce") && std::string(bytes) == "64") continue;  // below
          SCOPED_TRACE(a.op + "/" + a.algo + " p=" + p + " bytes=" + bytes + " on " + machine);
          expect_round_trip({{"machine", machine}, {"op", a.op}, {"algo", a.algo}, {"p", p}, {"bytes", bytes}});
        }
      }
      if (a.op == "reduce" || a.op == "allreduce") {
        SCOPED_TRACE(a.op + "/" + a.algo + " p=16 bytes=64 elem 8 on " + machine);
        expect_round_trip({{"machine", machine}, {"op", a.op}, {"algo", a.algo}, {"p", "16"}, {"bytes", "64"}, {"elem-bytes", "8"}});
      }
    }
  }
}

// The directive itself: written for s2p and the C³ ops only, read back, refused when malformed.
TEST(GoalRoundTrip, TheMeshDirective) {
  const EmulatedRun run = select_emulated_run({{"machine", "delta"}, {"op", "all-to-one"}, {"algo", "2-lev-rec"}, {"p", "4"}, {"bytes", "0"}});
  GoalExportOptions opt;
  opt.mesh = s2p_request_mesh(run.request);
  const std::string text = plan_to_goal(build_plan(run.request), opt);
  EXPECT_NE(text.find("// postbox: mesh 2x2\n"), std::string::npos) << text;
  const GoalSchedule g = parse_goal(text);
  EXPECT_EQ(g.mesh_rows, 2);
  EXPECT_EQ(g.mesh_cols, 2);
  EXPECT_EQ(parse_goal("num_ranks 1\n").mesh_rows, 0);
  EXPECT_THROW((void)parse_goal("// postbox: mesh 2by2\nnum_ranks 1\n"), InputError);
  EXPECT_THROW((void)parse_goal("num_ranks 1 // postbox: mesh 2x2\n"), InputError);
}

}  // namespace
}  // namespace postbox
