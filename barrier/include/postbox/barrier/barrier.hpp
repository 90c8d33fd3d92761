// Barriers for parallel loops: the default `Barrier`, Cordsen's `FiboBarrier`, Bruck's
// `CombineBarrier`, and references with the same API (central sense-reversing, dissemination,
// MCS tree, tournament, hierarchical). docs/barrier.md describes each algorithm.
//
// Every barrier works with threads it did not create: any p threads that call it with distinct
// ranks 0..p-1 (OpenMP threads, std::thread, a oneTBB arena). The API follows std::barrier with
// an explicit rank:
//   arrive_and_wait(rank)          arrive and wait until every participant has arrived;
//   arrive(rank) / wait(rank, t)   split phase: work may happen between the two calls;
//   arrive_and_drop(rank)          arrive for this phase and leave the barrier for good;
//   arrive_and_reduce(rank, v, op) arrive_and_wait that returns op-folded values to every rank.
//
// Requirements: 1 <= p. Each rank is used by at most one thread at a time and arrives once per
// phase; a dropped rank is never used again. Violations fail fast (PB_CHECK, file:line): a rank
// outside 0..p-1, two threads in one rank at once, a second arrive() before wait(), a wait()
// without its arrive(), using a dropped rank, arrive_and_reduce with different T/Op in one phase.
//
// Guarantees: a phase completes once every participant has arrived. The completion function
// (BarrierOptions::completion) runs exactly once per phase, on one of the participating
// threads, after every participant has arrived and before any of them leaves.
//
// Memory ordering: everything a thread did before it arrives (arrive_and_wait, arrive,
// arrive_and_drop, arrive_and_reduce) is visible to the completion function and to every
// thread after it leaves that phase (returns from arrive_and_wait, wait or arrive_and_reduce).
// What the completion function did is visible to every thread after it leaves.
//
// Exceptions: if the completion function (or a reduction op) throws, the exception propagates
// to the thread that ran it; the barrier is then broken: every other participant of that phase
// leaves it by throwing postbox::BarrierBroken, and every later call throws BarrierBroken.
// Nobody hangs.
//
// arrive_and_drop: the rank arrives for the current phase (its arrival counts) and is removed
// from later phases; the structure over the remaining ranks is rebuilt by the phase's
// completion step while every other participant is still inside the barrier (that phase
// allocates). It does not wait for the phase to complete, but it may wait for the ranks whose
// arrival it forwards (its subtree in a tree barrier, its rounds in a dissemination barrier).
//
// Waiting follows BarrierOptions::wait (spin for a time budget, yield for a time budget, then
// block in a futex on the flag), so any number of threads on any number of cores makes
// progress. Oversubscribed, the default yields briefly, then blocks (oversubscribed_wait).
//
// Abort: abort() (from any thread, e.g. a Team abort listener) breaks the barrier for good:
// every thread waiting in it and every later call throws postbox::Aborted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "postbox/collectives/tree.hpp"
#include "postbox/runtime/mailbox.hpp"  // postbox::Aborted
#include "postbox/runtime/wait.hpp"

namespace postbox {

class Topology;

// Thrown from a barrier call once another participant's completion function (or reduction op)
// threw: the barrier is broken for good.
class BarrierBroken : public std::runtime_error {
 public:
  BarrierBroken() : std::runtime_error("postbox: barrier broken: a completion function threw") {}
};

// The barriers' default wait policy while p <= hardware threads: spin up to 200 µs, yield up to
// 50 µs, then block; both phases adapt per rank (docs/barrier.md: a spin that times out halves
// the spin budget, a yield that took over 20 µs turns yielding off for a while).
// POSTBOX_SPIN_NS and POSTBOX_YIELD_NS override it (WaitPolicy::from_env; malformed → InputError).
const WaitPolicy& barrier_wait_policy();

struct BarrierOptions {
  // How waiters wait (spin, yield, block) while p is at most the hardware threads.
  WaitPolicy wait = barrier_wait_policy();
  // Used instead of `wait` when p exceeds the hardware threads (see hardware_threads): no spin
  // (it keeps the threads still to arrive off the cores), yield for at most 3 µs (a few yields
  // hand the core to a sibling rank; longer yield phases starve the rank still to arrive),
  // then block. nullopt: always `wait`.
  std::optional<WaitPolicy> oversubscribed_wait = WaitPolicy{0, 3'000};
  // Run once per phase after every participant has arrived, before anyone leaves. Empty: none.
  std::function<void()> completion{};
  // Send latency s and receive latency r of this machine (Cordsen §5). FiboBarrier builds its
  // wake-up tree from them, CombineBarrier its rounds from λ = 1 + r/s, Barrier its choice.
  // nullopt: those three take postbox::calibrated_latency() (POSTBOX_S_NS / POSTBOX_R_NS, the
  // file `postbox calibrate --save` wrote, else a quick measurement, once per process) at
  // construction, in whole nanoseconds; reason() says where the figures came from. The other
  // barriers do not use s and r.
  std::optional<SendRecv> send_recv{};
  // Debug mode when > 0: a waiter that has waited longer prints once, on stderr, the ranks that
  // have not arrived yet. Waiting then polls (yield and short sleeps) instead of blocking.
  std::chrono::nanoseconds debug_timeout{0};
  // HierBarrier and Barrier: the machine (null: Topology::machine()), and the PU each rank
  // runs on (empty: rank r on PU r mod pus(), the compact placement).
  std::shared_ptr<const Topology> topology{};
  std::vector<int> placement{};
  // Hardware threads available, for Barrier's choice and oversubscribed_wait
  // (0: std::thread::hardware_concurrency()).
  unsigned hardware_threads = 0;
};

// Returned by arrive(); pass it to wait() of the same rank.
struct [[nodiscard]] BarrierToken {
  std::uint32_t phase = 0;
};

namespace internal {

// One rank's contribution to arrive_and_reduce. Lives on the caller's stack while it is inside
// the barrier; the completion step reads value/op and writes out.
struct ReduceArgs {
  const void* value = nullptr;
  void* out = nullptr;  // std::optional<T>*
  const void* op = nullptr;
  void (*fold)(ReduceArgs* const* args, int n) = nullptr;
};

// Folds the contributions in rank order: ((v0 op v1) op v2) ... so op must be associative,
// need not be commutative; every contributor's out receives a copy of the result.
template <class T, class Op>
void fold_in_rank_order(ReduceArgs* const* args, int n) {
  const Op& op = *static_cast<const Op*>(args[0]->op);
  T acc = *static_cast<const T*>(args[0]->value);
  for (int i = 1; i < n; ++i) acc = op(std::move(acc), *static_cast<const T*>(args[i]->value));
  for (int i = 0; i < n; ++i) *static_cast<std::optional<T>*>(args[i]->out) = acc;
}

class Engine;

enum class Algorithm { central, dissemination, combine, mcs, tournament, fibo, hier };

// s and r as a barrier uses them, and where they came from (for reason()).
struct ResolvedSr {
  SendRecv sr;
  std::string from;
};

// Barrier's pick: the algorithm, the one-line reason, and s and r when the pick used them.
struct Choice {
  Algorithm algorithm;
  std::string reason;
  std::optional<SendRecv> send_recv;
};

// The API shared by every barrier. Not virtual: each concrete class fixes the algorithm of its
// engine at construction, and the engine dispatches with a switch on it.
class BarrierBase {
 public:
  BarrierBase(const BarrierBase&) = delete;
  BarrierBase& operator=(const BarrierBase&) = delete;
  BarrierBase(BarrierBase&&) noexcept;
  BarrierBase& operator=(BarrierBase&&) noexcept;
  ~BarrierBase();

  void arrive_and_wait(int rank);
  BarrierToken arrive(int rank);
  void wait(int rank, BarrierToken token);
  void arrive_and_drop(int rank);
  // Breaks the barrier for good: every thread waiting in it and every later call throws
  // postbox::Aborted. Safe from any thread, idempotent, does not block (a Team abort listener).
  void abort() noexcept;

  // Returns value_0 op value_1 op ... op value_{q-1} over the ranks q that call
  // arrive_and_reduce in this phase, folded left in rank order by one thread and copied to
  // every caller. op must be associative; it need not be commutative. T must be copyable.
  // Every caller in one phase must use the same T and Op (PB_CHECK).
  template <class T, class Op>
  T arrive_and_reduce(int rank, T value, Op op) {
    std::optional<T> out;
    ReduceArgs args{&value, &out, &op, &fold_in_rank_order<T, Op>};
    reduce_impl(rank, &args);
    return std::move(*out);
  }

  // Participants at construction.
  [[nodiscard]] int size() const noexcept;
  // Participants still in the barrier (size() minus dropped ranks), as of the last completed phase.
  [[nodiscard]] int participants() const noexcept;
  // "central", "dissemination", "combine", "mcs", "tournament", "fibo" or "hier".
  [[nodiscard]] const char* algorithm() const noexcept;
  // One line: which algorithm and why (Barrier), or its parameters (the others).
  [[nodiscard]] const std::string& reason() const noexcept;

 protected:
  BarrierBase(Algorithm algorithm, int p, BarrierOptions options, std::string reason);

 private:
  void reduce_impl(int rank, ReduceArgs* args);
  std::unique_ptr<Engine> engine_;
};

}  // namespace internal

// Sense-reversing central barrier: one shared counter, one release word. The last arriver
// runs the completion step and flips the release word; waiters block on that one word, so it
// is the right choice when threads outnumber cores.
class CentralBarrier : public internal::BarrierBase {
 public:
  explicit CentralBarrier(int p, BarrierOptions options = {});
};

// Dissemination barrier (Hensgen, Finkel, Manber): ceil(log2 p) rounds; in round k rank i
// signals rank i + 2^k (mod p). Every rank learns completion itself.
class DisseminationBarrier : public internal::BarrierBase {
 public:
  explicit DisseminationBarrier(int p, BarrierOptions options = {});
};

// Bruck §3's postal-model global combine used as a generalised dissemination barrier: in round
// r rank i signals rank i + N_λ(r + λ − 2) (mod p) and receives what was sent λ − 1 rounds
// earlier. λ = 1 is the dissemination barrier. A non-integer λ is replaced by ⌈λ⌉ (delay-receive)
// or ⌊λ⌋ (delay-send), whichever Bruck's break-even point favours (docs/barrier.md).
class CombineBarrier : public internal::BarrierBase {
 public:
  explicit CombineBarrier(int p, BarrierOptions options = {});

 private:
  CombineBarrier(int p, BarrierOptions options, const internal::ResolvedSr& resolved);
};

// The integer λ CombineBarrier builds its rounds with for this λ = 1 + r/s: λ itself when it is
// an integer, else ⌊λ⌋ (delay-send) below Bruck's break-even point
// λ/⌊λ⌋ = log γ(⌊λ⌋) / log γ(⌈λ⌉) (§3.3, Table 2; postbox::break_even_lambda) and ⌈λ⌉
// (delay-receive) from it on.
int combine_rounds_lambda(const SendRecv& send_recv);

// MCS tree barrier (Mellor-Crummey, Scott): arrival along a 4-ary tree whose children signal
// into one cache line of their parent, wake-up along a binary tree.
class McsBarrier : public internal::BarrierBase {
 public:
  explicit McsBarrier(int p, BarrierOptions options = {});
};

// Tournament barrier: in round k the loser i + 2^k signals the statically chosen winner i
// (a binomial arrival tree); the champion, rank 0, wakes the losers in the reverse order.
class TournamentBarrier : public internal::BarrierBase {
 public:
  explicit TournamentBarrier(int p, BarrierOptions options = {});
};

// Cordsen et al.: barrier = reduction phase + distribution phase. Arrival along a binomial
// tree (optimal for many-to-one when leaves start together, Cordsen §3.2), wake-up along the
// Fibo-tree built from the send latency s and receive latency r (BarrierOptions::send_recv).
class FiboBarrier : public internal::BarrierBase {
 public:
  explicit FiboBarrier(int p, BarrierOptions options = {});

 private:
  FiboBarrier(int p, BarrierOptions options, const internal::ResolvedSr& resolved);
};

// Hierarchical: an inner binomial tree per L3 group (or package where the topology has no L3)
// among the ranks placed there, and one binomial tree across the groups' leaders; wake-up
// along the same trees, leaders first.
class HierBarrier : public internal::BarrierBase {
 public:
  explicit HierBarrier(int p, BarrierOptions options = {});
};

// The default: picks one of the algorithms above from p, the topology, the calibration
// (send_recv) and whether threads outnumber the hardware threads. algorithm() names it,
// reason() says why in one line.
class Barrier : public internal::BarrierBase {
 public:
  explicit Barrier(int p, BarrierOptions options = {});

 private:
  Barrier(int p, BarrierOptions options, internal::Choice&& choice);
};

// Type-erased barrier for tools that iterate over algorithms by name.
class AnyBarrier : public internal::BarrierBase {
 public:
  AnyBarrier(internal::BarrierBase&& inner, std::string name) : internal::BarrierBase(std::move(inner)), name_(std::move(name)) {}
  // The name make_barrier() was given ("default" for Barrier).
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
};

// Names: default, fibo, combine, central, dissemination, mcs, tournament, hier.
// Unknown name or p < 1 → InputError.
std::unique_ptr<AnyBarrier> make_barrier(std::string_view name, int p, BarrierOptions options = {});
// The names make_barrier() accepts, in that order.
const std::vector<std::string>& barrier_names();

}  // namespace postbox
