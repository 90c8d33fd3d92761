// The discrete-event engine. Model semantics: docs/emulator.md; the host rules are LogGOPSim's
// (LogGOPSim.cpp, OP_SEND / OP_RECV / OP_LOCOP / OP_MSG) with per-model costs.
#include "postbox/runtime/sim/simulator.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "postbox/runtime/check.hpp"

namespace postbox::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int32_t kNone = -1;

enum EvKind : std::uint8_t {
  kOp,        // a = global op index: the op is ready to start
  kArrive,    // a = message: all its bytes are at the destination
  kInject,    // a = message: the send overhead is over, packets go to the NIC (mesh)
  kHop,       // a = packet: it finished traversing (wormhole: its header entered) its current link
  kWormDone,  // a = packet: the worm's tail reached the destination (wormhole)
};

struct Event {
  double t;
  std::uint64_t seq;
  std::uint32_t a;
  EvKind kind;
};

struct EventAfter {
  bool operator()(const Event& x, const Event& y) const {
    if (x.t != y.t) return x.t > y.t;
    return x.seq > y.seq;
  }
};

struct Msg {
  int src = 0, dst = 0;
  std::uint64_t bytes = 0;
  std::uint32_t send_op = 0, recv_op = 0;
  std::uint32_t packets = 1;
  std::uint32_t delivered = 0;
  std::uint32_t injected = 0;
  std::uint32_t first_packet = 0;
  bool blocking = false;  // the sender's CPU waits for injection (csend)
  double overhead_end = 0;
};

struct Packet {
  std::uint32_t msg = 0;
  std::uint64_t wire_bytes = 0;
  std::int64_t link = -1;        // the link it holds or last traversed
  std::int32_t next_waiter = kNone;
};

struct RankState {
  double cpu = 0;   // LogGOPSim nexto
  double sgap = 0;  // nextgs
  double rgap = 0;  // nextgr
  double finish = 0;
  bool blocked = false;
};

class Engine {
 public:
  Engine(const Plan& plan, const Machine& m, const SimOptions& opt) : plan_(plan), m_(m), opt_(opt) {}

  SimResult run() {
    build_ops();
    if (m_.kind == ModelKind::mesh) build_mesh();
    for (int r = 0; r < plan_.p; ++r) {
      std::vector<std::uint32_t> ready;
      for (std::uint32_t j = 0; j < plan_.ops(r).size(); ++j)
        if (remaining_[base_[r] + j] == 0) ready.push_back(base_[r] + j);
      push_ready_sorted(ready, 0.0);
    }
    while (!q_.empty()) {
      Event e = q_.top();
      q_.pop();
      ++res_.events;
      now_ = e.t;
      dispatch(e);
    }
    for (std::size_t i = 0; i < done_.size(); ++i) {
      if (!done_[i]) {
        const int r = rank_of(static_cast<std::uint32_t>(i));
        throw InputError("plan deadlocks in the emulator: rank " + std::to_string(r) + " op " +
                         std::to_string(i - base_[r]) + " never completes");
      }
    }
    res_.per_rank_us.resize(static_cast<std::size_t>(plan_.p));
    double end = 0;
    for (int r = 0; r < plan_.p; ++r) {
      res_.per_rank_us[r] = ranks_[r].finish;
      end = std::max(end, ranks_[r].finish);
    }
    res_.time_us = end;
    res_.messages = msgs_.size();
    res_.packets = packets_.size();
    if (opt_.trace && m_.kind == ModelKind::mesh) name_links();
    return std::move(res_);
  }

 private:
  // ---- plan ----
  void build_ops() {
    if (plan_.p < 1 || plan_.rank_count() != plan_.p)
      throw InputError("plan: p = " + std::to_string(plan_.p) + " but it has " +
                       std::to_string(plan_.rank_count()) + " rank programs");
    base_.assign(static_cast<std::size_t>(plan_.p) + 1, 0);
    for (int r = 0; r < plan_.p; ++r) base_[r + 1] = base_[r] + static_cast<std::uint32_t>(plan_.ops(r).size());
    const std::uint32_t n = base_[plan_.p];
    remaining_.assign(n, 0);
    done_.assign(n, 0);
    posted_.assign(n, 0);
    accepted_.assign(n, 0);
    match_.assign(n, 0);
    op_rank_.resize(n);
    op_ptr_.resize(n);
    for (int r = 0; r < plan_.p; ++r)
      for (std::uint32_t j = 0; j < plan_.ops(r).size(); ++j) {
        op_rank_[base_[r] + j] = r;
        op_ptr_[base_[r] + j] = plan_.ops(r)[j];
      }
    dep_off_.assign(n + 1, 0);
    // Dependents in CSR form; deps must point backwards within the rank.
    for (int r = 0; r < plan_.p; ++r) {
      const RankOps ops = plan_.ops(r);
      for (std::uint32_t j = 0; j < ops.size(); ++j) {
        remaining_[base_[r] + j] = static_cast<std::uint32_t>(ops[j].deps.size());
        for (std::uint32_t d : ops[j].deps) {
          if (d >= j) throw InputError("plan: rank " + std::to_string(r) + " op " + std::to_string(j) +
                                       " depends on op " + std::to_string(d) + ", not an earlier op");
          ++dep_off_[base_[r] + d + 1];
        }
      }
    }
    for (std::uint32_t i = 0; i < n; ++i) dep_off_[i + 1] += dep_off_[i];
    dep_list_.assign(dep_off_[n], 0);
    std::vector<std::uint32_t> fill(dep_off_.begin(), dep_off_.end() - 1);
    for (int r = 0; r < plan_.p; ++r) {
      const RankOps ops = plan_.ops(r);
      for (std::uint32_t j = 0; j < ops.size(); ++j)
        for (std::uint32_t d : ops[j].deps) dep_list_[fill[base_[r] + d]++] = base_[r] + j;
    }
    // Matching rule (plan.hpp): the k-th send a→b matches the k-th recv from a at b.
    struct Key {
      int a, b;
      std::uint32_t k, op;
    };
    std::vector<Key> sends, recvs;
    std::vector<std::uint32_t> count;
    for (int r = 0; r < plan_.p; ++r) {
      const RankOps ops = plan_.ops(r);
      // Per-peer counters for this rank, kept sparse via a sorted pass.
      std::vector<std::pair<int, std::uint32_t>> s_peers, r_peers;
      for (std::uint32_t j = 0; j < ops.size(); ++j) {
        const OpView op = ops[j];
        if (op.code == OpCode::send || op.code == OpCode::recv) {
          if (op.peer < 0 || op.peer >= plan_.p || op.peer == r)
            throw InputError("plan: rank " + std::to_string(r) + " op " + std::to_string(j) +
                             " has peer " + std::to_string(op.peer));
          (op.code == OpCode::send ? s_peers : r_peers).emplace_back(op.peer, base_[r] + j);
        }
      }
      auto number = [&](std::vector<std::pair<int, std::uint32_t>>& v, bool is_send) {
        std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        std::uint32_t k = 0;
        for (std::size_t i = 0; i < v.size(); ++i) {
          k = (i > 0 && v[i].first == v[i - 1].first) ? k + 1 : 0;
          if (is_send) sends.push_back({r, v[i].first, k, v[i].second});
          else recvs.push_back({v[i].first, r, k, v[i].second});
        }
      };
      number(s_peers, true);
      number(r_peers, false);
    }
    auto by_key = [](const Key& x, const Key& y) {
      if (x.a != y.a) return x.a < y.a;
      if (x.b != y.b) return x.b < y.b;
      return x.k < y.k;
    };
    std::sort(sends.begin(), sends.end(), by_key);
    std::sort(recvs.begin(), recvs.end(), by_key);
    std::size_t i = 0, j = 0;
    while (i < sends.size() || j < recvs.size()) {
      if (j >= recvs.size() || (i < sends.size() && by_key(sends[i], recvs[j]))) {
        throw InputError("plan: send " + std::to_string(sends[i].k) + " from rank " + std::to_string(sends[i].a) +
                         " to rank " + std::to_string(sends[i].b) + " has no matching receive");
      }
      if (i >= sends.size() || by_key(recvs[j], sends[i])) {
        throw InputError("plan: receive " + std::to_string(recvs[j].k) + " at rank " + std::to_string(recvs[j].b) +
                         " from rank " + std::to_string(recvs[j].a) + " has no matching send");
      }
      const OpView so = op_at(sends[i].op);
      const OpView ro = op_at(recvs[j].op);
      if (so.a.bytes != ro.a.bytes)
        throw InputError("plan: message " + std::to_string(sends[i].a) + "->" + std::to_string(sends[i].b) +
                         " #" + std::to_string(sends[i].k) + " sends " + std::to_string(so.a.bytes) +
                         " bytes into a " + std::to_string(ro.a.bytes) + "-byte receive");
      match_[sends[i].op] = recvs[j].op;
      ++i;
      ++j;
    }
    ranks_.assign(static_cast<std::size_t>(plan_.p), RankState{});
    parked_.resize(static_cast<std::size_t>(plan_.p));
  }

  [[nodiscard]] int rank_of(std::uint32_t op) const { return op_rank_[op]; }
  [[nodiscard]] const OpView& op_at(std::uint32_t gop) const { return op_ptr_[gop]; }

  // ---- events ----
  void push(double t, std::uint32_t a, EvKind k) { q_.push(Event{t, seq_++, a, k}); }
  void repush(const Event& e, double t) { q_.push(Event{t, e.seq, e.a, e.kind}); }

  void push_ready_sorted(std::vector<std::uint32_t>& ready, double now) {
    // LogGOPSim inserts a host's newly executable ops ordered by type: send, recv, local.
    auto cls = [&](std::uint32_t g) {
      const OpCode c = op_at(g).code;
      return c == OpCode::send ? 0 : c == OpCode::recv ? 1 : 2;
    };
    if (ready.size() > 1) std::stable_sort(ready.begin(), ready.end(), [&](auto x, auto y) { return cls(x) < cls(y); });
    for (std::uint32_t g : ready) {
      const RankState& rs = ranks_[rank_of(g)];
      double t = rs.blocked ? now : rs.cpu;
      if (op_at(g).code == OpCode::send && !rs.blocked) t = std::max(t, rs.sgap);
      push(std::max(t, now), g, kOp);
    }
  }

  void complete(std::uint32_t gop, double t_done) {
    done_[gop] = 1;
    const int r = rank_of(gop);
    ranks_[r].finish = std::max(ranks_[r].finish, t_done);
    ready_.clear();
    for (std::uint32_t i = dep_off_[gop]; i < dep_off_[gop + 1]; ++i)
      if (--remaining_[dep_list_[i]] == 0) ready_.push_back(dep_list_[i]);
    if (!ready_.empty()) push_ready_sorted(ready_, now_);
  }

  void span_rank(int r, double b, double e, std::uint8_t what, int peer) {
    if (opt_.trace) res_.rank_spans.push_back(Span{r, b, e, what, peer, -1});
  }

  void dispatch(const Event& e) {
    switch (e.kind) {
      case kOp: on_op(e); break;
      case kArrive: on_arrive(e); break;
      case kInject: on_inject(e); break;
      case kHop: on_hop(e); break;
      case kWormDone: on_worm_done(e); break;
    }
  }

  // ---- host costs per model ----
  [[nodiscard]] std::uint32_t packets_of(std::uint64_t bytes) const {
    if (m_.kind != ModelKind::mesh || m_.mesh.packet_bytes == 0) return 1;
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (bytes + m_.mesh.packet_bytes - 1) / m_.mesh.packet_bytes));
  }
  [[nodiscard]] double minus_one_G(std::uint64_t b) const { return b > 0 ? static_cast<double>(b - 1) * m_.G : 0.0; }
  [[nodiscard]] double send_overhead(std::uint64_t b) const {
    switch (m_.kind) {
      case ModelKind::postal: return 1.0;
      case ModelKind::send_recv: return m_.send_us;
      case ModelKind::loggp: return m_.o;
      case ModelKind::mesh:
        return (m_.send_mode == SendMode::blocking ? m_.send_overhead : m_.isend_overhead).at(b, packets_of(b));
    }
    return 0;
  }
  [[nodiscard]] double send_gap(std::uint64_t b) const {
    switch (m_.kind) {
      case ModelKind::postal: return 1.0;
      case ModelKind::send_recv: return m_.send_us;
      case ModelKind::loggp: return m_.g + minus_one_G(b);
      case ModelKind::mesh: return 0;
    }
    return 0;
  }
  [[nodiscard]] double wire_latency() const {  // from the send's start to its arrival
    switch (m_.kind) {
      case ModelKind::postal: return m_.lambda;
      case ModelKind::send_recv: return m_.send_us;
      case ModelKind::loggp: return m_.o + m_.L;
      case ModelKind::mesh: return 0;
    }
    return 0;
  }
  [[nodiscard]] double recv_overhead(std::uint64_t b) const {
    switch (m_.kind) {
      case ModelKind::postal: return 0;
      case ModelKind::send_recv: return m_.recv_us;
      case ModelKind::loggp: return m_.o + minus_one_G(b);  // LogGOPSim: o + max((s−1)O, (s−1)G), O = 0
      case ModelKind::mesh: return m_.recv_overhead.at(b, packets_of(b));
    }
    return 0;
  }
  [[nodiscard]] double recv_gap(std::uint64_t b) const {
    switch (m_.kind) {
      case ModelKind::postal: return 1.0;
      case ModelKind::send_recv: return 0;
      case ModelKind::loggp: return m_.g + minus_one_G(b);
      case ModelKind::mesh: return 0;
    }
    return 0;
  }

  void park(int r, const Event& e) { parked_[r].push_back(e); }

  void unblock(int r, double t) {
    RankState& rs = ranks_[r];
    rs.blocked = false;
    rs.cpu = t;
    auto evs = std::move(parked_[r]);
    parked_[r].clear();
    for (const Event& e : evs) repush(e, std::max(e.t, t));
  }

  void on_op(const Event& e) {
    const std::uint32_t g = e.a;
    const int r = rank_of(g);
    RankState& rs = ranks_[r];
    if (rs.blocked) return park(r, e);
    const OpView op = op_at(g);
    const double t = e.t;
    switch (op.code) {
      case OpCode::send: {
        const double need = std::max(rs.cpu, rs.sgap);
        if (need > t) return repush(e, need);
        const std::uint64_t b = op.a.bytes;
        const double os = send_overhead(b);
        rs.cpu = t + os;
        rs.sgap = t + send_gap(b);
        span_rank(r, t, t + os, 0, op.peer);
        const auto mi = static_cast<std::uint32_t>(msgs_.size());
        Msg msg;
        msg.src = r;
        msg.dst = op.peer;
        msg.bytes = b;
        msg.send_op = g;
        msg.recv_op = match_[g];
        msg.packets = packets_of(b);
        msg.overhead_end = t + os;
        msgs_.push_back(msg);
        if (m_.kind != ModelKind::mesh) {
          push(t + wire_latency(), mi, kArrive);
          complete(g, t + os);
          return;
        }
        push(t + os, mi, kInject);
        const auto buffered = static_cast<std::uint32_t>(std::max(0, m_.mesh.send_buffer_packets));
        if (m_.send_mode == SendMode::blocking && msg.packets > buffered) {
          msgs_[mi].blocking = true;
          rs.blocked = true;
          rs.cpu = kInf;
        } else {
          complete(g, t + os);
        }
        return;
      }
      case OpCode::recv:
        if (accepted_[g]) {
          complete(g, t);
        } else {
          posted_[g] = 1;
        }
        return;
      case OpCode::reduce:
      case OpCode::copy: {
        if (rs.cpu > t) return repush(e, rs.cpu);
        const double per = op.code == OpCode::reduce ? m_.reduce_us_per_byte : m_.copy_us_per_byte;
        const double cost = per * static_cast<double>(op.a.bytes);
        rs.cpu = t + cost;
        span_rank(r, t, t + cost, op.code == OpCode::reduce ? 2 : 3, -1);
        complete(g, t + cost);
        return;
      }
    }
  }

  void on_arrive(const Event& e) {
    Msg& msg = msgs_[e.a];
    const int d = msg.dst;
    RankState& rs = ranks_[d];
    if (rs.blocked) return park(d, e);
    const double need = std::max(rs.cpu, rs.rgap);
    if (need > e.t) return repush(e, need);
    const double orv = recv_overhead(msg.bytes);
    rs.cpu = e.t + orv;
    rs.rgap = e.t + recv_gap(msg.bytes);
    rs.finish = std::max(rs.finish, rs.cpu);
    span_rank(d, e.t, e.t + orv, 1, msg.src);
    if (posted_[msg.recv_op]) {
      complete(msg.recv_op, e.t + orv);
    } else {
      accepted_[msg.recv_op] = 1;
    }
  }

  // ---- mesh network ----
  void build_mesh() {
    const MeshSpec& ms = m_.mesh;
    nd_ = static_cast<int>(ms.dims.size());
    nodes_ = ms.nodes();
    if (nodes_ < plan_.p)
      throw InputError("mesh has " + std::to_string(nodes_) + " nodes, fewer than p = " + std::to_string(plan_.p));
    nvc_ = ms.wrap ? 2 : 1;
    node_of_ = place_ranks(ms, m_.placement, plan_.p);
    net_links_ = nodes_ * nd_ * 2 * nvc_;
    const std::int64_t total = net_links_ + 2 * nodes_;
    if (ms.switching == Switching::wormhole) {
      owner_.assign(static_cast<std::size_t>(total), kNone);
      since_.assign(static_cast<std::size_t>(total), 0.0);
      wait_head_.assign(static_cast<std::size_t>(total), kNone);
      wait_tail_.assign(static_cast<std::size_t>(total), kNone);
    } else {
      free_at_.assign(static_cast<std::size_t>(total), 0.0);
    }
  }
  [[nodiscard]] std::int64_t inject_link(std::int64_t node) const { return net_links_ + node; }
  [[nodiscard]] std::int64_t eject_link(std::int64_t node) const { return net_links_ + nodes_ + node; }
  [[nodiscard]] bool is_inject(std::int64_t l) const { return l >= net_links_ && l < net_links_ + nodes_; }
  [[nodiscard]] bool is_eject(std::int64_t l) const { return l >= net_links_ + nodes_; }

  [[nodiscard]] std::int64_t stride(int d) const {
    std::int64_t s = 1;
    for (int i = nd_ - 1; i > d; --i) s *= m_.mesh.dims[i];
    return s;
  }
  [[nodiscard]] int coord(std::int64_t node, int d) const {
    return static_cast<int>((node / stride(d)) % m_.mesh.dims[d]);
  }

  // Dimension-order routing: X (the last, fastest dimension) first, then towards dimension 0.
  // Torus: the shorter way round (ties: +), and Dally–Seitz dateline virtual channels so a
  // blocked worm cannot close a cycle: VC 0 until the packet has crossed the wrap link of the
  // current dimension, VC 1 after. Returns the next link and the node it leads to, or the
  // ejection link (and -1) at the destination.
  std::pair<std::int64_t, std::int64_t> next_hop(std::int64_t node, std::int64_t src, std::int64_t dst) const {
    for (int d = nd_ - 1; d >= 0; --d) {
      const int c = coord(node, d), t = coord(dst, d);
      if (c == t) continue;
      const int k = m_.mesh.dims[d];
      int dir = c < t ? 0 : 1;  // 0: +, 1: −
      int vc = 0;
      if (m_.mesh.wrap) {
        const int fwd = ((t - c) % k + k) % k;
        dir = fwd <= k - fwd ? 0 : 1;
        const int s = coord(src, d);
        vc = (dir == 0 ? c < s : c > s) ? 1 : 0;
      }
      const int nc = dir == 0 ? (c + 1) % k : (c - 1 + k) % k;
      const std::int64_t next = node + static_cast<std::int64_t>(nc - c) * stride(d);
      const std::int64_t link = ((node * nd_ + d) * 2 + dir) * nvc_ + vc;
      return {link, next};
    }
    return {eject_link(dst), -1};
  }
  [[nodiscard]] std::int64_t link_to_node(std::int64_t link) const {
    const std::int64_t per_node = static_cast<std::int64_t>(nd_) * 2 * nvc_;
    const std::int64_t node = link / per_node;
    const std::int64_t rest = link % per_node;
    const int d = static_cast<int>(rest / (2 * nvc_));
    const int dir = static_cast<int>((rest / nvc_) % 2);
    const int k = m_.mesh.dims[d];
    const int c = coord(node, d);
    const int nc = dir == 0 ? (c + 1) % k : (c - 1 + k) % k;
    return node + static_cast<std::int64_t>(nc - c) * stride(d);
  }
  [[nodiscard]] double body_us(const Packet& pk) const {
    return static_cast<double>(pk.wire_bytes) / m_.mesh.link_bytes_per_us;
  }
  [[nodiscard]] double header_us(std::int64_t link) const {
    return (is_inject(link) || is_eject(link)) ? 0.0 : m_.mesh.router_delay_us;
  }

  void on_inject(const Event& e) {
    Msg& msg = msgs_[e.a];
    msg.first_packet = static_cast<std::uint32_t>(packets_.size());
    const std::uint64_t pb = m_.mesh.packet_bytes == 0 ? msg.bytes : m_.mesh.packet_bytes;
    std::uint64_t left = msg.bytes;
    for (std::uint32_t k = 0; k < msg.packets; ++k) {
      const std::uint64_t payload = std::min(left, pb);
      left -= payload;
      packets_.push_back(Packet{e.a, payload + m_.mesh.header_bytes, -1, kNone});
    }
    for (std::uint32_t k = 0; k < msg.packets; ++k)
      acquire(msg.first_packet + k, inject_link(node_of_[msg.src]), e.t);
  }

  void acquire(std::uint32_t pi, std::int64_t link, double t) {
    Packet& pk = packets_[pi];
    pk.link = link;
    if (m_.mesh.switching == Switching::store_and_forward) {
      const double start = std::max(t, free_at_[link]);
      const double end = start + header_us(link) + body_us(pk);
      free_at_[link] = end;
      span_link(link, start, end, pk);
      push(end, pi, kHop);
      return;
    }
    if (owner_[link] == kNone) {
      owner_[link] = static_cast<std::int32_t>(pi);
      since_[link] = t;
      push(t + header_us(link), pi, kHop);
      return;
    }
    // FIFO wait; the worm keeps every link it already holds.
    pk.next_waiter = kNone;
    if (wait_tail_[link] == kNone) {
      wait_head_[link] = static_cast<std::int32_t>(pi);
    } else {
      packets_[wait_tail_[link]].next_waiter = static_cast<std::int32_t>(pi);
    }
    wait_tail_[link] = static_cast<std::int32_t>(pi);
  }

  void release(std::int64_t link, double t) {
    span_link(link, since_[link], t, packets_[owner_[link]]);
    const std::int32_t w = wait_head_[link];
    if (w == kNone) {
      owner_[link] = kNone;
      return;
    }
    wait_head_[link] = packets_[w].next_waiter;
    if (wait_head_[link] == kNone) wait_tail_[link] = kNone;
    owner_[link] = w;
    since_[link] = t;
    push(t + header_us(link), static_cast<std::uint32_t>(w), kHop);
  }

  void on_hop(const Event& e) {
    Packet& pk = packets_[e.a];
    const Msg& msg = msgs_[pk.msg];
    const std::int64_t src = node_of_[msg.src], dst = node_of_[msg.dst];
    const std::int64_t link = pk.link;
    const bool saf = m_.mesh.switching == Switching::store_and_forward;
    if (is_eject(link)) {
      if (saf) {
        packet_delivered(pk.msg, e.t);
      } else {
        push(e.t + body_us(pk), e.a, kWormDone);
      }
      return;
    }
    if (saf && is_inject(link)) packet_injected(pk.msg, e.t);
    const std::int64_t here = is_inject(link) ? src : link_to_node(link);
    acquire(e.a, next_hop(here, src, dst).first, e.t);
  }

  void on_worm_done(const Event& e) {
    const Packet& pk = packets_[e.a];
    const std::uint32_t mi = pk.msg;
    const std::int64_t src = node_of_[msgs_[mi].src], dst = node_of_[msgs_[mi].dst];
    // The tail leaves every channel of the path as it arrives; links are released together.
    std::int64_t node = src;
    release(inject_link(src), e.t);
    for (;;) {
      const auto [link, next] = next_hop(node, src, dst);
      release(link, e.t);
      if (next < 0) break;
      node = next;
    }
    packet_injected(mi, e.t);
    packet_delivered(mi, e.t);
  }

  void packet_injected(std::uint32_t mi, double t) {
    Msg& msg = msgs_[mi];
    ++msg.injected;
    const auto buffered = static_cast<std::uint32_t>(std::max(0, m_.mesh.send_buffer_packets));
    if (msg.blocking && msg.injected == msg.packets - buffered) {
      const double t_done = std::max(t, msg.overhead_end);
      span_rank(msg.src, msg.overhead_end, t_done, 0, msg.dst);
      unblock(msg.src, t_done);
      complete(msg.send_op, t_done);
    }
  }

  void packet_delivered(std::uint32_t mi, double t) {
    Msg& msg = msgs_[mi];
    if (++msg.delivered == msg.packets) push(t, mi, kArrive);
  }

  void span_link(std::int64_t link, double b, double e, const Packet& pk) {
    if (!opt_.trace) return;
    const Msg& msg = msgs_[pk.msg];
    res_.link_spans.push_back(Span{static_cast<int>(link), b, e, 4, msg.src, msg.dst});
  }

  void name_links() {
    std::vector<int> used;
    for (const Span& s : res_.link_spans) used.push_back(s.track);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    const int top = used.empty() ? 0 : used.back() + 1;
    res_.link_names.assign(static_cast<std::size_t>(top), std::string());
    static const char* axis = "xyzwvu";
    for (int l : used) {
      std::string name;
      if (is_inject(l)) {
        name = "node " + std::to_string(l - net_links_) + " inject";
      } else if (is_eject(l)) {
        name = "node " + std::to_string(l - net_links_ - nodes_) + " eject";
      } else {
        const std::int64_t per_node = static_cast<std::int64_t>(nd_) * 2 * nvc_;
        const std::int64_t node = l / per_node;
        const std::int64_t rest = l % per_node;
        const int d = static_cast<int>(rest / (2 * nvc_));
        const int dir = static_cast<int>((rest / nvc_) % 2);
        const int vc = static_cast<int>(rest % nvc_);
        const int ax = nd_ - 1 - d;
        name = "node ";
        name += std::to_string(node);
        name += dir == 0 ? " +" : " -";
        if (ax < 6) {
          name.push_back(axis[ax]);
        } else {
          name += 'd';
          name += std::to_string(d);
        }
        if (nvc_ > 1) {
          name += " vc";
          name += std::to_string(vc);
        }
      }
      res_.link_names[l] = name;
    }
  }

  const Plan& plan_;
  const Machine& m_;
  const SimOptions& opt_;
  SimResult res_;
  std::priority_queue<Event, std::vector<Event>, EventAfter> q_;
  std::uint64_t seq_ = 0;
  double now_ = 0;

  std::vector<std::uint32_t> base_;
  std::vector<std::int32_t> op_rank_;
  std::vector<OpView> op_ptr_;
  std::vector<std::uint32_t> ready_;  // scratch of complete(); push_ready_sorted() never re-enters it
  std::vector<std::uint32_t> remaining_;
  std::vector<std::uint8_t> done_, posted_, accepted_;
  std::vector<std::uint32_t> match_;
  std::vector<std::uint32_t> dep_off_, dep_list_;
  std::vector<RankState> ranks_;
  std::vector<std::vector<Event>> parked_;
  std::vector<Msg> msgs_;

  std::vector<Packet> packets_;
  int nd_ = 0;
  int nvc_ = 1;
  std::int64_t nodes_ = 0;
  std::int64_t net_links_ = 0;
  std::vector<std::int64_t> node_of_;
  std::vector<std::int32_t> owner_, wait_head_, wait_tail_;
  std::vector<double> since_, free_at_;
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
    default: return "busy";
  }
}

}  // namespace

SimResult simulate(const Plan& plan, const Machine& machine, const SimOptions& options) {
  Engine engine(plan, machine, options);
  return engine.run();
}

void write_chrome_trace(std::ostream& out, const SimResult& result, const Plan& plan, const Machine& machine) {
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"machine\":\"";
  for (char c : machine.name) {
    if (c == '"' || c == '\\') out << '\\';
    out << c;
  }
  out << "\",\"op\":\"" << plan.op << "\",\"algo\":\"" << plan.algo << "\",\"p\":" << plan.p
      << "},\"traceEvents\":[\n";
  out << R"({"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"ranks"}})";
  for (int r = 0; r < plan.p; ++r)
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
    for (std::size_t l = 0; l < result.link_names.size(); ++l) {
      if (result.link_names[l].empty()) continue;
      out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":" << l << ",\"args\":{\"name\":\""
          << result.link_names[l] << "\"}}";
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

}  // namespace postbox::sim
