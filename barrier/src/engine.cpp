#include "engine.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <numeric>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

#include "postbox/collectives/postal.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/internal/inject.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::internal {

namespace {

BarrierAlgorithm checked(BarrierAlgorithm a, int p) {
  if (p < 1) throw InputError("barrier: p must be at least 1, got " + std::to_string(p));
  return a;
}

// Prog words: (phase << kStepBits) | step; only the phase's low bits are kept, which is enough
// because a proxy reads a rank's progress only after it saw that rank absent in the same phase.
constexpr int kStepBits = 20;
constexpr std::uint64_t kStepMask = (std::uint64_t{1} << kStepBits) - 1;
std::uint64_t prog_code(std::uint64_t e, int step) noexcept { return (e << kStepBits) | static_cast<std::uint64_t>(step); }
bool prog_phase_is(std::uint64_t code, std::uint64_t e) noexcept { return (code >> kStepBits) == ((e << kStepBits) >> kStepBits); }

// Raises a phase word to e when it holds an earlier phase; true iff this call changed it. The
// first guess is the previous phase, the usual value, so the fast path is one CAS.
bool raise_phase(std::atomic<std::uint64_t>& w, std::uint64_t e) noexcept {
  std::uint64_t cur = e - 1;
  for (;;) {
    sync_point();
    // seq_cst: a release (what the signaller and everyone whose arrival it carries wrote is
    // visible to the acquirer), and ordered before the signaller's loads of sleepers and absent.
    if (w.compare_exchange_strong(cur, e, std::memory_order_seq_cst)) return true;
    if (reached(cur, e)) return false;
  }
}

bool raise_wake(std::atomic<std::uint64_t>& w, std::uint64_t e, bool duty) noexcept {
  std::uint64_t cur = wake_code(e - 1, true);
  const std::uint64_t next = wake_code(e, duty);
  for (;;) {
    sync_point();
    // seq_cst: as raise_phase.
    if (w.compare_exchange_strong(cur, next, std::memory_order_seq_cst)) return true;
    if (wake_reached(cur, e)) return false;
  }
}

}  // namespace

// Holds the rank for the duration of one call: fails fast on a rank outside 0..p-1, a second
// thread in the same rank, or a dropped rank.
class Engine::Entry {
 public:
  Entry(Engine& engine, int rank) : slot_(nullptr) {
    PB_CHECK(rank >= 0 && rank < engine.p_,
             "barrier: rank " + std::to_string(rank) + " outside 0.." + std::to_string(engine.p_ - 1));
    RankSlot& s = engine.slots_[static_cast<std::size_t>(rank)];
    // acquire/release: a rank may move between threads across calls (OpenMP teams); the next
    // thread must see the previous one's writes to the slot.
    PB_CHECK(s.in_use.exchange(1, std::memory_order_acquire) == 0,
             "barrier: two threads use rank " + std::to_string(rank) + " at once");
    slot_ = &s;
    // relaxed: only this rank's own thread (or an earlier one, acquired above) writes it.
    PB_CHECK(!s.dropped.load(std::memory_order_relaxed),
             "barrier: rank " + std::to_string(rank) + " is used after arrive_and_drop");
  }
  ~Entry() { slot_->in_use.store(0, std::memory_order_release); }
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;
  RankSlot& slot() const noexcept { return *slot_; }

 private:
  RankSlot* slot_;
};

Engine::Engine(BarrierAlgorithm algorithm, int p, BarrierOptions options, std::string reason)
    : algorithm_(checked(algorithm, p)),
      family_(barrier_family(algorithm)),
      p_(p),
      policy_(options.wait),
      completion_(std::move(options.completion)),
      send_recv_(options.send_recv.value_or(SendRecv{Rational(1), Rational(1)})),
      debug_timeout_(options.debug_timeout),
      topology_(algorithm == BarrierAlgorithm::hier && !options.topology
                    ? std::make_shared<const Topology>(Topology::machine())
                    : std::move(options.topology)),
      placement_(std::move(options.placement)),
      reason_(std::move(reason)),
      track_cpu_(options.wait.spin_ns > 0 && !options.fibers),
      slots_(new RankSlot[static_cast<std::size_t>(p)]) {
  if (send_recv_.s <= Rational(0) || send_recv_.r < Rational(0)) {
    throw InputError("barrier: send latency s must be > 0 and receive latency r >= 0, got s = " +
                     send_recv_.s.str() + ", r = " + send_recv_.r.str());
  }
  if (policy_.spin_ns < 0 || policy_.yield_ns < 0) throw InputError("barrier: wait budgets must be non-negative");
  const auto P = static_cast<std::size_t>(p);
  if (!placement_.empty() && placement_.size() < P) {
    throw InputError("barrier: placement lists " + std::to_string(placement_.size()) + " PUs for " +
                     std::to_string(p) + " ranks");
  }
  for (std::size_t r = 0; r < P; ++r) {
    slots_[r].wait.reset(policy_);
    // The oversubscribed policy (no spin, the convention track_cpu_ follows): ranks share CPUs,
    // so a long yield that ends the wait handed the core to them (wait.hpp, adaptive_yield).
    slots_[r].wait.shares_cpu = policy_.spin_ns == 0;
  }
  scratch_.resize(P);
  participants_.store(p, std::memory_order_relaxed);
  std::vector<int> all(P);
  std::iota(all.begin(), all.end(), 0);
  std::unique_ptr<Shape> first = make_shape(all);
  switch (family_) {
    case Family::central:
      group_count_.reset(new Line[P]);
      break;
    case Family::tree:
      counters_.reset(new Line[P]);
      wake_.reset(new Word[P]);
      absent_.reset(new Line[P]);
      break;
    case Family::rounds: {
      // Sized once for every shape a drop may rebuild (a drop never adds rounds).
      m0_ = static_cast<int>(barrier_max_send_rounds(algorithm_, p, send_recv_));
      flags_.reset(new Word[P * static_cast<std::size_t>(m0_)]);
      prog_.reset(new Line[P]);
      absent_.reset(new Line[P]);
      break;
    }
  }
  shape_.store(first.get(), std::memory_order_relaxed);
  shapes_.push_back(std::move(first));
}

Engine::~Engine() = default;

std::unique_ptr<Shape> Engine::make_shape(const std::vector<int>& active) const {
  auto sh = std::make_unique<Shape>();
  Shape& s = *sh;
  s.n = static_cast<int>(active.size());
  s.active = active;
  s.index.assign(static_cast<std::size_t>(p_), -1);
  for (int i = 0; i < s.n; ++i) s.index[static_cast<std::size_t>(active[static_cast<std::size_t>(i)])] = i;
  s.family = family_;
  if (s.n == 0) return sh;
  std::vector<int> pus;
  if (algorithm_ == BarrierAlgorithm::hier) {
    for (int r : active) {
      const int pu = placement_.empty() ? r % topology_->pus() : placement_[static_cast<std::size_t>(r)];
      if (pu < 0 || pu >= topology_->pus()) {
        throw InputError("hier barrier: placement names PU " + std::to_string(pu) + ", the topology has " +
                         std::to_string(topology_->pus()));
      }
      pus.push_back(pu);
    }
  }
  const BarrierShape b = barrier_shape(algorithm_, s.n, send_recv_, topology_.get(), pus.empty() ? nullptr : &pus);
  const auto N = static_cast<std::size_t>(s.n);
  switch (s.family) {
    case Family::central: {
      // Ranks that are fibers combine per worker first when that saves shared increments: only
      // this worker's ranks touch its group's line, and count_ takes one increment per worker.
      std::vector<int> group(N, -1);
      std::vector<int> target;
      std::vector<const void*> worker;
      bool all_fibers = true;
      for (std::size_t i = 0; i < N && all_fibers; ++i) {
        const void* w = slots_[static_cast<std::size_t>(active[i])].worker;
        if (w == nullptr) {
          all_fibers = false;
          break;
        }
        const auto it = std::find(worker.begin(), worker.end(), w);
        group[i] = static_cast<int>(it - worker.begin());
        if (it == worker.end()) {
          worker.push_back(w);
          target.push_back(0);
        }
        ++target[static_cast<std::size_t>(group[i])];
      }
      if (all_fibers && 2 * worker.size() <= N) {
        s.group = std::move(group);
        s.group_target = std::move(target);
        s.group_worker = std::move(worker);
      }
      break;
    }
    case Family::tree: {
      const auto& up = b.arrival.children;
      const auto& par = b.arrival.parent;
      s.first_node.assign(N, -1);
      if (!b.match_per_child) {
        // Node v: v and its arrival children; a leaf arrives straight at its parent's node.
        s.target.assign(N, 0);
        s.parent_node.assign(N, -1);
        for (std::size_t v = 0; v < N; ++v) {
          s.target[v] = 1 + static_cast<int>(up[v].size());
          s.parent_node[v] = par[v];
          s.first_node[v] = up[v].empty() ? par[v] : static_cast<int>(v);
        }
      } else {
        // Match M(v, j) for v's j-th arrival child: two inputs, v's chain so far and the child's
        // subtree; it completes into M(v, j + 1), the last into the match v's parent has for v.
        std::vector<int> first_match(N, -1);
        int ids = 0;
        for (std::size_t v = 0; v < N; ++v) {
          first_match[v] = ids;
          ids += static_cast<int>(up[v].size());
        }
        s.target.assign(static_cast<std::size_t>(ids), 2);
        s.parent_node.assign(static_cast<std::size_t>(ids), -1);
        std::vector<int> slot_in_parent(N, -1);  // the match v's subtree result arrives at
        for (std::size_t v = 0; v < N; ++v) {
          for (std::size_t j = 0; j < up[v].size(); ++j) {
            slot_in_parent[static_cast<std::size_t>(up[v][j])] = first_match[v] + static_cast<int>(j);
          }
        }
        for (std::size_t v = 0; v < N; ++v) {
          const int d = static_cast<int>(up[v].size());
          const int out = slot_in_parent[v];  // −1 for the root
          for (int j = 0; j < d; ++j) {
            s.parent_node[static_cast<std::size_t>(first_match[v] + j)] = j + 1 < d ? first_match[v] + j + 1 : out;
          }
          s.first_node[v] = d > 0 ? first_match[v] : out;
        }
      }
      s.wake_begin.assign(N + 1, 0);
      for (std::size_t v = 0; v < N; ++v) {
        s.wake_begin[v] = static_cast<int>(s.wake_to.size());
        for (int c : b.wakeup.children[v]) s.wake_to.push_back(active[static_cast<std::size_t>(c)]);
      }
      s.wake_begin[N] = static_cast<int>(s.wake_to.size());
      break;
    }
    case Family::rounds: {
      s.lambda = static_cast<int>(b.lambda);
      s.t = static_cast<int>(b.t);
      s.m = static_cast<int>(b.m);
      s.variant = b.variant;
      // Rounds m + 1 .. λ − 1 neither send nor receive (a large λ makes them many): skipped.
      for (int r = 1; r <= s.t; ++r) {
        if (r <= s.m || r >= s.lambda) s.rounds.push_back(r);
      }
      PB_CHECK(2 * s.rounds.size() < kStepMask, "barrier: too many rounds");
      s.send_to.assign(N * static_cast<std::size_t>(s.m), -1);
      for (std::size_t i = 0; i < N; ++i) {
        for (std::size_t j = 0; j < static_cast<std::size_t>(s.m); ++j) {
          s.send_to[i * static_cast<std::size_t>(s.m) + j] =
              active[(i + static_cast<std::size_t>(b.offset[j])) % N];
        }
      }
      break;
    }
  }
  return sh;
}

// ---------------------------------------------------------------------------------------------
// Entry points

void Engine::throw_if_broken() const {
  // relaxed: abort() publishes nothing but the flag itself.
  if (aborted_.load(std::memory_order_relaxed)) throw Aborted();
  // relaxed: set before the release this thread acquired when it left the phase.
  if (broken_.load(std::memory_order_relaxed)) throw BarrierBroken();
}

void Engine::begin(RankSlot& me, ReduceArgs* args, bool drop) {
  const std::uint64_t e = ++me.phase;
  me.args = args;
  me.dropping = drop;
  me.absent = false;
  me.completer = false;
  me.forwarded = false;
  me.step = 0;
  me.printed = false;
  me.error = nullptr;
  me.stage = RankSlot::Stage::arrived;
  // relaxed: a hint for other ranks' co-location check (block_policy()); read only by waiters
  // that spun in vain, so the store costs the hot path no line transfer while all run apart.
  if (track_cpu_) {
    const int cpu = ::sched_getcpu();
    if (me.cpu.load(std::memory_order_relaxed) != cpu) me.cpu.store(cpu, std::memory_order_relaxed);
  }
  // acquire: the shape a drop phase's completion step published (this rank acquired that
  // completion when it left the drop phase, so relaxed would do; acquire says why it is safe).
  const Shape* s = shape_.load(std::memory_order_acquire);
  // relaxed below: published by this rank's arrival (a release), which happens before any
  // completion step (or rebuild scan) of this or a later phase reads them.
  me.shape.store(s, std::memory_order_relaxed);
  if (drop) {
    me.dropped.store(true, std::memory_order_relaxed);
    drop_phase_[e & 1U].store(e, std::memory_order_relaxed);
  }
  if (args != nullptr) reduce_phase_[e & 1U].store(e, std::memory_order_relaxed);
  me.arrived.store(e, std::memory_order_relaxed);
}

void Engine::end(RankSlot& me) noexcept {
  me.stage = RankSlot::Stage::idle;
  // release: this thread's reads of the shape happen before a rebuild that sees null frees it.
  me.shape.store(nullptr, std::memory_order_release);
}

namespace {
// Rethrows what this call must throw after it left the phase: its own completion error first.
void finish_call(const std::exception_ptr& error) {
  if (error) std::rethrow_exception(error);
}
}  // namespace

// The start of an arrival call: the rank must be between phases; a broken or aborted barrier
// throws before anything changes.
RankSlot& Engine::start_arrival(Entry& entry, int rank, ReduceArgs* args, bool drop) {
  RankSlot& me = entry.slot();
  PB_CHECK(me.stage == RankSlot::Stage::idle,
           "barrier: rank " + std::to_string(rank) + " arrives twice in one phase (arrive() without wait())");
  throw_if_broken();
  begin(me, args, drop);
  return me;
}

// Runs body; on an exception the rank leaves the phase (idle, no shape reference) first.
template <class Body>
void Engine::guarded(RankSlot& me, Body&& body) {
  try {
    body();
  } catch (...) {
    end(me);
    throw;
  }
}

void Engine::arrive_and_wait(int rank, ReduceArgs* args) {
  Entry entry(*this, rank);
  RankSlot& me = start_arrival(entry, rank, args, false);
  guarded(me, [&] {
    arrival(rank, me, true);
    finish(rank, me);
  });
  end(me);
  finish_call(me.error);
  throw_if_broken();
}

BarrierToken Engine::arrive(int rank) {
  Entry entry(*this, rank);
  RankSlot& me = start_arrival(entry, rank, nullptr, false);
  guarded(me, [&] {
    arrival(rank, me, false);
    go_absent(rank, me);
  });
  if (me.error) {
    // This thread ran the completion step, which threw (or saw the abort): its phase is over.
    end(me);
    std::rethrow_exception(me.error);
  }
  return BarrierToken{me.phase};
}

void Engine::wait(int rank, BarrierToken token) {
  Entry entry(*this, rank);
  RankSlot& me = entry.slot();
  PB_CHECK(me.stage == RankSlot::Stage::arrived && token.phase == me.phase,
           "barrier: rank " + std::to_string(rank) + " waits without a matching arrive()");
  guarded(me, [&] {
    throw_if_broken();
    come_back(rank, me);
    finish(rank, me);
  });
  end(me);
  finish_call(me.error);
  throw_if_broken();
}

void Engine::arrive_and_drop(int rank) {
  Entry entry(*this, rank);
  RankSlot& me = start_arrival(entry, rank, nullptr, true);
  guarded(me, [&] {
    arrival(rank, me, false);
    go_absent(rank, me);
  });
  end(me);
  finish_call(me.error);
}

// ---------------------------------------------------------------------------------------------
// Arrival, absence, finishing

void Engine::arrival(int rank, RankSlot& me, bool wait) {
  switch (family_) {
    case Family::central: central_arrival(rank, me); break;
    case Family::tree: tree_arrival(rank, me); break;
    case Family::rounds:
      if (rounds_run(rank, me, wait)) rounds_done(rank, me, true, *me.shape.load(std::memory_order_relaxed), me.phase);
      break;
  }
}

void Engine::go_absent(int rank, RankSlot& me) {
  if (me.completer || family_ == Family::central) return;
  const std::uint64_t e = me.phase;
  const Shape& s = *me.shape.load(std::memory_order_relaxed);
  const auto R = static_cast<std::size_t>(rank);
  if (family_ == Family::tree) {
    me.absent = true;
    sync_point();
    // seq_cst store then seq_cst load: Dekker with wake() (raise, then load absent): either the
    // waker sees the absence and forwards for this rank, or this rank sees the wake-up here.
    absent_[R].v.store(absent_code(e), std::memory_order_seq_cst);
    sync_point();
    if (wake_[R].v.load(std::memory_order_seq_cst) == wake_code(e, true)) {
      me.forwarded = true;
      forward(s, s.index[R], e);
    }
    return;
  }
  // rounds
  if (me.step >= 2 * static_cast<int>(s.rounds.size())) return;  // its rounds are done
  me.absent = true;
  // release: the progress is read by a proxy after it saw the absence below.
  prog_[R].v.store(prog_code(e, me.step), std::memory_order_release);
  sync_point();
  // seq_cst: Dekker with deliver() (raise, then load absent).
  absent_[R].v.store(absent_code(e), std::memory_order_seq_cst);
  if (advance(s, rank, e, false, me)) rounds_done(rank, me, true, s, e);
}

void Engine::come_back(int rank, RankSlot& me) {
  if (!me.absent) return;
  sync_point();
  // seq_cst: Dekker with wake()/deliver(); a proxy that still saw the absence may act as well.
  absent_[static_cast<std::size_t>(rank)].v.store(0, std::memory_order_seq_cst);
}

void Engine::finish(int rank, RankSlot& me) {
  if (me.completer) return;
  const std::uint64_t e = me.phase;
  const Shape& s = *me.shape.load(std::memory_order_relaxed);
  const auto R = static_cast<std::size_t>(rank);
  switch (family_) {
    case Family::central:
      block(rank, me, release_, [e](std::uint64_t v) { return reached(v, e); });
      return;
    case Family::tree: {
      Word& w = wake_[R];
      block(rank, me, w, [e](std::uint64_t v) { return wake_reached(v, e); });
      // The wake-up acquired the completion step, so the shape is the one of this phase.
      if (!me.forwarded && w.v.load(std::memory_order_relaxed) == wake_code(e, true)) forward(s, s.index[R], e);
      return;
    }
    case Family::rounds: {
      const int steps = 2 * static_cast<int>(s.rounds.size());
      bool mine = false;
      if (me.absent) {
        mine = advance(s, rank, e, true, me);
      } else if (me.step < steps) {
        mine = rounds_run(rank, me, true);
      }
      if (mine) rounds_done(rank, me, true, s, e);
      if (me.completer || !step_needed(e)) return;
      block(rank, me, release_, [e](std::uint64_t v) { return reached(v, e); });
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Central

void Engine::central_arrival(int rank, RankSlot& me) {
  const std::uint64_t e = me.phase;
  const Shape& s = *me.shape.load(std::memory_order_relaxed);
  // Which worker this rank runs on: a change (the first phase on fibers, or a rank now run by
  // another thread) asks the completion step to regroup. Grouping is an optimisation only:
  // the counts are right whichever thread increments a group's counter.
  const void* const worker = postbox::internal::current_fiber_worker();
  if (me.worker != worker) {
    me.worker = worker;
    // relaxed: read by the completion step, which acquires this arrival.
    if (worker != nullptr && !regroup_.load(std::memory_order_relaxed)) regroup_.store(true, std::memory_order_relaxed);
  }
  std::uint64_t target = static_cast<std::uint64_t>(s.n);
  if (!s.group.empty()) {
    const auto g = static_cast<std::size_t>(s.group[static_cast<std::size_t>(s.index[static_cast<std::size_t>(rank)])]);
    if (s.group_worker[g] != worker && !regroup_.load(std::memory_order_relaxed)) {
      regroup_.store(true, std::memory_order_relaxed);
    }
    Line& c = group_count_[g];
    sync_point();
    // acq_rel, as count_ below (the tree family's node protocol, two levels): release publishes
    // this rank's writes to the group's last arriver, whose increment of count_ carries them.
    if (c.v.fetch_add(1, std::memory_order_acq_rel) + 1 != static_cast<std::uint64_t>(s.group_target[g])) return;
    // relaxed: the next phase's arrivals at this group come after this phase's release.
    c.v.store(0, std::memory_order_relaxed);
    target = s.group_target.size();
  }
  sync_point();
  // acq_rel: release publishes this rank's writes to the last arriver; acquire (for the last
  // arriver) makes every earlier arriver's writes visible through the release sequence.
  if (count_.v.fetch_add(1, std::memory_order_acq_rel) + 1 != target) return;
  // relaxed: the next phase's arrivals come after this phase's release.
  count_.v.store(0, std::memory_order_relaxed);
  me.completer = true;
  me.error = complete(s, e);
  if (aborted_.load(std::memory_order_relaxed)) return;
  sync_point();
  // seq_cst: a release, ordered before signal()'s load of sleepers.
  release_.v.store(e, std::memory_order_seq_cst);
  signal(release_);
}

// ---------------------------------------------------------------------------------------------
// Tree

void Engine::tree_arrival(int rank, RankSlot& me) {
  const std::uint64_t e = me.phase;
  const Shape& s = *me.shape.load(std::memory_order_relaxed);
  const int i = s.index[static_cast<std::size_t>(rank)];
  for (int node = s.first_node[static_cast<std::size_t>(i)]; node >= 0;) {
    // Read before the increment: after it, the node belongs to the next phase's arrivals.
    const auto target = static_cast<std::uint64_t>(s.target[static_cast<std::size_t>(node)]);
    const int up = s.parent_node[static_cast<std::size_t>(node)];
    Line& c = counters_[static_cast<std::size_t>(node)];
    sync_point();
    // acq_rel: release publishes what this thread carries (its own writes and those of the
    // subtrees it completed) to the node's last arriver; acquire makes all of it visible to it.
    if (c.v.fetch_add(1, std::memory_order_acq_rel) + 1 != target) return;
    // relaxed: the next phase's arrivals at this node come after this phase's release.
    c.v.store(0, std::memory_order_relaxed);
    node = up;
  }
  // This thread completed the root: every participant has arrived.
  me.completer = true;
  me.error = complete(s, e);
  if (aborted_.load(std::memory_order_relaxed)) return;
  // Cordsen §2: the distribution phase. This thread forwards for the root and for itself, so
  // both words are raised without duty first (the root's parent and its own never signal them).
  const int root = s.active[0];
  if (raise_wake(wake_[static_cast<std::size_t>(rank)].v, e, false)) signal(wake_[static_cast<std::size_t>(rank)]);
  if (rank != root && raise_wake(wake_[static_cast<std::size_t>(root)].v, e, false)) {
    signal(wake_[static_cast<std::size_t>(root)]);
  }
  forward(s, 0, e);
  if (rank != root) forward(s, i, e);
}

void Engine::forward(const Shape& s, int index, std::uint64_t e) {
  const auto I = static_cast<std::size_t>(index);
  for (int k = s.wake_begin[I]; k < s.wake_begin[I + 1]; ++k) wake(s, s.wake_to[static_cast<std::size_t>(k)], e);
}

void Engine::wake(const Shape& s, int rank, std::uint64_t e) {
  const auto R = static_cast<std::size_t>(rank);
  if (!raise_wake(wake_[R].v, e, true)) return;  // someone else woke it and took the duty
  signal(wake_[R]);
  sync_point();
  // seq_cst: Dekker with go_absent() (see there).
  if (absent_[R].v.load(std::memory_order_seq_cst) == absent_code(e)) forward(s, s.index[R], e);
}

// ---------------------------------------------------------------------------------------------
// Rounds

bool Engine::rounds_run(int rank, RankSlot& me, bool block_on_receive) {
  const std::uint64_t e = me.phase;
  const Shape& s = *me.shape.load(std::memory_order_relaxed);
  const auto R = static_cast<std::size_t>(rank);
  const int i = s.index[R];
  const int steps = 2 * static_cast<int>(s.rounds.size());
  for (; me.step < steps; ++me.step) {
    const int r = s.rounds[static_cast<std::size_t>(me.step / 2)];
    if (me.step % 2 == 0) {
      if (r <= s.m) {
        const auto j = static_cast<std::size_t>(r - 1);
        deliver(s, s.send_to[static_cast<std::size_t>(i) * static_cast<std::size_t>(s.m) + j], static_cast<int>(j), e, me);
      }
      continue;
    }
    if (r < s.lambda) continue;
    // Received in round r: what index i − N_λ(r − 1) sent in round r − λ + 1.
    Word& in = flags_[R * static_cast<std::size_t>(m0_) + static_cast<std::size_t>(r - s.lambda)];
    auto done = [e](std::uint64_t v) { return reached(v, e); };
    // acquire: pairs with the sender's raise.
    if (done(in.v.load(std::memory_order_acquire))) continue;
    if (!block_on_receive) return false;
    block(rank, me, in, done);
  }
  return true;
}

void Engine::deliver(const Shape& s, int to, int j, std::uint64_t e, RankSlot& actor) {
  const auto T = static_cast<std::size_t>(to);
  Word& w = flags_[T * static_cast<std::size_t>(m0_) + static_cast<std::size_t>(j)];
  if (!raise_phase(w.v, e)) return;  // a duplicate: whoever raised it first acted
  signal(w);
  sync_point();
  // seq_cst: Dekker with go_absent() (prog, absent, then advance).
  if (absent_[T].v.load(std::memory_order_seq_cst) != absent_code(e)) return;
  if (advance(s, to, e, false, actor) && s.index[T] == 0 && step_needed(e)) {
    // This thread moved the absent leader past its last round: it runs the completion step.
    // An error is rethrown when this thread's own call ends, after its own protocol work.
    std::exception_ptr error = complete(s, e);
    if (error && !actor.error) actor.error = error;
    if (!aborted_.load(std::memory_order_relaxed)) {
      sync_point();
      // seq_cst: a release, ordered before signal()'s load of sleepers.
      release_.v.store(e, std::memory_order_seq_cst);
      signal(release_);
    }
  }
}

bool Engine::advance(const Shape& s, int rank, std::uint64_t e, bool block_on_receive, RankSlot& actor) {
  const auto R = static_cast<std::size_t>(rank);
  const int i = s.index[R];
  const int steps = 2 * static_cast<int>(s.rounds.size());
  Line& pg = prog_[R];
  // acquire: the rank's progress and what its last advancer received.
  std::uint64_t cur = pg.v.load(std::memory_order_acquire);
  for (;;) {
    if (!prog_phase_is(cur, e)) return false;
    const int k = static_cast<int>(cur & kStepMask);
    if (k >= steps) return false;
    const int r = s.rounds[static_cast<std::size_t>(k / 2)];
    if (k % 2 == 0) {
      if (r <= s.m) {
        const auto j = static_cast<std::size_t>(r - 1);
        deliver(s, s.send_to[static_cast<std::size_t>(i) * static_cast<std::size_t>(s.m) + j], static_cast<int>(j), e, actor);
      }
    } else if (r >= s.lambda) {
      Word& in = flags_[R * static_cast<std::size_t>(m0_) + static_cast<std::size_t>(r - s.lambda)];
      auto done = [e](std::uint64_t v) { return reached(v, e); };
      if (!done(in.v.load(std::memory_order_acquire))) {
        if (!block_on_receive) return false;
        block(rank, actor, in, done);
        cur = pg.v.load(std::memory_order_acquire);
        continue;
      }
    }
    sync_point();
    // acq_rel: the next advancer (another proxy, or the rank) sees what this one received.
    if (pg.v.compare_exchange_strong(cur, cur + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
      if (k + 1 == steps) return true;
      ++cur;
    }
  }
}

bool Engine::step_needed(std::uint64_t e) const noexcept {
  const std::size_t parity = e & 1U;
  // relaxed: written before the writers' arrivals, which reached this thread through
  // acquire/release chains (every rank's arrival reaches every rank in the rounds).
  return completion_ || reduce_phase_[parity].load(std::memory_order_relaxed) == e ||
         drop_phase_[parity].load(std::memory_order_relaxed) == e;
}

void Engine::rounds_done(int rank, RankSlot& me, bool mine, const Shape& s, std::uint64_t e) {
  me.step = 2 * static_cast<int>(s.rounds.size());
  if (!mine || s.index[static_cast<std::size_t>(rank)] != 0 || !step_needed(e)) return;
  // The leader's rounds ended in this thread: every participant has arrived.
  me.completer = true;
  me.error = complete(s, e);
  if (aborted_.load(std::memory_order_relaxed)) return;
  sync_point();
  // seq_cst: a release, ordered before signal()'s load of sleepers.
  release_.v.store(e, std::memory_order_seq_cst);
  signal(release_);
}

// ---------------------------------------------------------------------------------------------
// The completion step

std::exception_ptr Engine::complete(const Shape& s, std::uint64_t e) {
  sync_point();
  const std::size_t parity = e & 1U;
  // relaxed: written before the writer's arrival, which this thread has acquired.
  const bool reducing = reduce_phase_[parity].load(std::memory_order_relaxed) == e;
  // seq_cst store then seq_cst load: Dekker with a reducer that leaves on abort (it loads
  // aborted_, then completing_): either this thread sees the abort and folds nothing, or the
  // reducer sees completing_ == e and waits for completed_. Only a reducer reads the two words
  // (leave_aborted()), so a phase without one leaves them alone: with the ranks completing
  // phases in turn, each write would pull a line from the other's cache into the completer's
  // path to the release.
  if (reducing) completing_.v.store(e, std::memory_order_seq_cst);
  std::exception_ptr error;
  if (aborted_.load(std::memory_order_seq_cst)) {
    error = std::make_exception_ptr(Aborted());
  } else {
    try {
      if (reducing) {
        int n = 0;
        for (int r : s.active) {
          ReduceArgs* a = slots_[static_cast<std::size_t>(r)].args;
          if (a == nullptr) continue;
          PB_CHECK(n == 0 || a->fold == scratch_[0]->fold,
                   "barrier: arrive_and_reduce called with different value or op types in one phase");
          scratch_[static_cast<std::size_t>(n++)] = a;
        }
        if (n > 0) scratch_[0]->fold(scratch_.data(), n);
      }
      if (completion_) completion_();
    } catch (...) {
      error = std::current_exception();
      // relaxed: published by the release that follows.
      broken_.store(true, std::memory_order_relaxed);
    }
    // relaxed: set before arrivals this thread has acquired; reset before the release.
    const bool regroup = family_ == Family::central && regroup_.load(std::memory_order_relaxed);
    if (regroup) regroup_.store(false, std::memory_order_relaxed);
    if (drop_phase_[parity].load(std::memory_order_relaxed) == e || regroup) {
      try {
        rebuild(e);
      } catch (...) {
        if (!error) error = std::current_exception();
        broken_.store(true, std::memory_order_relaxed);
      }
    }
  }
  if (reducing && raise_phase(completed_.v, e)) signal(completed_);
  return error;
}

void Engine::rebuild(std::uint64_t e) {
  (void)e;
  // relaxed: only completion steps write shape_, and they are ordered by the phases.
  const Shape& cur = *shape_.load(std::memory_order_relaxed);
  std::vector<int> next;
  for (int r : cur.active) {
    if (!slots_[static_cast<std::size_t>(r)].dropped.load(std::memory_order_relaxed)) next.push_back(r);
  }
  std::unique_ptr<Shape> sh = make_shape(next);
  participants_.store(sh->n, std::memory_order_relaxed);
  const Shape* fresh = sh.get();
  shapes_.push_back(std::move(sh));
  // release: the next phase's arrivals read the new shape.
  shape_.store(fresh, std::memory_order_release);
  // Free the retired shapes no rank references any more (a rank clears its reference with a
  // release store after its last read). The current one is referenced by this thread.
  std::erase_if(shapes_, [&](const std::unique_ptr<Shape>& x) {
    if (x.get() == fresh || x.get() == &cur) return false;
    for (int r = 0; r < p_; ++r) {
      // acquire: pairs with end()'s release store.
      if (slots_[static_cast<std::size_t>(r)].shape.load(std::memory_order_acquire) == x.get()) return false;
    }
    return true;
  });
}

// ---------------------------------------------------------------------------------------------
// Waiting, signalling, abort

void Engine::signal(Word& w) noexcept {
  sync_point();
  // seq_cst: after the seq_cst change of v (Dekker with wait_counted()'s increment of sleepers,
  // then wait_until()'s load of seq, then its load of v): either the waiter sees v or this
  // thread sees the sleeper.
  if (w.sleepers.load(std::memory_order_seq_cst) == 0) return;
  postbox::wake(w.seq);
}

template <class Done>
void Engine::block(int rank, RankSlot& me, Word& w, Done&& done) {
  // acquire: pairs with the signaller's seq_cst change of v.
  auto ok = [&] { return done(w.v.load(std::memory_order_acquire)); };
  if (ok()) return;
  if (debug_timeout_.count() > 0) {
    // Debug mode polls so that it can notice the timeout.
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; !ok(); ++i) {
      if (aborted_.load(std::memory_order_relaxed)) leave_aborted(me);
      const auto waited = std::chrono::steady_clock::now() - start;
      if (!me.printed && waited > debug_timeout_) {
        me.printed = true;
        report_missing(rank, me.phase, std::chrono::duration_cast<std::chrono::nanoseconds>(waited));
      }
      if (postbox::internal::current_fiber_worker() != nullptr) {
        postbox::internal::fiber_yield();  // a sleep would stop the worker's other ranks
      } else if (i < 256) {
        cpu_relax();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    return;
  }
  block_policy(me, w, done);
  if (!ok()) leave_aborted(me);
}

template <class Done>
void Engine::block_policy(RankSlot& me, Word& w, Done done) const {
  // The predicate the worker polls when the rank is a fiber is one flat object (no chain of
  // references through this frame): the worker reads it for every waiting rank on every pass.
  const auto stop = [&w, done, this] {
    // acquire: pairs with the signaller's seq_cst change of v.
    return done(w.v.load(std::memory_order_acquire)) || aborted_.load(std::memory_order_relaxed);
  };
  // Co-location (docs/barrier.md, "Waiting"): with no more ranks than CPUs, a spin that timed
  // out while another rank last arrived on this thread's CPU means the two share it (fresh
  // threads start on their creator's CPU). Two threads that hand one CPU back and forth by
  // yielding never look idle to the scheduler, so it has no reason to move one of them, and
  // every barrier then costs two context switches; nor does it move one next to another
  // process when no CPU is idle. So such a wait moves this thread itself to an allowed CPU on
  // which no rank last arrived (move_apart()), busy or not: two ranks that run at once while a
  // third process shares one of their CPUs pass most barriers in a line transfer, where a
  // hand-off costs a context switch every time. Where its mask allows no such CPU, it blocks
  // in the futex at once: the CPU is left to the partner, and its wake-up places this thread
  // on an idle CPU if there is one. If it wakes next to its partner again, the move is not
  // tried for the next 16, 32, ..., 1024 waits, which yield as before.
  bool moving = false;
  const auto may_yield = [&] {
    if (me.no_move > 0) {
      --me.no_move;
      return true;
    }
    if (track_cpu_ && colocated(me)) {
      ++me.moves;
      me.wait.reset(policy_);
      if (move_apart()) {
        // relaxed: a hint, as at arrival.
        me.cpu.store(::sched_getcpu(), std::memory_order_relaxed);
        // The scheduler may put it back (its balancer sees one CPU with two tasks and one with
        // one): moves back off like the futex's, so a thread is moved at most once per 16, 32,
        // ..., 1024 waits, two system calls each.
        me.move_backoff = std::min<std::uint32_t>(1024, std::max<std::uint32_t>(16, me.move_backoff * 2));
        me.no_move = me.move_backoff;
        return true;
      }
      moving = true;
      return false;
    }
    return true;
  };
  // Counted in w.sleepers while it blocks, so that signal() (which reads sleepers right after
  // changing v) wakes it; on a fiber wait_until() switches to the worker's next ready rank.
  (void)wait_counted(policy_, w.seq, w.sleepers, stop, &me.wait, may_yield);
  if (moving) {
    if (colocated(me)) {
      me.move_backoff = std::min<std::uint32_t>(1024, std::max<std::uint32_t>(16, me.move_backoff * 2));
      me.no_move = me.move_backoff;
    } else {
      me.move_backoff = 0;
    }
  }
}

bool Engine::move_apart() const noexcept {
  cpu_set_t mask;
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return false;
  const int here = ::sched_getcpu();
  int target = -1;
  for (int c = 0; c < CPU_SETSIZE && target < 0; ++c) {
    if (c == here || !CPU_ISSET(c, &mask)) continue;
    bool taken = false;
    for (int r = 0; r < p_ && !taken; ++r) {
      // relaxed: a hint; a stale CPU costs one move at most.
      taken = slots_[static_cast<std::size_t>(r)].cpu.load(std::memory_order_relaxed) == c;
    }
    if (!taken) target = c;
  }
  if (target < 0) return false;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(target, &one);
  // Pinning to the target migrates the thread at once; restoring the caller's own mask right
  // after leaves it there, free to be moved again by the scheduler as before.
  if (::sched_setaffinity(0, sizeof one, &one) != 0) return false;
  PB_CHECK(::sched_setaffinity(0, sizeof mask, &mask) == 0, "barrier: could not restore the thread's CPU mask");
  return true;
}

bool Engine::colocated(const RankSlot& me) const noexcept {
  const int cpu = ::sched_getcpu();
  if (cpu < 0) return false;
  for (int r = 0; r < p_; ++r) {
    const RankSlot& other = slots_[static_cast<std::size_t>(r)];
    // relaxed: a hint; a stale CPU costs one futex sleep at most.
    if (&other != &me && other.cpu.load(std::memory_order_relaxed) == cpu) return true;
  }
  return false;
}

void Engine::leave_aborted(RankSlot& me) {
  const std::uint64_t e = me.phase;
  if (me.args != nullptr) {
    // This rank's reduction argument lives in its caller's frame. A completion step that
    // started before the abort may be folding it: wait until it is done (complete() raises
    // completed_ in every case). seq_cst loads: Dekker with complete()'s store of completing_
    // and load of aborted_.
    auto folding = [&] {
      return completing_.v.load(std::memory_order_seq_cst) == e &&
             !reached(completed_.v.load(std::memory_order_seq_cst), e);
    };
    (void)wait_counted(policy_, completed_.seq, completed_.sleepers, [&] { return !folding(); });
  }
  throw Aborted();
}

void Engine::abort() noexcept {
  // seq_cst: before every seq bump below (see block_policy()).
  aborted_.store(true, std::memory_order_seq_cst);
  auto kick = [](Word& w) { postbox::wake(w.seq); };
  const auto P = static_cast<std::size_t>(p_);
  kick(release_);
  kick(completed_);
  if (wake_) {
    for (std::size_t i = 0; i < P; ++i) kick(wake_[i]);
  }
  if (flags_) {
    for (std::size_t i = 0; i < P * static_cast<std::size_t>(m0_); ++i) kick(flags_[i]);
  }
}

void Engine::report_missing(int rank, std::uint64_t e, std::chrono::nanoseconds waited) const {
  std::string missing;
  for (int r = 0; r < p_; ++r) {
    const RankSlot& s = slots_[static_cast<std::size_t>(r)];
    // relaxed: a diagnostic snapshot; a racing arrival only makes the list one rank longer.
    const bool arrived = reached(s.arrived.load(std::memory_order_relaxed), e);
    if (arrived || s.dropped.load(std::memory_order_relaxed)) continue;
    missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  }
  if (missing.empty()) missing = "none (all arrived; the release is under way)";
  std::fprintf(stderr, "postbox: %s barrier: rank %d waited %lld ms in phase %llu; ranks not arrived: %s\n",
               algorithm_name(), rank, static_cast<long long>(waited.count() / 1'000'000),
               static_cast<unsigned long long>(e), missing.c_str());
  std::fflush(stderr);
}

std::uint64_t Engine::colocation_moves_for_testing() const {
  std::uint64_t n = 0;
  for (int r = 0; r < p_; ++r) n += slots_[static_cast<std::size_t>(r)].moves;
  return n;
}

int Engine::central_groups_for_testing() const {
  // acquire: the shape the last completion step published.
  return static_cast<int>(shape_.load(std::memory_order_acquire)->group_target.size());
}

void Engine::set_phase_for_testing(std::uint64_t phase) {
  for (int r = 0; r < p_; ++r) {
    RankSlot& s = slots_[static_cast<std::size_t>(r)];
    PB_CHECK(s.stage == RankSlot::Stage::idle, "set_phase_for_testing: only between phases");
    s.phase = phase;
    s.arrived.store(phase, std::memory_order_relaxed);
  }
  for (auto& d : drop_phase_) d.store(phase, std::memory_order_relaxed);
  for (auto& d : reduce_phase_) d.store(phase, std::memory_order_relaxed);
  // The release word of the rounds family is written only in phases with a completion step:
  // let its last write lie 2^40 phases back, which 32-bit phase words would have wrapped.
  release_.v.store(family_ == Family::rounds ? phase - (std::uint64_t{1} << 40) : phase, std::memory_order_relaxed);
  completing_.v.store(phase, std::memory_order_relaxed);
  completed_.v.store(phase, std::memory_order_relaxed);
  const auto P = static_cast<std::size_t>(p_);
  if (wake_) {
    for (std::size_t i = 0; i < P; ++i) wake_[i].v.store(wake_code(phase, true), std::memory_order_relaxed);
  }
  if (flags_) {
    for (std::size_t i = 0; i < P * static_cast<std::size_t>(m0_); ++i) flags_[i].v.store(phase, std::memory_order_relaxed);
  }
  if (absent_) {
    for (std::size_t i = 0; i < P; ++i) absent_[i].v.store(0, std::memory_order_relaxed);
  }
  // The caller starts the threads that use the barrier next: thread creation orders these stores.
}

}  // namespace postbox::internal
