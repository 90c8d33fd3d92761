#include "barrier_bench.hpp"

#include <pthread.h>
#include <sys/wait.h>

#include <barrier>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "postbox/barrier/barrier.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::bench {
namespace {

// Runs the syncbench body on p threads: the caller as rank 0, p − 1 std::threads.
template <class BarrierFn>
syncbench::Stats run_threads(int p, const syncbench::Params& prm, BarrierFn&& barrier) {
  syncbench::Shared sh;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(p - 1));
  for (int r = 1; r < p; ++r) threads.emplace_back([&, r] { syncbench::body(r, sh, prm, barrier); });
  syncbench::body(0, sh, prm, barrier);
  for (auto& t : threads) t.join();
  return syncbench::summarize(sh.per_barrier_ns, sh.inner_used);
}

std::string join_ps(const std::vector<int>& ps) {
  std::ostringstream s;
  for (std::size_t i = 0; i < ps.size(); ++i) s << (i == 0 ? "" : ",") << ps[i];
  return s.str();
}

// Runs a helper executable and parses its rows; a note instead when it cannot.
void run_helper(const std::string& impl, const BarrierBenchOptions& o, BarrierBenchResult& res) {
  std::filesystem::path dir = o.helper_dir;
  if (dir.empty()) {
    std::error_code ec;
    dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  }
  const auto exe = dir / ("postbox-" + impl);
  std::error_code ec;
  if (!std::filesystem::exists(exe, ec)) {
    res.notes.push_back(impl + ": helper " + exe.string() + " not found (not built here); no rows");
    return;
  }
  std::ostringstream cmd_s;
  cmd_s << '\'' << exe.string() << "' --impl " << impl << " --p " << join_ps(o.ps) << " --outer " << o.params.outer
        << " --target-ns " << o.params.target_ns;
  const std::string cmd = cmd_s.str();
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) {
    res.notes.push_back(impl + ": cannot start " + exe.string());
    return;
  }
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const int status = ::pclose(f);
  if (status != 0) {
    res.notes.push_back(impl + ": helper failed (status " + std::to_string(status) + "); no rows");
    return;
  }
  try {
    const auto j = nlohmann::json::parse(out);
    for (const auto& r : j.at("rows")) {
      res.rows.push_back(BarrierRow{r.at("p").get<int>(), r.at("impl").get<std::string>(), r.at("median_ns").get<double>(),
                                    r.at("mean_ns").get<double>(), r.at("sd_ns").get<double>()});
    }
  } catch (const nlohmann::json::exception& e) {
    res.notes.push_back(impl + ": cannot parse the helper's output (" + std::string(e.what()) + ")");
  }
}

BarrierRow row_of(int p, const std::string& impl, const syncbench::Stats& s) {
  return BarrierRow{p, impl, s.median_ns, s.mean_ns, s.sd_ns};
}

}  // namespace

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
  const auto& known = barrier_impl_names();
  std::vector<std::string> impls = o.impls.empty() ? known : o.impls;
  for (const auto& i : impls)
    if (std::find(known.begin(), known.end(), i) == known.end()) throw InputError("unknown barrier '" + i + "'");

  BarrierBenchResult res;
  res.calibration = calibrated_latency();
  // send_recv left empty: default, fibo and combine take calibrated_latency() themselves, the
  // same figures rounded to whole nanoseconds, and their reason() says where from.
  BarrierOptions bo;
  const auto& lib = barrier_names();
  for (const auto& impl : impls) {
    if (impl == "omp-gomp" || impl == "omp-llvm") {
      if (progress) progress(impl + " (child process)");
      run_helper(impl, o, res);
      continue;
    }
    for (int p : o.ps) {
      if (progress) progress(impl + " p=" + std::to_string(p));
      if (std::find(lib.begin(), lib.end(), impl) != lib.end()) {
        auto b = make_barrier(impl, p, bo);
        if (impl == "default") {
          res.default_algorithm.emplace_back(p, b->algorithm());
          res.default_reason.emplace_back(p, b->reason());
        }
        res.rows.push_back(row_of(p, impl, run_threads(p, o.params, [&](int r) { b->arrive_and_wait(r); })));
      } else if (impl == "std") {
        std::barrier<> b(p);
        res.rows.push_back(row_of(p, impl, run_threads(p, o.params, [&](int) { b.arrive_and_wait(); })));
      } else if (impl == "pthread") {
        pthread_barrier_t b;
        PB_CHECK(::pthread_barrier_init(&b, nullptr, static_cast<unsigned>(p)) == 0, "pthread_barrier_init");
        res.rows.push_back(row_of(p, impl, run_threads(p, o.params, [&](int) { (void)::pthread_barrier_wait(&b); })));
        ::pthread_barrier_destroy(&b);
      }
    }
  }
  // Rows ordered by p, then by the order of the names.
  auto rank_of = [&](const std::string& impl) {
    return std::find(known.begin(), known.end(), impl) - known.begin();
  };
  std::stable_sort(res.rows.begin(), res.rows.end(), [&](const BarrierRow& a, const BarrierRow& b) {
    return a.p != b.p ? a.p < b.p : rank_of(a.impl) < rank_of(b.impl);
  });
  return res;
}

}  // namespace postbox::bench
