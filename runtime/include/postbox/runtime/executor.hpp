// The thread executor: runs a Plan on a Team over its mailboxes. Each rank runs its own program
// in program order (a topological order of its deps), so on threads the receives of one rank
// complete in program order; builders list them in expected arrival order.
//
// Zero-copy: a send passes its region of the user buffer (or scratch) straight to the mailbox,
// and a recv lands straight in its region; a message that is only forwarded (broadcast) is
// never staged. Hot path: run_rank() and run() allocate nothing once the executor exists and
// the team's rings do (scratch is sized per rank from the plan at construction; a pair's first
// MailboxOptions::queued_messages messages go through the receiver's queue, a heap block each,
// then the pair has its ring): only mailbox calls, memcpy and the reduce function; error
// messages are built only when thrown.
//
// Reduce operator: ReduceFn::fn(x, y, out, count, state) computes out[i] = x[i] ⊕ y[i] for
// `count` elements of elem_bytes bytes; out may alias x or y. Op::src_first selects b ⊕ a, so
// an associative, non-commutative ⊕ gets the plan's order. A plan with needs_commutative set
// refuses a ReduceFn whose `commutative` is false (InputError) instead of a wrong answer.
//
// Requirements: one run at a time per executor (the scratch is per executor, not per run);
// every rank of the team calls run_rank() (or the caller calls run()); the team has the plan's
// p ranks; user buffers hold plan.user_bytes[rank] bytes. Violations → PB_CHECK, except the
// user-facing ones below, which throw InputError from every rank alike.
//
// Memory ordering: the mailboxes' (mailbox.hpp): what a rank wrote before a send is visible
// to the receiver after the matching recv; nothing else is shared between ranks.
//
// Other transports (the seam postbox::cluster runs plans across MPI processes through): the
// run_rank() overload that takes a Transport runs the same program, with every send and recv
// going to the transport instead of a team's mailboxes; reduce and copy are the executor's as
// above. An executor made for a range of ranks holds scratch for those ranks only.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "postbox/runtime/plan.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox {

struct ReduceFn {
  using Fn = void (*)(const std::byte* x, const std::byte* y, std::byte* out, std::size_t count, const void* state);
  Fn fn = nullptr;
  const void* state = nullptr;
  std::uint32_t elem_bytes = 1;
  bool commutative = true;
};

// Where a rank's messages go when they do not go through a team's mailboxes. The executor calls
// send() and recv() in the rank's program order, j being the op's index in that program (so a
// transport can precompute per op), and finish() once after the rank's last op: when run_rank()
// returns, the transport no longer reads or writes the rank's buffers. recv() returns the
// message's size, which the executor checks against the region (PB_CHECK).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void send(const OpView& op, std::uint32_t j, std::span<const std::byte> bytes) = 0;
  virtual std::size_t recv(const OpView& op, std::uint32_t j, std::span<std::byte> into) = 0;
  virtual void finish() = 0;
};

class PlanExecutor {
 public:
  // The plan must pass validate() (PB_CHECK: plans come from builders or are checked first).
  explicit PlanExecutor(std::shared_ptr<const Plan> plan);
  // Runs only ranks first..first+count-1 (scratch for those alone); 0 <= first, first + count
  // <= plan.p (PB_CHECK).
  PlanExecutor(std::shared_ptr<const Plan> plan, int first, int count);
  PlanExecutor(const PlanExecutor&) = delete;
  PlanExecutor& operator=(const PlanExecutor&) = delete;

  [[nodiscard]] const Plan& plan() const noexcept { return *plan_; }

  // Runs rank ctx.rank()'s program over `user`. op may be null for a plan without reduce ops.
  // InputError (thrown alike by every rank): a reduce plan without an op, an op whose
  // elem_bytes differs from the plan's, a non-commutative op where the plan needs a commutative
  // one, a user buffer smaller than plan.user_bytes[rank], or team rings too small for the plan
  // (see validate_rings(); build the team with TeamOptions::mailbox.ring_bytes >=
  // ring_bytes_needed(plan)).
  void run_rank(RankContext& ctx, std::span<std::byte> user, const ReduceFn* op);

  // Rank `rank`'s program over `user`, its messages through `transport`. The checks of
  // check_op() and the buffer size as above (InputError); ring sizes are the transport's
  // business. rank must be one this executor runs (PB_CHECK).
  void run_rank(int rank, Transport& transport, std::span<std::byte> user, const ReduceFn* op);

  // team.run() with rank r working on users[r].
  void run(Team& team, std::span<const std::span<std::byte>> users, const ReduceFn* op);

  // The user-facing checks of run_rank() that need no rank: throws InputError or returns.
  void check(Team& team, const ReduceFn* op) const;
  // The operator's checks of check() alone (no team): throws InputError or returns.
  void check_op(const ReduceFn* op) const;

 private:
  template <class Send, class Recv>
  void run_program(int rank, std::span<std::byte> user, const ReduceFn* op, Send&& send, Recv&& recv);

  std::shared_ptr<const Plan> plan_;
  int first_ = 0;  // the ranks this executor runs: first_ .. first_ + scratch_.size() - 1
  std::vector<std::vector<std::byte>> scratch_;  // per rank run, plan.scratch_bytes[rank]
  bool has_reduce_ = false;
  // A ring capacity already shown to be enough (0: none yet). A cache of a pure function of
  // the plan, so relaxed loads and stores suffice: a stale value only repeats the check.
  mutable std::atomic<std::uint64_t> rings_ok_{0};
};

}  // namespace postbox
