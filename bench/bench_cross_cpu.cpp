// What moving freshly written data from one CPU to another costs on this machine, against the
// same work on one CPU. Two threads take turns on a buffer pair: the writer adds the copy into
// the source (every line written, as a reduce's fold writes its result), then the reader copies
// the source into the copy (as a receiver's single-copy read of a sender's buffer does). Run with
// the two threads on two CPUs and then on one; interleaved, rounds of each; prints microseconds
// per turn pair and the ratio. This is the cost behind the hybrid reduce's slow placement in
// docs/cluster.md: the sending process folds its threads' inputs into a buffer that the
// receiving process then reads.
// Usage: bench_cross_cpu [--rounds R] [KiB ...]   (default 256 1024 2048; CPUs: the first two
// this process may use)
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  if (pthread_setaffinity_np(pthread_self(), sizeof s, &s) != 0) {
    std::fprintf(stderr, "bench_cross_cpu: cannot pin to CPU %d\n", cpu);
    std::exit(1);
  }
}

// Microseconds per turn pair, over `turns` turns, writer on cpu_w and reader on cpu_r.
double measure(std::size_t bytes, int cpu_w, int cpu_r, int turns) {
  const std::size_t n = bytes / sizeof(double);
  std::vector<double> src(n, 0.0), dst(n, 0.0);
  std::atomic<long> turn{0};
  std::thread reader([&] {
    pin(cpu_r);
    for (long t = 0; t < turns; ++t) {
      while (turn.load(std::memory_order_acquire) != 2 * t + 1) sched_yield();
      std::memcpy(dst.data(), src.data(), n * sizeof(double));
      turn.store(2 * t + 2, std::memory_order_release);
    }
  });
  pin(cpu_w);
  const auto t0 = Clock::now();
  for (long t = 0; t < turns; ++t) {
    for (std::size_t i = 0; i < n; ++i) src[i] += dst[i];
    turn.store(2 * t + 1, std::memory_order_release);
    while (turn.load(std::memory_order_acquire) != 2 * t + 2) sched_yield();
  }
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  reader.join();
  return us / turns;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::vector<long> kib;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    char* end = nullptr;
    if (a == "--rounds" && i + 1 < argc) {
      rounds = static_cast<int>(std::strtol(argv[++i], &end, 10));
      if (*end != '\0' || rounds < 1 || rounds > 1000) {
        std::fprintf(stderr, "bench_cross_cpu: --rounds must be 1 to 1000, got '%s'\n", argv[i]);
        return 2;
      }
      continue;
    }
    const long v = std::strtol(a.c_str(), &end, 10);
    if (end == a.c_str() || *end != '\0' || v < 1 || v > 1 << 20) {
      std::fprintf(stderr, "bench_cross_cpu: a size must be 1 to 1048576 KiB, got '%s'\n", a.c_str());
      return 2;
    }
    kib.push_back(v);
  }
  if (kib.empty()) kib = {256, 1024, 2048};
  cpu_set_t mine;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return 1;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &mine)) cpus.push_back(c);
  if (cpus.size() < 2) {
    std::fprintf(stderr, "bench_cross_cpu: needs two allowed CPUs, has %zu\n", cpus.size());
    return 2;
  }
  std::printf("writer folds into a buffer, reader copies it; CPUs %d and %d; median of %d rounds, interleaved\n",
              cpus[0], cpus[1], rounds);
  std::printf("%8s %14s %14s %8s %16s\n", "KiB", "two CPUs us", "one CPU us", "ratio", "two CPUs us/KiB");
  for (const long k : kib) {
    const std::size_t bytes = static_cast<std::size_t>(k) * 1024;
    const int turns = static_cast<int>(std::max<long>(8, 256L * 1024 / k));
    std::vector<double> two, one;
    for (int r = 0; r < rounds; ++r) {
      two.push_back(measure(bytes, cpus[0], cpus[1], turns));
      one.push_back(measure(bytes, cpus[0], cpus[0], turns));
    }
    const double t = median(two), o = median(one);
    std::printf("%8ld %14.1f %14.1f %8.2f %16.3f\n", k, t, o, t / o, t / static_cast<double>(k));
  }
}
