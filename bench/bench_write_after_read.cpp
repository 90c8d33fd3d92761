// What the hybrid reduce's non-root leader pays on this machine: folding into a buffer that a
// thread on another CPU has just read completely (as the root's copy of the message reads it,
// Open MPI's shared-memory single copy included). Every line written must first be taken back
// from the reader's cache, so the fold runs at the speed of cross-CPU invalidations, not of
// memory. Three cases, interleaved round by round, median per case:
//   other CPU  the fold on the first allowed CPU, the reader on the second;
//   same CPU   both on the first allowed CPU;
//   no reader  the fold alone.
// Also prints the one-way latency of a cache-line ping-pong between the two CPUs, which tells
// the two modes of a 2-vCPU VM apart (vCPUs placed near or far apart by the host).
// Usage: bench_write_after_read [KiB]   (default 1024; 4 to 1048576)
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "barrier_bench.hpp"
#include "cpus.hpp"
#include "syncbench.hpp"

namespace {

namespace syncbench = postbox::syncbench;

using Clock = std::chrono::steady_clock;

void pin(int cpu) {
  if (!postbox::bench::pin_self(cpu)) {
    std::fprintf(stderr, "bench_write_after_read: cannot run on CPU %d\n", cpu);
    std::exit(2);
  }
}

// out = x + y, elementwise: the fold of a reduce.
void fold(const double* x, const double* y, double* out, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) out[k] = x[k] + y[k];
}

// Microseconds of one fold per round, `rounds` rounds; `reader_cpu` < 0: nobody reads.
std::vector<double> run(int fold_cpu, int reader_cpu, std::size_t n, int rounds) {
  std::vector<double> x(n, 1.0), y(n, 2.0), out(n, 0.0), copy(n, 0.0);
  std::atomic<int> turn{0};
  std::vector<double> us;
  std::thread reader;
  if (reader_cpu >= 0) {
    reader = std::thread([&] {
      pin(reader_cpu);
      for (int i = 0; i < rounds; ++i) {
        while (turn.load(std::memory_order_acquire) != 1) std::this_thread::yield();
        std::memcpy(copy.data(), out.data(), n * sizeof(double));
        turn.store(0, std::memory_order_release);
      }
    });
  }
  pin(fold_cpu);
  for (int i = 0; i < rounds; ++i) {
    while (turn.load(std::memory_order_acquire) != 0) std::this_thread::yield();
    const auto t0 = Clock::now();
    fold(x.data(), y.data(), out.data(), n);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (reader_cpu >= 0) turn.store(1, std::memory_order_release);
  }
  if (reader.joinable()) reader.join();
  if (copy[n / 2] != 0.0 && copy[n / 2] != 3.0) std::printf("wrong copy\n");
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  long kib = 1024;
  if (argc > 2) {
    std::fprintf(stderr, "usage: bench_write_after_read [KiB]\n");
    return 2;
  }
  if (argc == 2) {
    char* end = nullptr;
    kib = std::strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || kib < 4 || kib > 1048576) {
      std::fprintf(stderr, "bench_write_after_read: KiB must be an integer from 4 to 1048576, got '%s'\n", argv[1]);
      return 2;
    }
  }
  const std::array<int, 2> cpus = postbox::bench::first_two_cpus();
  if (cpus[1] < 0) {
    std::fprintf(stderr, "bench_write_after_read: needs two allowed CPUs, this process has %d\n", cpus[0] < 0 ? 0 : 1);
    return 2;
  }
  // Before the folds pin this thread to one CPU (the measurement takes the first two allowed).
  const double ow = postbox::bench::cross_cpu_one_way_ns();
  const auto n = static_cast<std::size_t>(kib) * 1024 / sizeof(double);
  const int rounds = 200;
  std::vector<double> other, same, alone;
  for (int r = 0; r < 5; ++r) {  // interleaved, so that a change of the machine's mode hits all three
    for (double v : run(cpus[0], cpus[1], n, rounds / 5)) other.push_back(v);
    for (double v : run(cpus[0], cpus[0], n, rounds / 5)) same.push_back(v);
    for (double v : run(cpus[0], -1, n, rounds / 5)) alone.push_back(v);
  }
  std::printf("fold of %ld KiB into a buffer just read by: another CPU %.1f us, the same CPU %.1f us; no reader %.1f us\n",
              kib, syncbench::median(other), syncbench::median(same), syncbench::median(alone));
  std::printf("other / no reader %.2f; cache-line one-way latency between CPUs %d and %d: %.1f ns\n",
              syncbench::median(other) / syncbench::median(alone), cpus[0], cpus[1], ow);
  return 0;
}
