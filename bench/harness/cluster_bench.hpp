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

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "barrier_bench.hpp"  // LoadSample

namespace postbox::bench {

struct ClusterBenchOptions {
  int threads = 1;      // T
  int rounds = 5;       // measured rounds (after the warm-up round)
  double target_ms = 20;  // per batch
};

struct ClusterRow {
  // "barrier", "bcast 8 B", "bcast 64 KiB", "allreduce 8 B", "allreduce 64 KiB"; in a size sweep
  // (add_sweep_rows) the operation alone: "barrier", "bcast", "reduce", "allreduce", "gather".
  std::string group;
  std::string impl;   // "postbox hybrid", "MPI_Barrier", ...
  bool hybrid = false;
  std::string reason;  // why this row runs what it runs (the postbox hybrid plans' algorithm); may be empty
  std::int64_t bytes = -1;  // a size sweep's message size (0 for the barrier); -1 outside a sweep
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
  // cross_cpu_one_way_ns() on process 0 before the measurements, the others asleep (NaN: fewer
  // than two allowed CPUs).
  double cross_cpu_one_way_ns = 0;
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
  // line the output prints for it (empty: none), and in a size sweep its size (ClusterRow::bytes).
  void add(std::string group, std::string impl, bool hybrid, ClusterBatch batch, std::string reason = {},
           std::int64_t bytes = -1);
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

// ---- The size sweep: `postbox bench cluster --sizes` (OSU-style) ------------------------------

// The largest size a sweep takes: 64 MiB (a gather's root holds P·T of them).
inline constexpr std::int64_t kMaxSweepBytes = std::int64_t{64} << 20;

// A byte size: decimal digits (parse.hpp's integer grammar) and an optional unit, B, K or KiB,
// M or MiB, G or GiB (powers of 1024; letters in either case): "64KiB", "4M", "1". InputError
// naming `what` and quoting the text: "--sizes: '4X' is not a byte size (digits, then B, K, KiB,
// M, MiB, G or GiB)".
std::int64_t parse_byte_size(std::string_view text, std::string_view what);

// The sizes of --sizes, ascending and each once: a comma list of sizes and ranges, a range
// LO:HI being LO, 2·LO, 4·LO, ... up to HI (OSU's steps). Every size 1 to kMaxSweepBytes,
// LO <= HI; else InputError naming --sizes.
std::vector<std::int64_t> parse_sizes(std::string_view text);

// Rows of a sweep, for every size: bcast, reduce, allreduce, gather, and
// one barrier: "postbox" (cluster::Collectives, called by the hybrid's T threads per process,
// root 0) and
// "Open MPI" (MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Gather over all P·T
// processes, root 0). The element of reduce and allreduce: a double (MPI_DOUBLE, MPI_SUM) when
// the size is a multiple of 8, else an unsigned byte (MPI_UINT8_T, MPI_SUM), the same type and
// operator on both sides; bcast and gather move bytes (MPI_BYTE).
void add_sweep_rows(ClusterBench& bench, const std::vector<std::int64_t>& sizes);

// "8 B", "64 KiB", "4 MiB": whole KiB or MiB where the size is one, else bytes.
std::string size_label(std::int64_t bytes);

// "double" or "uint8": the element of a reduce or allreduce of `bytes` in a sweep.
const char* sweep_element(std::int64_t bytes);

// One line of a sweep's table: the postbox row and the Open MPI row of one (op, size).
struct SweepLine {
  std::int64_t bytes = 0;
  std::string element;    // "double", "uint8" (reduce, allreduce); "byte" (bcast, gather); "" (barrier)
  std::string algorithm;  // what the postbox row ran at this size
  double postbox_ns = 0, mpi_ns = 0;
  double ratio = 0;  // postbox_ns / mpi_ns
  int postbox_ops = 0, mpi_ops = 0;
  std::vector<double> postbox_round_ns, mpi_round_ns;
};
struct SweepTable {
  std::string op;         // "barrier", "bcast", "reduce", "allreduce", "gather"
  std::string mpi_call;   // "MPI_Barrier", ...
  std::vector<SweepLine> lines;  // ascending size
};
// The sweep's tables, in the order barrier, bcast, reduce, allreduce, gather, from the rows of a
// run of add_sweep_rows (other rows are ignored).
std::vector<SweepTable> sweep_tables(const ClusterBenchResult& result);

}  // namespace postbox::bench
