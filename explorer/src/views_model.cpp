// /api/postal, /api/alpha-ranges, /api/breakeven, /api/combine: the Postal model view
// (`postbox model`, Bruck §2-3, Figs. 6-9, Tables 1-2).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "endpoints.hpp"
#include "params.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/frontend/render.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::explorer::internal {
namespace {

// The CLI's caps of `postbox model` (cmd_model.cpp), checked first so that its messages win.
constexpr int kCliMaxAlphaN = 100'000;
constexpr int kCliMaxFloor = 1000;

nlohmann::json range_json(const AlphaRange& r) {
  return {{"n", r.n},
          {"T", exact_json(r.t)},
          {"n_min", r.n_min},
          {"n_max", r.n_max},
          {"alpha_min", r.alpha_min().to_double()},
          {"alpha_max", r.alpha_max().to_double()},
          {"round_lo", r.round_lo().to_double()},
          {"round_hi", r.round_hi().to_double()},
          {"top", r.is_top()}};
}

// N_λ(t), T_λ(n), γ(λ), the α range for n (`postbox model postal`).
Reply postal(const Query& q) {
  const Params prm(q, "postal", {"lambda", "n"});
  const Rational lambda = model_lambda(prm);
  const std::int64_t n = positive("n", prm.required("n", "--n is required"), kMaxPostalN);
  const Rational T = T_lambda(lambda, n);
  nlohmann::json j;
  j["lambda"] = exact_json(lambda);
  j["n"] = n;
  j["T"] = exact_json(T);
  j["gamma"] = gamma_lambda(lambda.to_double());
  const PostalScale sc = postal_scale(lambda);
  j["scale"] = {{"u", sc.u}, {"f", sc.f}};
  j["range"] = n >= 2 ? range_json(alpha_range(lambda, n)) : nlohmann::json(nullptr);
  nlohmann::json times = nlohmann::json::array(), counts = nlohmann::json::array();
  for (const NStep& s : N_lambda_steps(lambda, T)) {
    times.push_back(exact_json(s.t)["value"]);
    counts.push_back(s.N);
  }
  j["N_times"] = std::move(times);
  j["N"] = std::move(counts);
  return json_reply(j);
}

// The Christmas tree: the legal α range for n = 2..n-max, the triangle tops and the look-up table
// (`postbox model alpha-ranges`; Bruck Figs. 6-9).
Reply alpha_ranges_view(const Query& q) {
  const Params prm(q, "alpha-ranges", {"lambda", "n-max"});
  const Rational lambda = model_lambda(prm);
  const std::string& text = prm.required("n-max", "--n-max is required");
  const std::int64_t n_max = positive("n-max", text, kCliMaxAlphaN + 1);
  if (n_max < 2) throw InputError("--n-max must be at least 2, got " + text);
  if (n_max > kCliMaxAlphaN) throw InputError("--n-max must be at most " + std::to_string(kCliMaxAlphaN) + ", got " + text);
  if (n_max > kMaxAlphaN) throw InputError("--n-max must be at most " + std::to_string(kMaxAlphaN) + " in the explorer, got " + text);
  nlohmann::json ranges = nlohmann::json::array();
  for (const AlphaRange& r : alpha_ranges(lambda, n_max)) ranges.push_back(range_json(r));
  nlohmann::json tops = nlohmann::json::array();
  for (const TriangleTop& t : triangle_tops(lambda, n_max)) {
    if (t.n > n_max) continue;
    tops.push_back({{"t", exact_json(t.t)}, {"n", t.n}, {"n_prev", t.n_prev}, {"alpha", t.alpha().to_double()}});
  }
  nlohmann::json table = nlohmann::json::array();
  for (const AlphaTableEntry& e : alpha_lookup_table(lambda, n_max)) {
    table.push_back({{"n_upper", e.n_upper}, {"alpha", e.alpha.to_double()}, {"alpha_exact", e.alpha.str()}});
  }
  return json_reply({{"lambda", exact_json(lambda)}, {"n_max", n_max}, {"ranges", ranges}, {"tops", tops},
                     {"lookup_table", table}});
}

// Tables 1 and 2: γ(k) and the break-even λ of delay-send against delay-receive.
Reply breakeven(const Query& q) {
  const Params prm(q, "breakeven", {"max-floor"});
  const std::string text = prm.text("max-floor", "9");
  const std::int64_t k_max = positive("max-floor", text, kCliMaxFloor + 1);
  if (k_max > kCliMaxFloor) {
    throw InputError("--max-floor must be at most " + std::to_string(kCliMaxFloor) + ", got " + text);
  }
  nlohmann::json rows = nlohmann::json::array();
  for (int k = 1; k <= k_max; ++k) {
    rows.push_back({{"floor", k}, {"gamma", gamma_lambda(k)}, {"break_even", break_even_lambda(k)}});
  }
  return json_reply({{"rows", rows}});
}

// The global combine for n ranks at λ (Bruck §3): delay-receive and delay-send times, the
// variant the postal allreduce picks, and its rounds (docs/global-combine.md).
Reply combine(const Query& q) {
  const Params prm(q, "combine", {"lambda", "n"});
  const Rational lambda = model_lambda(prm);
  const std::int64_t n = positive("n", prm.required("n", "--n is required"), kMaxPostalN);
  const PostalChoice choice = choose_postal(lambda, n);
  const PostalSchedule sched = postal_schedule(n, choice.L);
  const double l = lambda.to_double();
  nlohmann::json j;
  j["lambda"] = exact_json(lambda);
  j["n"] = n;
  j["variant"] = choice.variant;
  j["L"] = choice.L;
  j["delay_receive"] = exact_json(T_delay_receive(lambda, n));
  j["delay_send"] = exact_json(T_delay_send(lambda, n));
  j["delay_receive_asymptotic"] = T_delay_receive_asymptotic(l, n);
  j["delay_send_asymptotic"] = T_delay_send_asymptotic(l, n);
  j["break_even"] = break_even_lambda(static_cast<int>(lambda.floor()));
  j["rounds"] = sched.t;
  j["N"] = sched.N;
  j["eps"] = sched.eps;
  return json_reply(j);
}

}  // namespace

void add_model_endpoints(Api& api) {
  api.add("postal", "N_lambda(t) up to T_lambda(n), gamma(lambda), the legal alpha range for n", {"lambda", "n"}, postal);
  api.add("alpha-ranges", "the alpha range of every n = 2..n-max, the triangle tops and the look-up table",
          {"lambda", "n-max"}, alpha_ranges_view);
  api.add("breakeven", "gamma(k) and the break-even lambda per floor(lambda) (Bruck Tables 1-2)", {"max-floor"},
          breakeven);
  api.add("combine", "global combine at lambda for n ranks: delay-receive, delay-send, the rounds", {"lambda", "n"},
          combine);
}

}  // namespace postbox::explorer::internal
