// postbox plan export | check: a plan as GOAL (LogGOPSim), JSON or DOT, or its first problem.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "cli.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/plan.hpp"
#include "postbox/runtime/plan_export.hpp"
#include "postbox/runtime/sim/machine.hpp"
#include "sim_common.hpp"

namespace postbox::cli {

// Defined in cmd_run.cpp: the plan-selection options shared with `run`.
struct PlanSelection;
std::shared_ptr<PlanSelection> add_plan_selection(CLI::App* cmd);
PlanRequest selection_request(const PlanSelection& sel);

namespace {

struct ExportArgs {
  std::shared_ptr<PlanSelection> sel;
  std::string format = "goal";
  std::string machine;  // goal: calc = reduce/copy time on this machine
};

struct CheckArgs {
  std::shared_ptr<PlanSelection> sel;
  std::string file;
};

void do_export(const ExportArgs& a) {
  if (!a.machine.empty() && a.format != "goal") throw InputError("--machine applies to --format goal");
  GoalExportOptions goal;
  PlanRequest req = selection_request(*a.sel);
  if (!a.machine.empty()) {
    const sim::Machine m = sim::load_machine(a.machine);
    goal.reduce_per_byte = m.reduce_us_per_byte;
    goal.copy_per_byte = m.copy_us_per_byte;
    // λ as sim chooses it, so sim --goal of the export gives sim's time (issue 14).
    if (!req.lambda && !req.model) {
      SimSpec spec;
      spec.bytes = req.bytes;
      req.lambda = sim_plan_lambda(spec, m);
    }
  }
  const Plan plan = build_plan(req);
  if (a.format == "goal") std::cout << plan_to_goal(plan, goal);
  else if (a.format == "json") std::cout << plan_to_json(plan) << '\n';
  else if (a.format == "dot") std::cout << plan_to_dot(plan);
  else throw InputError("--format must be goal, json or dot, got '" + a.format + "'");
}

void do_check(const CheckArgs& a) {
  Plan plan;
  if (!a.file.empty()) {
    std::ifstream in(a.file);
    if (!in) throw InputError("cannot read --file " + a.file);
    std::ostringstream text;
    text << in.rdbuf();
    plan = plan_from_json(text.str());
  } else {
    plan = build_plan(selection_request(*a.sel));
  }
  if (const auto problem = validate(plan)) {
    std::cout << *problem << '\n';
    set_exit_code(1);
    return;
  }
  std::cout << "ok\n";
}

}  // namespace

void register_plan(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("plan", "Export a collective's plan (GOAL, JSON, DOT) or check it statically");
  cmd->require_subcommand(1);

  auto ex = std::make_shared<ExportArgs>();
  CLI::App* exp = cmd->add_subcommand("export", "Print the plan of --op/--algo for --p ranks and --bytes bytes");
  ex->sel = add_plan_selection(exp);
  exp->add_option("--format", ex->format,
                  "goal (LogGOPSim's schedule language, accepted by its txt2bin), json (lossless, readable by "
                  "plan check --file) or dot (Graphviz)")
      ->capture_default_str();
  exp->add_option("--machine", ex->machine,
                  "goal: write each reduce and copy as calc of its CPU time on this machine (model string, profile "
                  "name or file; default: 0, as the model strings charge); without --lambda, --s/--r the plan is "
                  "built for this machine's lambda, as sim builds it");
  exp->callback([ex] { do_export(*ex); });

  auto ck = std::make_shared<CheckArgs>();
  CLI::App* chk = cmd->add_subcommand(
      "check", "Validate a plan without running it: print the first problem found (exit 1) or \"ok\"; the plan is "
               "selected like for export, or read with --file from a JSON export");
  ck->sel = add_plan_selection(chk);
  chk->add_option("--file", ck->file, "A plan exported with --format json (instead of --op/--algo/...)");
  chk->callback([ck] { do_check(*ck); });
}

}  // namespace postbox::cli
