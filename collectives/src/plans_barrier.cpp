// Barrier plans: every barrier algorithm's arrival and wake-up as messages, built from
// barrier_shape(), the structure the barrier engine builds its threads' hot path from
// (docs/plans.md, "barrier").
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "plans_internal.hpp"
#include "postbox/collectives/barrier_shape.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::internal {
namespace {

// Every message carries the request's `bytes` (0: a pure notification) from and into the
// token, user[0, bytes). Each rank forwards what its last receive brought, so
// derive_dependencies() orders a rank's ops as the barrier needs (a 0-byte region still marks
// its place, runtime/plan.cpp), in every executor, the emulator included.
struct Draft {
  PlanDraft& d;
  Region token;
  std::uint64_t stride;  // scratch bytes per fold (at least 1, so every fold has its own place)

  // `from`'s signal lands in its own scratch slot, so receives from different peers complete
  // in whatever order they arrive; the copies onto the token keep program order.
  void fold(int v, int from, std::uint64_t& slot) {
    const Region in = scratch(slot * stride, token.bytes);
    d.recv(v, from, in);
    d.copy(v, token, in);
    ++slot;
  }
  void scratch_used(int v, std::uint64_t slots) { d.plan().scratch_bytes[static_cast<std::size_t>(v)] = slots * stride; }
};

// central and tree: arrival child → parent along `arrival` (children in its order); the phase
// completes at index 0 after its last fold; wake-up parent → child along `wakeup` in send order.
void append_tree_barrier(Draft& x, const BarrierShape& s) {
  for (int v = 0; v < s.n; ++v) {
    const auto i = static_cast<std::size_t>(v);
    std::uint64_t slot = 0;
    for (int c : s.arrival.children[i]) x.fold(v, c, slot);
    if (s.arrival.parent[i] >= 0) x.d.send(v, s.arrival.parent[i], x.token);
    if (s.wakeup.parent[i] >= 0) x.d.recv(v, s.wakeup.parent[i], x.token);
    for (int c : s.wakeup.children[i]) x.d.send(v, c, x.token);
    x.scratch_used(v, slot);
  }
}

// rounds (Bruck §3.1): in round k (1..t) index i first sends (send round k, if k <= m) to
// i + offset[k−1], then receives what i − offset[j−1] sent in send round j = k − λ + 1.
void append_rounds_barrier(Draft& x, const BarrierShape& s) {
  const std::int64_t n = s.n;
  for (std::int64_t i = 0; i < n; ++i) {
    const int v = static_cast<int>(i);
    std::uint64_t slot = 0;
    for (std::int64_t k = 1; k <= s.t; ++k) {
      if (k <= s.m) x.d.send(v, static_cast<int>((i + s.offset[static_cast<std::size_t>(k - 1)]) % n), x.token);
      const std::int64_t j = k - s.lambda + 1;
      if (j >= 1 && j <= s.m) {
        const std::int64_t off = s.offset[static_cast<std::size_t>(j - 1)];
        x.fold(v, static_cast<int>(((i - off) % n + n) % n), slot);
      }
    }
    x.scratch_used(v, slot);
  }
}

Plan build_barrier(const PlanRequest& req) {
  const auto algorithm = parse_barrier_algorithm(req.algo);
  if (!algorithm) throw InputError("barrier/" + req.algo + ": barrier algorithms take no parameter");
  const HierPlacement placed(req, *algorithm == BarrierAlgorithm::hier && !req.hier_levels);
  const BarrierShape shape =
      barrier_shape(*algorithm, req.p, model_of(req), placed.topology(), placed.placement(), req.hier_levels.get());
  PlanDraft d(req, -1);
  d.plan().elem_bytes = 1;  // nothing is combined: copies of whole messages
  const auto bytes = static_cast<std::uint64_t>(req.bytes);
  Draft x{d, user(0, bytes), std::max<std::uint64_t>(bytes, 1)};
  if (shape.family == BarrierShape::Family::rounds) append_rounds_barrier(x, shape);
  else append_tree_barrier(x, shape);
  return d.finish();
}

}  // namespace

void register_barrier_plans() {
  const char* algos[][2] = {
      {"central", "flat arrival at rank 0, flat wake-up from it (one counter and one release word as messages)"},
      {"dissemination", "Bruck's combine rounds with lambda = 1: rank i signals i + 2^j in round j"},
      {"combine", "Bruck's combine rounds for the integer lambda of the postal allreduce (choose_postal)"},
      {"mcs", "arrival up a 4-ary tree, wake-up down a binary tree"},
      {"tournament", "binomial arrival as two-input matches, wake-up down the same tree in reverse order"},
      {"fibo", "binomial arrival (Cordsen's reduction phase), wake-up down the Fibo-tree of s and r"},
      {"hier", "arrival and wake-up along the hier tree of the topology levels (binomial at every level)"},
  };
  for (const auto& a : algos) register_plan_builder("barrier", a[0], a[1], build_barrier);
}

}  // namespace postbox::internal
