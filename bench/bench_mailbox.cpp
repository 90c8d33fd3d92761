// Mailbox latency and throughput between two pinned threads, side by side in one run with
// (a) a bare cache-line ping-pong, the physical limit of a one-way notification here, and
// (c) boost::lockfree::spsc_queue, a competitor for small-message streaming.
//
// A hand-written harness rather than Google Benchmark fixtures: each figure needs two threads
// pinned to two cores for the same interval. Competitors alternate batch by batch inside one
// pinned pair of threads (bare, mailbox, bare, mailbox, ...), and each target ratio is the
// median over rounds of the ratio within a round, so both sides of a ratio were measured within
// a millisecond of each other. On a shared virtual machine this matters more than anything
// else: other processes preempt the pair, and the hypervisor moves the two virtual CPUs between
// physical cores, which changes the bare round trip itself several-fold from one second to
// the next. Google Benchmark supplies DoNotOptimize.
//
// (e) compares the two wake-up handshakes (membarrier(2) and the portable seq_cst one) with
// unpinned threads, p = 2 and oversubscribed (ping-pong pairs and fan-in).
//
// --memory LIST measures, instead of time, the memory a Mailboxes of p ranks holds for an
// all-to-all (docs/mailboxes.md, "Memory").
//
// Usage: bench_mailbox [--rounds N] [--rtt-batch N] [--stream-batch N] [--cpus A,B]
//                      [--handshake-rounds N] [--handshake-p LIST] [--handshake-only]
//                      [--memory LIST [--memory-rounds N]]
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "harness/cpus.hpp"
#include "postbox/runtime/mailbox.hpp"
#include "postbox/runtime/topology.hpp"
#include "postbox/runtime/wait.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct Config {
  long handshake_rounds = 11;
  std::vector<int> handshake_ps{2, 8, 32};
  bool handshake_only = false;
  long rounds = 201;
  long rtt_batch = 1'000;
  // 64x the mailbox ring's 4096 16-byte records (and 32x boost's 8192 slots): a batch that
  // starts with a full ring is skewed little.
  long stream_batch = 262'144;
  std::array<int, 2> cpus{-1, -1};
};

void pin_self(int cpu) {
  if (cpu < 0) return;
  if (!postbox::bench::pin_self(cpu)) std::fprintf(stderr, "bench_mailbox: cannot pin to CPU %d\n", cpu);
}

// Runs a on cpus[0] and b on cpus[1], both started together.
void run_pair(const Config& cfg, const std::function<void()>& a, const std::function<void()>& b) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
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
    a();
  });
  ta.join();
  tb.join();
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch()).count());
}

// Per round: nanoseconds of one batch of each competitor, measured back to back.
struct Rounds {
  std::vector<double> first, second, third, fourth;
};

// (a), (b), (d), (a2): latency rounds. Per round, rtt_batch round trips of (a) one cache line
// bounced between the cores (rank 0 writes odd values, rank 1 even ones), then rtt_batch round
// trips of (b) an 8-byte message there and back through the mailboxes, then (d) rtt_batch
// pairs of send and recv by one thread on a mailbox of its own (the software cost of a
// message with no line changing cores, which a round trip pays twice), then rtt_batch round
// trips of (a2) two lines, one per direction, each written by one side and polled by the
// other. (a) lets the line migrate: the poller that reads it writes it next, and the core can
// hand it over ready for writing; (a2) needs a write to a line the other core holds and a
// read of it back each way, as does every design with one ring per ordered pair. (a) polls like a mailbox
// receive does: load first, then a pause between loads (wait_until()'s spin; without the
// pause the polling core keeps pulling the line back while the other core waits to write it).
Rounds latency_rounds(const Config& cfg) {
  alignas(64) static std::atomic<std::uint64_t> line{0};
  // (a2): one line per direction, each written by one side only, as in any design with a ring
  // per ordered pair.
  alignas(64) static std::atomic<std::uint64_t> to_b{0};
  alignas(64) static std::atomic<std::uint64_t> to_a{0};
  line.store(0);
  to_b.store(0);
  to_a.store(0);
  postbox::Mailboxes mb(2);
  postbox::Mailboxes solo(2);  // (d): both roles in one thread, so no line changes cores
  const long rounds = cfg.rounds, batch = cfg.rtt_batch;
  Rounds out;
  run_pair(
      cfg,
      [&, rounds, batch] {
        std::uint64_t v = 0, x = 0, y = 0;
        auto bytes = std::as_writable_bytes(std::span(&v, 1));
        for (long r = 0; r < rounds; ++r) {
          const std::uint64_t t0 = now_ns();
          for (long i = 0; i < batch; ++i) {
            line.store(++x, std::memory_order_release);
            ++x;
            while (line.load(std::memory_order_acquire) != x) postbox::cpu_relax();
          }
          const std::uint64_t t1 = now_ns();
          for (long i = 0; i < batch; ++i) {
            v = static_cast<std::uint64_t>(i);
            mb.send(0, 1, bytes);
            (void)mb.recv(0, 1, bytes);
          }
          const std::uint64_t t2 = now_ns();
          for (long i = 0; i < batch; ++i) {
            v = static_cast<std::uint64_t>(i);
            solo.send(0, 1, bytes);
            (void)solo.recv(1, 0, bytes);
          }
          const std::uint64_t t3 = now_ns();
          for (long i = 0; i < batch; ++i) {
            to_b.store(++y, std::memory_order_release);
            while (to_a.load(std::memory_order_acquire) != y) postbox::cpu_relax();
          }
          const std::uint64_t t4 = now_ns();
          out.fourth.push_back(static_cast<double>(t4 - t3) / static_cast<double>(batch));
          out.first.push_back(static_cast<double>(t1 - t0) / static_cast<double>(batch));
          out.second.push_back(static_cast<double>(t2 - t1) / static_cast<double>(batch));
          out.third.push_back(static_cast<double>(t3 - t2) / static_cast<double>(batch));
        }
        benchmark::DoNotOptimize(v);
      },
      [&, rounds, batch] {
        std::uint64_t v = 0, x = 0, y = 0;
        auto bytes = std::as_writable_bytes(std::span(&v, 1));
        for (long r = 0; r < rounds; ++r) {
          for (long i = 0; i < batch; ++i) {
            ++x;
            while (line.load(std::memory_order_acquire) != x) postbox::cpu_relax();
            line.store(++x, std::memory_order_release);
          }
          for (long i = 0; i < batch; ++i) {
            (void)mb.recv(1, 0, bytes);
            mb.send(1, 0, bytes);
          }
          for (long i = 0; i < batch; ++i) {
            ++y;
            while (to_b.load(std::memory_order_acquire) != y) postbox::cpu_relax();
            to_a.store(y, std::memory_order_release);
          }
        }
      });
  return out;
}

// (c): throughput rounds. Per round, stream_batch 8-byte messages one way through
// boost::lockfree::spsc_queue (the same 64 KiB of buffering as a mailbox ring, polled the same
// way), then stream_batch through the mailboxes; timed at the receiver.
Rounds throughput_rounds(const Config& cfg) {
  auto q = std::make_unique<boost::lockfree::spsc_queue<std::uint64_t, boost::lockfree::capacity<8192>>>();
  postbox::Mailboxes mb(2);
  const long rounds = cfg.rounds, batch = cfg.stream_batch;
  Rounds out;
  std::uint64_t sum = 0;
  run_pair(
      cfg,
      [&, rounds, batch] {
        std::uint64_t v = 0, local = 0;
        auto bytes = std::as_writable_bytes(std::span(&v, 1));
        for (long r = 0; r < rounds; ++r) {
          const std::uint64_t t0 = now_ns();
          for (long i = 0; i < batch; ++i) {
            while (!q->pop(v)) postbox::cpu_relax();
            local += v;
          }
          const std::uint64_t t1 = now_ns();
          for (long i = 0; i < batch; ++i) {
            (void)mb.recv(1, 0, bytes);
            local += v;
          }
          const std::uint64_t t2 = now_ns();
          out.first.push_back(static_cast<double>(t1 - t0) / static_cast<double>(batch));
          out.second.push_back(static_cast<double>(t2 - t1) / static_cast<double>(batch));
        }
        sum = local;
      },
      [&, rounds, batch] {
        for (long r = 0; r < rounds; ++r) {
          for (long i = 0; i < batch; ++i) {
            while (!q->push(static_cast<std::uint64_t>(i))) postbox::cpu_relax();
          }
          for (long i = 0; i < batch; ++i) {
            const std::uint64_t v = static_cast<std::uint64_t>(i);
            mb.send(0, 1, std::as_bytes(std::span(&v, 1)));
          }
        }
      });
  const auto b = static_cast<std::uint64_t>(batch);
  if (sum != static_cast<std::uint64_t>(rounds) * 2 * (b * (b - 1) / 2)) std::abort();
  return out;
}

// (e): the wake-up handshake, membarrier(2) against the portable seq_cst one (mailbox.hpp),
// with more threads than CPUs. Threads are not pinned (the scheduler shares the CPUs out).
// Per round the two variants run the same batch back to back, the first one alternating.
enum class Pattern { kPingPong, kFanIn };

// Wall time per round trip (ping-pong: p/2 pairs bounce 8 bytes `iters` times each, all pairs at
// once) or per message (fan-in: ranks 1..p-1 send `iters` messages each to rank 0, which takes
// them with recv_any).
double handshake_batch(Pattern pattern, int p, long iters, bool membarrier, const postbox::WaitPolicy& wait) {
  postbox::MailboxOptions o;
  o.wait = wait;
  o.use_membarrier = membarrier;
  postbox::Mailboxes mb(p, o);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  const auto start = [&] {
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
  };
  if (pattern == Pattern::kPingPong) {
    for (int r = 0; r + 1 < p; r += 2) {
      threads.emplace_back([&, r] {
        start();
        std::uint64_t v = 0;
        auto bytes = std::as_writable_bytes(std::span(&v, 1));
        for (long i = 0; i < iters; ++i) {
          mb.send(r, r + 1, bytes);
          (void)mb.recv(r, r + 1, bytes);
        }
      });
      threads.emplace_back([&, r] {
        start();
        std::uint64_t v = 0;
        auto bytes = std::as_writable_bytes(std::span(&v, 1));
        for (long i = 0; i < iters; ++i) {
          (void)mb.recv(r + 1, r, bytes);
          mb.send(r + 1, r, bytes);
        }
      });
    }
  } else {
    for (int r = 1; r < p; ++r) {
      threads.emplace_back([&, r] {
        start();
        const std::uint64_t v = static_cast<std::uint64_t>(r);
        for (long i = 0; i < iters; ++i) mb.send(r, 0, std::as_bytes(std::span(&v, 1)));
      });
    }
    threads.emplace_back([&] {
      start();
      std::uint64_t v = 0;
      std::size_t n = 0;
      for (long i = 0; i < iters * (p - 1); ++i) (void)mb.recv_any(0, std::as_writable_bytes(std::span(&v, 1)), n);
    });
  }
  const std::uint64_t t0 = now_ns();
  go.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();
  const std::uint64_t t1 = now_ns();
  const double per = pattern == Pattern::kPingPong ? static_cast<double>(iters)
                                                   : static_cast<double>(iters) * static_cast<double>(p - 1);
  return static_cast<double>(t1 - t0) / per;
}

// (e), pinned: two threads on two CPUs (run_pair), the p = 2 fast path where nobody blocks and
// the portable handshake pays its read-modify-write on every publication. Per round: `batch`
// round trips (or one-way 8-byte messages) through each of the two mailboxes, back to back, the
// first one alternating. Returns ns per round trip (or per message) of each, per round.
Rounds pinned_handshake_rounds(const Config& cfg, bool stream, long batch) {
  postbox::MailboxOptions with_mb;
  postbox::MailboxOptions portable;
  portable.use_membarrier = false;
  postbox::Mailboxes a(2, with_mb);
  postbox::Mailboxes b(2, portable);
  const long rounds = cfg.handshake_rounds;
  Rounds out;
  run_pair(
      cfg,
      [&, rounds, batch] {
        std::uint64_t v = 0;
        auto bytes = std::as_writable_bytes(std::span(&v, 1));
        for (long r = 0; r < rounds; ++r) {
          for (int k = 0; k < 2; ++k) {
            const bool use_a = (r + k) % 2 == 0;
            postbox::Mailboxes& mb = use_a ? a : b;
            const std::uint64_t t0 = now_ns();
            for (long i = 0; i < batch; ++i) {
              if (stream) {
                (void)mb.recv(0, 1, bytes);
              } else {
                mb.send(0, 1, bytes);
                (void)mb.recv(0, 1, bytes);
              }
            }
            const double per = static_cast<double>(now_ns() - t0) / static_cast<double>(batch);
            (use_a ? out.first : out.second).push_back(per);
          }
        }
        benchmark::DoNotOptimize(v);
      },
      [&, rounds, batch] {
        std::uint64_t v = 0;
        auto bytes = std::as_writable_bytes(std::span(&v, 1));
        for (long r = 0; r < rounds; ++r) {
          for (int k = 0; k < 2; ++k) {
            postbox::Mailboxes& mb = (r + k) % 2 == 0 ? a : b;
            for (long i = 0; i < batch; ++i) {
              if (stream) {
                mb.send(1, 0, bytes);
              } else {
                (void)mb.recv(1, 0, bytes);
                mb.send(1, 0, bytes);
              }
            }
          }
        }
      });
  return out;
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

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

std::vector<double> ratios(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> out;
  for (std::size_t i = 0; i < num.size(); ++i) out.push_back(num[i] / den[i]);
  return out;
}

void handshake_table(const Config& cfg) {
  const int cpus = postbox::allowed_cpu_count();
  double load_before[3] = {-1, -1, -1}, load_after[3] = {-1, -1, -1};
  (void)getloadavg(load_before, 3);
  struct Case {
    Pattern pattern;
    int p;
    postbox::WaitPolicy wait;
  };
  std::vector<Case> cases;
  for (int p : cfg.handshake_ps) {
    for (Pattern pat : {Pattern::kPingPong, Pattern::kFanIn}) {
      if (p < 2) continue;
      if (p <= cpus) {
        cases.push_back({pat, p, postbox::WaitPolicy{}});  // unpinned here; pinned in the "2p" rows
      } else {
        cases.push_back({pat, p, postbox::WaitPolicy{0, postbox::WaitPolicy{}.yield_ns}});  // a Team's policy here
        cases.push_back({pat, p, postbox::WaitPolicy{0, 0}});                              // every wait blocks
      }
    }
  }
  std::printf("(e) wake-up handshake: membarrier(2) vs the portable seq_cst one; %d allowed CPUs, threads not pinned,\n"
              "%ld rounds, each running both on the same batch back to back (first one alternating); medians over\n"
              "rounds; ratio = median over rounds of membarrier / portable within the round (< 1: membarrier pays);\n"
              "p \"2p\": two threads pinned to two CPUs\n",
              cpus, cfg.handshake_rounds);
  std::printf("%-10s %4s %13s %16s %16s %8s %8s %8s\n", "pattern", "p", "spin/yield us", "membarrier", "portable",
              "ratio", "10th", "90th");
  const auto row = [](const char* pattern, const char* p, const char* wait, const std::vector<double>& mb,
                      const std::vector<double>& portable, const char* unit) {
    std::vector<double> ratio;
    for (std::size_t i = 0; i < mb.size(); ++i) ratio.push_back(mb[i] / portable[i]);
    std::printf("%-10s %4s %13s %9.0f %-6s %9.0f %-6s %8.2f %8.2f %8.2f\n", pattern, p, wait, quantile(mb, 0.5), unit,
                quantile(portable, 0.5), unit, quantile(ratio, 0.5), quantile(ratio, 0.1), quantile(ratio, 0.9));
    std::fflush(stdout);
  };
  if (cfg.cpus[1] >= 0) {
    const Rounds pp = pinned_handshake_rounds(cfg, false, 2'000);
    row("ping-pong", "2p", "20/200", pp.first, pp.second, "ns/RTT");
    const Rounds st = pinned_handshake_rounds(cfg, true, 200'000);
    row("stream", "2p", "20/200", st.first, st.second, "ns/msg");
  }
  for (const Case& c : cases) {
    // Size the batch to about 20 ms from a pilot.
    const long pilot = 200;
    const double per = handshake_batch(c.pattern, c.p, pilot, true, c.wait);
    const long iters = std::clamp(static_cast<long>(20e6 / std::max(per, 1.0) /
                                                    (c.pattern == Pattern::kFanIn ? c.p - 1 : 1)),
                                  50L, 2'000'000L);
    std::vector<double> mb, portable;
    for (long r = 0; r < cfg.handshake_rounds; ++r) {
      const bool mb_first = r % 2 == 0;
      const double a = handshake_batch(c.pattern, c.p, iters, mb_first, c.wait);
      const double b = handshake_batch(c.pattern, c.p, iters, !mb_first, c.wait);
      mb.push_back(mb_first ? a : b);
      portable.push_back(mb_first ? b : a);
    }
    char wait[32];
    std::snprintf(wait, sizeof wait, "%.0f/%.0f", static_cast<double>(c.wait.spin_ns) / 1e3,
                  static_cast<double>(c.wait.yield_ns) / 1e3);
    row(c.pattern == Pattern::kPingPong ? "ping-pong" : "fan-in", std::to_string(c.p).c_str(), wait, mb, portable,
        c.pattern == Pattern::kPingPong ? "ns/RTT" : "ns/msg");
  }
  (void)getloadavg(load_after, 3);
  std::printf("load average %.2f before, %.2f after\n", load_before[0], load_after[0]);
}


// One child process per p (its peak resident set is the figure): a Mailboxes of p ranks with
// the default options, then `rounds` all-to-alls of 8-byte messages, one thread acting as
// every rank: every rank sends to every other, then every rank receives from every other, so
// all p(p-1) messages of a round are in flight at once, as in 1-lev-dir's single round. From the
// third round on, pairs get rings while the ring budget lasts (MailboxOptions).
void memory_table(const std::vector<int>& ps, int rounds) {
  std::printf("%8s %8s %16s %16s %12s\n", "p", "rounds", "max RSS (MiB)", "rings (MiB)", "seconds");
  for (const int p : ps) {
    int fds[2];
    if (pipe(fds) != 0) return;
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t child = fork();
    if (child == 0) {
      close(fds[0]);
      postbox::Mailboxes mb(p);
      std::uint64_t v = 0;
      for (int r = 0; r < rounds; ++r) {
        for (int s = 0; s < p; ++s) {
          for (int d = 0; d < p; ++d) {
            if (d == s) continue;
            v = static_cast<std::uint64_t>(s) * 65536 + static_cast<std::uint64_t>(d);
            mb.send(s, d, std::as_bytes(std::span(&v, 1)));
          }
        }
        for (int d = 0; d < p; ++d) {
          for (int s = 0; s < p; ++s) {
            if (d == s) continue;
            if (mb.recv(d, s, std::as_writable_bytes(std::span(&v, 1))) != 8 ||
                v != static_cast<std::uint64_t>(s) * 65536 + static_cast<std::uint64_t>(d)) {
              _exit(3);
            }
          }
        }
      }
      const std::uint64_t held = mb.ring_bytes_held();
      if (write(fds[1], &held, sizeof held) != sizeof held) _exit(4);
      _exit(0);
    }
    close(fds[1]);
    std::uint64_t held = 0;
    const bool got = read(fds[0], &held, sizeof held) == sizeof held;
    close(fds[0]);
    int status = 0;
    rusage use{};
    if (child < 0 || wait4(child, &status, 0, &use) != child) return;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("%8d %8d   failed (status %d)\n", p, rounds, status);
      continue;
    }
    std::printf("%8d %8d %16.1f %16.1f %12.1f\n", p, rounds, static_cast<double>(use.ru_maxrss) / 1024.0,
                static_cast<double>(held) / (1024.0 * 1024.0), secs);
    std::fflush(stdout);
  }
}
}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  cfg.cpus = postbox::bench::first_two_cpus();
  std::vector<int> memory_ps;
  int memory_rounds = 4;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--rounds") {
      cfg.rounds = parse_long("--rounds", next);
      ++i;
    } else if (a == "--rtt-batch") {
      cfg.rtt_batch = parse_long("--rtt-batch", next);
      ++i;
    } else if (a == "--stream-batch") {
      cfg.stream_batch = parse_long("--stream-batch", next);
      ++i;
    } else if (a == "--cpus" && std::sscanf(next, "%d,%d", &cfg.cpus[0], &cfg.cpus[1]) == 2) {
      ++i;
    } else if (a == "--handshake-rounds") {
      cfg.handshake_rounds = parse_long("--handshake-rounds", next);
      ++i;
    } else if (a == "--handshake-p") {
      cfg.handshake_ps.clear();
      std::string list = next;
      for (std::size_t pos = 0; pos <= list.size();) {
        const std::size_t comma = list.find(',', pos);
        const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        cfg.handshake_ps.push_back(static_cast<int>(parse_long("--handshake-p", item.c_str())));
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
      ++i;
    } else if (a == "--handshake-only") {
      cfg.handshake_only = true;
    } else if (a == "--memory") {
      std::string list = next;
      for (std::size_t pos = 0; pos <= list.size();) {
        const std::size_t comma = list.find(',', pos);
        const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        memory_ps.push_back(static_cast<int>(parse_long("--memory", item.c_str())));
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
      ++i;
    } else if (a == "--memory-rounds") {
      memory_rounds = static_cast<int>(parse_long("--memory-rounds", next));
      ++i;
    } else {
      std::fprintf(a == "--help" ? stdout : stderr,
                   "usage: bench_mailbox [--rounds N] [--rtt-batch N] [--stream-batch N] [--cpus A,B]\n"
                   "                     [--handshake-rounds N] [--handshake-p LIST] [--handshake-only]\n"
                   "                     [--memory LIST [--memory-rounds N]]\n"
                   "  defaults: --rounds 201 --rtt-batch 1000 --stream-batch 262144, the first two allowed CPUs,\n"
                   "  --handshake-rounds 11 --handshake-p 2,8,32\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (cfg.cpus[1] < 0) std::fprintf(stderr, "bench_mailbox: only one CPU available: threads are not pinned apart\n");

  if (!memory_ps.empty()) {
    memory_table(memory_ps, memory_rounds);
    return 0;
  }
  if (cfg.handshake_only) {
    handshake_table(cfg);
    return 0;
  }
  double load_before[3] = {0, 0, 0}, load_after[3] = {0, 0, 0};
  if (getloadavg(load_before, 3) < 1) load_before[0] = -1;
  const Rounds lat = latency_rounds(cfg);
  const Rounds tp = throughput_rounds(cfg);
  if (getloadavg(load_after, 3) < 1) load_after[0] = -1;

  std::printf("bench_mailbox: CPUs %d and %d, %ld rounds, load average %.2f before, %.2f after\n", cfg.cpus[0],
              cfg.cpus[1], cfg.rounds, load_before[0], load_after[0]);
  std::printf("a round: %ld round trips of (a) then of (b); %ld messages through boost then through the mailbox\n\n",
              cfg.rtt_batch, cfg.stream_batch);
  std::printf("%-52s %12s %12s %12s\n", "measurement (over rounds)", "10th pct", "median", "90th pct");
  const auto row = [](const char* name, const std::vector<double>& v, bool rate, double scale, const char* unit) {
    std::vector<double> x = v;
    if (rate) {
      for (double& e : x) e = 1e9 / e;  // ns per message -> messages per second
    }
    std::printf("%-52s %8.1f %-3s %8.1f %-3s %8.1f %-3s\n", name, quantile(x, 0.1) * scale, unit,
                quantile(x, 0.5) * scale, unit, quantile(x, 0.9) * scale, unit);
  };
  row("(a) bare cache-line ping-pong round trip", lat.first, false, 1, "ns");
  row("(a2) bare ping-pong, one line per direction", lat.fourth, false, 1, "ns");
  row("(b) mailbox ping-pong round trip, 8 B messages", lat.second, false, 1, "ns");
  row("    mailbox one-way latency (RTT/2)", lat.second, false, 0.5, "ns");
  row("(d) mailbox send + recv in one thread, 8 B", lat.third, false, 1, "ns");
  std::vector<double> predicted;
  for (std::size_t i = 0; i < lat.first.size(); ++i) predicted.push_back(lat.first[i] + 2 * lat.third[i]);
  row("    (a) + 2 x (d): the RTT if software cost just adds", predicted, false, 1, "ns");
  row("(c) mailbox throughput, 8 B messages one way", tp.second, true, 1e-6, "M/s");
  row("    boost::lockfree::spsc_queue<uint64_t> throughput", tp.first, true, 1e-6, "M/s");

  // Within a round: one-way latency / (bare RTT / 2) = mailbox RTT / bare RTT; throughput ratio
  // = boost's time per message / the mailbox's.
  const std::vector<double> lat_ratio = ratios(lat.second, lat.first);
  const std::vector<double> lat_ratio2 = ratios(lat.second, lat.fourth);
  const std::vector<double> tp_ratio = ratios(tp.first, tp.second);
  std::printf("\n%-52s %12s %12s %12s %8s\n", "ratio within a round (over rounds)", "10th pct", "median", "90th pct",
              "target");
  const auto ratio = [](const char* name, const std::vector<double>& v, const char* target, bool met) {
    std::printf("%-52s %12.2f %12.2f %12.2f %8s %s\n", name, quantile(v, 0.1), quantile(v, 0.5), quantile(v, 0.9),
                target, met ? "met" : "MISSED");
  };
  ratio("mailbox one-way latency / (ping-pong RTT/2)", lat_ratio, "<= 1.3", quantile(lat_ratio, 0.5) <= 1.3);
  ratio("mailbox one-way latency / (a2 RTT/2)", lat_ratio2, "<= 1.3", quantile(lat_ratio2, 0.5) <= 1.3);
  ratio("mailbox throughput / boost spsc throughput", tp_ratio, ">= 0.5", quantile(tp_ratio, 0.5) >= 0.5);
  std::printf("\n");
  handshake_table(cfg);
  return 0;
}
