// A GOAL schedule (LogGOPSim's text format) as data: ranks, their ops and the dependencies
// between them. frontend/goal_parse.hpp reads the text, one rank block at a time, into a
// GoalSchedule (parse_goal) or straight into the emulator's schedule (read_goal_schedule,
// through emulator/schedule.hpp's GoalScheduleBuilder).
#pragma once

#include <cstdint>
#include <span>
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

// One rank block as the reader hands it over, valid only during the call: labels point into the
// text or the reader's buffers, and dependencies name ops by their number in the block.
struct GoalOpView {
  GoalOp::Kind kind = GoalOp::Kind::calc;
  std::string_view label;  // empty when unlabelled
  std::uint64_t size = 0;
  std::int64_t peer = -1;
  std::int64_t tag = 0;
  int cpu = 0;
  int nic = 0;
  std::uint32_t round = 0;
  int line = 0;
};

struct GoalDepView {
  std::uint32_t op = 0;  // the op that waits
  std::uint32_t on = 0;  // the op it waits for
  bool immediate = false;
};

struct GoalRankView {
  int rank = 0;
  std::span<const GoalOpView> ops;
  std::span<const GoalDepView> deps;  // in file order
};

struct GoalSchedule {
  int num_ranks = 0;
  std::vector<GoalRank> ranks;  // in file order
  int time_unit_exp = 0;        // calc values are in 10^-time_unit_exp of the machine's unit
  Pacing pacing = Pacing::none;
  std::uint32_t pacing_latency = 0;
  // `// postbox: mesh RxC`: the ranks' mesh the plan was built for (s2p and the C³ ops), which a
  // mesh machine takes as its dims when none are given; 0 when absent.
  int mesh_rows = 0;
  int mesh_cols = 0;
};

}  // namespace postbox
