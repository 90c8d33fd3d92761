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
// copy become `calc <bytes>` (one time unit per byte); each dep becomes `l<j> requires l<d>`,
// written after every op of the rank (txt2bin needs labels defined before use).
#pragma once

#include <string>
#include <string_view>

#include "postbox/runtime/plan.hpp"

namespace postbox {

// Lossless: plan_from_json(plan_to_json(p)) reproduces p field for field.
std::string plan_to_json(const Plan& plan);
// Malformed text or a missing/ill-typed field → InputError naming it. Does not validate().
Plan plan_from_json(std::string_view text);

std::string plan_to_dot(const Plan& plan);
std::string plan_to_goal(const Plan& plan);

}  // namespace postbox
