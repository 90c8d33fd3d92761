// The sweep's grid and parallel run (sweep.hpp).
#include "postbox/frontend/sweep.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "postbox/emulator/simulator.hpp"
#include "postbox/frontend/noise_parse.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"

namespace postbox {
namespace {

std::string bad_shape(const std::string& text) { return "--param must look like NAME=FROM:TO:STEP, got '" + text + "'"; }

// v with at most 12 decimals, trailing zeros dropped ("0.25", "3", never "-0").
std::string decimal_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12f", v);
  std::string t = buf;
  while (!t.empty() && t.back() == '0') t.pop_back();
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t == "-0" ? "0" : t;
}

}  // namespace

SweepParam parse_sweep_param(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) throw InputError(bad_shape(text));
  SweepParam p;
  p.name = text.substr(0, eq);
  if (p.name != "alpha" && p.name != "bytes" && p.name != "p" && p.name != "lambda" && p.name != "seed" &&
      p.name != "noise-gap" && p.name != "noise-detour")
    throw InputError("--param name must be alpha, bytes, p, lambda, seed, noise-gap or noise-detour, got '" + p.name + "'");
  const std::string range = text.substr(eq + 1);
  std::vector<std::string> part;
  for (std::string_view v : split_list(range, ':', "--param " + p.name)) part.emplace_back(v);
  if (part.size() != 3) throw InputError(bad_shape(text));
  const std::string what = "--param " + p.name;
  if (p.name == "seed") {
    const std::uint64_t from = parse_uint(part[0], what + " FROM"), to = parse_uint(part[1], what + " TO");
    const std::uint64_t step = parse_uint(part[2], what + " STEP");
    if (step == 0) throw InputError(what + ": STEP must be positive");
    if (to < from) throw InputError(what + ": TO is below FROM");
    if ((to - from) / step >= static_cast<std::uint64_t>(kMaxSweepValues)) throw InputError(what + ": more than 100000 values");
    for (std::uint64_t i = 0; i <= (to - from) / step; ++i) p.values.push_back(std::to_string(from + i * step));
  } else if (p.name == "p" || p.name == "bytes") {
    const std::int64_t from = parse_int(part[0], what + " FROM"), to = parse_int(part[1], what + " TO");
    const std::int64_t step = parse_int(part[2], what + " STEP", 1);
    if (to < from) throw InputError(what + ": TO is below FROM");
    // Each value is checked by the selection (--p, --bytes) like a typed one.
    const std::uint64_t n = (static_cast<std::uint64_t>(to) - static_cast<std::uint64_t>(from)) / static_cast<std::uint64_t>(step);
    if (n >= static_cast<std::uint64_t>(kMaxSweepValues)) throw InputError(what + ": more than 100000 values");
    for (std::uint64_t i = 0; i <= n; ++i) p.values.push_back(std::to_string(from + static_cast<std::int64_t>(i) * step));
  } else {
    const double from = parse_real(part[0], what + " FROM"), to = parse_real(part[1], what + " TO");
    const double step = parse_real(part[2], what + " STEP");
    if (!(step > 0)) throw InputError(what + ": STEP must be positive");
    if (to < from) throw InputError(what + ": TO is below FROM");
    const double n = std::floor((to - from) / step + 1e-9) + 1;
    if (!(n <= static_cast<double>(kMaxSweepValues))) throw InputError(what + ": more than 100000 values");
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
      const double v = from + static_cast<double>(i) * step;
      std::string t = decimal_text(v);
      // A value the 12-decimal text would change (1e-300 -> 0) is refused, not silently rounded.
      if (std::fabs(std::strtod(t.c_str(), nullptr) - v) > 1e-9 * std::fabs(v)) {
        char typed[32];
        std::snprintf(typed, sizeof typed, "%.17g", v);
        throw InputError(what + ": value " + typed + " needs more than 12 decimals");
      }
      p.values.push_back(std::move(t));
    }
  }
  return p;
}

std::size_t SweepGrid::size() const {
  std::size_t total = 1;
  for (const SweepParam& p : params) total *= p.values.size();
  return total;
}

const std::string& SweepGrid::value(std::size_t i, std::size_t k) const {
  for (std::size_t j = params.size(); --j > k;) i /= params[j].values.size();
  return params[k].values[i % params[k].values.size()];
}

std::map<std::string, std::string> SweepGrid::given(std::size_t i) const {
  auto out = base;
  for (std::size_t k = 0; k < params.size(); ++k) out[params[k].name] = value(i, k);
  return out;
}

SweepGrid sweep_grid(const std::map<std::string, std::string>& base, const std::vector<std::string>& param_texts) {
  if (param_texts.empty()) throw InputError("sweep needs at least one --param NAME=FROM:TO:STEP");
  SweepGrid grid;
  grid.base = base;
  for (const auto& t : param_texts) {
    grid.params.push_back(parse_sweep_param(t));
    for (std::size_t k = 0; k + 1 < grid.params.size(); ++k)
      if (grid.params[k].name == grid.params.back().name)
        throw InputError("--param " + grid.params.back().name + " given twice");
  }
  for (const auto& p : grid.params)
    if (base.count(p.name) != 0) throw InputError("--" + p.name + " is swept by --param " + p.name + "; give one of them");
  std::size_t total = 1;
  for (const auto& p : grid.params) {
    if (p.values.size() > kMaxSweepConfigurations / total) throw InputError("sweep has more than 10^6 configurations");
    total *= p.values.size();
  }
  return grid;
}

SweepResult run_sweep(const SweepGrid& grid, const std::function<void(std::size_t, std::size_t)>& progress) {
  const std::size_t total = grid.size();
  // Runs body(i) for every i in parallel; an InputError stops the remaining work and the one of
  // the lowest configuration is rethrown (the lowest bad i is always met: only work above a
  // known bad one is skipped).
  auto for_all = [&](auto&& body) {
    std::atomic<std::size_t> first_bad{total};
    std::mutex m;
    std::string message;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, total), [&](const tbb::blocked_range<std::size_t>& range) {
      for (std::size_t i = range.begin(); i != range.end(); ++i) {
        // relaxed: only prunes work above a known bad configuration; the lock orders the rest.
        if (i > first_bad.load(std::memory_order_relaxed)) return;
        try {
          body(i);
        } catch (const InputError& e) {
          std::lock_guard<std::mutex> lock(m);
          if (i < first_bad.load(std::memory_order_relaxed)) {
            first_bad.store(i, std::memory_order_relaxed);
            message = frontend::error_line(e);
          }
          return;
        }
      }
    });
    if (first_bad.load(std::memory_order_relaxed) < total) throw InputError(message);
  };
  for_all([&](std::size_t i) {
    auto given = grid.given(i);
    (void)sim::take_noise_options(given);
    (void)select_emulated_run(given);
  });
  SweepResult out;
  out.time_us.assign(total, 0.0);
  out.events.assign(total, 0);
  std::size_t finished = 0;  // under `report`, so that progress sees 1, 2, ... in order
  std::mutex report;
  for_all([&](std::size_t i) {
    auto given = grid.given(i);
    const std::optional<sim::Noise> noise = sim::take_noise_options(given);
    const EmulatedRun run = select_emulated_run(given);
    sim::SimOptions opt;
    if (noise) opt.noise = &*noise;
    const sim::SimResult r = sim::simulate(build_plan(run.request), run.machine, opt);
    out.time_us[i] = r.time_us;
    out.events[i] = r.events;
    // Counted under the lock: a count taken before it could reach progress after a later one.
    if (progress) {
      std::lock_guard<std::mutex> lock(report);
      progress(++finished, total);
    }
  });
  auto first = grid.given(0);
  (void)sim::take_noise_options(first);
  out.first = select_emulated_run(first).request;
  return out;
}

}  // namespace postbox
