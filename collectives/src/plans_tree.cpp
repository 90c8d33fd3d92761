// Tree plans: broadcast along any tree shape of tree.hpp; reduce and gather along the
// recursive-halving interval tree (plans_internal.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include "plans_internal.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::internal {
namespace {

void split(IntervalTree& t, int lo, int hi, int root) {
  // Iterative over the root's own half, recursive into the other half.
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo + 1) / 2;
    int leader = 0, olo = 0, ohi = 0;
    if (root < mid) {
      leader = mid, olo = mid, ohi = hi;
      hi = mid;
    } else {
      leader = lo, olo = lo, ohi = mid;
      lo = mid;
    }
    t.children[static_cast<std::size_t>(root)].push_back(leader);
    t.parent[static_cast<std::size_t>(leader)] = root;
    t.lo[static_cast<std::size_t>(leader)] = olo;
    t.hi[static_cast<std::size_t>(leader)] = ohi;
    split(t, olo, ohi, leader);
  }
}

Plan build_bcast(const PlanRequest& req) {
  const ShapeSpec shape = ShapeSpec::parse(req.algo);
  const bool hier = shape.kind == ShapeSpec::Kind::hier;
  PlanDraft d(req, req.root);
  d.reserve(2 * static_cast<std::size_t>(req.p - 1));  // a send and a receive per rank but the root
  {  // the tree is freed before the plan is finished: the two would be the run's peak of memory
    const HierPlacement placed(req, hier && !req.hier_levels);
    const Tree tree = hier && req.hier_levels
                          ? build_hier_tree(shape.levels, req.hier_levels->groups, req.p, req.root, model_of(req),
                                            req.hier_levels->models)
                          : build_tree(shape, req.p, req.root, model_of(req), placed.topology(), placed.placement());
    append_tree_bcast(d, tree.parent, tree.children, static_cast<std::uint64_t>(req.bytes));
  }
  return d.finish();
}

Plan build_reduce(const PlanRequest& req) {
  require_elements(req);
  PlanDraft d(req, req.root);
  append_interval_reduce(d, interval_tree(req.p, req.root), static_cast<std::uint64_t>(req.bytes), 0);
  return d.finish();
}

Plan build_gather(const PlanRequest& req) {
  const auto b = static_cast<std::uint64_t>(req.bytes);
  const auto p = static_cast<std::uint64_t>(req.p);
  const IntervalTree t = interval_tree(req.p, req.root);
  PlanDraft d(req, req.root);
  Plan& plan = d.plan();
  plan.user_bytes[static_cast<std::size_t>(req.root)] = p * b;
  for (int v = 0; v < req.p; ++v) {
    const auto& kids = t.children[static_cast<std::size_t>(v)];
    const auto lo = static_cast<std::uint64_t>(t.lo[static_cast<std::size_t>(v)]);
    const auto hi = static_cast<std::uint64_t>(t.hi[static_cast<std::size_t>(v)]);
    const bool root = v == req.root;
    // Blocks of the subtree [lo, hi) are assembled in rank order: at the root straight in its
    // buffer (offset = rank·b), at an inner rank in scratch (offset = (rank − lo)·b).
    const bool staged = !root && !kids.empty();
    const std::uint64_t base = root ? 0 : lo;
    if (staged) {
      plan.scratch_bytes[static_cast<std::size_t>(v)] = (hi - lo) * b;
      d.copy(v, scratch((static_cast<std::uint64_t>(v) - lo) * b, b), user(0, b));
    }
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
      const auto clo = static_cast<std::uint64_t>(t.lo[static_cast<std::size_t>(*it)]);
      const auto chi = static_cast<std::uint64_t>(t.hi[static_cast<std::size_t>(*it)]);
      const Region dst{root ? Buffer::user : Buffer::scratch, (clo - base) * b, (chi - clo) * b};
      d.recv(v, *it, dst);
    }
    if (!root) d.send(v, t.parent[static_cast<std::size_t>(v)], staged ? scratch(0, (hi - lo) * b) : user(0, b));
  }
  return d.finish();
}

}  // namespace

HierPlacement::HierPlacement(const PlanRequest& req, bool hier) : hier_(hier), topology_(req.topology), placement_(req.placement) {
  if (!hier) return;
  if (topology_ == nullptr) {
    static const Topology machine = Topology::machine();
    topology_ = &machine;
  }
  if (placement_ == nullptr) compact_ = topology_->place(Placement::compact(), req.p);
}

IntervalTree interval_tree(int p, int root) {
  IntervalTree t;
  t.parent.assign(static_cast<std::size_t>(p), -1);
  t.children.assign(static_cast<std::size_t>(p), {});
  t.lo.assign(static_cast<std::size_t>(p), 0);
  t.hi.assign(static_cast<std::size_t>(p), p);
  t.lo[static_cast<std::size_t>(root)] = 0;
  t.hi[static_cast<std::size_t>(root)] = p;
  split(t, 0, p, root);
  return t;
}

std::uint64_t interval_tree_largest_child(int p, int root) {
  if (p <= 1) return 0;
  const int mid = (p + 1) / 2;  // split()'s first cut: [0, mid) and [mid, p)
  return static_cast<std::uint64_t>(root < mid ? p - mid : mid);
}

void append_interval_reduce(PlanDraft& d, const IntervalTree& t, std::uint64_t bytes, std::uint64_t scratch_base) {
  Plan& plan = d.plan();
  const int p = plan.p;
  for (int v = 0; v < p; ++v) {
    const auto& kids = t.children[static_cast<std::size_t>(v)];
    auto& sb = plan.scratch_bytes[static_cast<std::size_t>(v)];
    sb = std::max<std::uint64_t>(sb, scratch_base + kids.size() * bytes);
    // Smallest subtree first: each child's interval is adjacent to what v holds so far, on
    // its left (child < v: in ⊕ acc) or on its right (acc ⊕ in).
    std::uint64_t slot = scratch_base;
    for (auto it = kids.rbegin(); it != kids.rend(); ++it, slot += bytes) {
      d.recv(v, *it, scratch(slot, bytes));
      d.reduce(v, user(0, bytes), scratch(slot, bytes), *it < v);
    }
    if (t.parent[static_cast<std::size_t>(v)] >= 0) d.send(v, t.parent[static_cast<std::size_t>(v)], user(0, bytes));
  }
}

void append_tree_bcast(PlanDraft& d, const std::vector<int>& parent, const std::vector<std::vector<int>>& children,
                       std::uint64_t bytes) {
  const int p = d.plan().p;
  for (int v = 0; v < p; ++v) {
    // Zero-copy: received straight into the user buffer, forwarded from it.
    if (parent[static_cast<std::size_t>(v)] >= 0) d.recv(v, parent[static_cast<std::size_t>(v)], user(0, bytes));
    for (int c : children[static_cast<std::size_t>(v)]) d.send(v, c, user(0, bytes));
  }
}

void register_tree_plans() {
  const char* shapes[][2] = {
      {"flat", "the root sends to every rank in turn"},
      {"binary", "binary tree (heap order)"},
      {"kary:K", "K-ary tree (heap order), K >= 2"},
      {"binomial", "binomial tree"},
      {"lambda", "Bruck's lambda-tree by alpha split (lambda:ALPHA fixes alpha; default: look-up table)"},
      {"greedy", "optimal postal/send-receive tree, greedy construction (Bar-Noy & Kipnis)"},
      {"fibo", "Cordsen's Fibo-tree for send latency s and receive latency r"},
      {"hier", "hierarchical: an inner shape per topology level (hier:S1,S2,...)"},
  };
  for (const auto& s : shapes) register_plan_builder("bcast", s[0], s[1], build_bcast);
  register_plan_builder("reduce", "binomial",
                        "recursive halving over rank intervals; rank-ordered, any associative operator", build_reduce);
  register_plan_builder("gather", "binomial",
                        "recursive halving over rank intervals; block i lands at offset i*bytes of the root", build_gather);
}

}  // namespace postbox::internal
