// Barrier shapes: the arrival (reduction phase) and wake-up (distribution phase) structure of
// every barrier algorithm, in one place. The barrier engine (barrier/) builds its threads' hot
// path from a BarrierShape, and the barrier's plan (arrival and wake-up as messages, run by the
// emulator and exported as GOAL) is built from the same BarrierShape (Cordsen §2: barrier =
// reduction phase + distribution phase). The engine's protocol family (barrier_family()), the
// size of its round flags (barrier_max_send_rounds()) and the cluster barrier's dissemination
// offsets come from here too; the cluster barrier's tree step takes the fibo shape.
//
// Shapes are over indices 0..n-1 (the participants in rank order; the engine maps them to the
// ranks still in the barrier). Every tree is rooted at index 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/collectives/tree.hpp"

namespace postbox {

class Topology;

enum class BarrierAlgorithm { central, dissemination, combine, mcs, tournament, fibo, hier };

// "central", "dissemination", "combine", "mcs", "tournament", "fibo", "hier".
const char* to_string(BarrierAlgorithm algorithm) noexcept;
// The inverse of to_string; nullopt for any other name ("default" included).
std::optional<BarrierAlgorithm> parse_barrier_algorithm(std::string_view name);

struct BarrierShape {
  enum class Family {
    central,  // one counter, one release word
    tree,     // arrival up `arrival`, completion at its root, wake-up down `wakeup`
    rounds,   // Bruck §3 combine rounds (dissemination: λ = 1); every index learns completion itself
  };
  BarrierAlgorithm algorithm = BarrierAlgorithm::central;
  Family family = Family::central;
  int n = 0;

  // central and tree. arrival.children[v]: the indices whose subtrees' arrival v combines, in
  // the order v receives them; wakeup.children[v]: the indices v wakes, in send order. central:
  // both flat (the counter and the release word seen as messages).
  Tree arrival;
  Tree wakeup;
  // tree: how arrivals combine. false: one count per node v (v and its arrival children);
  // true: one two-input match per (v, child) in child order (tournament: v's chain so far
  // against the child's subtree).
  bool match_per_child = false;

  // rounds. Integer postal latency λ (`lambda`), t rounds (the least t with N_λ(t) >= n) and
  // m = max(0, t − λ + 1) send rounds: in send round j (1..m) index i signals
  // i + offset[j−1] (mod n), offset[j−1] = N_λ(j + λ − 2); the signal is received in round
  // j + λ − 1 (Bruck §3.1).
  std::int64_t lambda = 1;
  std::int64_t t = 0;
  std::int64_t m = 0;
  std::vector<std::int64_t> offset;
  // combine: how λ was made an integer (choose_postal: "integer", "delay-recv", "delay-send");
  // dissemination: "integer".
  std::string variant;
};

// The protocol family of an algorithm: central; rounds for dissemination and combine; tree for
// the others. barrier_shape(algorithm, ...).family is this.
BarrierShape::Family barrier_family(BarrierAlgorithm algorithm) noexcept;

// The rounds family: the most send rounds (BarrierShape::m) a shape of `algorithm` over any
// 1..n participants can have, at least 1, so that round flags sized for n serve every rebuild
// after drops. combine: over both integers around λ = 1 + r/s (the ones choose_postal may
// pick), the least t with N_L(t) >= n, minus L − 1. 0 for the other families.
std::int64_t barrier_max_send_rounds(BarrierAlgorithm algorithm, int n, const SendRecv& send_recv);

// The shape of `algorithm` over n >= 1 participants (InputError otherwise).
//  * central: flat arrival and wake-up.
//  * dissemination: rounds with λ = 1 (offsets 1, 2, 4, ...).
//  * combine: rounds with the integer λ that choose_postal(1 + r/s, n) picks (the exact T' vs
//    T'' comparison of Bruck §3.3, the same rule as the postal allreduce).
//  * mcs: arrival along a 4-ary tree (kary:4), wake-up along a binary tree.
//  * tournament: binomial arrival as two-input matches, wake-up along the same tree in reverse
//    round order.
//  * fibo: binomial arrival (Cordsen §3.2), wake-up along the Fibo-tree of s and r (Cordsen §4).
//  * hier: the hier tree of tree.hpp over the topology levels of the placed participants
//    (topology and placement, one PU per index, required), binomial at every level; arrival
//    along it, wake-up along it.
// send_recv gives s and r (fibo, combine); the others ignore it.
// hier with `levels` (not null): the tree of build_hier_tree over its groups and per-level figures
// (binomial at every level), the topology and placement unused.
BarrierShape barrier_shape(BarrierAlgorithm algorithm, int n, const SendRecv& send_recv,
                           const Topology* topology = nullptr, const std::vector<int>* placement = nullptr,
                           const HierLevels* levels = nullptr);

// Messages a shape sends per phase: tree and central 2(n − 1), rounds n·m.
std::int64_t barrier_messages(const BarrierShape& shape);

}  // namespace postbox
