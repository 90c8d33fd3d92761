// The postal-model arithmetic of Bruck et al. (§2, §3.2-3.3) and the send/receive model of
// Cordsen et al. (§3-4), as one arithmetic (λ = 1 + r/s in units of s; docs/postal-model.md,
// "One model").
//
// Where the arithmetic is exact and where floating point enters:
//  * Exact (Rational / int64): N_λ(t), T_λ(n), the change points of N_λ, the scaled table N'
//    of Bruck eq. 2, the α ranges and the α look-up table, T'_λ(n) and T''_λ(n), Cordsen's f(t),
//    and every construction (greedy two-queue, bottom-up table). λ, s and r are Rationals.
//    Internally times are int64 multiples of the model's time quantum (Bruck §2.5: for
//    λ = p/q in lowest terms, lcm(1, λ) = p and f = lcm(1, λ)/λ = q, so with time scaled by f
//    every send is q quanta and every latency p quanta, and N changes only at integers).
//  * Floating point: γ(λ) (an irrational root), the asymptotic combine times log_γ n, the
//    break-even λ of Table 2, the *_real overloads for a λ that is only known as a double (a
//    measured value), and to_double() for display. Nothing that builds a tree or compares a
//    completion time uses a double.
//
// Counts N saturate at kNSaturated instead of overflowing. Bad user input (λ < 1, NaN/inf,
// n < 1, s <= 0, r < 0) throws InputError.
#pragma once

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/tree.hpp"

namespace postbox {

inline constexpr std::int64_t kNSaturated = std::numeric_limits<std::int64_t>::max();

// λ >= 1 or InputError naming `what`.
void validate_lambda(const Rational& lambda, const char* what = "lambda");
void validate_lambda(double lambda, const char* what = "lambda");
// s > 0 and r >= 0 or InputError.
void validate_send_recv(const Rational& s, const Rational& r);

// ---- Bruck eq. 1 -------------------------------------------------------------------------

// N_λ(t): the most nodes (source included) a broadcast reaches by time t; 0 for t < 0.
// Closed form of eq. 1: a node reached over k hops with a total of m extra sends waited is
// reached at m + kλ, so N_λ(t) = Σ_{k=0}^{⌊t/λ⌋} C(⌊t − kλ⌋ + k, k). Exact; saturates.
std::int64_t N_lambda(const Rational& lambda, const Rational& t);
// Same for a real λ (floors taken in double).
std::int64_t N_lambda_real(double lambda, double t);

// T_λ(n) = min{t : N_λ(t) >= n}; always of the form a + kλ with integers a, k >= 0.
Rational T_lambda(const Rational& lambda, std::int64_t n);
double T_lambda_real(double lambda, std::int64_t n);

// The times in [0, t_max] at which N_λ changes (0 included), ascending, with N_λ there.
struct NStep {
  Rational t;
  std::int64_t N = 0;
};
std::vector<NStep> N_lambda_steps(const Rational& lambda, const Rational& t_max);

// Bruck §2.5: u = lcm(1, λ), f = u/λ (an integer); N_λ(t) = N'(f·t) with
// N'(t') = N'(t' − f) + N'(t' − u) for t' >= u, else 1 (eq. 2).
struct PostalScale {
  std::int64_t u = 1;  // lcm(1, λ): the latency in quanta
  std::int64_t f = 1;  // f = u/λ: one send in quanta
};
PostalScale postal_scale(const Rational& lambda);
// N'(0..t_prime_max) of eq. 2 (saturating). t_prime_max beyond kMaxTable → InputError.
std::vector<std::int64_t> N_scaled_table(const Rational& lambda, std::int64_t t_prime_max);
inline constexpr std::int64_t kMaxTable = std::int64_t{1} << 22;

// γ(λ) = lim N_λ(t+1)/N_λ(t): the root in (1, 2] of γ^λ = γ^(λ−1) + 1 (Table 1). Any real λ >= 1.
double gamma_lambda(double lambda);

// ---- The legal α range (§2.5, Figs. 6-7) and the look-up table (Figs. 8-9) -------------------

// For n >= 2 with t = T_λ(n): any split (n', n − n') with n_min <= n' <= n_max is optimal,
// n_min = n − N_λ(t − λ) (S'' fully loaded), n_max = N_λ(t − 1) (S' fully loaded).
struct AlphaRange {
  std::int64_t n = 0;
  Rational t;  // T_λ(n)
  std::int64_t n_min = 0;
  std::int64_t n_max = 0;
  [[nodiscard]] Rational alpha_min() const { return Rational(n_min, n); }
  [[nodiscard]] Rational alpha_max() const { return Rational(n_max, n); }
  // α with n' = max(1, min(round(αn), n − 1)), round half up, gives a legal split iff
  // round_lo() <= α < round_hi() (0 and 1 where the clamps make every α legal on that side).
  [[nodiscard]] Rational round_lo() const;
  [[nodiscard]] Rational round_hi() const;
  // A triangle top: n = N_λ(t), a single legal split.
  [[nodiscard]] bool is_top() const { return n_min == n_max; }
};
AlphaRange alpha_range(const Rational& lambda, std::int64_t n);  // n < 2 → InputError
std::vector<AlphaRange> alpha_ranges(const Rational& lambda, std::int64_t n_max);  // n = 2..n_max

// The triangle tops up to n_max (n = N_λ(t) >= 2 for each change time t): α_top = N(t−1)/N(t).
// The top's α is legal for every n of its triangle, so this list is an uncompressed look-up table.
struct TriangleTop {
  Rational t;
  std::int64_t n = 0;      // N_λ(t)
  std::int64_t n_prev = 0; // N_λ(t − 1)
  [[nodiscard]] Rational alpha() const { return Rational(n_prev, n); }
};
std::vector<TriangleTop> triangle_tops(const Rational& lambda, std::int64_t n_max);

// Compressed look-up table (Fig. 9): consecutive triangles share one entry while the rounding
// intervals of their tops intersect; the entry's α is the midpoint of that intersection. For a
// subproblem of n nodes use the first entry with n_upper >= n.
struct AlphaTableEntry {
  std::int64_t n_upper = 0;
  Rational alpha;
};
std::vector<AlphaTableEntry> alpha_lookup_table(const Rational& lambda, std::int64_t n_max);
// α for n (n <= the table's last n_upper; PB_CHECK otherwise).
Rational alpha_lookup(const std::vector<AlphaTableEntry>& table, std::int64_t n);

// ---- Global combine with non-integer λ (§3.2-3.3, Tables 1-2) ------------------------------

// Delay-receive: every receive idles to ⌈λ⌉, so T'_λ(n) = T_⌈λ⌉(n) (exact, integer steps).
Rational T_delay_receive(const Rational& lambda, std::int64_t n);
// Delay-send: every send idles to λ/⌊λ⌋, so T''_λ(n) = (λ/⌊λ⌋)·T_⌊λ⌋(n) (exact).
Rational T_delay_send(const Rational& lambda, std::int64_t n);
// The asymptotic forms the paper compares: log_γ(⌈λ⌉) n and (λ/⌊λ⌋)·log_γ(⌊λ⌋) n.
double T_delay_receive_asymptotic(double lambda, std::int64_t n);
double T_delay_send_asymptotic(double lambda, std::int64_t n);
// Table 2: the λ in (k, k+1) where both asymptotic times are equal, λ = k·ln γ(k)/ln γ(k+1).
// Delay-send is faster below it. k < 1 → InputError.
double break_even_lambda(int floor_lambda);

// ---- Cordsen's send/receive model (§3.1 eq. 2) ----------------------------------------------

// f(t) = 0 (t < 0), 1 (0 <= t < s + r), f(t − s) + f(t − s − r) (t >= s + r), for any
// rational t. f(t) = N_λ(t/s) with λ = 1 + r/s.
std::int64_t fibo_f(const Rational& s, const Rational& r, const Rational& t);
// f(0), f(1), ..., f(t_max) at integer t.
std::vector<std::int64_t> fibo_f_table(const Rational& s, const Rational& r, std::int64_t t_max);
// The first integer t with f(t) >= p, and the exact first real t (= s·T_λ(p)).
std::int64_t fibo_steps(const Rational& s, const Rational& r, std::int64_t p);
Rational fibo_time(const Rational& s, const Rational& r, std::int64_t p);

// The constructions of §2.3 (the greedy two-queue tree and the λ-tree table) are tree shapes:
// tree.hpp (greedy_two_queue_tree, LambdaTreeTable).

}  // namespace postbox
