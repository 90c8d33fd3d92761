#include "barrier_bench.hpp"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "cpus.hpp"

#include "postbox/barrier/barrier.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"
#include "postbox/runtime/wait.hpp"

namespace postbox::bench {
namespace {

// p − 1 std::threads made once and kept for every measurement at one p, the caller as rank 0,
// as an OpenMP runtime keeps its pool: the threads are placed by the scheduler once, and a
// measurement does not start with threads that have just been created on the caller's CPU.
// Between measurements they sleep in a futex (std::atomic::wait).
class ThreadTeam {
 public:
  explicit ThreadTeam(int p) : p_(p) {
    threads_.reserve(static_cast<std::size_t>(p - 1));
    for (int r = 1; r < p; ++r) threads_.emplace_back([this, r] { loop(r); });
  }
  ~ThreadTeam() {
    stop_ = true;
    // release: the workers see stop_ once they see the new generation.
    gen_.fetch_add(1, std::memory_order_release);
    gen_.notify_all();
    for (auto& t : threads_) t.join();
  }
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;
  [[nodiscard]] int size() const noexcept { return p_; }

  // fn(rank) on every rank; returns once every rank has returned.
  void run(const std::function<void(int)>& fn) {
    job_ = &fn;
    done_.store(0, std::memory_order_relaxed);
    // release: publishes job_ and the reset of done_ to the workers.
    gen_.fetch_add(1, std::memory_order_release);
    gen_.notify_all();
    fn(0);
    for (;;) {
      // acquire: every worker's writes in fn happen before this returns.
      const int d = done_.load(std::memory_order_acquire);
      if (d == p_ - 1) break;
      done_.wait(d, std::memory_order_acquire);
    }
  }

 private:
  void loop(int rank) {
    std::uint32_t seen = 0;
    for (;;) {
      gen_.wait(seen, std::memory_order_acquire);
      seen = gen_.load(std::memory_order_acquire);
      if (stop_) return;
      (*job_)(rank);
      // acq_rel: publishes this worker's part to run(); the last one wakes it.
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == p_ - 1) done_.notify_one();
    }
  }

  const int p_;
  const std::function<void(int)>* job_ = nullptr;
  bool stop_ = false;
  std::atomic<std::uint32_t> gen_{0};
  std::atomic<int> done_{0};
  std::vector<std::thread> threads_;
};

// Runs the syncbench body on p threads and returns the overhead per barrier of each outer
// repetition (and the tail histogram into `tail`): on `team` when there is one, else on p − 1
// std::threads made for this measurement and the caller.
template <class BarrierFn>
std::vector<double> run_threads(ThreadTeam* team, int p, const syncbench::Params& prm, syncbench::Histogram& tail,
                                BarrierFn&& barrier) {
  syncbench::Shared sh;
  if (team != nullptr) {
    team->run([&](int r) { syncbench::body(r, p, sh, prm, barrier); });
  } else {
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(p - 1));
    for (int r = 1; r < p; ++r) threads.emplace_back([&, r] { syncbench::body(r, p, sh, prm, barrier); });
    syncbench::body(0, p, sh, prm, barrier);
    for (auto& t : threads) t.join();
  }
  tail.merge(sh.tail);
  return sh.per_barrier_ns;
}

// The same body with the p ranks as fibers of a Team (one worker per allowed CPU). The team is
// made here, outside the timed loops (the body times itself).
template <class BarrierFn>
std::vector<double> run_fibers(int p, const syncbench::Params& prm, syncbench::Histogram& tail, BarrierFn&& barrier) {
  syncbench::Shared sh;
  TeamOptions o;
  o.ranks = RanksMode::fibers;
  o.mailbox.ring_bytes = 4096;  // the barrier sends no messages: the smallest rings
  Team team(p, o);
  team.run([&](RankContext& ctx) { syncbench::body(ctx.rank(), p, sh, prm, barrier); });
  tail.merge(sh.tail);
  return sh.per_barrier_ns;
}

// Polls until done(), yielding after 4096 polls so that two threads on one CPU still make
// progress (the one-way and two-flag rows alike).
template <class Done>
void spin_until(Done&& done) {
  for (int spins = 0; !done();) {
    if (++spins < 4096) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

// The least a barrier of two can do here, through the same syncbench body as every barrier row:
// each rank stores its phase into a line of its own and spins (yielding after 4096 polls, as
// one-way does) until the other's line holds that phase too. No split phase, no abort, no
// blocking: a floor to read default / one-way against, not a barrier to use.
std::vector<double> run_two_flag(ThreadTeam* team, const syncbench::Params& prm, syncbench::Histogram& tail) {
  struct alignas(64) Flag {
    std::atomic<std::uint64_t> v{0};
    std::uint64_t phase = 0;  // the owning rank's count, on its own line
  };
  Flag flag[2];
  return run_threads(team, 2, prm, tail, [&](int r) {
    Flag& mine = flag[r];
    const Flag& other = flag[1 - r];
    const std::uint64_t e = ++mine.phase;
    // release/acquire: what each rank wrote before the barrier is visible to the other after it.
    mine.v.store(e, std::memory_order_release);
    spin_until([&] { return other.v.load(std::memory_order_acquire) >= e; });
  });
}

// Half the round trip of one cache line between ranks 0 and 1 (each spins for the other's
// store, yielding after 4096 polls so that two threads on one CPU still make progress), one
// figure per outer repetition: the one-way latency a barrier of two ranks cannot beat.
std::vector<double> run_one_way(ThreadTeam* team, const syncbench::Params& prm) {
  struct alignas(64) Flag {
    std::atomic<std::int64_t> v{0};
  };
  Flag ping, pong;
  std::atomic<std::int64_t> inner{0};
  std::vector<double> out;
  auto await = [](const Flag& f, std::int64_t k) { spin_until([&] { return f.v.load(std::memory_order_acquire) == k; }); };
  auto fn = [&](int r) {
    if (r > 1) return;
    std::int64_t k = 0;
    auto trip = [&] {
      ++k;
      if (r == 0) {
        ping.v.store(k, std::memory_order_release);
        await(pong, k);
      } else {
        await(ping, k);
        pong.v.store(k, std::memory_order_release);
      }
    };
    constexpr int kPilot = 1000;
    const auto t0 = syncbench::now_ns();
    for (int i = 0; i < kPilot; ++i) trip();
    if (r == 0) {
      const double per = std::max(1.0, static_cast<double>(syncbench::now_ns() - t0) / kPilot);
      // relaxed: published by the next trip (ping's release, acquired by rank 1).
      inner.store(std::clamp<std::int64_t>(static_cast<std::int64_t>(static_cast<double>(prm.target_ns) / per), 16,
                                           prm.max_inner),
                  std::memory_order_relaxed);
    }
    trip();
    const std::int64_t n = inner.load(std::memory_order_relaxed);
    for (int o = 0; o < prm.outer; ++o) {
      trip();
      const auto t = syncbench::now_ns();
      for (std::int64_t i = 0; i < n; ++i) trip();
      if (r == 0) out.push_back(static_cast<double>(syncbench::now_ns() - t) / static_cast<double>(n) / 2);
    }
  };
  if (team != nullptr) {
    team->run(fn);
  } else {
    std::thread other(fn, 1);
    fn(0);
    other.join();
  }
  return out;
}

// A CPU-bound child process at the given nice level for as long as this object lives: the
// competing process of Load::nice0 / Load::nice10. It also ends when the bench does not get to
// end it (killed, or a timeout's SIGTERM): the kernel sends it SIGKILL when the thread that made
// it exits, so no CPU burner outlives the measurement.
class CompetingProcess {
 public:
  explicit CompetingProcess(Load load) {
    if (load == Load::none) return;
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    PB_CHECK(pid_ >= 0, "bench barrier: fork failed for the competing process");
    if (pid_ == 0) {
      // The child: async-signal-safe calls only (the parent may have threads).
      (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(0);  // the parent died before the prctl took effect
      (void)::setpriority(PRIO_PROCESS, 0, load == Load::nice10 ? 10 : 0);
      for (;;) asm volatile("" ::: "memory");
    }
  }
  ~CompetingProcess() {
    if (pid_ <= 0) return;
    (void)::kill(pid_, SIGKILL);
    (void)::waitpid(pid_, nullptr, 0);
  }
  CompetingProcess(const CompetingProcess&) = delete;
  CompetingProcess& operator=(const CompetingProcess&) = delete;

 private:
  pid_t pid_ = -1;
};

constexpr const char* kFiberSuffix = "@fibers";

std::filesystem::path helper_path(const std::string& impl, const BarrierBenchOptions& o) {
  std::filesystem::path dir = o.helper_dir;
  if (dir.empty()) {
    std::error_code ec;
    dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  }
  return dir / ("postbox-" + impl);
}

// Runs a helper executable for one p and returns its repetitions; a note instead (and an empty
// vector) when it cannot.
std::vector<double> run_helper(const std::filesystem::path& exe, const std::string& impl, int p,
                               const syncbench::Params& prm, syncbench::Histogram& tail, std::vector<std::string>& notes) {
  std::ostringstream cmd_s;
  cmd_s << '\'' << exe.string() << "' --impl " << impl << " --p " << p << " --outer " << prm.outer << " --target-ns "
        << prm.target_ns << " --method " << (prm.method == syncbench::Method::late ? "late" : "barrier")
        << (prm.tail ? " --tail" : "");
  // default@omp-gomp: postbox's default barrier through the C API, called from the OpenMP team.
  if (const auto at = impl.find('@'); at != std::string::npos) cmd_s << " --postbox " << impl.substr(0, at);
  const std::string cmd = cmd_s.str();
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) {
    notes.push_back(impl + ": cannot start " + exe.string());
    return {};
  }
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const int status = ::pclose(f);
  if (status != 0) {
    notes.push_back(impl + ": helper failed (status " + std::to_string(status) + ") at p=" + std::to_string(p));
    return {};
  }
  try {
    const auto j = nlohmann::json::parse(out);
    for (const auto& r : j.at("rows")) {
      if (r.at("p").get<int>() != p) continue;
      if (r.contains("tail_buckets")) {
        for (const auto& b : r.at("tail_buckets")) {
          const auto k = b.at(0).get<std::size_t>();
          const auto c = b.at(1).get<std::uint64_t>();
          if (k < tail.count.size()) {
            tail.count[k] += c;
            tail.total += c;
          }
        }
      }
      return r.at("samples_ns").get<std::vector<double>>();
    }
    notes.push_back(impl + ": the helper printed no row for p=" + std::to_string(p));
  } catch (const nlohmann::json::exception& e) {
    notes.push_back(impl + ": cannot parse the helper's output (" + std::string(e.what()) + ")");
  }
  return {};
}

// Waits up to settle_s for the machine's other runnable tasks to average below one half over
// the last second (sampled every 50 ms); returns the time waited.
double settle(double settle_s, std::vector<std::string>& notes) {
  if (settle_s <= 0) return 0;
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto deadline = start + std::chrono::duration<double>(settle_s);
  constexpr std::size_t kWindow = 20;
  std::deque<int> others;
  double mean = 0;
  for (;;) {
    const int runnable = sample_load().runnable;
    if (runnable < 0) {
      notes.push_back("cannot read /proc/stat: did not wait for the load to settle");
      return 0;
    }
    others.push_back(std::max(0, runnable - 1));
    if (others.size() > kWindow) others.pop_front();
    mean = std::accumulate(others.begin(), others.end(), 0.0) / static_cast<double>(others.size());
    if (others.size() == kWindow && mean < 0.5) break;
    if (clock::now() >= deadline) {
      char line[160];
      std::snprintf(line, sizeof line,
                    "the load did not settle within %.0f s (other runnable tasks: %.1f on average over the last second)",
                    settle_s, mean);
      notes.emplace_back(line);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::chrono::duration<double>(clock::now() - start).count();
}

}  // namespace

double cross_cpu_one_way_ns() {
  const std::array<int, 2> cpus = first_two_cpus();
  if (cpus[1] < 0) return std::nan("");
  constexpr long kTrips = 20000;
  constexpr int kBatches = 11;
  alignas(64) std::atomic<long> ball{0};
  std::atomic<bool> pinned{true};
  std::atomic<int> ready{0};
  // Both pinned before any bounce, and neither bounces if one could not be: two unpinned
  // spinners on one CPU would take a time slice per trip.
  const auto start = [&](int cpu) {
    if (!pin_self(cpu)) pinned = false;
    ready.fetch_add(1);
    while (ready.load() < 2) std::this_thread::yield();
    return pinned.load();
  };
  std::vector<double> ns;
  // Both threads fresh, so that the caller's own affinity is left alone. Each trip: the first
  // thread stores an odd value and waits for the next even one, the second answers it.
  std::thread first([&] {
    if (!start(cpus[0])) return;
    for (int b = 0; b < kBatches; ++b) {
      const long base = 2 * kTrips * b;
      const auto t0 = std::chrono::steady_clock::now();
      for (long i = 1; i <= kTrips; ++i) {
        ball.store(base + 2 * i - 1, std::memory_order_release);
        while (ball.load(std::memory_order_acquire) != base + 2 * i) {
        }
      }
      ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
                   (2.0 * kTrips));
    }
  });
  std::thread second([&] {
    if (!start(cpus[1])) return;
    for (long k = 1; k <= kTrips * kBatches; ++k) {  // trip k: 2k - 1 there, 2k back
      while (ball.load(std::memory_order_acquire) != 2 * k - 1) {
      }
      ball.store(2 * k, std::memory_order_release);
    }
  });
  first.join();
  second.join();
  if (!pinned) return std::nan("");
  return syncbench::median(ns);
}

LoadSample sample_load() {
  LoadSample s;
  double avg[3] = {-1, -1, -1};
  if (::getloadavg(avg, 3) == 3) {
    s.avg1 = avg[0];
    s.avg5 = avg[1];
    s.avg15 = avg[2];
  }
  std::ifstream stat("/proc/stat");
  std::string key;
  while (stat >> key) {
    if (key == "procs_running") {
      stat >> s.runnable;
      break;
    }
    stat.ignore(1 << 20, '\n');
  }
  return s;
}

const std::vector<std::string>& barrier_impl_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = barrier_names();
    for (const char* x :
         {"std", "pthread", "omp-gomp", "omp-llvm", "default@omp-gomp", "default@omp-llvm", "one-way", "two-flag"})
      n.emplace_back(x);
    return n;
  }();
  return names;
}

BarrierBenchResult run_barrier_bench(const BarrierBenchOptions& o,
                                     const std::function<void(const std::string&)>& progress) {
  if (o.ps.empty()) throw InputError("--p needs at least one thread count");
  for (int p : o.ps) {
    if (p < 1) throw InputError("--p must be at least 1, got " + std::to_string(p));
    if (p > 1024) throw InputError("--p must be at most 1024, got " + std::to_string(p));
  }
  if (o.rounds < 1) throw InputError("--rounds must be at least 1, got " + std::to_string(o.rounds));
  if (o.rounds > o.params.outer) {
    throw InputError("--rounds " + std::to_string(o.rounds) + " exceeds the " + std::to_string(o.params.outer) +
                     " outer repetitions (--outer): every round measures each competitor at least once");
  }
  if (!(o.settle_s >= 0)) throw InputError("--settle must be a non-negative number of seconds");
  const auto& known = barrier_impl_names();
  std::vector<std::string> impls = o.impls.empty() ? known : o.impls;
  for (const auto& i : impls)
    if (std::find(known.begin(), known.end(), i) == known.end()) throw InputError("unknown barrier '" + i + "'");

  BarrierBenchResult res;
  res.allowed_cpus = allowed_cpu_count();
  res.load_before = sample_load();
  res.calibration = calibrated_latency();
  res.settled_after_s = settle(o.settle_s, res.notes);
  res.cross_cpu_before_ns = cross_cpu_one_way_ns();
  // After settling (which would wait for it in vain), before any thread of the run exists.
  std::optional<CompetingProcess> competitor;
  competitor.emplace(o.load);
  res.rounds = o.rounds;
  res.outer_per_round = (o.params.outer + res.rounds - 1) / res.rounds;
  syncbench::Params round_prm = o.params;
  round_prm.outer = res.outer_per_round;
  // Warm-up: page faults, thread stacks, the OpenMP runtimes' pools and the helpers' pages.
  syncbench::Params warm_prm = o.params;
  warm_prm.outer = 1;
  warm_prm.target_ns = std::min<std::int64_t>(o.params.target_ns, 2'000'000);

  // Helpers that exist; a missing one is said once and left out.
  std::map<std::string, std::filesystem::path> helpers;
  std::vector<std::string> competitors;
  for (const auto& impl : impls) {
    if (impl.ends_with("omp-gomp") || impl.ends_with("omp-llvm")) {
      const auto exe = helper_path(impl.substr(impl.size() - 8), o);
      std::error_code ec;
      if (!std::filesystem::exists(exe, ec)) {
        res.notes.push_back(impl + ": helper " + exe.string() + " not found (not built here); no rows");
        continue;
      }
      helpers[impl] = exe;
    }
    competitors.push_back(impl);
  }

  // send_recv left empty: default, fibo and combine take calibrated_latency() themselves, the
  // same figures rounded to whole nanoseconds, and their reason() says where from.
  BarrierOptions bo;
  BarrierOptions fiber_bo;
  fiber_bo.fibers = true;
  const auto& lib = barrier_names();
  std::unique_ptr<ThreadTeam> team;  // per p, for every kernel-thread row (Threads::team)
  const auto measure = [&](const std::string& impl, int p, const syncbench::Params& prm,
                           syncbench::Histogram& tail) -> std::vector<double> {
    if (auto h = helpers.find(impl); h != helpers.end()) return run_helper(h->second, impl, p, prm, tail, res.notes);
    if (impl == "one-way") return p == 2 ? run_one_way(team.get(), prm) : std::vector<double>{};
    if (impl == "two-flag") return p == 2 ? run_two_flag(team.get(), prm, tail) : std::vector<double>{};
    if (impl.ends_with(kFiberSuffix)) {
      auto b = make_barrier(impl.substr(0, impl.size() - std::string_view(kFiberSuffix).size()), p, fiber_bo);
      return run_fibers(p, prm, tail, [&](int r) { b->arrive_and_wait(r); });
    }
    if (std::find(lib.begin(), lib.end(), impl) != lib.end()) {
      auto b = make_barrier(impl, p, bo);
      return run_threads(team.get(), p, prm, tail, [&](int r) { b->arrive_and_wait(r); });
    }
    if (impl == "std") {
      std::barrier<> b(p);
      return run_threads(team.get(), p, prm, tail, [&](int) { b.arrive_and_wait(); });
    }
    pthread_barrier_t b;
    PB_CHECK(::pthread_barrier_init(&b, nullptr, static_cast<unsigned>(p)) == 0, "pthread_barrier_init");
    auto out = run_threads(team.get(), p, prm, tail, [&](int) { (void)::pthread_barrier_wait(&b); });
    ::pthread_barrier_destroy(&b);
    return out;
  };

  const std::vector<std::string> thread_competitors = competitors;
  for (int p : o.ps) {
    competitors = thread_competitors;
    if (resolve_ranks_mode(o.ranks, p) == RanksMode::fibers) {
      for (const auto& impl : thread_competitors) {
        if (std::find(lib.begin(), lib.end(), impl) != lib.end()) competitors.push_back(impl + kFiberSuffix);
      }
    }
    const std::size_t n = competitors.size();
    if (std::find(competitors.begin(), competitors.end(), "default") != competitors.end()) {
      auto b = make_barrier("default", p, bo);
      res.default_algorithm.emplace_back(p, b->algorithm());
      res.default_reason.emplace_back(p, b->reason());
    }
    if (std::find(competitors.begin(), competitors.end(), std::string("default") + kFiberSuffix) != competitors.end()) {
      auto b = make_barrier("default", p, fiber_bo);
      res.fibers_default_algorithm.emplace_back(p, b->algorithm());
      res.fibers_default_reason.emplace_back(p, b->reason());
    }
    team.reset();
    if (o.threads == Threads::team) team = std::make_unique<ThreadTeam>(p);
    syncbench::Histogram warm_tail;
    for (const auto& impl : competitors) {
      if (progress) progress("warm-up " + impl + " p=" + std::to_string(p));
      (void)measure(impl, p, warm_prm, warm_tail);
    }
    std::vector<std::vector<double>> samples(n), medians(n);
    std::vector<syncbench::Histogram> tails(n);
    // Each round in its own order, a shuffle seeded by p and the round (the same every run): a
    // measurement inherits where the scheduler left the team's threads after the one before it
    // (oversubscribed, 3 + 1 threads on 2 CPUs instead of 2 + 2 for a while), so in a fixed
    // cyclic order each competitor would always pay for the same predecessor.
    std::vector<std::size_t> order(n);
    for (std::size_t k = 0; k < n; ++k) order[k] = k;
    for (int round = 0; round < res.rounds; ++round) {
      std::mt19937_64 rng(static_cast<std::uint64_t>(p) * 1000003U + static_cast<std::uint64_t>(round));
      for (std::size_t k = n; k > 1; --k) std::swap(order[k - 1], order[rng() % k]);
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = order[k];
        if (progress) {
          progress(competitors[i] + " p=" + std::to_string(p) + " round " + std::to_string(round + 1) + "/" +
                   std::to_string(res.rounds));
        }
        const std::vector<double> got = measure(competitors[i], p, round_prm, tails[i]);
        if (got.empty()) continue;
        medians[i].push_back(syncbench::median(got));
        samples[i].insert(samples[i].end(), got.begin(), got.end());
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (medians[i].empty()) continue;
      const syncbench::Stats all = syncbench::summarize(samples[i], 0);
      BarrierRow row{p, competitors[i], syncbench::median(medians[i]), all.mean_ns, all.sd_ns, medians[i]};
      if (tails[i].total > 0) {
        row.p50_ns = tails[i].quantile(0.5);
        row.p99_ns = tails[i].quantile(0.99);
        row.max_ns = tails[i].quantile(1.0);
      }
      res.rows.push_back(std::move(row));
    }
  }
  team.reset();
  res.load_after = sample_load();
  competitor.reset();  // the ping-pong below needs both CPUs to itself
  res.cross_cpu_after_ns = cross_cpu_one_way_ns();
  // Rows ordered by p, then by the order of the names, each fiber row after the thread rows.
  auto rank_of = [&](const std::string& impl) {
    const bool fiber = impl.ends_with(kFiberSuffix);
    const std::string base = fiber ? impl.substr(0, impl.size() - std::string_view(kFiberSuffix).size()) : impl;
    return (std::find(known.begin(), known.end(), base) - known.begin()) + (fiber ? 1000 : 0);
  };
  std::stable_sort(res.rows.begin(), res.rows.end(), [&](const BarrierRow& a, const BarrierRow& b) {
    return a.p != b.p ? a.p < b.p : rank_of(a.impl) < rank_of(b.impl);
  });
  // Each failing helper said so in every round: keep one copy of each note.
  std::vector<std::string> unique_notes;
  for (auto& note : res.notes)
    if (std::find(unique_notes.begin(), unique_notes.end(), note) == unique_notes.end()) unique_notes.push_back(note);
  res.notes = std::move(unique_notes);
  return res;
}

std::vector<BarrierRatio> barrier_ratios(const BarrierBenchResult& res, const std::vector<int>& ps) {
  const auto median_of = [&](int p, const std::string& impl) {
    for (const auto& r : res.rows)
      if (r.p == p && r.impl == impl) return r.median_ns;
    return std::nan("");
  };
  const auto& lib = barrier_names();
  std::vector<BarrierRatio> out;
  for (int p : ps) {
    const double def = median_of(p, "default");
    const BarrierRow* best = nullptr;
    for (const auto& r : res.rows) {
      const bool algorithm = r.impl != "default" && std::find(lib.begin(), lib.end(), r.impl) != lib.end();
      if (r.p == p && algorithm && (best == nullptr || r.median_ns < best->median_ns)) best = &r;
    }
    if (best != nullptr) out.push_back(BarrierRatio{p, "default", "best", def / best->median_ns, best->impl, 1.15});
    if (std::isfinite(median_of(p, "std"))) {
      out.push_back(BarrierRatio{p, "default", "std", def / median_of(p, "std"), "",
                                 p > res.allowed_cpus ? 1.0 : 0.0});
    }
    if (p == 2 && std::isfinite(median_of(p, "one-way"))) {
      out.push_back(BarrierRatio{p, "default", "one-way", def / median_of(p, "one-way"), "", 1.5});
      // What the machine allows: the two-flag floor against the same one-way figure.
      if (std::isfinite(median_of(p, "two-flag")))
        out.push_back(BarrierRatio{p, "two-flag", "one-way", median_of(p, "two-flag") / median_of(p, "one-way"), "", 0});
    }
    const double gomp = median_of(p, "omp-gomp"), llvm = median_of(p, "omp-llvm");
    const bool have_omp = std::isfinite(gomp) || std::isfinite(llvm);
    const double omp = std::isfinite(gomp) && std::isfinite(llvm) ? std::min(gomp, llvm) : std::isfinite(gomp) ? gomp : llvm;
    const std::string omp_name = omp == gomp ? "omp-gomp" : "omp-llvm";
    for (const char* mine : {"default@omp-gomp", "default@omp-llvm"}) {
      const double v = median_of(p, mine);
      if (have_omp && std::isfinite(v)) out.push_back(BarrierRatio{p, mine, "best-omp", v / omp, omp_name, p == 2 ? 0.8 : 0.0});
    }
    const std::string fib = std::string("default") + kFiberSuffix;
    const double f = median_of(p, fib);
    if (std::isfinite(f)) {
      for (const char* other : {"default", "std", "omp-gomp", "omp-llvm"})
        out.push_back(BarrierRatio{p, fib, other, f / median_of(p, other), "", 0.0});
    }
  }
  return out;
}

}  // namespace postbox::bench
