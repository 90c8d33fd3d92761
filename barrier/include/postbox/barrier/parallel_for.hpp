// parallel_for on a postbox::Team: a static partition of [begin, end) into one contiguous block
// per rank, and a barrier between phases.
//
//   postbox::Team team(p);
//   postbox::parallel_for(team, 0, n, [&](std::int64_t i) { y[i] = f(x[i]); });
//   // many phases in one team run, a barrier between consecutive phases:
//   postbox::parallel_for_phases(team, sweeps, 1, n - 1, [&](int phase, std::int64_t i) { ... });
//   // the same with the rank's whole block per call, for a loop the compiler can vectorise:
//   postbox::parallel_for_phases(team, sweeps, 1, n - 1, [&](int phase, postbox::Block b) {
//     for (std::int64_t i = b.lo; i < b.hi; ++i) ...
//   });
//
// Partition: with n = end − begin and p ranks, rank r gets [begin + r·q + min(r, m),
// ... + q + (r < m)), q = n / p, m = n mod p: the first m blocks hold one more index.
//
// Memory ordering: everything body did in phase k (on any rank) is visible to every body call
// of phase k + 1 and to the caller after the call returns (the barrier's and Team::run's
// guarantees). An exception from body in phase k: that rank still arrives at phase k's
// barrier, then every rank stops after it and Team::run rethrows the exception; nobody hangs.
// Any other failure of a rank (or Team::abort()) aborts the barrier through the Team's abort
// listener, so the ranks waiting in it leave with postbox::Aborted and Team::run rethrows the
// root cause; a barrier passed in is then aborted for good (BarrierBase::abort).
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "postbox/barrier/barrier.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox {

// [lo, hi) of rank `rank` of p in the static partition of [begin, end).
struct Block {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};
inline Block static_block(std::int64_t begin, std::int64_t end, int rank, int p) {
  PB_CHECK(p >= 1 && rank >= 0 && rank < p, "static_block: rank outside 0..p-1");
  const std::int64_t n = std::max<std::int64_t>(0, end - begin);
  const std::int64_t q = n / p;
  const std::int64_t m = n % p;
  const std::int64_t lo = begin + rank * q + std::min<std::int64_t>(rank, m);
  return {lo, lo + q + (rank < m ? 1 : 0)};
}

// The barrier parallel_for uses for a team: postbox::Barrier over its ranks, told the team's
// topology and placement.
inline Barrier team_barrier(const Team& team, BarrierOptions options = {}) {
  options.topology = std::make_shared<const Topology>(team.topology());
  options.placement = team.placement();
  return Barrier(team.size(), std::move(options));
}

namespace detail {
// One rank's part of phase k. Not inlined into the try block below: there GCC 12 at -O3 leaves
// the body's loop-invariant loads in the loop and neither vectorises it nor keeps its constants
// in registers; compiled as a function of its own, the loop gets what the same loop written by
// hand gets (docs/barrier.md, "parallel_for").
template <class Body>
[[gnu::noinline]] void run_phase(Body& body, int k, Block b) {
  if constexpr (std::is_invocable_v<Body&, int, Block>) {
    body(k, b);
  } else {
    for (std::int64_t i = b.lo; i < b.hi; ++i) body(k, i);
  }
}
}  // namespace detail

// Runs `phases` phases in one team run: in phase k every rank calls body(k, i) for each i of its
// block — or body(k, block) once, when body takes a Block — then waits at the barrier; phase
// k + 1 starts once every rank has finished phase k.
template <class Body>
void parallel_for_phases(Team& team, BarrierBase& barrier, int phases, std::int64_t begin,
                         std::int64_t end, Body&& body) {
  PB_CHECK(barrier.size() == team.size(), "parallel_for: the barrier must have one rank per team rank");
  // The phase in which a body threw; a rank leaving an earlier phase may already see it.
  std::atomic<int> failed_phase{phases};
  // A rank that fails where it cannot arrive must not leave the others blocked in the barrier.
  struct Listener {
    Team& team;
    Team::ListenerId id;
    ~Listener() { team.remove_abort_listener(id); }
  } listener{team, team.add_abort_listener([&barrier] { barrier.abort(); })};
  team.run([&](RankContext& ctx) {
    const Block b = static_block(begin, end, ctx.rank(), team.size());
    for (int k = 0; k < phases; ++k) {
      std::exception_ptr error;
      try {
        detail::run_phase(body, k, b);
      } catch (...) {
        error = std::current_exception();
        // relaxed: published by this rank's arrival below. Every rank that fails does so in
        // the same phase k (nobody passes phase k's barrier into k + 1 after a failure).
        failed_phase.store(k, std::memory_order_relaxed);
      }
      barrier.arrive_and_wait(ctx.rank());
      if (error) std::rethrow_exception(error);
      // relaxed: written before the failing rank arrived at phase k, which this rank acquired.
      if (failed_phase.load(std::memory_order_relaxed) <= k) return;
    }
  });
}

template <class Body>
void parallel_for_phases(Team& team, int phases, std::int64_t begin, std::int64_t end, Body&& body) {
  Barrier barrier = team_barrier(team);
  parallel_for_phases(team, barrier, phases, begin, end, static_cast<Body&&>(body));
}

// One phase: body(i) for every i in [begin, end), done on return.
template <class Body>
void parallel_for(Team& team, std::int64_t begin, std::int64_t end, Body&& body) {
  team.run([&](RankContext& ctx) {
    const Block b = static_block(begin, end, ctx.rank(), team.size());
    for (std::int64_t i = b.lo; i < b.hi; ++i) body(i);
  });
}

}  // namespace postbox
