// Private: turns a schedule of block transfers into a Plan. Shared by the s-to-p algorithms
// (s2p.cpp) and the C³ routing algorithms (c3.cpp).
//
// A "block" is one operation-level message of `bytes` bytes (a source's message in s-to-p, the
// message from i to j in all-to-all). A transfer moves a set of blocks from one rank to another
// as ONE message (message combining: Hambrusch et al. §2; effective message size: Hambrusch &
// Khokhar §4). Blocks that are contiguous at the sender go straight from their buffer, others
// are packed into scratch first; the receiver lands them in its user buffer when they are
// contiguous there, otherwise in scratch, and copies out the ones it must keep.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "postbox/runtime/plan.hpp"

namespace postbox::internal {

struct Transfer {
  int from = -1;
  int to = -1;
  std::vector<int> blocks;  // sent in this order as one message
};
using Round = std::vector<Transfer>;

struct BlockLayout {
  int p = 0;
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> user_bytes;  // per rank
  // per rank: block -> user-buffer offset where it lies at the start / must lie at the end
  std::vector<std::unordered_map<int, std::uint64_t>> initial;
  std::vector<std::unordered_map<int, std::uint64_t>> final_at;
};

// Rounds run in order; within a round, transfers are independent. With superstep_sync, every
// send of round t also depends on the rank's sends and receives of its latest earlier active
// round (the C³ model's synchronisation between supersteps); without it, only on the data it
// carries (s-to-p: "as soon as a processor has all relevant data, it continues").
Plan plan_from_rounds(std::string op, std::string algo, const BlockLayout& layout,
                      const std::vector<Round>& rounds, bool superstep_sync);

}  // namespace postbox::internal
