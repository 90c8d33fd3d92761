// Barrier benchmark, standalone: the same measurement as `postbox bench barrier` (bench/harness/barrier_bench.hpp,
// EPCC syncbench method, competitors interleaved round by round), every competitor side by side.
// Usage: bench_barrier [--quick] [p ...]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "barrier_bench.hpp"

int main(int argc, char** argv) {
  postbox::bench::BarrierBenchOptions o;
  std::vector<int> ps;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.params = postbox::bench::BarrierBenchOptions::kQuick;
    } else {
      char* end = nullptr;
      const long p = std::strtol(argv[i], &end, 10);
      if (end == argv[i] || *end != '\0' || p < 1) {
        std::fprintf(stderr, "bench_barrier: error: expected --quick or thread counts, got '%s'\n", argv[i]);
        return 2;
      }
      ps.push_back(static_cast<int>(p));
    }
  }
  if (!ps.empty()) o.ps = ps;
  try {
    const auto res = postbox::bench::run_barrier_bench(o);
    std::printf("%d allowed CPUs; %d rounds of %d repetitions per competitor; load average %.2f before, %.2f after\n",
                res.allowed_cpus, res.rounds, res.outer_per_round, res.load_before.avg1, res.load_after.avg1);
    std::printf("%5s %-14s %12s %12s %12s\n", "p", "impl", "median_ns", "mean_ns", "sd_ns");
    for (const auto& r : res.rows)
      std::printf("%5d %-14s %12.1f %12.1f %12.1f\n", r.p, r.impl.c_str(), r.median_ns, r.mean_ns, r.sd_ns);
    for (std::size_t i = 0; i < res.default_algorithm.size(); ++i)
      std::printf("default at p=%d: %s (%s)\n", res.default_algorithm[i].first, res.default_algorithm[i].second.c_str(),
                  res.default_reason[i].second.c_str());
    for (const auto& r : postbox::bench::barrier_ratios(res, o.ps))
      std::printf("p=%d: %s/%s %.2f%s%s\n", r.p, r.numerator.c_str(), r.denominator.c_str(), r.value,
                  r.best.empty() ? "" : " best: ", r.best.c_str());
    for (const auto& n : res.notes) std::printf("note: %s\n", n.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_barrier: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
