// postbox bench cluster: the barrier and collectives across MPI processes, postbox
// hybrid (P processes × T threads) against Open MPI's own collectives with the same rank count as
// flat processes and against MPI+OpenMP, side by side and interleaved in one mpirun.
//
// The job has N = P·T processes. Flat competitors run on all N, one thread each. Hybrid
// competitors run on P of them (world ranks 0, T, 2T, ...) with T threads each, while the other
// N − P wait in a sleeping MPI_Ibarrier loop (so they leave the cores alone, as if those ranks
// were the hybrid's threads). Rounds: a warm-up round (a batch of 8 operations, or the median
// of three where the first took under 10 target_ms) sizes each competitor's batch to about
// target_ms, then every round measures every competitor once in turn, the first one rotating;
// a batch's time per operation is the slowest process's elapsed time over the batch's
// operations; a competitor's figure is the median over the rounds.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "barrier_bench.hpp"  // LoadSample

namespace postbox::bench {

struct ClusterBenchOptions {
  int threads = 1;      // T
  int rounds = 5;       // measured rounds (after the warm-up round)
  double target_ms = 20;  // per batch
};

struct ClusterRow {
  std::string group;  // "barrier", "bcast 8 B", "bcast 64 KiB", "allreduce 8 B", "allreduce 64 KiB"
  std::string impl;   // "postbox hybrid", "MPI_Barrier", ...
  bool hybrid = false;
  std::string reason;  // why this row runs what it runs (the postbox hybrid plans' algorithm); may be empty
  int iters = 0;  // operations per batch
  double median_ns = 0;
  std::vector<double> round_ns;
};

struct ClusterBenchResult {
  int processes = 0;  // N = P·T
  int hybrid_processes = 0;  // P
  int threads = 0;  // T
  int cpus = 0;     // CPUs the node's processes may use (process 0's affinity)
  int on_node = 0;  // processes on process 0's node
  int node_cpus = 0;  // hardware threads of process 0's node
  int rounds = 0;
  LoadSample load_before, load_after;
  std::vector<ClusterRow> rows;
};

// One competitor's batch: runs `iters` operations (after its own warm-up) and returns this
// process's elapsed ns over them. comm: the hybrid's P processes, or all N for a flat one.
using ClusterBatch = std::function<double(MPI_Comm comm, int threads, int iters)>;

class ClusterBench {
 public:
  // Collective over world. world's size not a multiple of threads → InputError (every process).
  ClusterBench(MPI_Comm world, ClusterBenchOptions options);
  ~ClusterBench();
  ClusterBench(const ClusterBench&) = delete;
  ClusterBench& operator=(const ClusterBench&) = delete;

  // Adds a competitor (the same calls, in the same order, on every process), with the reason
  // line the output prints for it (empty: none).
  void add(std::string group, std::string impl, bool hybrid, ClusterBatch batch, std::string reason = {});
  // Collective: runs every competitor; every process returns the same rows.
  ClusterBenchResult run();
  [[nodiscard]] int threads() const noexcept { return options_.threads; }

 private:
  struct Competitor {
    ClusterRow row;
    ClusterBatch batch;
  };
  double measure(Competitor& c, int iters);
  MPI_Comm world_ = MPI_COMM_NULL;
  MPI_Comm hybrid_ = MPI_COMM_NULL;  // MPI_COMM_NULL on the processes the hybrid leaves idle
  ClusterBenchOptions options_;
  std::vector<Competitor> competitors_;
};

// The rows of `postbox bench cluster`: barrier (postbox hybrid, postbox intra + MPI_Barrier,
// MPI+OpenMP, MPI_Barrier, MPI_Ibarrier), and bcast / allreduce at 8 B and 64 KiB: postbox
// hybrid (a plan run by one cluster::Job of the P processes x T threads, kHybridBcastAlgo and
// hybrid_allreduce_algo(T), built once and run repeatedly), at 8 B postbox barrier-reduce
// (ClusterBarrier::arrive_and_reduce of one double), MPI+OpenMP and flat MPI_Bcast /
// MPI_Allreduce.
void add_cluster_rows(ClusterBench& bench);

// The hybrid rows' algorithms. bcast: hier across the job (cluster::use_job_hier_levels): its top
// level groups the ranks by process, so one message enters each process (P - 1 between
// processes, the fewest a tree can send), built from the inter-process figures, and each
// process's tree from the intra ones. allreduce (hybrid_allreduce_algo): with T > 1
// reduce-bcast, whose recursive-halving interval trees (reduce, then bcast) have whole processes
// as subtrees when P and T are powers of two (ranks are process-major): 2(P - 1) messages
// between processes, each of the whole buffer once, where recursive doubling and postal would
// send log2 P or more MPI messages from every thread; with T = 1 every rank is a process and
// that advantage is gone, so recursive doubling, whose rounds are exchanges (log2 P message
// latencies, where reduce-bcast's trees take one up and one down per level), as Open MPI's own
// small allreduce.
inline constexpr const char* kHybridBcastAlgo = "hier";
constexpr const char* hybrid_allreduce_algo(int threads) { return threads == 1 ? "recursive-doubling" : "reduce-bcast"; }

// MPI+OpenMP (cluster_bench_omp.cpp, compiled with OpenMP): T OpenMP threads; per operation
// `#pragma omp barrier`, the master calls op(comm), `#pragma omp barrier`. Returns the master's
// elapsed ns over iters operations after 10 untimed ones; NaN when built without OpenMP.
double omp_hybrid_batch(MPI_Comm comm, int threads, int iters, const std::function<void(MPI_Comm)>& op);
bool have_openmp();

}  // namespace postbox::bench
