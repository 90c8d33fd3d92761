// The one barrier engine behind every public barrier class. Three protocol families share the
// per-rank bookkeeping (misuse checks, split phase, drop, reduce, completion, debug listing):
//  * central: one counter, one release word (CentralBarrier);
//  * tree: arrival up a tree, completion at the root, wake-up down a tree (MCS, tournament,
//    Fibo, hierarchical) — Cordsen's reduction phase + distribution phase;
//  * rounds: Bruck's postal-model combine, dissemination being λ = 1; every rank learns that
//    all have arrived itself, and a release word from the leader is added only in phases that
//    need a completion step (completion function, reduction or drop).
//
// Flags hold phase numbers (1, 2, ...), not booleans: a flag is "set for phase e" when it holds e
// or later (wrap-safe compare), so no flag is ever reset on the fast path and a writer that is
// a phase ahead cannot be mistaken for one behind (this is sense reversal with a 32-bit sense).
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
#include "postbox/runtime/mailbox.hpp"

namespace postbox::internal {

inline constexpr std::size_t kCacheLine = 64;

// Wrap-safe "v is phase e or a later one".
inline bool reached(std::uint32_t v, std::uint32_t e) noexcept { return static_cast<std::int32_t>(v - e) >= 0; }

// A flag alone on its cache line: written by one thread per phase, polled by one or more.
// `sleepers` counts the threads blocked (or about to block) in the futex on v; it shares v's
// line because the signaller reads it right after writing v, so the futex syscall is skipped
// when nobody sleeps at the cost of no extra line transfer.
struct alignas(kCacheLine) Flag {
  std::atomic<std::uint32_t> v{0};
  std::atomic<std::uint32_t> sleepers{0};
};
static_assert(sizeof(Flag) == kCacheLine && alignof(Flag) == kCacheLine, "a Flag must fill exactly one cache line");
static_assert(offsetof(Flag, sleepers) < kCacheLine, "a Flag's sleeper count must share the flag's line");

// MCS: a parent polls the four arrival slots of its children on one line of its own; the one
// sleeper count covers all four (only the parent ever waits there).
struct alignas(kCacheLine) FourFlags {
  std::atomic<std::uint32_t> v[4] = {};
  std::atomic<std::uint32_t> sleepers{0};
};
static_assert(sizeof(FourFlags) == kCacheLine, "the four MCS child slots must share one cache line");

// A word to wait on and the sleeper count of its line.
struct WaitWord {
  std::atomic<std::uint32_t>* v = nullptr;
  std::atomic<std::uint32_t>* sleepers = nullptr;
};
inline WaitWord word_of(Flag& f) noexcept { return {&f.v, &f.sleepers}; }

// Per-rank state. Written only by the thread acting as that rank, except where noted; on its
// own line so that no two ranks' bookkeeping shares a line.
struct alignas(kCacheLine) RankSlot {
  enum class Stage : std::uint8_t { idle, arriving, waiting, done };
  std::atomic<std::uint32_t> in_use{0};   // exchanged on entry: detects two threads in one rank
  std::atomic<std::uint32_t> arrived{0};  // last phase arrived at; read by debug listings
  std::atomic<bool> dropped{false};       // read by the completion step and debug listings
  Stage stage = Stage::idle;
  bool dropping = false;
  bool sent = false;     // rounds: the send of round `step` is done
  bool printed = false;  // debug: this phase's listing was printed
  std::uint32_t phase = 0;
  int step = 0;          // tree: next arrival child; rounds: current round (split phase)
  int gen = 0;           // rounds: which shape buffer this phase uses
  std::uint32_t probe = 0;   // counts budget-0 waits (Engine::block_until)
  std::uint32_t no_yield = 0;       // waits left without a yield phase (Engine::block_until)
  std::uint32_t yield_backoff = 0;  // the last no_yield given
  std::int64_t spin_ns = 0;  // adaptive spin budget (Engine::block_until)
  ReduceArgs* args = nullptr;  // read by the completion step of this phase
};
static_assert(sizeof(RankSlot) == kCacheLine, "RankSlot must fill exactly one cache line");
static_assert(offsetof(RankSlot, in_use) == 0, "RankSlot layout changed");

struct TreeShape {
  int root = -1;
  std::vector<int> parent;                           // by rank; -1: root or not active
  std::vector<std::vector<int>> arrive_children;     // by rank, in the order the parent waits
  std::vector<WaitWord> arrive_at;                   // by rank: where it signals its subtree arrived
  std::vector<std::vector<int>> wake_children;       // by rank, in send order
};

struct RoundsShape {
  int n = 0;       // active ranks
  int lambda = 1;  // integer postal latency of the round structure
  int t = 0;       // rounds: min t with N_λ(t) >= n
  int m = 0;       // send rounds: t − λ + 1 (Bruck §3.1)
  int leader = -1;
  std::vector<int> pos;      // by rank: index among the active ranks, -1 when dropped
  std::vector<int> send_to;  // [pos * m + j]: rank signalled in send round j + 1
  std::unique_ptr<Flag[]> flags;  // [rank * m0 + j]: the message of send round j + 1 to rank
  int stride = 0;                 // m0, the row length of flags
};

class Engine {
 public:
  Engine(Algorithm algorithm, int p, BarrierOptions options, std::string reason);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void arrive_and_wait(int rank, ReduceArgs* args);
  BarrierToken arrive(int rank);
  void wait(int rank, BarrierToken token);
  void arrive_and_drop(int rank);

  [[nodiscard]] int size() const noexcept { return p_; }
  [[nodiscard]] int participants() const noexcept { return participants_.load(std::memory_order_relaxed); }
  [[nodiscard]] const char* algorithm_name() const noexcept;
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  void abort() noexcept;

 private:
  enum class Family { central, tree, rounds };
  class Entry;

  void start_phase(RankSlot& me, ReduceArgs* args, bool drop);
  // Advances rank's part of the current phase; false when it would have to wait and !block.
  bool progress(int rank, RankSlot& me, bool block);
  // progress(); on an exception the slot returns to idle before it propagates.
  void progress_or_reset(int rank, RankSlot& me, bool block);
  bool central_progress(int rank, RankSlot& me, bool block);
  // Central and rounds: the completer runs the phase's completion step and signals release_;
  // everyone else waits on release_ (false: not yet, when !block).
  bool complete_and_release(RankSlot& me, std::uint32_t e);
  bool await_release(int rank, RankSlot& me, std::uint32_t e, bool block);
  bool tree_progress(int rank, RankSlot& me, bool block);
  bool rounds_progress(int rank, RankSlot& me, bool block);
  // The once-per-phase step, run by one thread when all have arrived and none has left.
  std::exception_ptr complete_phase(std::uint32_t e);
  void rebuild(std::uint32_t e);
  void build_tree_shape(std::uint32_t e);
  void build_rounds_shape(RoundsShape& shape, std::uint32_t e);

  static bool ready(const WaitWord& w, std::uint32_t e) noexcept {
    // acquire: pairs with the signaller's store, so what it (and everyone whose arrival it
    // forwards) wrote before signalling is visible here.
    return reached(w.v->load(std::memory_order_acquire), e);
  }
  // Returns once w reached phase e; throws Aborted once abort() was called.
  void await(int rank, RankSlot& me, const WaitWord& w, std::uint32_t e);
  // Spin (pure, then for policy_.spin_ns), yield (policy_.yield_ns), then block in the futex.
  void block_until(const WaitWord& w, std::uint32_t e, RankSlot& me) const;
  // w by value: the signalled waiter may rebuild the shape that held it (drop) at once.
  static void signal(WaitWord w, std::uint32_t e) noexcept;
  void throw_if_aborted() const {
    // relaxed: abort() publishes nothing but the flag itself.
    if (aborted_.load(std::memory_order_relaxed)) throw Aborted();
  }
  void report_missing(int rank, std::uint32_t e, std::chrono::nanoseconds waited) const;

  const Algorithm algorithm_;
  const Family family_;
  const int p_;
  const WaitPolicy policy_;
  const std::function<void()> completion_;
  const SendRecv send_recv_;
  const std::chrono::nanoseconds debug_timeout_;
  const std::shared_ptr<const Topology> topology_;
  const std::vector<int> placement_;
  const std::string reason_;

  std::unique_ptr<RankSlot[]> slots_;

  // Set once a completion step threw; read by everyone after they acquire the release.
  alignas(kCacheLine) std::atomic<bool> broken_{false};
  // Set by abort(); polled by waiters (read-mostly, so it sits with broken_).
  std::atomic<bool> aborted_{false};
  std::atomic<int> participants_{0};
  // Phase number in which some rank dropped / reduced; indexed by phase parity, because phase
  // e + 2 cannot begin before every rank has finished reading the entry of phase e.
  std::atomic<std::uint32_t> drop_phase_[2] = {};
  std::atomic<std::uint32_t> reduce_phase_[2] = {};

  // Read and written only by the thread running the completion step (and the constructor).
  std::vector<int> active_;
  std::vector<ReduceArgs*> scratch_;

  // central
  Flag count_;
  Flag release_;  // also the leader's release in the rounds family
  int n_active_ = 0;

  // tree
  TreeShape tree_;
  std::unique_ptr<Flag[]> arrive_flags_;   // fibo, hier: by rank; tournament: [winner * R + round]
  std::unique_ptr<FourFlags[]> mcs_lines_;  // mcs: by parent rank
  std::unique_ptr<Flag[]> wake_;            // by rank
  int tournament_rounds_ = 0;

  // rounds: two shapes; a rebuild writes the one no rank can still be reading.
  RoundsShape rounds_[2];
  int cur_ = 0;
  // Droppers still running their last phase's rounds on shape g: they take part in no later
  // phase, so only this count tells a later rebuild of shape g that they are done with it.
  std::atomic<std::uint32_t> lingering_[2] = {};
};


}  // namespace postbox::internal
