// The emulated machine: a network model plus host (per-rank) costs, as plain data.
//
// A Machine comes from a model string ("postal:1.8", "sr:27:88", "logp:L:o:g:G", each with an
// optional last number C, the CPU time per byte of reduce and copy, default 0; logp also takes
// LogGOPS's O=X and S=N), from a
// profile name looked up in the profile directories (profiles/delta.toml ...), or from a
// profile file path. docs/emulator.md describes every field and the semantics; profiles/*.toml
// cite the source of every number.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/emulator/host_model.hpp"

namespace postbox::sim {

struct NetworkTopology;  // flow_network.hpp

// A message-size dependent cost in microseconds: base + per_byte·bytes + per_packet·packets.
struct Cost {
  double base_us = 0;
  double per_byte_us = 0;
  double per_packet_us = 0;
  [[nodiscard]] double at(std::uint64_t bytes, std::uint64_t packets) const {
    return base_us + per_byte_us * static_cast<double>(bytes) +
           per_packet_us * static_cast<double>(packets);
  }
  friend bool operator==(const Cost&, const Cost&) = default;
};

enum class ModelKind {
  postal,     // Bruck/Bar-Noy–Kipnis: sender busy 1 unit, message usable λ units after the send starts
  send_recv,  // Cordsen et al.: sender busy s, receiver busy r; a crossbar (no contention)
  loggp,      // LogGOPSim's LogGOPS backend (L, o, g, G, O, S): eager messages up to S bytes
  mesh,       // mesh or torus: links, dimension-order routing, packets, contention
  cluster,    // nodes × cores: one model between ranks of a node, another between nodes
  host,       // a registered cost model (host_model.hpp): its figures normalised to HostCosts
};

// The machine-string and profile word of a kind: postal, sr, logp, mesh, cluster; "host" for
// a registered model (model_name() says which).
const char* model_kind_name(ModelKind kind);
struct Machine;
// The machine's model as its machine string and profile name it: model_kind_name(), or the
// registered model's name for kind host.
std::string model_name(const Machine& m);

enum class Switching { wormhole, store_and_forward };
enum class SendMode { blocking, nonblocking };  // the Delta's csend and isend
enum class PlacementKind { row_major, snake, random, list };

struct MeshSpec {
  std::vector<int> dims;  // extent per dimension, row-major: dims.back() varies fastest (X)
  bool wrap = false;      // torus
  Switching switching = Switching::wormhole;
  std::uint64_t packet_bytes = 0;  // payload per packet; 0 = one packet per message
  std::uint64_t header_bytes = 0;  // added to every packet on the wire
  double link_bytes_per_us = 1;    // per channel, each direction (1 MB/s = 1 byte/µs)
  double router_delay_us = 0;      // per hop, paid by the header
  int send_buffer_packets = 1;     // csend returns once the rest of the message fits in this buffer
  [[nodiscard]] std::int64_t nodes() const;
};

struct Placement {
  PlacementKind kind = PlacementKind::row_major;
  std::uint64_t seed = 1;
  std::vector<int> nodes;  // kind == list: rank i on node nodes[i]
};

// A cluster of `nodes` nodes with `cores_per_node` ranks each: rank r lives on node
// r / cores_per_node (ranks fill the nodes in order).
struct ClusterSpec {
  int nodes = 1;
  int cores_per_node = 1;
  [[nodiscard]] int node_of(int rank) const { return rank / cores_per_node; }
};

struct Machine {
  std::string name;  // profile name or model string
  ModelKind kind = ModelKind::postal;
  // postal
  double lambda = 1;
  // send_recv
  double send_us = 1;
  double recv_us = 0;
  // loggp (µs; G and O per byte). O: the CPU's time per byte of a send and of an accept
  // (LogGOPS); S: a message of more than S bytes goes by rendezvous (kAlwaysEager: never).
  double L = 0, o = 0, g = 0, G = 0, O = 0;
  std::uint64_t S = kAlwaysEager;
  // loggp only: a network of hosts, switches and links with routing tables (LogGOPSim's
  // --network-file, read by frontend/network_file.hpp) that every message crosses as a flow
  // sharing its links' bandwidth (flow_network.hpp). Null: the complete graph without contention.
  std::shared_ptr<const NetworkTopology> network;
  // host: the registered model's name, its figures as given, and their HostCosts
  std::string host_model;
  std::vector<double> figures;
  HostCosts host;
  // mesh
  MeshSpec mesh;
  SendMode send_mode = SendMode::blocking;
  Cost send_overhead;   // CPU time of a blocking send before the NIC takes over
  Cost isend_overhead;  // CPU time of a non-blocking send
  Cost recv_overhead;   // CPU time to accept a message that has arrived
  Placement placement;
  // cluster: levels[0] is the intra-node model, levels[1] the inter-node one (each postal,
  // send_recv or loggp, their numbers in µs: a postal level's send takes 1 µs); a message uses
  // the level of its two ranks' nodes, the ranks' CPU and ports are shared by both.
  ClusterSpec cluster;
  std::vector<Machine> levels;
  // any model: local computation
  double reduce_us_per_byte = 0;
  double copy_us_per_byte = 0;
};

// The text forms of a machine (model strings, profiles, mesh extents, placements) are read by
// frontend/machines.hpp: load_machine(), parse_profile(), parse_dims(), parse_placement().

// Most ranks of a cluster machine (nodes × cores per node).
inline constexpr std::int64_t kMaxClusterRanks = std::int64_t{1} << 30;

// Largest mesh: the product of dims (the emulator keeps a few words per link and node).
inline constexpr std::int64_t kMaxMeshNodes = std::int64_t{1} << 30;

// Node of each rank 0..p-1 on `mesh` (throws InputError if the mesh has fewer than p nodes or
// the list is not a set of distinct in-range nodes of length ≥ p).
std::vector<std::int64_t> place_ranks(const MeshSpec& mesh, const Placement& placement, int p);

// The host costs of a machine (postal, sr, logp, mesh, a registered model) in the one
// vocabulary (host_model.hpp), which is all the engine reads of them:
//   postal λ     send_overhead 1, send_gap 1, wire λ, recv_overhead 0, recv_gap 1 (units of one send)
//   sr s r       send_overhead s, send_gap s, wire s, recv_overhead r, recv_gap 0
//   logp L o g G send_overhead o + O·b', send_gap g + G·b', wire o + L,
//   O S          recv_overhead o + max(O, G)·b', recv_gap g + G·b', b' = b − 1
//                (first_byte_free), eager_limit S (LogGOPSim.cpp, OP_SEND and OP_MSG)
//   mesh         send_overhead: the send mode's overhead (base, per byte, per packet), recv_overhead
//                its own; no gaps, wire 0 (the network delivers: links, routers, packets)
//   host         the registered model's costs of its figures
// reduce and copy are not host costs of a message (Machine::reduce_us_per_byte, copy_us_per_byte).
// With a network file (Machine::network) the engine charges G in the network instead of on the
// receiving side: recv_gap g, recv_overhead o + O·b' (docs/emulator.md, "Network from a DOT file").
// A cluster → PB_CHECK (its levels have the host costs).
HostCosts normalised_host_costs(const Machine& m);

// Whether a message on the machine may go by rendezvous: a finite eager limit (LogGOPS's S) in
// its host costs, or in a cluster level's.
bool has_rendezvous(const Machine& m);

// A HostCosts term for a message of `bytes` in `packets` packets (bytes charged as HostCosts says).
double cost_at(const HostCosts& costs, const Linear& term, std::uint64_t bytes, std::uint64_t packets = 1);

// The machine's receive-side λ view for messages of `bytes` on the complete-graph models: a
// message's (wire + recv_overhead) over a round's max(send_overhead, send_gap), 0 when that
// round is 0 (postal: λ; sr: 1 + r/s; loggp: (2o + L + (b−1)G)/max(o, g + (b−1)G)); 0 for mesh; a
// cluster's inter-node level when it has more than one node, else its intra-node level.
double nominal_lambda(const Machine& m, std::uint64_t bytes);

}  // namespace postbox::sim
