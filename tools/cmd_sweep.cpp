// postbox sweep: the emulator over a grid of parameters, in parallel (oneTBB).
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cli.hpp"
#include "postbox/collectives/svg_plot.hpp"
#include "postbox/runtime/check.hpp"
#include "sim_common.hpp"

namespace postbox::cli {
namespace {

struct Param {
  std::string name;
  std::vector<double> values;
};

Param parse_param(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) throw InputError("--param must look like NAME=FROM:TO:STEP, got '" + text + "'");
  Param p;
  p.name = text.substr(0, eq);
  if (p.name != "alpha" && p.name != "bytes" && p.name != "p" && p.name != "lambda" && p.name != "seed")
    throw InputError("--param name must be alpha, bytes, p, lambda or seed, got '" + p.name + "'");
  double v[3];
  std::size_t start = eq + 1;
  for (int i = 0; i < 3; ++i) {
    const auto colon = text.find(':', start);
    const std::string part = text.substr(start, i < 2 ? colon - start : std::string::npos);
    if ((i < 2 && colon == std::string::npos) || part.empty())
      throw InputError("--param must look like NAME=FROM:TO:STEP, got '" + text + "'");
    char* end = nullptr;
    v[i] = std::strtod(part.c_str(), &end);
    if (end != part.c_str() + part.size() || !std::isfinite(v[i]))
      throw InputError("--param " + p.name + ": '" + part + "' is not a number");
    start = colon + 1;
  }
  if (!(v[2] > 0)) throw InputError("--param " + p.name + ": STEP must be positive");
  if (v[1] < v[0]) throw InputError("--param " + p.name + ": TO is below FROM");
  const auto n = static_cast<long long>(std::floor((v[1] - v[0]) / v[2] + 1e-9)) + 1;
  if (n > 100000) throw InputError("--param " + p.name + ": more than 100000 values");
  for (long long i = 0; i < n; ++i) p.values.push_back(v[0] + static_cast<double>(i) * v[2]);
  return p;
}

struct SweepArgs {
  SimSpec base;
  std::string p_text = "2";
  std::vector<std::string> params;
  bool csv = false;
  bool json = false;
  std::string plot;
};

void apply(SimSpec& s, const std::string& name, double v) {
  if (name == "alpha") s.alpha = v;
  else if (name == "lambda") s.lambda = v;
  else if (name == "bytes") s.bytes = std::llround(v);
  else if (name == "p") s.p = static_cast<int>(std::llround(v));
  else s.seed = static_cast<std::uint64_t>(std::llround(v));
}

void run_sweep(const SweepArgs& a) {
  if (a.csv && a.json) throw InputError("--csv and --json exclude each other");
  if (a.params.empty()) throw InputError("sweep needs at least one --param NAME=FROM:TO:STEP");
  std::vector<Param> params;
  for (const auto& t : a.params) params.push_back(parse_param(t));
  SimSpec base = a.base;
  base.p = parse_positive("p", a.p_text);
  std::size_t total = 1;
  for (const auto& p : params) total *= p.values.size();
  if (total > 1000000) throw InputError("sweep has more than 10^6 configurations");
  // Configuration i: mixed radix over params, the last varying fastest.
  std::vector<SimSpec> specs(total, base);
  std::vector<std::vector<double>> vals(total);
  for (std::size_t i = 0; i < total; ++i) {
    std::size_t rest = i;
    vals[i].resize(params.size());
    for (std::size_t k = params.size(); k-- > 0;) {
      vals[i][k] = params[k].values[rest % params[k].values.size()];
      rest /= params[k].values.size();
      apply(specs[i], params[k].name, vals[i][k]);
    }
  }
  // Validate every configuration up front so bad input fails before any work (exit 2).
  std::vector<sim::Machine> machines;
  machines.reserve(total);
  for (auto& s : specs) {
    if (s.p < 1) throw InputError("--param p must be at least 1");
    if (s.bytes < 0) throw InputError("--param bytes must not be negative");
    machines.push_back(resolve_machine(s));
  }
  std::vector<double> time(total, 0.0);
  std::vector<std::uint64_t> events(total, 0);
  std::vector<std::string> error(total);
  const bool tty = isatty(2) != 0;
  std::atomic<std::size_t> finished{0};
  std::mutex bar;
  tbb::parallel_for(std::size_t{0}, total, [&](std::size_t i) {
    try {
      const Plan plan = make_sim_plan(specs[i], machines[i]);
      const sim::SimResult r = sim::simulate(plan, machines[i]);
      time[i] = r.time_us;
      events[i] = r.events;
    } catch (const InputError& e) {
      error[i] = e.what();
    }
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
  for (std::size_t i = 0; i < total; ++i)
    if (!error[i].empty()) throw InputError(error[i]);

  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < total; ++i) {
      nlohmann::json row;
      for (std::size_t k = 0; k < params.size(); ++k) row[params[k].name] = vals[i][k];
      row["time_us"] = time[i];
      row["events"] = events[i];
      rows.push_back(row);
    }
    nlohmann::json j;
    j["machine"] = base.machine;
    j["op"] = base.op;
    j["algo"] = base.algo;
    j["p"] = base.p;
    j["bytes"] = base.bytes;
    j["results"] = rows;
    print_json(j);
  } else {
    const char* sep = a.csv ? "," : " ";
    for (const auto& p : params) std::printf("%s%s", p.name.c_str(), sep);
    std::printf("time_us%sevents\n", sep);
    for (std::size_t i = 0; i < total; ++i) {
      for (double v : vals[i]) std::printf("%g%s", v, sep);
      std::printf("%.6f%s%llu\n", time[i], sep, static_cast<unsigned long long>(events[i]));
    }
  }
  if (!a.plot.empty()) {
    svg::Plot plot;
    plot.title = base.op + "/" + base.algo + " on " + base.machine;
    plot.x_label = params[0].name;
    plot.y_label = "time (us)";
    // One series per combination of the other parameters.
    std::map<std::vector<double>, std::size_t> series_of;
    for (std::size_t i = 0; i < total; ++i) {
      std::vector<double> key(vals[i].begin() + 1, vals[i].end());
      auto [it, fresh] = series_of.emplace(key, plot.series.size());
      if (fresh) {
        svg::Series s;
        s.style = svg::Series::Style::line_points;
        for (std::size_t k = 1; k < params.size(); ++k)
          s.label += (k > 1 ? ", " : "") + params[k].name + "=" + std::to_string(key[k - 1]);
        plot.series.push_back(s);
      }
      plot.series[it->second].x.push_back(vals[i][0]);
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
  sub->add_option("--machine", args->base.machine, "Machine: model string, profile name or profile file")->required();
  sub->add_option("--op", args->base.op, "Operation")->capture_default_str();
  sub->add_option("--algo", args->base.algo, "Algorithm")->capture_default_str();
  sub->add_option("--p", args->p_text, "Number of ranks (unless swept)")->capture_default_str();
  sub->add_option("--bytes", args->base.bytes, "Message size in bytes (unless swept)")->capture_default_str();
  sub->add_option("--lambda", args->base.lambda, "λ the plan is built for (unless swept)");
  sub->add_option("--mesh", args->base.mesh, "Mesh (sub)partition RxC");
  sub->add_option("--placement", args->base.placement, "Rank placement: row-major, snake, random, list:...");
  sub->add_option("--seed", args->base.seed, "Seed of the random placement (unless swept)")->capture_default_str();
  sub->add_option("--param", args->params, "NAME=FROM:TO:STEP, NAME one of alpha, bytes, p, lambda, seed (repeatable)")
      ->required();
  sub->add_flag("--csv", args->csv, "Print CSV (header: the parameters, time_us, events)");
  sub->add_flag("--json", args->json, "Print JSON: machine, op, algo, p, bytes, results[{params..., time_us, events}]");
  sub->add_option("--plot", args->plot, "Write an SVG plot of time against the first --param");
  sub->callback([args] { run_sweep(*args); });
}

}  // namespace postbox::cli
