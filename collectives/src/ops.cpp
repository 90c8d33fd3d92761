#include "postbox/collectives/ops.hpp"

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

struct Key {
  std::uint64_t team = 0;  // Team::id(): a team made where a destroyed one lived is another team
  const char* op = nullptr;  // one of the string literals below
  std::string algo;
  int p = 0;
  int root = 0;
  std::int64_t bytes = 0;
  std::uint32_t elem_bytes = 1;
  std::optional<Rational> lambda;

  bool same(std::uint64_t t, const char* o, const std::string& a, int pp, int r, std::int64_t b, std::uint32_t e,
            const std::optional<Rational>& l) const {
    return team == t && op == o && p == pp && root == r && bytes == b && elem_bytes == e && lambda == l && algo == a;
  }
};

using ExecutorMap = std::map<std::pair<std::uint64_t, const Plan*>, std::shared_ptr<PlanExecutor>>;
std::mutex& executor_mutex() {
  static std::mutex mu;
  return mu;
}
ExecutorMap& executor_cache() {
  static ExecutorMap executors;
  return executors;
}

struct Memo {
  Key key;
  std::shared_ptr<PlanExecutor> exec;
};

// The slow path: plan from the plan cache, executor (with its scratch) per (team, plan). The
// entry owns its plan (through the executor), so the plan's address is not reused while the
// entry exists; the team counts by id.
std::shared_ptr<PlanExecutor> executor_for(const Key& k) {
  PlanRequest req;
  req.op = k.op;
  req.algo = k.algo;
  req.p = k.p;
  req.root = k.root;
  req.bytes = k.bytes;
  req.elem_bytes = k.elem_bytes;
  req.lambda = k.lambda;
  std::shared_ptr<const Plan> plan = cached_plan(req);
  std::lock_guard<std::mutex> lock(executor_mutex());
  auto& executors = executor_cache();
  if (const auto it = executors.find({k.team, plan.get()}); it != executors.end()) return it->second;
  // Bounded like the plan cache: entries of teams that are gone are never looked up again. A
  // rank still running an evicted executor holds it (shared_ptr) until its memo lets go.
  if (executors.size() >= kPlanCacheEntries) executors.clear();
  return executors.emplace(std::pair{k.team, plan.get()}, std::make_shared<PlanExecutor>(plan)).first->second;
}

// Hot path: a per-thread memo of the last few executors, compared field by field (no
// allocation, no lock). With threads each rank has its own memo; with fibers the ranks of a
// worker share their thread's, which is as correct (the key names the team and the request).
PlanExecutor& lookup(RankContext& ctx, const char* op, const std::string& algo, int root, std::int64_t bytes,
                     std::uint32_t elem_bytes, const std::optional<Rational>& lambda) {
  thread_local std::array<Memo, 4> memo;
  thread_local std::size_t next = 0;
  const std::uint64_t team = ctx.team().id();
  const int p = ctx.size();
  for (Memo& m : memo) {
    if (m.exec && m.key.same(team, op, algo, p, root, bytes, elem_bytes, lambda)) return *m.exec;
  }
  Key k{team, op, algo, p, root, bytes, elem_bytes, lambda};
  auto exec = executor_for(k);
  Memo& m = memo[next];
  next = (next + 1) % memo.size();
  m.key = std::move(k);
  m.exec = std::move(exec);
  return *m.exec;
}

const std::string& default_shape() {
  static const std::string shape = default_bcast_shape();
  return shape;
}

constexpr const char* kBcast = "bcast";
constexpr const char* kReduce = "reduce";
constexpr const char* kGather = "gather";
constexpr const char* kAllreduce = "allreduce";

std::int64_t as_bytes(std::size_t n) { return static_cast<std::int64_t>(n); }

}  // namespace

std::size_t cached_executor_count() {
  std::lock_guard<std::mutex> lock(executor_mutex());
  return executor_cache().size();
}

void broadcast_bytes(RankContext& ctx, int root, std::span<std::byte> data, const std::string& shape) {
  PlanExecutor& ex = lookup(ctx, kBcast, shape.empty() ? default_shape() : shape, root, as_bytes(data.size()), 1,
                            std::nullopt);
  ex.run_rank(ctx, data, nullptr);
}

void reduce_bytes(RankContext& ctx, int root, std::span<std::byte> data, const ReduceFn& op, const std::string& algo) {
  if (op.elem_bytes == 0) throw InputError("reduce: operator with 0-byte elements");
  PlanExecutor& ex = lookup(ctx, kReduce, algo, root, as_bytes(data.size()), op.elem_bytes, std::nullopt);
  ex.run_rank(ctx, data, &op);
}

void gather_bytes(RankContext& ctx, int root, std::span<const std::byte> mine, std::span<std::byte> all,
                  const std::string& algo) {
  PlanExecutor& ex = lookup(ctx, kGather, algo, root, as_bytes(mine.size()), 1, std::nullopt);
  if (ctx.rank() == root) {
    const std::size_t need = mine.size() * static_cast<std::size_t>(ctx.size());
    if (all.size() < need) {
      throw InputError("gather: root buffer has " + std::to_string(all.size()) + " bytes, needs " + std::to_string(need));
    }
    std::byte* own = all.data() + static_cast<std::size_t>(root) * mine.size();
    if (!mine.empty() && own != mine.data()) std::memmove(own, mine.data(), mine.size());
    ex.run_rank(ctx, all, nullptr);
  } else {
    // The plan only reads a non-root rank's buffer (sends and copies from it).
    ex.run_rank(ctx, {const_cast<std::byte*>(mine.data()), mine.size()}, nullptr);
  }
}

void allreduce_bytes(RankContext& ctx, std::span<std::byte> data, const ReduceFn& op, const std::string& algo,
                     std::optional<Rational> lambda) {
  if (op.elem_bytes == 0) throw InputError("allreduce: operator with 0-byte elements");
  static const std::string kPostal = "postal", kRd = "recursive-doubling";
  const std::string& a = algo.empty() ? (op.commutative ? kPostal : kRd) : algo;
  PlanExecutor& ex = lookup(ctx, kAllreduce, a, 0, as_bytes(data.size()), op.elem_bytes, lambda);
  ex.run_rank(ctx, data, &op);
}

}  // namespace postbox
