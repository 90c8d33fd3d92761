// Team: p ranks as persistent threads, each optionally pinned to its placed PU, running one
// function SPMD-style per run() and parked (postbox::wait_until: spin, yield, block) between runs.
//
// Threads: the team owns p worker threads, one per rank 0..p-1, created by the constructor and
// joined by the destructor. The thread calling run() is not a rank: it waits (through the same
// wait policy) until every rank has returned, so its own CPU affinity is never changed.
//
// Fibers (TeamOptions::ranks == RanksMode::fibers, or automatic with p > allowed_cpu_count()):
// the team owns workers() threads instead (TeamOptions::workers, 0: allowed_cpu_count(), at
// most p), and each runs its block of consecutive ranks (worker w: ranks w*p/k ..
// (w+1)*p/k - 1) as Boost.Context fibers; worker_of(rank) says which. A rank is created once,
// lives until the destructor and never moves to another worker, so it sees one thread in every
// run (one std::this_thread::get_id() and one set of thread_local objects, both shared with the
// other ranks of its worker). One rank of a worker
// runs at a time: a rank runs until fn returns or it waits in postbox::wait_until() (every
// mailbox, executor and barrier wait), which switches to the next rank of its worker whose wait
// is over; a worker whose ranks all wait spins, yields and blocks as a thread would. A rank that
// blocks the kernel thread otherwise (a system call, a std::mutex held by another rank of the
// same worker, a sleep) stops its worker's other ranks for that long. Each rank has a stack of
// TeamOptions::fiber_stack_bytes with a guard page below it (overflow faults, it never
// corrupts). Placement, pinning and wrapping apply to the workers: worker w is placed as rank w
// would be in a team of workers() threads, and placement()[r] is the PU of rank r's worker.
// Everything below (failure, abort, listeners, memory ordering, requirements) holds for fibers
// as written for threads.
//
// Placement and pinning: ranks are placed with TeamOptions::placement on TeamOptions::topology
// (the machine when null). A worker pins itself with Topology::bind_thread when
// TeamOptions::pin is set and the topology can bind (the real machine; a synthetic or XML
// topology cannot, so such a team is never pinned). When p exceeds the places, placement wraps
// (rank r on place r mod n) and the constructor prints one line saying so (wrap_note()) on
// stderr, unless TeamOptions::announce_wrap is false.
//
// Oversubscription (threads): when p exceeds allowed_cpu_count() (the CPUs this process may run on, not
// the host's), the mailboxes skip the spin phase (mailboxes().options().wait.spin_ns == 0): a
// rank spinning in recv would hold the core its sender needs; and they use the portable
// wake-up handshake (mailboxes().options().use_membarrier == false): waits end in a block far
// more often, and membarrier(2) on each block would interrupt the CPUs running other ranks.
// With fibers the mailboxes never use membarrier (a blocking worker announces every waiting
// rank at once, and one membarrier per rank would cost more than the switches it saves).
//
// Failure: when fn throws in some rank, the team aborts: team.aborted() becomes true, every
// blocked or later mailbox call throws postbox::Aborted, and every abort listener runs. run()
// returns only after every rank has returned, then rethrows the *root cause*: the first
// exception (in time) that is not postbox::Aborted; postbox::Aborted only when every failing rank
// threw Aborted (someone called abort() directly), or when abort() was called and no rank threw
// at all. The mailboxes are then reset (undelivered messages discarded) and the abort cleared,
// so the team is reusable. After a run that did not abort, undelivered messages stay in the
// mailboxes for the next run. abort() called while no run is in progress aborts the next run.
//
// abort() never waits and is never lost. An abort() that returns before run() has seen every
// rank return aborts that run (run() throws). Once every rank has returned, run() decides the
// outcome and resets the mailboxes as one step; an abort() that arrives during that step
// returns at once and run() applies it right after the reset, before it returns: the abort then
// belongs to the next run (aborted() is true when run() returns, and the next run throws
// Aborted). An abort() that runs while another abort() of the same run is in progress may
// return before that one has finished waking the ranks.
//
// Abort hook for other blocking primitives (barriers...): a primitive that waits on its own
// wait word registers a listener that wakes that word, and includes ctx.aborted() in its wait
// predicate; when it sees the abort it throws postbox::Aborted:
//     auto id = team.add_abort_listener([&] { postbox::wake(word); });
//     postbox::wait_until(policy, word, [&] { return ready() || ctx.aborted(); });
//     if (!ready()) throw postbox::Aborted();
//     ...
//     team.remove_abort_listener(id);
// Listeners run on the thread that applies the abort (the aborting thread, or run() for an
// abort that arrived during its reset), once per abort, after aborted() has become true, under
// the team's listener lock: they must be short and must not add or remove listeners (calling
// abort() from one is harmless: the team is already aborted).
//
// Memory ordering: everything the caller did before run() is visible to every rank when fn
// starts; everything every rank did in fn is visible to the caller after run() returns or
// throws. A listener sees aborted() == true; a waiter whose predicate reads aborted() after
// being woken by a listener sees the abort.
//
// Requirements: run() must not be called from two threads at once nor from inside a rank
// (PB_CHECK). The team must outlive its runs (the destructor is not called during run()).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "postbox/runtime/internal/sync.hpp"
#include "postbox/runtime/mailbox.hpp"
#include "postbox/runtime/topology.hpp"
#include "postbox/runtime/wait.hpp"

namespace postbox {

class Team;
namespace internal {
struct TeamTestPeer;  // tests only: reaches Team's test seam
class FiberWorker;
}

// How a team runs its ranks: one kernel thread each, fibers on a few threads, or fibers when p
// exceeds allowed_cpu_count() (automatic; written "auto").
enum class RanksMode { threads, fibers, automatic };
// "threads", "fibers", "auto".
const char* to_string(RanksMode mode) noexcept;
// Inverse of to_string(); anything else → InputError naming the value and the three choices.
RanksMode parse_ranks_mode(std::string_view text);
// POSTBOX_RANKS when set and not empty (parsed as above; malformed → InputError naming the
// variable), else `otherwise` (the library's default: threads; postbox run's: automatic). Read at
// each call.
RanksMode default_ranks_mode(RanksMode otherwise = RanksMode::threads);
// The mode a team of p ranks uses: automatic resolved against allowed_cpu_count().
RanksMode resolve_ranks_mode(RanksMode mode, int p);

struct TeamOptions {
  Placement placement = Placement::compact();
  // Pin each rank's thread to its PU (only possible on the machine's own topology).
  bool pin = true;
  // Ring sizes and the wait policy; the policy is also used to park workers and the caller.
  MailboxOptions mailbox{};
  // Null: Topology::machine().
  std::shared_ptr<const Topology> topology{};
  // Threads or fibers (see "Fibers" above).
  RanksMode ranks = default_ranks_mode();
  // Fibers: worker threads; 0 means allowed_cpu_count(). At most p are made. Negative →
  // InputError.
  int workers = 0;
  // Fibers: each rank's stack (rounded up to whole pages) plus a guard page. 256 KiB: a plan's
  // rank frames and an exception's unwinding need a few KiB, sanitizer builds several times
  // more; 4096 ranks reserve 1 GiB of address space, of which only the touched pages are
  // resident (docs/fibers.md). Below 16 KiB → InputError.
  std::size_t fiber_stack_bytes = 256 * 1024;
  // Print wrap_note() on stderr in the constructor when the placement wraps. False leaves it to
  // the caller (the CLI prints it after its output, so that a later error stays one line).
  bool announce_wrap = true;
};

// What a rank sees inside run(): its rank, the team size, and the team's mailboxes with its
// own rank filled in. Valid only during the run that created it.
class RankContext {
 public:
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept;

  void send(int dst, std::span<const std::byte> message);
  void notify(int dst);
  std::size_t recv(int src, std::span<std::byte> out);
  std::vector<std::byte> recv(int src);
  [[nodiscard]] bool try_recv(int src, std::span<std::byte> out, std::size_t& size);
  int recv_any(std::span<std::byte> out, std::size_t& size);
  [[nodiscard]] int try_recv_any(std::span<std::byte> out, std::size_t& size);

  // True once the running team aborted (some rank failed). See "Abort hook" above.
  [[nodiscard]] bool aborted() const noexcept;

  [[nodiscard]] Team& team() noexcept { return *team_; }

 private:
  friend class Team;
  RankContext(Team& team, int rank) noexcept : team_(&team), rank_(rank) {}
  Team* team_;
  int rank_;
};

class Team {
 public:
  using ListenerId = std::uint64_t;

  // p < 1, or a placement naming a PU the topology lacks → InputError.
  explicit Team(int p, TeamOptions options = {});
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  [[nodiscard]] int size() const noexcept { return p_; }
  // Process-unique and never reused, unlike the team's address (a team made where a destroyed
  // one lived gets a new id): what caches of per-team state key on.
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }

  // Runs fn(ctx) once on every rank and returns when all have returned; rethrows the root
  // cause of a failure (see above).
  void run(const std::function<void(RankContext&)>& fn);

  [[nodiscard]] Mailboxes& mailboxes() noexcept { return mailboxes_; }
  [[nodiscard]] const Topology& topology() const noexcept { return *topology_; }
  // PU (logical index) of each rank.
  [[nodiscard]] const std::vector<int>& placement() const noexcept { return placement_; }
  // True when every rank's thread is pinned to its PU.
  [[nodiscard]] bool pinned() const noexcept { return pinned_; }
  // True when p exceeds the placement's places, so some PU hosts several ranks (with fibers:
  // when workers() exceeds them).
  [[nodiscard]] bool wrapped() const noexcept { return wrapped_; }
  // The one line (no newline) saying how the placement wraps, "postbox: team of 5 ranks on 4
  // places (compact placement): wrapping around, several share a PU"; empty when !wrapped().
  [[nodiscard]] const std::string& wrap_note() const noexcept { return wrap_note_; }
  // True when the ranks run as fibers (RanksMode::fibers, or automatic resolved to it).
  [[nodiscard]] bool fibers() const noexcept { return fibers_; }
  // Kernel threads that run the ranks: p with threads, the fiber workers with fibers.
  [[nodiscard]] int workers() const noexcept { return static_cast<int>(worker_places_.size()); }
  // The worker thread running `rank` (rank itself with threads). Outside 0..p-1 → PB_CHECK.
  [[nodiscard]] int worker_of(int rank) const;

  // Aborts the current run: mailboxes abort, listeners run. Idempotent; safe from any thread;
  // never waits (see "abort() never waits" above). run() calls it on the first failure.
  void abort() noexcept;
  [[nodiscard]] bool aborted() const noexcept;
  ListenerId add_abort_listener(std::function<void()> listener);
  void remove_abort_listener(ListenerId id);

 private:
  void worker(int rank);
  void fiber_worker(int w);
  void rank_loop(int rank);
  friend struct internal::TeamTestPeer;
  void record_failure(std::exception_ptr e, bool is_aborted) noexcept;
  // Applies pending abort requests when it can take abort_busy_ (see abort()).
  void apply_requested_aborts() noexcept;
  // The abort itself: aborted_, mailboxes, listeners. Only with abort_busy_ held.
  void abort_locked() noexcept;
  void stop_workers() noexcept;

  int p_;
  std::uint64_t id_;
  std::shared_ptr<const Topology> topology_;
  std::vector<int> placement_;
  bool pin_request_;
  bool wrapped_ = false;
  std::string wrap_note_;
  // allowed_cpu_count() when the team was made: the ranks outnumber it → oversubscribed.
  int allowed_cpus_;
  bool pinned_ = false;
  WaitPolicy wait_;
  // How the caller waits for a run and workers wait between runs: wait_, without the spin phase
  // when the ranks plus the caller outnumber allowed_cpus_ (a spinning bystander would take the
  // core that the thread it waits for needs).
  WaitPolicy park_wait_;
  Mailboxes mailboxes_;

  // Run protocol. The caller writes job_ and remaining_, then publishes generation_ (release)
  // and wakes start_word_; workers acquire generation_. Each worker's last act in a run is
  // remaining_.fetch_sub (acq_rel), and the caller acquires remaining_ == 0.
  const std::function<void(RankContext&)>* job_ = nullptr;
  alignas(internal::kCacheLine) std::atomic<std::uint32_t> generation_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint32_t> start_word_{0};
  std::atomic<std::uint32_t> start_sleepers_{0};  // parked kernel threads asleep (wait_counted)
  alignas(internal::kCacheLine) std::atomic<int> remaining_{0};
  std::atomic<std::uint32_t> done_word_{0};
  std::atomic<std::uint32_t> done_sleepers_{0};  // the caller asleep on done_word_ (wait_counted)
  alignas(internal::kCacheLine) std::atomic<bool> running_{false};
  // Written only by the holder of abort_busy_ (abort_locked(), and run() when it resets).
  std::atomic<bool> aborted_{false};
  // abort() sets abort_requested_; the holder of abort_busy_ applies it (apply_requested_aborts).
  // run() holds abort_busy_ while it decides a run's outcome and resets, so an abort never
  // overlaps a reset and one that arrives during it is applied afterwards, not cleared.
  std::atomic<bool> abort_requested_{false};
  std::atomic<bool> abort_busy_{false};
  // Test seam (internal::TeamTestPeer): called by run() inside that step, after deciding that
  // the run aborted and before the reset.
  std::function<void()> reset_hook_;
  std::atomic<int> unpinned_{0};  // workers whose bind failed (or that did not try)
  std::atomic<int> started_{0};

  std::mutex failure_mu_;
  std::exception_ptr root_cause_;     // first non-Aborted exception
  std::exception_ptr first_aborted_;  // first Aborted, used when there is no root cause

  std::mutex listener_mu_;
  ListenerId next_listener_ = 1;
  std::vector<std::pair<ListenerId, std::function<void()>>> listeners_;

  bool fibers_ = false;
  // Fibers: worker w runs ranks first_rank_[w] .. first_rank_[w + 1] - 1 on fiber_workers_[w].
  std::vector<int> first_rank_;
  std::vector<std::unique_ptr<internal::FiberWorker>> fiber_workers_;
  std::vector<int> worker_places_;

  std::vector<std::thread> threads_;
};

}  // namespace postbox
