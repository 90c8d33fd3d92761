// A worker thread that runs several ranks as Boost.Context fibers (fcontext), for Team's
// RanksMode::fibers. Internal to the runtime; design and measurements: docs/fibers.md.
//
// The worker's own stack is the scheduler: it resumes one rank at a time; a rank runs until it
// returns or waits (wait_until() on a fiber calls fiber_wait(), which records the wait and
// switches back here). The scheduler polls the waiting ranks' predicates and resumes a rank only
// once its predicate holds, so a rank is never switched in to find that it still cannot go on.
// Ranks parked between runs (fiber_park()) leave the polled list: the worker polls the first
// parked rank only, and makes them all ready together once it may go on.
// When every rank waits, the worker spins, yields, then blocks on the process-wide epoch word
// (see wait.hpp). One worker, one thread: its ranks never migrate.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "postbox/runtime/wait.hpp"

namespace postbox::internal {

class FiberWorker;
// The running rank fiber of this thread, as an identity for per-fiber state (the delay
// injector's sequence); null outside rank fibers and on a worker's scheduler stack.
const void* current_fiber() noexcept;

class FiberWorker {
 public:
  // stack_bytes: each fiber's stack, plus one guard page below it.
  explicit FiberWorker(std::size_t stack_bytes);
  ~FiberWorker();
  FiberWorker(const FiberWorker&) = delete;
  FiberWorker& operator=(const FiberWorker&) = delete;

  // Adds a fiber that runs body() for `rank`; body must not throw (std::terminate otherwise).
  // Only before run().
  void add(int rank, std::function<void()> body);
  // On the worker's thread: runs the fibers until every one has returned. `idle` is how the
  // worker waits while all of them wait.
  void run(const WaitPolicy& idle);

  // On a fiber of this worker (wait_until()): see fiber_wait() in wait.hpp.
  int wait(const FiberWait& w);
  // On a fiber of this worker: see fiber_park() in wait.hpp.
  int park(const FiberWait& w);
  // On a fiber of this worker: suspends it, ready; the others run first (fiber_yield()).
  void yield();

  // On a fiber of this worker: marks the running rank as inside a run (Team: around fn) or not;
  // waiting_ranks() names only ranks inside a run, not those parked between runs.
  void set_in_run(bool in_run) noexcept;
  // The running fiber's slot (an identity for per-fiber state), null on the scheduler's stack.
  [[nodiscard]] const void* running() const noexcept { return current_; }
  // "rank 3, rank 5" for the ranks now suspended in a wait inside a run; a racy snapshot for
  // diagnostics.
  [[nodiscard]] std::string waiting_ranks() const;

  struct Slot;

 private:
  void resume(Slot& s);
  // On fiber s: back to the scheduler's stack, annotated for TSan and ASan.
  void switch_to_scheduler(Slot& s);
  bool poll();
  void unpark_if_ready();
  void idle_wait(const WaitPolicy& idle);
  bool any_ready() const;
  void block();

  std::size_t stack_bytes_;
  std::vector<std::unique_ptr<Slot>> slots_;
  // The fibers the scheduler polls, in rank order, and those parked between runs (park order).
  std::vector<Slot*> active_;
  std::vector<Slot*> parked_;
  Slot* current_ = nullptr;
  std::size_t live_ = 0;
  void* tsan_main_ = nullptr;
  // AddressSanitizer: the scheduler's (the worker thread's) stack and its saved fake stack.
  const void* main_stack_bottom_ = nullptr;
  std::size_t main_stack_size_ = 0;
  void* main_fake_stack_ = nullptr;
};

}  // namespace postbox::internal
