// A plan: the single description of who sends what to whom, in which order. It is the
// runtime's instruction set (../shared/design.md): collectives/ builds plans from trees and
// algorithms; the thread executor runs them on a Team, the emulator runs them in virtual
// time, the exporters write GOAL/JSON/DOT. No algorithm is written twice.
//
// Per rank, a program of operations over regions of that rank's buffers:
//   send(peer, region)       region's bytes go to peer (send-and-forget)
//   recv(peer, region)       the next message from peer lands in region
//   reduce(dst, src)         dst = dst ⊕ src element-wise (or src ⊕ dst, see Op::src_first),
//                            with the user's operator, elements of Plan::elem_bytes bytes
//   copy(dst, src)           memcpy within the rank
// Ordering: op j may start once every op in its deps has completed. Ops without a dependency
// between them may run in any order, so receives that may complete in any order are allowed.
// Matching rule: for each ordered pair (a, b), the k-th send from a to b in a's program order
// matches the k-th recv from a in b's program order; executors keep sends to one peer, and
// receives from one peer, in program order. `tag` is that k (sequence per pair), kept for GOAL.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace postbox {

enum class Buffer : std::uint8_t {
  user = 0,     // the caller's buffer at this rank (its size is Plan::user_bytes[rank])
  scratch = 1,  // plan-owned scratch space (Plan::scratch_bytes[rank] bytes)
};

struct Region {
  Buffer buffer = Buffer::user;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  friend bool operator==(const Region&, const Region&) = default;
};

enum class OpCode : std::uint8_t { send, recv, reduce, copy };

// "send", "recv", "reduce", "copy".
const char* to_string(OpCode code) noexcept;

struct Op {
  OpCode code = OpCode::send;
  int peer = -1;        // send: destination; recv: source; reduce/copy: -1
  Region a;             // send: source bytes; recv: destination; reduce/copy: destination
  Region b;             // reduce/copy: source (unused for send/recv)
  bool src_first = false;  // reduce: dst = b ⊕ a instead of a ⊕ b (for non-commutative ops)
  std::uint32_t tag = 0;   // per (sender, receiver) sequence number; filled by Plan::finalize()
  std::vector<std::uint32_t> deps;  // indices of earlier ops of the same rank
};

struct RankProgram {
  std::vector<Op> ops;
};

struct Plan {
  std::string op;    // "bcast", "reduce", "gather", "allreduce", "s2p", ...
  std::string algo;  // "binomial", "postal", ...
  int p = 0;
  int root = -1;     // -1 when the operation has no root
  std::uint64_t bytes = 0;      // the operation's message size (per rank contribution)
  std::uint32_t elem_bytes = 1; // reduce granularity
  bool needs_commutative = false;  // the reduce order depends on arrival order
  std::vector<std::uint64_t> user_bytes;     // per rank
  std::vector<std::uint64_t> scratch_bytes;  // per rank
  std::vector<RankProgram> ranks;

  // Fills tags (per-pair sequence numbers). Builders call it last.
  void finalize();
};

// The first problem found, or nullopt when the plan is sound: every send has its matching
// receive with the same size, no rank sends to or waits on itself, regions lie inside their
// buffers, deps point backwards, reduce regions are whole elements of equal size, and the
// dependency graph across ranks cannot deadlock under the matching rule.
std::optional<std::string> validate(const Plan& plan);

// ---- Extensions (issue 4) -------------------------------------------------------------------

// Replaces every op's deps by those its regions require, in program order: op j depends on each
// earlier op i of the same rank whose bytes it reads after i wrote them, writes after i read
// them, or writes after i wrote them (send reads a; recv writes a; copy reads b, writes a;
// reduce reads a and b, writes a), transitively reduced. Ops with no such conflict get no edge,
// so receives into distinct regions may complete in any order. Builders call it before finalize().
void derive_dependencies(Plan& plan);

// The thread executor runs each rank's ops in program order over bounded per-pair rings
// (mailbox.hpp): a send waits while the ring lacks room. The first way program-order execution
// could block forever with rings of ring_bytes (rounded up as the mailboxes do), or nullopt.
// validate() already covers unbounded rings.
std::optional<std::string> validate_rings(const Plan& plan, std::uint64_t ring_bytes);

// A ring capacity (power of two, >= 4 KiB) with which validate_rings() passes whenever
// validate() does: the most bytes, framing included, that any pair ever carries in the plan.
std::uint64_t ring_bytes_needed(const Plan& plan);

// Total message bytes the plan moves (every send's payload) and the number of messages.
std::uint64_t total_message_bytes(const Plan& plan);
std::uint64_t message_count(const Plan& plan);

}  // namespace postbox
