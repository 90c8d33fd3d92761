// The library's typed results as users read them, one writer each, shared by the CLI and the
// explorer (which add their own fields around these, never a second version of them).
#pragma once

#include <nlohmann/json.hpp>

#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/runtime/calibrate.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::frontend {

// An exact time or model figure as a JSON number: an integer as an integer, anything else as
// the nearest double (the exact value goes in a "*_exact" string where a schema has one).
nlohmann::ordered_json number_json(const Rational& x);

// `postbox tree --format json`: shape, p, completion, completion_exact, root, s, r, lambda, and
// nodes [{rank, parent, children, time}] in rank order, in that key order.
nlohmann::ordered_json tree_json(const Tree& t);

// `postbox topo --json`'s summary of a topology: source, pus, cores, packages, numa_nodes,
// l3_groups, can_bind and tree [{level, kind, logical_index, os_index, bytes, first_pu,
// last_pu}]. bytes is hwloc's cache or memory size, 0 for a synthetic topology (its description
// gives no sizes, and hwloc's defaults would read as measured ones).
nlohmann::json topology_json(const Topology& t);

// An emulated run's figures (`postbox sim --json`, the explorer's /api/sim): machine, op, algo,
// p, bytes, time_us, time_ticks (exact: 10^-6 of the model's unit), messages, events,
// inline_steps (mesh steps handled inside the event before them), packets, channel_waits (mesh:
// a packet got a channel after the tick it asked), channel_ties (wormhole: ... and the holder
// before it asked at that tick). Each front end adds its own fields around these.
nlohmann::json sim_result_json(const sim::SimResult& r, const std::string& machine, const std::string& op,
                               const std::string& algo, int p, std::uint64_t bytes);

// The one line an InputError is reported with, by the CLI (stderr, exit 2) and the explorer
// (HTTP 400) alike: a FieldError's fields spelt as options ("--algo"), any other what().
std::string error_line(const InputError& error);

// The `local` machine profile (docs/emulator.md): kind "sr" with send_us = s, recv_us = r,
// and the measurement in [calibration].
std::string local_profile_toml(const Calibration& c);

// The `local-cluster` machine profile (docs/cluster.md, "Two-level calibration"): kind
// "cluster", nodes = processes measured, cores_per_node = threads per process, [intra] and
// [inter] each a kind "sr" model (send_us, recv_us), and the measurement in [calibration].
// c.inter missing → InputError.
std::string local_cluster_profile_toml(const Calibration& c);

}  // namespace postbox::frontend
