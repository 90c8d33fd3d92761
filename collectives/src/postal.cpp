#include "postbox/collectives/postal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "postbox/runtime/check.hpp"
#include "quanta.hpp"

namespace postbox {
namespace internal {

std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  return (a > kNSaturated - b) ? kNSaturated : a + b;
}

void throw_times_overflow(std::string_view shape, std::int64_t p) {
  throw InputError("the exact times of " + std::string(shape) + " over " + std::to_string(p) +
                   " ranks would overflow 64 bits; give s and r (or lambda) with fewer decimals");
}

std::optional<Rational> Quanta::try_time(int128 quanta) const {
  // q_num/q_den is in lowest terms, so quanta · q_num/q_den in lowest terms is
  // (quanta/g · q_num)/(q_den/g) with g = gcd(quanta, q_den): it fits iff quanta/g · q_num does.
  int128 a = quanta < 0 ? -quanta : quanta, b = q_den;
  while (b != 0) {
    const int128 t = a % b;
    a = b;
    b = t;
  }
  const int128 n = quanta / a;  // a = gcd(|quanta|, q_den) >= 1
  constexpr int128 kMax = std::numeric_limits<std::int64_t>::max();
  if (n > kMax / q_num || n < -kMax / q_num) return std::nullopt;
  return Rational::try_make(n * q_num, q_den / a);
}

Quanta to_quanta(const SendRecv& model) {
  if (model.s <= Rational(0)) throw InputError("send latency s must be > 0, got " + model.s.str());
  if (model.r < Rational(0)) throw InputError("receive latency r must be >= 0, got " + model.r.str());
  // A common denominator beyond 64 bits (two long, coprime fractions) cannot be tabulated.
  const std::int64_t sd = model.s.den(), rd = model.r.den();
  std::int64_t den = 0, s = 0, r = 0;
  if (__builtin_mul_overflow(sd / std::gcd(sd, rd), rd, &den) || __builtin_mul_overflow(model.s.num(), den / sd, &s) ||
      __builtin_mul_overflow(model.r.num(), den / rd, &r)) {
    throw InputError("s = " + model.s.str() + " and r = " + model.r.str() +
                     " have no common time quantum within 64 bits; give them with fewer decimals");
  }
  const std::int64_t g = std::gcd(s, r);  // r == 0 gives g = s
  Quanta q;
  q.s = s / g;
  q.r = r / g;
  const std::int64_t h = std::gcd(g, den);
  q.q_num = g / h;
  q.q_den = den / h;
  return q;
}

std::vector<std::int64_t> quanta_table(const Quanta& q, std::int64_t len, std::int64_t stop_at) {
  std::vector<std::int64_t> t;
  const std::int64_t sr = sat_add(q.s, q.r);  // beyond the table either way when it saturates
  for (std::int64_t k = 0; k < len; ++k) {
    if (k > kMaxTable) throw InputError("the exact table needs more than " + std::to_string(kMaxTable) +
                                        " time quanta; give s, r or lambda with a smaller denominator");
    const std::int64_t v = k < sr ? 1 : sat_add(t[static_cast<std::size_t>(k - q.s)], t[static_cast<std::size_t>(k - sr)]);
    t.push_back(v);
    if (v >= stop_at) break;
  }
  return t;
}

void check_n(std::int64_t n) {
  if (n < 1) throw InputError("n must be at least 1, got " + std::to_string(n));
}

}  // namespace internal

using internal::check_n;

namespace {

using internal::int128;
using internal::sat_add;

// C(m, k), saturating at kNSaturated. Computes C(m, j), j = min(k, m − k); the partial products
// C(m, i) grow with i <= m/2, so saturating early is exact. m may exceed 64 bits (a time far
// beyond the counts): C(m, j) >= m for j >= 1, so that saturates at once.
std::int64_t binom_sat(int128 m, std::int64_t k) {
  if (k < 0 || k > m) return 0;
  const int128 j = std::min<int128>(k, m - k);
  if (j == 0) return 1;
  if (m >= kNSaturated) return kNSaturated;
  int128 c = 1;
  for (int128 i = 0; i < j; ++i) {
    c = c * (m - i) / (i + 1);
    if (c >= kNSaturated) return kNSaturated;
  }
  return static_cast<std::int64_t>(c);
}

// ---- The exact arithmetic in ticks --------------------------------------------------------
//
// Every time the postal arithmetic forms is a + kλ with integers a, k >= 0; with λ = P/Q in
// lowest terms that is a whole number of ticks of 1/Q. N_λ, T_λ and the change points run on
// 128-bit tick counts, which no time of the 64-bit range over a 64-bit Q can overflow (a
// Rational sum such as 10·λ with Q near 10^17 did, and aborted). Only results leave as
// Rationals, through try_make(): one that does not fit is an InputError.
struct Ticks {
  int128 lambda = 1;  // λ in ticks (P)
  int128 unit = 1;    // 1 in ticks (Q)
};

Ticks ticks_of(const Rational& lambda) { return Ticks{lambda.num(), lambda.den()}; }

// λ = 1 + r/s = (S + R)/S of the model in quanta: one tick is one quantum.
Ticks ticks_of(const internal::Quanta& q) { return Ticks{int128{q.s} + q.r, q.s}; }

// Tick counts stay below this, so that a sum of two never overflows 128 bits.
constexpr int128 kTickLimit = int128{1} << 120;

int128 floor_div(int128 a, int128 b) {  // b > 0
  const int128 q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

std::string str128(int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  std::string out;
  for (; v != 0; v /= 10) out.insert(out.begin(), static_cast<char>('0' + (neg ? -(v % 10) : v % 10)));
  return neg ? "-" + out : out;
}

// "lambda = 9/5" for the messages.
std::string lambda_text(const Ticks& tk) {
  const auto l = Rational::try_make(tk.lambda, tk.unit);
  return "lambda = " + (l ? l->str() : str128(tk.lambda) + "/" + str128(tk.unit));
}

// u ticks as a time, or InputError naming `what` ("T_lambda(1000)").
Rational time_of(const Ticks& tk, int128 u, const std::string& what) {
  if (const auto t = Rational::try_make(u, tk.unit)) return *t;
  throw InputError("with " + lambda_text(tk) + " the exact time " + what + " = " + str128(u) + "/" + str128(tk.unit) +
                   " would overflow 64 bits; give lambda (or s and r) with fewer decimals");
}

// N_λ at u ticks: Σ_k C(⌊(u − kP)/Q⌋ + k, k) over u − kP >= 0.
std::int64_t N_at(const Ticks& tk, int128 u) {
  std::int64_t sum = 0;
  int128 rest = u;  // u − kP
  for (std::int64_t k = 0; rest >= 0; ++k, rest -= tk.lambda) {
    sum = sat_add(sum, binom_sat(rest / tk.unit + k, k));
    if (sum == kNSaturated) break;
  }
  return sum;
}

// T_λ(n) in ticks: for each hop count k the least a with N(a + kλ) >= n, by bisection.
int128 T_at(const Ticks& tk, std::int64_t n) {
  if (n == 1) return 0;
  const int128 a_hi = n + (tk.lambda + tk.unit - 1) / tk.unit;  // n + ⌈λ⌉: N(a_hi + kλ) >= n (flat tree)
  if (a_hi > kTickLimit / tk.unit) {
    throw InputError("n = " + std::to_string(n) + " is too large for the exact arithmetic with " + lambda_text(tk));
  }
  std::optional<int128> best;
  for (std::int64_t k = 0;; ++k) {
    const int128 base = k * tk.lambda;
    if (best && base >= *best) break;
    int128 lo = 0, hi = a_hi;
    while (lo < hi) {
      const int128 mid = lo + (hi - lo) / 2;
      if (N_at(tk, base + mid * tk.unit) >= n) hi = mid;
      else lo = mid + 1;
    }
    const int128 cand = base + lo * tk.unit;
    if (!best || cand < *best) best = cand;
  }
  return *best;
}

// The change points of N_λ in [0, u_max] ticks (0 included), ascending, with N_λ there.
// `t_max` names u_max in the message when there are too many.
std::vector<std::pair<int128, std::int64_t>> steps_at(const Ticks& tk, int128 u_max, const std::string& t_max) {
  std::vector<int128> times{0};
  constexpr std::size_t kMaxSteps = 1'000'000;
  // Every node is reached at a + kλ (k >= 1 hops, a >= 0 waits), and every such time is used.
  for (int128 base = tk.lambda; base <= u_max; base += tk.lambda) {
    for (int128 u = base; u <= u_max; u += tk.unit) {
      times.push_back(u);
      if (times.size() > kMaxSteps) throw InputError("too many change points of N_lambda below " + t_max);
    }
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<std::pair<int128, std::int64_t>> out;
  out.reserve(times.size());
  for (const int128 u : times) out.emplace_back(u, N_at(tk, u));
  return out;
}

// The triangle tops up to n_max >= 2, times in ticks: (t, N(t), N(t − 1)) with N(t) >= 2.
struct TopAt {
  int128 u = 0;
  std::int64_t n = 0;
  std::int64_t n_prev = 0;
};
std::vector<TopAt> tops_at(const Ticks& tk, std::int64_t n_max) {
  const int128 t = T_at(tk, n_max);
  std::vector<TopAt> out;
  for (const auto& [u, N] : steps_at(tk, t, "T_lambda(" + std::to_string(n_max) + ")")) {
    if (N < 2) continue;
    out.push_back({u, N, N_at(tk, u - tk.unit)});
  }
  return out;
}

// Fig. 9's compressed table from the tops (the counts only).
std::vector<AlphaTableEntry> lookup_table(const std::vector<TopAt>& tops) {
  std::vector<AlphaTableEntry> table;
  // Within one triangle the tightest rounding interval is the top's (the bounds n_min/n and
  // n_max/n move outwards as n falls), so intersecting the tops' intervals suffices.
  std::optional<Rational> lo, hi;
  std::int64_t last_n = 0;
  for (const TopAt& top : tops) {
    const AlphaRange r{top.n, Rational(0), top.n_prev, top.n_prev};
    const Rational l = r.round_lo(), h = r.round_hi();
    if (lo && std::max(*lo, l) < std::min(*hi, h)) {
      lo = std::max(*lo, l);
      hi = std::min(*hi, h);
    } else {
      if (lo) table.push_back({last_n, (*lo + *hi) / Rational(2)});
      lo = l;
      hi = h;
    }
    last_n = top.n;
  }
  if (lo) table.push_back({last_n, (*lo + *hi) / Rational(2)});
  return table;
}

}  // namespace

namespace internal {
std::vector<AlphaTableEntry> alpha_lookup_table(const Quanta& q, std::int64_t n_max) {
  check_n(n_max);
  if (n_max < 2) return {};
  return lookup_table(tops_at(ticks_of(q), n_max));
}
}  // namespace internal

void validate_lambda(const Rational& lambda, const char* what) {
  if (lambda < Rational(1)) throw InputError(std::string(what) + " must be >= 1, got " + lambda.str());
}

void validate_lambda(double lambda, const char* what) {
  if (!std::isfinite(lambda)) throw InputError(std::string(what) + " must be finite");
  if (lambda < 1.0) throw InputError(std::string(what) + " must be >= 1, got " + std::to_string(lambda));
}

void validate_send_recv(const Rational& s, const Rational& r) { (void)internal::to_quanta(SendRecv{s, r}); }

std::int64_t N_lambda(const Rational& lambda, const Rational& t) {
  validate_lambda(lambda);
  if (t < Rational(0)) return 0;
  // Ticks of 1/lcm(λ's denominator, t's): both whole numbers of them, each below 2^126.
  const int128 ld = lambda.den(), td = t.den();
  int128 a = ld, b = td;
  while (b != 0) {
    const int128 x = a % b;
    a = b;
    b = x;
  }
  const int128 unit = ld / a * td;
  return N_at(Ticks{lambda.num() * (unit / ld), unit}, t.num() * (unit / td));
}

std::int64_t N_lambda_real(double lambda, double t) {
  validate_lambda(lambda);
  if (!std::isfinite(t)) throw InputError("t must be finite");
  constexpr double kEps = 1e-9;  // a time within kEps of a change point counts as reaching it
  if (t < -kEps) return 0;
  std::int64_t sum = 0;
  for (std::int64_t k = 0;; ++k) {
    const double rest = t - static_cast<double>(k) * lambda;
    if (rest < -kEps) break;
    sum = sat_add(sum, binom_sat(static_cast<std::int64_t>(std::floor(rest + kEps)) + k, k));
    if (sum == kNSaturated) break;
  }
  return sum;
}

Rational T_lambda(const Rational& lambda, std::int64_t n) {
  validate_lambda(lambda);
  check_n(n);
  const Ticks tk = ticks_of(lambda);
  return time_of(tk, T_at(tk, n), "T_lambda(" + std::to_string(n) + ")");
}

double T_lambda_real(double lambda, std::int64_t n) {
  validate_lambda(lambda);
  check_n(n);
  if (n == 1) return 0.0;
  double best = -1.0;
  const auto a_hi = n + static_cast<std::int64_t>(std::ceil(lambda));
  for (std::int64_t k = 0;; ++k) {
    const double base = static_cast<double>(k) * lambda;
    if (best >= 0.0 && base >= best) break;
    std::int64_t lo = 0, hi = a_hi;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (N_lambda_real(lambda, base + static_cast<double>(mid)) >= n) hi = mid;
      else lo = mid + 1;
    }
    const double cand = base + static_cast<double>(lo);
    if (best < 0.0 || cand < best) best = cand;
  }
  return best;
}

std::vector<NStep> N_lambda_steps(const Rational& lambda, const Rational& t_max) {
  validate_lambda(lambda);
  const Ticks tk = ticks_of(lambda);
  // A time of whole ticks is at most t_max iff it is at most ⌊t_max · Q⌋ ticks.
  const int128 u_max = floor_div(int128{t_max.num()} * tk.unit, t_max.den());
  std::vector<NStep> out;
  for (const auto& [u, N] : steps_at(tk, u_max, t_max.str())) {
    out.push_back({time_of(tk, u, "of a change point of N_lambda"), N});
  }
  return out;
}

PostalScale postal_scale(const Rational& lambda) {
  validate_lambda(lambda);
  const Rational u = lcm(Rational(1), lambda);
  const Rational f = u / lambda;
  PB_CHECK(u.is_integer() && f.is_integer(), "lcm(1, lambda) and lcm/lambda are integers");
  return {u.num(), f.num()};
}

std::vector<std::int64_t> N_scaled_table(const Rational& lambda, std::int64_t t_prime_max) {
  const PostalScale sc = postal_scale(lambda);
  if (t_prime_max < 0) return {};
  if (t_prime_max > kMaxTable) throw InputError("t' beyond the table limit " + std::to_string(kMaxTable));
  internal::Quanta q;
  q.s = sc.f;
  q.r = sc.u - sc.f;
  return internal::quanta_table(q, t_prime_max + 1, kNSaturated);
}

double gamma_lambda(double lambda) {
  validate_lambda(lambda);
  // (λ − 1)·ln γ + ln(γ − 1) = 0 is increasing in γ on (1, 2] and >= 0 at 2.
  auto g = [lambda](double x) { return (lambda - 1.0) * std::log(x) + std::log(x - 1.0); };
  double lo = 1.0, hi = 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-15; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (g(mid) >= 0.0) hi = mid;
    else lo = mid;
  }
  return hi;
}

Rational AlphaRange::round_lo() const {
  if (n_min <= 1) return Rational(0);
  return (Rational(n_min) - Rational(1, 2)) / Rational(n);
}

Rational AlphaRange::round_hi() const {
  if (n_max >= n - 1) return Rational(1);
  return (Rational(n_max) + Rational(1, 2)) / Rational(n);
}

AlphaRange alpha_range(const Rational& lambda, std::int64_t n) {
  validate_lambda(lambda);
  if (n < 2) throw InputError("an alpha range needs n >= 2, got " + std::to_string(n));
  const Ticks tk = ticks_of(lambda);
  const int128 u = T_at(tk, n);
  AlphaRange a;
  a.n = n;
  a.t = time_of(tk, u, "T_lambda(" + std::to_string(n) + ")");
  a.n_min = n - N_at(tk, u - tk.lambda);
  a.n_max = N_at(tk, u - tk.unit);
  return a;
}

std::vector<AlphaRange> alpha_ranges(const Rational& lambda, std::int64_t n_max) {
  validate_lambda(lambda);
  if (n_max < 2) throw InputError("n-max must be at least 2, got " + std::to_string(n_max));
  const Ticks tk = ticks_of(lambda);
  const auto steps = steps_at(tk, T_at(tk, n_max), "T_lambda(" + std::to_string(n_max) + ")");
  std::vector<AlphaRange> out;
  out.reserve(static_cast<std::size_t>(n_max - 1));
  for (std::size_t i = 1; i < steps.size(); ++i) {
    const int128 u = steps[i].first;
    const std::int64_t below = N_at(tk, u - tk.lambda);
    const std::int64_t n_max_split = N_at(tk, u - tk.unit);
    const std::int64_t n_lo = std::max<std::int64_t>(2, steps[i - 1].second + 1);
    const std::int64_t n_hi = std::min(steps[i].second, n_max);
    if (n_lo > n_hi) continue;
    const Rational t = time_of(tk, u, "of a change point of N_lambda");
    for (std::int64_t n = n_lo; n <= n_hi; ++n) out.push_back(AlphaRange{n, t, n - below, n_max_split});
  }
  return out;
}

std::vector<TriangleTop> triangle_tops(const Rational& lambda, std::int64_t n_max) {
  validate_lambda(lambda);
  check_n(n_max);
  std::vector<TriangleTop> out;
  if (n_max < 2) return out;
  const Ticks tk = ticks_of(lambda);
  for (const TopAt& top : tops_at(tk, n_max)) {
    out.push_back({time_of(tk, top.u, "of a change point of N_lambda"), top.n, top.n_prev});
  }
  return out;
}

std::vector<AlphaTableEntry> alpha_lookup_table(const Rational& lambda, std::int64_t n_max) {
  validate_lambda(lambda);
  check_n(n_max);
  if (n_max < 2) return {};
  return lookup_table(tops_at(ticks_of(lambda), n_max));
}

Rational alpha_lookup(const std::vector<AlphaTableEntry>& table, std::int64_t n) {
  const auto it = std::lower_bound(table.begin(), table.end(), n,
                                   [](const AlphaTableEntry& e, std::int64_t v) { return e.n_upper < v; });
  PB_CHECK(it != table.end(), "alpha look-up table too short for n = " + std::to_string(n));
  return it->alpha;
}

Rational T_delay_receive(const Rational& lambda, std::int64_t n) {
  validate_lambda(lambda);
  return T_lambda(Rational(lambda.ceil()), n);
}

Rational T_delay_send(const Rational& lambda, std::int64_t n) {
  validate_lambda(lambda);
  const std::int64_t fl = lambda.floor();
  const Rational t = T_lambda(Rational(fl), n);  // an integer: λ = ⌊λ⌋ has unit ticks
  // (λ/⌊λ⌋)·T = P·T/(Q·⌊λ⌋), each product below 2^126.
  if (const auto v = Rational::try_make(int128{lambda.num()} * t.num(), int128{lambda.den()} * fl * t.den())) return *v;
  throw InputError("with lambda = " + lambda.str() + " the exact delay-send time for n = " + std::to_string(n) +
                   " would overflow 64 bits; give lambda with fewer decimals");
}

double T_delay_receive_asymptotic(double lambda, std::int64_t n) {
  validate_lambda(lambda);
  check_n(n);
  return std::log(static_cast<double>(n)) / std::log(gamma_lambda(std::ceil(lambda)));
}

double T_delay_send_asymptotic(double lambda, std::int64_t n) {
  validate_lambda(lambda);
  check_n(n);
  const double fl = std::floor(lambda);
  return lambda / fl * std::log(static_cast<double>(n)) / std::log(gamma_lambda(fl));
}

double break_even_lambda(int floor_lambda) {
  if (floor_lambda < 1) throw InputError("floor(lambda) must be >= 1, got " + std::to_string(floor_lambda));
  const double k = floor_lambda;
  return k * std::log(gamma_lambda(k)) / std::log(gamma_lambda(k + 1.0));
}

std::int64_t fibo_f(const Rational& s, const Rational& r, const Rational& t) {
  const internal::Quanta q = internal::to_quanta(SendRecv{s, r});
  // f(t) = N_λ(t/s) with λ = (S + R)/S: in ticks of one quantum, t/s is t/q = t·q_den/q_num
  // ticks, and N_λ changes only at whole ticks, so its floor counts the same.
  const int128 u = floor_div(int128{t.num()} * q.q_den, int128{t.den()} * q.q_num);
  return N_at(ticks_of(q), u);
}

std::vector<std::int64_t> fibo_f_table(const Rational& s, const Rational& r, std::int64_t t_max) {
  validate_send_recv(s, r);
  if (t_max < 0) throw InputError("t must be >= 0, got " + std::to_string(t_max));
  if (t_max > 100'000) throw InputError("t must be at most 100000, got " + std::to_string(t_max));
  std::vector<std::int64_t> f;
  f.reserve(static_cast<std::size_t>(t_max + 1));
  for (std::int64_t t = 0; t <= t_max; ++t) f.push_back(fibo_f(s, r, Rational(t)));
  return f;
}

Rational fibo_time(const Rational& s, const Rational& r, std::int64_t p) {
  const internal::Quanta q = internal::to_quanta(SendRecv{s, r});
  check_n(p);
  // s·T_λ(p) is T_λ(p) in ticks of one quantum, times the quantum.
  const int128 u = T_at(ticks_of(q), p);
  if (const auto t = q.try_time(u)) return *t;
  throw InputError("with s = " + s.str() + " and r = " + r.str() + " the exact time to reach p = " + std::to_string(p) +
                   " would overflow 64 bits; give s and r with fewer decimals");
}

std::int64_t fibo_steps(const Rational& s, const Rational& r, std::int64_t p) { return fibo_time(s, r, p).ceil(); }

}  // namespace postbox
