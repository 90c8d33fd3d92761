// The model reports (model_report.hpp).
#include "postbox/frontend/model_report.hpp"

#include <algorithm>
#include <limits>

#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"

namespace postbox {
namespace {

// The CLI's positive integers: 1..10^9 unless a tighter bound is given.
int parse_positive(const std::string& name, const std::string& text, int hi = 1'000'000'000) {
  return static_cast<int>(parse_int(text, "--" + name, 1, hi));
}

// Runs `work`, the exact arithmetic on a model already parsed: what fails there (a result
// beyond 64 bits, too many change points) is caused by the model, so its InputError names the
// options that gave it ("--lambda 9/5", "--s 1 and --r 3").
template <class Work>
auto naming(const std::string& given, Work&& work) {
  try {
    return work();
  } catch (const InputError& e) {
    throw InputError(given + ": " + frontend::error_line(e));
  }
}

}  // namespace

Rational parse_lambda_option(const std::string& text) {
  const Rational l = Rational::parse(text, "--lambda");
  if (l < Rational(1)) throw InputError("--lambda must be >= 1, got " + text);
  return l;
}

Rational parse_s_option(const std::string& text) {
  const Rational s = Rational::parse(text, "--s");
  if (s <= Rational(0)) throw InputError("--s must be > 0, got " + text);
  return s;
}

Rational parse_r_option(const std::string& text) {
  const Rational r = Rational::parse(text, "--r");
  if (r < Rational(0)) throw InputError("--r must be >= 0, got " + text);
  return r;
}

PostalSelection select_postal(const std::string& lambda, const std::string& n) {
  PostalSelection sel;
  sel.lambda = parse_lambda_option(lambda);
  sel.n = parse_positive("n", n);
  sel.lambda_text = lambda;
  return sel;
}

PostalReport postal_report(const PostalSelection& sel) {
  const std::string given = "--lambda " + sel.lambda_text;
  PostalReport rep;
  rep.lambda = sel.lambda;
  rep.n = sel.n;
  rep.T = naming(given, [&] { return T_lambda(sel.lambda, sel.n); });
  rep.gamma = gamma_lambda(sel.lambda.to_double());
  rep.scale = postal_scale(sel.lambda);
  rep.steps = naming(given, [&] { return N_lambda_steps(sel.lambda, rep.T); });
  if (sel.n >= 2) rep.range = naming(given, [&] { return alpha_range(sel.lambda, sel.n); });
  return rep;
}

FiboSelection select_fibo(const std::string& s, const std::string& r, const std::optional<std::string>& p,
                          const std::optional<std::string>& t) {
  FiboSelection sel;
  sel.s = Rational::parse(s, "--s");
  sel.r = Rational::parse(r, "--r");
  if (sel.s <= Rational(0)) throw InputError("--s must be > 0, got " + s);
  if (sel.r < Rational(0)) throw InputError("--r must be >= 0, got " + r);
  sel.s_text = s;
  sel.r_text = r;
  if (p.has_value() == t.has_value()) {
    throw InputError(p.has_value() ? "give either --p or --t, not both" : "--p or --t is required (give exactly one)");
  }
  if (p) {
    sel.p = parse_positive("p", *p);
    sel.time = naming("--s " + s + " and --r " + r, [&] { return fibo_time(sel.s, sel.r, *sel.p); });
    const std::int64_t steps = sel.time.ceil();
    if (steps > kMaxFiboSteps) {
      throw InputError("--p " + *p + " with --s " + s + " --r " + r + " is reached at t = " + std::to_string(steps) +
                       " (exactly " + sel.time.str() + "), beyond the " + std::to_string(kMaxFiboSteps) +
                       " steps the table lists; give a smaller --p");
    }
    sel.t_max = steps;
  } else {
    sel.t_max = parse_int(*t, "--t", 0, kMaxFiboSteps);
  }
  return sel;
}

Rational fibo_lambda(const FiboSelection& sel) {
  return naming("--s " + sel.s_text + " and --r " + sel.r_text, [&] { return SendRecv{sel.s, sel.r}.lambda(); });
}

FiboReport fibo_report(const FiboSelection& sel) {
  const std::string given = "--s " + sel.s_text + " and --r " + sel.r_text;
  FiboReport rep;
  rep.s = sel.s;
  rep.r = sel.r;
  rep.f = naming(given, [&] { return fibo_f_table(sel.s, sel.r, sel.t_max); });
  // The table saturates at 2^63 - 1; reporting that as a count would be a lie.
  if (const auto sat = std::find(rep.f.begin(), rep.f.end(), std::numeric_limits<std::int64_t>::max()); sat != rep.f.end()) {
    throw InputError("f(t) exceeds 9223372036854775807 from t = " + std::to_string(sat - rep.f.begin()) +
                     " on; give --t below it");
  }
  if (sel.p) {
    rep.p = sel.p;
    rep.steps = sel.t_max;
    rep.time = sel.time;
  }
  return rep;
}

AlphaRangesSelection select_alpha_ranges(const std::string& lambda, const std::string& n_max) {
  AlphaRangesSelection sel;
  sel.lambda = parse_lambda_option(lambda);
  sel.n_max = parse_positive("n-max", n_max);
  if (sel.n_max < 2) throw InputError("--n-max must be at least 2, got " + n_max);
  if (sel.n_max > kMaxAlphaRangesN) {
    throw InputError("--n-max must be at most " + std::to_string(kMaxAlphaRangesN) + ", got " + n_max);
  }
  sel.lambda_text = lambda;
  return sel;
}

AlphaRangesReport alpha_ranges_report(const AlphaRangesSelection& sel) {
  const std::string given = "--lambda " + sel.lambda_text;
  AlphaRangesReport rep;
  rep.lambda = sel.lambda;
  rep.ranges = naming(given, [&] { return alpha_ranges(sel.lambda, sel.n_max); });
  rep.table = naming(given, [&] { return alpha_lookup_table(sel.lambda, sel.n_max); });
  for (const TriangleTop& t : naming(given, [&] { return triangle_tops(sel.lambda, sel.n_max); })) {
    if (t.n <= sel.n_max) rep.tops.push_back(t);
  }
  return rep;
}

int select_breakeven(const std::string& max_floor) {
  const int k_max = parse_positive("max-floor", max_floor);
  if (k_max > kMaxBreakevenFloor) {
    throw InputError("--max-floor must be at most " + std::to_string(kMaxBreakevenFloor) + ", got " + max_floor);
  }
  return k_max;
}

std::vector<BreakevenRow> breakeven_report(int max_floor) {
  std::vector<BreakevenRow> rows;
  for (int k = 1; k <= max_floor; ++k) rows.push_back({k, gamma_lambda(k), break_even_lambda(k)});
  return rows;
}

}  // namespace postbox
