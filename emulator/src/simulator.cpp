// The discrete-event engine. Model semantics: docs/emulator.md; the host rules are LogGOPSim's
// (LogGOPSim.cpp, OP_SEND / OP_RECV / OP_LOCOP / OP_MSG) with per-model costs.
//
// Scheduling. LogGOPSim keeps every event in one queue and puts an event back whenever its
// host's CPU or NIC is busy, so a rank with k waiting events costs O(k) per busy period: a flat
// broadcast over p ranks handles O(p²) events. Putting back has no effect but delay, so an event
// e of rank r, created at t_e with sequence number s_e, runs at its effective key
// (max(t_e, need), s_e), need being the time r's resource for e's class frees (the CPU and send
// port for a send, the CPU for local work, the CPU and receive port for a message, nothing for
// posting a receive). Here each rank keeps its events: one pending heap by (t, seq) and, per
// class, a ready heap by seq of the events whose t has passed their class's need (all of which
// share the key time `need`). A rank's next event is the least of its ready heads and its
// pending head; ranks sit in one indexed heap by that key. Every event is handled once, at its
// effective key, so the order — and every result — equals the put-back loop's, which
// SimOptions::reference_queue still runs (the tests compare the two).
#include "postbox/emulator/simulator.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/limits.hpp"

namespace postbox::sim {
namespace {

constexpr std::uint32_t kNone = ~std::uint32_t{0};
constexpr std::int32_t kNil = -1;
constexpr Ticks kBlocked = std::numeric_limits<Ticks>::max();

enum EvKind : std::uint8_t {
  kOp,        // a = global op: the op is ready to start
  kArrive,    // a = message (recv op for a plan off the mesh): all its bytes are at the destination
  kInject,    // a = message: the send overhead is over, packets go to the NIC (mesh)
  kHop,       // a = packet: it finished traversing (wormhole: its header entered) its current link
  kWormDone,  // a = packet: the worm's tail reached the destination (wormhole)
};

// Resource classes of a rank's events (docs/emulator.md): what each waits for.
enum Class : std::uint8_t { kSendClass, kLocalClass, kArriveClass, kPostClass, kClasses };

struct Node {  // an event in a rank's pairing heaps
  Ticks t = 0;
  std::uint64_t seq = 0;
  std::uint32_t a = 0;
  EvKind kind = kOp;
  std::int32_t child = kNil;
  std::int32_t next = kNil;
};

struct Event {  // an event in a global queue (network events; everything in reference mode)
  Ticks t;
  std::uint64_t seq;
  std::uint32_t a;
  EvKind kind;
};

// At one tick the network's events come before the ranks' (on a mesh: a message's arrival then
// takes the same place among its rank's events whatever order the network's events ran in), and
// events of one side in the order they were created.
constexpr bool rank_kind(EvKind k) { return k == kOp || k == kArrive; }
struct NetAfter {  // the network's own queue (all of one side)
  bool operator()(const Event& x, const Event& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
};
struct EventAfter {
  bool operator()(const Event& x, const Event& y) const {
    if (x.t != y.t) return x.t > y.t;
    if (rank_kind(x.kind) != rank_kind(y.kind)) return rank_kind(x.kind);
    return x.seq > y.seq;
  }
};

struct Msg {
  int src = 0, dst = 0;
  std::uint64_t bytes = 0;
  std::int32_t tag = 0;
  std::uint32_t send_op = 0, recv_op = kNone;
  std::uint32_t packets = 1;
  std::uint32_t delivered = 0;
  std::uint32_t injected = 0;
  std::uint32_t first_packet = 0;
  bool blocking = false;  // the sender's CPU waits for injection (csend)
  Ticks overhead_end = 0;
};

constexpr std::uint64_t kNoEvent = ~std::uint64_t{0};

struct Packet {
  std::uint32_t msg = 0;
  std::int32_t next_waiter = kNil;
  std::uint64_t wire_bytes = 0;
  std::int64_t link = -1;             // the last channel its header took (store-and-forward: its current link)
  Ticks req_t = 0;                    // wormhole, while it waits: the tick it asked
  std::uint64_t pending = kNoEvent;   // wormhole: the sequence number of its one queued event
  std::uint32_t key = 0;              // wormhole, while it waits: its request's key
  bool waiting = false;
};

// Everything the engine keeps per rank, in one cache line and a bit.
struct RankState {
  Ticks cpu = 0;   // LogGOPSim nexto (kBlocked during a blocking send)
  Ticks sgap = 0;  // nextgs
  Ticks rgap = 0;  // nextgr
  Ticks finish = 0;
  Ticks sched_t = -1;  // key of the rank's entry in the rank queue (-1: none)
  std::uint64_t sched_seq = 0;
  // The rank's events: the pending heap by (t, seq) and a ready heap by seq per class.
  std::int32_t pending = kNil;
  std::int32_t ready[kClasses] = {kNil, kNil, kNil, kNil};
  std::uint8_t dirty = 0;
};

// Everything the engine keeps per op; the successors of op g are succ_[op_[g].succ, op_[g + 1].succ).
struct OpState {
  std::uint32_t remaining = 0;  // deps (and irequires) not yet satisfied
  std::uint32_t succ = 0;
  std::int32_t rank = 0;
  std::uint8_t flags = 0;
};

// A HostCosts term (host_model.hpp) in ticks.
struct TickTerm {
  Ticks base = 0;
  PerByte per_byte;
  Ticks per_packet = 0;
};

// The host costs the engine charges (normalised_host_costs, in ticks), the local computation,
// and on a mesh its links and routers.
struct Costs {
  TickTerm send_overhead, send_gap, recv_overhead, recv_gap;
  Ticks wire = 0;
  bool first_byte_free = false;
  PerByte reduce, copy;
  Ticks router = 0;
  PerByte link;
};

// Dynamic matching of GOAL receives (any source, any tag) with arrived messages, in the order
// LogGOPSim searches its queues: a message takes the earliest posted receive it matches, a
// receive the earliest accepted message it matches. Posted receives sit in one of four bins by
// (source or any, tag or any); messages in four lists at once (exact, by source, by tag, any),
// consumed lazily. Every step is a few hash look-ups.
class Matcher {
 public:
  // The earliest posted receive at dst matching (src, tag), removed; kNone if none.
  std::uint32_t take_recv(int dst, int src, std::int32_t tag) {
    std::uint32_t best = kNone;
    std::uint64_t best_seq = ~std::uint64_t{0};
    Bin* from = nullptr;
    for (const auto& k : {key(dst, src, tag), key(dst, -1, tag), key(dst, src, -1), key(dst, -1, -1)}) {
      auto it = recvs_.find(k);
      if (it == recvs_.end() || it->second.head == it->second.items.size()) continue;
      const auto& [seq, op] = it->second.items[it->second.head];
      if (seq < best_seq) {
        best_seq = seq;
        best = op;
        from = &it->second;
      }
    }
    if (from != nullptr) from->pop();
    return best;
  }
  void post_recv(int dst, int src, std::int32_t tag, std::uint32_t op) { recvs_[key(dst, src, tag)].push({posted_++, op}); }

  // The earliest unexpected message at dst matching (src or -1, tag or -1), removed; kNone if none.
  std::uint32_t take_msg(int dst, int src, std::int32_t tag) {
    auto it = msgs_.find(key(dst, src, tag));
    if (it == msgs_.end()) return kNone;
    Bin& b = it->second;
    while (b.head < b.items.size() && consumed_[b.items[b.head].second]) b.pop();
    if (b.head == b.items.size()) return kNone;
    const std::uint32_t m = b.items[b.head].second;
    b.pop();
    consumed_[m] = 1;
    --unexpected_;
    return m;
  }
  void add_msg(int dst, int src, std::int32_t tag, std::uint32_t m) {
    if (consumed_.size() <= m) consumed_.resize(static_cast<std::size_t>(m) + 1, 0);
    consumed_[m] = 0;
    for (const auto& k : {key(dst, src, tag), key(dst, -1, tag), key(dst, src, -1), key(dst, -1, -1)})
      msgs_[k].push({0, m});
    ++unexpected_;
  }
  [[nodiscard]] std::uint64_t unexpected() const { return unexpected_; }
  // Some message still waiting for a receive (for the error message).
  [[nodiscard]] std::uint32_t any_unexpected() const {
    for (std::uint32_t m = 0; m < consumed_.size(); ++m)
      if (!consumed_[m]) return m;
    return kNone;
  }

 private:
  struct Key {
    std::int64_t dst_src;
    std::int64_t tag;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      return static_cast<std::size_t>(static_cast<std::uint64_t>(k.dst_src) * 0x9E3779B97F4A7C15ULL ^
                                      static_cast<std::uint64_t>(k.tag) * 0xC2B2AE3D27D4EB4FULL);
    }
  };
  struct Bin {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> items;
    std::size_t head = 0;
    void push(std::pair<std::uint64_t, std::uint32_t> x) { items.push_back(x); }
    void pop() {
      if (++head == items.size()) {
        items.clear();
        head = 0;
      }
    }
  };
  static Key key(int dst, int src, std::int32_t tag) {
    return Key{(static_cast<std::int64_t>(dst) << 32) | static_cast<std::uint32_t>(src), tag};
  }
  std::unordered_map<Key, Bin, KeyHash> recvs_, msgs_;
  std::vector<std::uint8_t> consumed_;
  std::uint64_t posted_ = 0;
  std::uint64_t unexpected_ = 0;
};

TickTerm tick_term(const Linear& x, const std::string& what) {
  return TickTerm{to_ticks(x.base, "the machine's " + what), to_per_byte(x.per_byte, "the machine's " + what + " per byte"),
                  to_ticks(x.per_packet, "the machine's " + what + " per packet")};
}

Costs costs_of(const Machine& m) {
  Costs c;
  c.reduce = to_per_byte(m.reduce_us_per_byte, "the machine's reduce time per byte");
  c.copy = to_per_byte(m.copy_us_per_byte, "the machine's copy time per byte");
  if (m.kind == ModelKind::cluster) {
    if (m.levels.size() != 2) throw InputError("cluster machine '" + m.name + "' needs an intra-node and an inter-node model");
    for (const Machine& l : m.levels)
      if (l.kind == ModelKind::mesh || l.kind == ModelKind::cluster)
        throw InputError("cluster machine '" + m.name + "': a level must be postal, sr, logp or a registered model");
    return c;  // the levels' costs are charged (level_costs)
  }
  if (m.kind == ModelKind::mesh) {
    c.router = to_ticks(m.mesh.router_delay_us, "router delay");
    if (!(m.mesh.link_bytes_per_us > 0)) throw InputError("mesh link bandwidth must be positive");
    c.link = to_per_byte(1.0 / m.mesh.link_bytes_per_us, "the link's time per byte");
  }
  const HostCosts h = normalised_host_costs(m);
  c.send_overhead = tick_term(h.send_overhead, "send overhead");
  c.send_gap = tick_term(h.send_gap, "gap between sends");
  c.wire = to_ticks(h.wire, "the machine's latency");
  c.recv_overhead = tick_term(h.recv_overhead, "receive overhead");
  c.recv_gap = tick_term(h.recv_gap, "gap between receives");
  c.first_byte_free = h.first_byte_free;
  return c;
}

// The costs of each level of a cluster (intra-node, inter-node); empty for other models.
std::vector<Costs> level_costs(const Machine& m) {
  std::vector<Costs> out;
  if (m.kind == ModelKind::cluster)
    for (const Machine& l : m.levels) out.push_back(costs_of(l));
  return out;
}

class Engine {
 public:
  Engine(const Schedule& s, const Machine& m, const SimOptions& opt)
      : s_(s), m_(m), opt_(opt), c_(costs_of(m)), levels_(level_costs(m)), dynamic_(s.partner.empty()),
        mesh_(m.kind == ModelKind::mesh), msg_records_(dynamic_ || mesh_) {}

  SimResult run() {
    build();
    if (mesh_) build_mesh();
    for (int r = 0; r < s_.p; ++r) {
      ready_.clear();
      for (std::uint32_t g = s_.first[static_cast<std::size_t>(r)]; g < s_.first[static_cast<std::size_t>(r) + 1]; ++g)
        if (op_[g].remaining == 0) ready_.push_back(g);
      push_ready_sorted(ready_, 0);
    }
    if (opt_.reference_queue) run_reference();
    else run_lazy();
    finish_checks();
    res_.per_rank_ticks.resize(static_cast<std::size_t>(s_.p));
    res_.per_rank_us.resize(static_cast<std::size_t>(s_.p));
    Ticks end = 0;
    for (int r = 0; r < s_.p; ++r) {
      const Ticks f = ranks_[static_cast<std::size_t>(r)].finish;
      res_.per_rank_ticks[static_cast<std::size_t>(r)] = f;
      res_.per_rank_us[static_cast<std::size_t>(r)] = to_units(f);
      end = std::max(end, f);
    }
    res_.time_ticks = end;
    res_.time_us = to_units(end);
    res_.packets = packets_.size();
    if (opt_.trace && mesh_) place_links();
    return std::move(res_);
  }

 private:
  // ---- set-up ----
  void build() {
    const std::uint32_t n = s_.ops();
    if (s_.p < 1 || s_.first.size() != static_cast<std::size_t>(s_.p) + 1 || s_.first.back() != n)
      throw InputError("schedule: p = " + std::to_string(s_.p) + " does not match its rank programs");
    if (m_.kind == ModelKind::cluster &&
        static_cast<std::int64_t>(m_.cluster.nodes) * m_.cluster.cores_per_node < s_.p)
      throw InputError("cluster has " + std::to_string(m_.cluster.nodes) + " nodes x " +
                       std::to_string(m_.cluster.cores_per_node) + " cores, fewer than p = " + std::to_string(s_.p));
    const std::uint64_t per_op = sizeof(OpState) + 4 + (opt_.reference_queue ? 0 : sizeof(Node) / 2);
    const std::uint64_t per_rank = sizeof(RankState) + 8 + 8 + 24;
    require_memory(per_op * n + per_rank * static_cast<std::uint64_t>(s_.p) + 4ULL * s_.deps.size(),
                             "simulating " + std::to_string(n) + " operations on " + std::to_string(s_.p) + " ranks");
    op_.assign(static_cast<std::size_t>(n) + 1, OpState{});
    for (int r = 0; r < s_.p; ++r)
      for (std::uint32_t g = s_.first[static_cast<std::size_t>(r)]; g < s_.first[static_cast<std::size_t>(r) + 1]; ++g)
        op_[g].rank = r;
    auto successors = [&](const std::vector<std::uint32_t>& first, const std::vector<std::uint32_t>& list,
                          std::vector<std::uint32_t>& out_first, std::vector<std::uint32_t>& out) {
      out_first.assign(static_cast<std::size_t>(n) + 1, 0);
      for (std::uint32_t g = 0; g < n; ++g) {
        const std::uint32_t base = s_.first[static_cast<std::size_t>(op_[g].rank)];
        const std::uint32_t count = s_.first[static_cast<std::size_t>(op_[g].rank) + 1] - base;
        op_[g].remaining += first[g + 1] - first[g];
        for (std::uint32_t i = first[g]; i < first[g + 1]; ++i) {
          if (list[i] >= count)
            throw InputError(s_.where(g) + " depends on op " + std::to_string(list[i]) + " of a rank with " +
                             std::to_string(count) + " ops");
          ++out_first[base + list[i] + 1];
        }
      }
      for (std::uint32_t g = 0; g < n; ++g) out_first[g + 1] += out_first[g];
      out.resize(out_first.back());
      std::vector<std::uint32_t> fill(out_first.begin(), out_first.end() - 1);
      for (std::uint32_t g = 0; g < n; ++g) {
        const std::uint32_t base = s_.first[static_cast<std::size_t>(op_[g].rank)];
        for (std::uint32_t i = first[g]; i < first[g + 1]; ++i) out[fill[base + list[i]]++] = g;
      }
    };
    {
      std::vector<std::uint32_t> first;
      successors(s_.dep_first, s_.deps, first, succ_);
      for (std::uint32_t g = 0; g <= n; ++g) op_[g].succ = first[g];
    }
    if (!s_.ideps.empty()) successors(s_.idep_first, s_.ideps, isucc_first_, isucc_);
    ranks_.assign(static_cast<std::size_t>(s_.p), RankState{});
    if (opt_.reference_queue) parked_.resize(static_cast<std::size_t>(s_.p));
    if (dynamic_) {
      for (std::uint32_t g = 0; g < n; ++g) {
        const Schedule::Item& it = s_.items[g];
        if ((it.kind == Work::send && (it.peer < 0 || it.peer >= s_.p)) ||
            (it.kind == Work::recv && (it.peer < -1 || it.peer >= s_.p)))
          throw InputError(s_.where(g) + " names rank " + std::to_string(it.peer) + ", outside 0.." + std::to_string(s_.p - 1));
      }
    }
    // Pacing (plan.hpp): rounds σ long, σ = t0 or t0·λ/L, on the complete-graph models.
    pacing_ = s_.pacing != Pacing::none && !s_.round.empty() && !mesh_ && m_.kind != ModelKind::cluster &&
              s_.pacing_latency >= 1;
    if (pacing_) {  // a round: max(send overhead, send gap); a message: wire + receive overhead
      const std::uint64_t b = s_.bytes;
      t0_ = std::max(at(c_, c_.send_overhead, b), at(c_, c_.send_gap, b));
      lat_ = c_.wire + at(c_, c_.recv_overhead, b);
    }
  }

  [[nodiscard]] Ticks round_start(std::uint32_t r) const {
    if (s_.pacing == Pacing::delay_receive) return static_cast<Ticks>(r - 1) * t0_;
    __extension__ using int128 = __int128;
    return static_cast<Ticks>((static_cast<int128>(r - 1) * lat_) / s_.pacing_latency);
  }
  [[nodiscard]] Ticks round_end(std::uint32_t r) const { return round_start(r + 1); }

  Ticks checked(Ticks t) const {
    if (t > kMaxTicks) throw InputError("virtual time passes 2^62 ticks (53 days of microseconds)");
    return t;
  }

  // ---- classes and needs ----
  [[nodiscard]] Class class_of(EvKind kind, std::uint32_t a) const {
    if (kind == kArrive) return kArriveClass;
    switch (s_.items[a].kind) {
      case Work::send: return kSendClass;
      case Work::recv: return kPostClass;
      default: return kLocalClass;
    }
  }
  [[nodiscard]] int rank_of_event(EvKind kind, std::uint32_t a) const {
    if (kind == kOp) return op_[a].rank;
    return msg_records_ ? msgs_[a].dst : op_[a].rank;
  }
  // When rank r's resource for class c frees (kBlocked while r is in a blocking send).
  [[nodiscard]] Ticks need(int r, Class c) const {
    const RankState& rs = ranks_[static_cast<std::size_t>(r)];
    if (rs.cpu == kBlocked) return kBlocked;
    switch (c) {
      case kSendClass: return std::max(rs.cpu, rs.sgap);
      case kLocalClass: return rs.cpu;
      case kArriveClass: return std::max(rs.cpu, rs.rgap);
      default: return unblocked_.empty() ? 0 : unblocked_[static_cast<std::size_t>(r)];
    }
  }

  // ---- rank heaps (pairing heaps over nodes_) ----
  template <bool BySeq>
  [[nodiscard]] bool before(std::int32_t x, std::int32_t y) const {
    const Node& a = nodes_[static_cast<std::size_t>(x)];
    const Node& b = nodes_[static_cast<std::size_t>(y)];
    if constexpr (BySeq) return a.seq < b.seq;
    return a.t != b.t ? a.t < b.t : a.seq < b.seq;
  }
  template <bool BySeq>
  std::int32_t meld(std::int32_t a, std::int32_t b) {
    if (a == kNil) return b;
    if (b == kNil) return a;
    if (before<BySeq>(b, a)) std::swap(a, b);
    nodes_[static_cast<std::size_t>(b)].next = nodes_[static_cast<std::size_t>(a)].child;
    nodes_[static_cast<std::size_t>(a)].child = b;
    return a;
  }
  template <bool BySeq>
  std::int32_t pop_root(std::int32_t root) {  // the heap without its root (two-pass pairing)
    std::int32_t first = nodes_[static_cast<std::size_t>(root)].child;
    nodes_[static_cast<std::size_t>(root)].child = kNil;
    std::int32_t stack = kNil;
    while (first != kNil) {
      const std::int32_t a = first;
      const std::int32_t b = nodes_[static_cast<std::size_t>(a)].next;
      if (b == kNil) {
        nodes_[static_cast<std::size_t>(a)].next = stack;
        stack = a;
        break;
      }
      first = nodes_[static_cast<std::size_t>(b)].next;
      nodes_[static_cast<std::size_t>(a)].next = kNil;
      nodes_[static_cast<std::size_t>(b)].next = kNil;
      const std::int32_t m = meld<BySeq>(a, b);
      nodes_[static_cast<std::size_t>(m)].next = stack;
      stack = m;
    }
    std::int32_t out = kNil;
    while (stack != kNil) {
      const std::int32_t x = stack;
      stack = nodes_[static_cast<std::size_t>(x)].next;
      nodes_[static_cast<std::size_t>(x)].next = kNil;
      out = meld<BySeq>(out, x);
    }
    return out;
  }
  std::int32_t new_node(Ticks t, std::uint64_t seq, std::uint32_t a, EvKind kind) {
    std::int32_t id;
    if (free_nodes_ != kNil) {
      id = free_nodes_;
      free_nodes_ = nodes_[static_cast<std::size_t>(id)].next;
    } else {
      if (nodes_.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw InputError("more than 2^31 events waiting at once");
      id = static_cast<std::int32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[static_cast<std::size_t>(id)] = Node{t, seq, a, kind, kNil, kNil};
    return id;
  }

  // ---- the rank queue: ranks by their next event's key ----
  // A rank's entry is pushed when its next event changes; an entry that no longer matches the
  // rank's scheduled key is stale and skipped when it surfaces. A rank's key only changes by
  // its own events (and by events inserted for it, which can only lower it), so stale entries
  // are rare.
  struct Slot {
    Ticks t;
    std::uint64_t seq;
    std::int32_t rank;
    std::int8_t src;  // which of the rank's heaps holds the event: a class, or kClasses = pending
  };
  static bool slot_before(const Slot& x, const Slot& y) { return x.t != y.t ? x.t < y.t : x.seq < y.seq; }
  struct SlotAfter {
    bool operator()(const Slot& x, const Slot& y) const { return slot_before(y, x); }
  };
  // Entries for one time mostly come in increasing seq (sequence numbers grow as events are
  // created: a postal broadcast's arrivals of one round), so each time keeps a FIFO, and only an
  // entry that would break its time's order goes to a binary heap: O(1) per event where many
  // share a time, a heap's O(log n) otherwise.
  class SlotQueue {
   public:
    [[nodiscard]] bool empty() const { return buckets_.empty() && heap_.empty(); }
    void push(const Slot& s) {
      auto [it, fresh] = buckets_.try_emplace(s.t);
      Bucket& b = it->second;
      if (fresh && !spare_.empty()) {
        b.items = std::move(spare_.back());
        spare_.pop_back();
      }
      if (b.head == b.items.size() || b.items.back().seq < s.seq) b.items.push_back(s);
      else heap_.push(s);
    }
    [[nodiscard]] const Slot& top() const {
      if (buckets_.empty()) return heap_.top();
      const Bucket& b = buckets_.begin()->second;
      const Slot& f = b.items[b.head];
      return heap_.empty() || slot_before(f, heap_.top()) ? f : heap_.top();
    }
    void pop() {
      if (!buckets_.empty()) {
        auto it = buckets_.begin();
        Bucket& b = it->second;
        if (heap_.empty() || slot_before(b.items[b.head], heap_.top())) {
          if (++b.head == b.items.size()) {
            b.items.clear();
            spare_.push_back(std::move(b.items));
            buckets_.erase(it);
          }
          return;
        }
      }
      heap_.pop();
    }

   private:
    struct Bucket {
      std::vector<Slot> items;
      std::size_t head = 0;
    };
    std::map<Ticks, Bucket> buckets_;
    std::vector<std::vector<Slot>> spare_;
    std::priority_queue<Slot, std::vector<Slot>, SlotAfter> heap_;
  };
  [[nodiscard]] bool valid(const Slot& s) const {
    const RankState& k = ranks_[static_cast<std::size_t>(s.rank)];
    return k.sched_t == s.t && k.sched_seq == s.seq;
  }
  void schedule(const Slot* best, int r) {
    RankState& k = ranks_[static_cast<std::size_t>(r)];
    if (best == nullptr) {
      k.sched_t = -1;
      return;
    }
    if (k.sched_t == best->t && k.sched_seq == best->seq) return;
    k.sched_t = best->t;
    k.sched_seq = best->seq;
    heap_.push(*best);
  }

  void mark_dirty(int r) {
    RankState& rs = ranks_[static_cast<std::size_t>(r)];
    if (!rs.dirty) {
      rs.dirty = 1;
      dirty_.push_back(r);
    }
  }
  void h_unschedule(int r) { ranks_[static_cast<std::size_t>(r)].sched_t = -1; }

  // Recomputes rank r's next event and its place in the rank heap.
  void refresh(int r) {
    RankState& h = ranks_[static_cast<std::size_t>(r)];
    if (ranks_[static_cast<std::size_t>(r)].cpu == kBlocked) {
      schedule(nullptr, r);
      return;
    }
    Ticks needs[kClasses];
    for (int c = 0; c < kClasses; ++c) needs[c] = need(r, static_cast<Class>(c));
    // Pending events whose time has passed their class's need join that class's ready heap.
    while (h.pending != kNil) {
      const Node& top = nodes_[static_cast<std::size_t>(h.pending)];
      const Class c = class_of(top.kind, top.a);
      if (top.t > needs[c]) break;
      const std::int32_t x = h.pending;
      h.pending = pop_root<false>(x);
      h.ready[c] = meld<true>(h.ready[c], x);
    }
    bool have = false;
    Slot best{0, 0, r, 0};
    if (h.pending != kNil) {
      const Node& top = nodes_[static_cast<std::size_t>(h.pending)];
      best = Slot{top.t, top.seq, r, kClasses};
      have = true;
    }
    for (int c = 0; c < kClasses; ++c) {
      if (h.ready[c] == kNil) continue;
      const Slot s{needs[c], nodes_[static_cast<std::size_t>(h.ready[c])].seq, r, static_cast<std::int8_t>(c)};
      if (!have || slot_before(s, best)) {
        best = s;
        have = true;
      }
    }
    schedule(have ? &best : nullptr, r);
  }

  // ---- queues ----
  void push_rank_event(Ticks t, std::uint32_t a, EvKind kind) { push_rank_event(t, seq_++, a, kind); }
  void push_rank_event(Ticks t, std::uint64_t seq, std::uint32_t a, EvKind kind) {
    checked(t);
    if (opt_.reference_queue) {
      q_.push(Event{t, seq, a, kind});
      return;
    }
    horizon_ = std::min(horizon_, t);  // its effective key is (max(t, need), seq) >= t
    const int r = rank_of_event(kind, a);
    RankState& h = ranks_[static_cast<std::size_t>(r)];
    const Class c = class_of(kind, a);
    // Already due for its class: straight to the ready heap (its key is (need, seq) either way).
    if (t <= need(r, c)) h.ready[c] = meld<true>(h.ready[c], new_node(t, seq, a, kind));
    else h.pending = meld<false>(h.pending, new_node(t, seq, a, kind));
    mark_dirty(r);
  }
  void push_net(Ticks t, std::uint32_t a, EvKind kind) {
    checked(t);
    horizon_ = std::min(horizon_, t);
    const Event e{t, seq_++, a, kind};
    if (opt_.reference_queue) q_.push(e);
    else net_.push(e);
  }

  void run_lazy() {
    for (;;) {
      for (int r : dirty_) {
        ranks_[static_cast<std::size_t>(r)].dirty = 0;
        refresh(r);
      }
      dirty_.clear();
      while (!heap_.empty() && !valid(heap_.top())) heap_.pop();
      const bool have_rank = !heap_.empty();
      const bool have_net = !net_.empty();
      if (!effects_.empty() && (!have_net || net_.top().t > effects_.front().t)) {
        apply_effects();
        continue;
      }
      if (!have_rank && !have_net) break;
      if (have_net && (!have_rank || net_.top().t <= heap_.top().t)) {  // network first at one tick
        const Event e = net_.top();
        net_.pop();
        ++res_.events;
        now_ = e.t;
        horizon_ = -1;
        if (!opt_.per_hop_mesh) {
          horizon_ = kMaxTicks + 1;
          if (!net_.empty()) horizon_ = net_.top().t;
          if (!heap_.empty()) horizon_ = std::min(horizon_, heap_.top().t);  // valid (cleaned above) or lower
        }
        dispatch_net(e);
        horizon_ = -1;
        continue;
      }
      const Slot top = heap_.top();
      heap_.pop();
      h_unschedule(top.rank);
      RankState& h = ranks_[static_cast<std::size_t>(top.rank)];
      std::int32_t x;
      if (top.src == kClasses) {
        x = h.pending;
        h.pending = pop_root<false>(x);
      } else {
        x = h.ready[top.src];
        h.ready[top.src] = pop_root<true>(x);
      }
      const Node nd = nodes_[static_cast<std::size_t>(x)];
      nodes_[static_cast<std::size_t>(x)].next = free_nodes_;
      free_nodes_ = x;
      mark_dirty(top.rank);
      ++res_.events;
      now_ = top.t;
      if (nd.kind == kOp) start_op(nd.a, top.t);
      else accept(nd.a, top.t);
    }
  }

  // The first landing's loop: busy → put back at the time the resource frees.
  void run_reference() {
    for (;;) {
      if (!effects_.empty() && (q_.empty() || rank_kind(q_.top().kind) || q_.top().t > effects_.front().t)) {
        apply_effects();
        continue;
      }
      if (q_.empty()) break;
      const Event e = q_.top();
      q_.pop();
      now_ = e.t;
      if (e.kind != kOp && e.kind != kArrive) {
        ++res_.events;
        dispatch_net(e);
        continue;
      }
      const int r = rank_of_event(e.kind, e.a);
      if (ranks_[static_cast<std::size_t>(r)].cpu == kBlocked) {
        parked_[static_cast<std::size_t>(r)].push_back(e);
        continue;
      }
      const Ticks t_need = need(r, class_of(e.kind, e.a));
      if (t_need > e.t) {
        ++res_.postponed;
        q_.push(Event{t_need, e.seq, e.a, e.kind});
        continue;
      }
      ++res_.events;
      if (e.kind == kOp) start_op(e.a, e.t);
      else accept(e.a, e.t);
    }
  }

  void push_ready_sorted(std::vector<std::uint32_t>& ready, Ticks lower) {
    // LogGOPSim inserts a host's newly executable ops ordered by type: send, recv, local.
    auto cls = [&](std::uint32_t g) {
      const Work k = s_.items[g].kind;
      return k == Work::send ? 0 : k == Work::recv ? 1 : 2;
    };
    if (ready.size() > 1) std::stable_sort(ready.begin(), ready.end(), [&](auto x, auto y) { return cls(x) < cls(y); });
    for (std::uint32_t g : ready) {
      const RankState& rs = ranks_[static_cast<std::size_t>(op_[g].rank)];
      const bool blocked = rs.cpu == kBlocked;
      Ticks t = blocked ? now_ : rs.cpu;
      if (s_.items[g].kind == Work::send && !blocked) t = std::max(t, rs.sgap);
      t = std::max({t, now_, lower});
      if (pacing_ && s_.items[g].kind == Work::send && s_.round[g] != 0) t = std::max(t, round_start(s_.round[g]));
      push_rank_event(t, g, kOp);
    }
  }

  void release(const std::vector<std::uint32_t>& first, const std::vector<std::uint32_t>& list, std::uint32_t g,
               Ticks lower) {
    std::vector<std::uint32_t> ready;
    for (std::uint32_t i = first[g]; i < first[g + 1]; ++i)
      if (--op_[list[i]].remaining == 0) ready.push_back(list[i]);
    if (!ready.empty()) push_ready_sorted(ready, lower);
  }

  void complete(std::uint32_t g, Ticks t_done) {
    op_[g].flags |= kDone;
    ++done_;
    RankState& rs = ranks_[static_cast<std::size_t>(op_[g].rank)];
    rs.finish = std::max(rs.finish, t_done);
    ready_.clear();
    for (std::uint32_t i = op_[g].succ; i < op_[g + 1].succ; ++i)
      if (--op_[succ_[i]].remaining == 0) ready_.push_back(succ_[i]);
    if (!ready_.empty()) push_ready_sorted(ready_, t_done);
  }

  void span_rank(int r, Ticks b, Ticks e, std::uint8_t what, int peer) {
    if (opt_.trace) res_.rank_spans.push_back(Span{r, to_units(b), to_units(e), what, peer, -1});
  }

  // ---- host costs per model ----
  [[nodiscard]] std::uint32_t packets_of(std::uint64_t bytes) const {
    if (!mesh_ || m_.mesh.packet_bytes == 0) return 1;
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (bytes + m_.mesh.packet_bytes - 1) / m_.mesh.packet_bytes));
  }
  // A term of the normalised host costs for a message of b bytes: the one formula every model's
  // costs go through (host_model.hpp), b − 1 bytes charged where the first is free (LogGP).
  [[nodiscard]] Ticks at(const Costs& c, const TickTerm& x, std::uint64_t b) const {
    const std::uint64_t charged = c.first_byte_free && b > 0 ? b - 1 : b;
    Ticks t = x.base;
    if (x.per_byte.micro_ticks != 0) t += x.per_byte.at(charged);
    if (x.per_packet != 0) t += x.per_packet * packets_of(b);
    return t;
  }

  // The costs a message between ranks a and b pays: its cluster level, else the machine's.
  [[nodiscard]] const Costs& costs(int a, int b) const {
    if (levels_.empty()) return c_;
    return levels_[m_.cluster.node_of(a) == m_.cluster.node_of(b) ? 0 : 1];
  }

  // ---- operations ----
  void start_op(std::uint32_t g, Ticks t) {
    const int r = op_[g].rank;
    RankState& rs = ranks_[static_cast<std::size_t>(r)];
    const Schedule::Item& it = s_.items[g];
    if (!isucc_first_.empty()) release(isucc_first_, isucc_, g, t);  // irequires: ops waiting for g's start
    switch (it.kind) {
      case Work::send: {
        const std::uint64_t b = it.size;
        const Costs& k = costs(r, it.peer);
        const Ticks os = at(k, k.send_overhead, b);
        rs.cpu = checked(t + os);
        rs.sgap = checked(t + at(k, k.send_gap, b));
        span_rank(r, t, t + os, 0, it.peer);
        ++res_.messages;
        if (!msg_records_) {
          push_rank_event(t + k.wire, s_.partner[g], kArrive);
          complete(g, t + os);
          return;
        }
        const std::uint32_t mi = new_msg();
        Msg& msg = msgs_[mi];
        msg = Msg{};
        msg.src = r;
        msg.dst = it.peer;
        msg.bytes = b;
        msg.tag = dynamic_ ? s_.tags[g] : 0;
        msg.send_op = g;
        msg.recv_op = dynamic_ ? kNone : s_.partner[g];
        msg.packets = packets_of(b);
        msg.overhead_end = t + os;
        if (!mesh_) {
          push_rank_event(t + k.wire, mi, kArrive);
          complete(g, t + os);
          return;
        }
        push_net(t + os, mi, kInject);
        const auto buffered = static_cast<std::uint32_t>(std::max(0, m_.mesh.send_buffer_packets));
        if (m_.send_mode == SendMode::blocking && msg.packets > buffered) {
          msg.blocking = true;
          rs.cpu = kBlocked;
        } else {
          complete(g, t + os);
        }
        return;
      }
      case Work::recv: {
        Ticks done = t;
        if (pacing_ && s_.round[g] != 0) done = std::max(done, round_end(s_.round[g]));
        if (!dynamic_) {
          if (op_[g].flags & kAccepted) complete(g, done);
          else op_[g].flags |= kPosted;
          return;
        }
        const std::uint32_t mi = matcher_.take_msg(r, it.peer, s_.tags[g]);
        if (mi == kNone) {
          matcher_.post_recv(r, it.peer, s_.tags[g], g);
          return;
        }
        check_fits(mi, g);
        free_msg(mi);
        complete(g, done);
        return;
      }
      case Work::reduce:
      case Work::copy:
      case Work::calc: {
        const Ticks cost = it.kind == Work::calc     ? static_cast<Ticks>(it.size)
                           : it.kind == Work::reduce ? c_.reduce.at(it.size)
                                                     : c_.copy.at(it.size);
        rs.cpu = checked(t + cost);
        span_rank(r, t, t + cost, it.kind == Work::reduce ? 2 : it.kind == Work::copy ? 3 : 5, -1);
        complete(g, t + cost);
        return;
      }
    }
  }

  void check_fits(std::uint32_t mi, std::uint32_t g) const {
    if (msgs_[mi].bytes > s_.items[g].size)
      throw InputError(s_.where(g) + " receives " + std::to_string(s_.items[g].size) + " bytes but the message from " +
                       std::to_string(msgs_[mi].src) + " (tag " + std::to_string(msgs_[mi].tag) + ") has " +
                       std::to_string(msgs_[mi].bytes));
  }

  void accept(std::uint32_t a, Ticks t) {
    std::uint64_t bytes;
    int d, src;
    std::uint32_t g;
    if (msg_records_) {
      const Msg& msg = msgs_[a];
      bytes = msg.bytes;
      d = msg.dst;
      src = msg.src;
      g = msg.recv_op;
    } else {
      g = a;
      bytes = s_.items[g].size;
      d = op_[g].rank;
      src = s_.items[g].peer;
    }
    RankState& rs = ranks_[static_cast<std::size_t>(d)];
    const Costs& k = costs(src, d);
    const Ticks orv = at(k, k.recv_overhead, bytes);
    rs.cpu = checked(t + orv);
    rs.rgap = checked(t + at(k, k.recv_gap, bytes));
    rs.finish = std::max(rs.finish, rs.cpu);
    span_rank(d, t, t + orv, 1, src);
    if (dynamic_) {
      g = matcher_.take_recv(d, src, msgs_[a].tag);
      if (g == kNone) {
        matcher_.add_msg(d, src, msgs_[a].tag, a);
        return;
      }
      check_fits(a, g);
    }
    if (msg_records_) free_msg(a);
    if (dynamic_ || (op_[g].flags & kPosted)) {
      Ticks done = t + orv;
      if (pacing_ && s_.round[g] != 0) done = std::max(done, round_end(s_.round[g]));
      complete(g, done);
    } else {
      op_[g].flags |= kAccepted;
    }
  }

  std::uint32_t new_msg() {
    if (!free_msgs_.empty()) {
      const std::uint32_t m = free_msgs_.back();
      free_msgs_.pop_back();
      return m;
    }
    msgs_.emplace_back();
    return static_cast<std::uint32_t>(msgs_.size() - 1);
  }
  // Unexpected messages keep their record until a receive takes them; mesh messages until
  // their last packet is delivered (accept comes after that).
  void free_msg(std::uint32_t m) { free_msgs_.push_back(m); }

  void finish_checks() {
    if (done_ == s_.ops() && (!dynamic_ || matcher_.unexpected() == 0)) return;
    if (dynamic_ && done_ == s_.ops()) {
      const std::uint32_t m = matcher_.any_unexpected();
      throw InputError(s_.where(msgs_[m].send_op) + " to " + std::to_string(msgs_[m].dst) + " (tag " +
                       std::to_string(msgs_[m].tag) + ") is never received");
    }
    for (std::uint32_t g = 0; g < s_.ops(); ++g) {
      if (op_[g].flags & kDone) continue;
      if (!dynamic_) {
        const int r = op_[g].rank;
        throw InputError("plan deadlocks in the emulator: rank " + std::to_string(r) + " op " +
                         std::to_string(g - s_.first[static_cast<std::size_t>(r)]) + " never completes");
      }
      throw InputError(s_.where(g) + " never completes (a receive without its send, a dependency cycle, or a deadlock)");
    }
  }

  // ---- mesh network ----
  void dispatch_net(const Event& e) {
    switch (e.kind) {
      case kInject: on_inject(e); break;
      case kHop: on_step(e); break;
      case kWormDone: on_worm_done(e); break;
      default: break;
    }
  }

  void build_mesh() {
    const MeshSpec& ms = m_.mesh;
    nd_ = static_cast<int>(ms.dims.size());
    nodes_count_ = ms.nodes();
    if (nodes_count_ < s_.p)
      throw InputError("mesh has " + std::to_string(nodes_count_) + " nodes, fewer than p = " + std::to_string(s_.p));
    nvc_ = ms.wrap ? 2 : 1;
    // The work is per packet (at least two events each), so a run's packets are bounded up
    // front: delta at 1 GiB made 2^21 packets per message and ran for minutes.
    std::uint64_t packets = 0;
    for (const Schedule::Item& it : s_.items)
      if (it.kind == Work::send) packets += packets_of(it.size);
    if (packets > kMaxMeshPackets)
      throw InputError("the run sends " + std::to_string(packets) + " packets through the mesh, more than " +
                       std::to_string(kMaxMeshPackets) + " (minutes of emulation): use fewer bytes or ranks");
    require_memory(packets * sizeof(Packet), "the run's " + std::to_string(packets) + " packets");
    packets_.reserve(packets);  // grown by doubling they were copied, and their pages zeroed, twice over
    node_of_ = place_ranks(ms, m_.placement, s_.p);
    net_links_ = nodes_count_ * nd_ * 2 * nvc_;
    const std::int64_t total = net_links_ + 2 * nodes_count_;
    // Per channel: owner, since, asked, key, FIFO head and tail (or free_at); per link its far node; per node its coordinates.
    require_memory(static_cast<std::uint64_t>(total) * 32 + static_cast<std::uint64_t>(net_links_) * 8 +
                       static_cast<std::uint64_t>(nodes_count_) * static_cast<std::uint64_t>(nd_) * 4,
                   "the mesh's " + std::to_string(total) + " channels");
    // Routing reads coordinates and far ends from tables: the divisions they take were about a
    // third of a contended Delta run's time.
    std::vector<std::int64_t> strides(static_cast<std::size_t>(nd_), 1);  // node index step per dimension (row-major)
    for (int d = nd_ - 2; d >= 0; --d)
      strides[static_cast<std::size_t>(d)] = strides[static_cast<std::size_t>(d) + 1] * ms.dims[static_cast<std::size_t>(d) + 1];
    coords_.resize(static_cast<std::size_t>(nodes_count_) * static_cast<std::size_t>(nd_));
    for (std::int64_t n = 0; n < nodes_count_; ++n)
      for (int d = 0; d < nd_; ++d)
        coords_[static_cast<std::size_t>(n * nd_ + d)] =
            static_cast<std::int32_t>((n / strides[static_cast<std::size_t>(d)]) % ms.dims[static_cast<std::size_t>(d)]);
    far_node_.resize(static_cast<std::size_t>(net_links_));
    for (std::int64_t n = 0; n < nodes_count_; ++n)
      for (int d = 0; d < nd_; ++d)
        for (int dir = 0; dir < 2; ++dir) {
          const int k = ms.dims[static_cast<std::size_t>(d)];
          const int c = coord(n, d);
          const int nc = dir == 0 ? (c + 1) % k : (c - 1 + k) % k;
          for (int vc = 0; vc < nvc_; ++vc)
            far_node_[static_cast<std::size_t>(((n * nd_ + d) * 2 + dir) * nvc_ + vc)] =
                n + static_cast<std::int64_t>(nc - c) * strides[static_cast<std::size_t>(d)];
        }
    if (ms.switching == Switching::wormhole) {
      owner_.assign(static_cast<std::size_t>(total), kNil);
      since_.assign(static_cast<std::size_t>(total), 0);
      oreq_.assign(static_cast<std::size_t>(total), 0);
      okey_.assign(static_cast<std::size_t>(total), 0);
      wait_head_.assign(static_cast<std::size_t>(total), kNil);
      wait_tail_.assign(static_cast<std::size_t>(total), kNil);
    } else {
      free_at_.assign(static_cast<std::size_t>(total), 0);
    }
    unblocked_.assign(static_cast<std::size_t>(s_.p), 0);
  }
  [[nodiscard]] std::int64_t inject_link(std::int64_t node) const { return net_links_ + node; }
  [[nodiscard]] std::int64_t eject_link(std::int64_t node) const { return net_links_ + nodes_count_ + node; }
  [[nodiscard]] bool is_inject(std::int64_t l) const { return l >= net_links_ && l < net_links_ + nodes_count_; }
  [[nodiscard]] bool is_eject(std::int64_t l) const { return l >= net_links_ + nodes_count_; }

  [[nodiscard]] int coord(std::int64_t node, int d) const { return coords_[static_cast<std::size_t>(node * nd_ + d)]; }

  // Dimension-order routing: X (the last, fastest dimension) first, then towards dimension 0.
  // Torus: the shorter way round (ties: +), and Dally–Seitz dateline virtual channels so a
  // blocked worm cannot close a cycle: VC 0 until the packet has crossed the wrap link of the
  // current dimension, VC 1 after. Returns the next link and the node it leads to, or the
  // ejection link (and -1) at the destination.
  std::pair<std::int64_t, std::int64_t> next_hop(std::int64_t node, std::int64_t src, std::int64_t dst) const {
    for (int d = nd_ - 1; d >= 0; --d) {
      const int c = coord(node, d), t = coord(dst, d);
      if (c == t) continue;
      const int k = m_.mesh.dims[static_cast<std::size_t>(d)];
      int dir = c < t ? 0 : 1;  // 0: +, 1: −
      int vc = 0;
      if (m_.mesh.wrap) {
        const int fwd = ((t - c) % k + k) % k;
        dir = fwd <= k - fwd ? 0 : 1;
        const int s = coord(src, d);
        vc = (dir == 0 ? c < s : c > s) ? 1 : 0;
      }
      const std::int64_t link = ((node * nd_ + d) * 2 + dir) * nvc_ + vc;
      return {link, link_to_node(link)};
    }
    return {eject_link(dst), -1};
  }
  [[nodiscard]] std::int64_t link_to_node(std::int64_t link) const { return far_node_[static_cast<std::size_t>(link)]; }
  [[nodiscard]] Ticks body(const Packet& pk) const { return c_.link.at(pk.wire_bytes); }
  [[nodiscard]] Ticks header(std::int64_t link) const { return (is_inject(link) || is_eject(link)) ? 0 : c_.router; }

  // ---- the network ----
  // Wormhole arbitration (docs/emulator.md, "Mesh and torus"): a channel goes to the header that
  // asks for it first; headers asking at one tick are served by key_of(), so no order in which the
  // loop handles the events of a tick changes an answer. A header goes on through the channels it
  // finds free at once (advance()), each taken at the tick it reaches it; a header that asks for
  // one of them earlier, or at that tick with a lower key, takes it back (cut()).
  [[nodiscard]] bool per_hop() const { return opt_.per_hop_mesh || opt_.reference_queue; }

  void on_inject(const Event& e) {
    Msg& msg = msgs_[e.a];
    msg.first_packet = static_cast<std::uint32_t>(packets_.size());
    const std::uint64_t pb = m_.mesh.packet_bytes == 0 ? msg.bytes : m_.mesh.packet_bytes;
    std::uint64_t left = msg.bytes;
    for (std::uint32_t k = 0; k < msg.packets; ++k) {
      const std::uint64_t payload = std::min(left, pb);
      left -= payload;
      Packet pk;
      pk.msg = e.a;
      pk.wire_bytes = payload + m_.mesh.header_bytes;
      packets_.push_back(pk);
    }
    const std::uint32_t first = msgs_[e.a].first_packet;
    const std::uint32_t n = msgs_[e.a].packets;
    const std::int64_t inj = inject_link(node_of_[static_cast<std::size_t>(msgs_[e.a].src)]);
    if (m_.mesh.switching == Switching::store_and_forward) {
      // The first packet takes the injection channel, the others are queued behind it.
      const Ticks due = acquire_saf(first, inj, e.t);
      for (std::uint32_t k = 1; k < n; ++k) acquire_saf(first + k, inj, e.t, false);
      if (due >= 0) {  // its step is due before every other event: the queue would pop it next
        ++res_.inline_steps;
        now_ = due;
        on_hop_saf(first, due);
      }
      return;
    }
    // The first packet asks for the injection channel, the others queue behind it (a node's
    // packets ask in the order they were made: key = their number).
    const bool got = request(first, inj, e.t, first);
    for (std::uint32_t k = 1; k < n; ++k) enqueue(first + k, inj, e.t, first + k);
    if (got) after_grant(first, e.t + header(inj), true);
    drain();
  }

  // The channel after `link` (the injection channel or a link) on the path from src to dst: the
  // ejection channel after the last link.
  [[nodiscard]] std::int64_t channel_after(std::int64_t link, std::int64_t src, std::int64_t dst) const {
    return next_hop(is_inject(link) ? src : link_to_node(link), src, dst).first;
  }
  // The channel after pk.link on pk's path.
  [[nodiscard]] std::int64_t next_channel(const Packet& pk) const {
    const Msg& msg = msgs_[pk.msg];
    return channel_after(pk.link, node_of_[static_cast<std::size_t>(msg.src)], node_of_[static_cast<std::size_t>(msg.dst)]);
  }
  // The key of packet pi's request for channel `to` coming from channel `from`: on an injection
  // channel the packet's number; elsewhere the input port it comes through, numbered as the
  // router's output links are (dimension 0 first, + before −, VC 0 before VC 1), the injection
  // channel last. Headers waiting for one channel hold different input channels, so their keys differ.
  [[nodiscard]] std::uint32_t key_of(std::uint32_t pi, std::int64_t from, std::int64_t to) const {
    const std::int64_t ports = static_cast<std::int64_t>(nd_) * 2 * nvc_;
    if (is_inject(to)) return pi;
    if (is_inject(from)) return static_cast<std::uint32_t>(ports);
    return static_cast<std::uint32_t>(from % ports);
  }
  [[nodiscard]] static bool asks_before(Ticks t, std::uint32_t key, Ticks t2, std::uint32_t key2) {
    return t != t2 ? t < t2 : key < key2;
  }

  void take(std::uint32_t pi, std::int64_t c, Ticks asked, Ticks t, std::uint32_t key) {
    const auto l = static_cast<std::size_t>(c);
    owner_[l] = static_cast<std::int32_t>(pi);
    since_[l] = t;
    oreq_[l] = asked;
    okey_[l] = key;
    packets_[pi].link = c;
  }

  // pi waits for c, the FIFO in (tick asked, key) order.
  void enqueue(std::uint32_t pi, std::int64_t c, Ticks asked, std::uint32_t key) {
    Packet& pk = packets_[pi];
    pk.req_t = asked;
    pk.key = key;
    pk.waiting = true;
    pk.next_waiter = kNil;
    const auto l = static_cast<std::size_t>(c);
    auto before = [&](std::int32_t w) {
      const Packet& q = packets_[static_cast<std::size_t>(w)];
      return asks_before(q.req_t, q.key, asked, key);
    };
    const auto me = static_cast<std::int32_t>(pi);
    if (wait_tail_[l] == kNil) {
      wait_head_[l] = wait_tail_[l] = me;
    } else if (before(wait_tail_[l])) {
      packets_[static_cast<std::size_t>(wait_tail_[l])].next_waiter = me;
      wait_tail_[l] = me;
    } else if (!before(wait_head_[l])) {
      pk.next_waiter = wait_head_[l];
      wait_head_[l] = me;
    } else {
      std::int32_t w = wait_head_[l];
      while (before(packets_[static_cast<std::size_t>(w)].next_waiter)) w = packets_[static_cast<std::size_t>(w)].next_waiter;
      pk.next_waiter = packets_[static_cast<std::size_t>(w)].next_waiter;
      packets_[static_cast<std::size_t>(w)].next_waiter = me;
    }
  }
  std::uint32_t dequeue(std::int64_t c) {
    const auto l = static_cast<std::size_t>(c);
    const std::int32_t w = wait_head_[l];
    Packet& pw = packets_[static_cast<std::size_t>(w)];
    wait_head_[l] = pw.next_waiter;
    if (wait_head_[l] == kNil) wait_tail_[l] = kNil;
    pw.waiting = false;
    return static_cast<std::uint32_t>(w);
  }
  void unlink_waiter(std::uint32_t pi, std::int64_t c) {
    const auto l = static_cast<std::size_t>(c);
    const auto me = static_cast<std::int32_t>(pi);
    std::int32_t prev = kNil;
    for (std::int32_t w = wait_head_[l]; w != me; w = packets_[static_cast<std::size_t>(w)].next_waiter) {
      PB_CHECK(w != kNil, "a waiting packet is in the FIFO of the channel it waits for");
      prev = w;
    }
    const std::int32_t after = packets_[pi].next_waiter;
    if (prev == kNil) wait_head_[l] = after;
    else packets_[static_cast<std::size_t>(prev)].next_waiter = after;
    if (wait_tail_[l] == me) wait_tail_[l] = prev;
    packets_[pi].waiting = false;
  }

  // pi's header asks for c at t, which is now. Returns whether it has it.
  bool request(std::uint32_t pi, std::int64_t c, Ticks t, std::uint32_t key) {
    const auto l = static_cast<std::size_t>(c);
    const std::int32_t o = owner_[l];
    if (o == kNil) {  // (a channel with waiters has an owner)
      take(pi, c, t, t, key);
      return true;
    }
    if (asks_before(t, key, oreq_[l], okey_[l])) {  // the owner was routed ahead and is not there yet
      cut(static_cast<std::uint32_t>(o), c);
      take(pi, c, t, t, key);
      return true;
    }
    enqueue(pi, c, t, key);
    return false;
  }

  // Packet o was routed ahead onto c, and an earlier request took c: o gives up c and every
  // channel after it, and asks for c again when its header gets there (waits for it, if that is
  // now). A channel it gives up that has waiters goes to the first.
  void cut(std::uint32_t o, std::int64_t c) {
    Packet& po = packets_[o];
    const Msg& msg = msgs_[po.msg];
    const std::int64_t src = node_of_[static_cast<std::size_t>(msg.src)], dst = node_of_[static_cast<std::size_t>(msg.dst)];
    PB_CHECK(!is_inject(c), "a node's packets ask for its injection channel in their order");
    if (po.waiting) unlink_waiter(o, next_channel(po));
    po.pending = kNoEvent;  // its step or its end, if queued, is void
    std::int64_t prev = inject_link(src);
    for (std::int64_t x = channel_after(prev, src, dst); x != c; x = channel_after(prev, src, dst)) {
      PB_CHECK(!is_eject(x), "a cut channel is on the packet's path");
      prev = x;
    }
    const Ticks asked = oreq_[static_cast<std::size_t>(c)];
    const std::uint32_t key = okey_[static_cast<std::size_t>(c)];
    const std::size_t first_freed = freed_.size();
    for (std::int64_t x = c;;) {
      const auto l = static_cast<std::size_t>(x);
      owner_[l] = kNil;
      if (x != c && wait_head_[l] != kNil) freed_.push_back({x, oreq_[l]});
      if (x == po.link) break;
      x = channel_after(x, src, dst);
    }
    po.link = prev;
    if (asked > now_) push_packet_event(o, asked, kHop);  // it asks again when its header gets there
    else enqueue(o, c, asked, key);
    hand_over(first_freed, now_);
  }

  // The channels freed_[from..] (each with waiters) go to their first waiters at t.
  void hand_over(std::size_t from, Ticks t) {
    while (freed_.size() > from) {
      const auto [x, prev_asked] = freed_.back();
      freed_.pop_back();
      const std::uint32_t w = dequeue(x);
      const Packet& pw = packets_[w];
      // A wait: it got the channel after the tick it asked; a tie: the one before it asked at that tick too.
      if (!is_inject(x) && t > pw.req_t) {
        ++res_.channel_waits;
        if (pw.req_t == prev_asked) ++res_.channel_ties;
      }
      take(w, x, pw.req_t, t, pw.key);
      after_grant(w, checked(t + header(x)), false);
    }
  }

  // pi has its channel, its header through it at t.
  void after_grant(std::uint32_t pi, Ticks t, bool top) {
    if (per_hop()) push_packet_event(pi, t, kHop);
    else if (top) advance(pi, t, true);
    else todo_.push_back({pi, t, packets_[pi].pending = seq_++});  // a cut before drain() voids it
  }
  void drain() {
    while (!todo_.empty()) {
      const Todo d = todo_.back();
      todo_.pop_back();
      if (packets_[d.pi].pending != d.token) continue;
      packets_[d.pi].pending = kNoEvent;
      advance(d.pi, d.t, false);
    }
  }
  void push_packet_event(std::uint32_t pi, Ticks t, EvKind kind) {
    packets_[pi].pending = seq_;
    push_net(t, pi, kind);
  }

  // pi's header is through its channel at t: it takes each next channel it finds free, at the
  // tick it reaches it; at a busy one it asks at once if that tick is now, else an event asks then.
  // `top`: nothing of this event's is left to do after it, so its end may be handled here.
  void advance(std::uint32_t pi, Ticks t, bool top) {
    for (;;) {
      Packet& pk = packets_[pi];
      if (is_eject(pk.link)) {
        end_worm(pi, checked(t + body(pk)), top);
        return;
      }
      const std::int64_t c = next_channel(pk);
      const std::uint32_t key = key_of(pi, pk.link, c);
      if (owner_[static_cast<std::size_t>(c)] == kNil) {
        take(pi, c, t, t, key);
      } else if (t > now_) {
        push_packet_event(pi, t, kHop);
        return;
      } else if (!request(pi, c, t, key)) {
        return;
      }
      ++res_.inline_steps;
      t = checked(t + header(c));
    }
  }

  // The worm's tail is through at `done`. Handled here when nothing else is due before it.
  void end_worm(std::uint32_t pi, Ticks done, bool top) {
    if (top && !per_hop() && todo_.empty() && done < limit()) {
      ++res_.inline_steps;
      now_ = done;
      worm_done(pi, done);
      return;
    }
    push_packet_event(pi, done, kWormDone);
  }

  // A step event: the packet's header asks for its next channel (wormhole), or finished its link.
  void on_step(const Event& e) {
    if (m_.mesh.switching == Switching::store_and_forward) {
      on_hop_saf(e.a, e.t);
      return;
    }
    if (!claim(e)) return;
    const Packet& pk = packets_[e.a];
    if (is_eject(pk.link)) {  // (the per-hop discipline: the ejection channel's step)
      end_worm(e.a, checked(e.t + body(pk)), true);
    } else {
      const std::int64_t c = next_channel(pk);
      if (request(e.a, c, e.t, key_of(e.a, pk.link, c))) after_grant(e.a, checked(e.t + header(c)), true);
    }
    drain();
  }

  // The event is its packet's queued one (then no longer queued), or void: a cut sent the packet
  // back since; popped, not counted.
  bool claim(const Event& e) {
    Packet& pk = packets_[e.a];
    if (pk.pending != e.seq) {
      --res_.events;
      return false;
    }
    pk.pending = kNoEvent;
    return true;
  }

  void on_worm_done(const Event& e) {
    if (!claim(e)) return;
    worm_done(e.a, e.t);
    drain();
  }

  // Packet pi's worm is done at t: the tail leaves every channel of the path as it arrives;
  // the channels are released together. Then the stream: when the injection channel goes to the
  // next packet of the same message, nothing else waits for the path, and that packet's whole
  // life (its header through the free path, its body, its end) falls before every other event,
  // it is handled here in O(1), and so on down the message's packets (a 16 MiB message
  // is 32 768 packets). Else the waiters get their channels.
  void worm_done(std::uint32_t pi, Ticks t) {
    const std::uint32_t mi = packets_[pi].msg;
    const std::int64_t src = node_of_[static_cast<std::size_t>(msgs_[mi].src)];
    const std::int64_t dst = node_of_[static_cast<std::size_t>(msgs_[mi].dst)];
    const std::int64_t inj = inject_link(src);
    const std::size_t first_freed = freed_.size();
    auto leave = [&](std::int64_t x) {
      const auto l = static_cast<std::size_t>(x);
      span_link(x, since_[l], t, packets_[static_cast<std::size_t>(owner_[l])]);
      owner_[l] = kNil;
      if (wait_head_[l] != kNil) freed_.push_back({x, oreq_[l]});
    };
    leave(inj);
    std::int64_t node = src;
    Ticks hops = 0;
    for (;;) {
      const auto [link, next] = next_hop(node, src, dst);
      leave(link);
      if (next < 0) break;
      ++hops;
      node = next;
    }
    const Ticks path = hops * c_.router;
    for (;;) {
      packet_injected(mi, t);
      packet_delivered(mi, t);
      settle(t);
      if (opt_.trace || per_hop() || freed_.size() != first_freed + 1 || freed_.back().first != inj) break;
      const std::int32_t w = wait_head_[static_cast<std::size_t>(inj)];
      if (packets_[static_cast<std::size_t>(w)].msg != mi || !todo_.empty()) break;
      const Ticks end = t + path + body(packets_[static_cast<std::size_t>(w)]);
      if (!(end < limit())) break;
      dequeue(inj);
      freed_.pop_back();
      if (wait_head_[static_cast<std::size_t>(inj)] != kNil) freed_.push_back({inj, t});
      res_.inline_steps += static_cast<std::uint64_t>(hops) + 3;
      now_ = t = checked(end);
    }
    hand_over(first_freed, t);
  }

  // Store-and-forward: packet pi asks for `link` at t and crosses it when it is free, first come
  // first served. Its next step is due at the returned time, before horizon_, so the caller
  // handles it now; or the step was queued as an event (-1).
  Ticks acquire_saf(std::uint32_t pi, std::int64_t link, Ticks t, bool may_inline = true) {
    Packet& pk = packets_[pi];
    pk.link = link;
    const auto l = static_cast<std::size_t>(link);
    if (free_at_[l] > t && !is_inject(link)) ++res_.channel_waits;
    const Ticks start = std::max(t, free_at_[l]);
    const Ticks end = start + header(link) + body(pk);
    free_at_[l] = end;
    span_link(link, start, end, pk);
    if (may_inline && end < limit()) return checked(end);
    push_net(end, pi, kHop);
    return -1;
  }

  // Store-and-forward: packet pi finished its current link at t. Steps due before limit()
  // follow in this loop: the queue would pop each of them next (a new event loses ties to every
  // older one, hence the strict <).
  void on_hop_saf(std::uint32_t pi, Ticks t) {
    for (;;) {
      Packet& pk = packets_[pi];
      const Msg& msg = msgs_[pk.msg];
      const std::int64_t src = node_of_[static_cast<std::size_t>(msg.src)], dst = node_of_[static_cast<std::size_t>(msg.dst)];
      const std::int64_t link = pk.link;
      if (is_eject(link)) {
        packet_delivered(pk.msg, t);
        settle(t);
        return;
      }
      if (is_inject(link)) {
        packet_injected(pk.msg, t);
        settle(t);
      }
      const Ticks next = acquire_saf(pi, channel_after(link, src, dst), t);
      if (next < 0) return;
      ++res_.inline_steps;
      now_ = t = next;
    }
  }

  void packet_injected(std::uint32_t mi, Ticks t) {
    Msg& msg = msgs_[mi];
    ++msg.injected;
    const auto buffered = static_cast<std::uint32_t>(std::max(0, m_.mesh.send_buffer_packets));
    if (msg.blocking && msg.injected == msg.packets - buffered) defer(std::max(t, msg.overhead_end), mi, false);
  }

  // What a tick's network events do to the ranks (a blocking send's end, a message's arrival) is
  // applied once the tick's network events are all done, ordered by the send op it belongs to:
  // so the order in which those events ran does not reach the ranks (docs/emulator.md,
  // "Tie-breaking"). No step is handled inside an event past them (limit()).
  struct RankEffect {
    Ticks t;
    std::uint32_t send_op;
    bool arrive;
    std::uint32_t mi;
  };
  void defer(Ticks t, std::uint32_t mi, bool arrive) {
    PB_CHECK(effects_.empty() || effects_.front().t == t, "a tick's rank effects are applied before the next tick's");
    effects_.push_back(RankEffect{t, msgs_[mi].send_op, arrive, mi});
  }
  // Nothing else is due at t or before (t < horizon_): the tick's network events are done.
  void settle(Ticks t) {
    if (!effects_.empty() && t < horizon_) apply_effects();
  }
  // What a step may be handled inside the current event before: every other pending event, and
  // the rank effects not yet applied.
  [[nodiscard]] Ticks limit() const { return effects_.empty() ? horizon_ : std::min(horizon_, effects_.front().t); }
  void apply_effects() {
    std::sort(effects_.begin(), effects_.end(), [](const RankEffect& x, const RankEffect& y) {
      return x.send_op != y.send_op ? x.send_op < y.send_op : x.arrive < y.arrive;
    });
    for (const RankEffect& e : effects_) {
      if (e.arrive) {
        push_rank_event(e.t, e.mi, kArrive);
        continue;
      }
      const Msg& msg = msgs_[e.mi];
      span_rank(msg.src, msg.overhead_end, e.t, 0, msg.dst);
      unblock(msg.src, e.t);
      complete(msg.send_op, e.t);
    }
    effects_.clear();
  }

  void unblock(int r, Ticks t) {
    RankState& rs = ranks_[static_cast<std::size_t>(r)];
    rs.cpu = t;
    unblocked_[static_cast<std::size_t>(r)] = t;
    // Its waiting events (if any) run from t on.
    if (rs.pending != kNil || std::any_of(std::begin(rs.ready), std::end(rs.ready), [](std::int32_t x) { return x != kNil; }))
      horizon_ = std::min(horizon_, t);
    if (opt_.reference_queue) {
      auto evs = std::move(parked_[static_cast<std::size_t>(r)]);
      parked_[static_cast<std::size_t>(r)].clear();
      for (const Event& e : evs) q_.push(Event{std::max(e.t, t), e.seq, e.a, e.kind});
    } else {
      mark_dirty(r);
    }
  }

  void packet_delivered(std::uint32_t mi, Ticks t) {
    Msg& msg = msgs_[mi];
    if (++msg.delivered == msg.packets) defer(t, mi, true);
  }

  void span_link(std::int64_t link, Ticks b, Ticks e, const Packet& pk) {
    if (!opt_.trace) return;
    const Msg& msg = msgs_[pk.msg];
    res_.link_spans.push_back(Span{static_cast<int>(link), to_units(b), to_units(e), 4, msg.src, msg.dst});
  }

  void place_links() {
    std::vector<int> used;
    for (const Span& s : res_.link_spans) used.push_back(s.track);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    const int top = used.empty() ? 0 : used.back() + 1;
    res_.links.assign(static_cast<std::size_t>(top), LinkPlace{});
    for (int l : used) {
      LinkPlace& place = res_.links[static_cast<std::size_t>(l)];
      place.vcs = nvc_;
      if (is_inject(l)) {
        place.kind = LinkPlace::Kind::inject;
        place.node = l - net_links_;
      } else if (is_eject(l)) {
        place.kind = LinkPlace::Kind::eject;
        place.node = l - net_links_ - nodes_count_;
      } else {
        const std::int64_t per_node = static_cast<std::int64_t>(nd_) * 2 * nvc_;
        const std::int64_t rest = l % per_node;
        const int d = static_cast<int>(rest / (2 * nvc_));
        place.kind = LinkPlace::Kind::link;
        place.node = l / per_node;
        place.axis = nd_ - 1 - d;
        place.dim = d;
        place.plus = (rest / nvc_) % 2 == 0;
        place.vc = static_cast<int>(rest % nvc_);
      }
    }
  }

  static constexpr std::uint8_t kDone = 1, kPosted = 2, kAccepted = 4;

  const Schedule& s_;
  const Machine& m_;
  const SimOptions& opt_;
  const Costs c_;
  const std::vector<Costs> levels_;  // cluster: intra-node, inter-node
  const bool dynamic_;      // GOAL: match receives while running
  const bool mesh_;
  const bool msg_records_;  // messages need records (mesh, or dynamic matching)
  SimResult res_;
  std::uint64_t seq_ = 0;
  Ticks now_ = 0;
  std::uint32_t done_ = 0;

  std::vector<OpState> op_;  // one per op, and one holding the end of the last op's successors
  std::vector<std::uint32_t> ready_;  // scratch of complete(); push_ready_sorted() never re-enters it
  std::vector<std::uint32_t> succ_, isucc_first_, isucc_;
  std::vector<RankState> ranks_;
  std::vector<Ticks> unblocked_;  // mesh: when each rank last left a blocking send
  std::vector<Msg> msgs_;
  std::vector<std::uint32_t> free_msgs_;
  Matcher matcher_;
  bool pacing_ = false;
  Ticks t0_ = 0, lat_ = 0;
  // Mesh: while a hop event is handled, the key time of the earliest other event. A step of
  // the same packet due strictly before it is the next event the loop would pop, so it is
  // handled at once instead of through the queue (-1: never, as in the per-hop discipline).
  Ticks horizon_ = -1;

  // default discipline
  std::vector<Node> nodes_;
  std::int32_t free_nodes_ = kNil;
  SlotQueue heap_;
  std::vector<int> dirty_;
  std::priority_queue<Event, std::vector<Event>, NetAfter> net_;
  // reference discipline
  std::priority_queue<Event, std::vector<Event>, EventAfter> q_;
  std::vector<std::vector<Event>> parked_;

  std::vector<Packet> packets_;
  int nd_ = 0;
  int nvc_ = 1;
  std::int64_t nodes_count_ = 0;
  std::int64_t net_links_ = 0;
  std::vector<std::int32_t> coords_;    // node n's coordinate in dimension d at n·nd + d
  std::vector<std::int64_t> far_node_;  // the node a network link leads to
  std::vector<std::int64_t> node_of_;
  std::vector<std::int32_t> owner_, wait_head_, wait_tail_;
  std::vector<Ticks> since_, free_at_;
  std::vector<Ticks> oreq_;           // wormhole: when the channel's holder asked for it
  std::vector<std::uint32_t> okey_;   // ... and its request's key
  std::vector<std::pair<std::int64_t, Ticks>> freed_;  // channels given up that have waiters, and when their holder asked
  struct Todo {
    std::uint32_t pi;
    Ticks t;
    std::uint64_t token;
  };
  std::vector<Todo> todo_;           // packets given a channel, their headers through it at t, to advance
  std::vector<RankEffect> effects_;  // a tick's network events' effects on the ranks, not yet applied
};

void put_num(std::ostream& out, double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  out << buf;
}

const char* span_name(std::uint8_t what) {
  switch (what) {
    case 0: return "send";
    case 1: return "recv";
    case 2: return "reduce";
    case 3: return "copy";
    case 5: return "calc";
    default: return "busy";
  }
}

void write_trace(std::ostream& out, const SimResult& result, const std::string& op, const std::string& algo, int p,
                 const Machine& machine) {
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"machine\":\"";
  for (char c : machine.name) {
    if (c == '"' || c == '\\') out << '\\';
    out << c;
  }
  out << "\",\"op\":\"" << op << "\",\"algo\":\"";
  for (char c : algo) {
    if (c == '"' || c == '\\') out << '\\';
    out << c;
  }
  out << "\",\"p\":" << p << "},\"traceEvents\":[\n";
  out << R"({"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"ranks"}})";
  for (int r = 0; r < p; ++r)
    out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << r << ",\"args\":{\"name\":\"rank " << r << "\"}}";
  for (const Span& s : result.rank_spans) {
    out << ",\n{\"name\":\"" << span_name(s.what) << "\",\"ph\":\"X\",\"pid\":1,\"tid\":" << s.track << ",\"ts\":";
    put_num(out, s.begin_us);
    out << ",\"dur\":";
    put_num(out, s.end_us - s.begin_us);
    out << ",\"args\":{\"peer\":" << s.peer << "}}";
  }
  if (!result.link_spans.empty()) {
    out << ",\n" << R"({"name":"process_name","ph":"M","pid":2,"tid":0,"args":{"name":"links"}})";
    for (std::size_t l = 0; l < result.links.size(); ++l) {
      if (result.links[l].kind == LinkPlace::Kind::unused) continue;
      out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":" << l << ",\"args\":{\"name\":\""
          << link_name(result.links[l]) << "\"}}";
    }
    for (const Span& s : result.link_spans) {
      out << ",\n{\"name\":\"" << s.peer << "->" << s.peer2 << "\",\"ph\":\"X\",\"pid\":2,\"tid\":" << s.track << ",\"ts\":";
      put_num(out, s.begin_us);
      out << ",\"dur\":";
      put_num(out, s.end_us - s.begin_us);
      out << "}";
    }
  }
  out << "\n]}\n";
}

}  // namespace

SimResult simulate(const Schedule& schedule, const Machine& machine, const SimOptions& options) {
  Engine engine(schedule, machine, options);
  return engine.run();
}

SimResult simulate(const Plan& plan, const Machine& machine, const SimOptions& options) {
  return simulate(schedule_of(plan), machine, options);
}

std::string link_direction(const LinkPlace& place) {
  if (place.kind != LinkPlace::Kind::link) return "";
  static const char* axis = "xyzwvu";
  std::string dir = place.plus ? "+" : "-";
  if (place.axis < 6) {
    dir.push_back(axis[place.axis]);
  } else {
    dir += 'd';
    dir += std::to_string(place.dim);
  }
  return dir;
}

std::string link_name(const LinkPlace& place) {
  std::string name = "node " + std::to_string(place.node);
  switch (place.kind) {
    case LinkPlace::Kind::inject: return name + " inject";
    case LinkPlace::Kind::eject: return name + " eject";
    case LinkPlace::Kind::unused: return "";
    case LinkPlace::Kind::link: break;
  }
  name += " " + link_direction(place);
  if (place.vcs > 1) name += " vc" + std::to_string(place.vc);
  return name;
}

void write_chrome_trace(std::ostream& out, const SimResult& result, const Schedule& schedule, const Machine& machine) {
  write_trace(out, result, schedule.op, schedule.algo, schedule.p, machine);
}

void write_chrome_trace(std::ostream& out, const SimResult& result, const Plan& plan, const Machine& machine) {
  write_trace(out, result, plan.op, plan.algo, plan.p, machine);
}

}  // namespace postbox::sim
