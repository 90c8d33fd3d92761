// Private helpers shared by the plan builders (plans_*.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/plan.hpp"

namespace postbox {
class Topology;
}

namespace postbox::internal {

// A plan under construction for a request (runtime's PlanDraft: ops appended in any rank order;
// finish() derives the deps from the regions and numbers the messages).
class PlanDraft : public postbox::PlanDraft {
 public:
  PlanDraft(const PlanRequest& req, int root)
      : postbox::PlanDraft(req.op, req.algo, req.p, root, static_cast<std::uint64_t>(req.bytes), req.elem_bytes) {}
};

inline Region user(std::uint64_t offset, std::uint64_t bytes) { return Region{Buffer::user, offset, bytes}; }
inline Region scratch(std::uint64_t offset, std::uint64_t bytes) { return Region{Buffer::scratch, offset, bytes}; }

// The topology and rank → PU placement a hier shape is built on: the request's, else this
// machine and a compact placement of the p ranks. When `hier` is false, the request's
// (possibly null) pointers pass through untouched.
class HierPlacement {
 public:
  HierPlacement(const PlanRequest& req, bool hier);
  HierPlacement(const HierPlacement&) = delete;
  HierPlacement& operator=(const HierPlacement&) = delete;
  [[nodiscard]] const Topology* topology() const { return topology_; }
  [[nodiscard]] const std::vector<int>* placement() const { return placement_ != nullptr || !hier_ ? placement_ : &compact_; }

 private:
  bool hier_;
  const Topology* topology_;
  const std::vector<int>* placement_;
  std::vector<int> compact_;
};

// bytes must be a whole number of elements (ops that combine).
void require_elements(const PlanRequest& req);

// The recursive-halving tree over rank intervals (Bruck §2.1's binomial-tree broadcast):
// [lo, hi) with its root r is split into halves of ⌈n/2⌉ and ⌊n/2⌋ ranks; the root sends to
// a leader of the other half (its lowest rank), then both halves recurse. Every subtree is a
// contiguous interval of ranks, so a reduce along it combines in rank order and a gather
// receives whole contiguous blocks.
struct IntervalTree {
  std::vector<int> parent;                 // -1 at the root
  std::vector<std::vector<int>> children;  // in broadcast send order (largest subtree first)
  std::vector<int> lo, hi;                 // subtree of v = ranks [lo[v], hi[v])
};
IntervalTree interval_tree(int p, int root);
// The most ranks a child's subtree of interval_tree(p, root) holds: the other half of the first
// split, ⌊p/2⌋ when the root is in the lower half [0, ⌈p/2⌉), else ⌈p/2⌉ (0 for p = 1).
// Every other subtree lies inside a half. A gather's largest message is that many blocks.
std::uint64_t interval_tree_largest_child(int p, int root);

// Appends a rank-ordered reduce of user[0, bytes) to `root` along the interval tree; scratch
// slots start at scratch_base (one per child).
void append_interval_reduce(PlanDraft& d, const IntervalTree& t, std::uint64_t bytes, std::uint64_t scratch_base);
// Appends a broadcast of user[0, bytes) from the tree's root.
void append_tree_bcast(PlanDraft& d, const std::vector<int>& parent, const std::vector<std::vector<int>>& children,
                       std::uint64_t bytes);

void register_tree_plans();
void register_allreduce_plans();
void register_barrier_plans();

}  // namespace postbox::internal
