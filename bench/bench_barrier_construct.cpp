// The cost of the first postbox::Barrier in a process: for each p given, the wall time of
// constructing Barrier(p) and the algorithm the default chose. Run it in fresh processes with
// XDG_CACHE_HOME pointing at an empty directory to see a machine without a saved calibration
// (the default then uses no measurement: docs/calibration.md).
// Usage: bench_barrier_construct [p ...]   (default p = 2 4 16 64)
// Prints one line per p: "p <p> ms <milliseconds> algorithm <name>".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "postbox/barrier/barrier.hpp"

int main(int argc, char** argv) {
  std::vector<int> ps;
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    const long p = std::strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || p < 1 || p > 1024) {
      std::fprintf(stderr, "bench_barrier_construct: p must be an integer from 1 to 1024, got '%s'\n", argv[i]);
      return 2;
    }
    ps.push_back(static_cast<int>(p));
  }
  if (ps.empty()) ps = {2, 4, 16, 64};
  for (const int p : ps) {
    const auto t0 = std::chrono::steady_clock::now();
    const postbox::Barrier b(p);
    const auto t1 = std::chrono::steady_clock::now();
    std::printf("p %d ms %.4f algorithm %s\n", p, std::chrono::duration<double, std::milli>(t1 - t0).count(),
                b.algorithm());
  }
  return 0;
}
