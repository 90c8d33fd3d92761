// postbox model: the postal-model arithmetic of Bruck et al. and the send/receive model of
// Cordsen et al. (collectives/include/postbox/collectives/postal.hpp), as tables or JSON.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "postbox/frontend/model_report.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/frontend/svg_plot.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"

namespace postbox::cli {
namespace {

// "1.8 (9/5)" or "2".
std::string show(const Rational& r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", r.to_double());
  return r.is_integer() ? r.str() : std::string(buf) + " (" + r.str() + ")";
}

// ---- model postal --------------------------------------------------------------------------

struct PostalArgs {
  std::string lambda, n;
  bool json = false;
};

void run_postal(const PostalArgs& a) {
  const PostalSelection selection = select_postal(a.lambda, a.n);
  if (dry_run()) return;
  const PostalReport rep = postal_report(selection);
  const Rational& lambda = rep.lambda;
  const int n = rep.n;
  const Rational& T = rep.T;
  const double gamma = rep.gamma;
  const auto& steps = rep.steps;
  const std::optional<AlphaRange>& range = rep.range;
  if (a.json) {
    nlohmann::json j;
    j["lambda"] = lambda.to_double();
    j["n"] = n;
    j["T"] = T.to_double();
    j["T_exact"] = T.str();
    j["gamma"] = gamma;
    // n = 1 needs no split: there is no α to choose.
    j["alpha_min"] = range ? nlohmann::json(range->alpha_min().to_double()) : nlohmann::json(nullptr);
    j["alpha_max"] = range ? nlohmann::json(range->alpha_max().to_double()) : nlohmann::json(nullptr);
    nlohmann::json N = nlohmann::json::array(), times = nlohmann::json::array();
    for (const NStep& s : steps) {
      N.push_back(s.N);
      times.push_back(s.t.to_double());
    }
    j["N"] = N;
    j["N_times"] = times;
    print_json(j);
    return;
  }
  const PostalScale& sc = rep.scale;
  std::printf("postal model, lambda = %s, n = %d\n", show(lambda).c_str(), n);
  std::printf("  T_lambda(n)           %s\n", show(T).c_str());
  std::printf("  gamma(lambda)         %.6f   (N_lambda(t) ~ gamma^t)\n", gamma);
  std::printf("  time scale (Bruck 2.5) lcm(1, lambda) = %lld, f = %lld: N changes only at multiples of 1/%lld\n",
              static_cast<long long>(sc.u), static_cast<long long>(sc.f), static_cast<long long>(sc.f));
  if (range) {
    std::printf("  optimal splits        n' = %lld .. %lld of %d  (alpha in [%.6f, %.6f])\n",
                static_cast<long long>(range->n_min), static_cast<long long>(range->n_max), n,
                range->alpha_min().to_double(), range->alpha_max().to_double());
  } else {
    std::printf("  optimal splits        none needed (n = 1)\n");
  }
  std::printf("\n  %12s  %20s\n  %12s  %20s\n", "t", "N_lambda(t)", "------------", "--------------------");
  for (const NStep& s : steps) std::printf("  %12s  %20lld\n", s.t.str().c_str(), static_cast<long long>(s.N));
}

// ---- model breakeven ------------------------------------------------------------------------

struct BreakevenArgs {
  std::string max_floor = "9";
  bool json = false;
};

void run_breakeven(const BreakevenArgs& a) {
  const int k_max = select_breakeven(a.max_floor);
  if (dry_run()) return;
  nlohmann::json rows = nlohmann::json::array();
  if (!a.json) {
    std::printf("Delay-receive vs delay-send global combine (Bruck et al. 3.2-3.3, Tables 1-2)\n");
    std::printf("delay-send is faster for floor(lambda) < lambda < break-even\n\n");
    std::printf("  %5s  %10s  %10s  %10s\n  %5s  %10s  %10s  %10s\n", "floor", "gamma", "break-even", "minus floor",
                "-----", "----------", "----------", "-----------");
  }
  for (const BreakevenRow& row : breakeven_report(k_max)) {
    const int k = row.floor_lambda;
    const double g = row.gamma, b = row.break_even;
    if (a.json) {
      rows.push_back({{"floor", k}, {"gamma", g}, {"break_even", b}});
    } else {
      std::printf("  %5d  %10.4f  %10.4f  %10.4f\n", k, g, b, b - k);
    }
  }
  if (a.json) print_json({{"rows", rows}});
}

// ---- model fibo -------------------------------------------------------------------------------

struct FiboArgs {
  std::string s, r;
  std::optional<std::string> p, t;
  bool json = false;
};

void run_fibo(const FiboArgs& a) {
  const FiboSelection selection = select_fibo(a.s, a.r, a.p, a.t);
  if (dry_run()) return;
  const FiboReport rep = fibo_report(selection);
  const Rational& s = rep.s;
  const Rational& r = rep.r;
  const auto& f = rep.f;
  const std::int64_t steps = rep.steps;
  const Rational& exact = rep.time;
  const int p = rep.p.value_or(0);
  if (a.json) {
    nlohmann::json j;
    j["s"] = s.to_double();
    j["r"] = r.to_double();
    j["f"] = f;
    if (steps >= 0) {
      j["p"] = p;
      j["steps"] = steps;
      j["T_exact"] = exact.str();
    }
    print_json(j);
    return;
  }
  const Rational lambda = fibo_lambda(selection);
  std::printf("send/receive model (Cordsen et al. eq. 2), s = %s, r = %s (lambda = 1 + r/s = %s)\n", show(s).c_str(),
              show(r).c_str(), show(lambda).c_str());
  std::printf("f(t) = 1 for 0 <= t < s + r, f(t - s) + f(t - s - r) after\n\n");
  std::printf("  %8s  %20s\n  %8s  %20s\n", "t", "f(t)", "--------", "--------------------");
  for (std::size_t t = 0; t < f.size(); ++t) std::printf("  %8zu  %20lld\n", t, static_cast<long long>(f[t]));
  if (steps >= 0) {
    std::printf("\n%d processes are notified by step %lld (exactly at t = %s)\n", p, static_cast<long long>(steps),
                exact.str().c_str());
  }
}

// ---- model alpha-ranges --------------------------------------------------------------------------

struct AlphaArgs {
  std::string lambda, n_max, svg;
  bool json = false;
};

void run_alpha(const AlphaArgs& a) {
  const AlphaRangesSelection selection = select_alpha_ranges(a.lambda, a.n_max);
  if (dry_run()) return;
  const AlphaRangesReport rep = alpha_ranges_report(selection);
  const Rational& lambda = rep.lambda;
  const auto& ranges = rep.ranges;
  const auto& table = rep.table;
  if (!a.svg.empty()) {
    svg::Plot plot;
    plot.title = "Optimal alpha ranges, lambda = " + lambda.str() + " (Bruck et al. Figs. 6-7)";
    plot.x_label = "alpha";
    plot.y_label = "number of nodes n";
    plot.x_min = 0.0;
    plot.x_max = 1.0;
    svg::Series lo{"n_min / n", {}, {}, svg::Series::Style::line_points, "#1f77b4", 1.2};
    svg::Series hi{"n_max / n", {}, {}, svg::Series::Style::line_points, "#d62728", 1.2};
    for (const AlphaRange& r : ranges) {
      lo.x.push_back(r.alpha_min().to_double());
      lo.y.push_back(static_cast<double>(r.n));
      hi.x.push_back(r.alpha_max().to_double());
      hi.y.push_back(static_cast<double>(r.n));
    }
    svg::Series tops{"triangle tops", {}, {}, svg::Series::Style::points, "#2ca02c", 3.0};
    for (const TriangleTop& t : rep.tops) {
      tops.x.push_back(t.alpha().to_double());
      tops.y.push_back(static_cast<double>(t.n));
    }
    plot.series = {lo, hi, tops};
    svg::write(plot, a.svg);
  }
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const AlphaRange& r : ranges) {
      rows.push_back({{"n", r.n},
                      {"n_min", r.n_min},
                      {"n_max", r.n_max},
                      {"alpha_min", r.alpha_min().to_double()},
                      {"alpha_max", r.alpha_max().to_double()}});
    }
    nlohmann::json lut = nlohmann::json::array();
    for (const AlphaTableEntry& e : table) {
      lut.push_back({{"n_upper", e.n_upper}, {"alpha", e.alpha.to_double()}, {"alpha_exact", e.alpha.str()}});
    }
    print_json({{"lambda", lambda.to_double()}, {"ranges", rows}, {"lookup_table", lut}});
    return;
  }
  std::printf("Legal alpha ranges for the lambda-tree, lambda = %s (Bruck et al. 2.5)\n", show(lambda).c_str());
  std::printf("split n = n' + n'' is optimal for n_min <= n' <= n_max\n\n");
  std::printf("  %8s  %10s  %8s  %8s  %10s  %10s\n  %8s  %10s  %8s  %8s  %10s  %10s\n", "n", "T", "n_min", "n_max",
              "alpha_min", "alpha_max", "--------", "----------", "--------", "--------", "----------", "----------");
  for (const AlphaRange& r : ranges) {
    std::printf("  %8lld  %10s  %8lld  %8lld  %10.6f  %10.6f%s\n", static_cast<long long>(r.n), r.t.str().c_str(),
                static_cast<long long>(r.n_min), static_cast<long long>(r.n_max), r.alpha_min().to_double(),
                r.alpha_max().to_double(), r.is_top() ? "  top" : "");
  }
  std::printf("\nalpha look-up table (Fig. 9): %zu entries\n  %10s  %12s\n", table.size(), "n <=", "alpha");
  for (const AlphaTableEntry& e : table) {
    std::printf("  %10lld  %12.8f\n", static_cast<long long>(e.n_upper), e.alpha.to_double());
  }
  if (!a.svg.empty()) std::printf("\nwrote %s\n", a.svg.c_str());
}

}  // namespace

void register_model(CLI::App& app) {
  CLI::App* model = app.add_subcommand(
      "model", "Postal-model (Bruck et al.) and send/receive-model (Cordsen et al.) arithmetic: N_lambda, T_lambda, "
               "gamma, alpha ranges, combine break-even, Fibonacci growth f(t)");
  model->require_subcommand(1);

  auto pa = std::make_shared<PostalArgs>();
  CLI::App* postal = model->add_subcommand(
      "postal", "T_lambda(n), gamma(lambda), the legal alpha range for n, and N_lambda at each time it changes up to T");
  postal->add_option("--lambda", pa->lambda, "Latency lambda >= 1, exact: 2, 1.8 or 9/5")->required();
  postal->add_option("--n", pa->n, "Number of nodes n >= 1")->required();
  postal->add_flag("--json", pa->json,
                   "JSON: lambda, n, T, T_exact, gamma, alpha_min, alpha_max (null for n = 1), N, N_times");
  postal->callback([pa] { run_postal(*pa); });

  auto ba = std::make_shared<BreakevenArgs>();
  CLI::App* be = model->add_subcommand(
      "breakeven", "Table 2: the lambda where delay-send and delay-receive global combine break even, per floor(lambda)");
  be->add_option("--max-floor", ba->max_floor, "Largest floor(lambda) to list (1 to 1000; default 9)");
  be->add_flag("--json", ba->json, "JSON: {\"rows\": [{\"floor\", \"gamma\", \"break_even\"}, ...]}");
  be->callback([ba] { run_breakeven(*ba); });

  auto fa = std::make_shared<FiboArgs>();
  CLI::App* fibo = model->add_subcommand(
      "fibo", "Cordsen's f(t) = f(t - s) + f(t - s - r): processes notified by time t; give --p or --t");
  fibo->add_option("--s", fa->s, "Send latency s > 0 (exact, e.g. 1, 27 or 0.5)")->required();
  fibo->add_option("--r", fa->r, "Receive latency r >= 0 (exact)")->required();
  fibo->add_option("--p", fa->p, "List f(t) up to the first integer t with f(t) >= P, reported as steps");
  fibo->add_option("--t", fa->t, "List f(0) .. f(T) (integer T >= 0, at most 100000)");
  fibo->add_flag("--json", fa->json, "JSON: s, r, f (f(0), f(1), ...); with --p also p, steps and T_exact");
  fibo->callback([fa] { run_fibo(*fa); });

  auto aa = std::make_shared<AlphaArgs>();
  CLI::App* alpha = model->add_subcommand(
      "alpha-ranges", "Legal alpha range per n (the Christmas tree of Bruck et al. Figs. 6-7) and the look-up table");
  alpha->add_option("--lambda", aa->lambda, "Latency lambda >= 1, exact: 2, 1.95 or 39/20")->required();
  alpha->add_option("--n-max", aa->n_max, "List n = 2 .. N-MAX (at most 100000)")->required();
  alpha->add_option("--svg", aa->svg, "Also draw the Christmas-tree plot into this SVG file");
  alpha->add_flag("--json", aa->json,
                  "JSON: lambda, ranges [{n, n_min, n_max, alpha_min, alpha_max}], lookup_table [{n_upper, alpha, "
                  "alpha_exact}]");
  alpha->callback([aa] { run_alpha(*aa); });
}

}  // namespace postbox::cli
