// The barrier benchmark behind `postbox bench barrier` and bench/bench_barrier: every postbox
// barrier (make_barrier names), std::barrier, pthread_barrier_wait, and `#pragma omp barrier`
// under libgomp and LLVM libomp (helper executables postbox-omp-gomp / postbox-omp-llvm, run as
// child processes from helper_dir), all measured with the EPCC syncbench method (syncbench.hpp).
//
// Interleaved: per p, one untimed warm-up pass over every competitor, then `rounds` rounds, each
// measuring every competitor once (round-robin, the starting competitor rotating from round to
// round) with a share of the outer repetitions. A competitor's median_ns is the median over the
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

struct BarrierBenchOptions {
  std::vector<int> ps{2, 4, 8, 16};
  // Empty: every name of barrier_impl_names().
  std::vector<std::string> impls;
  // params.outer is the total of outer repetitions per competitor and p, spread over the rounds.
  syncbench::Params params{20, 25'000'000, 32, 1'000'000};
  // --quick: 10 repetitions of about 5 ms.
  static constexpr syncbench::Params kQuick{10, 5'000'000, 32, 1'000'000};
  // Rounds of the round-robin (at most params.outer: every round has at least one repetition).
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
};

struct BarrierRow {
  int p = 0;
  std::string impl;
  double median_ns = 0, mean_ns = 0, sd_ns = 0;
  // The median of each round, in round order.
  std::vector<double> round_medians_ns;
};

// A load snapshot: getloadavg() and the runnable tasks of the whole machine (/proc/stat
// procs_running, this thread included); -1 where unknown.
struct LoadSample {
  double avg1 = -1, avg5 = -1, avg15 = -1;
  int runnable = -1;
};
LoadSample sample_load();

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
};

// One ratio of medians the issues ask for: numerator / denominator at p.
struct BarrierRatio {
  int p = 0;
  std::string numerator, denominator;  // impl names; denominator "best" is the fastest row at p
  double value = 0;                    // NaN when a row is missing
  std::string best;                    // the fastest row's impl when denominator == "best"
};

// Issue 10's ratios: at p = 2, default / best row; at p >= 4, default / std, pthread,
// omp-gomp and omp-llvm. Issue 15's, where a "default@fibers" row exists: default@fibers /
// default (the same barrier on kernel threads), std, omp-gomp and omp-llvm.
std::vector<BarrierRatio> barrier_ratios(const BarrierBenchResult& result, const std::vector<int>& ps);

// default, fibo, combine, central, dissemination, mcs, tournament, hier, std, pthread,
// omp-gomp, omp-llvm.
const std::vector<std::string>& barrier_impl_names();

// Bad options (p < 1, unknown impl, rounds < 1, settle_s < 0) → InputError. progress(msg) is
// called before each measurement.
BarrierBenchResult run_barrier_bench(const BarrierBenchOptions& options,
                                     const std::function<void(const std::string&)>& progress = {});

}  // namespace postbox::bench
