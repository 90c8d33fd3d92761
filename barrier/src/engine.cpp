#include "engine.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "postbox/collectives/postal.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::internal {

namespace {

Algorithm checked(Algorithm a, int p) {
  if (p < 1) throw InputError("barrier: p must be at least 1, got " + std::to_string(p));
  return a;
}

// The futex on a flag word. Not std::atomic::wait: libstdc++'s (GCC 12) spins and calls
// sched_yield four times before the futex, and on a loaded machine every yield hands the core
// to another process for a whole time slice (measured: a barrier that yields costs
// milliseconds per phase at load 10, one that blocks at once tens of microseconds).
#if defined(__linux__)
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "the futex needs a plain 32-bit word");
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t seen) noexcept {
  // Returns at once when word != seen; spurious returns are handled by the caller's loop.
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}
#else
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t seen) noexcept {
  word.wait(seen, std::memory_order_relaxed);
}
void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept { word.notify_all(); }
#endif

WaitPolicy policy_for(int p, const BarrierOptions& o) {
  unsigned hw = o.hardware_threads;
  if (hw == 0) hw = std::max(1U, std::thread::hardware_concurrency());
  if (o.oversubscribed_wait && static_cast<unsigned>(p) > hw) return *o.oversubscribed_wait;
  return o.wait;
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
    // acquire/release: a rank may move between threads across phases (OpenMP teams); the next
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

Engine::Engine(Algorithm algorithm, int p, BarrierOptions options, std::string reason)
    : algorithm_(checked(algorithm, p)),
      family_(algorithm == Algorithm::central ? Family::central
              : (algorithm == Algorithm::dissemination || algorithm == Algorithm::combine) ? Family::rounds
                                                                                            : Family::tree),
      p_(p),
      policy_(policy_for(p, options)),
      completion_(std::move(options.completion)),
      send_recv_(options.send_recv.value_or(SendRecv{Rational(1), Rational(1)})),
      debug_timeout_(options.debug_timeout),
      topology_(options.topology),
      placement_(std::move(options.placement)),
      reason_(std::move(reason)),
      slots_(new RankSlot[static_cast<std::size_t>(p)]) {
  if (send_recv_.s <= Rational(0) || send_recv_.r < Rational(0)) {
    throw InputError("barrier: send latency s must be > 0 and receive latency r >= 0, got s = " +
                     send_recv_.s.str() + ", r = " + send_recv_.r.str());
  }
  active_.resize(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) active_[static_cast<std::size_t>(r)] = r;
  for (int r = 0; r < p; ++r) slots_[static_cast<std::size_t>(r)].spin_ns = std::min<std::int64_t>(policy_.spin_ns, 20'000);
  scratch_.resize(static_cast<std::size_t>(p));
  participants_.store(p, std::memory_order_relaxed);
  switch (family_) {
    case Family::central:
      n_active_ = p;
      break;
    case Family::tree: {
      wake_.reset(new Flag[static_cast<std::size_t>(p)]);
      if (algorithm_ == Algorithm::mcs) {
        mcs_lines_.reset(new FourFlags[static_cast<std::size_t>(p)]);
      } else {
        while ((1 << tournament_rounds_) < p) ++tournament_rounds_;
        const std::size_t per = algorithm_ == Algorithm::tournament ? static_cast<std::size_t>(std::max(1, tournament_rounds_)) : 1;
        arrive_flags_.reset(new Flag[static_cast<std::size_t>(p) * per]);
      }
      build_tree_shape(0);
      break;
    }
    case Family::rounds:
      build_rounds_shape(rounds_[0], 0);
      // The second shape's flags too, now: a drop never has more rounds, and abort() may read
      // both arrays from any thread.
      rounds_[1].stride = rounds_[0].stride;
      rounds_[1].flags.reset(new Flag[static_cast<std::size_t>(p) * static_cast<std::size_t>(rounds_[0].stride)]);
      break;
  }
}

Engine::~Engine() = default;

const char* Engine::algorithm_name() const noexcept {
  switch (algorithm_) {
    case Algorithm::central: return "central";
    case Algorithm::dissemination: return "dissemination";
    case Algorithm::combine: return "combine";
    case Algorithm::mcs: return "mcs";
    case Algorithm::tournament: return "tournament";
    case Algorithm::fibo: return "fibo";
    case Algorithm::hier: return "hier";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// Shapes

namespace {

// Binomial arrival over indices 0..n-1 rooted at 0: the children of i are i + 2^k for every k
// below the lowest set bit of i, smallest (earliest to finish) first.
std::vector<int> binomial_children(int i, int n) {
  std::vector<int> c;
  for (int bit = 1; i + bit < n && (i & bit) == 0; bit <<= 1) c.push_back(i + bit);
  return c;
}

int binomial_round(int parent, int child) {
  int k = 0;
  while ((1 << k) < child - parent) ++k;
  return k;
}

}  // namespace

void Engine::build_tree_shape(std::uint32_t e) {
  const auto P = static_cast<std::size_t>(p_);
  TreeShape t;
  t.parent.assign(P, -1);
  t.arrive_children.assign(P, {});
  t.arrive_at.assign(P, WaitWord{});
  t.wake_children.assign(P, {});
  const int n = static_cast<int>(active_.size());
  if (n == 0) {
    tree_ = std::move(t);
    return;
  }
  auto rank_of = [&](int idx) { return active_[static_cast<std::size_t>(idx)]; };
  t.root = rank_of(0);

  // Arrival and wake-up edges as (parent index, child index) lists per parent index.
  std::vector<std::vector<int>> up(static_cast<std::size_t>(n));    // arrival children, wait order
  std::vector<std::vector<int>> down(static_cast<std::size_t>(n));  // wake-up children, send order

  switch (algorithm_) {
    case Algorithm::tournament:
    case Algorithm::fibo:
      for (int i = 0; i < n; ++i) up[static_cast<std::size_t>(i)] = binomial_children(i, n);
      if (algorithm_ == Algorithm::tournament) {
        // The champion wakes the losers in the reverse order of the rounds.
        for (int i = 0; i < n; ++i) {
          down[static_cast<std::size_t>(i)] = up[static_cast<std::size_t>(i)];
          std::reverse(down[static_cast<std::size_t>(i)].begin(), down[static_cast<std::size_t>(i)].end());
        }
      } else {
        // Cordsen §4: the Fibo-tree for s and r; children in send order.
        const Tree fibo = build_tree(ShapeSpec::parse("fibo"), n, 0, send_recv_);
        for (int i = 0; i < n; ++i) down[static_cast<std::size_t>(i)] = fibo.children[static_cast<std::size_t>(i)];
      }
      break;
    case Algorithm::mcs:
      for (int i = 0; i < n; ++i) {
        for (int k = 1; k <= 4 && 4 * i + k < n; ++k) up[static_cast<std::size_t>(i)].push_back(4 * i + k);
        for (int k = 1; k <= 2 && 2 * i + k < n; ++k) down[static_cast<std::size_t>(i)].push_back(2 * i + k);
      }
      break;
    case Algorithm::hier: {
      // Groups of ranks sharing an L3 (else a package), by the PU each rank runs on.
      const std::shared_ptr<const Topology> topo =
          topology_ ? topology_ : std::make_shared<const Topology>(Topology::machine());
      std::vector<int> pu(P);
      if (placement_.empty()) {
        for (std::size_t r = 0; r < P; ++r) pu[r] = static_cast<int>(r % static_cast<std::size_t>(topo->pus()));
      } else {
        PB_CHECK(placement_.size() >= P, "hier barrier: placement lists fewer PUs than ranks");
        for (std::size_t r = 0; r < P; ++r) {
          pu[r] = placement_[r];
          if (pu[r] < 0 || pu[r] >= topo->pus()) {
            throw InputError("hier barrier: placement names PU " + std::to_string(pu[r]) + ", the topology has " +
                             std::to_string(topo->pus()));
          }
        }
      }
      std::map<int, std::vector<int>> by_group;  // group key → active indices, ascending
      std::vector<int> order_of_groups;
      for (int i = 0; i < n; ++i) {
        const PuInfo& info = topo->pu(pu[static_cast<std::size_t>(rank_of(i))]);
        const int key = info.l3 >= 0 ? info.l3 : (info.package >= 0 ? 1'000'000 + info.package : 0);
        auto [it, fresh] = by_group.try_emplace(key);
        if (fresh) order_of_groups.push_back(key);
        it->second.push_back(i);
      }
      std::vector<int> leaders;
      for (int key : order_of_groups) leaders.push_back(by_group[key].front());
      const int g = static_cast<int>(leaders.size());
      // Across leaders first (their arrival is the later one, their wake-up the more urgent).
      for (int li = 0; li < g; ++li) {
        for (int c : binomial_children(li, g)) {
          up[static_cast<std::size_t>(leaders[static_cast<std::size_t>(li)])].push_back(leaders[static_cast<std::size_t>(c)]);
        }
      }
      for (int key : order_of_groups) {
        const std::vector<int>& members = by_group[key];
        const int m = static_cast<int>(members.size());
        for (int j = 0; j < m; ++j) {
          for (int c : binomial_children(j, m)) {
            up[static_cast<std::size_t>(members[static_cast<std::size_t>(j)])].push_back(members[static_cast<std::size_t>(c)]);
          }
        }
      }
      for (int i = 0; i < n; ++i) {
        // Arrival: own group first (nearer, earlier), then the other leaders; wake-up reversed.
        auto& u = up[static_cast<std::size_t>(i)];
        std::stable_partition(u.begin(), u.end(), [&](int c) {
          const PuInfo& a = topo->pu(pu[static_cast<std::size_t>(rank_of(i))]);
          const PuInfo& b = topo->pu(pu[static_cast<std::size_t>(rank_of(c))]);
          return a.l3 == b.l3 && a.package == b.package;
        });
        down[static_cast<std::size_t>(i)] = u;
        std::reverse(down[static_cast<std::size_t>(i)].begin(), down[static_cast<std::size_t>(i)].end());
      }
      break;
    }
    case Algorithm::central:
    case Algorithm::dissemination:
    case Algorithm::combine:
      PB_CHECK(false, "not a tree barrier");
  }

  for (int i = 0; i < n; ++i) {
    const int ri = rank_of(i);
    for (int c : up[static_cast<std::size_t>(i)]) {
      const int rc = rank_of(c);
      t.parent[static_cast<std::size_t>(rc)] = ri;
      t.arrive_children[static_cast<std::size_t>(ri)].push_back(rc);
      WaitWord at;
      switch (algorithm_) {
        case Algorithm::mcs: {
          FourFlags& line = mcs_lines_[static_cast<std::size_t>(ri)];
          at = WaitWord{&line.v[(c - 1) % 4], &line.sleepers};
          break;
        }
        case Algorithm::tournament:
          at = word_of(arrive_flags_[static_cast<std::size_t>(ri) * static_cast<std::size_t>(std::max(1, tournament_rounds_)) +
                                     static_cast<std::size_t>(binomial_round(i, c))]);
          break;
        default:
          at = word_of(arrive_flags_[static_cast<std::size_t>(rc)]);
      }
      // No stale phase number from an earlier shape may satisfy a later wait.
      at.v->store(e, std::memory_order_relaxed);
      t.arrive_at[static_cast<std::size_t>(rc)] = at;
    }
    for (int c : down[static_cast<std::size_t>(i)]) t.wake_children[static_cast<std::size_t>(ri)].push_back(rank_of(c));
  }
  tree_ = std::move(t);
}

void Engine::build_rounds_shape(RoundsShape& s, std::uint32_t e) {
  const auto P = static_cast<std::size_t>(p_);
  s.n = static_cast<int>(active_.size());
  s.lambda = algorithm_ == Algorithm::dissemination ? 1 : combine_rounds_lambda(send_recv_);
  // t: the fewest rounds with N_λ(t) >= n (Bruck §3.1); m = t − λ + 1 send rounds.
  s.t = 0;
  while (N_lambda(Rational(s.lambda), Rational(s.t)) < s.n) ++s.t;
  s.m = std::max(0, s.t - s.lambda + 1);
  s.leader = s.n > 0 ? active_[0] : -1;
  s.pos.assign(P, -1);
  for (int i = 0; i < s.n; ++i) s.pos[static_cast<std::size_t>(active_[static_cast<std::size_t>(i)])] = i;
  s.send_to.assign(static_cast<std::size_t>(s.n) * static_cast<std::size_t>(s.m), -1);
  for (int i = 0; i < s.n; ++i) {
    for (int j = 1; j <= s.m; ++j) {
      // Round j: node i sends to i + N_λ(j + λ − 2) (mod n).
      const auto off = N_lambda(Rational(s.lambda), Rational(j + s.lambda - 2));
      const int to = static_cast<int>((i + off) % s.n);
      s.send_to[static_cast<std::size_t>(i) * static_cast<std::size_t>(s.m) + static_cast<std::size_t>(j - 1)] =
          active_[static_cast<std::size_t>(to)];
    }
  }
  if (!s.flags) {
    s.stride = std::max(1, s.m);
    s.flags.reset(new Flag[P * static_cast<std::size_t>(s.stride)]);
  }
  PB_CHECK(s.m <= s.stride, "rounds grew after a drop");
  // No stale phase number from an earlier use of this buffer may satisfy a later wait.
  for (std::size_t i = 0; i < P * static_cast<std::size_t>(s.stride); ++i) s.flags[i].v.store(e, std::memory_order_relaxed);
}

void Engine::rebuild(std::uint32_t e) {
  std::vector<int> next;
  for (int r : active_) {
    if (!slots_[static_cast<std::size_t>(r)].dropped.load(std::memory_order_relaxed)) next.push_back(r);
  }
  active_ = std::move(next);
  participants_.store(static_cast<int>(active_.size()), std::memory_order_relaxed);
  switch (family_) {
    case Family::central:
      n_active_ = static_cast<int>(active_.size());
      break;
    case Family::tree:
      // In place: every arrival of this phase is done and the wake-up reads the new shape.
      build_tree_shape(e);
      break;
    case Family::rounds: {
      // Ranks may still be in this phase's rounds on rounds_[cur_]. The other shape can only
      // still be read by a rank that dropped in an earlier phase and is finishing its rounds
      // (all its messages have arrived, so it finishes soon).
      std::atomic<std::uint32_t>& lingering = lingering_[1 - cur_];
      // acquire: pairs with the dropper's release decrement, after its last read of the shape.
      wait_until(policy_, lingering, [&] {
        return lingering.load(std::memory_order_acquire) == 0 || aborted_.load(std::memory_order_relaxed);
      });
      throw_if_aborted();
      build_rounds_shape(rounds_[1 - cur_], e);
      cur_ = 1 - cur_;
      break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Phase bookkeeping

std::exception_ptr Engine::complete_phase(std::uint32_t e) {
  std::exception_ptr error;
  const std::size_t parity = e & 1U;
  try {
    // relaxed: written before the writer's arrival, which this thread has acquired.
    if (reduce_phase_[parity].load(std::memory_order_relaxed) == e) {
      int n = 0;
      for (int r : active_) {
        ReduceArgs* a = slots_[static_cast<std::size_t>(r)].args;
        if (a == nullptr) continue;
        PB_CHECK(n == 0 || a->fold == scratch_[0]->fold,
                 "barrier: arrive_and_reduce called with different value or op types in one phase");
        scratch_[static_cast<std::size_t>(n++)] = a;
      }
      scratch_[0]->fold(scratch_.data(), n);
    }
    if (completion_) completion_();
  } catch (...) {
    error = std::current_exception();
    // relaxed: published by the release that follows.
    broken_.store(true, std::memory_order_relaxed);
  }
  if (drop_phase_[parity].load(std::memory_order_relaxed) == e) rebuild(e);
  return error;
}

void Engine::start_phase(RankSlot& me, ReduceArgs* args, bool drop) {
  const std::uint32_t e = ++me.phase;
  me.args = args;
  me.dropping = drop;
  me.step = family_ == Family::rounds ? 1 : 0;
  me.sent = false;
  me.printed = false;
  me.stage = RankSlot::Stage::arriving;
  if (family_ == Family::rounds) me.gen = cur_;
  // relaxed below: all are published by this rank's arrival signal (release).
  if (drop) {
    if (family_ == Family::rounds) lingering_[me.gen].fetch_add(1, std::memory_order_relaxed);
    me.dropped.store(true, std::memory_order_relaxed);
    drop_phase_[e & 1U].store(e, std::memory_order_relaxed);
  }
  if (args != nullptr) reduce_phase_[e & 1U].store(e, std::memory_order_relaxed);
  me.arrived.store(e, std::memory_order_relaxed);
}

void Engine::signal(WaitWord w, std::uint32_t e) noexcept {
  // seq_cst store: a release, and ordered before the load of the sleeper count below (with the
  // waiter's seq_cst increment then load, one of the two sees the other: no lost wake-up).
  w.v->store(e, std::memory_order_seq_cst);
  if (w.sleepers->load(std::memory_order_seq_cst) != 0) futex_wake_all(*w.v);
}

void Engine::block_until(const WaitWord& w, std::uint32_t e, RankSlot& me) const {
  auto done = [&] { return ready(w, e) || aborted_.load(std::memory_order_relaxed); };
  // Adaptive spin budget per rank, at most policy_.spin_ns: a wait that ends while spinning
  // grows it by half, a spin that times out halves it, and below 1 µs it is 0 (no spin)
  // except for a 2 µs probe every 64th wait. A partner that shares this core, or that another
  // process preempted, does not signal while this thread spins: there spinning only delays it,
  // and the budget falls to 0; a co-scheduled partner's waits raise it again (measured in
  // docs/barrier.md: not spinning wins at load 30, spinning when the ranks are co-scheduled).
  std::int64_t budget = me.spin_ns;
  if (budget == 0 && policy_.spin_ns > 0 && (++me.probe & 63U) == 0) budget = std::min<std::int64_t>(2'000, policy_.spin_ns);
  if (budget > 0) {
    using clock = std::chrono::steady_clock;
    // A running partner signals within a few cache-line transfers: no clock read before that.
    for (int i = 0; i < 32; ++i) {
      cpu_relax();
      if (done()) return;
    }
    const auto spin_end = clock::now() + std::chrono::nanoseconds(budget);
    while (clock::now() < spin_end) {
      for (int i = 0; i < 64; ++i) {
        cpu_relax();
        if (done()) {
          me.spin_ns = std::min(policy_.spin_ns, budget + budget / 2 + 1'000);
          return;
        }
      }
    }
    me.spin_ns = budget / 2 < 1'000 ? 0 : budget / 2;
  }
  if (policy_.yield_ns > 0) {
    // Yielding hands the core to a sibling rank that still has to arrive, which is cheaper than
    // a futex sleep and wake-up; but when another process is runnable here, one yield can cost
    // it a whole time slice (milliseconds). So each yield is timed: one that took longer than
    // 200 µs ends the yield phase and turns yielding off for the next 16, 32, ..., 1024 waits of
    // this rank; a wait that ends while yielding halves that back-off.
    if (me.no_yield > 0) {
      --me.no_yield;
    } else {
      using clock = std::chrono::steady_clock;
      auto prev = clock::now();
      const auto yield_end = prev + std::chrono::nanoseconds(policy_.yield_ns);
      for (;;) {
        std::this_thread::yield();
        if (done()) {
          me.yield_backoff /= 2;
          return;
        }
        const auto now = clock::now();
        if (now - prev > std::chrono::microseconds(200)) {
          me.yield_backoff = std::min<std::uint32_t>(1024, std::max<std::uint32_t>(16, me.yield_backoff * 2));
          me.no_yield = me.yield_backoff;
          break;
        }
        if (now >= yield_end) break;
        prev = now;
      }
    }
  }
  for (;;) {
    // seq_cst increment then seq_cst load: pairs with signal()'s store then load.
    w.sleepers->fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t seen = w.v->load(std::memory_order_seq_cst);
    if (!reached(seen, e) && !aborted_.load(std::memory_order_seq_cst)) futex_wait(*w.v, seen);
    // relaxed: a count; a late decrement costs a signaller one needless futex call at most.
    w.sleepers->fetch_sub(1, std::memory_order_relaxed);
    if (done()) return;
  }
}

void Engine::await(int rank, RankSlot& me, const WaitWord& w, std::uint32_t e) {
  if (ready(w, e)) return;
  if (debug_timeout_.count() <= 0) {
    block_until(w, e, me);
    throw_if_aborted();
    return;
  }
  // Debug mode polls so that it can notice the timeout.
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; !ready(w, e); ++i) {
    throw_if_aborted();
    const auto waited = std::chrono::steady_clock::now() - start;
    if (!me.printed && waited > debug_timeout_) {
      me.printed = true;
      report_missing(rank, e, std::chrono::duration_cast<std::chrono::nanoseconds>(waited));
    }
    if (i < 256) {
      cpu_relax();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void Engine::abort() noexcept {
  // seq_cst: ordered before the flag bumps below, which the blocked waiters' futex observes.
  aborted_.store(true, std::memory_order_seq_cst);
  // Move every flag 2^30 phases ahead: every waiter's "reached" test passes (a waiter's phase is
  // at most a few behind its flag) and every futex sleeping on an old value wakes. The barrier is
  // unusable afterwards; every call throws Aborted.
  auto bump = [](std::atomic<std::uint32_t>& v) {
    // seq_cst: after aborted_, so a waiter that sees the new value also sees the abort.
    v.fetch_add(1U << 30, std::memory_order_seq_cst);
    futex_wake_all(v);
  };
  const auto P = static_cast<std::size_t>(p_);
  bump(release_.v);
  if (wake_) {
    for (std::size_t i = 0; i < P; ++i) bump(wake_[i].v);
  }
  if (arrive_flags_) {
    const std::size_t per = algorithm_ == Algorithm::tournament ? static_cast<std::size_t>(std::max(1, tournament_rounds_)) : 1;
    for (std::size_t i = 0; i < P * per; ++i) bump(arrive_flags_[i].v);
  }
  if (mcs_lines_) {
    for (std::size_t i = 0; i < P; ++i) {
      for (auto& v : mcs_lines_[i].v) bump(v);
    }
  }
  for (RoundsShape& shape : rounds_) {
    if (!shape.flags) continue;
    for (std::size_t i = 0; i < P * static_cast<std::size_t>(shape.stride); ++i) bump(shape.flags[i].v);
  }
  for (auto& l : lingering_) futex_wake_all(l);
  // The rebuild's wait on lingering_ goes through wait_until (std::atomic::wait).
  for (auto& l : lingering_) l.notify_all();
}

void Engine::report_missing(int rank, std::uint32_t e, std::chrono::nanoseconds waited) const {
  std::string missing;
  for (int r = 0; r < p_; ++r) {
    const RankSlot& s = slots_[static_cast<std::size_t>(r)];
    // relaxed: a diagnostic snapshot; a racing arrival only makes the list one rank longer.
    if (s.dropped.load(std::memory_order_relaxed) && !reached(s.arrived.load(std::memory_order_relaxed), e)) continue;
    if (!reached(s.arrived.load(std::memory_order_relaxed), e)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  }
  if (missing.empty()) missing = "none (all arrived; the release is under way)";
  std::fprintf(stderr, "postbox: %s barrier: rank %d waited %lld ms in phase %u; ranks not arrived: %s\n",
               algorithm_name(), rank, static_cast<long long>(waited.count() / 1'000'000), e, missing.c_str());
  std::fflush(stderr);
}

// ---------------------------------------------------------------------------------------------
// Protocols

void Engine::progress_or_reset(int rank, RankSlot& me, bool block) {
  try {
    progress(rank, me, block);
  } catch (...) {
    // A broken or aborted barrier: the slot is usable for the next call, which throws too.
    me.stage = RankSlot::Stage::idle;
    throw;
  }
}

bool Engine::progress(int rank, RankSlot& me, bool block) {
  switch (family_) {
    case Family::central: return central_progress(rank, me, block);
    case Family::tree: return tree_progress(rank, me, block);
    case Family::rounds: return rounds_progress(rank, me, block);
  }
  return true;
}

bool Engine::complete_and_release(RankSlot& me, std::uint32_t e) {
  std::exception_ptr error = complete_phase(e);
  signal(word_of(release_), e);
  me.stage = RankSlot::Stage::done;
  if (error) std::rethrow_exception(error);
  return true;
}

bool Engine::await_release(int rank, RankSlot& me, std::uint32_t e, bool block) {
  if (me.stage == RankSlot::Stage::waiting) {
    if (!block && !ready(word_of(release_), e)) return false;
    await(rank, me, word_of(release_), e);
    me.stage = RankSlot::Stage::done;
  }
  return true;
}

bool Engine::central_progress(int rank, RankSlot& me, bool block) {
  const std::uint32_t e = me.phase;
  if (me.stage == RankSlot::Stage::arriving) {
    // Read before arriving: the last arriver may change it in its completion step.
    const int n = n_active_;
    // acq_rel: release publishes this rank's writes to the last arriver; acquire (for the last
    // arriver) makes every earlier arriver's writes visible through the release sequence.
    if (count_.v.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<std::uint32_t>(n)) {
      // relaxed: the next phase's arrivals acquire release_ first.
      count_.v.store(0, std::memory_order_relaxed);
      return complete_and_release(me, e);
    }
    me.stage = me.dropping ? RankSlot::Stage::done : RankSlot::Stage::waiting;
  }
  return await_release(rank, me, e, block);
}

bool Engine::tree_progress(int rank, RankSlot& me, bool block) {
  const std::uint32_t e = me.phase;
  const auto R = static_cast<std::size_t>(rank);
  if (me.stage == RankSlot::Stage::arriving) {
    const std::vector<int>& kids = tree_.arrive_children[R];
    for (; me.step < static_cast<int>(kids.size()); ++me.step) {
      const WaitWord at = tree_.arrive_at[static_cast<std::size_t>(kids[static_cast<std::size_t>(me.step)])];
      if (!block && !ready(at, e)) return false;
      await(rank, me, at, e);
    }
    if (tree_.parent[R] < 0) {
      // Root: the reduction phase is over (Cordsen §2); the distribution phase starts.
      std::exception_ptr error = complete_phase(e);
      if (tree_.root == rank) {
        for (int c : tree_.wake_children[R]) signal(word_of(wake_[static_cast<std::size_t>(c)]), e);
      } else if (tree_.root >= 0) {
        // This root dropped; the rebuilt tree has another root, which spreads the wake-up.
        signal(word_of(wake_[static_cast<std::size_t>(tree_.root)]), e);
      }
      me.stage = RankSlot::Stage::done;
      if (error) std::rethrow_exception(error);
      return true;
    }
    signal(tree_.arrive_at[R], e);
    me.stage = me.dropping ? RankSlot::Stage::done : RankSlot::Stage::waiting;
  }
  if (me.stage == RankSlot::Stage::waiting) {
    if (!block && !ready(word_of(wake_[R]), e)) return false;
    await(rank, me, word_of(wake_[R]), e);
    // The wake-up acquired the root's completion step, so this is the rebuilt shape if any.
    for (int c : tree_.wake_children[R]) signal(word_of(wake_[static_cast<std::size_t>(c)]), e);
    me.stage = RankSlot::Stage::done;
  }
  return true;
}

bool Engine::rounds_progress(int rank, RankSlot& me, bool block) {
  const std::uint32_t e = me.phase;
  const RoundsShape& s = rounds_[me.gen];
  const auto R = static_cast<std::size_t>(rank);
  if (me.stage == RankSlot::Stage::arriving) {
    const auto pos = static_cast<std::size_t>(s.pos[R]);
    const auto stride = static_cast<std::size_t>(s.stride);
    for (; me.step <= s.t; ++me.step, me.sent = false) {
      const int r = me.step;
      // Rounds m + 1 .. λ − 1 neither send nor receive (a large λ makes them many).
      if (r > s.m && r < s.lambda) {
        me.step = s.lambda - 1;
        continue;
      }
      if (r <= s.m && !me.sent) {
        const auto j = static_cast<std::size_t>(r - 1);
        const auto to = static_cast<std::size_t>(s.send_to[pos * static_cast<std::size_t>(s.m) + j]);
        signal(word_of(s.flags[to * stride + j]), e);
        me.sent = true;
      }
      if (r >= s.lambda) {
        // Received in round r: what i − N_λ(r − 1) sent in round r − λ + 1.
        const WaitWord in = word_of(s.flags[R * stride + static_cast<std::size_t>(r - s.lambda)]);
        if (!block && !ready(in, e)) return false;
        await(rank, me, in, e);
      }
    }
    // Every rank's arrival has reached this one. A completion step is needed when there is a
    // completion function, or someone reduces or drops (relaxed: written before their
    // arrival, which has reached this thread through acquire/release chains).
    const std::size_t parity = e & 1U;
    const bool step = completion_ || reduce_phase_[parity].load(std::memory_order_relaxed) == e ||
                      drop_phase_[parity].load(std::memory_order_relaxed) == e;
    if (!step) {
      me.stage = RankSlot::Stage::done;
      return true;
    }
    if (rank == s.leader) {
      return complete_and_release(me, e);
    }
    me.stage = me.dropping ? RankSlot::Stage::done : RankSlot::Stage::waiting;
  }
  return await_release(rank, me, e, block);
}

// ---------------------------------------------------------------------------------------------
// Entry points

namespace {
void throw_if_broken(const std::atomic<bool>& broken, const std::atomic<bool>& aborted) {
  // relaxed: abort() publishes nothing but the flag itself.
  if (aborted.load(std::memory_order_relaxed)) throw Aborted();
  // relaxed: set before the release this thread acquired when it left the phase.
  if (broken.load(std::memory_order_relaxed)) throw BarrierBroken();
}
}  // namespace

void Engine::arrive_and_wait(int rank, ReduceArgs* args) {
  Entry entry(*this, rank);
  RankSlot& me = entry.slot();
  PB_CHECK(me.stage == RankSlot::Stage::idle,
           "barrier: rank " + std::to_string(rank) + " arrives twice in one phase (arrive() without wait())");
  throw_if_broken(broken_, aborted_);
  start_phase(me, args, false);
  progress_or_reset(rank, me, true);
  me.stage = RankSlot::Stage::idle;
  throw_if_broken(broken_, aborted_);
}

BarrierToken Engine::arrive(int rank) {
  Entry entry(*this, rank);
  RankSlot& me = entry.slot();
  PB_CHECK(me.stage == RankSlot::Stage::idle,
           "barrier: rank " + std::to_string(rank) + " arrives twice in one phase (arrive() without wait())");
  throw_if_broken(broken_, aborted_);
  start_phase(me, nullptr, false);
  progress_or_reset(rank, me, false);
  return BarrierToken{me.phase};
}

void Engine::wait(int rank, BarrierToken token) {
  Entry entry(*this, rank);
  RankSlot& me = entry.slot();
  PB_CHECK(me.stage != RankSlot::Stage::idle && token.phase == me.phase,
           "barrier: rank " + std::to_string(rank) + " waits without a matching arrive()");
  progress_or_reset(rank, me, true);
  me.stage = RankSlot::Stage::idle;
  throw_if_broken(broken_, aborted_);
}

void Engine::arrive_and_drop(int rank) {
  Entry entry(*this, rank);
  RankSlot& me = entry.slot();
  PB_CHECK(me.stage == RankSlot::Stage::idle,
           "barrier: rank " + std::to_string(rank) + " arrives twice in one phase (arrive() without wait())");
  throw_if_broken(broken_, aborted_);
  start_phase(me, nullptr, true);
  auto done_with_shape = [&] {
    if (family_ != Family::rounds) return;
    // release: this rank's reads of the shape happen before a later rebuild overwrites it.
    lingering_[me.gen].fetch_sub(1, std::memory_order_release);
    lingering_[me.gen].notify_all();
  };
  try {
    progress(rank, me, true);
  } catch (...) {
    me.stage = RankSlot::Stage::idle;
    done_with_shape();
    throw;
  }
  me.stage = RankSlot::Stage::idle;
  done_with_shape();
}

}  // namespace postbox::internal
