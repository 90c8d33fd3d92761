#include "cluster_bench.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "postbox/barrier/barrier.hpp"
#include "postbox/cluster/collectives.hpp"
#include "postbox/cluster/barrier.hpp"
#include "postbox/cluster/job.hpp"
#include "postbox/cluster/mpi_env.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/verify.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"
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

void ClusterBench::add(std::string group, std::string impl, bool hybrid, ClusterBatch batch, std::string reason,
                       std::int64_t bytes) {
  Competitor c;
  c.row.bytes = bytes;
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
  int rank = 0;
  MPI_Comm_rank(world_, &rank);
  if (rank == 0) res.cross_cpu_one_way_ns = cross_cpu_one_way_ns();
  cluster::sleeping_barrier(world_);  // the others sleep meanwhile: they would take the two CPUs
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

// ---- The size sweep ----------------------------------------------------------------------------

namespace {

void sum_doubles(const std::byte* x, const std::byte* y, std::byte* out, std::size_t count, const void*) {
  for (std::size_t i = 0; i < count; ++i) {
    double a, b;
    std::memcpy(&a, x + i * sizeof(double), sizeof(double));
    std::memcpy(&b, y + i * sizeof(double), sizeof(double));
    a += b;
    std::memcpy(out + i * sizeof(double), &a, sizeof(double));
  }
}

// The sweep's operator for a reduce of `bytes`: what MPI_SUM does on MPI_DOUBLE or MPI_UINT8_T.
ReduceFn sweep_sum(std::int64_t bytes) {
  if (bytes % 8 == 0) return ReduceFn{&sum_doubles, nullptr, sizeof(double), true};
  return unsigned_sum(1);
}
MPI_Datatype sweep_type(std::int64_t bytes) { return bytes % 8 == 0 ? MPI_DOUBLE : MPI_UINT8_T; }
int sweep_count(std::int64_t bytes) { return static_cast<int>(bytes % 8 == 0 ? bytes / 8 : bytes); }

struct SharedCollectives {
  std::unique_ptr<cluster::Collectives> collectives;
};

// cluster::Collectives on the hybrid's T threads per process, each thread on its own buffers
// (allreduce and reduce: zeros, so a sum stays zero and never grows into the slow paths of the
// arithmetic), root 0.
ClusterBatch collectives_batch(std::shared_ptr<SharedCollectives> shared, std::string op, std::int64_t bytes) {
  return [shared = std::move(shared), op = std::move(op), bytes](MPI_Comm comm, int threads, int iters) {
    if (!shared->collectives) shared->collectives = std::make_unique<cluster::Collectives>(comm, threads);
    cluster::Collectives& c = *shared->collectives;
    const auto n = static_cast<std::size_t>(bytes);
    const std::size_t p = static_cast<std::size_t>(c.processes()) * static_cast<std::size_t>(threads);
    std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(threads), std::vector<std::byte>(n));
    std::vector<std::byte> out(c.process() == 0 && op == "gather" ? n * p : 0);
    const ReduceFn sum = sweep_sum(bytes);
    return threaded(threads, iters, [&](int t) {
      std::span<std::byte> buf = bufs[static_cast<std::size_t>(t)];
      if (op == "barrier") c.barrier(t);
      else if (op == "allreduce") c.allreduce(t, buf, sum);
      else if (op == "bcast") c.bcast(t, buf, 0);
      else if (op == "reduce") c.reduce(t, buf, 0, sum);
      else c.gather(t, buf, t == 0 ? std::span<std::byte>(out) : std::span<std::byte>(), 0);
    });
  };
}

const char* const kSweepOps[] = {"barrier", "bcast", "reduce", "allreduce", "gather"};
const char* const kSweepCalls[] = {"MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather"};

}  // namespace

std::int64_t parse_byte_size(std::string_view text, std::string_view what) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string unit(text.substr(digits));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int shift = -1;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kib") shift = 10;
  else if (unit == "m" || unit == "mib") shift = 20;
  else if (unit == "g" || unit == "gib") shift = 30;
  if (digits == 0 || shift < 0) {
    throw InputError(std::string(what) + ": '" + std::string(text) +
                     "' is not a byte size (digits, then B, K, KiB, M, MiB, G or GiB)");
  }
  const std::int64_t n = parse_int(text.substr(0, digits), what, 0);
  if (n > (std::numeric_limits<std::int64_t>::max() >> shift))
    throw InputError(std::string(what) + ": '" + std::string(text) + "' is too large");
  return n << shift;
}

std::vector<std::int64_t> parse_sizes(std::string_view text) {
  constexpr std::string_view what = "--sizes";
  const auto checked = [&](std::string_view item) {
    const std::int64_t v = parse_byte_size(item, what);
    if (v < 1 || v > kMaxSweepBytes)
      throw InputError("--sizes must be 1 B to 64 MiB each, got '" + std::string(item) + "'");
    return v;
  };
  std::vector<std::int64_t> sizes;
  for (std::string_view item : split_list(text, ',', what)) {
    const auto colon = item.find(':');
    if (colon == std::string_view::npos) {
      sizes.push_back(checked(item));
      continue;
    }
    if (item.find(':', colon + 1) != std::string_view::npos)
      throw InputError("--sizes: '" + std::string(item) + "' is not a range LO:HI");
    const std::int64_t lo = checked(item.substr(0, colon)), hi = checked(item.substr(colon + 1));
    if (lo > hi) throw InputError("--sizes: the range '" + std::string(item) + "' has LO above HI");
    for (std::int64_t v = lo; v <= hi; v *= 2) sizes.push_back(v);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::string size_label(std::int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

const char* sweep_element(std::int64_t bytes) { return bytes % 8 == 0 ? "double" : "uint8"; }

void add_sweep_rows(ClusterBench& bench, const std::vector<std::int64_t>& sizes) {
  auto shared = std::make_shared<SharedCollectives>();
  bench.add("barrier", "postbox", true, collectives_batch(shared, "barrier", 0), "dissemination among processes", 0);
  bench.add("barrier", "Open MPI", false, flat([](MPI_Comm c) { MPI_Barrier(c); }), "", 0);
  cluster::CollectivesOptions defaults;
  struct InOut {
    std::vector<std::byte> in, out;
  };
  for (const std::int64_t bytes : sizes) {
    const auto n = static_cast<std::size_t>(bytes);
    bench.add("bcast", "postbox", true, collectives_batch(shared, "bcast", bytes), "binomial among processes", bytes);
    bench.add("bcast", "Open MPI", false, flat([n, buf = std::make_shared<std::vector<std::byte>>()](MPI_Comm c) {
                buf->resize(n);
                MPI_Bcast(buf->data(), static_cast<int>(n), MPI_BYTE, 0, c);
              }), "", bytes);
    // reduce and allreduce: the same element and operator on both sides.
    bench.add("reduce", "postbox", true, collectives_batch(shared, "reduce", bytes), "binomial among processes", bytes);
    bench.add("reduce", "Open MPI", false, flat([bytes, n, b = std::make_shared<InOut>()](MPI_Comm c) {
                b->in.resize(n);
                b->out.resize(n);
                MPI_Reduce(b->in.data(), b->out.data(), sweep_count(bytes), sweep_type(bytes), MPI_SUM, 0, c);
              }), "", bytes);
    bench.add("allreduce", "postbox", true, collectives_batch(shared, "allreduce", bytes),
              cluster::to_string(bytes >= static_cast<std::int64_t>(defaults.rabenseifner_min_bytes)
                                     ? cluster::AllreduceAlgorithm::rabenseifner
                                     : cluster::AllreduceAlgorithm::recursive_doubling),
              bytes);
    bench.add("allreduce", "Open MPI", false, flat([bytes, n, b = std::make_shared<InOut>()](MPI_Comm c) {
                b->in.resize(n);
                b->out.resize(n);
                MPI_Allreduce(b->in.data(), b->out.data(), sweep_count(bytes), sweep_type(bytes), MPI_SUM, c);
              }), "", bytes);
    // gather: `bytes` from every rank, P·T of them at the root.
    bench.add("gather", "postbox", true, collectives_batch(shared, "gather", bytes), "binomial among processes", bytes);
    bench.add("gather", "Open MPI", false, flat([n, b = std::make_shared<InOut>()](MPI_Comm c) {
                int size = 1, rank = 0;
                MPI_Comm_size(c, &size);
                MPI_Comm_rank(c, &rank);
                b->in.resize(n);
                b->out.resize(rank == 0 ? n * static_cast<std::size_t>(size) : 0);
                MPI_Gather(b->in.data(), static_cast<int>(n), MPI_BYTE, b->out.data(), static_cast<int>(n), MPI_BYTE, 0, c);
              }), "", bytes);
  }
}

std::vector<SweepTable> sweep_tables(const ClusterBenchResult& result) {
  std::vector<SweepTable> tables;
  for (std::size_t k = 0; k < std::size(kSweepOps); ++k) {
    SweepTable table{kSweepOps[k], kSweepCalls[k], {}};
    std::map<std::int64_t, std::pair<const ClusterRow*, const ClusterRow*>> by_size;
    for (const ClusterRow& r : result.rows) {
      if (r.bytes < 0 || r.group != table.op) continue;
      auto& pair = by_size[r.bytes];
      (r.impl == "postbox" ? pair.first : pair.second) = &r;
    }
    for (const auto& [bytes, pair] : by_size) {
      if (pair.first == nullptr || pair.second == nullptr) continue;
      SweepLine line;
      line.bytes = bytes;
      line.element = table.op == "barrier" ? "" : table.op == "reduce" || table.op == "allreduce" ? sweep_element(bytes) : "byte";
      line.algorithm = pair.first->reason;
      line.postbox_ns = pair.first->median_ns;
      line.mpi_ns = pair.second->median_ns;
      line.ratio = line.postbox_ns / line.mpi_ns;
      line.postbox_ops = pair.first->iters;
      line.mpi_ops = pair.second->iters;
      line.postbox_round_ns = pair.first->round_ns;
      line.mpi_round_ns = pair.second->round_ns;
      table.lines.push_back(std::move(line));
    }
    if (!table.lines.empty()) tables.push_back(std::move(table));
  }
  return tables;
}

}  // namespace postbox::bench
