// The network of a logp machine as LogGOPSim's --network-file gives it: a DOT digraph read with
// graphviz's cgraph (docs/emulator.md, "Network from a DOT file").
//
// Nodes whose name starts with 'H' are hosts, rank i being the i-th in file order; the others are
// switches. Each edge a -> b is a directed link; its `comment` lists the nodes (separated by
// commas, spaces, tabs or newlines) whose messages leave a through it, "*" standing for every
// node. Routes are followed as flow_network.hpp's Routes says.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "postbox/emulator/flow_network.hpp"

namespace postbox::sim {

// The topology in DOT text; `origin` names it in errors. Not DOT (graphviz's parser refuses it,
// its message is kept), an undirected graph, no host, a comment naming no node of the graph →
// InputError: one line naming origin and the problem. Routes are checked when used (Routes).
std::shared_ptr<const NetworkTopology> parse_network_dot(std::string_view text, std::string_view origin);

// The topology in the file at `path` (a regular file, read whole) → parse_network_dot(text, path).
std::shared_ptr<const NetworkTopology> read_network_file(const std::string& path);

}  // namespace postbox::sim
