#include "postbox/runtime/limits.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

std::uint64_t rlimit_cur(int resource) {
  rlimit r{};
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return kUnlimited;
  return static_cast<std::uint64_t>(r.rlim_cur);
}

std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  return (in >> v) ? v : kUnlimited;
}

// Per ring: the four cache lines of its indices, then its bytes (mailbox_ring.hpp).
constexpr std::uint64_t kRingHeader = 256;
// Per inbox: four cache lines (mailbox_ring.hpp), plus its arrays.
constexpr std::uint64_t kInboxBytes = 256;
// Per ordered pair: its slot (8 bytes) and queued-pair entry (16 bytes), counted for every pair
// (calloc'ed: only touched pages cost memory, an upper bound).
constexpr std::uint64_t kPairBytes = 24;
// Per queued message: its node header (mailbox_ring.hpp: Queued), and the allocator's 8-byte
// size word with rounding to 16.
constexpr std::uint64_t kQueuedOverhead = 16 + 16;
// A rank's thread: the stack pages it touches, its thread-local storage and team bookkeeping.
constexpr std::uint64_t kThreadBytes = 64 * 1024;
constexpr std::uint64_t kMinRing = 4096;  // mailbox.hpp: at least 4 KiB

std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) { return a > kUnlimited - b ? kUnlimited : a + b; }
std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) { return b != 0 && a > kUnlimited / b ? kUnlimited : a * b; }

// The stack a new thread reserves (glibc: RLIMIT_STACK's soft limit), plus its guard page.
std::uint64_t thread_stack_reservation() {
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096);
  std::size_t stack = 8 << 20;
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) == 0) {
    std::size_t s = 0;
    if (pthread_attr_getstacksize(&attr, &s) == 0 && s > 0) stack = s;
    pthread_attr_destroy(&attr);
  }
  return static_cast<std::uint64_t>(stack) + page;
}

// Threads that fit in what is left of the address-space limit (ulimit -v): each reserves its
// whole stack there, touched or not. kUnlimited without such a limit.
std::uint64_t address_space_threads() {
  const std::uint64_t as = rlimit_cur(RLIMIT_AS);
  if (as == kUnlimited) return kUnlimited;
  std::uint64_t used = 0;
  {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t pages = 0;
    if (statm >> pages) used = pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  }
  return as > used ? (as - used) / thread_stack_reservation() : 0;
}

}  // namespace

std::uint64_t available_memory_bytes() {
  std::uint64_t avail = kUnlimited;
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      avail = kib * 1024;
      break;
    }
  }
  if (avail == kUnlimited) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) avail = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }
  return std::min({avail, rlimit_cur(RLIMIT_AS), rlimit_cur(RLIMIT_DATA)});
}

std::uint64_t available_threads() {
  const std::uint64_t cap = std::min({rlimit_cur(RLIMIT_NPROC), read_number("/proc/sys/kernel/threads-max"),
                                      read_number("/proc/sys/kernel/pid_max")});
  if (cap == kUnlimited) return address_space_threads();
  // /proc/loadavg's fourth field: runnable/total scheduling entities (threads) right now.
  std::ifstream in("/proc/loadavg");
  double l1 = 0, l5 = 0, l15 = 0;
  std::string tasks;
  std::uint64_t now = 0;
  if (in >> l1 >> l5 >> l15 >> tasks) {
    const auto slash = tasks.find('/');
    if (slash != std::string::npos) now = std::strtoull(tasks.c_str() + slash + 1, nullptr, 10);
  }
  return std::min(cap > now ? cap - now : 0, address_space_threads());
}

std::string memory_text(std::uint64_t bytes) {
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return text;
}

void require_memory(std::uint64_t bytes, const std::string& what) {
  const std::uint64_t avail = available_memory_bytes();
  if (bytes <= avail) return;
  throw InputError(what + " needs about " + memory_text(bytes) + " of memory, more than the " + memory_text(avail) +
                   " this machine has available");
}

void require_threads(std::uint64_t threads, const std::string& what) {
  const std::uint64_t avail = available_threads();
  if (threads <= avail) return;
  if (avail == address_space_threads()) {
    throw InputError(what + " needs " + std::to_string(threads) + " threads, more than the " + std::to_string(avail) +
                     " whose stacks (" + memory_text(thread_stack_reservation()) +
                     " each) fit in this process's address-space limit (ulimit -v)");
  }
  throw InputError(what + " needs " + std::to_string(threads) + " threads, more than the " + std::to_string(avail) +
                   " this system can start now (kernel.pid_max, kernel.threads-max, ulimit -u)");
}

std::uint64_t plan_run_memory(const Plan& plan, std::uint64_t ring_bytes, std::uint64_t ring_budget_bytes) {
  std::uint64_t ring = kMinRing;
  while (ring < ring_bytes && ring < (std::uint64_t{1} << 62)) ring *= 2;
  // Per talking pair: what it may hold undelivered on the queue (its messages of the plan, each
  // with its node, up to about one ring, as mailbox.hpp bounds it). One source at a time.
  std::vector<std::uint64_t> queued_from(static_cast<std::size_t>(plan.p), 0);
  std::uint64_t pairs = 0;
  std::uint64_t queued = 0;
  std::uint64_t total = 0;
  for (int r = 0; r < plan.p; ++r) {
    std::vector<int> peers;
    for (std::uint32_t g = plan.first_op(r); g < plan.first_op(r + 1); ++g) {
      if (plan.code_at(g) != OpCode::send) continue;
      std::uint64_t& q = queued_from[static_cast<std::size_t>(plan.peer_at(g))];
      if (q == 0) peers.push_back(plan.peer_at(g));
      q = std::min(sat_add(q, sat_add(plan.a_at(g).bytes, kQueuedOverhead)), sat_add(ring, kQueuedOverhead));
    }
    for (const int d : peers) {
      queued = sat_add(queued, queued_from[static_cast<std::size_t>(d)]);
      queued_from[static_cast<std::size_t>(d)] = 0;
    }
    pairs += peers.size();
    total = sat_add(total, plan.user_bytes[static_cast<std::size_t>(r)]);
    total = sat_add(total, plan.scratch_bytes[static_cast<std::size_t>(r)]);
  }
  // Rings for the pairs that talk, within the budget; the queued messages besides (pairs past
  // the budget, and the first messages of every pair).
  total = sat_add(total, std::min(sat_mul(pairs, ring + kRingHeader), ring_budget_bytes));
  total = sat_add(total, queued);
  const auto p = static_cast<std::uint64_t>(plan.p);
  total = sat_add(total, sat_mul(p, sat_add(kInboxBytes + kThreadBytes, sat_mul(p, kPairBytes))));
  return total;
}

}  // namespace postbox
