// Plan bookkeeping and static checks. The deadlock check executes the plan symbolically under
// the matching rule of plan.hpp, in program order (what the thread executor does); a plan that
// cannot deadlock in program order cannot deadlock in any order its deps allow either.
#include "postbox/runtime/plan.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mailbox_ring.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

std::uint64_t pair_key(int a, int b) { return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b); }


std::string where(int rank, std::size_t j, const Op& op) {
  return "rank " + std::to_string(rank) + " op " + std::to_string(j) + " (" + to_string(op.code) + ")";
}

bool overlaps(const Region& x, const Region& y) {
  if (x.buffer != y.buffer || x.bytes == 0 || y.bytes == 0) return false;
  return x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
}

// For ordering, an empty region still marks a place: a zero-byte message is a notification, and
// forwarding it (a relay in a 0-byte broadcast, a barrier's wake-up) must wait for its arrival.
// So a 0-byte region counts as the single byte at its offset.
bool overlaps_causal(Region x, Region y) {
  x.bytes = std::max<std::uint64_t>(x.bytes, 1);
  y.bytes = std::max<std::uint64_t>(y.bytes, 1);
  return overlaps(x, y);
}

// Regions an op reads and writes (at most two reads, one write).
struct Access {
  Region reads[2];
  int nreads = 0;
  Region write;
  bool writes = false;
};

Access access_of(const Op& op) {
  Access acc;
  switch (op.code) {
    case OpCode::send: acc.reads[acc.nreads++] = op.a; break;
    case OpCode::recv: acc.write = op.a; acc.writes = true; break;
    case OpCode::copy: acc.reads[acc.nreads++] = op.b; acc.write = op.a; acc.writes = true; break;
    case OpCode::reduce:
      acc.reads[acc.nreads++] = op.a;
      acc.reads[acc.nreads++] = op.b;
      acc.write = op.a;
      acc.writes = true;
      break;
  }
  return acc;
}

bool conflicts(const Op& earlier, const Op& later) {
  const Access e = access_of(earlier);
  const Access l = access_of(later);
  if (e.writes) {
    for (int i = 0; i < l.nreads; ++i) if (overlaps_causal(e.write, l.reads[i])) return true;  // RAW
    if (l.writes && overlaps_causal(e.write, l.write)) return true;                           // WAW
  }
  if (l.writes) {
    for (int i = 0; i < e.nreads; ++i) if (overlaps_causal(e.reads[i], l.write)) return true;  // WAR
  }
  return false;
}

// Reachability over one rank's deps: reach[j] has bit i when op i must precede op j.
std::vector<std::vector<std::uint64_t>> reachability(const RankProgram& prog) {
  const std::size_t n = prog.ops.size();
  const std::size_t words = (n + 63) / 64;
  std::vector<std::vector<std::uint64_t>> reach(n, std::vector<std::uint64_t>(words, 0));
  for (std::size_t j = 0; j < n; ++j) {
    for (std::uint32_t d : prog.ops[j].deps) {
      if (d >= j) continue;  // reported by validate() as a forward dep
      reach[j][d / 64] |= std::uint64_t{1} << (d % 64);
      for (std::size_t w = 0; w < words; ++w) reach[j][w] |= reach[d][w];
    }
  }
  return reach;
}

bool has_bit(const std::vector<std::uint64_t>& set, std::size_t i) { return ((set[i / 64] >> (i % 64)) & 1U) != 0; }

std::uint64_t round_ring(std::uint64_t ring_bytes) {
  // The mailboxes round each ring up to a power of two of at least 4 KiB.
  return std::bit_ceil(std::max<std::uint64_t>(ring_bytes, 4096));
}

// Symbolic execution in program order. capacity == 0: unbounded rings (a send never waits).
// Otherwise a send waits while its pair's undelivered records plus its own exceed capacity,
// unless the ring is empty and the receiver is already in the matching recv (streaming).
std::optional<std::string> simulate(const Plan& plan, std::uint64_t capacity) {
  const int p = plan.p;
  struct PairState {
    std::deque<std::uint64_t> records;  // framed sizes of undelivered messages
    std::uint64_t occupancy = 0;
  };
  std::unordered_map<std::uint64_t, PairState> pairs;
  std::vector<std::size_t> pc(static_cast<std::size_t>(p), 0);
  bool progress = true;
  auto done = [&](int r) { return pc[static_cast<std::size_t>(r)] >= plan.ranks[static_cast<std::size_t>(r)].ops.size(); };
  while (progress) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const auto& ops = plan.ranks[static_cast<std::size_t>(r)].ops;
      auto& i = pc[static_cast<std::size_t>(r)];
      while (i < ops.size()) {
        const Op& op = ops[i];
        if (op.code == OpCode::send) {
          PairState& st = pairs[pair_key(r, op.peer)];
          const std::uint64_t rec = internal::record_bytes(op.a.bytes);
          // kRingReserve: the part of a ring a sender can never count on (mailbox_ring.hpp).
          if (capacity == 0 || st.occupancy + rec + internal::kRingReserve <= capacity) {
            st.records.push_back(rec);
            st.occupancy += rec;
          } else {
            // Streaming: the receiver must be blocked in this very recv with the ring drained.
            const auto& rops = plan.ranks[static_cast<std::size_t>(op.peer)].ops;
            const std::size_t ri = pc[static_cast<std::size_t>(op.peer)];
            if (!(st.records.empty() && ri < rops.size() && rops[ri].code == OpCode::recv && rops[ri].peer == r)) break;
            ++pc[static_cast<std::size_t>(op.peer)];
          }
        } else if (op.code == OpCode::recv) {
          PairState& st = pairs[pair_key(op.peer, r)];
          if (st.records.empty()) break;
          st.occupancy -= st.records.front();
          st.records.pop_front();
        }
        ++i;
        progress = true;
      }
    }
  }
  for (int r = 0; r < p; ++r) {
    if (done(r)) continue;
    const std::size_t i = pc[static_cast<std::size_t>(r)];
    const Op& op = plan.ranks[static_cast<std::size_t>(r)].ops[i];
    std::string msg = "deadlock: " + where(r, i, op) + (op.code == OpCode::send ? " to " : " from ") +
                      std::to_string(op.peer) + " can never complete";
    const int peer = op.peer;
    if (peer >= 0 && peer < p && !done(peer)) {
      const std::size_t pi = pc[static_cast<std::size_t>(peer)];
      msg += "; " + where(peer, pi, plan.ranks[static_cast<std::size_t>(peer)].ops[pi]) + " is blocked too";
    } else if (peer >= 0 && peer < p) {
      msg += "; rank " + std::to_string(peer) + " has finished";
    }
    if (capacity != 0) msg += " (rings of " + std::to_string(capacity) + " bytes)";
    return msg;
  }
  return std::nullopt;
}

}  // namespace

void Plan::finalize() {
  std::unordered_map<std::uint64_t, std::uint32_t> sent, received;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    for (Op& o : ranks[static_cast<std::size_t>(r)].ops) {
      if (o.code == OpCode::send) o.tag = sent[pair_key(r, o.peer)]++;
      else if (o.code == OpCode::recv) o.tag = received[pair_key(o.peer, r)]++;
      else o.tag = 0;
    }
  }
}

void derive_dependencies(Plan& plan) {
  for (RankProgram& prog : plan.ranks) {
    const std::size_t n = prog.ops.size();
    const std::size_t words = (n + 63) / 64;
    std::vector<std::vector<std::uint64_t>> reach(n, std::vector<std::uint64_t>(words, 0));
    for (std::size_t j = 0; j < n; ++j) {
      Op& op = prog.ops[j];
      op.deps.clear();
      // Latest conflicting op first: anything it already implies needs no edge of its own.
      for (std::size_t i = j; i-- > 0;) {
        if (has_bit(reach[j], i) || !conflicts(prog.ops[i], op)) continue;
        op.deps.push_back(static_cast<std::uint32_t>(i));
        reach[j][i / 64] |= std::uint64_t{1} << (i % 64);
        for (std::size_t w = 0; w < words; ++w) reach[j][w] |= reach[i][w];
      }
      std::sort(op.deps.begin(), op.deps.end());
    }
  }
}

std::optional<std::string> validate(const Plan& plan) {
  const int p = plan.p;
  if (p < 1) return "plan has p = " + std::to_string(p) + " (need at least 1)";
  if (plan.ranks.size() != static_cast<std::size_t>(p)) {
    return "plan has " + std::to_string(plan.ranks.size()) + " rank programs for p = " + std::to_string(p);
  }
  if (plan.user_bytes.size() != static_cast<std::size_t>(p) || plan.scratch_bytes.size() != static_cast<std::size_t>(p)) {
    return "plan's user_bytes/scratch_bytes do not have p = " + std::to_string(p) + " entries";
  }
  if (plan.elem_bytes == 0) return "plan has elem_bytes = 0";
  if (plan.root < -1 || plan.root >= p) return "plan root " + std::to_string(plan.root) + " is outside -1..p-1";

  // Per-op checks.
  for (int r = 0; r < p; ++r) {
    const auto& ops = plan.ranks[static_cast<std::size_t>(r)].ops;
    const std::uint64_t limits[2] = {plan.user_bytes[static_cast<std::size_t>(r)],
                                     plan.scratch_bytes[static_cast<std::size_t>(r)]};
    auto inside = [&](const Region& g) {
      const auto b = static_cast<std::size_t>(g.buffer);
      return b < 2 && g.offset <= limits[b] && g.bytes <= limits[b] - g.offset;
    };
    auto region_str = [](const Region& g) {
      return std::string(g.buffer == Buffer::user ? "user" : "scratch") + "[" + std::to_string(g.offset) + ", +" +
             std::to_string(g.bytes) + ")";
    };
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const Op& op = ops[j];
      for (std::uint32_t d : op.deps) {
        if (d >= j) return where(r, j, op) + ": dependency on op " + std::to_string(d) + " does not point backwards";
      }
      if (!inside(op.a)) return where(r, j, op) + ": region " + region_str(op.a) + " lies outside its buffer";
      const bool two = op.code == OpCode::reduce || op.code == OpCode::copy;
      if (two && !inside(op.b)) return where(r, j, op) + ": region " + region_str(op.b) + " lies outside its buffer";
      if (op.code == OpCode::send || op.code == OpCode::recv) {
        if (op.peer < 0 || op.peer >= p) return where(r, j, op) + ": peer " + std::to_string(op.peer) + " is outside 0..p-1";
        if (op.peer == r) return where(r, j, op) + (op.code == OpCode::send ? ": sends to itself" : ": waits on itself");
        if (op.a.bytes > (std::uint64_t{1} << 30)) return where(r, j, op) + ": message larger than 1 GiB";
      } else {
        if (op.peer != -1) return where(r, j, op) + ": a local op names peer " + std::to_string(op.peer);
        if (op.a.bytes != op.b.bytes) {
          return where(r, j, op) + ": size mismatch, " + std::to_string(op.a.bytes) + " vs " + std::to_string(op.b.bytes) + " bytes";
        }
        if (op.code == OpCode::reduce && op.a.bytes % plan.elem_bytes != 0) {
          return where(r, j, op) + ": " + std::to_string(op.a.bytes) + " bytes is not a whole number of " +
                 std::to_string(plan.elem_bytes) + "-byte elements";
        }
        if (op.code == OpCode::copy && overlaps(op.a, op.b) && !(op.a == op.b)) {
          return where(r, j, op) + ": copy between overlapping regions";
        }
      }
    }
  }

  // Matching: the k-th send a→b against the k-th recv at b from a.
  struct Msg {
    int rank;
    std::size_t op;
  };
  std::unordered_map<std::uint64_t, std::vector<Msg>> sends, recvs;
  for (int r = 0; r < p; ++r) {
    const auto& ops = plan.ranks[static_cast<std::size_t>(r)].ops;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      if (ops[j].code == OpCode::send) sends[pair_key(r, ops[j].peer)].push_back({r, j});
      if (ops[j].code == OpCode::recv) recvs[pair_key(ops[j].peer, r)].push_back({r, j});
    }
  }
  for (int r = 0; r < p; ++r) {
    const auto& ops = plan.ranks[static_cast<std::size_t>(r)].ops;
    std::unordered_map<int, std::uint32_t> nth_send, nth_recv;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const Op& op = ops[j];
      if (op.code == OpCode::send) {
        const std::uint32_t k = nth_send[op.peer]++;
        if (op.tag != k) {
          return where(r, j, op) + ": tag " + std::to_string(op.tag) + " but it is send #" + std::to_string(k) + " to " +
                 std::to_string(op.peer) + " (call finalize())";
        }
        const auto it = recvs.find(pair_key(r, op.peer));
        if (it == recvs.end() || it->second.size() <= k) {
          return "unmatched send: " + where(r, j, op) + " (#" + std::to_string(k) + " to " + std::to_string(op.peer) +
                 ", " + std::to_string(op.a.bytes) + " bytes) has no matching recv at rank " + std::to_string(op.peer);
        }
        const Msg m = it->second[k];
        const Op& rv = plan.ranks[static_cast<std::size_t>(m.rank)].ops[m.op];
        if (rv.a.bytes != op.a.bytes) {
          return "size mismatch: " + where(r, j, op) + " sends " + std::to_string(op.a.bytes) + " bytes to " +
                 std::to_string(op.peer) + " but " + where(m.rank, m.op, rv) + " receives " + std::to_string(rv.a.bytes);
        }
      } else if (op.code == OpCode::recv) {
        const std::uint32_t k = nth_recv[op.peer]++;
        if (op.tag != k) {
          return where(r, j, op) + ": tag " + std::to_string(op.tag) + " but it is recv #" + std::to_string(k) + " from " +
                 std::to_string(op.peer) + " (call finalize())";
        }
        const auto it = sends.find(pair_key(op.peer, r));
        if (it == sends.end() || it->second.size() <= k) {
          return "unmatched recv: " + where(r, j, op) + " (#" + std::to_string(k) + " from " + std::to_string(op.peer) +
                 ") has no matching send at rank " + std::to_string(op.peer);
        }
      }
    }
  }

  // Hazards: two ops touching the same bytes (one of them writing) must be ordered by deps,
  // or an executor that follows only the deps (the emulator, GOAL) could race them.
  for (int r = 0; r < p; ++r) {
    const auto& prog = plan.ranks[static_cast<std::size_t>(r)];
    const auto reach = reachability(prog);
    for (std::size_t j = 0; j < prog.ops.size(); ++j) {
      for (std::size_t i = 0; i < j; ++i) {
        if (conflicts(prog.ops[i], prog.ops[j]) && !has_bit(reach[j], i)) {
          return "rank " + std::to_string(r) + ": ops " + std::to_string(i) + " (" + to_string(prog.ops[i].code) +
                 ") and " + std::to_string(j) + " (" + to_string(prog.ops[j].code) +
                 ") touch the same bytes without a dependency between them";
        }
      }
    }
  }

  return simulate(plan, 0);
}

std::optional<std::string> validate_rings(const Plan& plan, std::uint64_t ring_bytes) {
  PB_CHECK(plan.ranks.size() == static_cast<std::size_t>(plan.p), "validate_rings: plan not validated");
  return simulate(plan, round_ring(ring_bytes));
}

std::uint64_t ring_bytes_needed(const Plan& plan) {
  std::unordered_map<std::uint64_t, std::uint64_t> per_pair;
  std::uint64_t most = 0;
  for (int r = 0; r < static_cast<int>(plan.ranks.size()); ++r) {
    for (const Op& op : plan.ranks[static_cast<std::size_t>(r)].ops) {
      if (op.code != OpCode::send) continue;
      std::uint64_t& v = per_pair[pair_key(r, op.peer)];
      v += internal::record_bytes(op.a.bytes);
      most = std::max(most, v);
    }
  }
  return round_ring(most + internal::kRingReserve);
}

std::uint64_t total_message_bytes(const Plan& plan) {
  std::uint64_t total = 0;
  for (const auto& prog : plan.ranks)
    for (const Op& op : prog.ops)
      if (op.code == OpCode::send) total += op.a.bytes;
  return total;
}

std::uint64_t message_count(const Plan& plan) {
  std::uint64_t n = 0;
  for (const auto& prog : plan.ranks)
    for (const Op& op : prog.ops)
      if (op.code == OpCode::send) ++n;
  return n;
}

const char* to_string(OpCode code) noexcept {
  switch (code) {
    case OpCode::send: return "send";
    case OpCode::recv: return "recv";
    case OpCode::reduce: return "reduce";
    case OpCode::copy: return "copy";
  }
  return "?";
}

}  // namespace postbox
