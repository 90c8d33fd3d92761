// Deterministic discrete-event execution of a Plan or GOAL schedule on an emulated Machine, in
// virtual time (integer ticks, ticks.hpp).
//
// Semantics follow LogGOPSim's LogGP backend (Hoefler, Schneider, Lumsdaine, HPDC 2010),
// generalised by per-model costs; docs/emulator.md has the details. In short, per rank:
//   * a send may start when the CPU is free and the send gap has passed; it keeps the CPU for
//     the send overhead and the send port for the gap; its message enters the network;
//   * a receive is posted when the CPU is free; a message that has arrived is accepted when the
//     CPU is free and the receive gap has passed, keeping the CPU for the receive overhead;
//   * reduce/copy keep the CPU for bytes × the machine's per-byte computation time, a GOAL calc
//     for its time.
// Events are ordered by (virtual time, sequence number of first insertion): ties go to the
// event created first; an event that finds its resource busy keeps its sequence number and runs
// when the resource frees, before later-created events of that time. Ready operations of one
// rank are inserted sends first, then receives, then local ops, each group in program order (as
// LogGOPSim does). On a mesh, the network's events of a tick run before the ranks' events of that
// tick. On a wormhole mesh a channel asked for by several headers at one tick goes to the one
// coming through the lowest input port (docs/emulator.md, "Arbitration"), so the order the
// network's events of one tick run in changes nothing; a store-and-forward link serves packets
// in the order their steps run. Nothing depends on wall-clock time, hashing or addresses, so the
// same inputs give the same result and the same trace, byte for byte.
//
// Cost: each operation start and message acceptance is handled once, at the time it happens:
// events wait for a busy rank in per-rank queues instead of being put back into the global one,
// so the work is O(log n) per event however many wait. A wormhole packet costs one event for
// its end plus about one per busy channel on its way, whatever its path.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "postbox/runtime/plan.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/emulator/noise.hpp"
#include "postbox/emulator/schedule.hpp"
#include "postbox/runtime/ticks.hpp"

namespace postbox::sim {

struct SimOptions {
  bool trace = false;  // record spans (frontend/trace_writer.hpp writes them as a Chrome trace)
  // The first landing's discipline: one global queue, and an event that finds its rank busy is
  // put back at the time the rank frees (LogGOPSim's loop). Same results, more events handled;
  // kept to check the default against and to measure it (bench/bench_emulator.cpp).
  bool reference_queue = false;
  // Mesh models: every step of a packet (a channel asked for, a store-and-forward link crossed)
  // as its own queue event. By default a wormhole header goes on through the free channels of
  // its path inside one event, and a store-and-forward step due before any other event is
  // handled inside the event before it (same results, fewer events); kept to check the default
  // against. reference_queue implies it.
  bool per_hop_mesh = false;
  // Per rank, the lengths of its queue of posted receives and of unexpected messages at the
  // points LogGOPSim's --qstat samples them (SimResult::queues).
  bool queue_stats = false;
  // Called with (operations completed, operations in the schedule) after every 65 536th
  // completed operation, from the simulating thread: a long run can show how far it is. Empty: no
  // call (the run pays one predictable branch per operation).
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  // OS noise (noise.hpp; not owned, outlives the run): every stretch of CPU time a rank spends
  // on an operation (a send's overhead, a message's receive overhead, reduce, copy, calc) runs
  // only outside the rank's detours, so a detour it meets lengthens it by the detour's length.
  // A send's message leaves when its stretched overhead ends. Gaps (the NIC) and the network are
  // not touched. Null: no noise, and the run is the same, tick for tick, as without the field.
  const Noise* noise = nullptr;
};

// One rank's matching queues (SimOptions::queue_stats), sampled where LogGOPSim's --qstat samples
// them: the posted-receive queue each time a message is accepted (before it is matched), the
// unexpected-message queue each time a receive is posted (before it is matched). A queue holds
// receives posted and not yet matched, or messages accepted and not yet received. Means are over
// the samples (0 without any).
struct QueueStats {
  std::uint32_t max_posted = 0;
  double mean_posted = 0;
  std::uint32_t max_unexpected = 0;
  double mean_unexpected = 0;
  friend bool operator==(const QueueStats&, const QueueStats&) = default;
};

struct Span {
  int track = 0;      // rank, or link index (link tracks)
  double begin_us = 0;
  double end_us = 0;
  std::uint8_t what = 0;  // 0 send, 1 recv, 2 reduce, 3 copy, 4 link busy, 5 calc, 6 noise (a detour)
  int peer = -1;          // send/recv: the peer; link: the message's source rank
  int peer2 = -1;         // link: the message's destination rank
};

// Where a link track of a mesh run is: a network link leaving `node` along `axis` (0 = x, the
// last dim; 1 = y, ...) in direction + or −, on virtual channel `vc` of `vcs`, or the node's
// injection or ejection channel.
struct LinkPlace {
  enum class Kind : std::uint8_t { unused, link, inject, eject };
  Kind kind = Kind::unused;  // unused: no traffic crossed this index
  std::int64_t node = -1;
  int axis = 0;       // link only
  int dim = 0;        // link only: the same axis as an index into the mesh's dims (dims − 1 − axis)
  bool plus = true;   // link only
  int vc = 0;         // link only
  int vcs = 1;        // virtual channels per link on this mesh
};
// Its name as text ("node 3 +x"): link_name() in frontend/trace_writer.hpp.

struct SimResult {
  Ticks time_ticks = 0;               // when the last rank finished, exact
  double time_us = 0;                 // the same in the model's unit (postal: units of one send)
  std::vector<Ticks> per_rank_ticks;  // when each rank finished its last operation
  std::vector<double> per_rank_us;
  std::uint64_t events = 0;      // operation starts, message acceptances, mesh network steps (queue events)
  std::uint64_t postponed = 0;   // reference_queue: events put back because their rank was busy
  // The default discipline: the most rank events waiting at once (each an event node, the run's
  // memory that grows with its width; docs/emulator.md "Memory per rank"). 0 under reference_queue.
  std::uint64_t max_waiting_events = 0;
  std::uint64_t inline_steps = 0;  // mesh steps handled inside an event of their own packet's or another's (not in events)
  // Mesh models: how many times a packet got a link or ejection channel later than the tick its
  // header asked for it (wormhole), or found a link still busy (store-and-forward). A message's
  // packets queueing for their own node's injection channel are not counted.
  std::uint64_t channel_waits = 0;
  // Wormhole: of those waits, the ones where the header that had the channel before asked for it
  // at the same tick, so the arbitration rule (input port order) chose who waited.
  std::uint64_t channel_ties = 0;
  std::uint64_t messages = 0;
  // Messages sent by rendezvous: more than the machine's eager limit (LogGOPS's S) bytes.
  std::uint64_t rendezvous = 0;
  std::uint64_t packets = 0;
  // SimOptions::noise: the CPU time the detours added to the ranks' operations, all ranks together.
  Ticks noise_ticks = 0;
  double noise_us = 0;                // the same in the model's unit
  // A network file: the most flows that shared one link at once, and how many flows ran slower
  // than full speed at some point (another flow on a link of their route).
  std::uint32_t max_link_flows = 0;
  std::uint64_t slowed_flows = 0;
  std::vector<Span> rank_spans;       // when traced; with noise, a detour met by an operation is a span of its own (what 6) inside the operation's
  std::vector<Span> link_spans;       // when traced, mesh models only
  std::vector<LinkPlace> links;       // when traced, mesh models: link index → its place
  std::vector<QueueStats> queues;     // SimOptions::queue_stats: one per rank, else empty
};

// Most packets one run may send through a mesh (the sum over its messages of their packets).
// Measured per packet on a 2-core box at stop 22 (whole command): 0.27 µs for the Delta's 16 MiB
// binomial broadcast over 16 ranks, 0.9 µs for its all-to-all over 512, 4.7 µs for that
// all-to-all switched store-and-forward (congested) — about 5 s, 15 s and 80 s at this bound.
inline constexpr std::uint64_t kMaxMeshPackets = std::uint64_t{1} << 24;

// Runs the schedule. What the run trips over (a send never received, a receive never matched,
// a message larger than its receive, a deadlock or dependency cycle, a mesh smaller than p,
// more than kMaxMeshPackets packets on a mesh, a cluster with fewer than p cores, noise
// (SimOptions::noise) with a network file (Machine::network), a network file
// (Machine::network) on a machine other than logp, with fewer than p hosts or without a route a
// message needs, virtual time past kMaxTicks, a schedule too large for the memory) → InputError.
SimResult simulate(const Schedule& schedule, const Machine& machine, const SimOptions& options = {});
// simulate(schedule_of(plan), ...).
SimResult simulate(const Plan& plan, const Machine& machine, const SimOptions& options = {});

// The Chrome trace of a result: write_chrome_trace() in frontend/trace_writer.hpp.

}  // namespace postbox::sim
