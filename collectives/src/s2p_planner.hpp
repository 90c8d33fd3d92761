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

#include <cstddef>
#include <cstdint>
#include <string>
#include <functional>
#include <vector>

#include "postbox/runtime/plan.hpp"

namespace postbox::internal {

struct Transfer {
  int from = -1;
  int to = -1;
  std::vector<int> blocks;  // sent in this order as one message
};
using Round = std::vector<Transfer>;

// Where the blocks are, as functions of (rank, block) rather than tables, so that the C³
// all-to-all over 4096 ranks (16.8 M blocks) costs no memory for its layout.
struct BlockLayout {
  int p = 0;
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> user_bytes;  // per rank
  // The user-buffer offset where block b lies at rank r at the start / must lie at the end,
  // or -1.
  std::function<std::int64_t(int r, int b)> initial_at;
  std::function<std::int64_t(int r, int b)> final_at;
  // The blocks rank r must end with.
  std::function<std::vector<int>(int r)> final_blocks;
};

// The most blocks one transfer of `rounds` moves (0 without transfers): its largest message is
// that many blocks of BlockLayout::bytes.
std::uint64_t largest_transfer(const std::vector<Round>& rounds);

// Rounds run in order; within a round, transfers are independent. With superstep_sync, every
// send of round t also depends on the rank's sends and receives of its latest earlier active
// round (the C³ model's synchronisation between supersteps); without it, only on the data it
// carries (s-to-p: "as soon as a processor has all relevant data, it continues").
Plan plan_from_rounds(std::string op, std::string algo, const BlockLayout& layout,
                      const std::vector<Round>& rounds, bool superstep_sync);

// A round too big to store (the C³ all-to-all 1-lev-dir: p(p − 1) transfers, 64 bytes each as a
// Transfer): `size` transfers, the i-th written by fill(i, out) into a reused Transfer.
struct GeneratedRound {
  std::size_t size = 0;
  std::function<void(std::size_t i, Transfer& out)> fill;
};

// plan_from_rounds() for one generated round: the same plan as if the round were stored.
Plan plan_from_generated_round(std::string op, std::string algo, const BlockLayout& layout, const GeneratedRound& round,
                               bool superstep_sync);

}  // namespace postbox::internal
