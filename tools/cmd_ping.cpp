// postbox ping: round trips between two ranks over the mailboxes.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/mailbox.hpp"
#include "postbox/runtime/parse.hpp"

namespace postbox::cli {
namespace {

struct PingOptions {
  std::string p = "2";
  std::string bytes = "8";
  std::string iters = "10000";
  std::string peer = "1";
  bool no_pin = false;
  bool json = false;
};

// The first two CPUs this process may run on, or {-1, -1} when there are fewer than two.
std::pair<int, int> two_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {-1, -1};
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.size() < 2) return {-1, -1};
  return {cpus[0], cpus[1]};
}

bool pin_self(int cpu) {
  if (cpu < 0) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// Nearest-rank percentile of sorted samples.
double percentile(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(q * static_cast<double>(sorted.size()) + 0.999999);
  return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

void run_ping(const PingOptions& o) {
  const int p = static_cast<int>(parse_int(o.p, "--p", 2, 4096));
  const auto n = static_cast<std::size_t>(parse_int(o.bytes, "--bytes", 0, static_cast<std::int64_t>(Mailboxes::kMaxMessageBytes)));
  const long iters = static_cast<long>(parse_int(o.iters, "--iters", 1, 100'000'000));
  const int peer = static_cast<int>(parse_int(o.peer, "--peer", 1, p - 1));
  const long warmup = std::min(iters, 1000L);
  if (dry_run()) return;
  const auto [cpu0, cpu1] = o.no_pin ? std::pair<int, int>{-1, -1} : two_cpus();

  Mailboxes mb(p);
  std::vector<double> rtt(static_cast<std::size_t>(iters));
  bool pinned0 = false, pinned1 = false;
  {
    std::jthread echo([&] {
      pinned1 = pin_self(cpu1);
      std::vector<std::byte> buf(n);
      for (long i = 0; i < warmup + iters; ++i) {
        (void)mb.recv(peer, 0, buf);
        mb.send(peer, 0, buf);
      }
    });
    pinned0 = pin_self(cpu0);
    std::vector<std::byte> buf(n, std::byte{0x5a});
    for (long i = 0; i < warmup; ++i) {
      mb.send(0, peer, buf);
      (void)mb.recv(0, peer, buf);
    }
    for (long i = 0; i < iters; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      mb.send(0, peer, buf);
      (void)mb.recv(0, peer, buf);
      rtt[static_cast<std::size_t>(i)] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    }
  }
  std::sort(rtt.begin(), rtt.end());
  const double median = percentile(rtt, 0.5);
  const double p90 = percentile(rtt, 0.9);
  const double one_way = median / 2;

  if (o.json) {
    print_json({{"p", p},
                {"bytes", n},
                {"iters", iters},
                {"rtt_median_ns", median},
                {"rtt_p90_ns", p90},
                {"one_way_ns", one_way}});
    return;
  }
  std::printf("ping: rank 0 <-> rank %d of p = %d, %zu-byte messages, %ld timed round trips after %ld warm-up\n",
              peer, p, n, iters, warmup);
  if (pinned0 && pinned1) {
    std::printf("      threads pinned to CPUs %d and %d\n", cpu0, cpu1);
  } else {
    std::printf("      threads not pinned%s\n", o.no_pin ? " (--no-pin)" : " (fewer than two CPUs available)");
  }
  std::printf("round trip median   %10.1f ns\n", median);
  std::printf("round trip p90      %10.1f ns\n", p90);
  std::printf("one-way estimate    %10.1f ns   (median round trip / 2)\n", one_way);
}

}  // namespace

void register_ping(CLI::App& app) {
  auto opts = std::make_shared<PingOptions>();
  CLI::App* cmd = app.add_subcommand(
      "ping",
      "Measure mailbox round trips between rank 0 and one other rank (two threads, pinned to the first two\n"
      "allowed CPUs): each timed iteration sends --bytes bytes to the peer and waits for them to come back.\n"
      "Prints the median and 90th-percentile round trip and the one-way estimate (median / 2) in ns;\n"
      "each sample includes one steady_clock read.");
  cmd->add_option("--p", opts->p, "Size of the Mailboxes (number of ranks), 2 to 4096")->capture_default_str();
  cmd->add_option("--bytes", opts->bytes, "Message size in bytes, 0 to 1073741824 (kMaxMessageBytes)")
      ->capture_default_str();
  cmd->add_option("--iters", opts->iters, "Timed round trips, at least 1 (plus up to 1000 untimed warm-up ones)")
      ->capture_default_str();
  cmd->add_option("--peer", opts->peer, "Rank that echoes the messages, 1 to p-1 (e.g. p-1 for the last rank)")
      ->capture_default_str();
  cmd->add_flag("--no-pin", opts->no_pin, "Do not pin the two threads to CPUs");
  cmd->add_flag("--json", opts->json,
                "Print JSON {\"p\",\"bytes\",\"iters\",\"rtt_median_ns\",\"rtt_p90_ns\",\"one_way_ns\"} instead of text");
  cmd->callback([opts] { run_ping(*opts); });
}

}  // namespace postbox::cli
