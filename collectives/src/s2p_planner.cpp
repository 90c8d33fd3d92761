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

struct BlockState {
  Where read;                 // where the block's bytes can be read
  bool has_final = false;     // rank must end with it in its user buffer
  std::uint64_t final_off = 0;
  bool final_done = false;
  int final_writer = -1;
};

struct RankState {
  std::unordered_map<int, BlockState> blocks;
  std::uint64_t scratch_top = 0;
  std::vector<std::uint32_t> prev_round_comm;  // sends/recvs of the latest earlier active round
  std::vector<std::uint32_t> this_round_comm;
};

class Builder {
 public:
  Builder(const BlockLayout& layout, bool sync)
      : L_(layout), sync_(sync), st_(static_cast<std::size_t>(layout.p)), progs_(static_cast<std::size_t>(layout.p)) {
    for (int r = 0; r < layout.p; ++r) {
      auto& rs = st_[static_cast<std::size_t>(r)];
      for (const auto& [blk, off] : layout.initial[static_cast<std::size_t>(r)]) {
        BlockState b;
        b.read.region = Region{Buffer::user, off, layout.bytes};
        rs.blocks.emplace(blk, b);
      }
      for (const auto& [blk, off] : layout.final_at[static_cast<std::size_t>(r)]) {
        auto it = rs.blocks.find(blk);
        if (it == rs.blocks.end()) continue;
        it->second.has_final = true;
        it->second.final_off = off;
        it->second.final_done = (off == it->second.read.region.offset);
      }
    }
  }

  void round(const Round& rd) {
    // All sends of the round before any receive, so a rank that runs its program in order
    // (executor.hpp) never waits for a message before it has sent what others wait for.
    for (const auto& t : rd) send_part(t);
    for (const auto& t : rd) recv_part(t);
    for (auto& rs : st_) {
      if (!rs.this_round_comm.empty()) {
        rs.prev_round_comm = std::move(rs.this_round_comm);
        rs.this_round_comm.clear();
      }
    }
  }

  // The programs (deps given, tags not yet numbered) and each rank's scratch size.
  std::vector<RankProgram> finish(std::vector<std::uint64_t>& scratch_bytes) {
    scratch_bytes.assign(static_cast<std::size_t>(L_.p), 0);
    for (int r = 0; r < L_.p; ++r) {
      auto& rs = st_[static_cast<std::size_t>(r)];
      // Deterministic order: by final offset.
      std::vector<std::pair<std::uint64_t, int>> want;
      for (const auto& [blk, off] : L_.final_at[static_cast<std::size_t>(r)]) want.emplace_back(off, blk);
      std::sort(want.begin(), want.end());
      for (const auto& [off, blk] : want) {
        auto it = rs.blocks.find(blk);
        PB_CHECK(it != rs.blocks.end(), "schedule never delivers block " + std::to_string(blk) + " to rank " + std::to_string(r));
        BlockState& b = it->second;
        if (b.final_done) continue;
        Op op;
        op.code = OpCode::copy;
        op.a = Region{Buffer::user, off, L_.bytes};
        op.b = b.read.region;
        if (b.read.writer >= 0) op.deps.push_back(static_cast<std::uint32_t>(b.read.writer));
        push(r, std::move(op));
        b.final_done = true;
      }
      scratch_bytes[static_cast<std::size_t>(r)] = rs.scratch_top;
    }
    return std::move(progs_);
  }

 private:
  int push(int r, Op op) {
    auto& ops = progs_[static_cast<std::size_t>(r)].ops;
    std::sort(op.deps.begin(), op.deps.end());
    op.deps.erase(std::unique(op.deps.begin(), op.deps.end()), op.deps.end());
    ops.push_back(std::move(op));
    return static_cast<int>(ops.size()) - 1;
  }

  // Readable places of a block at the sender, preferring its final (user) copy.
  static Where readable(const BlockState& b, std::uint64_t bytes, bool use_final) {
    if (use_final && b.has_final && b.final_done) return Where{Region{Buffer::user, b.final_off, bytes}, b.final_writer};
    return b.read;
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
      for (int blk : t.blocks) {
        auto it = snd.blocks.find(blk);
        PB_CHECK(it != snd.blocks.end(), "rank " + std::to_string(t.from) + " sends block " + std::to_string(blk) + " it does not hold");
        src.push_back(readable(it->second, bytes, pass == 0));
      }
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
    const auto& fin = L_.final_at[static_cast<std::size_t>(t.to)];
    bool direct = true;
    std::vector<std::uint64_t> fin_off(t.blocks.size(), 0);
    std::vector<char> has_fin(t.blocks.size(), 0);
    for (std::size_t k = 0; k < t.blocks.size(); ++k) {
      PB_CHECK(!rcv.blocks.contains(t.blocks[k]), "rank " + std::to_string(t.to) + " receives block " +
                                                      std::to_string(t.blocks[k]) + " twice");
      auto it = fin.find(t.blocks[k]);
      if (it != fin.end()) {
        has_fin[k] = 1;
        fin_off[k] = it->second;
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
      for (std::size_t k = 0; k < t.blocks.size(); ++k) {
        BlockState b;
        b.read = Where{Region{Buffer::user, fin_off[k], bytes}, id};
        b.has_final = true;
        b.final_off = fin_off[k];
        b.final_done = true;
        b.final_writer = id;
        rcv.blocks.emplace(t.blocks[k], b);
      }
      return;
    }
    const std::uint64_t base = rcv.scratch_top;
    rcv.scratch_top += total;
    recv.a = Region{Buffer::scratch, base, total};
    const int id = push(t.to, std::move(recv));
    rcv.this_round_comm.push_back(static_cast<std::uint32_t>(id));
    for (std::size_t k = 0; k < t.blocks.size(); ++k) {
      BlockState b;
      b.read = Where{Region{Buffer::scratch, base + k * bytes, bytes}, id};
      rcv.blocks.emplace(t.blocks[k], b);
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
        BlockState& b = rcv.blocks[t.blocks[k]];
        b.has_final = true;
        b.final_off = fin_off[k];
        b.final_done = true;
        b.final_writer = cid;
      }
      i = j;
    }
  }

  const BlockLayout& L_;
  bool sync_;
  std::vector<RankState> st_;
  std::vector<RankProgram> progs_;
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

Plan plan_from_rounds(std::string op, std::string algo, const BlockLayout& layout,
                      const std::vector<Round>& rounds, bool superstep_sync) {
  PB_CHECK(layout.p >= 1 && layout.user_bytes.size() == static_cast<std::size_t>(layout.p) &&
               layout.initial.size() == layout.user_bytes.size() && layout.final_at.size() == layout.user_bytes.size(),
           "inconsistent block layout");
  Builder b(layout, superstep_sync);
  for (const auto& rd : rounds) b.round(rd);
  Plan plan;
  std::vector<RankProgram> ranks = b.finish(plan.scratch_bytes);
  if (layout.bytes == 0) order_zero_byte(ranks, plan.scratch_bytes);
  plan.op = std::move(op);
  plan.algo = std::move(algo);
  plan.p = layout.p;
  plan.bytes = layout.bytes;
  plan.user_bytes = layout.user_bytes;
  plan.set_programs(std::move(ranks));
  plan.finalize();
  return plan;
}

}  // namespace postbox::internal
