// The emulator at scale: the schedules of kCases (up to 10^7 ranks), each built as a plan, turned
// into the emulator's schedule, and simulated by the default discipline (per-rank queues) and by
// the first landing's (one global queue, busy events put back), interleaved. Every run is a
// forked child, so its peak resident memory is its own (wait4's ru_maxrss). Prints, per case and
// discipline, the plan-only part (plan and schedule construction: seconds, and the peak resident
// MiB when it ends, read in the child by getrusage before the simulation starts), the
// simulate-only part (seconds, events, events/s), the total (seconds, the child's peak MiB: above
// plan_MiB only when the simulation raised it), and the ratio of simulation times (reference /
// default; > 1: the default is faster).
//
// Usage: bench_emulator [--quick] [--reps N] [--only NAME]   (--quick: smaller sizes, 1 rep)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/emulator/schedule.hpp"
#include "postbox/emulator/simulator.hpp"

namespace {

struct Case {
  const char* name;
  const char* machine;
  const char* op;
  const char* algo;
  int p;
  int quick_p;
  std::int64_t bytes;
  int reference_max_p;  // run the reference discipline only up to this p (it is O(p²) on some)
};

const std::vector<Case> kCases{
    {"bcast-binomial-1e7", "postal:2", "bcast", "binomial", 10'000'000, 100'000, 8, 10'000'000},
    {"bcast-fibo-1e6", "postal:2", "bcast", "fibo", 1'000'000, 100'000, 8, 1'000'000},
    {"bcast-flat-65536", "postal:2", "bcast", "flat", 65536, 4096, 8, 16384},
    {"all-to-all-4096", "postal:2", "all-to-all", "1-lev-dir", 4096, 256, 8, 1024},
    {"allreduce-rd-65536", "logp:3:2:0.5:0.004", "allreduce", "recursive-doubling", 65536, 4096, 1024, 65536},
    {"bcast-binomial-delta-512", "delta", "bcast", "binomial", 512, 64, 4096, 512},
    // Contended wormhole traffic: every channel step an event (docs/emulator.md, "Why a contended step stays an event").
    {"all-to-all-delta-512", "delta", "all-to-all", "1-lev-dir", 512, 64, 2048, 64},
};

struct Figures {
  double plan_s = 0, schedule_s = 0, sim_s = 0;
  std::uint64_t events = 0, postponed = 0, messages = 0;
  double time_us = 0;
  long plan_peak_kib = 0;  // the child's peak resident memory when the schedule is built
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Figures run_case(const Case& c, int p, bool reference) {
  const postbox::sim::Machine m = postbox::sim::load_machine(c.machine);
  postbox::PlanRequest req;
  req.op = c.op;
  req.algo = c.algo;
  req.p = p;
  req.bytes = c.bytes;
  const double lambda = m.kind == postbox::sim::ModelKind::mesh ? 2.0 : postbox::sim::nominal_lambda(m, static_cast<std::uint64_t>(c.bytes));
  req.lambda = postbox::Rational(static_cast<std::int64_t>(lambda * 1000 + 0.5), 1000);
  Figures f;
  auto t0 = std::chrono::steady_clock::now();
  postbox::sim::Schedule s;
  {
    const postbox::Plan plan = postbox::build_plan(req);
    f.plan_s = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    s = postbox::sim::schedule_of(plan);
    f.schedule_s = seconds_since(t0);
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  f.plan_peak_kib = ru.ru_maxrss;
  postbox::sim::SimOptions opt;
  opt.reference_queue = reference;
  t0 = std::chrono::steady_clock::now();
  const postbox::sim::SimResult r = postbox::sim::simulate(s, m, opt);
  f.sim_s = seconds_since(t0);
  f.events = r.events;
  f.postponed = r.postponed;
  f.messages = r.messages;
  f.time_us = r.time_us;
  return f;
}

// Runs one case in a child; returns false if the child failed.
bool in_child(const Case& c, int p, bool reference, Figures& f, long& peak_kib) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Figures out;
    try {
      out = run_case(c, p, reference);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", c.name, e.what());
      _exit(1);
    }
    const ssize_t w = write(fds[1], &out, sizeof out);
    _exit(w == static_cast<ssize_t>(sizeof out) ? 0 : 1);
  }
  close(fds[1]);
  const ssize_t got = read(fds[0], &f, sizeof f);
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  peak_kib = ru.ru_maxrss;
  return got == static_cast<ssize_t>(sizeof f) && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  // As `postbox sim` does (tools/main.cpp): the heap on transparent huge pages.
  if (std::getenv("GLIBC_TUNABLES") == nullptr) {
    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
    execv("/proc/self/exe", argv);
  }
  bool quick = false;
  int reps = 2;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_emulator [--quick] [--reps N] [--only NAME]\n");
      return 2;
    }
  }
  if (quick) reps = 1;
  std::printf("%-26s %-9s %9s | %8s %8s %8s | %8s %11s %10s %12s | %8s %8s | %7s\n", "case", "queue", "p", "plan_s",
              "sched_s", "plan_MiB", "sim_s", "events", "ev/msg", "events/s", "total_s", "peak_MiB", "ratio");
  for (const Case& c : kCases) {
    if (!only.empty() && only != c.name) continue;
    const int p = quick ? c.quick_p : c.p;
    const bool with_ref = p <= c.reference_max_p;
    // Interleaved: default, reference, default, reference ...; the best of each is printed.
    Figures best[2];
    long peak[2] = {0, 0};
    bool ok[2] = {false, false};
    for (int rep = 0; rep < reps; ++rep) {
      for (int ref = 0; ref < (with_ref ? 2 : 1); ++ref) {
        Figures f;
        long kib = 0;
        if (!in_child(c, p, ref == 1, f, kib)) continue;
        if (!ok[ref] || f.sim_s < best[ref].sim_s) best[ref] = f;
        peak[ref] = std::max(peak[ref], kib);
        ok[ref] = true;
      }
    }
    for (int ref = 0; ref < 2; ++ref) {
      if (!ok[ref]) {
        if (ref == 0 || with_ref) std::printf("%-26s %-9s %9d  failed\n", c.name, ref ? "reference" : "default", p);
        continue;
      }
      const Figures& f = best[ref];
      char ratio[16] = "";
      if (ref == 1 && ok[0] && best[0].sim_s > 0) std::snprintf(ratio, sizeof ratio, "%.1f", f.sim_s / best[0].sim_s);
      const double handled = static_cast<double>(f.events + f.postponed);
      std::printf("%-26s %-9s %9d | %8.2f %8.2f %8.0f | %8.2f %11.0f %10.2f %12.3g | %8.2f %8.0f | %7s\n", c.name,
                  ref ? "reference" : "default", p, f.plan_s, f.schedule_s, static_cast<double>(f.plan_peak_kib) / 1024.0,
                  f.sim_s, handled, f.messages ? handled / static_cast<double>(f.messages) : 0.0,
                  f.sim_s > 0 ? handled / f.sim_s : 0.0, f.plan_s + f.schedule_s + f.sim_s,
                  static_cast<double>(peak[ref]) / 1024.0, ratio);
      if (ref == 1 && ok[0] && best[0].time_us != f.time_us) std::printf("  ** the two disciplines disagree on time\n");
    }
    std::fflush(stdout);
  }
  return 0;
}
