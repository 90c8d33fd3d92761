// A reader for GOAL schedules (LogGOPSim's text format, the grammar of its txt2bin): used to
// read back what plan_to_goal() writes and compare it with the plan.
//
// Accepted: `num_ranks N`; `rank R {` ... `}`; inside a rank, one item per line:
// `[label:] send <n>b to <peer> [tag <t>] [cpu <c>] [nic <k>]`,
// `[label:] recv <n>b from <peer|-1> [tag <t|-1>] [cpu <c>] [nic <k>]`,
// `[label:] calc <n> [cpu <c>]`, `<label> requires <label>`, `<label> irequires <label>`;
// `//` line comments and `/* */` block comments. Labels are [a-zA-Z][a-zA-Z0-9_]*, scoped to
// their rank, and must be defined before a dependency names them (as in txt2bin).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
  friend bool operator==(const GoalOp&, const GoalOp&) = default;
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
};

// Syntax errors, a dependency on an undefined label, or a missing num_ranks → InputError
// naming the line.
GoalSchedule parse_goal(std::string_view text);

}  // namespace postbox
