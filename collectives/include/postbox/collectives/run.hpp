// Timed, optionally verified runs of a plan: what `postbox run` does on the threads or fibers of
// one process (run_plan()), and the loop it shares with a run across MPI processes
// (timed_runs(), which cluster::Job's caller drives with its own fill, run and check).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/plan.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox {

struct RunOptions {
  int iters = 10;         // timed runs, after one untimed warm-up run
  bool verify = false;    // check every rank's result against the op's definition (verify.hpp)
  int verify_every = 1;   // with verify: the warm-up, every verify_every-th timed run and the last
  // Called after each timed run with (runs done, iters), on the calling thread; empty: none.
  std::function<void(int, int)> progress;
};

struct RunStats {
  std::vector<double> ns;          // each timed run's wall time, in run order
  int checked = 0;                 // runs whose results were checked
  std::optional<bool> verified;    // nullopt: nothing was checked
  // The first failed check: "<what differs> (warm-up run|timed run N)"; the loop stopped there.
  std::string failure;
};

// The loop: `iters` + 1 runs, the first untimed; before each, fill() writes the inputs; run()
// runs the plan once and returns its time in ns; after the checked ones (RunOptions) check()
// returns what differs, or nullopt. A failed check ends the loop.
RunStats timed_runs(const RunOptions& options, const std::function<void()>& fill, const std::function<double()>& run,
                    const std::function<std::optional<std::string>()>& check);

struct PlanRun {
  RunStats stats;
  // The plan's buffers do not match the op's definition (a hand-made plan): with verify, nothing
  // ran and this says why; without, the inputs were zeros.
  std::optional<std::string> buffer_mismatch;
  bool fibers = false;   // the ranks ran as fibers
  int workers = 0;       // the Team's kernel threads
  std::string wrap_note;  // the Team's note when the ranks outnumber the allowed CPUs (else empty)
};

// Runs `plan` (built for `request`, which names the op the oracle checks) on a Team of plan.p
// ranks: mailbox rings of 64 KiB, or what the plan needs to be deadlock-free in program order;
// the memory checked first (InputError); inputs from the op's oracle where it knows the op (so
// timings see the same data whether verified or not), reduce ops combining with its unsigned
// sum; then timed_runs(). `team` is used as given except for the ring size and announce_wrap.
PlanRun run_plan(const std::shared_ptr<const Plan>& plan, const PlanRequest& request, TeamOptions team,
                 const RunOptions& options);

}  // namespace postbox
