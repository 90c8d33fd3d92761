#include "postbox/runtime/team.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "fiber.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/internal/unique_id.hpp"

namespace postbox {
namespace {

// With more ranks than CPUs the process may use, a rank spinning in recv holds the core its
// sender needs: the mailboxes then skip the spin phase and yield at once. Waits then end in a
// block far more often, and membarrier(2) on every block interrupts the CPUs running the other
// ranks: there it never clearly paid, and cost 1.2-1.4x on blocking round trips
// (docs/mailboxes.md, "membarrier or not").
// With fibers, a blocking worker runs every waiting rank's before_block at once: one
// membarrier(2) each would cost more than the switches fibers save.
MailboxOptions mailbox_options(MailboxOptions o, int p, int cpus, bool fibers) {
  if (p > cpus) {
    o.wait.spin_ns = 0;
    o.use_membarrier = false;
  }
  if (fibers) o.use_membarrier = false;
  return o;
}

RanksMode resolved_mode(const TeamOptions& o, int p) {
  if (o.workers < 0) throw InputError("a team needs a non-negative number of fiber workers, got " + std::to_string(o.workers));
  if (o.fiber_stack_bytes < 16 * 1024) {
    throw InputError("fiber stacks need at least 16384 bytes, got " + std::to_string(o.fiber_stack_bytes));
  }
  return resolve_ranks_mode(o.ranks, p);
}

int checked_size(int p) {
  if (p < 1) throw InputError("a team needs at least 1 rank, got " + std::to_string(p));
  return p;
}

std::shared_ptr<const Topology> topology_or_machine(std::shared_ptr<const Topology> t) {
  return t ? std::move(t) : std::make_shared<const Topology>(Topology::machine());
}

}  // namespace

// ---- RanksMode ---------------------------------------------------------------------------

const char* to_string(RanksMode mode) noexcept {
  switch (mode) {
    case RanksMode::threads: return "threads";
    case RanksMode::fibers: return "fibers";
    case RanksMode::automatic: return "auto";
  }
  return "?";
}

RanksMode parse_ranks_mode(std::string_view text) {
  for (RanksMode m : {RanksMode::threads, RanksMode::fibers, RanksMode::automatic}) {
    if (text == to_string(m)) return m;
  }
  throw InputError("ranks must be threads, fibers or auto, got '" + std::string(text) + "'");
}

RanksMode default_ranks_mode(RanksMode otherwise) {
  const char* v = std::getenv("POSTBOX_RANKS");
  if (v == nullptr || *v == '\0') return otherwise;
  try {
    return parse_ranks_mode(v);
  } catch (const InputError&) {
    throw InputError(std::string("POSTBOX_RANKS must be threads, fibers or auto, got '") + v + "'");
  }
}

RanksMode resolve_ranks_mode(RanksMode mode, int p) {
  if (mode != RanksMode::automatic) return mode;
  return p > allowed_cpu_count() ? RanksMode::fibers : RanksMode::threads;
}

// ---- RankContext -------------------------------------------------------------------------

int RankContext::size() const noexcept { return team_->size(); }
void RankContext::send(int dst, std::span<const std::byte> message) { team_->mailboxes().send(rank_, dst, message); }
void RankContext::notify(int dst) { team_->mailboxes().notify(rank_, dst); }
std::size_t RankContext::recv(int src, std::span<std::byte> out) { return team_->mailboxes().recv(rank_, src, out); }
std::vector<std::byte> RankContext::recv(int src) { return team_->mailboxes().recv(rank_, src); }
bool RankContext::try_recv(int src, std::span<std::byte> out, std::size_t& size) {
  return team_->mailboxes().try_recv(rank_, src, out, size);
}
int RankContext::recv_any(std::span<std::byte> out, std::size_t& size) {
  return team_->mailboxes().recv_any(rank_, out, size);
}
int RankContext::try_recv_any(std::span<std::byte> out, std::size_t& size) {
  return team_->mailboxes().try_recv_any(rank_, out, size);
}
bool RankContext::aborted() const noexcept { return team_->aborted(); }

// ---- Team --------------------------------------------------------------------------------

Team::Team(int p, TeamOptions options)
    : p_(checked_size(p)),
      id_(internal::next_unique_id()),
      topology_(topology_or_machine(std::move(options.topology))),
      pin_request_(options.pin),
      allowed_cpus_(allowed_cpu_count()),
      wait_(options.mailbox.wait),
      park_wait_(wait_),
      mailboxes_(p_, mailbox_options(options.mailbox, p_, allowed_cpus_, resolved_mode(options, p_) == RanksMode::fibers)),
      fibers_(resolved_mode(options, p_) == RanksMode::fibers) {
  // With fibers, the kernel threads (the workers) are what is placed and pinned.
  const int k = fibers_ ? std::min(p_, options.workers > 0 ? options.workers : allowed_cpus_) : p_;
  worker_places_ = topology_->place(options.placement, k);
  wrapped_ = topology_->wraps(options.placement, k);
  if (wrapped_) {
    const std::size_t places = options.placement.policy == Placement::Policy::list ? options.placement.pus.size()
                                                                                  : static_cast<std::size_t>(topology_->pus());
    wrap_note_ = "postbox: team of " + std::to_string(k) + (fibers_ ? " fiber workers" : " ranks") + " on " +
                 std::to_string(places) + " places (" +
                 (options.placement.policy == Placement::Policy::list ? std::string("list")
                                                                      : options.placement.to_string()) +
                 " placement): wrapping around, several share a PU";
    if (options.announce_wrap) std::fprintf(stderr, "%s\n", wrap_note_.c_str());
  }
  if (k + 1 > allowed_cpus_) park_wait_.spin_ns = 0;
  // With fibers park_wait_ is the caller's wait in run() alone (ranks park in their worker's
  // scheduler). When the workers fill the allowed CPUs, a caller that yields takes a time slice
  // from a worker on every yield: it blocks at once instead, and the last rank's wake() is one
  // futex call.
  if (fibers_ && k + 1 > allowed_cpus_) park_wait_.yield_ns = 0;
  if (fibers_) {
    for (int w = 0; w <= k; ++w) {
      first_rank_.push_back(static_cast<int>(static_cast<std::int64_t>(w) * p_ / k));
    }
    placement_.resize(static_cast<std::size_t>(p_));
    for (int w = 0; w < k; ++w) {
      auto fw = std::make_unique<internal::FiberWorker>(options.fiber_stack_bytes);
      for (int r = first_rank_[static_cast<std::size_t>(w)]; r < first_rank_[static_cast<std::size_t>(w) + 1]; ++r) {
        placement_[static_cast<std::size_t>(r)] = worker_places_[static_cast<std::size_t>(w)];
        fw->add(r, [this, r] { rank_loop(r); });
      }
      fiber_workers_.push_back(std::move(fw));
    }
  } else {
    placement_ = worker_places_;
  }
  threads_.reserve(static_cast<std::size_t>(k));
  try {
    for (int w = 0; w < k; ++w) {
      if (fibers_) {
        threads_.emplace_back([this, w] { fiber_worker(w); });
      } else {
        threads_.emplace_back([this, w] { worker(w); });
      }
    }
  } catch (...) {
    stop_workers();
    throw;
  }
  // Wait until every worker has tried to pin itself, so that pinned() is final.
  wait_counted(wait_, done_word_, done_sleepers_, [&] { return started_.load(std::memory_order_acquire) == k; });
  pinned_ = unpinned_.load(std::memory_order_relaxed) == 0;
}

int Team::worker_of(int rank) const {
  PB_CHECK(rank >= 0 && rank < p_, "worker_of: rank " + std::to_string(rank) + " outside 0.." + std::to_string(p_ - 1));
  if (!fibers_) return rank;
  // The last w with first_rank_[w] <= rank.
  const auto it = std::upper_bound(first_rank_.begin(), first_rank_.end(), rank);
  return static_cast<int>(it - first_rank_.begin()) - 1;
}

Team::~Team() {
  PB_CHECK(!running_.load(std::memory_order_relaxed), "Team destroyed while run() is in progress");
  stop_workers();
}

void Team::stop_workers() noexcept {
  stopping_.store(true, std::memory_order_relaxed);
  // release: publishes stopping_ to the workers that acquire the new generation.
  generation_.fetch_add(1, std::memory_order_release);
  wake(start_word_);
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  fiber_workers_.clear();
}

namespace {
bool pin_self(bool request, const Topology& topology, int pu) {
  return request && topology.can_bind() && topology.bind_thread(pu);
}
}  // namespace

void Team::worker(int rank) {
  if (!pin_self(pin_request_, *topology_, worker_places_[static_cast<std::size_t>(rank)])) {
    unpinned_.fetch_add(1, std::memory_order_relaxed);
  }
  // release: the unpinned_ count above is read by the constructor after it acquires started_.
  started_.fetch_add(1, std::memory_order_release);
  wake_counted(done_word_, done_sleepers_);
  rank_loop(rank);
}

void Team::fiber_worker(int w) {
  if (!pin_self(pin_request_, *topology_, worker_places_[static_cast<std::size_t>(w)])) {
    unpinned_.fetch_add(1, std::memory_order_relaxed);
  }
  // release: as in worker().
  started_.fetch_add(1, std::memory_order_release);
  wake_counted(done_word_, done_sleepers_);
  // Every rank parks in rank_loop() between runs and returns once stopping_ is seen. The worker
  // idles with the full policy, spin included: it is one thread per allowed CPU, and a yield on
  // a busy machine can lose the core for a whole time slice, where the spin keeps it until the
  // other worker's rank hands over.
  fiber_workers_[static_cast<std::size_t>(w)]->run(wait_);
}

void Team::rank_loop(int rank) {
  std::uint32_t seen = 0;
  // acquire: pairs with the release bump in run() / stop_workers(); job_, remaining_,
  // stopping_ and everything the caller wrote before run() become visible.
  auto started = [&] { return generation_.load(std::memory_order_acquire) != seen; };
  auto nothing = [] {};
  for (;;) {
    if (internal::FiberWorker* const fiber = internal::current_fiber_worker()) {
      // Parked in the scheduler: the worker polls one parked rank's predicate, not each one's.
      if (!started()) (void)internal::fiber_park(*fiber, internal::fiber_wait_of(started, nothing));
    } else {
      wait_counted(park_wait_, start_word_, start_sleepers_, started);
    }
    // The caller bumps generation_ only after every worker finished the previous run, so the
    // value is stable here.
    seen = generation_.load(std::memory_order_relaxed);
    if (stopping_.load(std::memory_order_relaxed)) return;
    RankContext ctx(*this, rank);
    internal::FiberWorker* const fiber = internal::current_fiber_worker();
    if (fiber != nullptr) fiber->set_in_run(true);  // the watchdog's report names it while it waits
    try {
      (*job_)(ctx);
    } catch (const Aborted&) {
      record_failure(std::current_exception(), true);
    } catch (...) {
      record_failure(std::current_exception(), false);
    }
    if (fiber != nullptr) fiber->set_in_run(false);
    // acq_rel: release publishes this rank's writes; acquire chains the earlier ranks' releases
    // so that the caller, acquiring the final 0, sees every rank's writes.
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) wake_counted(done_word_, done_sleepers_);
  }
}

void Team::record_failure(std::exception_ptr e, bool is_aborted) noexcept {
  {
    std::lock_guard<std::mutex> lock(failure_mu_);
    if (!is_aborted && !root_cause_) {
      root_cause_ = std::move(e);
    } else if (is_aborted && !first_aborted_) {
      first_aborted_ = std::move(e);
    }
  }
  // After recording: any exception caused by this abort is thrown after the root cause is in.
  abort();
}

void Team::abort() noexcept {
  // seq_cst: one half of the hand-over in apply_requested_aborts().
  abort_requested_.store(true, std::memory_order_seq_cst);
  apply_requested_aborts();
}

void Team::apply_requested_aborts() noexcept {
  // Whoever holds abort_busy_ applies the requests made meanwhile before it lets go, so a
  // request is never dropped and abort() never waits. seq_cst on all four operations: a request
  // stored before a failed exchange below precedes the holder's release store in one total
  // order, so the holder's next load of abort_requested_ sees it.
  while (abort_requested_.load(std::memory_order_seq_cst)) {
    if (abort_busy_.exchange(true, std::memory_order_seq_cst)) return;  // the holder applies it
    if (abort_requested_.exchange(false, std::memory_order_seq_cst)) abort_locked();
    abort_busy_.store(false, std::memory_order_seq_cst);
  }
}

void Team::abort_locked() noexcept {
  // Only the holder of abort_busy_ writes aborted_.
  if (aborted_.load(std::memory_order_relaxed)) return;
  // release: the aborting thread's writes (carried here by abort_requested_) reach whoever
  // sees the abort.
  aborted_.store(true, std::memory_order_release);
  mailboxes_.abort();
  std::lock_guard<std::mutex> lock(listener_mu_);
  for (auto& [id, listener] : listeners_) listener();
}

bool Team::aborted() const noexcept {
  // acquire: pairs with the exchange in abort().
  return aborted_.load(std::memory_order_acquire);
}

Team::ListenerId Team::add_abort_listener(std::function<void()> listener) {
  PB_CHECK(static_cast<bool>(listener), "add_abort_listener needs a callable");
  std::lock_guard<std::mutex> lock(listener_mu_);
  const ListenerId id = next_listener_++;
  listeners_.emplace_back(id, std::move(listener));
  return id;
}

void Team::remove_abort_listener(ListenerId id) {
  std::lock_guard<std::mutex> lock(listener_mu_);
  for (auto it = listeners_.begin(); it != listeners_.end(); ++it) {
    if (it->first == id) {
      listeners_.erase(it);
      return;
    }
  }
  PB_CHECK(false, "remove_abort_listener: unknown listener id " + std::to_string(id));
}

void Team::run(const std::function<void(RankContext&)>& fn) {
  PB_CHECK(static_cast<bool>(fn), "Team::run needs a callable");
  // acquire: pairs with the release at the end of the previous run (another thread may call).
  PB_CHECK(!running_.exchange(true, std::memory_order_acquire),
           "Team::run called while the team is running (from two threads, or from inside a rank)");
  job_ = &fn;
  remaining_.store(p_, std::memory_order_relaxed);
  // release: job_, remaining_ and everything the caller did before run() reach every worker.
  generation_.fetch_add(1, std::memory_order_release);
  wake_counted(start_word_, start_sleepers_);
  // acquire: pairs with the workers' acq_rel decrements; their writes are visible from here.
  wait_counted(park_wait_, done_word_, done_sleepers_, [&] { return remaining_.load(std::memory_order_acquire) == 0; });
  job_ = nullptr;

  // The outcome is decided and the abort state reset holding abort_busy_: an abort() in flight
  // finishes first (its body is short), and one that arrives meanwhile is left to
  // apply_requested_aborts() below, so it aborts the next run instead of being cleared.
  // seq_cst: the hand-over protocol of apply_requested_aborts().
  while (abort_busy_.exchange(true, std::memory_order_seq_cst)) std::this_thread::yield();
  if (abort_requested_.exchange(false, std::memory_order_seq_cst)) abort_locked();  // asked before now: this run's
  std::exception_ptr error;
  if (aborted_.load(std::memory_order_relaxed)) {
    {
      std::lock_guard<std::mutex> lock(failure_mu_);
      error = root_cause_ ? root_cause_ : first_aborted_;
      root_cause_ = nullptr;
      first_aborted_ = nullptr;
    }
    if (!error) error = std::make_exception_ptr(Aborted());
    if (reset_hook_) reset_hook_();
    mailboxes_.reset();
    aborted_.store(false, std::memory_order_relaxed);  // workers are parked; the next run's release publishes it
  }
  abort_busy_.store(false, std::memory_order_seq_cst);
  apply_requested_aborts();
  // release: the next run() caller, possibly another thread, sees this run's cleanup.
  running_.store(false, std::memory_order_release);
  if (error) std::rethrow_exception(error);
}

}  // namespace postbox
