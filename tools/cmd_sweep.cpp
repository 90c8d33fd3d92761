// postbox sweep: the emulator over a grid of parameters, in parallel (oneTBB).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli.hpp"
#include "progress.hpp"
#include "postbox/frontend/sweep.hpp"
#include "postbox/frontend/svg_plot.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/emulator/simulator.hpp"
#include "sim_common.hpp"

namespace postbox::cli {
namespace {

struct SweepArgs {
  std::shared_ptr<TextOptions> options;
  std::vector<std::string> params;
  bool csv = false;
  bool json = false;
  std::string plot;
  std::string noise;
  bool noise_cosched = false;
};

void print_sweep(const SweepArgs& a) {
  if (a.csv && a.json) throw InputError("--csv and --json exclude each other");
  auto given = a.options->given();
  if (!a.noise.empty()) given["noise"] = a.noise;
  if (a.noise_cosched) given["noise-cosched"] = "yes";
  const SweepGrid grid = sweep_grid(given, a.params);
  if (dry_run()) return;
  const auto& base = grid.base;
  const auto& params = grid.params;
  const std::size_t total = grid.size();
  auto value = [&](std::size_t i, std::size_t k) -> const std::string& { return grid.value(i, k); };
  SweepResult result;
  {
    TerminalProgress progress(stderr_is_terminal());
    result = run_sweep(grid, [&](std::size_t done, std::size_t all) { progress.update("sweep", done, all); });
  }
  const std::vector<double>& time = result.time_us;
  const std::vector<std::uint64_t>& events = result.events;
  const PlanRequest& first = result.first;

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
    if (!a.noise.empty()) {
      j["noise"] = a.noise;
      j["noise_cosched"] = a.noise_cosched;
    }
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
      "Run 'postbox sim' over a grid of parameters in parallel (oneTBB); when stderr is a terminal and\n"
      "the sweep takes over 2 s, a progress line shows it there (erased at the end). Rows are printed in\n"
      "grid order (the last --param varies fastest).");
  args->options = std::make_shared<TextOptions>(sub, emulated_run_options(), emulated_run_defaults());
  sub->add_option("--param", args->params,
                  "NAME=FROM:TO:STEP, NAME one of alpha, bytes, p, lambda, seed, noise-gap, noise-detour (repeatable;\n"
                  "noise-gap and noise-detour replace the first and second number of --noise: periodic's PERIOD and\n"
                  "DETOUR, exp's and pareto's MEAN_GAP and detour)")
      ->required();
  sub->add_option("--noise", args->noise,
                  "OS noise in every run, as sim --noise (periodic:PERIOD:DETOUR, exp:MEAN_GAP:MEAN_DETOUR,\n"
                  "pareto:MEAN_GAP:MIN_DETOUR:ALPHA; docs/emulator.md, \"Noise\"), seeded by --seed or --param seed")
      ->type_name("SPEC");
  sub->add_flag("--noise-cosched", args->noise_cosched, "Co-scheduled noise: every rank's offset 0, as sim --noise-cosched");
  sub->add_flag("--csv", args->csv, "Print CSV (header: the parameters, time_us, events)");
  sub->add_flag("--json", args->json,
                "Print JSON: machine, op, algo, p, bytes, results[{params..., time_us, events}]; with --noise also\n"
                "noise and noise_cosched");
  sub->add_option("--plot", args->plot, "Write an SVG plot of time against the first --param");
  sub->callback([args] { print_sweep(*args); });
}

}  // namespace postbox::cli
