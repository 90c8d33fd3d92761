// Helpers shared by the barrier suites: run p ranks on std::threads, collect their exceptions,
// and the configurations every contract test runs over.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "postbox/barrier/barrier.hpp"
#include "postbox/runtime/team.hpp"
#include "postbox/runtime/topology.hpp"
#include "stuck.hpp"

namespace postbox::test {

// Runs fn(rank) on p std::threads, or on p fibers of a Team when POSTBOX_RANKS says fibers
// (the "fibers" ctest runs); returns each rank's exception (null when it returned).
template <class Fn>
std::vector<std::exception_ptr> run_ranks(int p, Fn fn) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(p));
  if (p >= 1 && resolve_ranks_mode(default_ranks_mode(), p) == RanksMode::fibers) {
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

inline void expect_no_errors(const std::vector<std::exception_ptr>& errors) {
  for (std::size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r]) continue;
    try {
      std::rethrow_exception(errors[r]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << r << " threw: " << e.what();
    }
  }
}

// Options for a barrier under test: given s and r where the algorithm uses them (so no test
// depends on this machine's calibration), a synthetic two-package topology for hier.
inline BarrierOptions test_options(const std::string& name) {
  BarrierOptions o;
  o.send_recv = SendRecv{Rational(1), Rational(2)};  // λ = 3
  if (name == "hier") o.topology = std::make_shared<const Topology>(Topology::synthetic("pack:2 core:4 pu:2"));
  return o;
}

}  // namespace postbox::test
