// Plan storage and static checks. Everything here is linear or n·log n in the number of ops, so
// plans over millions of ranks are built and checked in seconds:
//  * hazards come from a sweep over each rank's program that keeps, per byte range, its last
//    writer and its readers since (an interval map), instead of comparing every pair of ops;
//  * the deadlock check executes the plan symbolically under the matching rule of plan.hpp, in
//    program order (what the thread executor does), from a work list: a rank runs until it
//    blocks and is woken when the rank it waits for moves. A plan that cannot deadlock in
//    program order cannot deadlock in any order its deps allow either.
#include "postbox/runtime/plan.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory_resource>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ring_format.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/limits.hpp"

namespace postbox {
namespace {

constexpr std::uint32_t kMaxCount = std::numeric_limits<std::uint32_t>::max() - 1;

std::string where(int rank, std::size_t j, OpCode code) {
  return "rank " + std::to_string(rank) + " op " + std::to_string(j) + " (" + to_string(code) + ")";
}

bool overlaps(const Region& x, const Region& y) {
  if (x.buffer != y.buffer || x.bytes == 0 || y.bytes == 0) return false;
  return x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
}

// Regions an op reads and writes (at most two reads, one write). For ordering, an empty region
// still marks a place: a zero-byte message is a notification, and forwarding it (a relay in a
// 0-byte broadcast, a barrier's wake-up) must wait for its arrival. So a 0-byte region counts
// as the single byte at its offset.
struct Access {
  Region reads[2];
  int nreads = 0;
  Region write;
  bool writes = false;
};

Region causal(Region g) {
  g.bytes = std::max<std::uint64_t>(g.bytes, 1);
  return g;
}

Access access_of(const OpView& op) {
  Access acc;
  switch (op.code) {
    case OpCode::send: acc.reads[acc.nreads++] = causal(op.a); break;
    case OpCode::recv: acc.write = causal(op.a); acc.writes = true; break;
    case OpCode::copy: acc.reads[acc.nreads++] = causal(op.b); acc.write = causal(op.a); acc.writes = true; break;
    case OpCode::reduce:
      acc.reads[acc.nreads++] = causal(op.a);
      acc.reads[acc.nreads++] = causal(op.b);
      acc.write = causal(op.a);
      acc.writes = true;
      break;
  }
  return acc;
}

// access_of(plan.op_at(g)) without building the OpView: a send or a receive reads only its code
// and region a, the fields the hot loops over every op of a plan need.
Access access_at(const Plan& plan, std::uint32_t g) {
  const OpCode code = plan.code_at(g);
  Access acc;
  switch (code) {
    case OpCode::send: acc.reads[acc.nreads++] = causal(plan.a_at(g)); return acc;
    case OpCode::recv: acc.write = causal(plan.a_at(g)); acc.writes = true; return acc;
    case OpCode::reduce:
    case OpCode::copy: break;
  }
  return access_of(plan.op_at(g));
}

// The sweep behind derive_dependencies() and validate()'s hazard check. Over one rank's
// program it yields, for op j, the earlier ops j must follow because of shared bytes: the last
// writer of every byte j touches, and, if j writes, the readers of the bytes it writes since
// their last write. Every conflicting pair (RAW, WAR, WAW) is a chain of such edges, and the
// conflicting ops that are not ancestors of other conflicting ops are among them, so they are
// enough both to check ordering and to derive the transitively reduced deps.
class Sweep {
 public:
  Sweep() : pool_(buffer_, sizeof buffer_), maps_{Map(&pool_), Map(&pool_)} {}
  Sweep(const Sweep&) = delete;
  Sweep& operator=(const Sweep&) = delete;

  void clear() {
    maps_[0].clear();
    maps_[1].clear();
    readers_.clear();
    pool_.release();  // back to buffer_: a rank with few segments never calls malloc
  }

  // Appends op j's candidates to `out` (unsorted, possibly repeated), then records j.
  void step(std::uint32_t j, const Access& acc, std::vector<std::uint32_t>& out) {
    if (acc.nreads == 1 && !acc.writes) return read_only(j, acc.reads[0], out);  // a send
    if (acc.nreads == 0 && acc.writes) return write_only(j, acc.write, out);     // a receive
    for (int i = 0; i < acc.nreads; ++i) {
      for_range(acc.reads[i], [&](Seg& s) {
        if (s.writer >= 0) out.push_back(static_cast<std::uint32_t>(s.writer));
      });
    }
    if (acc.writes) {
      for_range(acc.write, [&](Seg& s) {
        if (s.writer >= 0) out.push_back(static_cast<std::uint32_t>(s.writer));
        for (std::int32_t n = s.readers; n >= 0; n = readers_[static_cast<std::size_t>(n)].next)
          out.push_back(readers_[static_cast<std::size_t>(n)].op);
      });
    }
    for (int i = 0; i < acc.nreads; ++i) {
      for_range(acc.reads[i], [&](Seg& s) {
        readers_.push_back(Reader{j, s.readers});
        s.readers = static_cast<std::int32_t>(readers_.size() - 1);
      });
    }
    if (acc.writes) {
      Map& m = maps_[static_cast<std::size_t>(acc.write.buffer)];
      const std::uint64_t lo = acc.write.offset, hi = lo + acc.write.bytes;
      auto it = cover(m, lo, hi);
      while (it != m.end() && it->first < hi) it = m.erase(it);
      m.emplace_hint(it, lo, Seg{hi, static_cast<std::int64_t>(j), -1});
    }
  }

 private:
  void read_only(std::uint32_t j, const Region& g, std::vector<std::uint32_t>& out) {
    Map& m = maps_[static_cast<std::size_t>(g.buffer)];
    const std::uint64_t hi = g.offset + g.bytes;
    for (auto it = cover(m, g.offset, hi); it != m.end() && it->first < hi; ++it) {
      if (it->second.writer >= 0) out.push_back(static_cast<std::uint32_t>(it->second.writer));
      readers_.push_back(Reader{j, it->second.readers});
      it->second.readers = static_cast<std::int32_t>(readers_.size() - 1);
    }
  }
  void write_only(std::uint32_t j, const Region& g, std::vector<std::uint32_t>& out) {
    Map& m = maps_[static_cast<std::size_t>(g.buffer)];
    const std::uint64_t lo = g.offset, hi = lo + g.bytes;
    if (m.empty() || std::prev(m.end())->second.end <= lo) {  // past every segment: nothing to follow
      m.emplace_hint(m.end(), lo, Seg{hi, static_cast<std::int64_t>(j), -1});
      return;
    }
    auto it = cover(m, lo, hi);
    while (it != m.end() && it->first < hi) {
      if (it->second.writer >= 0) out.push_back(static_cast<std::uint32_t>(it->second.writer));
      for (std::int32_t n = it->second.readers; n >= 0; n = readers_[static_cast<std::size_t>(n)].next)
        out.push_back(readers_[static_cast<std::size_t>(n)].op);
      it = m.erase(it);
    }
    m.emplace_hint(it, lo, Seg{hi, static_cast<std::int64_t>(j), -1});
  }

  struct Seg {
    std::uint64_t end = 0;
    std::int64_t writer = -1;
    std::int32_t readers = -1;  // list in readers_, newest first; nodes are never edited, so the
                                // two halves of a split segment can share a tail
  };
  struct Reader {
    std::uint32_t op;
    std::int32_t next;
  };
  using Map = std::pmr::map<std::uint64_t, Seg>;

  // Splits and fills so that [lo, hi) is covered by whole segments; returns the first of them.
  Map::iterator cover(Map& m, std::uint64_t lo, std::uint64_t hi) {
    // Past every segment (builders mostly walk a buffer upwards): one new segment at the end.
    if (m.empty() || std::prev(m.end())->second.end <= lo) return m.emplace_hint(m.end(), lo, Seg{hi, -1, -1});
    // [lo, hi) already one whole segment (a region touched again: a barrier's token, the slot it
    // just received into), nothing to split or fill: the last segment first, then a search.
    if (const auto last = std::prev(m.end()); last->first == lo && last->second.end == hi) return last;
    if (const auto at = m.find(lo); at != m.end() && at->second.end == hi) return at;
    auto split = [&](std::uint64_t x) {
      auto it = m.upper_bound(x);
      if (it == m.begin()) return;
      --it;
      if (it->first < x && it->second.end > x) {
        Seg right = it->second;  // both halves keep the (persistent) readers list
        it->second.end = x;
        m.emplace_hint(std::next(it), x, right);
      }
    };
    split(lo);
    split(hi);
    std::uint64_t pos = lo;
    for (auto it = m.lower_bound(lo); pos < hi; ++it) {
      if (it == m.end() || it->first > pos) {
        const std::uint64_t gap_end = it == m.end() ? hi : std::min(it->first, hi);
        it = m.emplace_hint(it, pos, Seg{gap_end, -1, -1});
      }
      pos = it->second.end;
    }
    return m.lower_bound(lo);
  }

  template <class F>
  void for_range(const Region& g, F&& f) {
    Map& m = maps_[static_cast<std::size_t>(g.buffer)];
    const std::uint64_t hi = g.offset + g.bytes;
    for (auto it = cover(m, g.offset, hi); it != m.end() && it->first < hi; ++it) f(it->second);
  }

  alignas(std::max_align_t) std::byte buffer_[16384];
  std::pmr::monotonic_buffer_resource pool_;
  Map maps_[2];
  std::vector<Reader> readers_;
};

// True when no two ops of rank r touch a common byte (their causal regions, access_of()), so
// that the rank has no hazard to check; false when some may (two reads of one region included).
// A sort instead of the Sweep's interval map: all-to-all ranks, 2p disjoint regions each.
bool touches_disjoint(const Plan& plan, int r, std::vector<std::pair<Region, std::uint32_t>>& spans) {
  spans.clear();
  const std::uint32_t base = plan.first_op(r), end = plan.first_op(r + 1);
  for (std::uint32_t g = base; g < end; ++g) {
    const Access acc = access_at(plan, g);
    // An op that touches the region the previous span, of another op, names shares a byte with
    // it (a causal region has at least one): no need to sort to know (a barrier's copy of the
    // message it just received).
    const auto same_as_last = [&](const Region& x) {
      return !spans.empty() && spans.back().second != g - base && spans.back().first == x;
    };
    for (int i = 0; i < acc.nreads; ++i) {
      if (same_as_last(acc.reads[i])) return false;
      spans.emplace_back(acc.reads[i], g - base);
    }
    if (acc.writes) {
      if (same_as_last(acc.write)) return false;
      spans.emplace_back(acc.write, g - base);
    }
  }
  const auto before = [](const auto& x, const auto& y) {
    return x.first.buffer != y.first.buffer ? x.first.buffer < y.first.buffer : x.first.offset < y.first.offset;
  };
  // Programs mostly walk their buffers upwards in a few runs (an all-to-all rank: its sends in
  // two, its receives in one): merge the runs when they are few, else sort.
  std::size_t runs = 1;
  for (std::size_t i = 1; i < spans.size() && runs <= 16; ++i) runs += before(spans[i], spans[i - 1]) ? 1 : 0;
  if (runs > 16) {
    std::sort(spans.begin(), spans.end(), before);
  } else {
    for (auto mid = std::is_sorted_until(spans.begin(), spans.end(), before); mid != spans.end();) {
      const auto next = std::is_sorted_until(mid, spans.end(), before);
      std::inplace_merge(spans.begin(), mid, next, before);
      mid = next;
    }
  }
  // Over each buffer in offset order: the furthest end so far (e1, of op o1) and the furthest
  // end of any other op (e2).
  std::uint64_t e1 = 0, e2 = 0;
  std::uint32_t o1 = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto& [g, op] = spans[i];
    if (i == 0 || g.buffer != spans[i - 1].first.buffer) e1 = e2 = 0;
    if (g.offset < (op == o1 ? e2 : e1)) return false;
    const std::uint64_t hi = g.offset + g.bytes;
    if (op == o1) {
      e1 = std::max(e1, hi);
    } else if (hi > e1) {
      e2 = e1;
      e1 = hi;
      o1 = op;
    } else {
      e2 = std::max(e2, hi);
    }
  }
  return true;
}

// Marks, with `stamp`, every op of one rank reachable backwards from `from` through deps whose
// index is at least `floor`. deps_of(i) gives op i's deps.
template <class DepsOf>
void mark_ancestors(std::uint32_t from, std::uint32_t floor, std::uint32_t stamp, std::vector<std::uint32_t>& mark,
                    std::vector<std::uint32_t>& stack, DepsOf&& deps_of) {
  stack.clear();
  if (from < floor || mark[from] == stamp) return;
  mark[from] = stamp;
  stack.push_back(from);
  while (!stack.empty()) {
    const std::uint32_t v = stack.back();
    stack.pop_back();
    for (std::uint32_t d : deps_of(v)) {
      if (d < floor || d >= v || mark[d] == stamp) continue;
      mark[d] = stamp;
      stack.push_back(d);
    }
  }
}

std::uint64_t round_ring(std::uint64_t ring_bytes) {
  // The mailboxes round each ring up to a power of two of at least 4 KiB.
  return std::bit_ceil(std::max<std::uint64_t>(ring_bytes, 4096));
}

// Per-pair sequence numbers of sends (k-th send r → peer) and receives (k-th receive at r from
// peer), in program order; local ops get 0. Peers outside 0..n−1 are counted in a map.
std::vector<std::uint32_t> sequence_numbers(const Plan& plan) {
  const int n = plan.rank_count();
  std::vector<std::uint32_t> seq(plan.op_count(), 0);
  std::vector<std::uint32_t> sent(static_cast<std::size_t>(n), 0), recvd(static_cast<std::size_t>(n), 0);
  std::vector<int> touched;
  std::unordered_map<std::int64_t, std::uint32_t> odd;  // peers outside the plan
  for (int r = 0; r < n; ++r) {
    touched.clear();
    odd.clear();
    const std::uint32_t end = plan.first_op(r + 1);
    for (std::uint32_t g = plan.first_op(r); g < end; ++g) {
      const OpCode code = plan.code_at(g);
      if (code != OpCode::send && code != OpCode::recv) continue;
      const bool is_send = code == OpCode::send;
      const int peer = plan.peer_at(g);
      if (peer < 0 || peer >= n) {
        seq[g] = odd[(static_cast<std::int64_t>(peer) << 1) | (is_send ? 1 : 0)]++;
        continue;
      }
      auto& c = (is_send ? sent : recvd)[static_cast<std::size_t>(peer)];
      if (sent[static_cast<std::size_t>(peer)] == 0 && recvd[static_cast<std::size_t>(peer)] == 0) touched.push_back(peer);
      seq[g] = c++;
    }
    for (int q : touched) sent[static_cast<std::size_t>(q)] = recvd[static_cast<std::size_t>(q)] = 0;
  }
  return seq;
}

// The matching rule on precomputed sequence numbers: per receiving rank, its receives sorted by
// (source, k), merged with the sends to it in the same order.
std::vector<std::uint32_t> match_by_sequence(const Plan& plan, const std::vector<std::uint32_t>& seq) {
  const int n = plan.rank_count();
  std::vector<std::uint32_t> partner(plan.op_count(), kUnmatched);
  struct Key {
    std::int32_t src;
    std::uint32_t k;
    std::uint32_t op;
  };
  const auto by_src = [](const Key& x, const Key& y) { return x.src != y.src ? x.src < y.src : x.k < y.k; };
  std::vector<std::uint32_t> start(static_cast<std::size_t>(n) + 1, 0);
  auto is_recv = [&](std::uint32_t g) {
    return plan.code_at(g) == OpCode::recv && plan.peer_at(g) >= 0 && plan.peer_at(g) < n;
  };
  for (int r = 0; r < n; ++r) {
    std::uint32_t c = 0;
    for (std::uint32_t g = plan.first_op(r); g < plan.first_op(r + 1); ++g) c += is_recv(g) ? 1 : 0;
    start[static_cast<std::size_t>(r) + 1] = start[static_cast<std::size_t>(r)] + c;
  }
  std::vector<Key> keys(start.back());
  for (int r = 0; r < n; ++r) {
    std::uint32_t at = start[static_cast<std::size_t>(r)];
    for (std::uint32_t g = plan.first_op(r); g < plan.first_op(r + 1); ++g)
      if (is_recv(g)) keys[at++] = Key{plan.peer_at(g), seq[g], g};
    // Receives posted by source (all-to-all, gathers) need no sort.
    const auto lo = keys.begin() + start[static_cast<std::size_t>(r)], hi = keys.begin() + at;
    if (!std::is_sorted(lo, hi, by_src)) std::sort(lo, hi, by_src);
  }
  // The sends grouped by receiver, each group in (source, k) order: a counting sort by receiver
  // of the sends in global order (sources ascending, one source's sends to b in program order, so
  // k ascending). Then each receiver's two sorted lists are merged: linear, no search.
  auto is_send = [&](int r, std::uint32_t g) {
    const int peer = plan.peer_at(g);
    return plan.code_at(g) == OpCode::send && peer >= 0 && peer < n && peer != r;
  };
  std::vector<std::uint32_t> sstart(static_cast<std::size_t>(n) + 1, 0);
  for (int r = 0; r < n; ++r)
    for (std::uint32_t g = plan.first_op(r); g < plan.first_op(r + 1); ++g)
      if (is_send(r, g)) ++sstart[static_cast<std::size_t>(plan.peer_at(g)) + 1];
  for (int b = 0; b < n; ++b) sstart[static_cast<std::size_t>(b) + 1] += sstart[static_cast<std::size_t>(b)];
  std::vector<Key> sends(sstart.back());
  {
    std::vector<std::uint32_t> at(sstart.begin(), sstart.end() - 1);
    for (int r = 0; r < n; ++r)
      for (std::uint32_t g = plan.first_op(r); g < plan.first_op(r + 1); ++g)
        if (is_send(r, g)) sends[at[static_cast<std::size_t>(plan.peer_at(g))]++] = Key{r, seq[g], g};
  }
  for (std::size_t b = 0; b < static_cast<std::size_t>(n); ++b) {
    std::uint32_t i = start[b], j = sstart[b];
    while (i < start[b + 1] && j < sstart[b + 1]) {
      const Key& x = keys[i];
      const Key& y = sends[j];
      if (by_src(x, y)) {
        ++i;
      } else if (by_src(y, x)) {
        ++j;
      } else {
        partner[y.op] = x.op;
        partner[x.op] = y.op;
        ++i;
        ++j;
      }
    }
  }
  return partner;
}

// Symbolic execution in program order from a work list. capacity == 0: unbounded rings (a
// send never waits). Otherwise a send waits while its pair's undelivered records plus its own
// exceed capacity, unless the ring is empty and the receiver is already in the matching recv
// (streaming). Needs a plan whose messages all match (partner).
std::optional<std::string> run_in_program_order(const Plan& plan, const std::vector<std::uint32_t>& partner,
                                                std::uint64_t capacity) {
  const int p = plan.rank_count();
  std::vector<std::uint32_t> pc(static_cast<std::size_t>(p), 0);
  std::vector<std::uint8_t> queued(static_cast<std::size_t>(p), 1);
  std::vector<int> work(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) work[static_cast<std::size_t>(r)] = p - 1 - r;  // pop from the back: rank 0 first
  // Waiters of rank q: ranks blocked until pc[q] > need (a receive waiting for its send), or
  // until q moves at all (need = pc[q] when the waiter sends into a full ring).
  struct Waiter {
    int rank;
    std::uint32_t need;
    std::int32_t next;
  };
  std::vector<Waiter> pool;
  std::vector<std::int32_t> free_list;
  std::vector<std::int32_t> head(static_cast<std::size_t>(p), -1);
  auto wait_on = [&](int q, int r, std::uint32_t need) {
    std::int32_t node;
    if (!free_list.empty()) {
      node = free_list.back();
      free_list.pop_back();
      pool[static_cast<std::size_t>(node)] = Waiter{r, need, head[static_cast<std::size_t>(q)]};
    } else {
      node = static_cast<std::int32_t>(pool.size());
      pool.push_back(Waiter{r, need, head[static_cast<std::size_t>(q)]});
    }
    head[static_cast<std::size_t>(q)] = node;
  };
  auto wake = [&](int q) {
    std::int32_t* link = &head[static_cast<std::size_t>(q)];
    while (*link >= 0) {
      const std::int32_t node = *link;
      Waiter& w = pool[static_cast<std::size_t>(node)];
      if (pc[static_cast<std::size_t>(q)] > w.need) {
        *link = w.next;
        free_list.push_back(node);
        if (!queued[static_cast<std::size_t>(w.rank)]) {
          queued[static_cast<std::size_t>(w.rank)] = 1;
          work.push_back(w.rank);
        }
      } else {
        link = &w.next;
      }
    }
  };
  auto enqueue = [&](int r) {
    if (!queued[static_cast<std::size_t>(r)]) {
      queued[static_cast<std::size_t>(r)] = 1;
      work.push_back(r);
    }
  };
  std::unordered_map<std::uint64_t, std::uint64_t> occupancy;  // bounded rings only: (a, b) → bytes
  auto pair_key = [](int a, int b) { return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b); };
  auto local = [&](std::uint32_t g, int r) { return g - plan.first_op(r); };

  while (!work.empty()) {
    const int r = work.back();
    work.pop_back();
    queued[static_cast<std::size_t>(r)] = 0;
    const RankOps ops = plan.ops(r);
    const std::uint32_t base = plan.first_op(r);
    std::uint32_t& i = pc[static_cast<std::size_t>(r)];
    const std::uint32_t start = i;
    while (i < ops.size()) {
      // The fields a step needs, read one by one: this loop runs over every op of the plan.
      struct {
        OpCode code;
        int peer;
      } const op{plan.code_at(base + i), plan.peer_at(base + i)};
      if (op.code == OpCode::send) {
        if (capacity != 0) {
          std::uint64_t& occ = occupancy[pair_key(r, op.peer)];
          const std::uint64_t rec = internal::record_bytes(plan.a_at(base + i).bytes);
          // kRingReserve: the part of a ring a sender can never count on (ring_format.hpp).
          if (occ + rec + internal::kRingReserve <= capacity) {
            occ += rec;
          } else {
            // Streaming: the receiver must be blocked in this very recv with the ring drained.
            const std::uint32_t rv = partner[base + i];
            if (!(occ == 0 && pc[static_cast<std::size_t>(op.peer)] == local(rv, op.peer))) {
              wait_on(op.peer, r, pc[static_cast<std::size_t>(op.peer)]);
              break;
            }
            ++pc[static_cast<std::size_t>(op.peer)];
            enqueue(op.peer);
            wake(op.peer);
          }
        }
      } else if (op.code == OpCode::recv) {
        const std::uint32_t sd = partner[base + i];
        const std::uint32_t need = local(sd, op.peer);
        if (pc[static_cast<std::size_t>(op.peer)] <= need) {
          wait_on(op.peer, r, need);
          // A sender stuck on a full ring may now stream into this receive.
          if (capacity != 0) enqueue(op.peer);
          break;
        }
        if (capacity != 0) occupancy[pair_key(op.peer, r)] -= internal::record_bytes(plan.a_at(base + i).bytes);
      }
      ++i;
    }
    if (i != start) wake(r);
  }
  for (int r = 0; r < p; ++r) {
    const RankOps ops = plan.ops(r);
    const std::uint32_t i = pc[static_cast<std::size_t>(r)];
    if (i >= ops.size()) continue;
    const OpView op = ops[i];
    std::string msg = "deadlock: " + where(r, i, op.code) + (op.code == OpCode::send ? " to " : " from ") +
                      std::to_string(op.peer) + " can never complete";
    const int peer = op.peer;
    if (peer >= 0 && peer < p && pc[static_cast<std::size_t>(peer)] < plan.ops(peer).size()) {
      const std::uint32_t pi = pc[static_cast<std::size_t>(peer)];
      msg += "; " + where(peer, pi, plan.ops(peer)[pi].code) + " is blocked too";
    } else if (peer >= 0 && peer < p) {
      msg += "; rank " + std::to_string(peer) + " has finished";
    }
    if (capacity != 0) msg += " (rings of " + std::to_string(capacity) + " bytes)";
    return msg;
  }
  return std::nullopt;
}

std::uint32_t checked_count(std::size_t n, const char* what) {
  if (n > kMaxCount) throw InputError(std::string("plan too large: more than ") + std::to_string(kMaxCount) + " " + what);
  return static_cast<std::uint32_t>(n);
}

}  // namespace

// ---- storage --------------------------------------------------------------------------------

OpView Plan::op_at(std::uint32_t g) const {
  const Rec& rc = recs_[g];
  OpView v;
  v.code = rc.code;
  v.peer = rc.peer;
  v.a = regions_[rc.a];
  v.b = regions_[rc.b];
  v.src_first = rc.src_first;
  v.tag = rc.tag;
  v.round = rounds_.empty() ? 0 : rounds_[g];
  v.deps = std::span<const std::uint32_t>(deps_.data() + dep_first_[g], dep_first_[g + 1] - dep_first_[g]);
  return v;
}

RankOps Plan::ops(int r) const {
  PB_CHECK(r >= 0 && r < rank_count(), "Plan::ops: rank " + std::to_string(r) + " outside 0.." + std::to_string(rank_count() - 1));
  const auto i = static_cast<std::size_t>(r);
  return RankOps(this, first_[i], first_[i + 1] - first_[i]);
}

int Plan::rank_of(std::uint32_t g) const {
  PB_CHECK(g < op_count(), "Plan::rank_of: op outside the plan");
  return static_cast<int>(std::upper_bound(first_.begin(), first_.end(), g) - first_.begin()) - 1;
}

std::size_t RegionHash::operator()(const Region& g) const noexcept {
  std::uint64_t h = g.offset * 0x9E3779B97F4A7C15ULL;
  h ^= (g.bytes + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2));
  h ^= static_cast<std::uint64_t>(g.buffer) << 63;
  return static_cast<std::size_t>(h);
}

void Plan::set_programs(std::vector<RankProgram> ranks) {
  std::unordered_map<Region, std::uint32_t, RegionHash> ids;
  regions_.clear();
  auto intern = [&](const Region& g) {
    const auto [it, fresh] = ids.try_emplace(g, static_cast<std::uint32_t>(regions_.size()));
    if (fresh) regions_.push_back(g);
    return it->second;
  };
  std::size_t total = 0, total_deps = 0;
  bool any_round = false;
  for (const RankProgram& prog : ranks) {
    total += prog.ops.size();
    for (const Op& o : prog.ops) {
      total_deps += o.deps.size();
      any_round = any_round || o.round != 0;
    }
  }
  (void)checked_count(total, "ops");
  (void)checked_count(total_deps, "deps");
  first_.assign(1, 0);
  first_.reserve(ranks.size() + 1);
  recs_.clear();
  recs_.reserve(total);
  dep_first_.assign(1, 0);
  dep_first_.reserve(total + 1);
  deps_.clear();
  deps_.reserve(total_deps);
  rounds_.clear();
  if (any_round) rounds_.reserve(total);
  for (const RankProgram& prog : ranks) {
    for (const Op& o : prog.ops) {
      recs_.push_back(Rec{intern(o.a), intern(o.b), o.peer, o.tag, o.code, o.src_first});
      deps_.insert(deps_.end(), o.deps.begin(), o.deps.end());
      dep_first_.push_back(static_cast<std::uint32_t>(deps_.size()));
      if (any_round) rounds_.push_back(o.round);
    }
    first_.push_back(static_cast<std::uint32_t>(recs_.size()));
  }
}

std::vector<RankProgram> Plan::programs() const {
  std::vector<RankProgram> out(static_cast<std::size_t>(rank_count()));
  for (int r = 0; r < rank_count(); ++r) {
    auto& ops = out[static_cast<std::size_t>(r)].ops;
    ops.reserve(this->ops(r).size());
    for (const OpView v : this->ops(r))
      ops.push_back(Op{v.code, v.peer, v.a, v.b, v.src_first, v.tag, {v.deps.begin(), v.deps.end()}, v.round});
  }
  return out;
}

std::size_t Plan::storage_bytes() const noexcept {
  return first_.capacity() * sizeof(std::uint32_t) + recs_.capacity() * sizeof(Rec) +
         dep_first_.capacity() * sizeof(std::uint32_t) + deps_.capacity() * sizeof(std::uint32_t) +
         regions_.capacity() * sizeof(Region) + rounds_.capacity() * sizeof(std::uint32_t);
}

void Plan::finalize() {
  const std::vector<std::uint32_t> seq = sequence_numbers(*this);
  for (std::size_t g = 0; g < recs_.size(); ++g) recs_[g].tag = seq[g];
}

PlanDraft::PlanDraft(std::string op, std::string algo, int p, int root, std::uint64_t bytes, std::uint32_t elem_bytes) {
  PB_CHECK(p >= 1, "PlanDraft: p must be at least 1");
  plan_.op = std::move(op);
  plan_.algo = std::move(algo);
  plan_.p = p;
  plan_.root = root;
  plan_.bytes = bytes;
  plan_.elem_bytes = elem_bytes;
  plan_.user_bytes.assign(static_cast<std::size_t>(p), bytes);
  plan_.scratch_bytes.assign(static_cast<std::size_t>(p), 0);
  count_.assign(static_cast<std::size_t>(p), 0);
}

void PlanDraft::reserve(std::size_t ops) {
  if (ops >= kMaxCount) return;  // push() refuses so many
  recs_.reserve(ops);
  rank_.reserve(ops);
  dep_count_.reserve(ops);
}

std::uint32_t PlanDraft::intern(const Region& g) {
  for (int i = 0; i < 2; ++i)
    if (last_id_[i] != ~0U && g == last_region_[i]) return last_id_[i];
  const auto [it, fresh] = ids_.try_emplace(g, static_cast<std::uint32_t>(plan_.regions_.size()));
  if (fresh) plan_.regions_.push_back(g);
  last_region_[1] = last_region_[0];
  last_id_[1] = last_id_[0];
  last_region_[0] = g;
  last_id_[0] = it->second;
  return it->second;
}

void PlanDraft::push(int r, OpCode code, int peer, Region a, Region b, bool src_first, std::uint32_t round) {
  PB_CHECK(r >= 0 && r < plan_.p, "PlanDraft: rank " + std::to_string(r) + " outside 0.." + std::to_string(plan_.p - 1));
  if (recs_.size() >= kMaxCount) (void)checked_count(recs_.size() + 1, "ops");
  // A plan that grows faster than its p (all-to-all, p·log p combines) is checked as it grows:
  // finishing it needs about 60 bytes per op more than the draft's 28.
  if ((recs_.size() & ((std::size_t{1} << 22) - 1)) == 0 && !recs_.empty())
    require_memory(recs_.size() * 88, "the plan " + plan_.op + "/" + plan_.algo + " (" +
                                                    std::to_string(recs_.size()) + " ops so far)");
  const std::uint32_t ia = intern(a);
  const std::uint32_t ib = intern(b);
  if (!rank_.empty() && r < rank_.back()) sorted_ = false;
  recs_.push_back(Plan::Rec{ia, ib, peer, 0, code, src_first});
  rank_.push_back(r);
  ++count_[static_cast<std::size_t>(r)];
  if (deps_given_) dep_count_.push_back(0);
  if (round != 0 && !any_round_) {
    any_round_ = true;
    rounds_.assign(recs_.size() - 1, 0);
  }
  if (any_round_) rounds_.push_back(round);
}

std::uint32_t PlanDraft::add(int r, const Op& op) {
  PB_CHECK(r >= 0 && r < plan_.p, "PlanDraft: rank " + std::to_string(r) + " outside 0.." + std::to_string(plan_.p - 1));
  const std::uint32_t index = count_[static_cast<std::size_t>(r)];
  for (std::uint32_t d : op.deps) PB_CHECK(d < index, "PlanDraft::add: a dep must name an earlier op of the rank");
  if (!deps_given_) {
    dep_count_.assign(recs_.size(), 0);
    deps_given_ = true;
  }
  push(r, op.code, op.peer, op.a, op.b, op.src_first, op.round);
  dep_count_.back() = static_cast<std::uint32_t>(op.deps.size());
  deps_.insert(deps_.end(), op.deps.begin(), op.deps.end());
  if (deps_.size() > kMaxCount) (void)checked_count(deps_.size(), "deps");
  return index;
}

void PlanDraft::pack() {
  const auto p = static_cast<std::size_t>(plan_.p);
  std::vector<std::uint32_t> count(p + 1, 0);
  for (std::size_t r = 0; r < p; ++r) count[r + 1] = count[r] + count_[r];
  plan_.first_ = count;
  const bool with_deps = deps_given_;
  const std::size_t n = recs_.size();
  // Where each rank's deps go: ranks in order, each rank's ops in the order appended (which is
  // its program order), so one pass over the appended ops places every op and its deps.
  std::vector<std::uint32_t> dep_at;
  if (with_deps) {
    dep_at.assign(p + 1, 0);
    for (std::size_t i = 0; i < n; ++i) dep_at[static_cast<std::size_t>(rank_[i]) + 1] += dep_count_[i];
    for (std::size_t r = 0; r < p; ++r) dep_at[r + 1] += dep_at[r];
    plan_.deps_.assign(deps_.size(), 0);
  } else {
    plan_.deps_.clear();
  }
  plan_.dep_first_.assign(n + 1, 0);
  if (sorted_) {
    plan_.recs_ = std::move(recs_);
    plan_.rounds_ = std::move(rounds_);
  } else {
    plan_.recs_.resize(n);
    if (any_round_) plan_.rounds_.resize(n);
  }
  // Stable counting sort by rank (nothing moves when the ops came in rank order).
  std::vector<std::uint32_t> at(count.begin(), count.end() - 1);
  std::size_t from = 0;  // appended op i's deps: deps_[from, from + dep_count_[i])
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = static_cast<std::size_t>(rank_[i]);
    const std::uint32_t to = at[r]++;
    if (!sorted_) {
      plan_.recs_[to] = recs_[i];
      if (any_round_) plan_.rounds_[to] = rounds_[i];
    }
    if (with_deps) {
      const std::uint32_t c = dep_count_[i];
      std::copy(deps_.begin() + static_cast<std::ptrdiff_t>(from), deps_.begin() + static_cast<std::ptrdiff_t>(from + c),
                plan_.deps_.begin() + dep_at[r]);
      dep_at[r] += c;
      from += c;
      plan_.dep_first_[to + 1] = c;
    }
  }
  for (std::size_t g = 0; g < n; ++g) plan_.dep_first_[g + 1] += plan_.dep_first_[g];
  recs_ = {};
  rounds_ = {};
  rank_ = {};
  ids_ = {};
  deps_ = {};
  dep_count_ = {};
}

Plan PlanDraft::finish() {
  pack();
  derive_dependencies(plan_);
  plan_.finalize();
  return std::move(plan_);
}

Plan PlanDraft::finish_as_given() {
  pack();
  plan_.finalize();
  return std::move(plan_);
}

// ---- dependencies ---------------------------------------------------------------------------

void derive_dependencies(Plan& plan) {
  const int n = plan.rank_count();
  std::vector<std::uint32_t> dep_first(1, 0);
  dep_first.reserve(plan.op_count() + 1);
  std::vector<std::uint32_t> deps;
  deps.reserve(plan.deps_.size());
  Sweep sweep;
  std::vector<std::uint32_t> cand, mark, stack;
  std::uint32_t stamp = 0;
  for (int r = 0; r < n; ++r) {
    sweep.clear();
    const std::uint32_t base = plan.first_op(r);
    const std::uint32_t count = plan.first_[static_cast<std::size_t>(r) + 1] - base;
    if (mark.size() < count) mark.assign(count, 0);
    auto deps_of = [&](std::uint32_t i) {
      const std::uint32_t g = base + i;
      return std::span<const std::uint32_t>(deps.data() + dep_first[g], dep_first[g + 1] - dep_first[g]);
    };
    for (std::uint32_t j = 0; j < count; ++j) {
      cand.clear();
      sweep.step(j, access_at(plan, base + j), cand);
      std::sort(cand.begin(), cand.end(), std::greater<>());
      cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
      // Latest candidate first: anything it already implies needs no edge of its own.
      const std::size_t before = deps.size();
      if (!cand.empty()) {
        if (++stamp == 0) {
          std::fill(mark.begin(), mark.end(), 0);
          stamp = 1;
        }
        const std::uint32_t floor = cand.back();
        for (std::uint32_t c : cand) {
          if (mark[c] == stamp) continue;
          deps.push_back(c);
          mark_ancestors(c, floor, stamp, mark, stack, deps_of);
        }
      }
      std::sort(deps.begin() + static_cast<std::ptrdiff_t>(before), deps.end());
      if (deps.size() > kMaxCount) (void)checked_count(deps.size(), "deps");
      dep_first.push_back(static_cast<std::uint32_t>(deps.size()));
    }
  }
  plan.dep_first_ = std::move(dep_first);
  plan.deps_ = std::move(deps);
}

// ---- checks ---------------------------------------------------------------------------------

std::vector<std::uint32_t> match_messages(const Plan& plan) { return match_by_sequence(plan, sequence_numbers(plan)); }

namespace {

// Each op on its own: deps point backwards, regions inside their buffers, peers in range,
// messages at most 1 GiB, local ops of matching sizes (reduce: whole elements; copy: no partial
// overlap).
std::optional<std::string> check_ops(const Plan& plan) {
  const int p = plan.p;
  for (int r = 0; r < p; ++r) {
    const RankOps ops = plan.ops(r);
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
    const std::uint32_t base = plan.first_op(r);
    for (std::size_t j = 0; j < ops.size(); ++j) {
      // The fields one by one, region b (which only local ops have) through the whole view:
      // this loop runs over every op of the plan.
      const auto g = base + static_cast<std::uint32_t>(j);
      struct {
        OpCode code;
        int peer;
        Region a, b;
        std::span<const std::uint32_t> deps;
      } op{plan.code_at(g), plan.peer_at(g), plan.a_at(g), {}, plan.deps_at(g)};
      if (op.code == OpCode::reduce || op.code == OpCode::copy) op.b = plan.op_at(g).b;
      for (std::uint32_t d : op.deps) {
        if (d >= j) return where(r, j, op.code) + ": dependency on op " + std::to_string(d) + " does not point backwards";
      }
      if (!inside(op.a)) return where(r, j, op.code) + ": region " + region_str(op.a) + " lies outside its buffer";
      const bool two = op.code == OpCode::reduce || op.code == OpCode::copy;
      if (two && !inside(op.b)) return where(r, j, op.code) + ": region " + region_str(op.b) + " lies outside its buffer";
      if (op.code == OpCode::send || op.code == OpCode::recv) {
        if (op.peer < 0 || op.peer >= p) return where(r, j, op.code) + ": peer " + std::to_string(op.peer) + " is outside 0..p-1";
        if (op.peer == r) return where(r, j, op.code) + (op.code == OpCode::send ? ": sends to itself" : ": waits on itself");
        if (op.a.bytes > (std::uint64_t{1} << 30)) return where(r, j, op.code) + ": message larger than 1 GiB";
      } else {
        if (op.peer != -1) return where(r, j, op.code) + ": a local op names peer " + std::to_string(op.peer);
        if (op.a.bytes != op.b.bytes) {
          return where(r, j, op.code) + ": size mismatch, " + std::to_string(op.a.bytes) + " vs " +
                 std::to_string(op.b.bytes) + " bytes";
        }
        if (op.code == OpCode::reduce && op.a.bytes % plan.elem_bytes != 0) {
          return where(r, j, op.code) + ": " + std::to_string(op.a.bytes) + " bytes is not a whole number of " +
                 std::to_string(plan.elem_bytes) + "-byte elements";
        }
        if (op.code == OpCode::copy && overlaps(op.a, op.b) && !(op.a == op.b)) {
          return where(r, j, op.code) + ": copy between overlapping regions";
        }
      }
    }
  }

  return std::nullopt;
}

// Matching: the k-th send a→b against the k-th recv at b from a (seq: each op's number among
// its pair's sends or receives; partner: its match, kUnmatched if none), tags as finalize()
// numbers them, sizes equal.
std::optional<std::string> check_matching(const Plan& plan, const std::vector<std::uint32_t>& seq,
                                          const std::vector<std::uint32_t>& partner) {
  const int p = plan.p;
  for (int r = 0; r < p; ++r) {
    const RankOps ops = plan.ops(r);
    const std::uint32_t base = plan.first_op(r);
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const OpCode code = plan.code_at(base + static_cast<std::uint32_t>(j));
      if (code != OpCode::send && code != OpCode::recv) continue;  // local ops have no tag to check
      const OpView op = ops[j];
      const std::uint32_t k = seq[base + j];
      if (op.code == OpCode::send) {
        if (op.tag != k) {
          return where(r, j, op.code) + ": tag " + std::to_string(op.tag) + " but it is send #" + std::to_string(k) +
                 " to " + std::to_string(op.peer) + " (call finalize())";
        }
        const std::uint32_t m = partner[base + j];
        if (m == kUnmatched) {
          return "unmatched send: " + where(r, j, op.code) + " (#" + std::to_string(k) + " to " + std::to_string(op.peer) +
                 ", " + std::to_string(op.a.bytes) + " bytes) has no matching recv at rank " + std::to_string(op.peer);
        }
        if (plan.a_at(m).bytes != op.a.bytes) {
          return "size mismatch: " + where(r, j, op.code) + " sends " + std::to_string(op.a.bytes) + " bytes to " +
                 std::to_string(op.peer) + " but " + where(op.peer, m - plan.first_op(op.peer), plan.code_at(m)) +
                 " receives " + std::to_string(plan.a_at(m).bytes);
        }
      } else if (op.code == OpCode::recv) {
        if (op.tag != k) {
          return where(r, j, op.code) + ": tag " + std::to_string(op.tag) + " but it is recv #" + std::to_string(k) +
                 " from " + std::to_string(op.peer) + " (call finalize())";
        }
        if (partner[base + j] == kUnmatched) {
          return "unmatched recv: " + where(r, j, op.code) + " (#" + std::to_string(k) + " from " +
                 std::to_string(op.peer) + ") has no matching send at rank " + std::to_string(op.peer);
        }
      }
    }
  }

  return std::nullopt;
}

// Hazards: two ops touching the same bytes (one of them writing) must be ordered by deps,
// or an executor that follows only the deps (the emulator, GOAL) could race them.
std::optional<std::string> check_hazards(const Plan& plan) {
  const int p = plan.p;
  Sweep sweep;
  std::vector<std::uint32_t> cand, mark, stack;
  std::vector<std::pair<Region, std::uint32_t>> spans;
  std::uint32_t stamp = 0;
  for (int r = 0; r < p; ++r) {
    if (touches_disjoint(plan, r, spans)) continue;
    sweep.clear();
    const RankOps ops = plan.ops(r);
    const std::uint32_t base = plan.first_op(r);
    if (mark.size() < ops.size()) mark.assign(ops.size(), 0);
    auto deps_of = [&](std::uint32_t i) { return plan.deps_at(base + i); };
    for (std::uint32_t j = 0; j < ops.size(); ++j) {
      cand.clear();
      sweep.step(j, access_at(plan, base + j), cand);
      if (cand.empty()) continue;
      std::sort(cand.begin(), cand.end());
      cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
      // Fast path: every candidate is a direct dep.
      const auto deps = plan.deps_at(base + j);
      bool all_direct = true;
      for (std::uint32_t c : cand) all_direct = all_direct && std::binary_search(deps.begin(), deps.end(), c);
      if (all_direct) continue;
      if (++stamp == 0) {
        std::fill(mark.begin(), mark.end(), 0);
        stamp = 1;
      }
      mark_ancestors(j, cand.front(), stamp, mark, stack, deps_of);
      for (std::uint32_t c : cand) {
        if (mark[c] != stamp) {
          return "rank " + std::to_string(r) + ": ops " + std::to_string(c) + " (" + to_string(plan.code_at(base + c)) +
                 ") and " + std::to_string(j) + " (" + to_string(plan.code_at(base + j)) + ") touch the same bytes without a dependency between them";
        }
      }
    }
  }

  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate(const Plan& plan) {
  const int p = plan.p;
  if (p < 1) return "plan has p = " + std::to_string(p) + " (need at least 1)";
  if (plan.rank_count() != p) {
    return "plan has " + std::to_string(plan.rank_count()) + " rank programs for p = " + std::to_string(p);
  }
  if (plan.user_bytes.size() != static_cast<std::size_t>(p) || plan.scratch_bytes.size() != static_cast<std::size_t>(p)) {
    return "plan's user_bytes/scratch_bytes do not have p = " + std::to_string(p) + " entries";
  }
  if (plan.elem_bytes == 0) return "plan has elem_bytes = 0";
  if (plan.root < -1 || plan.root >= p) return "plan root " + std::to_string(plan.root) + " is outside -1..p-1";
  if (auto problem = check_ops(plan)) return problem;
  const std::vector<std::uint32_t> seq = sequence_numbers(plan);
  const std::vector<std::uint32_t> partner = match_by_sequence(plan, seq);
  if (auto problem = check_matching(plan, seq, partner)) return problem;
  if (auto problem = check_hazards(plan)) return problem;
  return run_in_program_order(plan, partner, 0);
}

std::optional<std::string> validate_rings(const Plan& plan, std::uint64_t ring_bytes) {
  PB_CHECK(plan.rank_count() == plan.p, "validate_rings: plan not validated");
  const std::vector<std::uint32_t> partner = match_messages(plan);
  for (std::uint32_t g = 0; g < plan.op_count(); ++g) {
    const OpCode c = plan.code_at(g);
    PB_CHECK(!((c == OpCode::send || c == OpCode::recv) && partner[g] == kUnmatched), "validate_rings: plan not validated");
  }
  return run_in_program_order(plan, partner, round_ring(ring_bytes));
}

std::uint64_t ring_bytes_needed(const Plan& plan) {
  const int n = plan.rank_count();
  std::vector<std::uint64_t> per_peer(static_cast<std::size_t>(n), 0);
  std::vector<int> touched;
  std::uint64_t most = 0;
  for (int r = 0; r < n; ++r) {
    touched.clear();
    for (const OpView op : plan.ops(r)) {
      if (op.code != OpCode::send || op.peer < 0 || op.peer >= n) continue;
      std::uint64_t& v = per_peer[static_cast<std::size_t>(op.peer)];
      if (v == 0) touched.push_back(op.peer);
      v += internal::record_bytes(op.a.bytes);
      most = std::max(most, v);
    }
    for (int q : touched) per_peer[static_cast<std::size_t>(q)] = 0;
  }
  return round_ring(most + internal::kRingReserve);
}

std::uint64_t total_message_bytes(const Plan& plan) {
  std::uint64_t total = 0;
  for (std::uint32_t g = 0; g < plan.op_count(); ++g)
    if (plan.code_at(g) == OpCode::send) total += plan.a_at(g).bytes;
  return total;
}

std::uint64_t message_count(const Plan& plan) {
  std::uint64_t n = 0;
  for (std::uint32_t g = 0; g < plan.op_count(); ++g) n += plan.code_at(g) == OpCode::send ? 1 : 0;
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

const char* to_string(Pacing pacing) noexcept {
  switch (pacing) {
    case Pacing::none: return "none";
    case Pacing::delay_receive: return "delay-receive";
    case Pacing::delay_send: return "delay-send";
  }
  return "?";
}

}  // namespace postbox
