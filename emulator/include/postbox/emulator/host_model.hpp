// Host costs in one vocabulary, and the registry of cost models that map their own figures to it.
//
// The emulator's engine knows one set of host costs, LogGOPSim's (o, g, G per byte, L), and no
// model by name: every complete-graph model (postal, sr, logp, and any model registered here) is
// normalised into HostCosts once, before a run (normalised_host_costs), and the engine charges
// those. The mesh network adds its links and routers on top of its own host overheads; a cluster
// holds one HostCosts per level.
//
// Adding a cost model is one register_host_model() call: the machine string "NAME:F1:...:Fk[:C]"
// (load_machine) and a profile's [model] table (kind = "NAME", one field per figure) then make
// such machines, and simulate(), nominal_lambda() and the pacing of rounds use its costs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace postbox::sim {

// base + per_byte·bytes + per_packet·packets, in the machine's unit (µs; postal: one send).
struct Linear {
  double base = 0;
  double per_byte = 0;
  double per_packet = 0;
  friend bool operator==(const Linear&, const Linear&) = default;
};

// HostCosts::eager_limit of a machine without rendezvous: every message is eager.
inline constexpr std::uint64_t kAlwaysEager = ~std::uint64_t{0};

// A message of b bytes (packets: its packets on a mesh, else 1) between two ranks, in the
// machine's unit; "bytes charged" is b, or b − 1 when first_byte_free (LogGP's (s − 1)·G):
//   the sender is busy            send_overhead(b) from the send's start;
//   its next send starts          send_gap(b) after this one's start, at the earliest;
//   the message is usable         wire after the send's start (a mesh: when its last packet arrives);
//   the receiver is busy          recv_overhead(b) from when it accepts the message;
//   its next accept starts        recv_gap(b) after this one's start, at the earliest;
//   a message of more than eager_limit bytes goes by rendezvous (LogGOPSim's S): its send
//   completes only when the receiver matches it (docs/emulator.md, "Rendezvous").
// One round of a paced plan (plan.hpp) is σ = max(send_overhead, send_gap) long and a message
// takes wire + recv_overhead; their ratio is the model's λ (nominal_lambda).
struct HostCosts {
  Linear send_overhead;
  Linear send_gap;
  double wire = 0;
  Linear recv_overhead;
  Linear recv_gap;
  bool first_byte_free = false;
  std::uint64_t eager_limit = kAlwaysEager;
  friend bool operator==(const HostCosts&, const HostCosts&) = default;
};

// A registered cost model: its machine-string name, the names of its figures in order (the
// machine string's numbers, a profile's fields), and the map from figures to host costs. costs
// may throw InputError for figures the model does not allow (each figure is already a finite
// number in 0..1e9).
struct HostModel {
  std::string name;
  std::vector<std::string> figures;
  std::string summary;  // one line: what the model charges
  std::function<HostCosts(const std::vector<double>& figures)> costs;
};

// Registers (or replaces) a model. Its name must be a lower-case word (a-z, 0-9, '-') that is
// none of the built-in machine kinds and profiles' words: postal, sr, crossbar, logp, mesh,
// cluster (PB_CHECK otherwise). Thread-safe.
void register_host_model(HostModel model);
// The registered model of that name; nullopt if none.
std::optional<HostModel> find_host_model(std::string_view name);
// Every registered model's name, sorted.
std::vector<std::string> host_model_names();

}  // namespace postbox::sim
