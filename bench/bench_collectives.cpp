// Collectives on threads: every registered bcast/reduce/gather/allreduce algorithm as a plan on
// the thread executor, side by side with a naive flat implementation written directly over the
// same mailboxes (root sends to / receives from every rank in turn), at p = 2 and an
// oversubscribed p = 8, for 8 B and 64 KiB. Prints medians and the ratio plan / naive (< 1:
// the plan is faster). Then the fiber rows: bcast (fibo) and allreduce (recursive
// doubling), 8 B and 4 KiB, p = 8, 64, 1024, the same plan on a team of kernel threads and on a
// team of fibers (one worker per allowed CPU), run alternately (interleaved), with the ratio
// fibers / threads. Usage: bench_collectives [iters] (default 200).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/executor.hpp"
#include "postbox/runtime/team.hpp"

namespace {

using postbox::RankContext;

void sum_u64(const std::byte* x, const std::byte* y, std::byte* out, std::size_t count, const void*) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t a, b;
    std::memcpy(&a, x + 8 * i, 8);
    std::memcpy(&b, y + 8 * i, 8);
    a += b;
    std::memcpy(out + 8 * i, &a, 8);
  }
}
const postbox::ReduceFn kSum{&sum_u64, nullptr, 8, true};

double median_ns(postbox::Team& team, int iters, const std::function<void(RankContext&)>& fn) {
  std::vector<double> ns;
  for (int it = -3; it < iters; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    team.run(fn);
    const auto t1 = std::chrono::steady_clock::now();
    if (it >= 0) ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(ns.size() / 2), ns.end());
  return ns[ns.size() / 2];
}

// The naive flat competitor, straight over the mailboxes (root 0).
void naive(const std::string& op, RankContext& ctx, std::vector<std::byte>& buf, std::vector<std::byte>& tmp, std::size_t b) {
  const int p = ctx.size(), me = ctx.rank();
  auto flat_reduce = [&] {
    if (me != 0) {
      ctx.send(0, {buf.data(), b});
      return;
    }
    for (int q = 1; q < p; ++q) {
      (void)ctx.recv(q, {tmp.data(), b});
      sum_u64(buf.data(), tmp.data(), buf.data(), b / 8, nullptr);
    }
  };
  auto flat_bcast = [&] {
    if (me == 0) {
      for (int q = 1; q < p; ++q) ctx.send(q, {buf.data(), b});
    } else {
      (void)ctx.recv(0, {buf.data(), b});
    }
  };
  if (op == "bcast") flat_bcast();
  else if (op == "reduce") flat_reduce();
  else if (op == "gather") {
    if (me != 0) ctx.send(0, {buf.data(), b});
    else
      for (int q = 1; q < p; ++q) (void)ctx.recv(q, {buf.data() + static_cast<std::size_t>(q) * b, b});
  } else {
    flat_reduce();
    flat_bcast();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  std::printf("%-10s %-20s %3s %7s %12s %12s %7s\n", "op", "algo", "p", "bytes", "plan_us", "naive_us", "ratio");
  for (int p : {2, 8}) {
    postbox::TeamOptions opts;
    opts.mailbox.ring_bytes = 256 * 1024;  // holds every plan below (postal included) without streaming stalls
    postbox::Team team(p, opts);
    for (std::size_t bytes : {std::size_t{8}, std::size_t{65536}}) {
      for (const auto& info : postbox::list_plan_builders()) {
        if (info.op != "bcast" && info.op != "reduce" && info.op != "gather" && info.op != "allreduce") continue;
        postbox::PlanRequest req;
        req.op = info.op;
        req.algo = info.algo == "kary:K" ? "kary:4" : info.algo;
        req.p = p;
        req.bytes = static_cast<std::int64_t>(bytes);
        req.elem_bytes = (info.op == "reduce" || info.op == "allreduce") ? 8 : 1;
        auto plan = postbox::cached_plan(req);
        postbox::PlanExecutor exec(plan);
        std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(p)), tmps(static_cast<std::size_t>(p));
        for (int r = 0; r < p; ++r) {
          bufs[static_cast<std::size_t>(r)].assign(std::max<std::size_t>(plan->user_bytes[static_cast<std::size_t>(r)], bytes * static_cast<std::size_t>(p)), std::byte{1});
          tmps[static_cast<std::size_t>(r)].assign(bytes, std::byte{0});
        }
        const double t_plan = median_ns(team, iters, [&](RankContext& ctx) {
          exec.run_rank(ctx, bufs[static_cast<std::size_t>(ctx.rank())], &kSum);
        });
        const double t_naive = median_ns(team, iters, [&](RankContext& ctx) {
          naive(info.op, ctx, bufs[static_cast<std::size_t>(ctx.rank())], tmps[static_cast<std::size_t>(ctx.rank())], bytes);
        });
        std::printf("%-10s %-20s %3d %7zu %12.2f %12.2f %7.2f\n", info.op.c_str(), req.algo.c_str(), p, bytes, t_plan / 1e3,
                    t_naive / 1e3, t_plan / t_naive);
        std::fflush(stdout);
      }
    }
  }
  // Fibers against threads, interleaved: each iteration runs the thread team, then the fiber
  // team; each side's median over the iterations.
  std::printf("\n%-10s %-20s %5s %7s %12s %12s %7s\n", "op", "algo", "p", "bytes", "threads_us", "fibers_us", "ratio");
  for (int p : {8, 64, 1024}) {
    postbox::TeamOptions to;
    to.ranks = postbox::RanksMode::threads;
    to.mailbox.ring_bytes = 16 * 1024;
    postbox::TeamOptions fo = to;
    fo.ranks = postbox::RanksMode::fibers;
    postbox::Team threads(p, to);
    postbox::Team fibers(p, fo);
    const int n = p >= 1024 ? std::max(1, iters / 4) : iters;  // 1024 kernel threads cost ms per run
    for (const char* op : {"bcast", "allreduce"}) {
      for (std::size_t bytes : {std::size_t{8}, std::size_t{4096}}) {
        postbox::PlanRequest req;
        req.op = op;
        req.algo = req.op == "bcast" ? "fibo" : "recursive-doubling";
        req.p = p;
        req.bytes = static_cast<std::int64_t>(bytes);
        req.elem_bytes = req.op == "allreduce" ? 8 : 1;
        postbox::PlanExecutor exec(postbox::cached_plan(req));
        const auto& plan = exec.plan();
        std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(p));
        for (int r = 0; r < p; ++r) bufs[static_cast<std::size_t>(r)].assign(plan.user_bytes[static_cast<std::size_t>(r)], std::byte{1});
        const auto fn = [&](RankContext& ctx) { exec.run_rank(ctx, bufs[static_cast<std::size_t>(ctx.rank())], &kSum); };
        std::vector<double> tn, fn_ns;
        for (int it = -3; it < n; ++it) {
          for (int side = 0; side < 2; ++side) {
            postbox::Team& team = side == 0 ? threads : fibers;
            const auto t0 = std::chrono::steady_clock::now();
            team.run(fn);
            const auto t1 = std::chrono::steady_clock::now();
            if (it >= 0) (side == 0 ? tn : fn_ns).push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
          }
        }
        for (auto* v : {&tn, &fn_ns}) std::sort(v->begin(), v->end());
        const double t = tn[tn.size() / 2], f = fn_ns[fn_ns.size() / 2];
        std::printf("%-10s %-20s %5d %7zu %12.2f %12.2f %7.2f\n", op, req.algo.c_str(), p, bytes, t / 1e3, f / 1e3, f / t);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
