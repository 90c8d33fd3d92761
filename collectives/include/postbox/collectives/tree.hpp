// Tree shapes for one-to-many distribution (broadcast, barrier wake-up) and, reversed, for
// many-to-one (reduce, barrier arrival).
//
// One family of builders serves both papers' vocabularies (docs/postal-model.md, "One model"):
// time is in the send/receive model of Cordsen et al. — a node activated at time a sends to its
// children one after another; the i-th child (counting from 1) is activated at a + i·s + r.
// Bruck's postal model is the same with s = 1 and r = λ − 1, so λ = 1 + r/s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/collectives/rational.hpp"

namespace postbox {

class Topology;

// Send latency s > 0 and receive latency r >= 0, exact.
struct SendRecv {
  Rational s{1};
  Rational r{0};
  // λ = 1 + r/s; InputError where it does not fit 64 bits (s = 0 → PB_CHECK).
  [[nodiscard]] Rational lambda() const;
  // s = 1, r = λ − 1. λ < 1 → InputError.
  static SendRecv from_lambda(const Rational& lambda);
};

// The largest degree K of kary:K (kary:1 is a chain); --help quotes it.
inline constexpr int kMaxKaryDegree = 1'000'000;

// A parsed shape name: flat, binary, kary:K, binomial, lambda (alpha fixed or auto), greedy,
// fibo, hier (inner shape per topology level).
struct ShapeSpec {
  enum class Kind { flat, binary, kary, binomial, lambda, greedy, fibo, hier };
  Kind kind = Kind::binomial;
  int k = 2;                      // kary:K
  std::optional<Rational> alpha;  // lambda: fixed α in (0, 1); nullopt = auto (look-up table)
  std::vector<ShapeSpec> levels;  // hier: inner shape per level, outermost first (empty = binomial)

  // "flat", "binary", "kary:8", "binomial", "lambda", "greedy", "fibo", "hier", "hier:fibo,binomial".
  // Unknown name or bad parameter → InputError.
  static ShapeSpec parse(std::string_view text);
  [[nodiscard]] std::string name() const;
};

struct Tree {
  std::string shape;                      // ShapeSpec::name()
  int p = 0;
  int root = 0;
  SendRecv model;
  std::vector<int> parent;                // parent[root] == -1
  std::vector<std::vector<int>> children; // in send order
  std::vector<Rational> time;             // activation time of each rank (root: 0)
  Rational completion;                    // max over time[]

  // Recomputes time[] and completion from parent/children order and model (a + i·s + r).
  // A time whose exact value leaves 64 bits → InputError naming the shape and p.
  void recompute_times();
};

// Builds `shape` over ranks 0..p-1 rooted at `root`. p < 1, root outside 0..p-1, a model whose
// exact times leave 64 bits (flat over 1000 ranks at s = 123456789.123456789: 999·s needs 67
// bits) → InputError.
// hier needs a topology (with rank i placed on placement[i]); other shapes ignore it.
Tree build_tree(const ShapeSpec& shape, int p, int root, const SendRecv& model,
                const Topology* topology = nullptr, const std::vector<int>* placement = nullptr);

// Roots other than 0: every shape except hier is built over virtual ranks 0..p-1 rooted at 0
// and relabelled v → (v + root) mod p. hier works on the real ranks.
//
// The topology classes of placed ranks, outermost first: groups[l][i] names rank i's class at
// level l = package, NUMA node, L3, core, PU (two ranks share a class at level l when their
// PUs' Topology::distance is at most kSamePackage − l; a class is named by its first member).
// build_tree(hier) and the barrier's choice group ranks with this one function.
std::vector<std::vector<int>> topology_groups(const Topology& topology, const std::vector<int>& placement);
inline constexpr int kGroupLevelL3 = 2;       // index into topology_groups() of the L3 level
inline constexpr int kGroupLevelPackage = 0;  // ... and of the package level

// hier over explicit groups (what build_tree derives from Topology::distance of the placed
// ranks: package, NUMA node, L3, core, PU): groups[l][rank] names rank's class at level l,
// outermost first. Levels that do not refine the one above are dropped; level_shapes[i] is the
// inner shape among the class leaders at the i-th remaining level (the last one repeats; empty =
// binomial). A class's leader is the root for the root's class, else its lowest rank; a leader
// sends to the other classes' leaders (outer levels) before serving its own class.
Tree build_hier_tree(const std::vector<ShapeSpec>& level_shapes, const std::vector<std::vector<int>>& groups,
                     int p, int root, const SendRecv& model);
// The same with per-level latencies (Cordsen §3 with each level's s and r): the tree
// among the class leaders of groups[l] is built from level_models[l] (the last repeats; the
// innermost tree, among ranks that share every class, takes the last one). So a fibo or lambda
// level takes its own s and r (or λ = 1 + r/s), e.g. the figures between processes at the node
// level and those inside a process below it. Empty: `model` everywhere (the overload above).
// time[] and completion are computed with `model` alone. A level model with s <= 0 or r < 0 →
// InputError.
Tree build_hier_tree(const std::vector<ShapeSpec>& level_shapes, const std::vector<std::vector<int>>& groups,
                     int p, int root, const SendRecv& model, const std::vector<SendRecv>& level_models);

// Explicit classes and per-level figures for hier, instead of a topology and a placement: the
// arguments of build_hier_tree (groups[l][rank] outermost first, models[l] among level l's class
// leaders). A job across processes takes cluster_groups() with the inter-process s and r at
// level 0 (cluster::job_hier_levels); plans (PlanRequest::hier_levels) and barrier shapes
// build their hier tree from it.
struct HierLevels {
  std::vector<std::vector<int>> groups;
  std::vector<SendRecv> models;
};

// The groups of a job of `processes` × `threads` ranks, global rank process·threads + thread, for
// build_hier_tree: level 0 the process (a node of a cluster), then `inside`'s levels, each
// naming thread t's class within its process (inside[l][t], e.g. topology_groups() of the
// threads' placement). processes < 1, threads < 1 or too many ranks → InputError.
std::vector<std::vector<int>> cluster_groups(int processes, int threads, const std::vector<std::vector<int>>& inside = {});

// The greedy two-queue O(n) construction, generalised to (s, r): repeatedly the earliest-free
// node (the smaller front of the "old" and "new" queues; the old one on a tie) sends to a new
// node. Ranks are numbered in activation order; rooted at 0. Completion = s·T_λ(p).
Tree greedy_two_queue_tree(int p, const SendRecv& model);

// The bottom-up construction (§2.3, §2.5): the table N'(0..T') of eq. 2 generalised to (s, r) is
// built in O(T') = O(f·log n) time and space; the tree is then implicit. Node v's subtree is
// the rank interval [v, v + size); its root sends first to the leader of S'' = the last
// size − n' ranks, with n' = min(N'(B − s), size − 1) where B is the time budget left (S' fully
// loaded, Bruck's n_max). parent()/time() answer in O(depth) without materialising anything.
class LambdaTreeTable {
 public:
  static LambdaTreeTable build(std::int64_t n, const SendRecv& model);

  [[nodiscard]] std::int64_t n() const noexcept { return n_; }
  [[nodiscard]] Rational completion() const;  // s·T_λ(n)
  [[nodiscard]] std::int64_t parent(std::int64_t v) const;  // −1 for the root 0
  [[nodiscard]] Rational time(std::int64_t v) const;
  [[nodiscard]] std::size_t table_size() const noexcept { return table_.size(); }
  // The explicit tree, O(n).
  [[nodiscard]] Tree materialize() const;

 private:
  std::int64_t n_ = 0;
  std::int64_t s_ = 1, r_ = 0;  // in quanta
  std::int64_t quantum_num_ = 1, quantum_den_ = 1;  // one quantum in model units
  std::int64_t budget_ = 0;     // T' in quanta
  std::vector<std::int64_t> table_;
  SendRecv model_;
};

}  // namespace postbox
