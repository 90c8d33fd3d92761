// Barriers for parallel loops: the default `Barrier`, Cordsen's `FiboBarrier`, Bruck's
// `CombineBarrier`, and references with the same API (central sense-reversing, dissemination,
// MCS tree, tournament, hierarchical). docs/barrier.md describes each algorithm, the protocol
// they share, and which test proves each guarantee below.
//
// Every barrier works with threads it did not create: any p threads that call it with distinct
// ranks 0..p-1 (OpenMP threads, std::thread, a oneTBB arena). The API is std::barrier's with an
// explicit rank:
//   arrive_and_wait(rank)          arrive, then wait until the phase is complete;
//   arrive(rank) / wait(rank, t)   split phase: work may happen between the two calls;
//   arrive_and_drop(rank)          arrive for this phase and leave the barrier for good;
//   arrive_and_reduce(rank, v, op) arrive_and_wait that returns op-folded values to every rank.
//
// Requirements: 1 <= p. Each rank is used by at most one thread at a time and arrives once per
// phase; a dropped rank is never used again. Violations fail fast (PB_CHECK, file:line): a rank
// outside 0..p-1, two threads in one rank at once, a second arrive() before wait(), a wait()
// without its arrive(), using a dropped rank, arrive_and_reduce with different T/Op in one phase.
//
// Guarantees (for every algorithm):
//  G1 A phase completes once every participant has arrived; no rank leaves a phase (returns
//     from arrive_and_wait, wait or arrive_and_reduce) before every participant has arrived.
//  G2 arrive() and arrive_and_drop() return without waiting for any other rank.
//  G3 A rank in wait() or arrive_and_wait() leaves once its phase is complete, whatever the
//     other ranks are doing: in particular while a rank that arrived with arrive() has not
//     called wait() yet.
//  G4 The completion function (BarrierOptions::completion) and the reduction run exactly once
//     per completed phase, on one of the participating threads, after every participant has
//     arrived and before any of them leaves; never for a phase that not every participant
//     reached.
//  G5 Any number of phases: phase numbers are 64-bit and compared wrap-safe.
//
// Memory ordering: everything a thread did before it arrives (arrive_and_wait, arrive,
// arrive_and_drop, arrive_and_reduce) is visible to the completion function and to every
// thread after it leaves that phase. What the completion function did is visible to every
// thread after it leaves.
//
// Exceptions: if the completion function (or a reduction op) throws, the exception propagates
// to the thread that ran it when its call ends (that thread still finishes its part of the
// phase first); the barrier is then broken: every other participant of that phase leaves it by
// throwing postbox::BarrierBroken, and every later call throws BarrierBroken. Nobody hangs.
//
// arrive_and_drop: the rank arrives for the current phase (its arrival counts) and is removed
// from later phases; participants() drops by one once that phase completes. The structure over
// the remaining ranks is rebuilt by the phase's completion step (that phase allocates).
//
// Abort: abort() (from any thread, never blocking; e.g. a Team abort listener) breaks the
// barrier for good: every thread waiting in it and every later call throws postbox::Aborted.
// No completion function or reduction starts after abort() (one already running finishes, and
// a rank whose reduction argument it reads leaves only after it). The barrier stays usable only
// for destruction.
//
// Waiting follows BarrierOptions::wait (spin for a time budget, yield for a time budget, then
// block in a futex), or oversubscribed_wait when p exceeds the CPUs this process may run on,
// so any number of threads on any number of cores makes progress. reason() states the policy
// in use. With p at most the CPUs, a waiting kernel thread that finds another rank last
// arrived on its own CPU may migrate itself to another CPU of its affinity mask on which no
// rank last arrived; its mask is left as it was (a thread pinned to one CPU stays there).
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

#include "postbox/collectives/barrier_shape.hpp"
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

// The barriers' default wait policy while p <= the CPUs this process may run on: spin up to
// 200 µs, yield up to 50 µs, then block; both phases adapt per rank (docs/barrier.md: a spin
// that times out halves the spin budget, a yield that took over 200 µs turns yielding off for a
// while). POSTBOX_SPIN_NS and POSTBOX_YIELD_NS override it (WaitPolicy::from_env; malformed →
// InputError).
const WaitPolicy& barrier_wait_policy();

struct BarrierOptions {
  // How waiters wait (spin, yield, block) while p is at most the CPUs (see cpus).
  WaitPolicy wait = barrier_wait_policy();
  // Used instead of `wait` when p exceeds the CPUs: no spin (it keeps the threads still to
  // arrive off the cores), yield for at most 100 µs (each yield hands the core to a sibling rank
  // still to arrive, and a waiter sees the release the next time it runs; a futex sleep and
  // wake-up costs several times a yield, 20 µs and more on a virtual machine), then block.
  // nullopt: always `wait`.
  std::optional<WaitPolicy> oversubscribed_wait = WaitPolicy{0, 100'000};
  // Run once per phase after every participant has arrived, before anyone leaves. Empty: none.
  std::function<void()> completion{};
  // Send latency s and receive latency r of this machine (Cordsen §5). FiboBarrier builds its
  // wake-up tree from them, CombineBarrier its rounds from λ = 1 + r/s, Barrier its choice.
  // nullopt: FiboBarrier and CombineBarrier take postbox::calibrated_latency() (POSTBOX_S_NS /
  // POSTBOX_R_NS, the file `postbox calibrate --save` wrote, else a quick measurement, once per
  // process) at construction, in whole nanoseconds; Barrier takes postbox::saved_latency() (the
  // variables or the file, never a measurement), else s = r. reason() says where the figures
  // came from. The other barriers do not use s and r.
  std::optional<SendRecv> send_recv{};
  // Debug mode when > 0: a waiter that has waited longer prints once, on stderr, the ranks that
  // have not arrived yet. Waiting then polls (pause, then 50 µs sleeps; on a fiber, switching to
  // the worker's other ranks between polls) instead of blocking.
  std::chrono::nanoseconds debug_timeout{0};
  // HierBarrier and Barrier: the machine (null: Topology::machine()), and the PU each rank
  // runs on (empty: rank r on PU r mod pus(), the compact placement).
  std::shared_ptr<const Topology> topology{};
  std::vector<int> placement{};
  // CPUs available, for Barrier's choice and oversubscribed_wait (0: allowed_cpu_count(), the
  // CPUs this process may run on: its affinity mask, cgroups, taskset, Slurm — not the hardware).
  unsigned cpus = 0;
  // The ranks are fibers of a Team (RanksMode::fibers) rather than kernel threads: Barrier's
  // choice then takes central (see barrier.cpp) and reason() says so. Every barrier works on
  // fibers either way: its waits switch to the worker's next ready rank (wait.hpp).
  bool fibers = false;
};

// Returned by arrive(); pass it to wait() of the same rank.
struct [[nodiscard]] BarrierToken {
  std::uint64_t phase = 0;
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
struct Prepared;
struct BarrierTesting;

}  // namespace internal

// The API shared by every barrier class below (not virtual: each class fixes its algorithm at
// construction and the engine dispatches on it). Functions that take any barrier take this.
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
    internal::ReduceArgs args{&value, &out, &op, &internal::fold_in_rank_order<T, Op>};
    reduce_impl(rank, &args);
    return std::move(*out);
  }

  // Participants at construction.
  [[nodiscard]] int size() const noexcept;
  // Participants still in the barrier (size() minus dropped ranks), as of the last completed phase.
  [[nodiscard]] int participants() const noexcept;
  // "central", "dissemination", "combine", "mcs", "tournament", "fibo" or "hier".
  [[nodiscard]] const char* algorithm() const noexcept;
  // One line: which algorithm and why (Barrier), or its parameters (the others), and the wait
  // policy in use.
  [[nodiscard]] const std::string& reason() const noexcept;

 protected:
  BarrierBase(int p, internal::Prepared&& prepared);

 private:
  friend struct internal::BarrierTesting;
  void reduce_impl(int rank, internal::ReduceArgs* args);
  std::unique_ptr<internal::Engine> engine_;
};

// Sense-reversing central barrier: one shared counter, one release word. The last arriver
// runs the completion step and sets the release word; waiters block on that one word, so it
// is the right choice when threads outnumber cores. When the ranks are fibers of a Team, the
// completion step of the first phase (and of any phase in which a rank arrived from another
// worker than before) groups the participants by worker: from the next phase on each worker's
// ranks count on a counter of their own, and only the last of them counts on the shared one
// (one shared increment per worker and phase, not per rank; docs/fibers.md). That phase
// allocates, as a drop phase does.
class CentralBarrier : public BarrierBase {
 public:
  explicit CentralBarrier(int p, BarrierOptions options = {});
};

// Dissemination barrier (Hensgen, Finkel, Manber): ceil(log2 p) rounds; in round k rank i
// signals rank i + 2^k (mod p). Every rank learns completion itself.
class DisseminationBarrier : public BarrierBase {
 public:
  explicit DisseminationBarrier(int p, BarrierOptions options = {});
};

// Bruck §3's postal-model global combine used as a generalised dissemination barrier: in round
// r rank i signals rank i + N_λ(r + λ − 2) (mod p) and receives what was sent λ − 1 rounds
// earlier. λ = 1 is the dissemination barrier. A non-integer λ is replaced by ⌈λ⌉
// (delay-receive) or ⌊λ⌋ (delay-send), whichever has the smaller exact time for p ranks
// (combine_rounds_lambda).
class CombineBarrier : public BarrierBase {
 public:
  explicit CombineBarrier(int p, BarrierOptions options = {});
};

// The integer λ CombineBarrier builds its rounds with for this λ = 1 + r/s and p ranks: λ
// itself when it is an integer, else ⌊λ⌋ (delay-send) or ⌈λ⌉ (delay-receive), whichever has the
// smaller exact time T''_λ(p) or T'_λ(p) (Bruck §3.3; the rule of postbox::choose_postal, which
// the postal allreduce uses too).
int combine_rounds_lambda(const SendRecv& send_recv, int p);

// MCS tree barrier (Mellor-Crummey, Scott) shapes: arrival along a 4-ary tree, wake-up along a
// binary tree.
class McsBarrier : public BarrierBase {
 public:
  explicit McsBarrier(int p, BarrierOptions options = {});
};

// Tournament barrier: in round k the match of i and i + 2^k (a binomial arrival tree, one
// two-input match per edge); the champion's wake-up goes down the same tree in reverse round
// order.
class TournamentBarrier : public BarrierBase {
 public:
  explicit TournamentBarrier(int p, BarrierOptions options = {});
};

// Cordsen et al.: barrier = reduction phase + distribution phase. Arrival along a binomial
// tree (optimal for many-to-one when leaves start together, Cordsen §3.2), wake-up along the
// Fibo-tree built from the send latency s and receive latency r (BarrierOptions::send_recv).
class FiboBarrier : public BarrierBase {
 public:
  explicit FiboBarrier(int p, BarrierOptions options = {});
};

// Hierarchical: the hier tree shape (tree.hpp) over the topology levels of the placed ranks
// (package, NUMA node, L3, core), binomial at every level; arrival up it, wake-up down it,
// other groups' leaders first.
class HierBarrier : public BarrierBase {
 public:
  explicit HierBarrier(int p, BarrierOptions options = {});
};

// The default: picks one of the algorithms above from p, the topology, the saved calibration
// (send_recv; never a measurement, so the same inputs give the same choice in every process)
// and whether threads outnumber the CPUs. algorithm() names it, reason() says why in one line.
class Barrier : public BarrierBase {
 public:
  explicit Barrier(int p, BarrierOptions options = {});
};

// Type-erased barrier for tools that iterate over algorithms by name.
class AnyBarrier : public BarrierBase {
 public:
  AnyBarrier(BarrierBase&& inner, std::string name) : BarrierBase(std::move(inner)), name_(std::move(name)) {}
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

namespace internal {
// Tests only: every rank's phase counter continues from `phase` and every protocol word is as
// after that phase (to test counters near a wrap). Call between phases only (PB_CHECK).
struct BarrierTesting {
  static void set_phase(BarrierBase& barrier, std::uint64_t phase);
  // The central barrier's per-worker groups in its current shape (0: none). Between phases.
  static int central_groups(const BarrierBase& barrier);
  // Co-location moves tried (docs/barrier.md "Waiting"): waits that found another rank last
  // arrived on the waiter's CPU and moved the thread or blocked in the futex at once, over
  // every rank. Between phases.
  static std::uint64_t colocation_moves(const BarrierBase& barrier);
  // The explicit move of such a wait, for the calling thread: to a CPU of its mask on which no
  // rank last arrived; false when there is none. The thread's mask is left as it was.
  static bool move_apart(const BarrierBase& barrier);
  // Whether the ranks' waits count a slow yield that ends the wait as a hand-off to partners on
  // the same CPU (AdaptiveWait::shares_cpu): true under the oversubscribed wait policy.
  static bool waits_share_cpu(const BarrierBase& barrier);
};
}  // namespace internal

}  // namespace postbox
