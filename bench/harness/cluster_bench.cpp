#include "cluster_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "postbox/barrier/barrier.hpp"
#include "postbox/cluster/barrier.hpp"
#include "postbox/cluster/job.hpp"
#include "postbox/cluster/mpi_env.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/verify.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point start) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A flat batch: iters calls of op after 10 untimed ones.
ClusterBatch flat(std::function<void(MPI_Comm)> op) {
  return [op = std::move(op)](MPI_Comm comm, int, int iters) {
    for (int i = 0; i < 10; ++i) op(comm);
    const auto start = Clock::now();
    for (int i = 0; i < iters; ++i) op(comm);
    return ns_since(start);
  };
}

// A hybrid batch over a barrier-like object: T threads, 10 untimed phases, then iters timed by
// thread 0 (every thread starts the timed phases together: the last untimed phase releases them).
template <class Phase>
double threaded(int threads, int iters, Phase&& phase) {
  double elapsed = 0;
  const auto body = [&](int t) {
    for (int i = 0; i < 10; ++i) phase(t);
    const auto start = Clock::now();
    for (int i = 0; i < iters; ++i) phase(t);
    if (t == 0) elapsed = ns_since(start);
  };
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back(body, t);
  body(0);
  for (auto& th : others) th.join();
  return elapsed;
}

// The postbox hybrid bcast and allreduce rows share one cluster::Job of the hybrid processes,
// constructed by the first batch that runs (collective over the hybrid communicator, which every
// hybrid batch gets) and kept until the bench ends.
struct SharedJob {
  std::unique_ptr<cluster::Job> job;
};

// A hybrid batch: the plan for `req` at p = P·T, built and prepared (its first run) once, then
// run back to back by the job (run() returns once this process's ranks finished; the next run's
// messages match in order, as MPI_Bcast's do).
ClusterBatch job_batch(std::shared_ptr<SharedJob> shared, PlanRequest req) {
  struct State {
    std::shared_ptr<const Plan> plan;
    std::vector<std::vector<std::byte>> bufs;
    std::vector<std::span<std::byte>> users;
    ReduceFn sum;
  };
  auto st = std::make_shared<State>();
  return [shared = std::move(shared), req = std::move(req), st](MPI_Comm comm, int threads, int iters) mutable {
    if (!shared->job) shared->job = std::make_unique<cluster::Job>(comm, threads);
    cluster::Job& job = *shared->job;
    if (!st->plan) {
      req.p = job.p();
      cluster::use_job_hier_levels(req, job.processes(), threads);
      st->plan = cached_plan(req);
      st->sum = unsigned_sum(st->plan->elem_bytes);
      st->bufs.resize(static_cast<std::size_t>(threads));
      for (int t = 0; t < threads; ++t) {
        st->bufs[static_cast<std::size_t>(t)].resize(st->plan->user_bytes[static_cast<std::size_t>(job.rank_of(t))]);
        st->users.emplace_back(st->bufs[static_cast<std::size_t>(t)]);
      }
    }
    for (int i = 0; i < 10; ++i) job.run(st->plan, st->users, &st->sum);
    const auto start = Clock::now();
    for (int i = 0; i < iters; ++i) job.run(st->plan, st->users, &st->sum);
    return ns_since(start);
  };
}

std::string hybrid_reason(const std::string& op, int threads) {
  const std::string common = " on one cluster::Job (plan built once, run repeatedly)";
  if (op == "bcast") {
    std::string source;
    (void)cluster::inter_latency(&source);
    return std::string("postbox hybrid bcast: ") + kHybridBcastAlgo + common +
           ": its top level groups the ranks by process, so one message enters each process (P - 1 between "
           "processes, the fewest a tree can send); tree among processes from " + source +
           ", inside each from the intra figures";
  }
  if (threads == 1) {
    return std::string("postbox hybrid allreduce: ") + hybrid_allreduce_algo(threads) + common +
           ": T = 1, every rank is a process, so its rounds of exchanges (log2 P message latencies), as Open MPI's own "
           "small allreduce";
  }
  return std::string("postbox hybrid allreduce: ") + hybrid_allreduce_algo(threads) + common +
         ": ranks are process-major, so with P and T powers of two its interval trees have whole processes as "
         "subtrees: 2(P - 1) messages between processes, each of the whole buffer once";
}

}  // namespace

ClusterBench::ClusterBench(MPI_Comm world, ClusterBenchOptions options) : world_(world), options_(options) {
  int size = 0, rank = 0;
  MPI_Comm_size(world_, &size);
  MPI_Comm_rank(world_, &rank);
  if (options_.threads < 1) throw InputError("--threads must be at least 1");
  if (size % options_.threads != 0) {
    throw InputError("bench cluster: the job's " + std::to_string(size) + " processes are not a multiple of --threads " +
                     std::to_string(options_.threads) + " (run mpirun -np P*T)");
  }
  MPI_Comm_split(world_, rank % options_.threads == 0 ? 0 : MPI_UNDEFINED, rank, &hybrid_);
}

ClusterBench::~ClusterBench() {
  if (hybrid_ != MPI_COMM_NULL) MPI_Comm_free(&hybrid_);
}

void ClusterBench::add(std::string group, std::string impl, bool hybrid, ClusterBatch batch, std::string reason) {
  Competitor c;
  c.row.group = std::move(group);
  c.row.impl = std::move(impl);
  c.row.hybrid = hybrid;
  c.row.reason = std::move(reason);
  c.batch = std::move(batch);
  competitors_.push_back(std::move(c));
}

// One batch of c on every process it runs on; returns the slowest process's ns per operation.
double ClusterBench::measure(Competitor& c, int iters) {
  double mine = 0;
  if (!c.row.hybrid) {
    mine = c.batch(world_, 1, iters);
  } else if (hybrid_ != MPI_COMM_NULL) {
    mine = c.batch(hybrid_, options_.threads, iters);
  }
  cluster::sleeping_barrier(world_);
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, world_);
  return slowest / iters;
}

ClusterBenchResult ClusterBench::run() {
  ClusterBenchResult res;
  MPI_Comm_size(world_, &res.processes);
  res.threads = options_.threads;
  res.hybrid_processes = res.processes / options_.threads;
  res.rounds = options_.rounds;
  res.cpus = allowed_cpu_count();
  res.node_cpus = static_cast<int>(std::thread::hardware_concurrency());
  res.on_node = cluster::processes_on_node(world_);
  res.load_before = sample_load();
  // Warm-up round: a batch of 8 operations sizes the batch that fills target_ms. When it took
  // under 10 target_ms, two more are measured and the median of the three sizes it: one batch
  // that a busy machine stalls for a time slice would size the row at the floor of 4
  // operations; a row slower than that is at the floor anyway and is not measured twice more.
  // (measure() returns the same figure on every process, so they all decide alike.)
  for (Competitor& c : competitors_) {
    double per = measure(c, 8);
    if (8 * per < 10 * options_.target_ms * 1e6) per = median({per, measure(c, 8), measure(c, 8)});
    c.row.iters = static_cast<int>(std::clamp(options_.target_ms * 1e6 / std::max(per, 1.0), 4.0, 1e6));
  }
  const auto n = competitors_.size();
  for (int round = 0; round < options_.rounds; ++round) {
    for (std::size_t i = 0; i < n; ++i) {
      Competitor& c = competitors_[(i + static_cast<std::size_t>(round)) % n];
      c.row.round_ns.push_back(measure(c, c.row.iters));
    }
  }
  res.load_after = sample_load();
  for (Competitor& c : competitors_) {
    c.row.median_ns = median(c.row.round_ns);
    res.rows.push_back(c.row);
  }
  return res;
}

void add_cluster_rows(ClusterBench& bench) {
  // Barrier.
  bench.add("barrier", "postbox hybrid", true, [](MPI_Comm comm, int threads, int iters) {
    cluster::ClusterBarrier b(comm, threads);
    return threaded(threads, iters, [&](int t) { b.arrive_and_wait(t); });
  });
  bench.add("barrier", "postbox intra + MPI_Barrier", true, [](MPI_Comm comm, int threads, int iters) {
    BarrierOptions o;
    o.completion = [comm] { MPI_Barrier(comm); };
    Barrier b(threads, o);
    return threaded(threads, iters, [&](int t) { b.arrive_and_wait(t); });
  });
  const auto omp = [](std::function<void(MPI_Comm)> op) {
    return [op = std::move(op)](MPI_Comm comm, int threads, int iters) { return omp_hybrid_batch(comm, threads, iters, op); };
  };
  if (have_openmp()) bench.add("barrier", "MPI+OpenMP", true, omp([](MPI_Comm c) { MPI_Barrier(c); }));
  bench.add("barrier", "MPI_Barrier", false, flat([](MPI_Comm c) { MPI_Barrier(c); }));
  bench.add("barrier", "MPI_Ibarrier", false, flat([](MPI_Comm c) {
              MPI_Request r = MPI_REQUEST_NULL;
              MPI_Ibarrier(c, &r);
              MPI_Wait(&r, MPI_STATUS_IGNORE);
            }));
  // Collectives: 8 B and 64 KiB of doubles.
  auto shared = std::make_shared<SharedJob>();
  for (const int bytes : {8, 65536}) {
    const std::string size = bytes == 8 ? "8 B" : "64 KiB";
    const int count = bytes / static_cast<int>(sizeof(double));
    const auto bcast = [count](MPI_Comm c) {
      thread_local std::vector<double> buf;
      buf.resize(static_cast<std::size_t>(count), 1.0);
      MPI_Bcast(buf.data(), count, MPI_DOUBLE, 0, c);
    };
    const auto allreduce = [count](MPI_Comm c) {
      thread_local std::vector<double> in, out;
      in.resize(static_cast<std::size_t>(count), 1.0);
      out.resize(static_cast<std::size_t>(count));
      MPI_Allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, c);
    };
    PlanRequest req;
    req.bytes = bytes;
    req.elem_bytes = sizeof(double);
    req.op = "bcast";
    req.algo = kHybridBcastAlgo;
    bench.add("bcast " + size, "postbox hybrid", true, job_batch(shared, req),
              bytes == 8 ? hybrid_reason("bcast", bench.threads()) : std::string());
    if (have_openmp()) bench.add("bcast " + size, "MPI+OpenMP", true, omp(bcast));
    bench.add("bcast " + size, "MPI_Bcast", false, flat(bcast));
    req.op = "allreduce";
    req.algo = hybrid_allreduce_algo(bench.threads());
    bench.add("allreduce " + size, "postbox hybrid", true, job_batch(shared, req),
              bytes == 8 ? hybrid_reason("allreduce", bench.threads()) : std::string());
    if (bytes == 8) {
      // One double: the cluster barrier's own combine carries it (intra-node arrival tree, the
      // leaders' exchange over MPI, the wake-up), with no plan and no team hand-off.
      bench.add("allreduce " + size, "postbox barrier-reduce", true,
                [](MPI_Comm comm, int threads, int iters) {
                  cluster::ClusterBarrier b(comm, threads);
                  int processes = 1;
                  MPI_Comm_size(comm, &processes);
                  const double ranks = static_cast<double>(processes) * threads;
                  return threaded(threads, iters, [&](int t) {
                    const double sum = b.arrive_and_reduce(t, 1.0, std::plus<double>());
                    PB_CHECK(sum == ranks, "bench cluster: barrier-reduce summed " + std::to_string(sum) + " over " +
                                               std::to_string(ranks) + " ranks");
                  });
                },
                "postbox barrier-reduce: ClusterBarrier::arrive_and_reduce of one double (the barrier's arrival "
                "combines the values, the leaders exchange them over MPI, the wake-up returns the sum)");
    }
    if (have_openmp()) bench.add("allreduce " + size, "MPI+OpenMP", true, omp(allreduce));
    bench.add("allreduce " + size, "MPI_Allreduce", false, flat(allreduce));
  }
}

}  // namespace postbox::bench
