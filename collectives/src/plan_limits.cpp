// Up-front size of a plan (plans.hpp: plan_message_bound), so a request whose plan cannot fit
// in memory is refused before it is built.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/limits.hpp"

namespace postbox {
namespace {

std::uint64_t ceil_log2(std::uint64_t p) {
  std::uint64_t k = 0;
  while ((std::uint64_t{1} << k) < p) ++k;
  return k;
}

constexpr std::uint64_t kBytesPerRank = 160;

}  // namespace

std::uint64_t plan_message_bound(const PlanRequest& req) {
  if (req.p < 1) return 0;
  const auto p = static_cast<std::uint64_t>(req.p);
  const std::string family = req.algo.substr(0, req.algo.find(':'));
  const std::uint64_t tree = p;                             // every rank receives about once
  const std::uint64_t rounds = p * (ceil_log2(p) + 2);      // a partner per rank per round
  const std::uint64_t all_pairs = p * (p - 1);
  if (req.op == "bcast" || req.op == "reduce" || req.op == "gather" || req.op == "one-to-one") return tree;
  if (req.op == "allreduce" || req.op == "one-to-all" || req.op == "all-to-one" || req.op == "barrier") return 2 * rounds;
  if (req.op == "s2p") return family == "xor" ? all_pairs : rounds;
  if (req.op == "all-to-all") {
    if (family == "1-lev-dir" || family == "1-lev-perm") return all_pairs;
    // Two or three hops through rows, columns or square submachines: about 3·p·√p.
    const auto root = static_cast<std::uint64_t>(std::ceil(std::sqrt(static_cast<double>(p))));
    return family == "logp-lev-bfly" ? rounds : 3 * p * (root + 1);
  }
  return 0;  // an op registered elsewhere: no estimate
}

void check_plan_memory(const PlanRequest& req) {
  const std::uint64_t messages = plan_message_bound(req);
  // Every plan holds at least a few dozen bytes per rank, and building it about as much again
  // (docs/plans.md); plans that grow faster than their bound check again as they are built.
  const std::uint64_t bytes = std::max(messages * kPlanBytesPerMessage, static_cast<std::uint64_t>(req.p) * kBytesPerRank);
  require_memory(bytes, req.op + "/" + req.algo + " over " + std::to_string(req.p) +
                                                      " ranks (up to " + std::to_string(messages) + " messages)");
}

}  // namespace postbox
