// postbox plan export | check: a plan as GOAL (LogGOPSim), JSON or DOT, or its first problem.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/plan.hpp"
#include "postbox/frontend/plan_export.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/selection.hpp"

namespace postbox::cli {

namespace {

struct ExportArgs {
  std::shared_ptr<TextOptions> sel;
  std::string format = "goal";
  std::string machine;  // goal: calc = reduce/copy time on this machine
};

struct CheckArgs {
  std::shared_ptr<TextOptions> sel;
  std::string file;
  CLI::Option* file_opt = nullptr;
};

void do_export(const ExportArgs& a) {
  const PlanExportSelection selection =
      select_plan_export(a.sel->given(), a.format, a.machine.empty() ? std::nullopt : std::optional(a.machine));
  if (dry_run()) return;
  std::cout << export_plan(selection);
}

void do_check(const CheckArgs& a) {
  Plan plan;
  if (a.file_opt->count() > 0) {
    if (const auto given = a.sel->given(); !given.empty()) {
      throw InputError("--" + given.begin()->first + " does not apply with --file (the file holds the whole plan)");
    }
    plan = plan_from_json_file(a.file, "--file '" + a.file + "'");
  } else {
    const PlanRequest req = select_plan(a.sel->given(), kRunDefaults);
    if (dry_run()) return;
    plan = build_plan(req);
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
  ex->sel = std::make_shared<TextOptions>(exp, plan_selection_options(), kRunDefaults.defaults);
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
  ck->sel = std::make_shared<TextOptions>(chk, plan_selection_options(), kRunDefaults.defaults);
  ck->file_opt = chk->add_option("--file", ck->file, "A plan exported with --format json (instead of --op/--algo/...)");
  chk->callback([ck] { do_check(*ck); });
}

}  // namespace postbox::cli
