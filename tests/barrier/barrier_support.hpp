// Helpers shared by the barrier suites: collect the ranks' exceptions (run_ranks() is in
// tests/support/ranks.hpp), and the configurations every contract test runs over.
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
#include "ranks.hpp"
#include "stuck.hpp"

namespace postbox::test {

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
