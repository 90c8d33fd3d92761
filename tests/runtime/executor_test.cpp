// The thread executor on hand-built plans: forwarding, exchanges with ordered combines, the
// user-facing refusals, and a stress run that conserves what went in, oversubscribed.
#include "postbox/runtime/executor.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/plan.hpp"

namespace postbox {
namespace {

Region U(std::uint64_t off, std::uint64_t n) { return {Buffer::user, off, n}; }
Region S(std::uint64_t off, std::uint64_t n) { return {Buffer::scratch, off, n}; }

TeamOptions unpinned(std::size_t ring = 64 * 1024) {
  TeamOptions o;
  o.pin = false;
  o.mailbox.ring_bytes = ring;
  return o;
}

// A ring all-gather-like pass: rank r sends its running sum to r+1 and adds what it receives,
// p−1 times, then every rank holds Σ. Non-commutative order is irrelevant for +.
std::shared_ptr<const Plan> ring_sum_plan(int p, std::uint64_t count) {
  auto plan = std::make_shared<Plan>();
  plan->op = "test";
  plan->algo = "ring";
  plan->p = p;
  plan->bytes = count * 8;
  plan->elem_bytes = 8;
  plan->user_bytes.assign(static_cast<std::size_t>(p), count * 8);
  plan->scratch_bytes.assign(static_cast<std::size_t>(p), 2 * count * 8);
  std::vector<RankProgram> ranks(static_cast<std::size_t>(p));
  const std::uint64_t b = count * 8;
  for (int r = 0; r < p; ++r) {
    auto& ops = ranks[static_cast<std::size_t>(r)].ops;
    // scratch[0,b): the value being passed on; scratch[b,2b): the incoming one.
    ops.push_back(Op{OpCode::copy, -1, S(0, b), U(0, b), false, 0, {}});
    for (int k = 0; k + 1 < p; ++k) {
      ops.push_back(Op{OpCode::send, (r + 1) % p, S(0, b), {}, false, 0, {}});
      ops.push_back(Op{OpCode::recv, (r + p - 1) % p, S(b, b), {}, false, 0, {}});
      ops.push_back(Op{OpCode::reduce, -1, U(0, b), S(b, b), false, 0, {}});
      ops.push_back(Op{OpCode::copy, -1, S(0, b), S(b, b), false, 0, {}});
    }
  }
  plan->set_programs(std::move(ranks));
  derive_dependencies(*plan);
  plan->finalize();
  return plan;
}

void add_u64(const std::byte* x, const std::byte* y, std::byte* out, std::size_t count, const void*) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t a, b;
    std::memcpy(&a, x + 8 * i, 8);
    std::memcpy(&b, y + 8 * i, 8);
    a += b;
    std::memcpy(out + 8 * i, &a, 8);
  }
}

class ExecutorRing : public testing::TestWithParam<int> {};

TEST_P(ExecutorRing, EveryRankGetsTheSumOnce) {
  const int p = GetParam();
  Team team(p, unpinned());
  const std::uint64_t count = 33;
  PlanExecutor ex(ring_sum_plan(p, count));
  std::vector<std::vector<std::uint64_t>> data(static_cast<std::size_t>(p), std::vector<std::uint64_t>(count));
  std::vector<std::span<std::byte>> users;
  std::uint64_t expect0 = 0;
  for (int r = 0; r < p; ++r) {
    for (std::uint64_t i = 0; i < count; ++i) data[static_cast<std::size_t>(r)][i] = (static_cast<std::uint64_t>(r) + 1) * 1000003 + i;
    expect0 += (static_cast<std::uint64_t>(r) + 1) * 1000003;
    users.push_back(std::as_writable_bytes(std::span(data[static_cast<std::size_t>(r)])));
  }
  const ReduceFn add{&add_u64, nullptr, 8, true};
  const int iters = 3;
  for (int it = 0; it < iters; ++it) ex.run(team, users, &add);
  // After k runs every entry is p^(k-1) · Σ (each run sums the previous results).
  std::uint64_t scale = 1;
  for (int it = 1; it < iters; ++it) scale *= static_cast<std::uint64_t>(p);
  for (int r = 0; r < p; ++r) {
    for (std::uint64_t i = 0; i < count; ++i) {
      ASSERT_EQ(data[static_cast<std::size_t>(r)][i], scale * (expect0 + static_cast<std::uint64_t>(p) * i)) << "rank " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ExecutorRing, testing::Values(1, 2, 3, 7, 16));

TEST(Executor, RefusesNonCommutativeWhereNeeded) {
  auto plan = std::make_shared<Plan>(*ring_sum_plan(3, 1));
  plan->needs_commutative = true;
  PlanExecutor ex(plan);
  Team team(3, unpinned());
  std::vector<std::uint64_t> d(3, 1);
  std::vector<std::span<std::byte>> users;
  for (auto& x : d) users.push_back(std::as_writable_bytes(std::span(&x, 1)));
  const ReduceFn nc{&add_u64, nullptr, 8, false};
  EXPECT_THROW(ex.run(team, users, &nc), InputError);
  const ReduceFn wrong_elem{&add_u64, nullptr, 4, true};
  EXPECT_THROW(ex.run(team, users, &wrong_elem), InputError);
  EXPECT_THROW(ex.run(team, users, nullptr), InputError);
}

TEST(Executor, RefusesRingsTooSmallForThePlan) {
  // Both ranks stream 64 KiB at each other first: only rings that hold it are safe.
  auto plan = std::make_shared<Plan>();
  plan->op = "test";
  plan->algo = "swap";
  plan->p = 2;
  plan->bytes = 65536;
  plan->user_bytes = {65536, 65536};
  plan->scratch_bytes = {65536, 65536};
  std::vector<RankProgram> ranks(2);
  for (int r = 0; r < 2; ++r) {
    ranks[static_cast<std::size_t>(r)].ops.push_back(Op{OpCode::send, 1 - r, U(0, 65536), {}, false, 0, {}});
    ranks[static_cast<std::size_t>(r)].ops.push_back(Op{OpCode::recv, 1 - r, S(0, 65536), {}, false, 0, {}});
  }
  plan->set_programs(std::move(ranks));
  derive_dependencies(*plan);
  plan->finalize();
  PlanExecutor ex(plan);
  std::vector<std::vector<std::byte>> bufs(2, std::vector<std::byte>(65536, std::byte{7}));
  std::vector<std::span<std::byte>> users{bufs[0], bufs[1]};
  {
    Team small(2, unpinned(4096));
    EXPECT_THROW(ex.run(small, users, nullptr), InputError);
  }
  Team roomy(2, unpinned(ring_bytes_needed(*plan)));
  EXPECT_NO_THROW(ex.run(roomy, users, nullptr));
}

TEST(Executor, ShortUserBufferIsAnInputError) {
  PlanExecutor ex(ring_sum_plan(2, 4));
  Team team(2, unpinned());
  std::vector<std::uint64_t> a(4), b(3);
  std::vector<std::span<std::byte>> users{std::as_writable_bytes(std::span(a)), std::as_writable_bytes(std::span(b))};
  const ReduceFn add{&add_u64, nullptr, 8, true};
  EXPECT_THROW(ex.run(team, users, &add), InputError);
}

// A Transport over the team's mailboxes that logs what the executor asks of it: each rank's
// sends and receives in program order with their j, then one finish().
struct LoggingTransport final : Transport {
  RankContext& ctx;
  std::vector<std::string> log;
  explicit LoggingTransport(RankContext& c) : ctx(c) {}
  void send(const OpView& op, std::uint32_t j, std::span<const std::byte> bytes) override {
    log.push_back("send " + std::to_string(j) + " to " + std::to_string(op.peer) + " tag " + std::to_string(op.tag));
    ctx.send(op.peer, bytes);
  }
  std::size_t recv(const OpView& op, std::uint32_t j, std::span<std::byte> into) override {
    log.push_back("recv " + std::to_string(j) + " from " + std::to_string(op.peer) + " tag " + std::to_string(op.tag));
    return ctx.recv(op.peer, into);
  }
  void finish() override { log.push_back("finish"); }
};

TEST(ExecutorTransport, RunsTheProgramThroughTheTransportInProgramOrder) {
  const int p = 3;
  const std::uint64_t count = 5;
  auto plan = ring_sum_plan(p, count);
  // Two executors, each for part of the ranks (as two processes would hold them).
  PlanExecutor low(plan, 0, 1), high(plan, 1, 2);
  Team team(p, unpinned());
  std::vector<std::vector<std::uint64_t>> data(p, std::vector<std::uint64_t>(count));
  std::uint64_t expect = 0;
  for (int r = 0; r < p; ++r) {
    for (std::uint64_t i = 0; i < count; ++i) data[static_cast<std::size_t>(r)][i] = static_cast<std::uint64_t>(r) * 10 + i;
    expect += static_cast<std::uint64_t>(r) * 10;
  }
  const ReduceFn add{&add_u64, nullptr, 8, true};
  std::vector<std::vector<std::string>> logs(p);
  team.run([&](RankContext& ctx) {
    LoggingTransport t(ctx);
    const int r = ctx.rank();
    (r == 0 ? low : high).run_rank(r, t, std::as_writable_bytes(std::span(data[static_cast<std::size_t>(r)])), &add);
    logs[static_cast<std::size_t>(r)] = t.log;
  });
  for (int r = 0; r < p; ++r) {
    for (std::uint64_t i = 0; i < count; ++i) EXPECT_EQ(data[static_cast<std::size_t>(r)][i], expect + p * i) << "rank " << r;
    // Program: copy, then (send, recv, reduce, copy) p−1 times: j of the k-th send is 1 + 4k.
    std::vector<std::string> want;
    for (int k = 0; k + 1 < p; ++k) {
      want.push_back("send " + std::to_string(1 + 4 * k) + " to " + std::to_string((r + 1) % p) + " tag " + std::to_string(k));
      want.push_back("recv " + std::to_string(2 + 4 * k) + " from " + std::to_string((r + p - 1) % p) + " tag " + std::to_string(k));
    }
    want.push_back("finish");
    EXPECT_EQ(logs[static_cast<std::size_t>(r)], want) << "rank " << r;
  }
}

TEST(ExecutorTransport, ChecksTheOperatorAndTheBuffer) {
  auto plan = std::make_shared<Plan>(*ring_sum_plan(2, 2));
  plan->needs_commutative = true;
  PlanExecutor ex(plan, 0, 2);
  Team team(2, unpinned());
  const ReduceFn nc{&add_u64, nullptr, 8, false};
  const ReduceFn add{&add_u64, nullptr, 8, true};
  std::vector<std::uint64_t> shorter(1);
  team.run([&](RankContext& ctx) {
    LoggingTransport t(ctx);
    EXPECT_THROW(ex.run_rank(ctx.rank(), t, std::as_writable_bytes(std::span(shorter)), &nc), InputError);
    EXPECT_THROW(ex.run_rank(ctx.rank(), t, std::as_writable_bytes(std::span(shorter)), nullptr), InputError);
    EXPECT_THROW(ex.run_rank(ctx.rank(), t, std::as_writable_bytes(std::span(shorter)), &add), InputError);
    EXPECT_TRUE(t.log.empty());  // refused before any message
  });
}

TEST(ExecutorTransportDeathTest, ARankTheExecutorDoesNotRunFailsFast) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto plan = ring_sum_plan(3, 1);
  auto run_rank0_on_high = [plan] {
    PlanExecutor ex(plan, 1, 2);
    Team team(1, unpinned());
    std::uint64_t x = 0;
    const ReduceFn add{&add_u64, nullptr, 8, true};
    team.run([&](RankContext& ctx) {
      LoggingTransport t(ctx);
      ex.run_rank(0, t, std::as_writable_bytes(std::span(&x, 1)), &add);
    });
  };
  EXPECT_DEATH(run_rank0_on_high(), "not one this executor runs");
  EXPECT_DEATH({ PlanExecutor ex(plan, 2, 2); }, "ranks outside the plan");
}

}  // namespace
}  // namespace postbox
