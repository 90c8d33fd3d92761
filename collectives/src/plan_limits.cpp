// Up-front size of a plan (plans.hpp: plan_message_bound), so a request whose plan cannot fit
// in memory is refused before it is built; and its largest message (oversized_message), so a
// request whose plan would combine blocks into a message above 1 GiB is refused before it is
// built as well.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plans_internal.hpp"
#include "postbox/collectives/c3.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/runtime/limits.hpp"

namespace postbox {
namespace {

std::uint64_t ceil_log2(std::uint64_t p) {
  std::uint64_t k = 0;
  while ((std::uint64_t{1} << k) < p) ++k;
  return k;
}

constexpr std::uint64_t kBytesPerRank = 160;

// "<op>/<algo> would send a message of N bytes (K blocks of B bytes); the largest message is
// 1 GiB (...)" when `blocks` blocks of `block_bytes` exceed kMaxPlanBytes, else nullopt.
std::optional<std::string> message_over_limit(const std::string& op, const std::string& algo, std::uint64_t blocks,
                                              std::uint64_t block_bytes) {
  const auto limit = static_cast<std::uint64_t>(kMaxPlanBytes);
  if (block_bytes == 0 || blocks <= limit / block_bytes) return std::nullopt;
  return op + "/" + algo + " would send a message of " + std::to_string(blocks * block_bytes) + " bytes (" +
         std::to_string(blocks) + " blocks of " + std::to_string(block_bytes) +
         " bytes); the largest message is 1 GiB (" + std::to_string(limit) + " bytes)";
}

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

std::optional<std::string> oversized_message(const PlanRequest& req) {
  if (req.p < 1 || req.bytes <= 0) return std::nullopt;
  const auto b = static_cast<std::uint64_t>(req.bytes);
  const auto p = static_cast<std::uint64_t>(req.p);
  // `blocks` blocks of b bytes fit in one message.
  const auto fits = [b](std::uint64_t blocks) { return blocks <= static_cast<std::uint64_t>(kMaxPlanBytes) / b; };
  std::uint64_t blocks = 1;  // bcast, reduce, allreduce, barrier: no message holds more than bytes
  if (req.op == "gather") {
    blocks = internal::interval_tree_largest_child(req.p, req.root);
  } else if (req.op == "s2p") {
    // A message carries each source's block at most once, and there are at most p sources:
    // the schedule is computed only where the blocks could add up past the limit.
    if (fits(p)) return std::nullopt;
    const Mesh mesh = s2p_request_mesh(req);
    const std::vector<int> sources = s2p_request_sources(req, mesh);
    if (fits(sources.size())) return std::nullopt;
    blocks = s2p_largest_message_blocks(S2PRequest{req.algo, mesh, sources, b});
  } else if (is_c3_op(req.op)) {
    // The same for the C³ ops' p blocks (all-to-all: p² blocks, p <= 4096).
    if (fits(req.op == "all-to-all" ? p * p : p)) return std::nullopt;
    blocks = c3_largest_message_blocks(c3_request(req));
  }
  return message_over_limit(req.op, req.algo, blocks, b);
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
