// A network given as a graph of hosts, switches and directed links with routing tables, and the
// fluid "max congestion" model of the messages crossing it (LogGOPSim's --network-file and its
// "simple" network; docs/emulator.md, "Network from a DOT file").
//
// The topology is plain data (frontend/network_file.hpp reads it from a DOT file). FlowNetwork is
// the model the engine (simulator.cpp) drives: a message's flow enters when its send starts
// (insert()), moves at a rate of 1/k of full speed, k being the largest number of flows on any
// link of its route, and leaves when all its work is done (pop()); every insertion and removal
// changes the rates of the flows sharing a link with it.
//
// Arithmetic is exact and integer: a flow's remaining work is kept in 10^-6 tick of full-speed
// time; over dt ticks at congestion k it does floor(dt·10^6 / k) of it (truncated, so never more
// than the exact fluid model), and it ends at the first whole tick at which its work is done. The
// rates of other flows only ever change at insertions and removals, so a flow's end is known
// exactly between them. Ties between flows that end at the same tick go to the one inserted
// first. Nothing depends on hashing or addresses.
#pragma once

#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "postbox/runtime/ticks.hpp"

namespace postbox::sim {

struct NetworkTopology {
  std::string origin;                    // the file it was read from (error messages)
  std::vector<std::string> node_names;   // every node, hosts and switches, in file order
  std::vector<std::int32_t> host_nodes;  // rank i's node: the i-th node whose name starts with 'H'
  struct Link {
    std::int32_t from = 0, to = 0;
    bool any = false;                    // comment "*": routes every destination
    std::vector<std::int32_t> dests;     // nodes named by its comment
  };
  std::vector<Link> links;               // in file order (per node, its outgoing edges in order)
  [[nodiscard]] int hosts() const { return static_cast<int>(host_nodes.size()); }
};

// The routes of a topology: the links a message from rank src to rank dst crosses, in order. At
// each node on the way: its only outgoing link if it has one; else the first of its links (file
// order) whose comment names dst's node, else the first with comment "*". A node with no
// outgoing link, a node where no link routes dst, or a route that comes back to a node →
// InputError naming the file, both hosts and the node. The tables are built once (per node, its
// destinations sorted), so a route costs O(hops · log(destinations at a node)).
class Routes {
 public:
  explicit Routes(std::shared_ptr<const NetworkTopology> topo);
  [[nodiscard]] std::vector<std::int32_t> route(int src, int dst) const;
  [[nodiscard]] const NetworkTopology& topology() const { return *topo_; }

 private:
  std::shared_ptr<const NetworkTopology> topo_;
  std::vector<std::vector<std::int32_t>> out_;                       // per node: its links in order
  std::vector<std::vector<std::pair<std::int32_t, std::int32_t>>> table_;  // per node: (dest, link), by dest
  std::vector<std::int32_t> any_;                                     // per node: its first "*" link, or -1
};

class FlowNetwork {
 public:
  // InputError if the topology has fewer than p hosts.
  FlowNetwork(std::shared_ptr<const NetworkTopology> topo, int p);

  // A flow for message `msg` from rank src to rank dst, with `work` ticks of full-speed time,
  // entering at `now` (no earlier than the last insertion or pop). work 0 is not a flow: the
  // caller treats it as ended at once. Returns the flow's id.
  std::uint32_t insert(Ticks now, int src, int dst, Ticks work, std::uint32_t msg);

  [[nodiscard]] bool empty() const { return active_ == 0; }
  // When the next flow ends (empty() false).
  [[nodiscard]] Ticks next_time();
  struct Ended {
    Ticks t;
    std::uint32_t msg;
  };
  // Removes the next flow to end (ties: the one inserted first) and updates the rates of the
  // flows that shared a link with it.
  Ended pop();

  // The largest number of flows that shared one link at any time, and how many flows were slowed
  // down at some point (k > 1).
  [[nodiscard]] std::uint32_t max_link_flows() const { return max_link_flows_; }
  [[nodiscard]] std::uint64_t slowed_flows() const { return slowed_; }
  [[nodiscard]] const NetworkTopology& topology() const { return routes_.topology(); }

 private:
  __extension__ using Work = unsigned __int128;  // 10^-6 tick of full-speed time
  struct Flow {
    Work rem = 0;
    Ticks last = 0;  // when rem was last brought up to date
    Ticks end = 0;
    std::uint32_t k = 1;
    std::uint32_t route = 0;  // index into paths_
    std::uint32_t msg = 0;
    std::uint32_t version = 0;
    std::uint64_t seq = 0;  // insertion order: ties between flows ending at one tick
    bool slowed = false;
  };
  struct Due {
    Ticks t;
    std::uint64_t seq;
    std::uint32_t flow;
    std::uint32_t version;
  };
  struct DueAfter {
    bool operator()(const Due& x, const Due& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
  };

  std::uint32_t route_of(int src, int dst);
  [[nodiscard]] std::uint32_t congestion(std::uint32_t route) const;
  void retime(std::uint32_t f, Ticks now, std::uint32_t k);
  void touch_neighbours(std::uint32_t route, std::uint32_t self, Ticks now);

  Routes routes_;
  int p_ = 0;
  std::unordered_map<std::uint64_t, std::uint32_t> path_index_;  // src·p + dst → paths_ index
  std::vector<std::vector<std::int32_t>> paths_;  // each (src, dst) pair's route, computed once
  std::vector<std::vector<std::uint32_t>> on_link_;  // the flows on each link, any order
  std::vector<Flow> flows_;  // by id; an ended flow's id is reused
  std::vector<std::uint32_t> free_;
  std::uint64_t seq_ = 0;
  std::priority_queue<Due, std::vector<Due>, DueAfter> due_;
  std::vector<std::uint32_t> seen_;  // per flow: stamp of the last neighbour scan that met it
  std::vector<std::uint32_t> scratch_;
  std::uint32_t stamp_ = 0;
  std::uint64_t active_ = 0;
  std::uint32_t max_link_flows_ = 0;
  std::uint64_t slowed_ = 0;
};

}  // namespace postbox::sim
