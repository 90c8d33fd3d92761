#include "barrier_bench.hpp"

#include <pthread.h>
#include <sys/wait.h>

#include <algorithm>
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
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "postbox/barrier/barrier.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::bench {
namespace {

// Runs the syncbench body on p threads (the caller as rank 0, p − 1 std::threads) and returns
// the overhead per barrier of each outer repetition.
template <class BarrierFn>
std::vector<double> run_threads(int p, const syncbench::Params& prm, BarrierFn&& barrier) {
  syncbench::Shared sh;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(p - 1));
  for (int r = 1; r < p; ++r) threads.emplace_back([&, r] { syncbench::body(r, sh, prm, barrier); });
  syncbench::body(0, sh, prm, barrier);
  for (auto& t : threads) t.join();
  return sh.per_barrier_ns;
}

// The same body with the p ranks as fibers of a Team (one worker per allowed CPU). The team is
// made here, outside the timed loops (the body times itself).
template <class BarrierFn>
std::vector<double> run_fibers(int p, const syncbench::Params& prm, BarrierFn&& barrier) {
  syncbench::Shared sh;
  TeamOptions o;
  o.ranks = RanksMode::fibers;
  o.mailbox.ring_bytes = 4096;  // the barrier sends no messages: the smallest rings
  Team team(p, o);
  team.run([&](RankContext& ctx) { syncbench::body(ctx.rank(), sh, prm, barrier); });
  return sh.per_barrier_ns;
}

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
                               const syncbench::Params& prm, std::vector<std::string>& notes) {
  std::ostringstream cmd_s;
  cmd_s << '\'' << exe.string() << "' --impl " << impl << " --p " << p << " --outer " << prm.outer << " --target-ns "
        << prm.target_ns;
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
      if (r.at("p").get<int>() == p) return r.at("samples_ns").get<std::vector<double>>();
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
    for (const char* x : {"std", "pthread", "omp-gomp", "omp-llvm"}) n.emplace_back(x);
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
  res.rounds = std::min(o.rounds, o.params.outer);
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
    if (impl == "omp-gomp" || impl == "omp-llvm") {
      const auto exe = helper_path(impl, o);
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
  const auto measure = [&](const std::string& impl, int p, const syncbench::Params& prm) -> std::vector<double> {
    if (auto h = helpers.find(impl); h != helpers.end()) return run_helper(h->second, impl, p, prm, res.notes);
    if (impl.ends_with(kFiberSuffix)) {
      auto b = make_barrier(impl.substr(0, impl.size() - std::string_view(kFiberSuffix).size()), p, fiber_bo);
      return run_fibers(p, prm, [&](int r) { b->arrive_and_wait(r); });
    }
    if (std::find(lib.begin(), lib.end(), impl) != lib.end()) {
      auto b = make_barrier(impl, p, bo);
      return run_threads(p, prm, [&](int r) { b->arrive_and_wait(r); });
    }
    if (impl == "std") {
      std::barrier<> b(p);
      return run_threads(p, prm, [&](int) { b.arrive_and_wait(); });
    }
    pthread_barrier_t b;
    PB_CHECK(::pthread_barrier_init(&b, nullptr, static_cast<unsigned>(p)) == 0, "pthread_barrier_init");
    auto out = run_threads(p, prm, [&](int) { (void)::pthread_barrier_wait(&b); });
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
    for (const auto& impl : competitors) {
      if (progress) progress("warm-up " + impl + " p=" + std::to_string(p));
      (void)measure(impl, p, warm_prm);
    }
    std::vector<std::vector<double>> samples(n), medians(n);
    for (int round = 0; round < res.rounds; ++round) {
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = (k + static_cast<std::size_t>(round)) % n;
        if (progress) {
          progress(competitors[i] + " p=" + std::to_string(p) + " round " + std::to_string(round + 1) + "/" +
                   std::to_string(res.rounds));
        }
        const std::vector<double> got = measure(competitors[i], p, round_prm);
        if (got.empty()) continue;
        medians[i].push_back(syncbench::median(got));
        samples[i].insert(samples[i].end(), got.begin(), got.end());
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (medians[i].empty()) continue;
      const syncbench::Stats all = syncbench::summarize(samples[i], 0);
      res.rows.push_back(BarrierRow{p, competitors[i], syncbench::median(medians[i]), all.mean_ns, all.sd_ns, medians[i]});
    }
  }
  res.load_after = sample_load();
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
  std::vector<BarrierRatio> out;
  for (int p : ps) {
    const double def = median_of(p, "default");
    if (p == 2) {
      const BarrierRow* best = nullptr;
      for (const auto& r : res.rows)
        if (r.p == p && (best == nullptr || r.median_ns < best->median_ns)) best = &r;
      out.push_back(BarrierRatio{p, "default", "best", best != nullptr ? def / best->median_ns : std::nan(""),
                                 best != nullptr ? best->impl : ""});
    } else if (p >= 4) {
      for (const char* other : {"std", "pthread", "omp-gomp", "omp-llvm"})
        out.push_back(BarrierRatio{p, "default", other, def / median_of(p, other), ""});
    }
    const std::string fib = std::string("default") + kFiberSuffix;
    const double f = median_of(p, fib);
    if (std::isfinite(f)) {
      for (const char* other : {"default", "std", "omp-gomp", "omp-llvm"})
        out.push_back(BarrierRatio{p, fib, other, f / median_of(p, other), ""});
    }
  }
  return out;
}

}  // namespace postbox::bench
