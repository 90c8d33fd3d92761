// Deterministic discrete-event execution of a Plan on an emulated Machine, in virtual time.
//
// Semantics follow LogGOPSim's LogGP backend (Hoefler, Schneider, Lumsdaine, HPDC 2010),
// generalised by per-model costs; docs/emulator.md has the details. In short, per rank:
//   * a send may start when the CPU is free and the send gap has passed; it keeps the CPU for
//     the send overhead and the send port for the gap; its message enters the network;
//   * a receive is posted when the CPU is free; a message that has arrived is accepted when the
//     CPU is free and the receive gap has passed, keeping the CPU for the receive overhead;
//   * reduce/copy keep the CPU for bytes × the machine's per-byte computation time.
// Events are ordered by (virtual time, sequence number of first insertion): ties go to the
// event created first; an event postponed for a busy resource keeps its sequence number.
// Ready operations of one rank are inserted sends first, then receives, then local ops, each
// group in program order (as LogGOPSim does). Nothing depends on wall-clock time, hashing or
// addresses, so the same inputs give the same result and the same trace, byte for byte.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "postbox/runtime/plan.hpp"
#include "postbox/runtime/sim/machine.hpp"

namespace postbox::sim {

struct SimOptions {
  bool trace = false;  // record spans for write_chrome_trace()
};

struct Span {
  int track = 0;      // rank, or link index (link tracks)
  double begin_us = 0;
  double end_us = 0;
  std::uint8_t what = 0;  // 0 send, 1 recv, 2 reduce, 3 copy, 4 link busy
  int peer = -1;          // send/recv: the peer; link: the message's source rank
  int peer2 = -1;         // link: the message's destination rank
};

struct SimResult {
  double time_us = 0;                 // when the last rank finished (postal: units of one send)
  std::uint64_t events = 0;           // events processed (postponements count)
  std::vector<double> per_rank_us;    // when each rank finished its last operation
  std::uint64_t messages = 0;
  std::uint64_t packets = 0;
  std::vector<Span> rank_spans;       // when traced
  std::vector<Span> link_spans;       // when traced, mesh models only
  std::vector<std::string> link_names;  // index → "node 3 +x", "node 3 inject", ...
};

// Runs `plan`. Plan problems the run trips over (a send without its receive, mismatched sizes,
// a deadlock) and a mesh smaller than plan.p → InputError.
SimResult simulate(const Plan& plan, const Machine& machine, const SimOptions& options = {});

// Chrome trace-event JSON (opens in Perfetto / chrome://tracing): process 1 has a track per
// rank, process 2 a track per link that carried traffic. Deterministic text.
void write_chrome_trace(std::ostream& out, const SimResult& result, const Plan& plan,
                        const Machine& machine);

}  // namespace postbox::sim
