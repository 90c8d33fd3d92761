// A reader for GOAL schedules (LogGOPSim's text format, the grammar of its txt2bin): used by
// `sim --goal` and to read back what plan_to_goal() writes and compare it with the plan.
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
//
// One grammar, two results: the reader hands each rank block over at its '}', and either a
// GoalSchedule (the text model) or the emulator's schedule is built from the blocks. The second
// never holds more of the text than one rank block's labels.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/emulator/schedule.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/goal.hpp"

namespace postbox {

// What the reader throws for the text itself (syntax, an undefined label, a rank block given
// twice, a malformed directive, no num_ranks), "GOAL line N: ..."; the schedule's own checks
// (GoalScheduleBuilder::finish) throw plain InputError.
class GoalSyntaxError : public InputError {
 public:
  using InputError::InputError;
};

GoalSchedule parse_goal(std::string_view text);

// The emulator's schedule of a GOAL text, named `name` (Schedule::algo), and the ranks' mesh of
// its `// postbox: mesh` directive (0 x 0 when absent).
struct GoalRead {
  sim::Schedule schedule;
  int mesh_rows = 0;
  int mesh_cols = 0;
  int pieces = 0;  // the pieces read in parallel; 0 when the text was read whole
};
// A text of 8 MiB or more is read in pieces of about 1 MiB, in parallel with oneTBB, where it
// allows it (no block comment; num_ranks and the time-unit, pacing and mesh directives before
// the first rank block): the schedule, and any error's message, are those of the sequential
// reading, to which any other text, and any text with an error, goes.
GoalRead read_goal_schedule(std::string_view text, std::string name = "goal");
// The same with pieces of about piece_bytes whatever the text's size and the threads (the
// tests' way in).
GoalRead read_goal_schedule_in_pieces(std::string_view text, std::string name, std::size_t piece_bytes);
// The same from a file, mapped read-only; the pages already read are given back as it goes, so
// the file's size adds little to the memory held. A file that cannot be opened, or that is not
// a regular file (a device, a FIFO: refused without waiting) → InputError.
GoalRead read_goal_file(const std::string& path, std::string name);

}  // namespace postbox
