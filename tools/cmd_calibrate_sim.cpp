// postbox calibrate --machine M: Bruck et al.'s two λ experiments (§2.2) run inside the emulator.
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/emulator/calibrate.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/frontend/svg_plot.hpp"

namespace postbox::cli {

int calibrate_emulated(const std::string& machine, const std::string& size_list, bool json, bool csv,
                       const std::string& plot) {
  if (json && csv) throw InputError("--json and --csv exclude each other");
  std::vector<std::int64_t> sizes;
  for (std::string_view t : split_list(size_list, ',', "--sizes")) sizes.push_back(parse_int(t, "--sizes", 0, kMaxPlanBytes));
  const sim::Machine m = sim::load_machine(machine);
  if (dry_run()) return 0;
  // k from 2 to 12 as far as the machine allows (k + 1 nodes; the experiments need k ≥ 2 points).
  int k_max = 12;
  if (m.kind == sim::ModelKind::mesh) k_max = static_cast<int>(std::min<std::int64_t>(12, m.mesh.nodes() - 1));
  if (k_max < 3) throw InputError("machine '" + machine + "' has too few nodes for Bruck's experiments");
  nlohmann::json rows = nlohmann::json::array();
  svg::Series s1, s2;
  s1.label = "experiment 1";
  s2.label = "experiment 2";
  s1.style = s2.style = svg::Series::Style::line_points;
  if (csv) std::printf("bytes,t0_exp1_us,lambda_exp1,t0_exp2_us,lambda_exp2\n");
  else if (!json) std::printf("%10s %12s %10s %12s %10s %10s\n", "bytes", "t0_exp1_us", "lambda_1", "t0_exp2_us", "lambda_2", "model");
  for (auto b : sizes) {
    const auto fit = sim::measure_lambda(m, static_cast<std::uint64_t>(b), 2, k_max);
    const double nominal = sim::nominal_lambda(m, static_cast<std::uint64_t>(b));
    s1.x.push_back(static_cast<double>(b));
    s1.y.push_back(fit.lambda_exp1);
    s2.x.push_back(static_cast<double>(b));
    s2.y.push_back(fit.lambda_exp2);
    if (csv) {
      std::printf("%lld,%.4f,%.4f,%.4f,%.4f\n", static_cast<long long>(b), fit.t0_exp1_us, fit.lambda_exp1,
                  fit.t0_exp2_us, fit.lambda_exp2);
    } else if (json) {
      nlohmann::json r;
      r["bytes"] = b;
      r["t0_exp1_us"] = fit.t0_exp1_us;
      r["lambda_exp1"] = fit.lambda_exp1;
      r["t0_exp2_us"] = fit.t0_exp2_us;
      r["lambda_exp2"] = fit.lambda_exp2;
      r["max_residual_us"] = fit.max_residual_us;
      if (nominal > 0) r["model_lambda"] = nominal;
      rows.push_back(r);
    } else {
      std::printf("%10lld %12.4f %10.4f %12.4f %10.4f %10s\n", static_cast<long long>(b), fit.t0_exp1_us, fit.lambda_exp1,
                  fit.t0_exp2_us, fit.lambda_exp2, nominal > 0 ? std::to_string(nominal).substr(0, 6).c_str() : "-");
    }
  }
  if (!plot.empty()) {
    svg::Plot pl;
    pl.title = "lambda against message size on " + machine + " (Bruck's two experiments)";
    pl.x_label = "message size (bytes)";
    pl.y_label = "lambda";
    pl.series = {s1, s2};
    svg::write(pl, plot);
  }
  if (json) {
    nlohmann::json j;
    j["machine"] = machine;
    j["k"] = {2, k_max};
    j["sizes"] = rows;
    print_json(j);
  }
  return 0;
}

}  // namespace postbox::cli
