// postbox bench barrier: the barrier benchmark (barrier_bench.hpp), competitors side by side.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "barrier_bench.hpp"
#include "cli.hpp"
#include "progress.hpp"
#ifdef POSTBOX_HAVE_MPI
#include "cluster_bench.hpp"
#include "postbox/cluster/mpi_env.hpp"
#endif
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"

namespace postbox::cli {
namespace {

struct BenchBarrierArgs {
  std::string ps = "2,4,8,16";
  std::string impls;
  bool json = false;
  bool quick = false;
  std::string outer, rounds, settle;  // text, parsed by parse.hpp's grammar (empty: not given)
  std::string ranks = "threads";
  std::string threads = "team";
  std::string load = "none";
  std::string method = "barrier";
  bool tail = false;
};

// Thread counts of the benchmark: every p runs p threads at once.
constexpr int kMaxBenchThreads = 1024;

double median_of(const std::vector<bench::BarrierRow>& rows, int p, const std::string& impl) {
  for (const auto& r : rows)
    if (r.p == p && r.impl == impl) return r.median_ns;
  return std::nan("");
}

void print_load(const char* when, const bench::LoadSample& l) {
  if (l.avg1 >= 0) std::printf("load average (1/5/15 min) %s: %.2f %.2f %.2f", when, l.avg1, l.avg5, l.avg15);
  else std::printf("load average %s: unknown", when);
  if (l.runnable >= 0) std::printf("; runnable tasks on the machine: %d", l.runnable);
  std::printf("\n");
}

void print_table(const bench::BarrierBenchResult& res, const std::vector<int>& ps, const bench::BarrierBenchOptions& o) {
  const auto& c = res.calibration;
  std::printf("EPCC syncbench: overhead per barrier = (time of inner x {delay; barrier} - time of inner x delay) / inner;\n"
              "interleaved: per p a warm-up pass, then %d rounds, each measuring every competitor in turn (each round in\n"
              "its own seeded order) with %d outer repetitions of about %.0f ms; median = the median over the rounds of each round's\n"
              "median, mean and sd over all %d repetitions. Threads are not pinned.\n",
              res.rounds, res.outer_per_round, static_cast<double>(o.params.target_ns) / 1e6,
              res.rounds * res.outer_per_round);
  std::printf("Kernel-thread rows: %s. Method: %s.%s\n",
              o.threads == bench::Threads::team
                  ? "one team of p threads per p, made once and kept for every row and round (as the OpenMP runtimes keep\n"
                    "their pools); the OpenMP rows run in their runtime's own team"
                  : "p fresh threads made for each measurement",
              o.params.method == syncbench::Method::late
                  ? "late arriver (in iteration i only thread i mod p runs the delay before the barrier)"
                  : "EPCC barrier (every thread runs the delay before every barrier)",
              o.load == bench::Load::none     ? ""
              : o.load == bench::Load::nice0 ? "\nA competing CPU-bound process at nice 0 ran for the whole measurement."
                                             : "\nA competing CPU-bound process at nice 10 ran for the whole measurement.");
  std::printf("%d allowed CPU%s (this process's affinity; the host has %u hardware threads)\n", res.allowed_cpus,
              res.allowed_cpus == 1 ? "" : "s", std::thread::hardware_concurrency());
  print_load("before", res.load_before);
  if (o.settle_s > 0) std::printf("waited %.1f s for the load to settle (at most %.0f s)\n", res.settled_after_s, o.settle_s);
  print_load("after", res.load_after);
  if (std::isnan(res.cross_cpu_before_ns)) {
    std::printf("cache-line one-way latency between two CPUs: not measured (fewer than two allowed CPUs)\n");
  } else {
    std::printf("cache-line one-way latency between the first two allowed CPUs: %.1f ns before the run, %.1f ns after\n",
                res.cross_cpu_before_ns, res.cross_cpu_after_ns);
  }
  std::printf("calibration (%s): s = %.1f ns, r = %.1f ns, lambda = %.2f\n", c.source.c_str(), c.s_ns, c.r_ns, c.lambda);
  for (int p : ps) {
    std::printf("\np = %d\n%-21s %12s %12s %12s %9s %9s", p, "impl", "median_ns", "mean_ns", "sd_ns", "vs std",
                "rounds");
    if (o.params.tail) std::printf(" %10s %10s %10s", "p50_ns", "p99_ns", "max_ns");
    std::printf("\n");
    const double base = median_of(res.rows, p, "std");
    for (const auto& r : res.rows) {
      if (r.p != p) continue;
      std::printf("%-21s %12.1f %12.1f %12.1f", r.impl.c_str(), r.median_ns, r.mean_ns, r.sd_ns);
      if (std::isfinite(base) && base > 0) std::printf(" %8.2fx", r.median_ns / base);
      else std::printf(" %9s", "-");
      // Spread of the round medians: slowest / fastest round.
      const auto [lo, hi] = std::minmax_element(r.round_medians_ns.begin(), r.round_medians_ns.end());
      if (lo != r.round_medians_ns.end() && *lo > 0) std::printf(" %8.2fx", *hi / *lo);
      else std::printf(" %9s", "-");
      if (o.params.tail) std::printf(" %10.0f %10.0f %10.0f", r.p50_ns, r.p99_ns, r.max_ns);
      std::printf("\n");
    }
    for (std::size_t i = 0; i < res.default_algorithm.size(); ++i)
      if (res.default_algorithm[i].first == p)
        std::printf("default chose '%s': %s\n", res.default_algorithm[i].second.c_str(),
                    res.default_reason[i].second.c_str());
    for (std::size_t i = 0; i < res.fibers_default_algorithm.size(); ++i)
      if (res.fibers_default_algorithm[i].first == p)
        std::printf("default@fibers chose '%s': %s\n", res.fibers_default_algorithm[i].second.c_str(),
                    res.fibers_default_reason[i].second.c_str());
  }
  std::printf("(rounds: the slowest round's median / the fastest's)\n");
  // The default's ratios, each with the target it aims at (no pass/fail here: one run on a
  // shared box is one sample; judge over fresh processes).
  std::printf("\nratios of medians (the default's targets in brackets):\n");
  int shown_p = 0;
  for (const auto& r : bench::barrier_ratios(res, ps)) {
    if (r.p != shown_p) std::printf("%s  p=%d:", shown_p == 0 ? "" : "\n", r.p);
    shown_p = r.p;
    std::printf(" %s/%s %.2f", r.numerator.c_str(), r.denominator.c_str(), r.value);
    if (!r.best.empty()) std::printf(" (%s)", r.best.c_str());
    if (r.target > 0) std::printf(" [<= %.2f]", r.target);
  }
  if (shown_p != 0) std::printf("\n");
  // Whether the default's figures can be judged: one figure per round, so rounds that disagree
  // by more than 1.5x were measured on a box whose speed changed under them. (std::barrier and
  // the OpenMP rows swing by themselves on some machines: their spread is in the table.)
  std::string noisy;
  double worst = 1;
  for (const auto& r : res.rows) {
    if (r.impl != "default") continue;
    const auto [lo, hi] = std::minmax_element(r.round_medians_ns.begin(), r.round_medians_ns.end());
    if (lo == r.round_medians_ns.end() || !(*lo > 0)) continue;
    if (*hi / *lo > worst) {
      worst = *hi / *lo;
      noisy = r.impl + " at p = " + std::to_string(r.p);
    }
  }
  const double moved = std::max(res.cross_cpu_before_ns, res.cross_cpu_after_ns) /
                       std::min(res.cross_cpu_before_ns, res.cross_cpu_after_ns);
  if (std::isfinite(moved) && moved > 1.5) {
    std::printf("the machine changed mode during the run: a cache line crossed between the first two CPUs in %.1f ns\n"
                "before and %.1f ns after (on a VM: the host moved the vCPUs); rounds on either side of the change are\n"
                "not comparable\n",
                res.cross_cpu_before_ns, res.cross_cpu_after_ns);
  }
  if (worst > 1.5) {
    std::printf("too noisy to judge: the rounds of %s differ by %.1fx (slowest / fastest round median); rerun on a\n"
                "quieter machine (--settle waits for one) before reading the ratios\n",
                noisy.c_str(), worst);
  } else if (!noisy.empty()) {
    std::printf("steady enough to judge: the default's rounds differ by at most %.2fx\n", worst);
  }
  for (const auto& n : res.notes) std::printf("note: %s\n", n.c_str());
}

// A figure that may be NaN (not measured): JSON null then.
nlohmann::json cross_cpu_json(double ns) { return std::isnan(ns) ? nlohmann::json(nullptr) : nlohmann::json(ns); }

nlohmann::json load_json(const bench::LoadSample& l) {
  return {{"avg1", l.avg1}, {"avg5", l.avg5}, {"avg15", l.avg15}, {"runnable", l.runnable}};
}

void bench_barrier(const BenchBarrierArgs& a) {
  bench::BarrierBenchOptions o;
  o.ps.clear();
  for (std::string_view s : split_list(a.ps, ',', "--p")) o.ps.push_back(static_cast<int>(parse_int(s, "--p", 1, kMaxBenchThreads)));
  if (!a.impls.empty())
    for (std::string_view s : split_list(a.impls, ',', "--impl")) o.impls.emplace_back(s);
  if (a.quick) o.params = bench::BarrierBenchOptions::kQuick;
  if (!a.outer.empty()) o.params.outer = static_cast<int>(parse_int(a.outer, "--outer", 1, 100000));
  // Without --rounds: 5 rounds, fewer when there are fewer outer repetitions than that.
  o.rounds = a.rounds.empty() ? std::min(o.rounds, o.params.outer)
                              : static_cast<int>(parse_int(a.rounds, "--rounds", 1, 1000));
  if (!a.settle.empty()) {
    o.settle_s = parse_real(a.settle, "--settle");
    if (o.settle_s < 0 || o.settle_s > 3600) throw InputError("--settle must be in 0..3600 seconds, got " + a.settle);
  }
  o.ranks = parse_ranks_option(a.ranks);
  if (a.threads == "team") o.threads = bench::Threads::team;
  else if (a.threads == "fresh") o.threads = bench::Threads::fresh;
  else throw InputError("--threads must be team or fresh, got '" + a.threads + "'");
  if (a.load == "none") o.load = bench::Load::none;
  else if (a.load == "nice0") o.load = bench::Load::nice0;
  else if (a.load == "nice10") o.load = bench::Load::nice10;
  else throw InputError("--load must be none, nice0 or nice10, got '" + a.load + "'");
  if (a.method == "barrier") o.params.method = syncbench::Method::barrier;
  else if (a.method == "late") o.params.method = syncbench::Method::late;
  else throw InputError("--method must be barrier or late, got '" + a.method + "'");
  o.params.tail = a.tail;
  if (dry_run()) return;
  bench::BarrierBenchResult res;
  {
    TerminalProgress progress(!a.json && stderr_is_terminal());
    res = bench::run_barrier_bench(o, [&](const std::string& msg) { progress.update("measuring " + msg); });
  }
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : res.rows)
    {
      nlohmann::json row{{"p", r.p},         {"impl", r.impl},   {"median_ns", r.median_ns},
                         {"mean_ns", r.mean_ns}, {"sd_ns", r.sd_ns}, {"round_medians_ns", r.round_medians_ns}};
      if (o.params.tail) {
        row["p50_ns"] = r.p50_ns;
        row["p99_ns"] = r.p99_ns;
        row["max_ns"] = r.max_ns;
      }
      rows.push_back(row);
    }
    nlohmann::json ratios = nlohmann::json::array();
    for (const auto& r : bench::barrier_ratios(res, o.ps)) {
      nlohmann::json j{{"p", r.p}, {"numerator", r.numerator}, {"denominator", r.denominator}};
      j["value"] = std::isfinite(r.value) ? nlohmann::json(r.value) : nlohmann::json(nullptr);
      if (!r.best.empty()) j["best"] = r.best;
      if (r.target > 0) j["target"] = r.target;
      ratios.push_back(j);
    }
    print_json(nlohmann::json{{"rows", rows},
                              {"ratios", ratios},
                              {"allowed_cpus", res.allowed_cpus},
                              {"threads", a.threads},
                              {"method", a.method},
                              {"load", a.load},
                              {"rounds", res.rounds},
                              {"outer_per_round", res.outer_per_round},
                              {"settled_after_s", res.settled_after_s},
                              {"load_before", load_json(res.load_before)},
                              {"load_after", load_json(res.load_after)},
                              {"cross_cpu_one_way_ns_before", cross_cpu_json(res.cross_cpu_before_ns)},
                              {"cross_cpu_one_way_ns_after", cross_cpu_json(res.cross_cpu_after_ns)}});
    for (const auto& n : res.notes) std::fprintf(stderr, "postbox: note: %s\n", n.c_str());
  } else {
    print_table(res, o.ps, o);
  }
}

struct BenchClusterArgs {
  std::string sizes;  // empty: the fixed rows (add_cluster_rows)
  std::string threads = "1";
  std::string rounds = "5";
  std::string target_ms = "20";
  bool json = false;
};

#ifdef POSTBOX_HAVE_MPI
// The ratio base of a group: its "postbox hybrid" row, else its flat MPI row.
const bench::ClusterRow* group_base(const std::vector<bench::ClusterRow>& rows, const std::string& group) {
  const bench::ClusterRow* flat = nullptr;
  for (const auto& r : rows) {
    if (r.group != group) continue;
    if (r.impl == "postbox hybrid") return &r;
    if (!r.hybrid && flat == nullptr) flat = &r;
  }
  return flat;
}

double row_ns(const std::vector<bench::ClusterRow>& rows, const std::string& group, const std::string& impl) {
  for (const auto& r : rows)
    if (r.group == group && r.impl == impl) return r.median_ns;
  return std::nan("");
}

// The hand-off cost between the first two allowed CPUs, which the larger calls' times follow
// (a fold into a buffer the other CPU has read pays it per cache line).
void print_cross_cpu(double ns) {
  if (std::isnan(ns)) {
    std::printf("cache-line one-way latency between two CPUs: not measured (fewer than two allowed CPUs)\n");
    return;
  }
  std::printf("cache-line one-way latency between the first two allowed CPUs: %.1f ns (on a VM it changes with where\n"
              "the host puts the vCPUs; a fold into a buffer that the other CPU has read pays it per line)\n",
              ns);
}

void print_cluster(const bench::ClusterBenchResult& res) {
  const int P = res.hybrid_processes, T = res.threads, N = res.processes;
  std::printf("postbox bench cluster: hybrid %d processes x %d threads; flat MPI %d processes; MPI+OpenMP %d x %d.\n"
              "%d processes on this node of %d CPUs, %d allowed CPU%s per process (affinity: mpirun's binding)%s.\n",
              P, T, N, P, T, res.on_node, res.node_cpus, res.cpus, res.cpus == 1 ? "" : "s",
              res.on_node > res.node_cpus ? "; more ranks than CPUs: oversubscribed" : "");
  print_cross_cpu(res.cross_cpu_one_way_ns);
  print_load("before", res.load_before);
  print_load("after", res.load_after);
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  std::printf("OMP_WAIT_POLICY=%s (unless passive, libgomp's threads spin before they sleep: with more ranks than\n"
              "CPUs they hold cores the other ranks need; mpirun -x OMP_WAIT_POLICY=passive makes them sleep at once)\n",
              wait_policy != nullptr ? wait_policy : "(unset)");
  std::printf("Interleaved: a warm-up round sizes each batch to the target time, then %d rounds measure every\n"
              "competitor once in turn; per batch the slowest process's time per operation; median over rounds.\n",
              res.rounds);
  std::vector<std::string> groups;
  for (const auto& r : res.rows)
    if (std::find(groups.begin(), groups.end(), r.group) == groups.end()) groups.push_back(r.group);
  for (const auto& g : groups) {
    const bench::ClusterRow* base = group_base(res.rows, g);
    std::printf("\n%-18s %-30s %-8s %12s %10s %8s\n", g.c_str(), "impl", "layout", "median us", "ratio", "ops");
    for (const auto& r : res.rows) {
      if (r.group != g) continue;
      const std::string layout = r.hybrid ? std::to_string(P) + "x" + std::to_string(T) : std::to_string(N) + "x1";
      std::printf("%-18s %-30s %-8s %12.2f %9.2fx %8d\n", "", r.impl.c_str(), layout.c_str(), r.median_ns / 1e3,
                  base != nullptr ? r.median_ns / base->median_ns : std::nan(""), r.iters);
    }
    if (base != nullptr) std::printf("%-18s (ratio: time / %s's)\n", "", base->impl.c_str());
    for (const auto& r : res.rows)
      if (r.group == g && !r.reason.empty()) std::printf("%-18s reason: %s\n", "", r.reason.c_str());
  }
  const double ours = row_ns(res.rows, "barrier", "postbox hybrid"), mpi = row_ns(res.rows, "barrier", "MPI_Barrier");
  std::printf("\nbarrier: postbox hybrid %dx%d / MPI_Barrier %d flat = %.2f (targets: <= 1.5 at 2x1, < 1 at 2x4)\n",
              P, T, N, ours / mpi);
  const double ar = row_ns(res.rows, "allreduce 8 B", "postbox hybrid"), mpi_ar = row_ns(res.rows, "allreduce 8 B", "MPI_Allreduce");
  std::printf("allreduce 8 B: postbox hybrid %dx%d / MPI_Allreduce %d flat = %.2f (targets: <= 1.5 at 2x1, < 1 at 2x4)\n", P,
              T, N, ar / mpi_ar);
  const double br = row_ns(res.rows, "allreduce 8 B", "postbox barrier-reduce");
  std::printf("allreduce 8 B: postbox barrier-reduce %dx%d / MPI_Allreduce %d flat = %.2f\n", P, T, N, br / mpi_ar);
}

void print_cluster_json(const bench::ClusterBenchResult& res) {
  std::printf("{\"processes\": %d, \"hybrid_processes\": %d, \"threads\": %d, \"on_node\": %d, \"allowed_cpus\": %d, "
              "\"cross_cpu_one_way_ns\": %s, \"rounds\": %d, \"rows\": [",
              res.processes, res.hybrid_processes, res.threads, res.on_node, res.cpus,
              cross_cpu_json(res.cross_cpu_one_way_ns).dump().c_str(), res.rounds);
  for (std::size_t i = 0; i < res.rows.size(); ++i) {
    const auto& r = res.rows[i];
    std::printf("%s{\"group\": \"%s\", \"impl\": \"%s\", \"hybrid\": %s, \"median_ns\": %.1f, \"ops\": %d, \"reason\": \"%s\", "
                "\"round_ns\": [",
                i == 0 ? "" : ", ", r.group.c_str(), r.impl.c_str(), r.hybrid ? "true" : "false", r.median_ns, r.iters,
                r.reason.c_str());
    for (std::size_t k = 0; k < r.round_ns.size(); ++k) std::printf("%s%.1f", k == 0 ? "" : ", ", r.round_ns[k]);
    std::printf("]}");
  }
  std::printf("]}\n");
}
void print_sweep(const bench::ClusterBenchResult& res, const std::vector<bench::SweepTable>& tables, int target_ms) {
  const int P = res.hybrid_processes, T = res.threads, N = res.processes;
  std::printf("postbox bench cluster --sizes: postbox on %d process%s x %d thread%s against Open MPI on %d processes\n"
              "(flat, root 0), in one mpirun. %d processes on this node of %d CPUs, %d allowed CPU%s per process%s.\n",
              P, P == 1 ? "" : "es", T, T == 1 ? "" : "s", N, res.on_node, res.node_cpus, res.cpus, res.cpus == 1 ? "" : "s",
              res.on_node > res.node_cpus ? "; more processes than CPUs: oversubscribed" : "");
  print_cross_cpu(res.cross_cpu_one_way_ns);
  print_load("before", res.load_before);
  print_load("after", res.load_after);
  std::printf("Interleaved: a warm-up round sizes each batch to about %d ms, then %d rounds measure every competitor\n"
              "once in turn; per batch the slowest process's time per operation; median over the rounds.\n"
              "ratio = postbox / Open MPI. reduce and allreduce sum doubles where the size is a multiple of 8, else\n"
              "unsigned bytes (MPI_DOUBLE or MPI_UINT8_T with MPI_SUM on both sides).\n",
              target_ms, res.rounds);
  int over = 0, lines = 0;
  const bench::SweepLine* worst = nullptr;
  std::string worst_op;
  for (const auto& t : tables) {
    std::printf("\n%s (postbox against %s)\n%10s %-7s %12s %12s %8s  %s\n", t.op.c_str(), t.mpi_call.c_str(), "size",
                "element", "postbox us", "Open MPI us", "ratio", "postbox algorithm");
    for (const auto& l : t.lines) {
      const std::string size = t.op == "barrier" ? "-" : bench::size_label(l.bytes);
      std::printf("%10s %-7s %12.2f %12.2f %7.2fx  %s\n", size.c_str(), l.element.c_str(), l.postbox_ns / 1e3,
                  l.mpi_ns / 1e3, l.ratio, l.algorithm.c_str());
      ++lines;
      if (l.ratio > 1.2) ++over;
      if (worst == nullptr || l.ratio > worst->ratio) worst = &l, worst_op = t.op;
    }
  }
  if (worst != nullptr) {
    const std::string where = worst_op == "barrier" ? worst_op : worst_op + " " + bench::size_label(worst->bytes);
    std::printf("\n%d of %d sizes above 1.2x; the largest ratio: %s, %.2fx\n", over, lines, where.c_str(), worst->ratio);
  }
}

void print_sweep_json(const bench::ClusterBenchResult& res, const std::vector<bench::SweepTable>& tables,
                      const std::vector<std::int64_t>& sizes, int target_ms) {
  nlohmann::json out_tables = nlohmann::json::array();
  for (const auto& t : tables) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& l : t.lines) {
      rows.push_back({{"bytes", l.bytes},
                      {"element", l.element},
                      {"postbox_ns", l.postbox_ns},
                      {"mpi_ns", l.mpi_ns},
                      {"ratio", l.ratio},
                      {"postbox_algorithm", l.algorithm},
                      {"postbox_ops", l.postbox_ops},
                      {"mpi_ops", l.mpi_ops},
                      {"postbox_round_ns", l.postbox_round_ns},
                      {"mpi_round_ns", l.mpi_round_ns}});
    }
    out_tables.push_back({{"op", t.op}, {"mpi", t.mpi_call}, {"rows", rows}});
  }
  print_json(nlohmann::json{{"processes", res.processes},
                            {"hybrid_processes", res.hybrid_processes},
                            {"threads", res.threads},
                            {"on_node", res.on_node},
                            {"allowed_cpus", res.cpus},
                            {"cross_cpu_one_way_ns", cross_cpu_json(res.cross_cpu_one_way_ns)},
                            {"rounds", res.rounds},
                            {"target_ms", target_ms},
                            {"sizes", sizes},
                            {"load_before", load_json(res.load_before)},
                            {"load_after", load_json(res.load_after)},
                            {"tables", out_tables}});
}

#endif

void bench_cluster(const BenchClusterArgs& a) {
  const int threads = static_cast<int>(parse_int(a.threads, "--threads", 1, 1024));
  const int rounds = static_cast<int>(parse_int(a.rounds, "--rounds", 1, 1000));
  const int target_ms = static_cast<int>(parse_int(a.target_ms, "--target-ms", 1, 10000));
#ifdef POSTBOX_HAVE_MPI
  const std::vector<std::int64_t> sizes = a.sizes.empty() ? std::vector<std::int64_t>{} : bench::parse_sizes(a.sizes);
  if (!cluster::launched_by_mpi())
    throw InputError("bench cluster: run under mpirun (mpirun -np P*T postbox bench cluster --threads T)");
  if (dry_run()) return;
  cluster::MpiEnvironment env;
  bench::ClusterBench b(MPI_COMM_WORLD, bench::ClusterBenchOptions{threads, rounds, static_cast<double>(target_ms)});
  if (sizes.empty()) bench::add_cluster_rows(b);
  else bench::add_sweep_rows(b, sizes);
  const bench::ClusterBenchResult res = b.run();
  if (env.rank() != 0) return;
  if (!sizes.empty()) {
    const auto tables = bench::sweep_tables(res);
    if (a.json) print_sweep_json(res, tables, sizes, target_ms);
    else print_sweep(res, tables, target_ms);
  } else if (a.json) {
    print_cluster_json(res);
  } else {
    print_cluster(res);
  }
#else
  (void)threads, (void)rounds, (void)target_ms;
  throw InputError("bench cluster: this postbox was built without MPI (install libopenmpi-dev and rebuild)");
#endif
}

}  // namespace

void register_bench(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks with competitors side by side");
  bench->require_subcommand(1);
  auto args = std::make_shared<BenchBarrierArgs>();
  CLI::App* sub = bench->add_subcommand(
      "barrier",
      "Barrier overhead by the EPCC syncbench method (outer repetitions x inner loop of {delay; barrier},\n"
      "minus a reference loop of delays; mean, sd and median over the outer repetitions), for every\n"
      "postbox barrier (default, fibo, combine, central, dissemination, mcs, tournament, hier; fibo and\n"
      "combine take the calibrated s and r: POSTBOX_S_NS/POSTBOX_R_NS, the saved calibration, or a quick\n"
      "measurement), std::barrier, pthread_barrier_wait, '#pragma omp barrier' under libgomp (omp-gomp)\n"
      "and LLVM libomp (omp-llvm), postbox's default barrier called through its C API from the same\n"
      "OpenMP teams (default@omp-gomp, default@omp-llvm), and at p = 2 the one-way latency of a cache-line\n"
      "ping-pong (one-way) and the least a barrier of two can do, each rank storing its phase in a line of\n"
      "its own and spinning on the other's (two-flag). The OpenMP rows come from the helper executables postbox-omp-gomp and\n"
      "postbox-omp-llvm, run as child processes from this executable's directory (the two runtimes cannot\n"
      "share a process); a missing helper is reported and its rows omitted. Every kernel-thread row runs\n"
      "on one team of threads per p, made once (--threads). Competitors are interleaved: per p a warm-up\n"
      "pass, then rounds in which every competitor is measured once, each round in its own order (a shuffle\n"
      "seeded by p and the round: a measurement inherits where the scheduler left the threads after the one\n"
      "before it, so no competitor always follows the same one); a competitor's median is the\n"
      "median of its round medians, so load hits all alike. Prints the CPUs this process may use, the load\n"
      "before and after, the one-way latency of a cache line between the first two allowed CPUs before and\n"
      "after the run (a change above 1.5x is reported: on a VM the host moved the vCPUs), a table per p with\n"
      "each competitor's ratio to std::barrier, the default barrier's choice and reason, and the default's\n"
      "ratios with their targets.");
  sub->add_option("--p", args->ps,
                  "Thread counts, comma separated, each 1 to 1024 (default 2,4,8,16; more than the cores oversubscribes)")
      ->type_name("N,...");
  // The list comes from the bench itself, broken into lines of about 90 characters.
  std::string impl_help = "Only these competitors, comma separated (default all: ";
  std::size_t line_start = 0;
  const auto& names = bench::barrier_impl_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string item = names[i] + (i + 1 < names.size() ? "," : ")");
    if (impl_help.size() - line_start + item.size() > 90) {
      impl_help += "\n";
      line_start = impl_help.size();
    }
    impl_help += item;
  }
  sub->add_option("--impl", args->impls, impl_help);
  sub->add_flag("--json", args->json,
                "Print {\"rows\": [{\"p\", \"impl\", \"median_ns\", \"mean_ns\", \"sd_ns\", \"round_medians_ns\"}, ...],\n"
                "\"ratios\": [{\"p\", \"numerator\", \"denominator\", \"value\", \"best\", \"target\"}, ...], \"allowed_cpus\",\n"
                "\"threads\", \"method\", \"load\", \"rounds\", \"outer_per_round\", \"settled_after_s\", \"load_before\",\n"
                "\"load_after\", \"cross_cpu_one_way_ns_before\", \"cross_cpu_one_way_ns_after\"}; with --tail each row also has\n"
                "p50_ns, p99_ns, max_ns (notes go to stderr)");
  sub->add_option("--ranks", args->ranks,
                  "threads (default): every competitor on kernel threads; fibers: each postbox barrier also with its ranks\n"
                  "as fibers of a Team (one worker per allowed CPU), rows '<name>@fibers' interleaved with the others,\n"
                  "and the ratios default@fibers / default, std, omp-gomp, omp-llvm; auto: fiber rows at the p that\n"
                  "exceed the allowed CPUs")
      ->type_name("MODE");
  sub->add_option("--threads", args->threads,
                  "team (default): every kernel-thread row runs on one team of p threads made once per p and kept\n"
                  "for the warm-up and every round, as the OpenMP runtimes keep their pools; fresh: p threads made\n"
                  "for each measurement")
      ->type_name("MODE");
  sub->add_option("--method", args->method,
                  "barrier (default): EPCC's, every thread runs the delay before every barrier; late: a late\n"
                  "arriver, in iteration i only thread i mod p runs the delay, so each barrier waits for one thread")
      ->type_name("METHOD");
  sub->add_option("--load", args->load,
                  "none (default), nice0 or nice10: one CPU-bound child process at that nice level competes for the\n"
                  "CPUs for the whole run and ends with it, also when the bench is killed")
      ->type_name("LOAD");
  sub->add_flag("--tail", args->tail,
                "Also time every single barrier at rank 0 (one clock read per barrier, for every row alike) and\n"
                "print p50, p99 and max per row (from 16 buckets per power of two: within 6%)");
  sub->add_flag("--quick", args->quick, "10 outer repetitions of about 5 ms (default: 20 of about 25 ms)");
  sub->add_option("--outer", args->outer,
                  "Outer repetitions per competitor and p, 1 to 100000, spread over the rounds (overrides the default and --quick)");
  sub->add_option("--rounds", args->rounds,
                  "Rounds of the round-robin over the competitors, 1 to 1000 and at most --outer (more is refused;\n"
                  "default 5, or --outer when that is less): each round measures every competitor once, and a\n"
                  "competitor's median is the median of its round medians");
  sub->add_option("--settle", args->settle,
                  "Before measuring, wait up to this many seconds for the other runnable tasks on the machine to\n"
                  "average below one half over a second, 0 to 3600 (default 0: do not wait); says how long it waited");
  sub->callback([args] { bench_barrier(*args); });

  auto cargs = std::make_shared<BenchClusterArgs>();
  CLI::App* csub = bench->add_subcommand(
      "cluster",
      "Under mpirun -np P*T: the barrier and collectives across MPI processes. postbox hybrid (P processes\n"
      "x T threads: postbox::cluster::ClusterBarrier; and the library's barrier inside each process with\n"
      "MPI_Barrier among the processes) against Open MPI's MPI_Barrier and MPI_Ibarrier over all P*T\n"
      "processes (flat), and MPI+OpenMP (P processes x T OpenMP threads; the master calls the MPI collective\n"
      "between two '#pragma omp barrier's); bcast and allreduce at 8 B and 64 KiB: postbox hybrid (one\n"
      "postbox::cluster::Job of P x T ranks running a plan built once: bcast hier, allreduce\n"
      "recursive-doubling at T = 1 and reduce-bcast otherwise; the reason line says why), at 8 B also\n"
      "postbox barrier-reduce (ClusterBarrier::arrive_and_reduce of one double), MPI_Bcast and\n"
      "MPI_Allreduce flat and as MPI+OpenMP.\n"
      "While a hybrid row runs on P processes (world ranks 0, T, 2T, ...), the others sleep.\n"
      "Interleaved rounds; prints each row's median time per operation and its ratio to the postbox hybrid\n"
      "row of its group (else the flat MPI row), the load, and whether the ranks oversubscribe the CPUs.\n"
      "With --sizes, an OSU-style sweep instead: per size bcast, reduce, allreduce and gather, and the\n"
      "barrier once, postbox against Open MPI's own call over all P*T processes (root 0), a table per\n"
      "operation: size, postbox us, Open MPI us, ratio = postbox / Open MPI, and postbox's algorithm\n"
      "(cluster::Collectives called by the T threads of each process: barrier by dissemination, binomial\n"
      "trees among the processes, allreduce recursive doubling below 8 KiB and Rabenseifner's from there).");
  csub->add_option("--sizes", cargs->sizes,
                   "Sweep these message sizes (default: no sweep, the fixed rows above): a range LO:HI, stepping\n"
                   "LO, 2*LO, 4*LO, ... up to HI as OSU's benchmarks do, or a comma list of sizes and ranges; each\n"
                   "size 1 B to 64 MiB, digits then an optional unit B, K/KiB, M/MiB, G/GiB (powers of 1024), e.g.\n"
                   "1:4MiB or 8,1KiB,64KiB. reduce and allreduce sum doubles where the size is a multiple of 8,\n"
                   "else unsigned bytes, with the same type and operator in MPI")
      ->type_name("SIZES");
  csub->add_option("--threads", cargs->threads, "T: threads per hybrid process, 1 to 1024; mpirun's -np must be a multiple")
      ->capture_default_str();
  csub->add_option("--rounds", cargs->rounds, "Measured rounds, 1 to 1000")->capture_default_str();
  csub->add_option("--target-ms", cargs->target_ms, "Time per batch in ms, 1 to 10000")->capture_default_str();
  csub->add_flag("--json", cargs->json,
                 "Print {\"processes\", \"hybrid_processes\", \"threads\", \"on_node\", \"allowed_cpus\",\n"
                 "\"cross_cpu_one_way_ns\", \"rounds\", \"rows\": [{\"group\", \"impl\", \"hybrid\", \"median_ns\", \"ops\",\n"
                 "\"reason\", \"round_ns\"}, ...]} (process 0); with --sizes {\"processes\", \"hybrid_processes\",\n"
                 "\"threads\", \"on_node\", \"allowed_cpus\", \"cross_cpu_one_way_ns\", \"rounds\", \"target_ms\", \"sizes\",\n"
                 "\"load_before\", \"load_after\", \"tables\": [{\"op\", \"mpi\", \"rows\": [{\"bytes\", \"element\",\n"
                 "\"postbox_ns\", \"mpi_ns\", \"ratio\", \"postbox_algorithm\", \"postbox_ops\", \"mpi_ops\",\n"
                 "\"postbox_round_ns\", \"mpi_round_ns\"}, ...]}, ...]} (docs/cluster.md)");
  csub->callback([cargs] { bench_cluster(*cargs); });
}

}  // namespace postbox::cli
