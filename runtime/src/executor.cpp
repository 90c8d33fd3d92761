#include "postbox/runtime/executor.hpp"

#include <cstring>
#include <string>

#include "postbox/runtime/check.hpp"

namespace postbox {

PlanExecutor::PlanExecutor(std::shared_ptr<const Plan> plan) : plan_(std::move(plan)) {
  PB_CHECK(plan_ != nullptr, "PlanExecutor: null plan");
  const auto problem = validate(*plan_);
  PB_CHECK(!problem, "PlanExecutor: invalid plan: " + problem.value_or(""));
  scratch_.resize(static_cast<std::size_t>(plan_->p));
  for (int r = 0; r < plan_->p; ++r) {
    scratch_[static_cast<std::size_t>(r)].resize(plan_->scratch_bytes[static_cast<std::size_t>(r)]);
    for (const OpView op : plan_->ops(r)) has_reduce_ = has_reduce_ || op.code == OpCode::reduce;
  }
}

void PlanExecutor::check(Team& team, const ReduceFn* op) const {
  const Plan& plan = *plan_;
  const std::string name = plan.op + "/" + plan.algo;
  if (team.size() != plan.p) {
    throw InputError(name + ": plan for p = " + std::to_string(plan.p) + " run on a team of " + std::to_string(team.size()));
  }
  if (has_reduce_) {
    if (op == nullptr || op->fn == nullptr) throw InputError(name + " combines values but no reduce operator was given");
    if (op->elem_bytes != plan.elem_bytes) {
      throw InputError(name + ": reduce operator works on " + std::to_string(op->elem_bytes) + "-byte elements, plan on " +
                       std::to_string(plan.elem_bytes));
    }
  }
  // Refused even where this p has nothing to combine, so the answer does not depend on p.
  if (plan.needs_commutative && op != nullptr && !op->commutative) {
    throw InputError(name + " combines cyclic windows and needs a commutative operator; use an order-preserving "
                            "algorithm (recursive-doubling, reduce-bcast) for this one");
  }
  const std::uint64_t ring = team.mailboxes().options().ring_bytes;
  // relaxed: rings_ok_ caches a pure function of (plan, ring); see the member's comment.
  if (rings_ok_.load(std::memory_order_relaxed) != ring) {
    if (const auto problem = validate_rings(plan, ring)) {
      throw InputError(name + " needs mailbox rings of at least " + std::to_string(ring_bytes_needed(plan)) +
                       " bytes (team has " + std::to_string(ring) + "): " + *problem);
    }
    rings_ok_.store(ring, std::memory_order_relaxed);
  }
}

void PlanExecutor::run_rank(RankContext& ctx, std::span<std::byte> user, const ReduceFn* op) {
  check(ctx.team(), op);
  const int rank = ctx.rank();
  const Plan& plan = *plan_;
  if (user.size() < plan.user_bytes[static_cast<std::size_t>(rank)]) {
    throw InputError(plan.op + "/" + plan.algo + ": rank " + std::to_string(rank) + " buffer has " +
                     std::to_string(user.size()) + " bytes, plan needs " +
                     std::to_string(plan.user_bytes[static_cast<std::size_t>(rank)]));
  }
  std::byte* const base[2] = {user.data(), scratch_[static_cast<std::size_t>(rank)].data()};
  auto at = [&](const Region& g) { return base[static_cast<std::size_t>(g.buffer)] + g.offset; };
  for (const OpView o : plan.ops(rank)) {
    switch (o.code) {
      case OpCode::send:
        ctx.send(o.peer, {at(o.a), o.a.bytes});
        break;
      case OpCode::recv: {
        const std::size_t n = ctx.recv(o.peer, {at(o.a), o.a.bytes});
        PB_CHECK(n == o.a.bytes, "executor: message of " + std::to_string(n) + " bytes where the plan expects " +
                                     std::to_string(o.a.bytes));
        break;
      }
      case OpCode::reduce:
        if (o.a.bytes != 0) {
          std::byte* acc = at(o.a);
          const std::byte* in = at(o.b);
          const std::size_t count = o.a.bytes / plan.elem_bytes;
          if (o.src_first) op->fn(in, acc, acc, count, op->state);
          else op->fn(acc, in, acc, count, op->state);
        }
        break;
      case OpCode::copy:
        if (o.a.bytes != 0 && !(o.a == o.b)) std::memcpy(at(o.a), at(o.b), o.a.bytes);
        break;
    }
  }
}

void PlanExecutor::run(Team& team, std::span<const std::span<std::byte>> users, const ReduceFn* op) {
  PB_CHECK(users.size() == static_cast<std::size_t>(plan_->p), "PlanExecutor::run: one buffer per rank");
  check(team, op);
  team.run([&](RankContext& ctx) { run_rank(ctx, users[static_cast<std::size_t>(ctx.rank())], op); });
}

}  // namespace postbox
