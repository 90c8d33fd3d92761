// The discrete-event engine. Model semantics: docs/emulator.md; the host rules are LogGOPSim's
// (LogGOPSim.cpp, OP_SEND / OP_RECV / OP_LOCOP / OP_MSG) with per-model costs. On a mesh model
// the network is a MeshNetwork (mesh_network.hpp) run by this engine, its Host; spans go to an
// Observer (trace.hpp) when the run is traced.
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
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <queue>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mesh_network.hpp"
#include "postbox/emulator/flow_network.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/limits.hpp"
#include "trace.hpp"
#include "virtual_time.hpp"

namespace postbox::sim {
namespace {

using detail::checked;
using detail::MeshCosts;
using detail::Observer;

constexpr std::uint32_t kNone = ~std::uint32_t{0};
constexpr std::uint64_t kMaxSeq = std::uint64_t{1} << 48;  // events per run: the rank queue keeps 48 bits
constexpr std::int32_t kNil = -1;
constexpr Ticks kBlocked = std::numeric_limits<Ticks>::max();

// A rank's events; the mesh network's are its own (mesh_network.hpp).
enum EvKind : std::uint8_t {
  kOp,      // a = global op: the op is ready to start
  kArrive,  // a = message (recv op for a plan off the mesh): all its bytes are at the destination
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

// The event nodes and the message records, in blocks of 2^11 (64 KiB of nodes): growing never
// copies them nor holds twice their memory, as a vector's doubling would when half the ranks
// have a message in flight. Inside a MappedStorage scope the blocks are 2^15, or 2^16 for a T
// under 32 bytes, so that a block is at least 1 MiB and file-backed too.
template <class T>
class Pool {
 public:
  static_assert(sizeof(T) << 16 >= kMappedMin, "a block in a MappedStorage scope is file-backed");
  Pool() : shift_(MappedStorage::active() ? (sizeof(T) << 15 >= kMappedMin ? 15 : 16) : 11) {}
  T& operator[](std::size_t i) { return blocks_[i >> shift_][i & mask()]; }
  const T& operator[](std::size_t i) const { return blocks_[i >> shift_][i & mask()]; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  void emplace_back() {
    if ((size_ & mask()) == 0) blocks_.emplace_back(std::size_t{1} << shift_);
    ++size_;
  }

 private:
  [[nodiscard]] std::size_t mask() const noexcept { return (std::size_t{1} << shift_) - 1; }
  unsigned shift_;
  std::vector<Array<T>> blocks_;
  std::size_t size_ = 0;
};

// An array that only grows at its end, of a trivially copyable T, grown with realloc: glibc
// moves a block above its mmap threshold (32 MiB at most) by remapping its pages, so growing a
// large one never holds two copies of it, as a vector's doubling does for a moment. Inside a
// MappedStorage scope (made before it) it is grown as an Array is, by copying, file-backed.
template <class T>
class GrowArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  GrowArray() = default;
  GrowArray(const GrowArray&) = delete;
  GrowArray& operator=(const GrowArray&) = delete;
  GrowArray(GrowArray&& o) noexcept { swap(o); }
  GrowArray& operator=(GrowArray&& o) noexcept {
    GrowArray(std::move(o)).swap(*this);
    return *this;
  }
  ~GrowArray() {
    if (data_ == nullptr) return;
    if (mapped_) detail::map_deallocate(data_, cap_ * sizeof(T));
    else std::free(data_);
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  [[nodiscard]] const T& back() const noexcept { return data_[size_ - 1]; }
  void push_back(const T& x) {
    if (size_ == cap_) grow();
    data_[size_++] = x;
  }
  void clear() noexcept { size_ = 0; }  // keeps the capacity

 private:
  void swap(GrowArray& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
    std::swap(mapped_, o.mapped_);
  }
  void grow() {
    const std::size_t cap = std::max<std::size_t>(16, 2 * cap_);
    void* p;
    if (mapped_) {
      p = detail::map_allocate(cap * sizeof(T));
      if (size_ > 0) std::memcpy(p, data_, size_ * sizeof(T));
      if (data_ != nullptr) detail::map_deallocate(data_, cap_ * sizeof(T));
    } else {
      p = std::realloc(data_, cap * sizeof(T));
      if (p == nullptr) throw std::bad_alloc();
    }
    data_ = static_cast<T*>(p);
    cap_ = cap;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0, cap_ = 0;
  bool mapped_ = MappedStorage::active();
};

struct Event {  // a rank event in the reference discipline's global queue
  Ticks t;
  std::uint64_t seq;
  std::uint32_t a;
  EvKind kind;
};
struct EventAfter {  // by time, then in the order created
  bool operator()(const Event& x, const Event& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
};

struct Msg {  // a message in flight (GOAL, mesh and network runs); its size is its send's
  int src = 0, dst = 0;
  std::int32_t tag = 0;
  std::uint32_t send_op = 0, recv_op = kNone;
};
struct MeshMsg {  // what a mesh run keeps besides, under the same number
  std::uint32_t packets = 1;
  std::uint32_t delivered = 0;
  std::uint32_t injected = 0;
  bool blocking = false;  // the sender's CPU waits for injection (csend)
  Ticks overhead_end = 0;
};

// Everything the engine keeps per rank but its finishing time (Engine::finish_) and one byte of
// flags (Engine::rank_bits_), in 48 bytes.
struct RankState {
  Ticks cpu = 0;   // LogGOPSim nexto (kBlocked during a blocking send)
  Ticks sgap = 0;  // nextgs
  Ticks rgap = 0;  // nextgr
  // The rank's events: the pending heap by (t, seq) and a ready heap by seq per class.
  std::int32_t pending = kNil;
  std::int32_t ready[kClasses] = {kNil, kNil, kNil, kNil};
  // The event its entry in the rank queue pops (kNil: none). The entry's key is not stored: it is
  // the node's seq, and the node's time (pending) or its class's need (ready), which do not
  // change while the entry stands (Engine::valid()).
  std::int32_t sched = kNil;
};
static_assert(sizeof(RankState) == 48, "docs/emulator.md gives this size");

// Everything the engine keeps per op; the successors of op g are succ_[op_[g].succ, op_[g + 1].succ).
// Not its rank: the event that starts an op, or delivers its message, is popped from its rank's
// heaps, so the hot paths pass the rank along (Schedule::rank_of() searches for it elsewhere).
struct OpState {
  std::uint32_t remaining : 28 = 0;  // deps (and irequires) not yet satisfied (< kMaxDeps)
  std::uint32_t flags : 4 = 0;       // Engine::kDone, kPosted, kAccepted, kRendezvous
  std::uint32_t succ = 0;
};
static_assert(sizeof(OpState) == 8, "docs/emulator.md gives this size");
constexpr std::uint32_t kMaxDeps = (1U << 28) - 1;  // per op: what OpState::remaining holds

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
  std::uint64_t eager_limit = kAlwaysEager;  // more bytes: rendezvous
  PerByte reduce, copy;
  MeshCosts mesh;
  PerByte flow;  // a network file: a message's full-speed time on its route per byte (LogGP's G)
};

// Dynamic matching of GOAL receives (any source, any tag) with arrived messages, in the order
// LogGOPSim searches its queues: a message takes the earliest posted receive it matches, a
// receive the earliest accepted message it matches. Posted receives sit in one of four bins by
// (source or any, tag or any); messages in four lists at once (exact, by source, by tag, any),
// consumed lazily. Every step is a few look-ups in an open-addressing table whose bins are
// queues of links in one pool: a broadcast posts a receive on every rank at once, and a node
// and a vector per bin (std::unordered_map) held more than the schedule itself.
class Matcher {
 public:
  // The earliest posted receive at dst matching (src, tag), removed; kNone if none.
  std::uint32_t take_recv(int dst, int src, std::int32_t tag) {
    std::uint32_t best = kNone;
    std::uint64_t best_seq = ~std::uint64_t{0};
    Bins::Bin* from = nullptr;
    for (const auto& k : {key(dst, src, tag), key(dst, -1, tag), key(dst, src, -1), key(dst, -1, -1)}) {
      Bins::Bin* b = recvs_.find(k);
      if (b == nullptr || b->tail == kNil) continue;
      const Bins::Link& l = recvs_.front(*b);
      if (l.seq < best_seq) {
        best_seq = l.seq;
        best = l.value;
        from = b;
      }
    }
    if (from != nullptr) recvs_.pop(*from);
    return best;
  }
  void post_recv(int dst, int src, std::int32_t tag, std::uint32_t op) { recvs_.push(key(dst, src, tag), posted_++, op); }

  // The earliest unexpected message at dst matching (src or -1, tag or -1), removed; kNone if none.
  std::uint32_t take_msg(int dst, int src, std::int32_t tag) {
    Bins::Bin* b = msgs_.find(key(dst, src, tag));
    if (b == nullptr) return kNone;
    while (b->tail != kNil && consumed_[msgs_.front(*b).value]) msgs_.pop(*b);
    if (b->tail == kNil) return kNone;
    const std::uint32_t m = msgs_.front(*b).value;
    msgs_.pop(*b);
    consumed_[m] = 1;
    --unexpected_;
    return m;
  }
  void add_msg(int dst, int src, std::int32_t tag, std::uint32_t m) {
    if (consumed_.size() <= m) consumed_.resize(static_cast<std::size_t>(m) + 1, 0);
    consumed_[m] = 0;
    for (const auto& k : {key(dst, src, tag), key(dst, -1, tag), key(dst, src, -1), key(dst, -1, -1)}) msgs_.push(k, 0, m);
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
  static constexpr std::uint32_t kNil = 0xffffffffU;
  struct Key {
    std::int32_t dst = -1;  // -1: an empty slot
    std::int32_t src = 0;   // -1: any
    std::int32_t tag = 0;   // -1: any
    friend bool operator==(const Key&, const Key&) = default;
  };
  // Key → FIFO of (seq, value): linear probing, at most three quarters full; a bin stays once made.
  class Bins {
   public:
    // A bin's FIFO is a circular list through its links: the bin holds its last link, whose
    // next is the first (kNil: empty).
    struct Bin {
      Key key;
      std::uint32_t tail = kNil;
    };
    struct Link {
      std::uint32_t seq;  // posting order (posted receives, fewer than the ops); 0 for messages
      std::uint32_t value, next;
    };
    Bin* find(const Key& k) {
      if (slots_.empty()) return nullptr;
      for (std::size_t i = hash(k) & mask_;; i = (i + 1) & mask_) {
        if (slots_[i].key == k) return &slots_[i];
        if (slots_[i].key.dst == -1) return nullptr;
      }
    }
    void push(const Key& k, std::uint32_t seq, std::uint32_t value) {
      Bin& b = get(k);
      std::uint32_t l;
      if (free_ != kNil) {
        l = free_;
        free_ = links_[l].next;
        links_[l] = {seq, value, kNil};
      } else {
        l = static_cast<std::uint32_t>(links_.size());
        links_.push_back({seq, value, kNil});
      }
      if (b.tail == kNil) {
        links_[l].next = l;
      } else {
        links_[l].next = links_[b.tail].next;
        links_[b.tail].next = l;
      }
      b.tail = l;
    }
    [[nodiscard]] const Link& front(const Bin& b) const { return links_[links_[b.tail].next]; }
    void pop(Bin& b) {
      const std::uint32_t l = links_[b.tail].next;
      if (l == b.tail) b.tail = kNil;
      else links_[b.tail].next = links_[l].next;
      links_[l].next = free_;
      free_ = l;
    }

   private:
    static std::size_t hash(const Key& k) noexcept {
      const std::uint64_t dst_src = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.dst)) << 32) |
                                    static_cast<std::uint32_t>(k.src);
      const std::uint64_t h = dst_src * 0x9E3779B97F4A7C15ULL ^
                              static_cast<std::uint64_t>(static_cast<std::int64_t>(k.tag)) * 0xC2B2AE3D27D4EB4FULL;
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
    Bin& get(const Key& k) {
      if (4 * (used_ + 1) > 3 * slots_.size()) grow();  // at most three quarters full
      std::size_t i = hash(k) & mask_;
      for (; slots_[i].key.dst != -1; i = (i + 1) & mask_)
        if (slots_[i].key == k) return slots_[i];
      ++used_;
      slots_[i].key = k;
      return slots_[i];
    }
    void grow() {
      Array<Bin> old = std::move(slots_);
      slots_.assign(std::max<std::size_t>(64, old.size() * 2), Bin{});
      mask_ = slots_.size() - 1;
      for (const Bin& b : old) {
        if (b.key.dst == -1) continue;
        std::size_t i = hash(b.key) & mask_;
        while (slots_[i].key.dst != -1) i = (i + 1) & mask_;
        slots_[i] = b;
      }
    }
    Array<Bin> slots_;
    std::size_t mask_ = 0, used_ = 0;
    Array<Link> links_;
    std::uint32_t free_ = kNil;  // popped links, for reuse
  };
  static_assert(sizeof(Bins::Bin) == 16 && sizeof(Bins::Link) == 12 && sizeof(Msg) == 20, "docs/emulator.md gives these sizes");
  static Key key(int dst, int src, std::int32_t tag) { return Key{dst, src, tag}; }
  Bins recvs_, msgs_;
  Array<std::uint8_t> consumed_;
  std::uint32_t posted_ = 0;  // receives posted so far: fewer than the schedule's ops
  std::uint64_t unexpected_ = 0;
};

TickTerm tick_term(const Linear& x, const std::string& what) {
  return TickTerm{to_ticks(x.base, "the machine's " + what), to_per_byte(x.per_byte, "the machine's " + what + " per byte"),
                  to_ticks(x.per_packet, "the machine's " + what + " per packet")};
}

// A network file (flow_network.hpp) carries a message's bytes to the receiver at G per byte, so
// the receiving side is not charged G again: the gap between receives is g and the receiver's CPU
// o + O per byte (without a network: g + G per byte, and o + max(O, G) per byte). The sender's
// gap keeps its g + G per byte: its NIC injects one message after the other, as in LogGOPSim
// (docs/emulator.md, "Network from a DOT file").
void network_costs(const Machine& m, Costs& c) {
  c.flow = to_per_byte(m.G, "the machine's G");
  c.recv_gap.per_byte = PerByte{};
  c.recv_overhead.per_byte = to_per_byte(m.O, "the machine's O");
}

Costs costs_of(const Machine& m) {
  if (m.network && m.kind != ModelKind::loggp)
    throw InputError("machine '" + m.name + "': a network file needs a logp machine (logp:L:o:g:G...), not " +
                     model_kind_name(m.kind));
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
  if (m.kind == ModelKind::mesh) c.mesh = detail::mesh_costs(m);
  const HostCosts h = normalised_host_costs(m);
  c.send_overhead = tick_term(h.send_overhead, "send overhead");
  c.send_gap = tick_term(h.send_gap, "gap between sends");
  c.wire = to_ticks(h.wire, "the machine's latency");
  c.recv_overhead = tick_term(h.recv_overhead, "receive overhead");
  c.recv_gap = tick_term(h.recv_gap, "gap between receives");
  c.first_byte_free = h.first_byte_free;
  c.eager_limit = h.eager_limit;
  if (m.kind == ModelKind::mesh) PB_CHECK(c.eager_limit == kAlwaysEager, "a mesh machine's messages are eager");
  if (m.network) network_costs(m, c);
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
      : s_(s), m_(m), opt_(opt), c_(costs_of(m)), levels_(level_costs(m)), dynamic_(!s.matched),
        mesh_(m.kind == ModelKind::mesh), msg_records_(dynamic_ || mesh_ || m.network != nullptr),
        rendezvous_(c_.eager_limit != kAlwaysEager ||
                    std::any_of(levels_.begin(), levels_.end(), [](const Costs& l) { return l.eager_limit != kAlwaysEager; })),
        obs_(opt.trace ? &recorder_ : nullptr), noise_(opt.noise) {}

  SimResult run() {
    build();
    if (mesh_) build_mesh();
    if (m_.network) {
      // A detour in a sender's overhead delays its message (cpu_end()); a flow enters the network
      // only at the time being handled, so a delayed flow would need an event of its own.
      if (noise_ != nullptr) throw InputError("noise and a network file in one run are not supported");
      flow_.emplace(m_.network, s_.p);
    }
    // Every rank's first ops are ready at time 0. The reference discipline, and a paced run
    // (whose first sends wait for their rounds), create their events here; the default
    // discipline creates them a rank at a time as the run reaches their keys (run_lazy), so that
    // p of them are not waiting at once.
    if (opt_.reference_queue || pacing_) {
      for (int r = 0; r < s_.p; ++r) push_first_ops(r);
      first_rank_ = s_.p;
    } else {  // later events are numbered after all the first ones
      for (std::uint32_t g = 0; g < s_.ops(); ++g) seq_ += op_[g].remaining == 0 ? 1 : 0;
    }
    if (opt_.reference_queue) run_reference();
    else run_lazy();
    finish_checks();
    // The run's state goes before the per-rank results are made, so they do not add to the peak.
    op_ = {};
    succ_ = {};
    isucc_first_ = {};
    isucc_ = {};
    ranks_ = {};
    rank_bits_ = {};
    res_.max_waiting_events = nodes_.size();  // nodes are reused from a free list: the pool is the peak
    nodes_ = {};
    heap_ = {};
    dirty_ = {};
    res_.per_rank_ticks = std::move(finish_);
    res_.per_rank_us.resize(static_cast<std::size_t>(s_.p));
    Ticks end = 0;
    for (int r = 0; r < s_.p; ++r) {
      const Ticks f = res_.per_rank_ticks[static_cast<std::size_t>(r)];
      res_.per_rank_us[static_cast<std::size_t>(r)] = to_units(f);
      end = std::max(end, f);
    }
    res_.time_ticks = end;
    res_.time_us = to_units(end);
    res_.noise_us = to_units(res_.noise_ticks);
    if (opt_.queue_stats) {
      res_.queues.resize(static_cast<std::size_t>(s_.p));
      for (std::size_t r = 0; r < res_.queues.size(); ++r) {
        const QueueCounts& q = queues_[r];
        QueueStats& out = res_.queues[r];
        out.max_posted = q.max[0];
        out.max_unexpected = q.max[1];
        out.mean_posted = q.samples[0] ? static_cast<double>(q.sum[0]) / static_cast<double>(q.samples[0]) : 0.0;
        out.mean_unexpected = q.samples[1] ? static_cast<double>(q.sum[1]) / static_cast<double>(q.samples[1]) : 0.0;
      }
    }
    if (flow_) {
      res_.max_link_flows = flow_->max_link_flows();
      res_.slowed_flows = flow_->slowed_flows();
    }
    if (net_) {
      const auto& n = net_->counts();
      res_.packets = net_->packets();
      res_.inline_steps = n.inline_steps;
      res_.channel_waits = n.channel_waits;
      res_.channel_ties = n.channel_ties;
      res_.events -= n.void_events;
      net_->report_links();
    }
    if (opt_.trace) recorder_.move_into(res_);
    return std::move(res_);
  }

 private:
  using Network = detail::MeshNetwork<Engine>;
  friend Network;  // the network's calls back (its Host): limit, queued, set_now, packet_*, settle

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
    const std::uint64_t per_rank = sizeof(RankState) + 1 + 8 + 8 + 24;
    require_memory(per_op * n + per_rank * static_cast<std::uint64_t>(s_.p) + 4ULL * s_.deps.size(),
                             "simulating " + std::to_string(n) + " operations on " + std::to_string(s_.p) + " ranks");
    op_.assign(static_cast<std::size_t>(n) + 1, OpState{});
    // Calls f(g, base, count) for every op g, with its rank's first op and number of ops.
    auto each_op = [&](auto&& f) {
      for (int r = 0; r < s_.p; ++r) {
        const std::uint32_t base = s_.first[static_cast<std::size_t>(r)];
        const std::uint32_t end = s_.first[static_cast<std::size_t>(r) + 1];
        for (std::uint32_t g = base; g < end; ++g) f(g, base, end - base);
      }
    };
    auto successors = [&](const Array<std::uint32_t>& first, const Array<std::uint32_t>& list,
                          Array<std::uint32_t>& out_first, Array<std::uint32_t>& out) {
      out_first.assign(static_cast<std::size_t>(n) + 1, 0);
      each_op([&](std::uint32_t g, std::uint32_t base, std::uint32_t count) {
        const std::uint64_t deps = std::uint64_t{op_[g].remaining} + (first[g + 1] - first[g]);
        if (deps > kMaxDeps)
          throw InputError(s_.where(g) + " waits for " + std::to_string(deps) + " ops; at most " +
                           std::to_string(kMaxDeps) + " are supported");
        op_[g].remaining = static_cast<std::uint32_t>(deps);
        for (std::uint32_t i = first[g]; i < first[g + 1]; ++i) {
          if (list[i] >= count)
            throw InputError(s_.where(g) + " depends on op " + std::to_string(list[i]) + " of a rank with " +
                             std::to_string(count) + " ops");
          ++out_first[base + list[i] + 1];
        }
      });
      for (std::uint32_t g = 0; g < n; ++g) out_first[g + 1] += out_first[g];
      out.resize(out_first.back());
      Array<std::uint32_t> fill(out_first.begin(), out_first.end() - 1);
      each_op([&](std::uint32_t g, std::uint32_t base, std::uint32_t /*count*/) {
        for (std::uint32_t i = first[g]; i < first[g + 1]; ++i) out[fill[base + list[i]]++] = g;
      });
    };
    {
      Array<std::uint32_t> first;
      successors(s_.dep_first, s_.deps, first, succ_);
      for (std::uint32_t g = 0; g <= n; ++g) op_[g].succ = first[g];
    }
    if (!s_.ideps.empty()) successors(s_.idep_first, s_.ideps, isucc_first_, isucc_);
    ranks_.assign(static_cast<std::size_t>(s_.p), RankState{});
    if (!opt_.reference_queue) rank_bits_.assign(static_cast<std::size_t>(s_.p), 0);
    finish_.assign(static_cast<std::size_t>(s_.p), 0);
    if (opt_.queue_stats) queues_.assign(static_cast<std::size_t>(s_.p), QueueCounts{});
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

  // ---- classes and needs ----
  [[nodiscard]] Class class_of(EvKind kind, std::uint32_t a) const {
    if (kind == kArrive) return kArriveClass;
    switch (s_.items[a].kind) {
      case Work::send: return kSendClass;
      case Work::recv: return kPostClass;
      default: return kLocalClass;
    }
  }
  // For the reference discipline, whose global queue does not keep the rank: a search of the
  // schedule's rank programs for an op's.
  [[nodiscard]] int rank_of_event(EvKind kind, std::uint32_t a) const {
    return kind == kArrive && msg_records_ ? msgs_[a].dst : s_.rank_of(a);
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
      if (b.head == b.items.size() || b.items.back().seq() < s.seq) b.items.push_back(Queued(s));
      else heap_.push(s);
    }
    [[nodiscard]] Slot top() const {
      if (buckets_.empty()) return heap_.top();
      const Slot f = front();
      return heap_.empty() || slot_before(f, heap_.top()) ? f : heap_.top();
    }
    void pop() {
      if (!buckets_.empty()) {
        auto it = buckets_.begin();
        Bucket& b = it->second;
        if (heap_.empty() || slot_before(front(), heap_.top())) {
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
    // A Slot in its time's FIFO, which has the time: 12 bytes instead of 24 (a seq of 48 bits:
    // push_rank_event() refuses more events).
    class Queued {
     public:
      explicit Queued(const Slot& s) noexcept
          : seq_lo_(static_cast<std::uint32_t>(s.seq)), seq_hi_(static_cast<std::uint16_t>(s.seq >> 32)), src_(s.src),
            rank_(s.rank) {}
      [[nodiscard]] std::uint64_t seq() const noexcept { return std::uint64_t{seq_hi_} << 32 | seq_lo_; }
      [[nodiscard]] Slot slot(Ticks t) const noexcept { return Slot{t, seq(), rank_, src_}; }

     private:
      std::uint32_t seq_lo_;
      std::uint16_t seq_hi_;
      std::int8_t src_;
      std::int32_t rank_;
    };
    static_assert(sizeof(Queued) == 12);
    struct Bucket {
      GrowArray<Queued> items;
      std::size_t head = 0;
    };
    [[nodiscard]] Slot front() const {
      const auto& [t, b] = *buckets_.begin();
      return b.items[b.head].slot(t);
    }
    std::map<Ticks, Bucket> buckets_;
    std::vector<GrowArray<Queued>> spare_;
    std::priority_queue<Slot, std::vector<Slot>, SlotAfter> heap_;
  };
  // Rank r's standing entry's key, (t, seq, src), from RankState::sched. Between a change to the
  // rank (an event pushed or popped, a resource's time moved: each marks it dirty) and its
  // refresh() the node may have moved; at the loop's top, where entries are checked, every
  // dirty rank is refreshed, and an entry stands only until the rank next runs an event (popped
  // ranks are unscheduled), the only thing that moves its needs but unblock(), which comes while
  // it has no entry (blocked).
  [[nodiscard]] bool standing(int r, const Slot& s) const {
    const RankState& k = ranks_[static_cast<std::size_t>(r)];
    if (k.sched == kNil || (rank_bits_[static_cast<std::size_t>(r)] & kSrcMask) != static_cast<std::uint8_t>(s.src))
      return false;
    const Node& n = nodes_[static_cast<std::size_t>(k.sched)];
    if (n.seq != s.seq) return false;
    return s.t == (s.src == kClasses ? n.t : need(r, static_cast<Class>(s.src)));
  }
  [[nodiscard]] bool valid(const Slot& s) const { return standing(s.rank, s); }
  void schedule(const Slot* best, int r) {
    RankState& k = ranks_[static_cast<std::size_t>(r)];
    if (best == nullptr) {
      k.sched = kNil;
      return;
    }
    if (standing(r, *best)) return;
    k.sched = best->src == kClasses ? k.pending : k.ready[best->src];
    std::uint8_t& bits = rank_bits_[static_cast<std::size_t>(r)];
    bits = static_cast<std::uint8_t>((bits & kDirtyBit) | static_cast<std::uint8_t>(best->src));
    heap_.push(*best);
  }

  void mark_dirty(int r) {
    std::uint8_t& bits = rank_bits_[static_cast<std::size_t>(r)];
    if ((bits & kDirtyBit) == 0) {
      bits |= kDirtyBit;
      dirty_.push_back(r);
    }
  }
  void h_unschedule(int r) { ranks_[static_cast<std::size_t>(r)].sched = kNil; }

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
  // Rank r's ops that wait for nothing, as events at time 0 (the run's first).
  void push_first_ops(int r) {
    ready_.clear();
    for (std::uint32_t g = s_.first[static_cast<std::size_t>(r)]; g < s_.first[static_cast<std::size_t>(r) + 1]; ++g)
      if (op_[g].remaining == 0) ready_.push_back(g);
    push_ready_sorted(ready_, r, 0);
  }
  // The default discipline's first events: those of ranks first_rank_.. are not created yet.
  // Created eagerly, rank by rank, they would have the keys (0, first_seq_), (0, first_seq_ + 1), ...:
  // below every other event's (whose seq is at least the number of first events), and due at
  // once, since no event of a rank whose first ops are not created yet has run (none can precede
  // them), so its resources are all free at time 0. This creates the next rank's (none, for a
  // rank without ops) unless the rank queue's next key is below theirs.
  bool create_first_events() {
    if (first_rank_ >= s_.p) return false;
    if (!heap_.empty() && heap_.top().t == 0 && heap_.top().seq < first_seq_) return false;
    std::swap(seq_, first_seq_);
    push_first_ops(first_rank_++);
    std::swap(seq_, first_seq_);
    return true;
  }
  // An event of rank r: op a ready to start (kOp), or message a (msg_records_) or the message
  // to receive op a arriving (kArrive).
  void push_rank_event(Ticks t, int r, std::uint32_t a, EvKind kind) { push_rank_event(t, seq_++, r, a, kind); }
  void push_rank_event(Ticks t, std::uint64_t seq, int r, std::uint32_t a, EvKind kind) {
    checked(t);
    if (seq >= kMaxSeq) throw InputError("more than 2^48 events in one run");
    if (opt_.reference_queue) {
      q_.push(Event{t, seq, a, kind});
      return;
    }
    horizon_ = std::min(horizon_, t);  // its effective key is (max(t, need), seq) >= t
    RankState& h = ranks_[static_cast<std::size_t>(r)];
    const Class c = class_of(kind, a);
    // Already due for its class: straight to the ready heap (its key is (need, seq) either way).
    if (t <= need(r, c)) h.ready[c] = meld<true>(h.ready[c], new_node(t, seq, a, kind));
    else h.pending = meld<false>(h.pending, new_node(t, seq, a, kind));
    mark_dirty(r);
  }
  // The network queued an event at t (its effective key is t).
  void queued(Ticks t) { horizon_ = std::min(horizon_, t); }

  void run_lazy() {
    for (;;) {
      for (int r : dirty_) {
        rank_bits_[static_cast<std::size_t>(r)] &= static_cast<std::uint8_t>(~kDirtyBit);
        refresh(r);
      }
      dirty_.clear();
      while (!heap_.empty() && !valid(heap_.top())) heap_.pop();
      if (create_first_events()) continue;
      if (flow_ && !flow_->empty() && (heap_.empty() || flow_->next_time() <= heap_.top().t)) {  // network first at one tick
        flow_ended();
        continue;
      }
      const bool have_rank = !heap_.empty();
      const bool have_net = net_ && !net_->empty();
      if (!effects_.empty() && (!have_net || net_->next_time() > effects_.front().t)) {
        apply_effects();
        continue;
      }
      if (!have_rank && !have_net) break;
      if (have_net && (!have_rank || net_->next_time() <= heap_.top().t)) {  // network first at one tick
        const Network::Event e = net_->pop();
        ++res_.events;
        now_ = e.t;
        horizon_ = -1;
        if (!opt_.per_hop_mesh) {
          horizon_ = kMaxTicks + 1;
          if (!net_->empty()) horizon_ = net_->next_time();
          if (!heap_.empty()) horizon_ = std::min(horizon_, heap_.top().t);  // valid (cleaned above) or lower
        }
        net_->handle(e);
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
      if (nd.kind == kOp) start_op(nd.a, top.rank, top.t);
      else accept(nd.a, top.rank, top.t);
    }
  }

  // The first landing's loop: busy → put back at the time the resource frees. At one tick the
  // network's events come before the ranks'.
  void run_reference() {
    for (;;) {
      if (flow_ && !flow_->empty() && (q_.empty() || flow_->next_time() <= q_.top().t)) {
        flow_ended();
        continue;
      }
      const bool net_next = net_ && !net_->empty() && (q_.empty() || net_->next_time() <= q_.top().t);
      if (!effects_.empty() && (!net_next || net_->next_time() > effects_.front().t)) {
        apply_effects();
        continue;
      }
      if (net_next) {
        const Network::Event e = net_->pop();
        now_ = e.t;
        ++res_.events;
        net_->handle(e);
        continue;
      }
      if (q_.empty()) break;
      const Event e = q_.top();
      q_.pop();
      now_ = e.t;
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
      if (e.kind == kOp) start_op(e.a, r, e.t);
      else accept(e.a, r, e.t);
    }
  }

  // Rank r's ops in `ready` (now ready) as events.
  void push_ready_sorted(std::vector<std::uint32_t>& ready, int r, Ticks lower) {
    // LogGOPSim inserts a host's newly executable ops ordered by type: send, recv, local.
    auto cls = [&](std::uint32_t g) {
      const Work k = s_.items[g].kind;
      return k == Work::send ? 0 : k == Work::recv ? 1 : 2;
    };
    if (ready.size() > 1) std::stable_sort(ready.begin(), ready.end(), [&](auto x, auto y) { return cls(x) < cls(y); });
    for (std::uint32_t g : ready) {
      const RankState& rs = ranks_[static_cast<std::size_t>(r)];
      const bool blocked = rs.cpu == kBlocked;
      Ticks t = blocked ? now_ : rs.cpu;
      if (s_.items[g].kind == Work::send && !blocked) t = std::max(t, rs.sgap);
      t = std::max({t, now_, lower});
      if (pacing_ && s_.items[g].kind == Work::send && s_.round[g] != 0) t = std::max(t, round_start(s_.round[g]));
      push_rank_event(t, r, g, kOp);
    }
  }

  void release(const Array<std::uint32_t>& first, const Array<std::uint32_t>& list, std::uint32_t g, int r,
               Ticks lower) {
    std::vector<std::uint32_t> ready;
    for (std::uint32_t i = first[g]; i < first[g + 1]; ++i)
      if (--op_[list[i]].remaining == 0) ready.push_back(list[i]);
    if (!ready.empty()) push_ready_sorted(ready, r, lower);
  }

  // Rank r's finishing time is at least t.
  void finish_at_least(int r, Ticks t) {
    Ticks& f = finish_[static_cast<std::size_t>(r)];
    f = std::max(f, t);
  }

  // Op g of rank r completed at t_done.
  void complete(std::uint32_t g, int r, Ticks t_done) {
    op_[g].flags |= kDone;
    ++done_;
    if ((done_ & 0xFFFFu) == 0 && opt_.progress) opt_.progress(done_, s_.ops());
    finish_at_least(r, t_done);
    ready_.clear();
    for (std::uint32_t i = op_[g].succ; i < op_[g + 1].succ; ++i)
      if (--op_[succ_[i]].remaining == 0) ready_.push_back(succ_[i]);
    if (!ready_.empty()) push_ready_sorted(ready_, r, t_done);
  }

  void span_rank(int r, Ticks b, Ticks e, std::uint8_t what, int peer) {
    if (obs_ != nullptr) obs_->rank_span(r, b, e, what, peer);
  }

  // When `work` ticks of rank r's CPU begun at t end: t + work, or later by the detours met
  // (SimOptions::noise), each of which is then a span of its own when traced.
  Ticks cpu_end(int r, Ticks t, Ticks work) {
    if (noise_ == nullptr) return t + work;
    const Ticks end = noise_->finish(r, t, work);
    res_.noise_ticks += end - t - work;
    if (obs_ != nullptr && end != t + work)
      noise_->detours_in(r, t, end, [&](Ticks b, Ticks e) { obs_->rank_span(r, b, e, 6, -1); });
    return end;
  }

  // ---- host costs per model ----
  [[nodiscard]] std::uint32_t packets_of(std::uint64_t bytes) const { return mesh_ ? detail::mesh_packets(m_.mesh, bytes) : 1; }
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
  void start_op(std::uint32_t g, int r, Ticks t) {
    RankState& rs = ranks_[static_cast<std::size_t>(r)];
    const Schedule::Item& it = s_.items[g];
    if (!isucc_first_.empty()) release(isucc_first_, isucc_, g, r, t);  // irequires: ops waiting for g's start
    switch (it.kind) {
      case Work::send: {
        const std::uint64_t b = it.size;
        const Costs& k = costs(r, it.peer);
        const Ticks os = at(k, k.send_overhead, b);
        const Ticks os_end = cpu_end(r, t, os);
        // The message leaves when the (stretched) overhead is done: a detour delays it too.
        const Ticks delay = os_end - t - os;
        rs.cpu = checked(os_end);
        rs.sgap = checked(t + at(k, k.send_gap, b));
        span_rank(r, t, os_end, 0, it.peer);
        ++res_.messages;
        // Rendezvous (more than S bytes): the message travels as an eager one would, but the
        // send completes only when the receiver matches it (matched()).
        const bool eager = !rendezvous_ || b <= k.eager_limit;
        if (!eager) {
          ++res_.rendezvous;
          op_[g].flags |= kRendezvous;
          finish_at_least(r, os_end);
        }
        if (!msg_records_) {
          push_rank_event(t + k.wire + delay, it.peer, it.partner, kArrive);
          if (eager) complete(g, r, os_end);
          return;
        }
        const std::uint32_t mi = new_msg();
        Msg& msg = msgs_[mi];
        msg = Msg{};
        msg.src = r;
        msg.dst = it.peer;
        msg.tag = dynamic_ ? s_.tags[g] : 0;
        msg.send_op = g;
        msg.recv_op = dynamic_ ? kNone : it.partner;
        if (!mesh_) {
          if (flow_) send_flow(mi, k, t);
          else push_rank_event(t + k.wire + delay, it.peer, mi, kArrive);
          if (eager) complete(g, r, os_end);
          return;
        }
        MeshMsg& mm = mesh_msgs_[mi];
        mm = MeshMsg{};
        mm.packets = packets_of(b);
        mm.overhead_end = os_end;
        net_->send(mi, r, it.peer, b, mm.packets, os_end);
        const auto buffered = static_cast<std::uint32_t>(std::max(0, m_.mesh.send_buffer_packets));
        if (m_.send_mode == SendMode::blocking && mm.packets > buffered) {
          mm.blocking = true;
          rs.cpu = kBlocked;
        } else {
          complete(g, r, os_end);
        }
        return;
      }
      case Work::recv: {
        Ticks done = t;
        if (pacing_ && s_.round[g] != 0) done = std::max(done, round_end(s_.round[g]));
        if (!dynamic_) {
          const bool found = op_[g].flags & kAccepted;
          if (opt_.queue_stats) count_queues(r, kUnexpectedQueue, found);
          if (found) matched(g, r, done, rendezvous_ ? it.partner : kNone, it.peer, t);
          else op_[g].flags |= kPosted;
          return;
        }
        const std::uint32_t mi = matcher_.take_msg(r, it.peer, s_.tags[g]);
        if (opt_.queue_stats) count_queues(r, kUnexpectedQueue, mi != kNone);
        if (mi == kNone) {
          matcher_.post_recv(r, it.peer, s_.tags[g], g);
          return;
        }
        check_fits(mi, g);
        const std::uint32_t send = rendezvous_ ? msgs_[mi].send_op : kNone;
        const int src = msgs_[mi].src;
        free_msg(mi);
        matched(g, r, done, send, src, t);
        return;
      }
      case Work::reduce:
      case Work::copy:
      case Work::calc: {
        const Ticks cost = it.kind == Work::calc     ? static_cast<Ticks>(it.size)
                           : it.kind == Work::reduce ? c_.reduce.at(it.size)
                                                     : c_.copy.at(it.size);
        const Ticks end = cpu_end(r, t, cost);
        rs.cpu = checked(end);
        span_rank(r, t, end, it.kind == Work::reduce ? 2 : it.kind == Work::copy ? 3 : 5, -1);
        complete(g, r, end);
        return;
      }
    }
  }

  void check_fits(std::uint32_t mi, std::uint32_t g) const {
    const std::uint64_t bytes = s_.items[msgs_[mi].send_op].size;
    if (bytes > s_.items[g].size)
      throw InputError(s_.where(g) + " receives " + std::to_string(s_.items[g].size) + " bytes but the message from " +
                       std::to_string(msgs_[mi].src) + " (tag " + std::to_string(msgs_[mi].tag) + ") has " +
                       std::to_string(bytes));
  }

  // The message a (a message record, or for a plan off the mesh the receive op it is for) has
  // arrived at rank d.
  void accept(std::uint32_t a, int d, Ticks t) {
    std::uint64_t bytes;
    int src;
    std::uint32_t g;
    if (msg_records_) {
      const Msg& msg = msgs_[a];
      bytes = s_.items[msg.send_op].size;
      src = msg.src;
      g = msg.recv_op;
    } else {
      g = a;
      bytes = s_.items[g].size;
      src = s_.items[g].peer;
    }
    RankState& rs = ranks_[static_cast<std::size_t>(d)];
    const Costs& k = costs(src, d);
    const Ticks orv_end = cpu_end(d, t, at(k, k.recv_overhead, bytes));
    rs.cpu = checked(orv_end);
    rs.rgap = checked(t + at(k, k.recv_gap, bytes));
    finish_at_least(d, rs.cpu);
    span_rank(d, t, orv_end, 1, src);
    if (dynamic_) {
      g = matcher_.take_recv(d, src, msgs_[a].tag);
      if (opt_.queue_stats) count_queues(d, kPostedQueue, g != kNone);
      if (g == kNone) {
        matcher_.add_msg(d, src, msgs_[a].tag, a);
        return;
      }
      check_fits(a, g);
    } else if (opt_.queue_stats) {
      count_queues(d, kPostedQueue, (op_[g].flags & kPosted) != 0);
    }
    std::uint32_t send = kNone;
    if (rendezvous_) send = msg_records_ ? msgs_[a].send_op : s_.items[g].partner;
    if (msg_records_) free_msg(a);
    if (dynamic_ || (op_[g].flags & kPosted)) {
      Ticks done = orv_end;
      if (pacing_ && s_.round[g] != 0) done = std::max(done, round_end(s_.round[g]));
      matched(g, d, done, send, src, t);
    } else {
      op_[g].flags |= kAccepted;
    }
  }

  // Receive g has met its message at t_match and completes at t_recv. If the message went by
  // rendezvous, its send completes at t_match (LogGOPSim.cpp, OP_MSG and OP_RECV: the sender's
  // requires are met when the receiver matches; no time is charged for the handshake). The
  // lower rank's newly ready ops are created first: LogGOPSim visits the hosts that completed
  // something in rank order. send: the message's send op, kNone when no send can be rendezvous.
  // g is rank r's receive; src the rank of send.
  void matched(std::uint32_t g, int r, Ticks t_recv, std::uint32_t send, int src, Ticks t_match) {
    if (send == kNone || !(op_[send].flags & kRendezvous)) {
      complete(g, r, t_recv);
    } else if (src < r) {
      complete(send, src, t_match);
      complete(g, r, t_recv);
    } else {
      complete(g, r, t_recv);
      complete(send, src, t_match);
    }
  }

  // Queue statistics (SimOptions::queue_stats): rank r searches its queue `which` (posted
  // receives when a message is accepted, unexpected messages when a receive is posted); its
  // length then is a sample; the search takes an entry out, or the searcher joins the other queue.
  enum WhichQueue : int { kPostedQueue = 0, kUnexpectedQueue = 1 };
  struct QueueCounts {
    std::uint32_t len[2] = {0, 0};
    std::uint32_t max[2] = {0, 0};
    std::uint64_t sum[2] = {0, 0};
    std::uint64_t samples[2] = {0, 0};
  };
  void count_queues(int r, WhichQueue which, bool found) {
    QueueCounts& q = queues_[static_cast<std::size_t>(r)];
    q.max[which] = std::max(q.max[which], q.len[which]);
    q.sum[which] += q.len[which];
    ++q.samples[which];
    if (found) --q.len[which];
    else ++q.len[1 - which];
  }

  std::uint32_t new_msg() {
    if (!free_msgs_.empty()) {
      const std::uint32_t m = free_msgs_.back();
      free_msgs_.pop_back();
      return m;
    }
    msgs_.emplace_back();
    if (mesh_) mesh_msgs_.emplace_back();
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
      const std::string rendezvous =
          (op_[g].flags & kRendezvous) ? ": a rendezvous send (" + std::to_string(s_.items[g].size) +
                                             " bytes, more than the machine's S) waits for its receive to be posted"
                                       : "";
      if (!dynamic_) {
        const int r = s_.rank_of(g);
        throw InputError("plan deadlocks in the emulator: rank " + std::to_string(r) + " op " +
                         std::to_string(g - s_.first[static_cast<std::size_t>(r)]) + " never completes" + rendezvous);
      }
      if (!rendezvous.empty()) throw InputError(s_.where(g) + " never completes" + rendezvous);
      throw InputError(s_.where(g) + " never completes (a receive without its send, a dependency cycle, or a deadlock)");
    }
  }

  // ---- a network file's flows ----
  // Message mi's send started at t: its bytes (after the first, whose time is in L, as the host
  // costs charge them) enter the network as a flow; the message arrives o + L after the flow ends.
  void send_flow(std::uint32_t mi, const Costs& k, Ticks t) {
    const Msg& msg = msgs_[mi];
    const std::uint64_t bytes = s_.items[msg.send_op].size;
    const std::uint64_t charged = k.first_byte_free && bytes > 0 ? bytes - 1 : bytes;
    const Ticks work = k.flow.at(charged);
    if (work == 0) push_rank_event(t + k.wire, msg.dst, mi, kArrive);
    else flow_->insert(t, msg.src, msg.dst, work, mi);
  }
  void flow_ended() {
    const FlowNetwork::Ended e = flow_->pop();
    ++res_.events;
    now_ = e.t;
    const Msg& msg = msgs_[e.msg];
    push_rank_event(checked(e.t + costs(msg.src, msg.dst).wire), msg.dst, e.msg, kArrive);
  }

  // ---- the mesh network and its calls back ----
  void build_mesh() {
    std::uint64_t packets = 0;
    for (const Schedule::Item& it : s_.items)
      if (it.kind == Work::send) packets += packets_of(it.size);
    net_.emplace(*this, m_, c_.mesh, s_.p, packets, opt_.per_hop_mesh || opt_.reference_queue, obs_);
    unblocked_.assign(static_cast<std::size_t>(s_.p), 0);
  }

  // A step handled inside a network event moved time to t.
  void set_now(Ticks t) { now_ = t; }

  // A packet of message mi left its injection channel at t: a blocking send whose packets beyond
  // the send buffer are all in the network ends.
  void packet_injected(std::uint32_t mi, Ticks t) {
    MeshMsg& msg = mesh_msgs_[mi];
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
        push_rank_event(e.t, msgs_[e.mi].dst, e.mi, kArrive);
        continue;
      }
      const Msg& msg = msgs_[e.mi];
      span_rank(msg.src, mesh_msgs_[e.mi].overhead_end, e.t, 0, msg.dst);
      unblock(msg.src, e.t);
      complete(msg.send_op, msg.src, e.t);
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

  // A packet of message mi reached its destination at t: the last one makes the message arrive.
  void packet_delivered(std::uint32_t mi, Ticks t) {
    MeshMsg& msg = mesh_msgs_[mi];
    if (++msg.delivered == msg.packets) defer(t, mi, true);
  }

  static constexpr std::uint8_t kDone = 1, kPosted = 2, kAccepted = 4, kRendezvous = 8;

  const Schedule& s_;
  const Machine& m_;
  const SimOptions& opt_;
  const Costs c_;
  const std::vector<Costs> levels_;  // cluster: intra-node, inter-node
  const bool dynamic_;      // GOAL: match receives while running
  const bool mesh_;
  const bool msg_records_;  // messages need records (mesh, or dynamic matching)
  const bool rendezvous_;   // some message may go by rendezvous (a finite eager limit)
  SimResult res_;
  detail::TraceRecorder recorder_;  // traced runs: the observer
  Observer* const obs_;             // &recorder_ when traced, else null
  const Noise* const noise_;        // SimOptions::noise
  std::uint64_t seq_ = 0;
  std::uint64_t first_seq_ = 0;  // the default discipline: the next first event's seq
  int first_rank_ = 0;           // ... and its rank (s_.p: all created)
  Ticks now_ = 0;
  std::uint32_t done_ = 0;

  Array<OpState> op_;  // one per op, and one holding the end of the last op's successors
  std::vector<std::uint32_t> ready_;  // scratch of complete(); push_ready_sorted() never re-enters it
  Array<std::uint32_t> succ_, isucc_first_, isucc_;
  Array<RankState> ranks_;
  std::vector<Ticks> finish_;  // per rank: when its last op completed (SimResult::per_rank_ticks)
  std::vector<QueueCounts> queues_;  // SimOptions::queue_stats
  std::vector<Ticks> unblocked_;  // mesh: when each rank last left a blocking send
  Pool<Msg> msgs_;
  Pool<MeshMsg> mesh_msgs_;  // mesh runs: one per message record
  std::vector<std::uint32_t> free_msgs_;
  Matcher matcher_;
  bool pacing_ = false;
  Ticks t0_ = 0, lat_ = 0;
  // Mesh: while a network event is handled, the key time of the earliest other event. A step
  // due strictly before it (and before the rank effects not yet applied: limit()) is the next
  // event the loop would pop, so the network handles it at once instead of through its queue
  // (-1: never, as in the per-hop discipline).
  Ticks horizon_ = -1;

  // default discipline
  Pool<Node> nodes_;
  std::int32_t free_nodes_ = kNil;
  SlotQueue heap_;
  std::vector<int> dirty_;
  // Per rank: kDirtyBit (in dirty_) and, in the low bits, which of its heaps its standing entry
  // pops (a class, or kClasses = pending). The heap is kept because an event that moves from the
  // pending heap to a ready heap when its class's need rises to exactly its time keeps its key.
  static constexpr std::uint8_t kDirtyBit = 0x80, kSrcMask = 0x07;
  Array<std::uint8_t> rank_bits_;
  // reference discipline
  std::priority_queue<Event, std::vector<Event>, EventAfter> q_;
  std::vector<std::vector<Event>> parked_;

  std::optional<Network> net_;       // mesh models
  std::optional<FlowNetwork> flow_;  // a logp machine with a network file
  std::vector<RankEffect> effects_;  // a tick's network events' effects on the ranks, not yet applied
};

}  // namespace

SimResult simulate(const Schedule& schedule, const Machine& machine, const SimOptions& options) {
  Engine engine(schedule, machine, options);
  return engine.run();
}

SimResult simulate(const Plan& plan, const Machine& machine, const SimOptions& options) {
  return simulate(schedule_of(plan), machine, options);
}

}  // namespace postbox::sim
