#include "postbox/runtime/executor.hpp"

#include <cstring>
#include <string>

#include "postbox/runtime/check.hpp"

namespace postbox {

PlanExecutor::PlanExecutor(std::shared_ptr<const Plan> plan)
    : PlanExecutor(plan, 0, plan == nullptr ? 0 : plan->p) {}

PlanExecutor::PlanExecutor(std::shared_ptr<const Plan> plan, int first, int count) : plan_(std::move(plan)), first_(first) {
  PB_CHECK(plan_ != nullptr, "PlanExecutor: null plan");
  const auto problem = validate(*plan_);
  PB_CHECK(!problem, "PlanExecutor: invalid plan: " + problem.value_or(""));
  PB_CHECK(first >= 0 && count >= 0 && first <= plan_->p - count, "PlanExecutor: ranks outside the plan");
  scratch_.resize(static_cast<std::size_t>(count));
  for (int r = first; r < first + count; ++r)
    scratch_[static_cast<std::size_t>(r - first)].resize(plan_->scratch_bytes[static_cast<std::size_t>(r)]);
  // Whether any rank reduces: check_op() refuses a missing operator alike on every rank.
  for (int r = 0; r < plan_->p && !has_reduce_; ++r)
    for (const OpView op : plan_->ops(r)) has_reduce_ = has_reduce_ || op.code == OpCode::reduce;
}

namespace {
// The plan's name for a message: built only on the way to a throw, never on the hot path.
std::string name_of(const Plan& plan) { return plan.op + "/" + plan.algo; }
}  // namespace

void PlanExecutor::check(Team& team, const ReduceFn* op) const {
  const Plan& plan = *plan_;
  if (team.size() != plan.p) {
    throw InputError(name_of(plan) + ": plan for p = " + std::to_string(plan.p) + " run on a team of " + std::to_string(team.size()));
  }
  check_op(op);
  const std::uint64_t ring = team.mailboxes().options().ring_bytes;
  // relaxed: rings_ok_ caches a pure function of (plan, ring); see the member's comment.
  if (rings_ok_.load(std::memory_order_relaxed) != ring) {
    if (const auto problem = validate_rings(plan, ring)) {
      throw InputError(name_of(plan) + " needs mailbox rings of at least " + std::to_string(ring_bytes_needed(plan)) +
                       " bytes (team has " + std::to_string(ring) + "): " + *problem);
    }
    rings_ok_.store(ring, std::memory_order_relaxed);
  }
}

void PlanExecutor::check_op(const ReduceFn* op) const {
  const Plan& plan = *plan_;
  if (has_reduce_) {
    if (op == nullptr || op->fn == nullptr) throw InputError(name_of(plan) + " combines values but no reduce operator was given");
    if (op->elem_bytes != plan.elem_bytes) {
      throw InputError(name_of(plan) + ": reduce operator works on " + std::to_string(op->elem_bytes) + "-byte elements, plan on " +
                       std::to_string(plan.elem_bytes));
    }
  }
  // Refused even where this p has nothing to combine, so the answer does not depend on p.
  if (plan.needs_commutative && op != nullptr && !op->commutative) {
    throw InputError(name_of(plan) + " combines cyclic windows and needs a commutative operator; use an order-preserving "
                            "algorithm (recursive-doubling, reduce-bcast) for this one");
  }
}

// One program, two ways for its messages to travel: the team's mailboxes (inlined, the hot path
// of every thread run) and a Transport.
template <class Send, class Recv>
void PlanExecutor::run_program(int rank, std::span<std::byte> user, const ReduceFn* op, Send&& send, Recv&& recv) {
  const Plan& plan = *plan_;
  PB_CHECK(rank >= first_ && rank - first_ < static_cast<int>(scratch_.size()),
           "PlanExecutor: rank " + std::to_string(rank) + " is not one this executor runs");
  if (user.size() < plan.user_bytes[static_cast<std::size_t>(rank)]) {
    throw InputError(name_of(plan) + ": rank " + std::to_string(rank) + " buffer has " +
                     std::to_string(user.size()) + " bytes, plan needs " +
                     std::to_string(plan.user_bytes[static_cast<std::size_t>(rank)]));
  }
  std::byte* const base[2] = {user.data(), scratch_[static_cast<std::size_t>(rank - first_)].data()};
  auto at = [&](const Region& g) { return base[static_cast<std::size_t>(g.buffer)] + g.offset; };
  std::uint32_t j = 0;
  for (const OpView o : plan.ops(rank)) {
    switch (o.code) {
      case OpCode::send:
        send(o, j, std::span<const std::byte>(at(o.a), o.a.bytes));
        break;
      case OpCode::recv: {
        const std::size_t n = recv(o, j, std::span<std::byte>(at(o.a), o.a.bytes));
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
    ++j;
  }
}

void PlanExecutor::run_rank(RankContext& ctx, std::span<std::byte> user, const ReduceFn* op) {
  check(ctx.team(), op);
  run_program(
      ctx.rank(), user, op, [&](const OpView& o, std::uint32_t, std::span<const std::byte> b) { ctx.send(o.peer, b); },
      [&](const OpView& o, std::uint32_t, std::span<std::byte> b) { return ctx.recv(o.peer, b); });
}

void PlanExecutor::run_rank(int rank, Transport& transport, std::span<std::byte> user, const ReduceFn* op) {
  check_op(op);
  run_program(
      rank, user, op, [&](const OpView& o, std::uint32_t j, std::span<const std::byte> b) { transport.send(o, j, b); },
      [&](const OpView& o, std::uint32_t j, std::span<std::byte> b) { return transport.recv(o, j, b); });
  transport.finish();
}

void PlanExecutor::run(Team& team, std::span<const std::span<std::byte>> users, const ReduceFn* op) {
  PB_CHECK(users.size() == static_cast<std::size_t>(plan_->p), "PlanExecutor::run: one buffer per rank");
  check(team, op);
  // One pointer captured: it fits std::function's in-place storage, so no allocation per run.
  struct Args {
    PlanExecutor* self;
    std::span<const std::span<std::byte>> users;
    const ReduceFn* op;
  } args{this, users, op};
  team.run([a = &args](RankContext& ctx) { a->self->run_rank(ctx, a->users[static_cast<std::size_t>(ctx.rank())], a->op); });
}

}  // namespace postbox
