// A reader for GOAL schedules (LogGOPSim's text format, the grammar of its txt2bin): used to
// read back what plan_to_goal() writes and compare it with the plan.
//
// Accepted: `num_ranks N`; `rank R {` ... `}`; inside a rank, one item per line:
// `[label:] send <n>b to <peer> [tag <t>] [cpu <c>] [nic <k>]`,
// `[label:] recv <n>b from <peer|-1> [tag <t|-1>] [cpu <c>] [nic <k>]`,
// `[label:] calc <n> [cpu <c>]`, `<label> requires <label>`, `<label> irequires <label>`;
// `//` line comments and `/* */` block comments. Labels are [a-zA-Z][a-zA-Z0-9_]*, scoped to
// their rank, and must be defined before a dependency names them (as in txt2bin).
//
// postbox's own directives ride in `//` comments, so LogGOPSim ignores them (plan_export.hpp):
// `// postbox: time-unit 1e-K` (0 <= K <= 6: calc values are in 10^-K of the machine's unit),
// `// postbox: pacing delay-receive|delay-send L`, and `// postbox: round R` after an op.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/runtime/plan.hpp"

namespace postbox {

struct GoalOp {
  enum class Kind { send, recv, calc };
  Kind kind = Kind::calc;
  std::string label;        // empty when unlabelled
  std::uint64_t size = 0;   // bytes (send/recv) or time units (calc)
  std::int64_t peer = -1;   // send: destination; recv: source (-1 = any source); calc: -1
  std::int64_t tag = 0;     // -1 = any tag
  int cpu = 0;
  int nic = 0;
  std::uint32_t round = 0;  // `// postbox: round R`, else 0
  int line = 0;             // where it was written (not compared)
  friend bool operator==(const GoalOp& x, const GoalOp& y) {
    return x.kind == y.kind && x.label == y.label && x.size == y.size && x.peer == y.peer && x.tag == y.tag &&
           x.cpu == y.cpu && x.nic == y.nic && x.round == y.round;
  }
};

struct GoalDep {
  std::string op;          // the op that waits
  std::string on;          // the op it waits for
  bool immediate = false;  // irequires: may start once `on` has started
  friend bool operator==(const GoalDep&, const GoalDep&) = default;
};

struct GoalRank {
  int rank = 0;
  std::vector<GoalOp> ops;
  std::vector<GoalDep> deps;
};

struct GoalSchedule {
  int num_ranks = 0;
  std::vector<GoalRank> ranks;  // in file order
  int time_unit_exp = 0;        // calc values are in 10^-time_unit_exp of the machine's unit
  Pacing pacing = Pacing::none;
  std::uint32_t pacing_latency = 0;
};

// Syntax errors, a dependency on an undefined label, a rank block given twice, a malformed
// postbox directive, or a missing num_ranks → InputError naming the line.
GoalSchedule parse_goal(std::string_view text);

}  // namespace postbox
