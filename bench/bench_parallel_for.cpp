// parallel_for_phases against the same loop written by hand, on the same Team and the same
// barrier: a 1-D heat stencil (x'[i] = (x[i-1] + 2 x[i] + x[i+1]) / 4, two buffers swapped each
// sweep, one barrier per sweep). Four competitors, interleaved round by round in one process,
// in two like-for-like pairs:
//   hand        team.run: each rank runs the block loop sweep() over its static block, then
//               barrier.arrive_and_wait;
//   block       parallel_for_phases with body(phase, Block) running the same sweep();
//   hand-index  team.run: each rank calls the per-index body for every index of its block, then
//               barrier.arrive_and_wait;
//   index       parallel_for_phases with the same per-index body(phase, i).
// The per-index body captures the grid, so the compiler cannot hoist its loads or vectorise
// across the calls (in either form); index/hand shows what that costs against the block loop.
// Each result is checked bit for bit against a serial run. Prints the median time per sweep
// of each competitor and the ratios block/hand, index/hand-index and index/hand.
// Usage: bench_parallel_for [--n N] [--sweeps S] [--rounds R] [p ...]   (default p = 2 4)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "postbox/barrier/parallel_for.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Grid {
  std::vector<double> a, b;
  explicit Grid(std::int64_t n) : a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n)) { reset(); }
  void reset() {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = b[i] = static_cast<double>((i * 7919) % 1000) / 7.0;
  }
  // The buffer read in sweep k and the one written.
  [[nodiscard]] const double* src(int k) const { return k % 2 == 0 ? a.data() : b.data(); }
  [[nodiscard]] double* dst(int k) { return k % 2 == 0 ? b.data() : a.data(); }
};

inline void sweep(const double* __restrict x, double* __restrict y, std::int64_t lo, std::int64_t hi) {
  for (std::int64_t i = lo; i < hi; ++i) y[i] = (x[i - 1] + 2 * x[i] + x[i + 1]) * 0.25;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

long parse(const char* text, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1) {
    std::fprintf(stderr, "bench_parallel_for: error: %s must be a positive integer, got '%s'\n", what, text);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = 16384;
  int sweeps = 2000, rounds = 7;
  std::vector<int> ps;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--n" || a == "--sweeps" || a == "--rounds") && i + 1 < argc) {
      const long v = parse(argv[++i], a.c_str());
      if (a == "--n") n = v;
      if (a == "--sweeps") sweeps = static_cast<int>(v);
      if (a == "--rounds") rounds = static_cast<int>(v);
    } else {
      ps.push_back(static_cast<int>(parse(argv[i], "p")));
    }
  }
  if (ps.empty()) ps = {2, 4};
  if (n < 3) n = 3;

  // The serial answer.
  Grid serial(n);
  for (int k = 0; k < sweeps; ++k) sweep(serial.src(k), serial.dst(k), 1, n - 1);
  const double* expect = serial.src(sweeps);

  std::printf("1-D heat stencil, n = %lld, %d sweeps, one barrier per sweep; median of %d interleaved rounds\n",
              static_cast<long long>(n), sweeps, rounds);
  std::printf("%4s %-10s %12s %10s  %s\n", "p", "impl", "us/sweep", "vs like", "barrier");
  for (int p : ps) {
    postbox::Team team(p);
    postbox::Barrier barrier = postbox::team_barrier(team);
    Grid g(n);
    const char* names[] = {"hand", "block", "hand-index", "index"};
    constexpr int kImpls = 4;
    std::vector<double> times[kImpls];
    const auto at = [&g](int k, std::int64_t i) {
      const double* x = g.src(k);
      g.dst(k)[i] = (x[i - 1] + 2 * x[i] + x[i + 1]) * 0.25;
    };
    for (int round = 0; round < rounds + 1; ++round) {  // round 0 warms up
      for (int c0 = 0; c0 < kImpls; ++c0) {
        const int c = (c0 + round) % kImpls;
        g.reset();
        const auto t0 = Clock::now();
        // Each hand-written loop in a function of its own, as a user's would be: sharing one
        // would let the compiler share its constants between them, which the library's
        // instantiations cannot.
        if (c == 0) {
          team.run([&](postbox::RankContext& ctx) {
            const postbox::Block b = postbox::static_block(1, n - 1, ctx.rank(), p);
            for (int k = 0; k < sweeps; ++k) {
              sweep(g.src(k), g.dst(k), b.lo, b.hi);
              barrier.arrive_and_wait(ctx.rank());
            }
          });
        } else if (c == 2) {
          team.run([&](postbox::RankContext& ctx) {
            const postbox::Block b = postbox::static_block(1, n - 1, ctx.rank(), p);
            for (int k = 0; k < sweeps; ++k) {
              for (std::int64_t i = b.lo; i < b.hi; ++i) at(k, i);
              barrier.arrive_and_wait(ctx.rank());
            }
          });
        } else if (c == 1) {
          postbox::parallel_for_phases(team, barrier, sweeps, 1, n - 1,
                                       [&](int k, postbox::Block b) { sweep(g.src(k), g.dst(k), b.lo, b.hi); });
        } else {
          postbox::parallel_for_phases(team, barrier, sweeps, 1, n - 1, at);
        }
        const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / sweeps;
        if (std::memcmp(g.src(sweeps), expect, static_cast<std::size_t>(n) * sizeof(double)) != 0) {
          std::fprintf(stderr, "bench_parallel_for: error: %s at p = %d differs from the serial run\n", names[c], p);
          return 1;
        }
        if (round > 0) times[c].push_back(us);
      }
    }
    // Each form against its like: the block form against the hand-written block loop, the
    // per-index form against the hand-written loop of the same per-index body.
    const int like[kImpls] = {0, 0, 2, 2};
    for (int c = 0; c < kImpls; ++c) {
      const double t = median(times[c]);
      std::printf("%4d %-10s %12.3f %9.2fx  %s\n", p, names[c], t, t / median(times[like[c]]),
                  c == 0 ? barrier.algorithm() : "");
    }
    std::printf("%4d index/hand %.2fx (per-index body against the block loop)\n", p, median(times[3]) / median(times[0]));
  }
  return 0;
}
