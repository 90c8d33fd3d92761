// 2-D Jacobi stencil on a postbox::Team with parallel_for_phases: every sweep is one phase, the
// barrier between phases makes sweep k's writes visible to sweep k + 1. The result is checked
// against a serial run of the same arithmetic (bit-identical: same operations, same order).
//
// usage: jacobi [N] [SWEEPS] [P]   (defaults 128 200 4); exit 0 when parallel == serial.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "postbox/barrier/parallel_for.hpp"

namespace {

using Grid = std::vector<double>;

void init(Grid& g, int n) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const bool edge = i == 0 || j == 0 || i == n - 1 || j == n - 1;
      g[static_cast<std::size_t>(i * n + j)] = edge ? 1.0 + 0.01 * i - 0.02 * j : 0.0;
    }
  }
}

void sweep_row(const Grid& src, Grid& dst, int n, std::int64_t i) {
  const auto row = static_cast<std::size_t>(i) * static_cast<std::size_t>(n);
  const auto N = static_cast<std::size_t>(n);
  for (std::size_t j = 1; j + 1 < N; ++j) {
    dst[row + j] = 0.25 * (src[row - N + j] + src[row + N + j] + src[row + j - 1] + src[row + j + 1]);
  }
}

int arg(int argc, char** argv, int i, int fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1 || v > 100000) {
    std::fprintf(stderr, "jacobi: argument %d must be an integer in 1..100000, got '%s'\n", i, argv[i]);
    std::exit(2);
  }
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = std::max(3, arg(argc, argv, 1, 128));
  const int sweeps = arg(argc, argv, 2, 200);
  const int p = arg(argc, argv, 3, 4);

  Grid serial[2] = {Grid(static_cast<std::size_t>(n) * static_cast<std::size_t>(n)),
                    Grid(static_cast<std::size_t>(n) * static_cast<std::size_t>(n))};
  init(serial[0], n);
  init(serial[1], n);
  for (int k = 0; k < sweeps; ++k) {
    for (std::int64_t i = 1; i < n - 1; ++i) sweep_row(serial[k % 2], serial[(k + 1) % 2], n, i);
  }

  Grid par[2] = {Grid(serial[0].size()), Grid(serial[0].size())};
  init(par[0], n);
  init(par[1], n);
  postbox::TeamOptions options;
  options.pin = false;
  postbox::Team team(p, options);
  postbox::Barrier barrier = postbox::team_barrier(team);
  postbox::parallel_for_phases(team, barrier, sweeps, 1, n - 1,
                               [&](int k, std::int64_t i) { sweep_row(par[k % 2], par[(k + 1) % 2], n, i); });

  const Grid& a = serial[sweeps % 2];
  const Grid& b = par[sweeps % 2];
  std::size_t diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff += a[i] != b[i] ? 1 : 0;
  std::printf("jacobi: n = %d, sweeps = %d, p = %d, barrier %s (%s): %s\n", n, sweeps, p, barrier.algorithm(),
              barrier.reason().c_str(), diff == 0 ? "parallel == serial" : "MISMATCH");
  if (diff != 0) {
    std::fprintf(stderr, "jacobi: %zu cells differ from the serial run\n", diff);
    return 1;
  }
  return 0;
}
