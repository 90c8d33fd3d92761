// postbox bench barrier: the barrier benchmark (barrier_bench.hpp), competitors side by side.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "barrier_bench.hpp"
#include "cli.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::cli {
namespace {

struct BenchBarrierArgs {
  std::vector<std::string> ps{"2", "4", "8", "16"};
  std::vector<std::string> impls;
  bool json = false;
  bool quick = false;
  int outer = 0;
};

double median_of(const std::vector<bench::BarrierRow>& rows, int p, const std::string& impl) {
  for (const auto& r : rows)
    if (r.p == p && r.impl == impl) return r.median_ns;
  return std::nan("");
}

void print_table(const bench::BarrierBenchResult& res, const std::vector<int>& ps, const bench::BarrierBenchOptions& o) {
  double load[3] = {0, 0, 0};
  const bool have_load = ::getloadavg(load, 3) == 3;
  const auto& c = res.calibration;
  std::printf("EPCC syncbench: overhead per barrier = (time of inner x {delay; barrier} - time of inner x delay) / inner;\n"
              "%d outer repetitions of about %.0f ms each; mean, sd and median over them. Threads are not pinned.\n",
              o.params.outer, static_cast<double>(o.params.target_ns) / 1e6);
  std::printf("hardware threads: %u; ", std::thread::hardware_concurrency());
  if (have_load) std::printf("load average (1/5/15 min) after the run: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  else std::printf("load average: unknown\n");
  std::printf("calibration (%s): s = %.1f ns, r = %.1f ns, lambda = %.2f\n", c.source.c_str(), c.s_ns, c.r_ns, c.lambda);
  for (int p : ps) {
    std::printf("\np = %d\n%-14s %12s %12s %12s %9s\n", p, "impl", "median_ns", "mean_ns", "sd_ns", "vs fibo");
    const double fibo = median_of(res.rows, p, "fibo");
    for (const auto& r : res.rows) {
      if (r.p != p) continue;
      std::printf("%-14s %12.1f %12.1f %12.1f", r.impl.c_str(), r.median_ns, r.mean_ns, r.sd_ns);
      if (std::isfinite(fibo) && fibo > 0) std::printf(" %8.2fx\n", r.median_ns / fibo);
      else std::printf(" %9s\n", "-");
    }
    for (std::size_t i = 0; i < res.default_algorithm.size(); ++i)
      if (res.default_algorithm[i].first == p)
        std::printf("default chose '%s': %s\n", res.default_algorithm[i].second.c_str(),
                    res.default_reason[i].second.c_str());
  }
  // The targets, as measured ratios of medians (no pass/fail: the box is shared).
  auto ratio = [&](int p, const char* a, const char* b) { return median_of(res.rows, p, a) / median_of(res.rows, p, b); };
  auto best = [&](int p) {
    double m = std::nan("");
    for (const auto& r : res.rows)
      if (r.p == p && !(r.median_ns >= m)) m = r.median_ns;
    return m;
  };
  std::printf("\nratios of medians (issue 7's targets in brackets):\n");
  std::printf("  p=2: default/best %.2f [<= 1.2], default/omp-gomp %.2f [<= 0.5], fibo/omp-gomp %.2f [<= 0.6]\n",
              median_of(res.rows, 2, "default") / best(2), ratio(2, "default", "omp-gomp"), ratio(2, "fibo", "omp-gomp"));
  std::printf("  p=8: default/std %.2f [<= 0.5], default/omp-gomp %.2f [<= 0.3]\n", ratio(8, "default", "std"),
              ratio(8, "default", "omp-gomp"));
  for (const auto& n : res.notes) std::printf("note: %s\n", n.c_str());
}

void bench_barrier(const BenchBarrierArgs& a) {
  bench::BarrierBenchOptions o;
  o.ps.clear();
  for (const auto& s : a.ps) o.ps.push_back(parse_positive("p", s));
  o.impls = a.impls;
  if (a.quick) o.params = syncbench::Params{5, 5'000'000, 32, 1'000'000};
  if (a.outer > 0) o.params.outer = a.outer;
  const bool tty = !a.json && ::isatty(2) != 0;
  const auto res = bench::run_barrier_bench(o, [&](const std::string& msg) {
    if (tty) std::fprintf(stderr, "\r\033[Kmeasuring %s", msg.c_str());
  });
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : res.rows)
      rows.push_back({{"p", r.p}, {"impl", r.impl}, {"median_ns", r.median_ns}, {"mean_ns", r.mean_ns}, {"sd_ns", r.sd_ns}});
    print_json(nlohmann::json{{"rows", rows}});
    for (const auto& n : res.notes) std::fprintf(stderr, "postbox: note: %s\n", n.c_str());
  } else {
    print_table(res, o.ps, o);
  }
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
      "postbox barrier (default, fibo, combine, central, dissemination, mcs, tournament, hier; default,\n"
      "fibo and combine take the calibrated s and r: POSTBOX_S_NS/POSTBOX_R_NS, the saved calibration,\n"
      "or a quick measurement), std::barrier, pthread_barrier_wait, and '#pragma omp barrier' under libgomp\n"
      "(omp-gomp) and LLVM libomp (omp-llvm). The OpenMP rows come from the helper executables\n"
      "postbox-omp-gomp and postbox-omp-llvm, run as child processes from this executable's directory\n"
      "(the two runtimes cannot share a process); a missing helper is reported and its rows omitted.\n"
      "Prints a table per p with each competitor's ratio to fibo, and the default barrier's choice and reason.");
  sub->add_option("--p", args->ps, "Thread counts, comma separated (default 2,4,8,16; more than the cores oversubscribes)")
      ->delimiter(',');
  sub->add_option("--impl", args->impls,
                  "Only these competitors, comma separated (default all: default,fibo,combine,central,\n"
                  "dissemination,mcs,tournament,hier,std,pthread,omp-gomp,omp-llvm)")
      ->delimiter(',');
  sub->add_flag("--json", args->json,
                "Print {\"rows\": [{\"p\", \"impl\", \"median_ns\", \"mean_ns\", \"sd_ns\"}, ...]} (notes go to stderr)");
  sub->add_flag("--quick", args->quick, "5 outer repetitions of about 5 ms (default: 20 of about 25 ms)");
  sub->add_option("--outer", args->outer, "Outer repetitions (overrides the default and --quick)")
      ->check(CLI::Range(1, 100000));
  sub->callback([args] { bench_barrier(*args); });
}

}  // namespace postbox::cli
