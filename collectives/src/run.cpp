#include "postbox/collectives/run.hpp"

#include <chrono>
#include <cstddef>
#include <span>

#include "postbox/collectives/verify.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/executor.hpp"
#include "postbox/runtime/limits.hpp"

namespace postbox {

RunStats timed_runs(const RunOptions& options, const std::function<void()>& fill, const std::function<double()>& run,
                    const std::function<std::optional<std::string>()>& check) {
  PB_CHECK(options.iters >= 0 && options.verify_every >= 1, "timed_runs: iters >= 0 and verify_every >= 1");
  RunStats stats;
  for (int it = -1; it < options.iters; ++it) {  // iteration -1: untimed warm-up
    fill();
    const double ns = run();
    if (it >= 0) stats.ns.push_back(ns);
    if (it >= 0 && options.progress) options.progress(it + 1, options.iters);
    if (!options.verify || !(it < 0 || (it + 1) % options.verify_every == 0 || it + 1 == options.iters)) continue;
    ++stats.checked;
    if (const auto bad = check()) {
      stats.verified = false;
      stats.failure = *bad + " (" + (it < 0 ? std::string("warm-up run") : "timed run " + std::to_string(it + 1)) + ")";
      break;
    }
    stats.verified = true;
  }
  return stats;
}

PlanRun run_plan(const std::shared_ptr<const Plan>& plan, const PlanRequest& request, TeamOptions team,
                 const RunOptions& options) {
  PB_CHECK(plan != nullptr, "run_plan: no plan");
  PlanRun out;
  // The inputs are the oracle's wherever it knows the op, verified or not, so timings see the
  // same data either way; a hand-made plan with other buffers runs on zeros, or not at all when
  // it was to be verified.
  std::optional<Oracle> oracle;
  if (options.verify || Oracle::knows(plan->op)) {
    oracle.emplace(request);
    if (auto problem = oracle->check_buffers(*plan)) {
      out.buffer_mismatch = std::move(problem);
      if (options.verify) return out;
      oracle.reset();
    }
  }
  // Rings that hold whatever the plan needs to be deadlock-free in program order.
  team.mailbox.ring_bytes = 64 * 1024;
  if (validate_rings(*plan, team.mailbox.ring_bytes)) team.mailbox.ring_bytes = ring_bytes_needed(*plan);
  require_memory(plan_run_memory(*plan, team.mailbox.ring_bytes),
                 plan->op + "/" + plan->algo + " on " + std::to_string(plan->p) + " threads");
  PlanExecutor exec(plan);
  team.announce_wrap = false;  // the caller says it (an error that follows stays one line)
  Team t(plan->p, team);
  if (t.wrapped()) out.wrap_note = t.wrap_note();
  out.fibers = t.fibers();
  out.workers = t.workers();
  std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(plan->p));
  std::vector<std::span<std::byte>> users;
  for (int r = 0; r < plan->p; ++r) {
    bufs[static_cast<std::size_t>(r)].resize(plan->user_bytes[static_cast<std::size_t>(r)]);
    users.emplace_back(bufs[static_cast<std::size_t>(r)]);
  }
  const ReduceFn sum = unsigned_sum(plan->elem_bytes);
  out.stats = timed_runs(
      options,
      [&] {
        if (oracle)
          for (int r = 0; r < plan->p; ++r) oracle->fill(r, users[static_cast<std::size_t>(r)]);
      },
      [&] {
        const auto t0 = std::chrono::steady_clock::now();
        exec.run(t, users, &sum);
        const auto t1 = std::chrono::steady_clock::now();
        return std::chrono::duration<double, std::nano>(t1 - t0).count();
      },
      [&]() -> std::optional<std::string> {
        for (int r = 0; r < plan->p; ++r) {
          if (const auto bad = oracle->check(r, users[static_cast<std::size_t>(r)])) return bad->str();
        }
        return std::nullopt;
      });
  return out;
}

}  // namespace postbox
