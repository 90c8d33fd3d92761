// postbox sweep: the emulator over a grid of parameters, in parallel (oneTBB).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cli.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/collectives/svg_plot.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/emulator/simulator.hpp"
#include "sim_common.hpp"

namespace postbox::cli {
namespace {

// One swept option: its values as the text the selection parses, so the label printed is the
// value simulated. p, bytes and seed take integers; alpha and lambda decimals.
struct Param {
  std::string name;
  std::vector<std::string> values;
};

constexpr std::int64_t kMaxValues = 100000;
constexpr std::size_t kMaxConfigurations = 1000000;

std::string bad_shape(const std::string& text) { return "--param must look like NAME=FROM:TO:STEP, got '" + text + "'"; }

Param parse_param(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) throw InputError(bad_shape(text));
  Param p;
  p.name = text.substr(0, eq);
  if (p.name != "alpha" && p.name != "bytes" && p.name != "p" && p.name != "lambda" && p.name != "seed")
    throw InputError("--param name must be alpha, bytes, p, lambda or seed, got '" + p.name + "'");
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
    if ((to - from) / step >= static_cast<std::uint64_t>(kMaxValues)) throw InputError(what + ": more than 100000 values");
    for (std::uint64_t i = 0; i <= (to - from) / step; ++i) p.values.push_back(std::to_string(from + i * step));
  } else if (p.name == "p" || p.name == "bytes") {
    const std::int64_t from = parse_int(part[0], what + " FROM"), to = parse_int(part[1], what + " TO");
    const std::int64_t step = parse_int(part[2], what + " STEP", 1);
    if (to < from) throw InputError(what + ": TO is below FROM");
    // Each value is checked by the selection (--p, --bytes) like a typed one.
    const std::uint64_t n = (static_cast<std::uint64_t>(to) - static_cast<std::uint64_t>(from)) / static_cast<std::uint64_t>(step);
    if (n >= static_cast<std::uint64_t>(kMaxValues)) throw InputError(what + ": more than 100000 values");
    for (std::uint64_t i = 0; i <= n; ++i) p.values.push_back(std::to_string(from + static_cast<std::int64_t>(i) * step));
  } else {
    const double from = parse_real(part[0], what + " FROM"), to = parse_real(part[1], what + " TO");
    const double step = parse_real(part[2], what + " STEP");
    if (!(step > 0)) throw InputError(what + ": STEP must be positive");
    if (to < from) throw InputError(what + ": TO is below FROM");
    const double n = std::floor((to - from) / step + 1e-9) + 1;
    if (!(n <= static_cast<double>(kMaxValues))) throw InputError(what + ": more than 100000 values");
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

struct SweepArgs {
  std::shared_ptr<TextOptions> options;
  std::vector<std::string> params;
  bool csv = false;
  bool json = false;
  std::string plot;
};

void run_sweep(const SweepArgs& a) {
  if (a.csv && a.json) throw InputError("--csv and --json exclude each other");
  if (a.params.empty()) throw InputError("sweep needs at least one --param NAME=FROM:TO:STEP");
  std::vector<Param> params;
  for (const auto& t : a.params) {
    params.push_back(parse_param(t));
    for (std::size_t k = 0; k + 1 < params.size(); ++k)
      if (params[k].name == params.back().name) throw InputError("--param " + params.back().name + " given twice");
  }
  const auto base = a.options->given();
  for (const auto& p : params)
    if (base.count(p.name) != 0) throw InputError("--" + p.name + " is swept by --param " + p.name + "; give one of them");
  std::size_t total = 1;
  for (const auto& p : params) {
    if (p.values.size() > kMaxConfigurations / total) throw InputError("sweep has more than 10^6 configurations");
    total *= p.values.size();
  }
  if (dry_run()) return;
  // Configuration i: mixed radix over params, the last varying fastest. Nothing is kept per
  // configuration but its time and events (16 bytes), so memory does not grow with the grid (it
  // held every configuration's selection, ~600 bytes each, before). Two passes: every
  // configuration is selected (validated) first, so bad input fails before any simulation
  // (the first bad one in grid order is reported), then selected again and simulated in its task.
  auto value = [&](std::size_t i, std::size_t k) -> const std::string& {
    for (std::size_t j = params.size(); --j > k;) i /= params[j].values.size();
    return params[k].values[i % params[k].values.size()];
  };
  auto select = [&](std::size_t i) {
    auto given = base;
    for (std::size_t k = 0; k < params.size(); ++k) given[params[k].name] = value(i, k);
    return select_emulated_run(given);
  };
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
  for_all([&](std::size_t i) { (void)select(i); });
  std::vector<double> time(total, 0.0);
  std::vector<std::uint64_t> events(total, 0);
  const bool tty = isatty(2) != 0;
  std::atomic<std::size_t> finished{0};
  std::mutex bar;
  for_all([&](std::size_t i) {
    const EmulatedRun run = select(i);
    const sim::SimResult r = sim::simulate(build_plan(run.request), run.machine);
    time[i] = r.time_us;
    events[i] = r.events;
    // relaxed: the counter only feeds the progress bar; results are read after parallel_for joins.
    const std::size_t done = finished.fetch_add(1, std::memory_order_relaxed) + 1;
    if (tty) {
      std::lock_guard<std::mutex> lock(bar);
      const int width = 40;
      const auto filled = static_cast<int>(static_cast<double>(done) / static_cast<double>(total) * width);
      std::fprintf(stderr, "\r[%s%s] %zu/%zu", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                   std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), done, total);
      if (done == total) std::fprintf(stderr, "\n");
    }
  });
  const PlanRequest first = select(0).request;

  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < total; ++i) {
      nlohmann::json row;
      for (std::size_t k = 0; k < params.size(); ++k) row[params[k].name] = nlohmann::json::parse(value(i, k));
      row["time_us"] = time[i];
      row["events"] = events[i];
      rows.push_back(row);
    }
    nlohmann::json j;
    j["machine"] = base.at("machine");
    j["op"] = first.op;
    j["algo"] = base.count("algo") != 0 ? base.at("algo") : emulated_run_defaults().at("algo");
    j["p"] = first.p;
    j["bytes"] = first.bytes;
    j["results"] = rows;
    print_json(j);
  } else {
    const char* sep = a.csv ? "," : " ";
    for (const auto& p : params) std::printf("%s%s", p.name.c_str(), sep);
    std::printf("time_us%sevents\n", sep);
    for (std::size_t i = 0; i < total; ++i) {
      for (std::size_t k = 0; k < params.size(); ++k) std::printf("%s%s", value(i, k).c_str(), sep);
      std::printf("%.6f%s%llu\n", time[i], sep, static_cast<unsigned long long>(events[i]));
    }
  }
  if (!a.plot.empty()) {
    svg::Plot plot;
    plot.title = first.op + "/" + (base.count("algo") != 0 ? base.at("algo") : "binomial") + " on " +
                 base.at("machine");
    plot.x_label = params[0].name;
    plot.y_label = "time (us)";
    // One series per combination of the other parameters.
    std::map<std::vector<std::string>, std::size_t> series_of;
    for (std::size_t i = 0; i < total; ++i) {
      std::vector<std::string> key;
      for (std::size_t k = 1; k < params.size(); ++k) key.push_back(value(i, k));
      auto [it, fresh] = series_of.emplace(key, plot.series.size());
      if (fresh) {
        svg::Series s;
        s.style = svg::Series::Style::line_points;
        for (std::size_t k = 1; k < params.size(); ++k)
          s.label += (k > 1 ? ", " : "") + params[k].name + "=" + key[k - 1];
        plot.series.push_back(s);
      }
      plot.series[it->second].x.push_back(std::stod(value(i, 0)));
      plot.series[it->second].y.push_back(time[i]);
    }
    plot.legend = params.size() > 1;
    svg::write(plot, a.plot);
  }
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* sub = app.add_subcommand(
      "sweep",
      "Run 'postbox sim' over a grid of parameters in parallel (oneTBB); a progress bar is shown when\n"
      "stderr is a terminal. Rows are printed in grid order (the last --param varies fastest).");
  args->options = std::make_shared<TextOptions>(sub, emulated_run_options(), emulated_run_defaults());
  sub->add_option("--param", args->params, "NAME=FROM:TO:STEP, NAME one of alpha, bytes, p, lambda, seed (repeatable)")
      ->required();
  sub->add_flag("--csv", args->csv, "Print CSV (header: the parameters, time_us, events)");
  sub->add_flag("--json", args->json, "Print JSON: machine, op, algo, p, bytes, results[{params..., time_us, events}]");
  sub->add_option("--plot", args->plot, "Write an SVG plot of time against the first --param");
  sub->callback([args] { run_sweep(*args); });
}

}  // namespace postbox::cli
