// Plan exporters: JSON (lossless, readable back), DOT (Graphviz: one cluster per rank, deps as
// solid edges, messages as dashed edges) and GOAL, the schedule language of LogGOPSim
// (Hoefler, Schneider, Lumsdaine), in the grammar its txt2bin accepts:
//
//   num_ranks 2
//   rank 0 {
//   l0: send 8b to 1 tag 0
//   }
//   rank 1 {
//   l0: recv 8b from 0 tag 0
//   l1: calc 8
//   l1 requires l0
//   }
//
// Op j of a rank is labelled l<j>; sends and receives carry the plan's per-pair sequence
// number as tag, so LogGOPSim matches them exactly as the plan's matching rule does; reduce and
// copy become `calc <t>`, t their CPU time (bytes × the time per byte of GoalExportOptions) in
// the schedule's time unit; each dep becomes `l<j> requires l<d>`, written after every op of the
// rank (txt2bin needs labels defined before use).
//
// The time unit is the machine's (the unit of its L, o, g, G); when a calc is not a whole
// number of it, the schedule is written in 10^-3 or 10^-6 of it and says so in a comment that
// postbox reads back, `// postbox: time-unit 1e-3` (LogGOPSim then needs L, o, g, G in that
// unit). A paced plan (plan.hpp, Pacing) carries `// postbox: pacing delay-send 2` and a line
// `// postbox: round R` before each paced op: GOAL has no such construct, so LogGOPSim runs the
// schedule without the idles. Every comment is on a line of its own, the only place txt2bin
// reads one (after an op it accepts only tag, cpu, nic or the end of the line).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "postbox/collectives/mesh.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/plan.hpp"

namespace postbox {

// Lossless: plan_from_json(plan_to_json(p)) reproduces p field for field.
std::string plan_to_json(const Plan& plan);
// Malformed text or a missing/ill-typed field → InputError naming it. Does not validate().
Plan plan_from_json(std::string_view text);
// plan_from_json() of a file's text; every InputError names the file as `what` (the CLI passes
// its option and the path), and a path that is not a regular file (a directory, /dev/zero) is
// refused unread.
Plan plan_from_json_file(const std::string& path, const std::string& what);

std::string plan_to_dot(const Plan& plan);

struct GoalExportOptions {
  double reduce_per_byte = 0;  // CPU time of reduce per byte, in the machine's unit (Machine::reduce_us_per_byte)
  double copy_per_byte = 0;    // the same for copy (Machine::copy_us_per_byte)
  // The ranks' mesh the plan was built for (s2p and the C³ ops: s2p_request_mesh), written as
  // `// postbox: mesh RxC` so that sim --goal gives a mesh machine the dims sim gave it.
  std::optional<Mesh> mesh;
};
// Negative or non-finite costs → InputError.
std::string plan_to_goal(const Plan& plan, const GoalExportOptions& options = {});

// `postbox plan export` (and the Python module's plan_export): the plan selection
// (selection.hpp; bytes 0 unless given) in format goal, json or dot. machine (goal only): each
// reduce and copy is written as calc of its CPU time on that machine (a model string, profile
// name or file), and without lambda, s or r the plan is built for that machine's λ, as sim
// builds it, so that sim --goal of the export gives sim's time. Bad text → InputError naming
// the option ("--format", "--machine", "--p"), before any work that grows with p.
struct PlanExportSelection {
  PlanRequest request;
  std::string format;
  GoalExportOptions goal;
};
PlanExportSelection select_plan_export(const std::map<std::string, std::string>& given, const std::string& format,
                                       const std::optional<std::string>& machine = std::nullopt);
// Builds the plan and writes it in the selected format.
std::string export_plan(const PlanExportSelection& selection);

}  // namespace postbox
