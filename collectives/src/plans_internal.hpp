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

// A plan under construction: ops are appended in program order; finish() derives the deps
// from the regions and numbers the messages.
class PlanDraft {
 public:
  PlanDraft(const PlanRequest& req, int root) {
    plan_.op = req.op;
    plan_.algo = req.algo;
    plan_.p = req.p;
    plan_.root = root;
    plan_.bytes = static_cast<std::uint64_t>(req.bytes);
    plan_.elem_bytes = req.elem_bytes;
    plan_.user_bytes.assign(static_cast<std::size_t>(req.p), plan_.bytes);
    plan_.scratch_bytes.assign(static_cast<std::size_t>(req.p), 0);
    plan_.ranks.resize(static_cast<std::size_t>(req.p));
  }
  Plan& plan() { return plan_; }

  void send(int r, int peer, Region a) { push(r, Op{OpCode::send, peer, a, {}, false, 0, {}}); }
  void recv(int r, int peer, Region a) { push(r, Op{OpCode::recv, peer, a, {}, false, 0, {}}); }
  // acc = acc ⊕ in, or in ⊕ acc when in_first.
  void reduce(int r, Region acc, Region in, bool in_first) { push(r, Op{OpCode::reduce, -1, acc, in, in_first, 0, {}}); }
  void copy(int r, Region dst, Region src) { push(r, Op{OpCode::copy, -1, dst, src, false, 0, {}}); }

  Plan finish() {
    derive_dependencies(plan_);
    plan_.finalize();
    return std::move(plan_);
  }

 private:
  void push(int r, Op op) { plan_.ranks[static_cast<std::size_t>(r)].ops.push_back(std::move(op)); }
  Plan plan_;
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
