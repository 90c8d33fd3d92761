// The network of a mesh or torus machine (docs/emulator.md, "Mesh and torus"): its channels,
// the packets of the messages sent through it, dimension-order routing, wormhole arbitration and
// store-and-forward links, and its own event queue.
//
// The engine (simulator.cpp) hands it each message when the message's send overhead ends
// (send()), and runs its events among the ranks' (next_time(), pop(), handle()). The network
// calls back into the engine, its Host, when a packet has entered the network and when one is
// delivered; the Host also says how far the network may run ahead inside one event. MeshNetwork
// is a template over the Host so that these calls, several per packet, are direct and inlined.
//
// A Host provides:
//   Ticks limit() const;                        steps due strictly before it may be handled
//                                               inside the current event (see advance())
//   void queued(Ticks t);                       the network queued an event at t
//   void set_now(Ticks t);                      a step handled inside an event moved time to t
//   void packet_injected(std::uint32_t msg, Ticks t);  a packet of msg left its injection channel
//   void packet_delivered(std::uint32_t msg, Ticks t); a packet of msg reached its destination
//   void settle(Ticks t);                       nothing else is due at t or before it
#pragma once

#include <algorithm>
#include <cstdint>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "postbox/emulator/machine.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/limits.hpp"
#include "postbox/runtime/ticks.hpp"
#include "trace.hpp"
#include "virtual_time.hpp"

namespace postbox::sim::detail {

// The packets a message of `bytes` bytes is cut into on `mesh` (at least one).
inline std::uint32_t mesh_packets(const MeshSpec& mesh, std::uint64_t bytes) {
  if (mesh.packet_bytes == 0) return 1;
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (bytes + mesh.packet_bytes - 1) / mesh.packet_bytes));
}

// A mesh's link and router costs in ticks.
struct MeshCosts {
  Ticks router = 0;  // per hop, paid by the header
  PerByte link;      // per byte on a link
};
// The machine's mesh costs; InputError if the link bandwidth is not positive.
MeshCosts mesh_costs(const Machine& m);

// The channels of a mesh and the routes through them. A channel is a network link, numbered
// ((node·nd + d)·2 + dir)·nvc + vc (dimension d, dir 0 = +, 1 = −, virtual channel vc), then one
// injection channel per node, then one ejection channel per node.
class MeshTopology {
 public:
  MeshTopology() = default;
  // The tables; InputError (naming the channels) if they do not fit in memory.
  explicit MeshTopology(const MeshSpec& mesh);

  [[nodiscard]] std::int64_t nodes() const { return nodes_count_; }
  [[nodiscard]] std::int64_t channels() const { return net_links_ + 2 * nodes_count_; }
  [[nodiscard]] int vcs() const { return nvc_; }
  [[nodiscard]] std::int64_t inject_link(std::int64_t node) const { return net_links_ + node; }
  [[nodiscard]] std::int64_t eject_link(std::int64_t node) const { return net_links_ + nodes_count_ + node; }
  [[nodiscard]] bool is_inject(std::int64_t l) const { return l >= net_links_ && l < net_links_ + nodes_count_; }
  [[nodiscard]] bool is_eject(std::int64_t l) const { return l >= net_links_ + nodes_count_; }

  // Dimension-order routing: X (the last, fastest dimension) first, then towards dimension 0.
  // Torus: the shorter way round (ties: +), and Dally–Seitz dateline virtual channels so a
  // blocked worm cannot close a cycle: VC 0 until the packet has crossed the wrap link of the
  // current dimension, VC 1 after. Returns the next link and the node it leads to, or the
  // ejection link (and -1) at the destination.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> next_hop(std::int64_t node, std::int64_t src, std::int64_t dst) const {
    for (int d = nd_ - 1; d >= 0; --d) {
      const int c = coord(node, d), t = coord(dst, d);
      if (c == t) continue;
      const int k = dims_[static_cast<std::size_t>(d)];
      int dir = c < t ? 0 : 1;  // 0: +, 1: −
      int vc = 0;
      if (wrap_) {
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
  // The channel after `link` (the injection channel or a link) on the path from src to dst: the
  // ejection channel after the last link.
  [[nodiscard]] std::int64_t channel_after(std::int64_t link, std::int64_t src, std::int64_t dst) const {
    return next_hop(is_inject(link) ? src : link_to_node(link), src, dst).first;
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
  // Where channel l is (the trace's link tracks).
  [[nodiscard]] LinkPlace place(std::int64_t l) const;

 private:
  [[nodiscard]] int coord(std::int64_t node, int d) const { return coords_[static_cast<std::size_t>(node * nd_ + d)]; }
  [[nodiscard]] std::int64_t link_to_node(std::int64_t link) const { return far_node_[static_cast<std::size_t>(link)]; }

  std::vector<int> dims_;
  bool wrap_ = false;
  int nd_ = 0;
  int nvc_ = 1;
  std::int64_t nodes_count_ = 0;
  std::int64_t net_links_ = 0;
  // Routing reads coordinates and far ends from tables: the divisions they take were about a
  // third of a contended Delta run's time.
  std::vector<std::int32_t> coords_;    // node n's coordinate in dimension d at n·nd + d
  std::vector<std::int64_t> far_node_;  // the node a network link leads to
};

// Wormhole arbitration (docs/emulator.md, "Mesh and torus"): a channel goes to the header that
// asks for it first; headers asking at one tick are served by key_of(), so no order in which the
// loop handles the events of a tick changes an answer. A header goes on through the channels it
// finds free at once (advance()), each taken at the tick it reaches it; a header that asks for
// one of them earlier, or at that tick with a lower key, takes it back (cut()).
template <class Host>
class MeshNetwork {
 public:
  enum class Kind : std::uint8_t {
    inject,     // a = message: the send overhead is over, its packets go to the NIC
    step,       // a = packet: it finished traversing (wormhole: its header entered) its current link
    worm_done,  // a = packet: the worm's tail reached the destination (wormhole)
  };
  struct Event {
    Ticks t;
    std::uint64_t seq;
    std::uint32_t a;
    Kind kind;
  };
  // What the network counted (SimResult's fields of those names).
  struct Counts {
    std::uint64_t inline_steps = 0;
    std::uint64_t channel_waits = 0;
    std::uint64_t channel_ties = 0;
    std::uint64_t void_events = 0;  // popped events a cut had made void: not handled, not counted
  };

  // The network of machine m (a mesh model) for p ranks placed by m.placement, which will carry
  // `packets` packets in all. per_hop: every step an event (SimOptions::per_hop_mesh); observer:
  // null unless traced. InputError if the mesh has fewer than p nodes, the packets are more
  // than kMaxMeshPackets, or the packets or channels do not fit in memory.
  MeshNetwork(Host& host, const Machine& m, const MeshCosts& costs, int p, std::uint64_t packets, bool per_hop,
              Observer* observer)
      : host_(host), ms_(m.mesh), costs_(costs), per_hop_(per_hop), obs_(observer) {
    const std::int64_t nodes = ms_.nodes();
    if (nodes < p)
      throw InputError("mesh has " + std::to_string(nodes) + " nodes, fewer than p = " + std::to_string(p));
    // The work is per packet (at least two events each), so a run's packets are bounded up
    // front: delta at 1 GiB made 2^21 packets per message and ran for minutes.
    if (packets > kMaxMeshPackets)
      throw InputError("the run sends " + std::to_string(packets) + " packets through the mesh, more than " +
                       std::to_string(kMaxMeshPackets) + " (minutes of emulation): use fewer bytes or ranks");
    require_memory(packets * sizeof(Packet), "the run's " + std::to_string(packets) + " packets");
    packets_.reserve(packets);  // grown by doubling they were copied, and their pages zeroed, twice over
    node_of_ = place_ranks(ms_, m.placement, p);
    topo_ = MeshTopology(ms_);
    const auto total = static_cast<std::size_t>(topo_.channels());
    if (ms_.switching == Switching::wormhole) {
      owner_.assign(total, kNone);
      since_.assign(total, 0);
      oreq_.assign(total, 0);
      okey_.assign(total, 0);
      wait_head_.assign(total, kNone);
      wait_tail_.assign(total, kNone);
    } else {
      free_at_.assign(total, 0);
    }
    if (obs_ != nullptr) traced_.assign(total, 0);
  }

  // Message mi, `bytes` bytes from rank src to rank dst in `packets` packets, enters the network
  // at t (the send overhead is over).
  void send(std::uint32_t mi, int src, int dst, std::uint64_t bytes, std::uint32_t packets, Ticks t) {
    if (routes_.size() <= mi) routes_.resize(static_cast<std::size_t>(mi) + 1);
    routes_[mi] = Route{node_of_[static_cast<std::size_t>(src)], node_of_[static_cast<std::size_t>(dst)], src, dst,
                        bytes, packets};
    push(t, mi, Kind::inject);
  }

  [[nodiscard]] bool empty() const { return queue_.empty(); }
  [[nodiscard]] Ticks next_time() const { return queue_.top().t; }  // of the next event (not empty())
  Event pop() {
    const Event e = queue_.top();
    queue_.pop();
    return e;
  }
  // Handles a popped event; time is e.t.
  void handle(const Event& e) {
    now_ = e.t;
    switch (e.kind) {
      case Kind::inject: on_inject(e); break;
      case Kind::step: on_step(e); break;
      case Kind::worm_done: on_worm_done(e); break;
    }
  }

  [[nodiscard]] std::uint64_t packets() const { return packets_.size(); }
  [[nodiscard]] const Counts& counts() const { return counts_; }

  // Reports the place of each channel that carried traffic to the observer (traced runs).
  void report_links() const {
    if (obs_ == nullptr) return;
    for (std::size_t l = 0; l < traced_.size(); ++l)
      if (traced_[l]) obs_->link_place(static_cast<std::int64_t>(l), topo_.place(static_cast<std::int64_t>(l)));
  }

 private:
  static constexpr std::int32_t kNone = -1;
  static constexpr std::uint64_t kNoEvent = ~std::uint64_t{0};

  struct Route {  // per message
    std::int64_t src = 0, dst = 0;  // nodes
    int src_rank = 0, dst_rank = 0;
    std::uint64_t bytes = 0;
    std::uint32_t packets = 1;
  };

  struct Packet {
    std::uint32_t msg = 0;
    std::int32_t next_waiter = kNone;
    std::uint64_t wire_bytes = 0;
    std::int64_t link = -1;             // the last channel its header took (store-and-forward: its current link)
    Ticks req_t = 0;                    // wormhole, while it waits: the tick it asked
    std::uint64_t pending = kNoEvent;   // wormhole: the sequence number of its one queued event
    std::uint32_t key = 0;              // wormhole, while it waits: its request's key
    bool waiting = false;
  };

  struct After {  // events by (time, sequence number of creation)
    bool operator()(const Event& x, const Event& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
  };

  [[nodiscard]] bool per_hop() const { return per_hop_; }
  [[nodiscard]] Ticks body(const Packet& pk) const { return costs_.link.at(pk.wire_bytes); }
  [[nodiscard]] Ticks header(std::int64_t link) const {
    return (topo_.is_inject(link) || topo_.is_eject(link)) ? 0 : costs_.router;
  }
  // The channel after pk.link on pk's path.
  [[nodiscard]] std::int64_t next_channel(const Packet& pk) const {
    const Route& r = routes_[pk.msg];
    return topo_.channel_after(pk.link, r.src, r.dst);
  }
  [[nodiscard]] static bool asks_before(Ticks t, std::uint32_t key, Ticks t2, std::uint32_t key2) {
    return t != t2 ? t < t2 : key < key2;
  }

  void push(Ticks t, std::uint32_t a, Kind kind) {
    checked(t);
    host_.queued(t);
    queue_.push(Event{t, seq_++, a, kind});
  }
  void push_packet_event(std::uint32_t pi, Ticks t, Kind kind) {
    packets_[pi].pending = seq_;
    push(t, pi, kind);
  }
  void set_now(Ticks t) {
    now_ = t;
    host_.set_now(t);
  }

  void span_link(std::int64_t link, Ticks b, Ticks e, const Packet& pk) {
    if (obs_ == nullptr) return;
    const Route& r = routes_[pk.msg];
    traced_[static_cast<std::size_t>(link)] = 1;
    obs_->link_span(link, b, e, r.src_rank, r.dst_rank);
  }

  void on_inject(const Event& e) {
    const Route& r = routes_[e.a];
    const auto first = static_cast<std::uint32_t>(packets_.size());
    const std::uint64_t pb = ms_.packet_bytes == 0 ? r.bytes : ms_.packet_bytes;
    std::uint64_t left = r.bytes;
    for (std::uint32_t k = 0; k < r.packets; ++k) {
      const std::uint64_t payload = std::min(left, pb);
      left -= payload;
      Packet pk;
      pk.msg = e.a;
      pk.wire_bytes = payload + ms_.header_bytes;
      packets_.push_back(pk);
    }
    const std::uint32_t n = r.packets;
    const std::int64_t inj = topo_.inject_link(r.src);
    if (ms_.switching == Switching::store_and_forward) {
      // The first packet takes the injection channel, the others are queued behind it.
      const Ticks due = acquire_saf(first, inj, e.t);
      for (std::uint32_t k = 1; k < n; ++k) acquire_saf(first + k, inj, e.t, false);
      if (due >= 0) {  // its step is due before every other event: the queue would pop it next
        ++counts_.inline_steps;
        set_now(due);
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
    pk.next_waiter = kNone;
    const auto l = static_cast<std::size_t>(c);
    auto before = [&](std::int32_t w) {
      const Packet& q = packets_[static_cast<std::size_t>(w)];
      return asks_before(q.req_t, q.key, asked, key);
    };
    const auto me = static_cast<std::int32_t>(pi);
    if (wait_tail_[l] == kNone) {
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
    if (wait_head_[l] == kNone) wait_tail_[l] = kNone;
    pw.waiting = false;
    return static_cast<std::uint32_t>(w);
  }
  void unlink_waiter(std::uint32_t pi, std::int64_t c) {
    const auto l = static_cast<std::size_t>(c);
    const auto me = static_cast<std::int32_t>(pi);
    std::int32_t prev = kNone;
    for (std::int32_t w = wait_head_[l]; w != me; w = packets_[static_cast<std::size_t>(w)].next_waiter) {
      PB_CHECK(w != kNone, "a waiting packet is in the FIFO of the channel it waits for");
      prev = w;
    }
    const std::int32_t after = packets_[pi].next_waiter;
    if (prev == kNone) wait_head_[l] = after;
    else packets_[static_cast<std::size_t>(prev)].next_waiter = after;
    if (wait_tail_[l] == me) wait_tail_[l] = prev;
    packets_[pi].waiting = false;
  }

  // pi's header asks for c at t, which is now. Returns whether it has it.
  bool request(std::uint32_t pi, std::int64_t c, Ticks t, std::uint32_t key) {
    const auto l = static_cast<std::size_t>(c);
    const std::int32_t o = owner_[l];
    if (o == kNone) {  // (a channel with waiters has an owner)
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
    const Route& r = routes_[po.msg];
    const std::int64_t src = r.src, dst = r.dst;
    PB_CHECK(!topo_.is_inject(c), "a node's packets ask for its injection channel in their order");
    if (po.waiting) unlink_waiter(o, next_channel(po));
    po.pending = kNoEvent;  // its step or its end, if queued, is void
    std::int64_t prev = topo_.inject_link(src);
    for (std::int64_t x = topo_.channel_after(prev, src, dst); x != c; x = topo_.channel_after(prev, src, dst)) {
      PB_CHECK(!topo_.is_eject(x), "a cut channel is on the packet's path");
      prev = x;
    }
    const Ticks asked = oreq_[static_cast<std::size_t>(c)];
    const std::uint32_t key = okey_[static_cast<std::size_t>(c)];
    const std::size_t first_freed = freed_.size();
    for (std::int64_t x = c;;) {
      const auto l = static_cast<std::size_t>(x);
      owner_[l] = kNone;
      if (x != c && wait_head_[l] != kNone) freed_.push_back({x, oreq_[l]});
      if (x == po.link) break;
      x = topo_.channel_after(x, src, dst);
    }
    po.link = prev;
    if (asked > now_) push_packet_event(o, asked, Kind::step);  // it asks again when its header gets there
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
      if (!topo_.is_inject(x) && t > pw.req_t) {
        ++counts_.channel_waits;
        if (pw.req_t == prev_asked) ++counts_.channel_ties;
      }
      take(w, x, pw.req_t, t, pw.key);
      after_grant(w, checked(t + header(x)), false);
    }
  }

  // pi has its channel, its header through it at t.
  void after_grant(std::uint32_t pi, Ticks t, bool top) {
    if (per_hop()) push_packet_event(pi, t, Kind::step);
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

  // pi's header is through its channel at t: it takes each next channel it finds free, at the
  // tick it reaches it; at a busy one it asks at once if that tick is now, else an event asks then.
  // `top`: nothing of this event's is left to do after it, so its end may be handled here.
  void advance(std::uint32_t pi, Ticks t, bool top) {
    for (;;) {
      Packet& pk = packets_[pi];
      if (topo_.is_eject(pk.link)) {
        end_worm(pi, checked(t + body(pk)), top);
        return;
      }
      const std::int64_t c = next_channel(pk);
      const std::uint32_t key = topo_.key_of(pi, pk.link, c);
      if (owner_[static_cast<std::size_t>(c)] == kNone) {
        take(pi, c, t, t, key);
      } else if (t > now_) {
        push_packet_event(pi, t, Kind::step);
        return;
      } else if (!request(pi, c, t, key)) {
        return;
      }
      ++counts_.inline_steps;
      t = checked(t + header(c));
    }
  }

  // The worm's tail is through at `done`. Handled here when nothing else is due before it.
  void end_worm(std::uint32_t pi, Ticks done, bool top) {
    if (top && !per_hop() && todo_.empty() && done < host_.limit()) {
      ++counts_.inline_steps;
      set_now(done);
      worm_done(pi, done);
      return;
    }
    push_packet_event(pi, done, Kind::worm_done);
  }

  // A step event: the packet's header asks for its next channel (wormhole), or finished its link.
  void on_step(const Event& e) {
    if (ms_.switching == Switching::store_and_forward) {
      on_hop_saf(e.a, e.t);
      return;
    }
    if (!claim(e)) return;
    const Packet& pk = packets_[e.a];
    if (topo_.is_eject(pk.link)) {  // (the per-hop discipline: the ejection channel's step)
      end_worm(e.a, checked(e.t + body(pk)), true);
    } else {
      const std::int64_t c = next_channel(pk);
      if (request(e.a, c, e.t, topo_.key_of(e.a, pk.link, c))) after_grant(e.a, checked(e.t + header(c)), true);
    }
    drain();
  }

  // The event is its packet's queued one (then no longer queued), or void: a cut sent the packet
  // back since; popped, not counted.
  bool claim(const Event& e) {
    Packet& pk = packets_[e.a];
    if (pk.pending != e.seq) {
      ++counts_.void_events;
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
    const std::int64_t src = routes_[mi].src;
    const std::int64_t dst = routes_[mi].dst;
    const std::int64_t inj = topo_.inject_link(src);
    const std::size_t first_freed = freed_.size();
    auto leave = [&](std::int64_t x) {
      const auto l = static_cast<std::size_t>(x);
      span_link(x, since_[l], t, packets_[static_cast<std::size_t>(owner_[l])]);
      owner_[l] = kNone;
      if (wait_head_[l] != kNone) freed_.push_back({x, oreq_[l]});
    };
    leave(inj);
    std::int64_t node = src;
    Ticks hops = 0;
    for (;;) {
      const auto [link, next] = topo_.next_hop(node, src, dst);
      leave(link);
      if (next < 0) break;
      ++hops;
      node = next;
    }
    const Ticks path = hops * costs_.router;
    for (;;) {
      host_.packet_injected(mi, t);
      host_.packet_delivered(mi, t);
      host_.settle(t);
      // Traced, every packet's spans are reported, so none is handled in the stream.
      if (obs_ != nullptr || per_hop() || freed_.size() != first_freed + 1 || freed_.back().first != inj) break;
      const std::int32_t w = wait_head_[static_cast<std::size_t>(inj)];
      if (packets_[static_cast<std::size_t>(w)].msg != mi || !todo_.empty()) break;
      const Ticks end = t + path + body(packets_[static_cast<std::size_t>(w)]);
      if (!(end < host_.limit())) break;
      dequeue(inj);
      freed_.pop_back();
      if (wait_head_[static_cast<std::size_t>(inj)] != kNone) freed_.push_back({inj, t});
      counts_.inline_steps += static_cast<std::uint64_t>(hops) + 3;
      t = checked(end);
      set_now(t);
    }
    hand_over(first_freed, t);
  }

  // Store-and-forward: packet pi asks for `link` at t and crosses it when it is free, first come
  // first served. Its next step is due at the returned time, before the host's limit(), so the
  // caller handles it now; or the step was queued as an event (-1).
  Ticks acquire_saf(std::uint32_t pi, std::int64_t link, Ticks t, bool may_inline = true) {
    Packet& pk = packets_[pi];
    pk.link = link;
    const auto l = static_cast<std::size_t>(link);
    if (free_at_[l] > t && !topo_.is_inject(link)) ++counts_.channel_waits;
    const Ticks start = std::max(t, free_at_[l]);
    const Ticks end = start + header(link) + body(pk);
    free_at_[l] = end;
    span_link(link, start, end, pk);
    if (may_inline && end < host_.limit()) return checked(end);
    push(end, pi, Kind::step);
    return -1;
  }

  // Store-and-forward: packet pi finished its current link at t. Steps due before the host's
  // limit() follow in this loop: the queue would pop each of them next (a new event loses ties
  // to every older one, hence the strict <).
  void on_hop_saf(std::uint32_t pi, Ticks t) {
    for (;;) {
      Packet& pk = packets_[pi];
      const Route& r = routes_[pk.msg];
      const std::int64_t link = pk.link;
      if (topo_.is_eject(link)) {
        host_.packet_delivered(pk.msg, t);
        host_.settle(t);
        return;
      }
      if (topo_.is_inject(link)) {
        host_.packet_injected(pk.msg, t);
        host_.settle(t);
      }
      const Ticks next = acquire_saf(pi, topo_.channel_after(link, r.src, r.dst), t);
      if (next < 0) return;
      ++counts_.inline_steps;
      t = next;
      set_now(t);
    }
  }

  Host& host_;
  const MeshSpec& ms_;
  const MeshCosts costs_;
  const bool per_hop_;
  Observer* const obs_;
  MeshTopology topo_;
  std::vector<std::int64_t> node_of_;  // rank → node
  std::vector<Route> routes_;          // message → its route
  std::vector<Packet> packets_;
  std::priority_queue<Event, std::vector<Event>, After> queue_;
  std::uint64_t seq_ = 0;
  Ticks now_ = 0;
  Counts counts_;

  std::vector<std::int32_t> owner_, wait_head_, wait_tail_;
  std::vector<Ticks> since_, free_at_;
  std::vector<Ticks> oreq_;           // wormhole: when the channel's holder asked for it
  std::vector<std::uint32_t> okey_;   // ... and its request's key
  std::vector<std::uint8_t> traced_;  // traced runs: the channels that carried traffic
  std::vector<std::pair<std::int64_t, Ticks>> freed_;  // channels given up that have waiters, and when their holder asked
  struct Todo {
    std::uint32_t pi;
    Ticks t;
    std::uint64_t token;
  };
  std::vector<Todo> todo_;  // packets given a channel, their headers through it at t, to advance
};

}  // namespace postbox::sim::detail
