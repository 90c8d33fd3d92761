// Runs a test's ranks (or roles: a sender, a receiver, an aborter) on std::threads, or on the
// fibers of a Team when POSTBOX_RANKS says fibers (the ctest "fibers" runs, docs/fibers.md):
// one helper so that every concurrency suite runs unchanged in both modes.
#pragma once

#include <exception>
#include <thread>
#include <vector>

#include "postbox/runtime/team.hpp"
#include "postbox/runtime/wait.hpp"

namespace postbox::test {

// True when run_ranks(p, ...) runs its ranks as fibers.
inline bool ranks_are_fibers(int p) { return p >= 1 && resolve_ranks_mode(default_ranks_mode(), p) == RanksMode::fibers; }

// Runs fn(rank) for rank 0..p-1 concurrently, on p std::threads or on p fibers of a Team (not
// pinned; one worker per allowed CPU); returns each rank's exception (null when it returned).
// On fibers a rank must not block its thread on another rank (use yield_rank() to poll).
template <class Fn>
std::vector<std::exception_ptr> run_ranks(int p, Fn fn) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(p));
  if (ranks_are_fibers(p)) {
    TeamOptions o;
    o.ranks = RanksMode::fibers;
    o.pin = false;
    Team team(p, o);
    team.run([&](RankContext& ctx) {
      try {
        fn(ctx.rank());
      } catch (...) {
        errors[static_cast<std::size_t>(ctx.rank())] = std::current_exception();
      }
    });
    return errors;
  }
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

// Gives the CPU to someone else while a rank polls a test's own flag: the worker's other ranks
// when the rank is a fiber (a thread yield would never let them run), the OS otherwise.
inline void yield_rank() {
  if (internal::current_fiber_worker() != nullptr) {
    internal::fiber_yield();
  } else {
    std::this_thread::yield();
  }
}

}  // namespace postbox::test
