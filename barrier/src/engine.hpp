// The one barrier engine behind every public barrier class (docs/barrier.md, "Protocol").
// Three protocol families share the per-rank bookkeeping (misuse checks, split phase, drop,
// reduce, completion, abort, debug listing); their structure comes from barrier_shape()
// (collectives), the same function the barrier's plan is built from:
//  * central: one counter, one release word;
//  * tree: arrival by a combining tree (the last arriver at a node climbs, so no arrival waits
//    for another rank), completion by the thread that completes the root, wake-up down the
//    wake-up tree, forwarded by each woken rank or, for a rank that is absent (between its
//    arrive() and its wait()), by the rank that woke it;
//  * rounds: Bruck's postal-model combine (dissemination is λ = 1); every rank learns that all
//    have arrived itself; a signal delivered to an absent rank advances that rank's rounds in
//    the deliverer's thread.
// Every phase word is 64 bits and compared wrap-safe; every signal is a monotonic raise, so a
// late or duplicated signal can never undo a newer one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "postbox/barrier/barrier.hpp"
#include "postbox/collectives/barrier_shape.hpp"
#include "postbox/runtime/internal/sync.hpp"

namespace postbox::internal {

// Phases compare with internal::reached() (sync.hpp): 64-bit phases never wrap in practice,
// but the comparison does not depend on it.

// A waitable word alone on its cache line. v holds a phase (or an encoded phase); a waiter
// sleeps in wait_until() on seq, which a signaller wakes (wake(), wait.hpp) only when
// sleepers > 0, and abort() wakes always, so abort can wake a sleeper without touching v.
// sleepers shares v's line: the signaller reads it right after changing v, so a barrier with
// nobody asleep costs no wake() at all, at no extra line transfer.
struct alignas(kCacheLine) Word {
  std::atomic<std::uint64_t> v{0};
  std::atomic<std::uint32_t> seq{0};
  std::atomic<std::uint32_t> sleepers{0};
};
static_assert(sizeof(Word) == kCacheLine && alignof(Word) == kCacheLine, "a Word must fill exactly one cache line");

// A word alone on its line that nobody sleeps on (counters, absence, progress).
struct alignas(kCacheLine) Line {
  std::atomic<std::uint64_t> v{0};
};
static_assert(sizeof(Line) == kCacheLine, "a Line must fill exactly one cache line");

// Wake words hold W(e, d) = 2e + d: phase e, d = 1 when the woken rank itself must forward the
// wake-up to its children (the signaller did not). Phases compare wrap-safe on 63 bits.
inline std::uint64_t wake_code(std::uint64_t e, bool duty) noexcept { return (e << 1) | (duty ? 1U : 0U); }
inline bool wake_reached(std::uint64_t code, std::uint64_t e) noexcept {
  return static_cast<std::int64_t>(((code >> 1) - e) << 1) >= 0;
}

// Absence words hold A(e) = 2e + 1 while the rank is absent in phase e, 0 while it is present:
// an odd code is never 0, whatever the phase (phase 0 comes after a 64-bit wrap).
inline std::uint64_t absent_code(std::uint64_t e) noexcept { return (e << 1) | 1U; }

// The engine's form of a BarrierShape over the ranks still in the barrier. Immutable once
// published; a drop publishes a new one, and the old one lives until no rank references it.
struct Shape {
  BarrierShape::Family family = BarrierShape::Family::central;
  int n = 0;
  std::vector<int> active;  // index → rank
  std::vector<int> index;   // rank → index, −1 when dropped
  // tree: combining nodes (ids 0..nodes−1): target count and parent node (−1: the root's).
  std::vector<int> target;
  std::vector<int> parent_node;
  std::vector<int> first_node;  // by index: the node an arrival of that index starts at (−1: completes at once)
  std::vector<int> wake_begin;  // by index, CSR into wake_to (ranks, in send order)
  std::vector<int> wake_to;
  // rounds
  int lambda = 1;
  int t = 0;
  int m = 0;
  std::vector<int> rounds;   // the rounds that send or receive, in order (step 2k: send, 2k+1: receive)
  std::vector<int> send_to;  // [index * m + j]: rank signalled in send round j + 1
  std::string variant;
  // central, ranks that are fibers: by index, the group (the fiber worker it arrived from) whose
  // counter an arrival increments first; the group's last arrival counts once in count_
  // (docs/fibers.md, "Barriers"). Empty: every arrival counts in count_ directly.
  std::vector<int> group;
  std::vector<int> group_target;  // by group: its participants
  std::vector<const void*> group_worker;  // by group: the worker it stands for
};

// Per-rank state, on its own lines. Written only by the thread acting as that rank (the
// atomics are also read by others where noted).
struct alignas(kCacheLine) RankSlot {
  enum class Stage : std::uint8_t { idle, arrived, done };
  std::atomic<std::uint32_t> in_use{0};      // exchanged on entry: detects two threads in one rank
  std::atomic<bool> dropped{false};          // read by the completion step and debug listings
  std::atomic<std::uint64_t> arrived{0};     // last phase arrived at; read by debug listings
  std::atomic<const Shape*> shape{nullptr};  // the shape of its current phase; read by rebuild()
  Stage stage = Stage::idle;
  bool dropping = false;
  bool absent = false;     // rounds/tree: went absent in this phase (its progress is shared)
  bool completer = false;  // this rank's thread completed the phase (and did its release)
  bool forwarded = false;  // tree: this rank forwarded its wake-up in this phase
  int step = 0;            // rounds: next step (2r − 1: send of round r, 2r: receive of round r)
  bool printed = false;    // debug: this phase's listing was printed
  std::uint64_t phase = 0;
  ReduceArgs* args = nullptr;  // read by the completion step of this phase
  std::exception_ptr error;    // a completion step this thread ran threw (rethrown when it leaves)
  // Adaptive waiting (wait_until()'s adaptive mode, wait.hpp): spin budget, probe counter,
  // yield back-off; reset at construction and after a co-location move.
  AdaptiveWait wait;
  // The CPU this rank's thread ran on at its last arrival (−1: unknown); read by other ranks'
  // co-location check (Engine::colocated).
  std::atomic<int> cpu{-1};
  // Co-location moves (Engine::block_policy): waits left before the next try, and the back-off.
  std::uint32_t no_move = 0;
  std::uint32_t move_backoff = 0;
  std::uint64_t moves = 0;  // co-location moves tried (tests)
  // central: the fiber worker (internal::current_fiber_worker()) of this rank's last arrival,
  // null on a kernel thread; read by the completion step, after this rank's arrival.
  const void* worker = nullptr;
};
static_assert(sizeof(RankSlot) % kCacheLine == 0, "RankSlot must fill whole cache lines");
static_assert(offsetof(RankSlot, in_use) == 0, "RankSlot layout changed");

class Engine {
 public:
  Engine(BarrierAlgorithm algorithm, int p, BarrierOptions options, std::string reason);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void arrive_and_wait(int rank, ReduceArgs* args);
  BarrierToken arrive(int rank);
  void wait(int rank, BarrierToken token);
  void arrive_and_drop(int rank);
  void abort() noexcept;

  [[nodiscard]] int size() const noexcept { return p_; }
  [[nodiscard]] int participants() const noexcept { return participants_.load(std::memory_order_relaxed); }
  [[nodiscard]] const char* algorithm_name() const noexcept { return to_string(algorithm_); }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

  // Tests only (BarrierTesting): every rank's phase counter continues from `phase` (the next
  // phase is phase + 1) and every word is as it would be after that phase. Only between phases.
  void set_phase_for_testing(std::uint64_t phase);
  // Tests only: the per-worker groups of the central family's current shape (0: none).
  [[nodiscard]] int central_groups_for_testing() const;
  // Tests only: co-location moves over every rank (RankSlot::moves). Between phases.
  [[nodiscard]] std::uint64_t colocation_moves_for_testing() const;
  [[nodiscard]] bool waits_share_cpu_for_testing() const { return slots_[0].wait.shares_cpu; }
  // Moves the calling thread to a CPU of its affinity mask on which no rank last arrived, the
  // mask left as it was; false when there is none (or the kernel refuses).
  [[nodiscard]] bool move_apart() const noexcept;

 private:
  class Entry;
  using Family = BarrierShape::Family;

  RankSlot& start_arrival(Entry& entry, int rank, ReduceArgs* args, bool drop);
  template <class Body>
  void guarded(RankSlot& me, Body&& body);
  // Phase bookkeeping of an arrival call (announcements, shape reference).
  void begin(RankSlot& me, ReduceArgs* args, bool drop);
  void end(RankSlot& me) noexcept;
  // The arrival of rank `rank`; for the rounds family it also runs the rounds as far as it can
  // without waiting (all of them when `wait` is set). Completes the phase when this thread is the
  // one to learn that all have arrived.
  void arrival(int rank, RankSlot& me, bool wait);
  // Waits until this rank's phase is complete (forwarding the wake-up / finishing the rounds).
  void finish(int rank, RankSlot& me);
  // Split phase: marks the rank absent, then takes back a signal that raced with the mark.
  void go_absent(int rank, RankSlot& me);
  void come_back(int rank, RankSlot& me);

  // central
  void central_arrival(int rank, RankSlot& me);
  // tree
  void tree_arrival(int rank, RankSlot& me);
  void forward(const Shape& s, int index, std::uint64_t e);
  void wake(const Shape& s, int rank, std::uint64_t e);
  // rounds
  // Runs rank's rounds from me.step; returns false when a receive is missing and !block.
  bool rounds_run(int rank, RankSlot& me, bool block);
  // `actor`: the slot of the calling thread's own rank (a completion error it runs lands there).
  void deliver(const Shape& s, int to, int j, std::uint64_t e, RankSlot& actor);
  // Advances an absent rank's rounds (or the rank's own, after it was absent) through prog_.
  // Returns true when this call moved the rank past its last step. block: only for the rank's
  // own thread (actor is then its slot).
  bool advance(const Shape& s, int rank, std::uint64_t e, bool block, RankSlot& actor);
  void rounds_done(int rank, RankSlot& me, bool by_proxy, const Shape& s, std::uint64_t e);
  [[nodiscard]] bool step_needed(std::uint64_t e) const noexcept;

  // The completion step (once per phase): fold, completion function, rebuild; then the release.
  std::exception_ptr complete(const Shape& s, std::uint64_t e);
  void rebuild(std::uint64_t e);
  std::unique_ptr<Shape> make_shape(const std::vector<int>& active) const;

  // Waiting: returns once done(v) or abort; throws Aborted on abort.
  template <class Done>
  void block(int rank, RankSlot& me, Word& w, Done&& done);
  // Kernel threads and fibers alike through wait_until() (its adaptive mode), with the
  // co-location move between the spin and the yield phase.
  template <class Done>
  void block_policy(RankSlot& me, Word& w, Done done) const;
  // Another rank's thread last arrived on the CPU this thread runs on.
  [[nodiscard]] bool colocated(const RankSlot& me) const noexcept;

  static void signal(Word& w) noexcept;
  [[noreturn]] void leave_aborted(RankSlot& me);
  void throw_if_broken() const;
  void report_missing(int rank, std::uint64_t e, std::chrono::nanoseconds waited) const;

  const BarrierAlgorithm algorithm_;
  const Family family_;
  const int p_;
  const WaitPolicy policy_;
  const std::function<void()> completion_;
  const SendRecv send_recv_;
  const std::chrono::nanoseconds debug_timeout_;
  const std::shared_ptr<const Topology> topology_;
  const std::vector<int> placement_;
  const std::string reason_;
  // Ranks publish their CPU at arrival (RankSlot::cpu): kernel threads, p at most the CPUs.
  const bool track_cpu_;

  std::unique_ptr<RankSlot[]> slots_;

  // Set once a completion step threw / abort() was called; read on every entry (read-mostly).
  alignas(kCacheLine) std::atomic<bool> broken_{false};
  std::atomic<bool> aborted_{false};
  std::atomic<int> participants_{0};
  // The phase in which some rank dropped / reduced, by phase parity: phase e + 2 cannot begin
  // before every rank has finished reading the entry of phase e.
  std::atomic<std::uint64_t> drop_phase_[2] = {};
  std::atomic<std::uint64_t> reduce_phase_[2] = {};
  // The shape of the current phase (and, from a drop phase's completion step on, of the next).
  std::atomic<const Shape*> shape_{nullptr};

  // Read and written only by the thread running the completion step (and the constructor).
  std::vector<std::unique_ptr<Shape>> shapes_;  // the current one and retired ones still referenced
  std::vector<ReduceArgs*> scratch_;

  // The completion step's handshake with abort (docs/barrier.md "Abort").
  Line completing_;
  Word completed_;
  // central
  Line count_;
  Word release_;  // central; rounds when a completion step is needed
  std::unique_ptr<Line[]> group_count_;  // central: by group (at most p)
  // central: an arrival came from another worker than its group's; the completion step regroups.
  alignas(kCacheLine) std::atomic<bool> regroup_{false};
  // tree
  std::unique_ptr<Line[]> counters_;  // by node id
  std::unique_ptr<Word[]> wake_;      // by rank
  // tree and rounds: the phase in which a rank is absent
  std::unique_ptr<Line[]> absent_;    // by rank
  // rounds
  std::unique_ptr<Word[]> flags_;  // [rank * m0 + j]: the message of send round j + 1 to rank
  std::unique_ptr<Line[]> prog_;   // by rank: (phase << 16) | step, while the rank is absent
  int m0_ = 0;
};

}  // namespace postbox::internal
