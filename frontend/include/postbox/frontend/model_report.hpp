// The postal-model and send/receive-model figures as `postbox model` reports them, with their
// options as text (collectives/postal.hpp has the arithmetic): parsed and validated here, for
// the CLI and the Python module alike, with InputErrors naming the options ("--lambda", "--n").
// Each report is a select_*() that checks the text (before any work that grows with it) and a
// *_report() that computes; what fails in the exact arithmetic names the options that caused
// it ("--lambda 9/5: ...").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "postbox/collectives/postal.hpp"
#include "postbox/collectives/rational.hpp"

namespace postbox {

// Printed tables and arrays grow with these; beyond them the request is a typo.
inline constexpr int kMaxAlphaRangesN = 100'000;     // model alpha-ranges --n-max
inline constexpr int kMaxBreakevenFloor = 1000;      // model breakeven --max-floor
inline constexpr std::int64_t kMaxFiboSteps = 100'000;  // model fibo --t, and --p's steps

// λ from --lambda's text: exact, >= 1, else InputError "--lambda must be >= 1, got TEXT".
Rational parse_lambda_option(const std::string& text);
// s from --s (> 0) and r from --r (>= 0), exact; InputError naming the option.
Rational parse_s_option(const std::string& text);
Rational parse_r_option(const std::string& text);

// ---- model postal: T_λ(n), γ(λ), the legal α range for n, N_λ at each change up to T ----------

struct PostalSelection {
  Rational lambda;
  int n = 0;
  std::string lambda_text;
};
PostalSelection select_postal(const std::string& lambda, const std::string& n);

struct PostalReport {
  Rational lambda;
  int n = 0;
  Rational T;                       // T_λ(n)
  double gamma = 0;                 // γ(λ)
  PostalScale scale;                // Bruck §2.5's lcm(1, λ) and f
  std::optional<AlphaRange> range;  // n >= 2 only: no split is needed for one node
  std::vector<NStep> steps;         // N_λ at each time it changes in [0, T]
};
PostalReport postal_report(const PostalSelection& selection);

// ---- model fibo: Cordsen's f(t) up to --t, or up to the step that reaches --p -----------------

// Exactly one of p and t; p: steps = ⌈s·T_λ(p)⌉ must be at most kMaxFiboSteps; t in
// 0..kMaxFiboSteps.
struct FiboSelection {
  Rational s;
  Rational r;
  std::string s_text, r_text;
  std::optional<int> p;
  Rational time;           // p given: the exact first time f reaches p (s·T_λ(p))
  std::int64_t t_max = 0;  // the last t listed
};
FiboSelection select_fibo(const std::string& s, const std::string& r, const std::optional<std::string>& p,
                          const std::optional<std::string>& t);

struct FiboReport {
  Rational s;
  Rational r;
  std::vector<std::int64_t> f;  // f(0), f(1), ..., f(t_max)
  std::optional<int> p;
  std::int64_t steps = -1;      // p given: the first integer t with f(t) >= p
  Rational time;                // p given: the exact first time
};
// A value of f past 2^63 − 1 (the table saturates) → InputError naming the first such t.
FiboReport fibo_report(const FiboSelection& selection);
// λ = 1 + r/s of the selected model; what the exact arithmetic cannot hold → InputError naming
// "--s S and --r R".
Rational fibo_lambda(const FiboSelection& selection);

// ---- model alpha-ranges: the legal α per n (Figs. 6-7), the look-up table (Fig. 9) ------------

struct AlphaRangesSelection {
  Rational lambda;
  int n_max = 0;  // 2..kMaxAlphaRangesN
  std::string lambda_text;
};
AlphaRangesSelection select_alpha_ranges(const std::string& lambda, const std::string& n_max);

struct AlphaRangesReport {
  Rational lambda;
  std::vector<AlphaRange> ranges;       // n = 2..n_max
  std::vector<AlphaTableEntry> table;   // the compressed look-up table
  std::vector<TriangleTop> tops;        // the triangle tops with n <= n_max
};
AlphaRangesReport alpha_ranges_report(const AlphaRangesSelection& selection);

// ---- model breakeven: Table 2 ----------------------------------------------------------------

struct BreakevenRow {
  int floor_lambda = 0;
  double gamma = 0;       // γ(⌊λ⌋)
  double break_even = 0;  // the λ in (⌊λ⌋, ⌊λ⌋ + 1) where delay-send and delay-receive tie
};
// --max-floor's text: 1..kMaxBreakevenFloor.
int select_breakeven(const std::string& max_floor);
std::vector<BreakevenRow> breakeven_report(int max_floor);

}  // namespace postbox
