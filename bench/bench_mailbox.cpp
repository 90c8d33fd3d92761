// Mailbox latency and throughput between two pinned threads, side by side in one run with
// (a) a bare cache-line ping-pong, the physical limit of a one-way notification here, and
// (c) boost::lockfree::spsc_queue, a competitor for small-message streaming.
//
// A hand-written harness rather than Google Benchmark fixtures: each figure needs two threads
// pinned to two cores for the same interval, and the ratios the issue targets are taken from
// medians over interleaved repetitions, so they compare figures measured under the same
// conditions. Google Benchmark supplies DoNotOptimize.
//
// Usage: bench_mailbox [--reps N] [--rtt-iters N] [--stream-msgs N] [--cpus A,B]
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "postbox/runtime/mailbox.hpp"
#include "postbox/runtime/wait.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct Config {
  int reps = 9;
  long rtt_iters = 200'000;
  long stream_msgs = 5'000'000;
  std::array<int, 2> cpus{-1, -1};
};

void pin_self(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
    std::fprintf(stderr, "bench_mailbox: cannot pin to CPU %d\n", cpu);
  }
}

// The first two CPUs this process may run on.
std::array<int, 2> default_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::array<int, 2> out{-1, -1};
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  int k = 0;
  for (int c = 0; c < CPU_SETSIZE && k < 2; ++c) {
    if (CPU_ISSET(c, &set)) out[static_cast<std::size_t>(k++)] = c;
  }
  return out;
}

// Runs a on cpus[0] and b on cpus[1], both started together; returns the seconds a took
// between the start signal and its return.
double run_pair(const Config& cfg, const std::function<void()>& a, const std::function<void()>& b) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  double seconds = 0;
  std::thread tb([&] {
    pin_self(cfg.cpus[1]);
    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) {
    }
    b();
  });
  std::thread ta([&] {
    pin_self(cfg.cpus[0]);
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    go.store(true, std::memory_order_release);
    const auto t0 = clock_type::now();
    a();
    seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  });
  ta.join();
  tb.join();
  return seconds;
}

// (a) One cache line bounced between two cores: rank 0 writes odd values, rank 1 even ones.
// The pollers pause like wait_until() does: without it, the polling core keeps pulling the line
// back while the other core waits to write it, and the round trip gets slower, not faster.
double bare_pingpong_rtt_ns(const Config& cfg) {
  alignas(64) static std::atomic<std::uint64_t> line{0};
  line.store(0);
  const long n = cfg.rtt_iters;
  const double s = run_pair(
      cfg,
      [&] {
        for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(n); ++i) {
          line.store(2 * i + 1, std::memory_order_release);
          while (line.load(std::memory_order_acquire) != 2 * i + 2) postbox::cpu_relax();
        }
      },
      [&] {
        for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(n); ++i) {
          while (line.load(std::memory_order_acquire) != 2 * i + 1) postbox::cpu_relax();
          line.store(2 * i + 2, std::memory_order_release);
        }
      });
  return s * 1e9 / static_cast<double>(n);
}

// (b) An 8-byte message there and back through the mailboxes.
double mailbox_pingpong_rtt_ns(const Config& cfg) {
  postbox::Mailboxes mb(2);
  const long n = cfg.rtt_iters;
  const double s = run_pair(
      cfg,
      [&] {
        std::uint64_t v = 0;
        auto bytes = std::as_writable_bytes(std::span(&v, 1));
        for (long i = 0; i < n; ++i) {
          v = static_cast<std::uint64_t>(i);
          mb.send(0, 1, bytes);
          (void)mb.recv(0, 1, bytes);
        }
        benchmark::DoNotOptimize(v);
      },
      [&] {
        std::uint64_t v = 0;
        auto bytes = std::as_writable_bytes(std::span(&v, 1));
        for (long i = 0; i < n; ++i) {
          (void)mb.recv(1, 0, bytes);
          mb.send(1, 0, bytes);
        }
      });
  return s * 1e9 / static_cast<double>(n);
}

// (c) 8-byte messages streamed one way; the receiver's finish time over the count.
double mailbox_stream_msgs_per_s(const Config& cfg) {
  postbox::Mailboxes mb(2);
  const long n = cfg.stream_msgs;
  std::uint64_t sum = 0;
  const double s = run_pair(
      cfg,
      [&] {
        std::uint64_t v = 0;
        auto bytes = std::as_writable_bytes(std::span(&v, 1));
        for (long i = 0; i < n; ++i) {
          (void)mb.recv(1, 0, bytes);
          sum += v;
        }
      },
      [&] {
        for (long i = 0; i < n; ++i) {
          const std::uint64_t v = static_cast<std::uint64_t>(i);
          mb.send(0, 1, std::as_bytes(std::span(&v, 1)));
        }
      });
  if (sum != static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(n - 1) / 2) std::abort();
  return static_cast<double>(n) / s;
}

// Same bytes of buffering as the mailbox ring (64 KiB).
double boost_stream_msgs_per_s(const Config& cfg) {
  auto q = std::make_unique<boost::lockfree::spsc_queue<std::uint64_t, boost::lockfree::capacity<8192>>>();
  const long n = cfg.stream_msgs;
  std::uint64_t sum = 0;
  const double s = run_pair(
      cfg,
      [&] {
        std::uint64_t v = 0;
        for (long i = 0; i < n; ++i) {
          while (!q->pop(v)) postbox::cpu_relax();
          sum += v;
        }
      },
      [&] {
        for (long i = 0; i < n; ++i) {
          while (!q->push(static_cast<std::uint64_t>(i))) postbox::cpu_relax();
        }
      });
  if (sum != static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(n - 1) / 2) std::abort();
  return static_cast<double>(n) / s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

long parse_long(const char* flag, const char* text) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1) {
    std::fprintf(stderr, "bench_mailbox: %s needs a positive integer, got '%s'\n", flag, text);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  cfg.cpus = default_cpus();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--reps") {
      cfg.reps = static_cast<int>(parse_long("--reps", next));
      ++i;
    } else if (a == "--rtt-iters") {
      cfg.rtt_iters = parse_long("--rtt-iters", next);
      ++i;
    } else if (a == "--stream-msgs") {
      cfg.stream_msgs = parse_long("--stream-msgs", next);
      ++i;
    } else if (a == "--cpus" && std::sscanf(next, "%d,%d", &cfg.cpus[0], &cfg.cpus[1]) == 2) {
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: bench_mailbox [--reps N] [--rtt-iters N] [--stream-msgs N] [--cpus A,B]\n"
                   "  defaults: --reps 9 --rtt-iters 200000 --stream-msgs 5000000, the first two allowed CPUs\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (cfg.cpus[1] < 0) std::fprintf(stderr, "bench_mailbox: only one CPU available: threads are not pinned apart\n");

  std::vector<double> bare, mbox, mstream, bstream;
  for (int r = 0; r < cfg.reps; ++r) {  // interleaved, so slow phases of a shared box hit all alike
    bare.push_back(bare_pingpong_rtt_ns(cfg));
    mbox.push_back(mailbox_pingpong_rtt_ns(cfg));
    mstream.push_back(mailbox_stream_msgs_per_s(cfg));
    bstream.push_back(boost_stream_msgs_per_s(cfg));
  }
  const double bare_rtt = median(bare), mbox_rtt = median(mbox);
  const double m_tp = median(mstream), b_tp = median(bstream);
  const double lat_ratio = (mbox_rtt / 2) / (bare_rtt / 2);
  const double tp_ratio = m_tp / b_tp;

  std::printf("bench_mailbox: CPUs %d and %d, median of %d interleaved repetitions\n", cfg.cpus[0], cfg.cpus[1],
              cfg.reps);
  std::printf("%-52s %14s\n", "measurement", "median");
  std::printf("%-52s %11.1f ns\n", "(a) bare cache-line ping-pong round trip", bare_rtt);
  std::printf("%-52s %11.1f ns\n", "(b) mailbox ping-pong round trip, 8 B messages", mbox_rtt);
  std::printf("%-52s %11.1f ns\n", "    mailbox one-way latency (RTT/2)", mbox_rtt / 2);
  std::printf("%-52s %11.2f M/s\n", "(c) mailbox throughput, 8 B messages one way", m_tp / 1e6);
  std::printf("%-52s %11.2f M/s\n", "    boost::lockfree::spsc_queue<uint64_t> throughput", b_tp / 1e6);
  std::printf("\n%-52s %8s %8s %s\n", "ratio", "value", "target", "");
  std::printf("%-52s %8.2f %8s %s\n", "mailbox one-way latency / (ping-pong RTT/2)", lat_ratio, "<= 1.3",
              lat_ratio <= 1.3 ? "met" : "MISSED");
  std::printf("%-52s %8.2f %8s %s\n", "mailbox throughput / boost spsc throughput", tp_ratio, ">= 0.5",
              tp_ratio >= 0.5 ? "met" : "MISSED");
  return 0;
}
