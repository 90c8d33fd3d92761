// The barrier benchmark behind `postbox bench barrier` and bench/bench_barrier: every postbox
// barrier (make_barrier names), std::barrier, pthread_barrier_wait, and `#pragma omp barrier`
// under libgomp and LLVM libomp (helper executables postbox-omp-gomp / postbox-omp-llvm, run as
// child processes from helper_dir), all measured with the EPCC syncbench method (syncbench.hpp).
//
// Interleaved: per p, one untimed warm-up pass over every competitor, then `rounds` rounds, each
// measuring every competitor once (each round in its own order, a shuffle seeded by p and the
// round, so that no competitor always follows the same one) with a share of the outer repetitions. A competitor's median_ns is the median over the
// rounds of its per-round medians, so a burst of load that hits one round hits every
// competitor of that round alike; mean_ns and sd_ns are over all its repetitions.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "postbox/runtime/calibrate.hpp"
#include "postbox/runtime/team.hpp"
#include "syncbench.hpp"

namespace postbox::bench {

// Where the kernel-thread rows run: team, p − 1 threads made once per p and kept across the
// warm-up and every round (as the OpenMP runtimes keep their pools); fresh, p − 1 threads made
// for each measurement (what the benchmark did before it had a team).
enum class Threads { team, fresh };

// A competing process for the whole run: none, or one CPU-bound child process at nice 0 or 10.
enum class Load { none, nice0, nice10 };

struct BarrierBenchOptions {
  std::vector<int> ps{2, 4, 8, 16};
  // Empty: every name of barrier_impl_names().
  std::vector<std::string> impls;
  // params.outer is the total of outer repetitions per competitor and p, spread over the rounds.
  syncbench::Params params{20, 25'000'000, 32, 1'000'000};
  // --quick: 10 repetitions of about 5 ms.
  static constexpr syncbench::Params kQuick{10, 5'000'000, 32, 1'000'000};
  // Rounds of the round-robin, at most params.outer (every round has at least one repetition;
  // more → InputError).
  int rounds = 5;
  // Before measuring, wait up to this long for the rest of the machine to leave the allowed CPUs
  // free (runnable tasks other than this one <= allowed CPUs - 1, held for 1 s); 0: do not wait.
  double settle_s = 0;
  // Where the OpenMP helpers live (empty: the directory of this executable).
  std::string helper_dir;
  // fibers: every postbox barrier among the competitors is measured a second time with its
  // ranks as fibers of a Team (RanksMode::fibers, BarrierOptions::fibers), row "<name>@fibers",
  // interleaved with the thread rows; auto: the same at the p that exceed the allowed CPUs;
  // threads: no fiber rows.
  RanksMode ranks = RanksMode::threads;
  Threads threads = Threads::team;
  Load load = Load::none;
};

struct BarrierRow {
  int p = 0;
  std::string impl;
  double median_ns = 0, mean_ns = 0, sd_ns = 0;
  // The median of each round, in round order.
  std::vector<double> round_medians_ns;
  // With params.tail: percentiles of the single barriers (rank 0's time per iteration less one
  // delay, from a log-linear histogram: within 6%); 0 without.
  double p50_ns = 0, p99_ns = 0, max_ns = 0;
};

// A load snapshot: getloadavg() and the runnable tasks of the whole machine (/proc/stat
// procs_running, this thread included); -1 where unknown.
struct LoadSample {
  double avg1 = -1, avg5 = -1, avg15 = -1;
  int runnable = -1;
};
LoadSample sample_load();

// Nanoseconds one way of a cache line bounced between the first two CPUs this process may use
// (two fresh threads pinned one to each; half the median round trip of 11 batches of 20 000):
// the cost of any hand-off between the two. NaN with fewer than two allowed CPUs or where the
// threads cannot be pinned. On a VM it tells the host's placement of the vCPUs apart (near or
// far: docs/cluster.md).
double cross_cpu_one_way_ns();

struct BarrierBenchResult {
  std::vector<BarrierRow> rows;
  // Per p: the default Barrier's algorithm() and reason().
  std::vector<std::pair<int, std::string>> default_algorithm, default_reason;
  // The same for the default barrier told that its ranks are fibers (rows "default@fibers").
  std::vector<std::pair<int, std::string>> fibers_default_algorithm, fibers_default_reason;
  // Things the reader must know (a helper missing, the load did not settle, ...).
  std::vector<std::string> notes;
  Calibration calibration;
  int allowed_cpus = 0;       // allowed_cpu_count() when the run started
  int rounds = 0;             // rounds run
  int outer_per_round = 0;    // repetitions per competitor per round
  double settled_after_s = 0; // time spent waiting for the load to settle
  LoadSample load_before, load_after;
  // cross_cpu_one_way_ns() right before the first measurement and right after the last, with
  // no competing process running (NaN: fewer than two allowed CPUs). A run whose two figures
  // differ by more than 1.5x changed machine mode on the way (a VM whose host moved its vCPUs).
  double cross_cpu_before_ns = 0, cross_cpu_after_ns = 0;
};

// One ratio of medians: numerator / denominator at p, and the target it is judged against.
struct BarrierRatio {
  int p = 0;
  std::string numerator, denominator;  // impl names; "best" is the fastest postbox algorithm on
                                       // kernel threads at p, "best-omp" the faster OpenMP row
  double value = 0;                    // NaN when a row is missing
  std::string best;                    // the row "best"/"best-omp" stands for
  double target = 0;                   // the ratio the default aims to stay at or below; 0: none
};

// The default barrier's ratios: default / best postbox algorithm (target 1.15); default / std
// where p exceeds the allowed CPUs (target 1.0); at p = 2, default / one-way (the ping-pong
// one-way latency, target 1.5) with two-flag / one-way beside it (no target: what this machine
// allows a barrier of two) and default@omp-gomp, default@omp-llvm / the faster
// `#pragma omp barrier` (target 0.8); where a "default@fibers" row exists, default@fibers /
// default, std, omp-gomp and omp-llvm (no target).
std::vector<BarrierRatio> barrier_ratios(const BarrierBenchResult& result, const std::vector<int>& ps);

// default, fibo, combine, central, dissemination, mcs, tournament, hier, std, pthread,
// omp-gomp, omp-llvm (`#pragma omp barrier` under libgomp and LLVM libomp), default@omp-gomp,
// default@omp-llvm (the default barrier through the C API from an OpenMP team), one-way (at
// p = 2 only: half a cache-line ping-pong round trip between the two threads), two-flag (at
// p = 2 only: each rank stores its phase in its own line and spins on the other's, the least a
// barrier of two can do).
const std::vector<std::string>& barrier_impl_names();

// Bad options (p < 1, unknown impl, rounds < 1 or > params.outer, settle_s < 0) → InputError. progress(msg) is
// called before each measurement.
BarrierBenchResult run_barrier_bench(const BarrierBenchOptions& options,
                                     const std::function<void(const std::string&)>& progress = {});

}  // namespace postbox::bench
