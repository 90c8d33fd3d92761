// executor.hpp: "run_rank() and run() allocate nothing once the executor exists and the team's
// rings do". This binary replaces the global operator new, counts every allocation in the
// process, and runs plans again and again after a first run: the count must not move. Also
// through the collective calls of ops.hpp (their per-thread memo), which promise the same after
// their first call.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include "postbox/collectives/ops.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/executor.hpp"
#include "postbox/runtime/team.hpp"

namespace {
// relaxed: a counter read after Team::run() returned, which orders the ranks' work before it.
std::atomic<std::uint64_t> g_allocations{0};

void* counted(std::size_t n, std::size_t align) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) n = 1;
  void* p = align <= alignof(std::max_align_t) ? std::malloc(n) : std::aligned_alloc(align, (n + align - 1) / align * align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) { return counted(n, 0); }
void* operator new[](std::size_t n) { return counted(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace postbox {
namespace {

constexpr int kP = 5;
constexpr int kRuns = 50;
constexpr std::size_t kElems = 64;  // 512 bytes per rank

void add_u64(const std::byte* x, const std::byte* y, std::byte* out, std::size_t count, const void*) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t a, b;
    std::memcpy(&a, x + 8 * i, 8);
    std::memcpy(&b, y + 8 * i, 8);
    a += b;
    std::memcpy(out + 8 * i, &a, 8);
  }
}

std::shared_ptr<const Plan> allreduce_plan(const std::string& algo) {
  PlanRequest req;
  req.op = "allreduce";
  req.algo = algo;
  req.p = kP;
  req.bytes = static_cast<std::int64_t>(kElems * 8);
  req.elem_bytes = 8;
  return std::make_shared<const Plan>(build_plan(req));
}

TeamOptions options() {
  TeamOptions o;
  o.pin = false;
  o.mailbox.ring_bytes = 1 << 16;
  return o;
}

struct Buffers {
  std::vector<std::vector<std::byte>> data;
  std::vector<std::span<std::byte>> spans;
  explicit Buffers(std::size_t user_bytes) : data(kP, std::vector<std::byte>(user_bytes)) {
    for (auto& d : data) spans.emplace_back(d);
  }
  void fill() {
    for (std::size_t r = 0; r < data.size(); ++r)
      for (std::size_t i = 0; i < kElems; ++i) {
        const std::uint64_t v = r + 1;
        std::memcpy(data[r].data() + 8 * i, &v, 8);
      }
  }
  // Every rank holds 1 + 2 + ... + p in every element.
  [[nodiscard]] bool summed() const {
    for (const auto& d : data)
      for (std::size_t i = 0; i < kElems; ++i) {
        std::uint64_t v;
        std::memcpy(&v, d.data() + 8 * i, 8);
        if (v != kP * (kP + 1) / 2) return false;
      }
    return true;
  }
};

class NoAlloc : public testing::TestWithParam<const char*> {};

// The mailbox path: ranks call run_rank() inside one Team::run(), again and again.
TEST_P(NoAlloc, RunRankInsideTeamRun) {
  const auto plan = allreduce_plan(GetParam());
  PlanExecutor ex(plan);
  Team team(kP, options());
  Buffers b(plan->user_bytes[0]);
  const ReduceFn op{add_u64, nullptr, 8, true};
  std::atomic<int> bad{0};
  const std::function<void(RankContext&)> runs = [&](RankContext& ctx) {
    for (int i = 0; i < kRuns; ++i) {
      // Each rank refills its own buffer; the run's messages order the refills before reads.
      for (std::size_t e = 0; e < kElems; ++e) {
        const std::uint64_t v = static_cast<std::uint64_t>(ctx.rank()) + 1;
        std::memcpy(b.spans[static_cast<std::size_t>(ctx.rank())].data() + 8 * e, &v, 8);
      }
      ex.run_rank(ctx, b.spans[static_cast<std::size_t>(ctx.rank())], &op);
      std::uint64_t v;
      std::memcpy(&v, b.spans[static_cast<std::size_t>(ctx.rank())].data(), 8);
      // relaxed: read by the caller after Team::run() returned.
      if (v != kP * (kP + 1) / 2) bad.fetch_add(1, std::memory_order_relaxed);
    }
  };
  team.run(runs);  // first: every pair that talks gets its ring (kRuns > queued_messages)
  const std::uint64_t before = g_allocations.load(std::memory_order_relaxed);
  team.run(runs);
  const std::uint64_t after = g_allocations.load(std::memory_order_relaxed);
  EXPECT_EQ(bad.load(std::memory_order_relaxed), 0);
  EXPECT_EQ(after - before, 0U) << "allocations in " << kRuns << " runs of " << plan->op << "/" << plan->algo;
}

// PlanExecutor::run(): one Team::run() per call.
TEST_P(NoAlloc, ExecutorRunOnPreparedExecutor) {
  const auto plan = allreduce_plan(GetParam());
  PlanExecutor ex(plan);
  Team team(kP, options());
  Buffers b(plan->user_bytes[0]);
  const ReduceFn op{add_u64, nullptr, 8, true};
  // Warm-up: a pair's first queued_messages messages go through the receiver's queue (a heap
  // block each); its next one makes its ring.
  for (int i = 0; i <= team.mailboxes().options().queued_messages; ++i) {
    b.fill();
    ex.run(team, b.spans, &op);
    ASSERT_TRUE(b.summed());
  }
  bool all_summed = true;
  const std::uint64_t before = g_allocations.load(std::memory_order_relaxed);
  for (int i = 0; i < kRuns; ++i) {
    b.fill();
    ex.run(team, b.spans, &op);
    all_summed = all_summed && b.summed();
  }
  const std::uint64_t after = g_allocations.load(std::memory_order_relaxed);
  EXPECT_TRUE(all_summed);
  EXPECT_EQ(after - before, 0U) << "allocations in " << kRuns << " runs of " << plan->op << "/" << plan->algo;
}

INSTANTIATE_TEST_SUITE_P(Algos, NoAlloc, testing::Values("postal", "recursive-doubling", "reduce-bcast"));

// ops.hpp: after the first call, a repeated collective finds its executor in the rank's memo.
TEST(NoAllocOps, RepeatedAllreduceAndBroadcast) {
  Team team(kP, options());
  std::atomic<int> bad{0};
  const std::function<void(RankContext&)> runs = [&](RankContext& ctx) {
    std::uint64_t data[kElems];
    for (int i = 0; i < kRuns; ++i) {
      for (auto& v : data) v = static_cast<std::uint64_t>(ctx.rank()) + 1;
      allreduce(ctx, std::span<std::uint64_t>(data), std::plus<>{});
      broadcast(ctx, 2, std::span<std::uint64_t>(data));
      // relaxed: read by the caller after Team::run() returned.
      if (data[0] != kP * (kP + 1) / 2) bad.fetch_add(1, std::memory_order_relaxed);
    }
  };
  team.run(runs);
  const std::uint64_t before = g_allocations.load(std::memory_order_relaxed);
  team.run(runs);
  const std::uint64_t after = g_allocations.load(std::memory_order_relaxed);
  EXPECT_EQ(bad.load(std::memory_order_relaxed), 0);
  EXPECT_EQ(after - before, 0U);
}

// The counter works: a test that cannot fail proves nothing.
TEST(NoAllocOps, CounterSeesAnAllocation) {
  const std::uint64_t before = g_allocations.load(std::memory_order_relaxed);
  void* p = ::operator new(100);  // a call, not a new-expression: the compiler may not elide it
  const std::uint64_t after = g_allocations.load(std::memory_order_relaxed);
  ::operator delete(p);
  EXPECT_EQ(after - before, 1U);
}

}  // namespace
}  // namespace postbox
