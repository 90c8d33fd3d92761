// The barrier benchmark behind `postbox bench barrier` and bench/bench_barrier: every postbox
// barrier (make_barrier names), std::barrier, pthread_barrier_wait, and `#pragma omp barrier`
// under libgomp and LLVM libomp (helper executables postbox-omp-gomp / postbox-omp-llvm, run as
// child processes from helper_dir), all measured with the EPCC syncbench method (syncbench.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "postbox/runtime/calibrate.hpp"
#include "syncbench.hpp"

namespace postbox::bench {

struct BarrierBenchOptions {
  std::vector<int> ps{2, 4, 8, 16};
  // Empty: every name of barrier_impl_names().
  std::vector<std::string> impls;
  syncbench::Params params{20, 25'000'000, 32, 1'000'000};
  // Where the OpenMP helpers live (empty: the directory of this executable).
  std::string helper_dir;
};

struct BarrierRow {
  int p = 0;
  std::string impl;
  double median_ns = 0, mean_ns = 0, sd_ns = 0;
};

struct BarrierBenchResult {
  std::vector<BarrierRow> rows;
  // Per p: the default Barrier's algorithm() and reason().
  std::vector<std::pair<int, std::string>> default_algorithm, default_reason;
  // Things the reader must know (a helper missing, ...).
  std::vector<std::string> notes;
  Calibration calibration;
};

// default, fibo, combine, central, dissemination, mcs, tournament, hier, std, pthread,
// omp-gomp, omp-llvm.
const std::vector<std::string>& barrier_impl_names();

// Bad options (p < 1, unknown impl) → InputError. progress(msg) is called before each cell.
BarrierBenchResult run_barrier_bench(const BarrierBenchOptions& options,
                                     const std::function<void(const std::string&)>& progress = {});

}  // namespace postbox::bench
