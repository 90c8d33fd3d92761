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
// `// postbox: pacing delay-receive|delay-send L`, `// postbox: mesh RxC` (the ranks' mesh of an
// s2p or C³ plan), and `// postbox: round R` on the line before an op, which gives that op round
// R (an op followed by the directive on its own line, as older exports wrote it, is read too).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/runtime/goal.hpp"

namespace postbox {

// Syntax errors, a dependency on an undefined label, a rank block given twice, a malformed
// postbox directive, or a missing num_ranks → InputError naming the line.
GoalSchedule parse_goal(std::string_view text);

}  // namespace postbox
