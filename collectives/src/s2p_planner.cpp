#include "s2p_planner.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "postbox/runtime/check.hpp"

namespace postbox::internal {
namespace {

struct Where {
  Region region;
  int writer = -1;  // op that wrote it; -1: there from the start
};

// What a rank knows of a block it holds: 24 bytes, in the StateTable (a block received straight
// into its final place is a 4-byte slot instead: Builder::receive_direct()).
struct BlockState {
  std::uint64_t read_off = 0;  // where the block's bytes can be read ...
  std::int32_t read_writer = -1;  // ... written by this op (-1: there from the start)
  std::int32_t final_writer = -1;
  Buffer read_buffer = Buffer::user;
  bool final_done = false;     // it lies at its final place (when the rank must end with it)
};

// (rank, block) → BlockState of the blocks that moved (received ones); a block not in here is
// where the layout put it. Open addressing, grown at half load.
class StateTable {
 public:
  BlockState* find(int r, int b) {
    if (keys_.empty()) return nullptr;
    const std::uint64_t k = key(r, b);
    for (std::size_t i = slot(k);; i = (i + 1) & (keys_.size() - 1)) {
      if (keys_[i] == kEmpty) return nullptr;
      if (keys_[i] == k) return &states_[vals_[i]];
    }
  }
  // Adds rank r's block b; false if r already holds it.
  bool insert(int r, int b, const BlockState& st) {
    if (2 * (states_.size() + 1) > keys_.size()) grow();
    const std::uint64_t k = key(r, b);
    std::size_t i = slot(k);
    while (keys_[i] != kEmpty) {
      if (keys_[i] == k) return false;
      i = (i + 1) & (keys_.size() - 1);
    }
    keys_[i] = k;
    vals_[i] = static_cast<std::uint32_t>(states_.size());
    states_.push_back(st);
    return true;
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  static std::uint64_t key(int r, int b) { return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(r)) << 32) | static_cast<std::uint32_t>(b); }
  [[nodiscard]] std::size_t slot(std::uint64_t k) const {
    return static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ULL) >> 17) & (keys_.size() - 1);
  }
  void grow() {
    std::vector<std::uint64_t> old_keys = std::move(keys_);
    std::vector<std::uint32_t> old_vals = std::move(vals_);
    const std::size_t n = std::max<std::size_t>(1024, old_keys.size() * 2);
    keys_.assign(n, kEmpty);
    vals_.assign(n, 0);
    for (std::size_t j = 0; j < old_keys.size(); ++j) {
      if (old_keys[j] == kEmpty) continue;
      std::size_t i = slot(old_keys[j]);
      while (keys_[i] != kEmpty) i = (i + 1) & (n - 1);
      keys_[i] = old_keys[j];
      vals_[i] = old_vals[j];
    }
  }
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> vals_;
  std::vector<BlockState> states_;
};

struct RankState {
  std::uint64_t scratch_top = 0;
  std::vector<std::uint32_t> prev_round_comm;  // sends/recvs of the latest earlier active round
  std::vector<std::uint32_t> this_round_comm;
};

class Builder {
 public:
  Builder(const BlockLayout& layout, bool sync, PlanDraft& draft)
      : L_(layout), sync_(sync), st_(static_cast<std::size_t>(layout.p)), draft_(draft),
        direct_(static_cast<std::size_t>(layout.p)) {}

  // Transfers 0..n−1 of one round; at(i) gives transfer i (a reference valid until the next call).
  template <class At>
  void round(std::size_t n, At&& at) {
    // All sends of the round before any receive, so a rank that runs its program in order
    // (executor.hpp) never waits for a message before it has sent what others wait for.
    for (std::size_t i = 0; i < n; ++i) send_part(at(i));
    for (std::size_t i = 0; i < n; ++i) recv_part(at(i));
    for (auto& rs : st_) {
      if (!rs.this_round_comm.empty()) {
        rs.prev_round_comm = std::move(rs.this_round_comm);
        rs.this_round_comm.clear();
      }
    }
  }

  // The final copies; each rank's scratch size into the draft's plan.
  void finish() {
    for (int r = 0; r < L_.p; ++r) {
      auto& rs = st_[static_cast<std::size_t>(r)];
      // Deterministic order: by final offset.
      std::vector<std::pair<std::uint64_t, int>> want;
      for (int blk : L_.final_blocks(r)) want.emplace_back(static_cast<std::uint64_t>(L_.final_at(r, blk)), blk);
      std::sort(want.begin(), want.end());
      for (const auto& [off, blk] : want) {
        const BlockState b = held(r, blk);
        if (b.final_done) continue;
        Op op;
        op.code = OpCode::copy;
        op.a = Region{Buffer::user, off, L_.bytes};
        op.b = Region{b.read_buffer, b.read_off, L_.bytes};
        if (b.read_writer >= 0) op.deps.push_back(static_cast<std::uint32_t>(b.read_writer));
        push(r, std::move(op));
      }
      draft_.plan().scratch_bytes[static_cast<std::size_t>(r)] = rs.scratch_top;
    }
  }

 private:
  // Rank r's state of block b: the layout's start if r holds b from the start (such a block
  // never enters the table: receive() refuses it), else the table's (PB_CHECK if r lacks it).
  // The layout first: it saves a cache-missing probe of a table of up to p² entries.
  BlockState held(int r, int b) {
    const std::int64_t at = L_.initial_at(r, b);
    if (at < 0) {
      std::uint64_t fin = 0;
      if (const std::int32_t w = direct_writer(r, b, fin); w >= 0) return in_final_place(fin, w);
      const BlockState* s = table_.find(r, b);
      PB_CHECK(s != nullptr, "rank " + std::to_string(r) + " never holds block " + std::to_string(b));
      return *s;
    }
    BlockState s;
    s.read_off = static_cast<std::uint64_t>(at);
    s.final_done = L_.final_at(r, b) == at;
    return s;
  }
  void receive(int r, int b, const BlockState& st) {
    std::uint64_t fin = 0;
    PB_CHECK(L_.initial_at(r, b) < 0 && direct_writer(r, b, fin) < 0 && table_.insert(r, b, st),
             "rank " + std::to_string(r) + " receives block " + std::to_string(b) + " twice");
  }
  // Block b received by op `id` of rank r straight into its final place `fin`: a slot of
  // direct_ when the place is one (4 bytes instead of a table entry's 36), else the table.
  void receive_direct(int r, int b, std::uint64_t fin, std::int32_t id) {
    std::int32_t* slot = direct_slot(r, fin, true);
    if (slot == nullptr) return receive(r, b, in_final_place(fin, id));
    PB_CHECK(L_.initial_at(r, b) < 0 && *slot < 0 && table_.find(r, b) == nullptr,
             "rank " + std::to_string(r) + " receives block " + std::to_string(b) + " twice");
    *slot = id;
  }
  // A block that op `id` received straight into its final place `fin`.
  static BlockState in_final_place(std::uint64_t fin, std::int32_t id) {
    BlockState s;
    s.read_off = fin;
    s.read_writer = s.final_writer = id;
    s.final_done = true;
    return s;
  }
  // Rank r's slot for the block whose final place is user[fin, +bytes), or nullptr when places
  // of rank r are not slots (0-byte blocks, an offset not a multiple of the size, a user buffer
  // of more than 2p + 2 blocks). make: allocate rank r's slots if it has none yet.
  std::int32_t* direct_slot(int r, std::uint64_t fin, bool make) {
    const std::uint64_t bytes = L_.bytes;
    if (bytes == 0 || fin % bytes != 0) return nullptr;
    const std::uint64_t n = L_.user_bytes[static_cast<std::size_t>(r)] / bytes;
    if (fin / bytes >= n || n > 2 * static_cast<std::uint64_t>(L_.p) + 2) return nullptr;
    auto& v = direct_[static_cast<std::size_t>(r)];
    if (v.empty()) {
      if (!make) return nullptr;
      v.assign(static_cast<std::size_t>(n), -1);
    }
    return &v[static_cast<std::size_t>(fin / bytes)];
  }
  // The op that received block b straight into its final place at rank r (fin: that place), or -1.
  std::int32_t direct_writer(int r, int b, std::uint64_t& fin) {
    const std::int64_t f = L_.final_at(r, b);
    if (f < 0) return -1;
    fin = static_cast<std::uint64_t>(f);
    const std::int32_t* slot = direct_slot(r, fin, false);
    return slot == nullptr ? -1 : *slot;
  }

  int push(int r, Op op) {
    std::sort(op.deps.begin(), op.deps.end());
    op.deps.erase(std::unique(op.deps.begin(), op.deps.end()), op.deps.end());
    return static_cast<int>(draft_.add(r, op));
  }

  // Readable places of a block at the sender, preferring its final (user) copy.
  Where readable(int r, int blk, const BlockState& b, std::uint64_t bytes, bool use_final) {
    if (use_final && b.final_done) {
      const std::int64_t fin = L_.final_at(r, blk);
      if (fin >= 0) return Where{Region{Buffer::user, static_cast<std::uint64_t>(fin), bytes}, b.final_writer};
    }
    return Where{Region{b.read_buffer, b.read_off, bytes}, b.read_writer};
  }

  static bool contiguous(const std::vector<Where>& w, std::uint64_t bytes) {
    for (std::size_t i = 1; i < w.size(); ++i) {
      if (w[i].region.buffer != w[0].region.buffer || w[i].region.offset != w[i - 1].region.offset + bytes) return false;
    }
    return true;
  }

  void send_part(const Transfer& t) {
    PB_CHECK(t.from != t.to && t.from >= 0 && t.to >= 0 && t.from < L_.p && t.to < L_.p, "bad transfer endpoints");
    PB_CHECK(!t.blocks.empty(), "empty transfer");
    const std::uint64_t bytes = L_.bytes;
    const std::uint64_t total = bytes * t.blocks.size();
    auto& snd = st_[static_cast<std::size_t>(t.from)];

    // --- sender ---
    std::vector<Where> src;
    src.reserve(t.blocks.size());
    for (int pass = 0; pass < 2; ++pass) {
      src.clear();
      for (int blk : t.blocks) src.push_back(readable(t.from, blk, held(t.from, blk), bytes, pass == 0));
      if (contiguous(src, bytes)) break;
    }
    Op send;
    send.code = OpCode::send;
    send.peer = t.to;
    if (contiguous(src, bytes)) {
      send.a = Region{src[0].region.buffer, src[0].region.offset, total};
      for (const auto& w : src) {
        if (w.writer >= 0) send.deps.push_back(static_cast<std::uint32_t>(w.writer));
      }
    } else {
      const std::uint64_t base = snd.scratch_top;
      snd.scratch_top += total;
      std::size_t i = 0;
      while (i < src.size()) {
        std::size_t j = i + 1;
        while (j < src.size() && src[j].region.buffer == src[i].region.buffer &&
               src[j].region.offset == src[j - 1].region.offset + bytes) {
          ++j;
        }
        Op cp;
        cp.code = OpCode::copy;
        cp.a = Region{Buffer::scratch, base + i * bytes, (j - i) * bytes};
        cp.b = Region{src[i].region.buffer, src[i].region.offset, (j - i) * bytes};
        for (std::size_t k = i; k < j; ++k) {
          if (src[k].writer >= 0) cp.deps.push_back(static_cast<std::uint32_t>(src[k].writer));
        }
        send.deps.push_back(static_cast<std::uint32_t>(push(t.from, std::move(cp))));
        i = j;
      }
      send.a = Region{Buffer::scratch, base, total};
    }
    if (sync_) send.deps.insert(send.deps.end(), snd.prev_round_comm.begin(), snd.prev_round_comm.end());
    snd.this_round_comm.push_back(static_cast<std::uint32_t>(push(t.from, std::move(send))));
  }

  void recv_part(const Transfer& t) {
    const std::uint64_t bytes = L_.bytes;
    const std::uint64_t total = bytes * t.blocks.size();
    auto& rcv = st_[static_cast<std::size_t>(t.to)];
    bool direct = true;
    std::vector<std::uint64_t> fin_off(t.blocks.size(), 0);
    std::vector<char> has_fin(t.blocks.size(), 0);
    for (std::size_t k = 0; k < t.blocks.size(); ++k) {
      const std::int64_t fin = L_.final_at(t.to, t.blocks[k]);
      if (fin >= 0) {
        has_fin[k] = 1;
        fin_off[k] = static_cast<std::uint64_t>(fin);
      }
      if (!has_fin[k] || (k > 0 && fin_off[k] != fin_off[k - 1] + bytes)) direct = false;
    }
    Op recv;
    recv.code = OpCode::recv;
    recv.peer = t.from;
    if (direct) {
      recv.a = Region{Buffer::user, fin_off[0], total};
      const int id = push(t.to, std::move(recv));
      rcv.this_round_comm.push_back(static_cast<std::uint32_t>(id));
      for (std::size_t k = 0; k < t.blocks.size(); ++k) receive_direct(t.to, t.blocks[k], fin_off[k], id);
      return;
    }
    const std::uint64_t base = rcv.scratch_top;
    rcv.scratch_top += total;
    recv.a = Region{Buffer::scratch, base, total};
    const int id = push(t.to, std::move(recv));
    rcv.this_round_comm.push_back(static_cast<std::uint32_t>(id));
    for (std::size_t k = 0; k < t.blocks.size(); ++k) {
      BlockState b;
      b.read_buffer = Buffer::scratch;
      b.read_off = base + k * bytes;
      b.read_writer = id;
      receive(t.to, t.blocks[k], b);
    }
    // Copy out the blocks this rank keeps, one copy per run contiguous at both ends.
    std::size_t i = 0;
    while (i < t.blocks.size()) {
      if (!has_fin[i]) {
        ++i;
        continue;
      }
      std::size_t j = i + 1;
      while (j < t.blocks.size() && has_fin[j] && fin_off[j] == fin_off[j - 1] + bytes) ++j;
      Op cp;
      cp.code = OpCode::copy;
      cp.a = Region{Buffer::user, fin_off[i], (j - i) * bytes};
      cp.b = Region{Buffer::scratch, base + i * bytes, (j - i) * bytes};
      cp.deps.push_back(static_cast<std::uint32_t>(id));
      const int cid = push(t.to, std::move(cp));
      for (std::size_t k = i; k < j; ++k) {
        BlockState* b = table_.find(t.to, t.blocks[k]);
        b->final_done = true;
        b->final_writer = cid;
      }
      i = j;
    }
  }

  const BlockLayout& L_;
  bool sync_;
  std::vector<RankState> st_;
  StateTable table_;
  PlanDraft& draft_;
  std::vector<std::vector<std::int32_t>> direct_;  // per rank, by final place / bytes: see receive_direct()
};

// A 0-byte plan has every region at offset 0, and a 0-byte region still orders (it is the byte
// at its offset: a relay must not forward a notification before it arrived, runtime/plan.cpp).
// Copies move nothing and go (a dep on one becomes a dep on what it waited for); every send and
// receive then names user[0, +0), and the accesses that conflict there are ordered: a receive
// after the rank's previous receive and the sends since, a send after the rank's latest receive.
// Sends stay unordered among themselves, so the superstep structure (C³) is unchanged: a send's
// latest earlier receive is already implied by its superstep deps.
void order_zero_byte(std::vector<RankProgram>& ranks, std::vector<std::uint64_t>& scratch_bytes) {
  for (RankProgram& prog : ranks) {
    std::vector<Op>& ops = prog.ops;
    std::vector<std::vector<std::uint32_t>> via(ops.size());  // a kept op's new id, or a copy's kept deps
    std::vector<Op> out;
    int last_recv = -1;
    std::vector<std::uint32_t> sends_since;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      std::vector<std::uint32_t> deps;
      for (std::uint32_t d : ops[j].deps) deps.insert(deps.end(), via[d].begin(), via[d].end());
      if (ops[j].code == OpCode::copy) {
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        via[j] = std::move(deps);
        continue;
      }
      PB_CHECK(ops[j].code == OpCode::send || ops[j].code == OpCode::recv, "s2p/C3 plans have no reduce ops");
      const auto id = static_cast<std::uint32_t>(out.size());
      if (last_recv >= 0) deps.push_back(static_cast<std::uint32_t>(last_recv));
      if (ops[j].code == OpCode::recv) {
        deps.insert(deps.end(), sends_since.begin(), sends_since.end());
        sends_since.clear();
        last_recv = static_cast<int>(id);
      } else {
        sends_since.push_back(id);
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      Op op = ops[j];
      op.a = Region{Buffer::user, 0, 0};
      op.deps = std::move(deps);
      out.push_back(std::move(op));
      via[j] = {id};
    }
    ops = std::move(out);
  }
  std::fill(scratch_bytes.begin(), scratch_bytes.end(), 0);
}

}  // namespace

namespace {

// The one body of plan_from_rounds() and plan_from_generated_round(): `rounds` rounds, round k
// of size(k) transfers, transfer i of it given by at(k, i).
template <class Size, class At>
Plan plan_from(std::string op, std::string algo, const BlockLayout& layout, std::size_t rounds, Size&& size, At&& at,
               bool superstep_sync) {
  PB_CHECK(layout.p >= 1 && layout.user_bytes.size() == static_cast<std::size_t>(layout.p) && layout.initial_at &&
               layout.final_at && layout.final_blocks,
           "inconsistent block layout");
  PlanDraft draft(std::move(op), std::move(algo), layout.p, -1, layout.bytes, 1);
  draft.plan().user_bytes = layout.user_bytes;
  {
    std::size_t transfers = 0;  // each a send and a receive
    for (std::size_t k = 0; k < rounds; ++k) transfers += size(k);
    draft.reserve(2 * transfers + static_cast<std::size_t>(layout.p));
    Builder b(layout, superstep_sync, draft);
    for (std::size_t k = 0; k < rounds; ++k) b.round(size(k), [&](std::size_t i) -> const Transfer& { return at(k, i); });
    b.finish();
  }
  Plan plan = draft.finish_as_given();
  if (layout.bytes == 0) {
    std::vector<RankProgram> ranks = plan.programs();
    order_zero_byte(ranks, plan.scratch_bytes);
    plan.set_programs(std::move(ranks));
    plan.finalize();
  }
  return plan;
}

}  // namespace

std::uint64_t largest_transfer(const std::vector<Round>& rounds) {
  std::uint64_t most = 0;
  for (const Round& rd : rounds) {
    for (const Transfer& t : rd) most = std::max<std::uint64_t>(most, t.blocks.size());
  }
  return most;
}

Plan plan_from_rounds(std::string op, std::string algo, const BlockLayout& layout,
                      const std::vector<Round>& rounds, bool superstep_sync) {
  return plan_from(
      std::move(op), std::move(algo), layout, rounds.size(), [&](std::size_t k) { return rounds[k].size(); },
      [&](std::size_t k, std::size_t i) -> const Transfer& { return rounds[k][i]; }, superstep_sync);
}

Plan plan_from_generated_round(std::string op, std::string algo, const BlockLayout& layout, const GeneratedRound& round,
                               bool superstep_sync) {
  Transfer t;
  return plan_from(
      std::move(op), std::move(algo), layout, 1, [&](std::size_t) { return round.size; },
      [&](std::size_t, std::size_t i) -> const Transfer& {
        round.fill(i, t);
        return t;
      },
      superstep_sync);
}

}  // namespace postbox::internal
