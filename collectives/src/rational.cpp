#include "postbox/collectives/rational.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

using i128 = internal::int128;

i128 abs128(i128 x) { return x < 0 ? -x : x; }

i128 gcd128(i128 a, i128 b) {
  a = abs128(a);
  b = abs128(b);
  while (b != 0) {
    const i128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

constexpr std::int64_t kParseLimit = 1'000'000'000'000LL;  // 10^12
constexpr std::int64_t kTermLimit = 1'000'000'000'000'000'000LL;  // 10^18

}  // namespace

std::optional<Rational> Rational::try_make(i128 n, i128 d) {
  PB_CHECK(d != 0, "rational with zero denominator");
  if (d < 0) {
    n = -n;
    d = -d;
  }
  const i128 g = gcd128(n, d);
  if (g > 1) {
    n /= g;
    d /= g;
  }
  constexpr i128 lo = std::numeric_limits<std::int64_t>::min();
  constexpr i128 hi = std::numeric_limits<std::int64_t>::max();
  if (!(n > lo && n <= hi && d <= hi)) return std::nullopt;
  return raw(static_cast<std::int64_t>(n), static_cast<std::int64_t>(d));
}

Rational Rational::make(i128 n, i128 d) {
  const std::optional<Rational> r = try_make(n, d);
  PB_CHECK(r.has_value(), "rational arithmetic overflowed 64 bits");
  return *r;
}

Rational::Rational(std::int64_t num, std::int64_t den) { *this = make(num, den); }

std::int64_t Rational::floor() const noexcept {
  std::int64_t q = num_ / den_;
  if (num_ % den_ != 0 && num_ < 0) --q;
  return q;
}

std::int64_t Rational::ceil() const noexcept {
  std::int64_t q = num_ / den_;
  if (num_ % den_ != 0 && num_ > 0) ++q;
  return q;
}

std::string Rational::str() const {
  if (den_ == 1) return std::to_string(num_);
  return std::to_string(num_) + "/" + std::to_string(den_);
}

std::string Rational::decimal_str(int max_decimals) const {
  PB_CHECK(max_decimals >= 0 && max_decimals <= 18, "Rational::decimal_str: 0 to 18 decimals");
  if (den_ == 1) return std::to_string(num_);
  std::int64_t scale = 1;
  for (int i = 0; i < max_decimals; ++i) scale *= 10;
  if (scale % den_ != 0) return str();
  // |num| · (scale / den) may leave 64 bits; its quotient by scale is |num| / den, which does not.
  const i128 mag = abs128(static_cast<i128>(num_) * (scale / den_));
  std::string frac = std::to_string(static_cast<std::int64_t>(mag % scale) + scale).substr(1);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return (num_ < 0 ? "-" : "") + std::to_string(static_cast<std::int64_t>(mag / scale)) + "." + frac;
}

Rational operator+(const Rational& a, const Rational& b) {
  return Rational::make(static_cast<i128>(a.num_) * b.den_ + static_cast<i128>(b.num_) * a.den_,
                        static_cast<i128>(a.den_) * b.den_);
}
Rational operator-(const Rational& a, const Rational& b) {
  return Rational::make(static_cast<i128>(a.num_) * b.den_ - static_cast<i128>(b.num_) * a.den_,
                        static_cast<i128>(a.den_) * b.den_);
}
Rational operator*(const Rational& a, const Rational& b) {
  return Rational::make(static_cast<i128>(a.num_) * b.num_, static_cast<i128>(a.den_) * b.den_);
}
Rational operator/(const Rational& a, const Rational& b) {
  PB_CHECK(b.num_ != 0, "rational division by zero");
  return Rational::make(static_cast<i128>(a.num_) * b.den_, static_cast<i128>(a.den_) * b.num_);
}

std::strong_ordering operator<=>(const Rational& a, const Rational& b) noexcept {
  const i128 l = static_cast<i128>(a.num_) * b.den_;
  const i128 r = static_cast<i128>(b.num_) * a.den_;
  if (l < r) return std::strong_ordering::less;
  if (l > r) return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

Rational Rational::parse(std::string_view text, std::string_view what) {
  const std::string w(what);
  const std::string t(text);
  auto bad = [&](const char* why) {
    return InputError(w + " must be a finite number such as 2, 1.8 or 9/5 (" + why + "), got '" + t + "'");
  };
  if (t.empty()) throw bad("empty");
  auto parse_int = [&](std::string_view s, bool allow_sign, std::int64_t limit) -> std::int64_t {
    bool neg = false;
    std::size_t i = 0;
    if (allow_sign && i < s.size() && s[i] == '-') {  // parse.hpp's rule: '-' only, never '+'
      neg = true;
      ++i;
    }
    if (i == s.size()) throw bad("missing digits");
    std::int64_t v = 0;
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') throw bad("unexpected character");
      if (v > (limit - (s[i] - '0')) / 10) throw bad("too large");
      v = v * 10 + (s[i] - '0');
    }
    return neg ? -v : v;
  };
  // p/q takes the terms str() prints for any value parse() accepts (up to 10^18 each: a decimal
  // of 18 digits over 10^12); the value itself is bounded by 10^12 like every other form.
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    const std::int64_t n = parse_int(text.substr(0, slash), true, kTermLimit);
    const std::int64_t d = parse_int(text.substr(slash + 1), false, kTermLimit);
    if (d == 0) throw bad("zero denominator");
    if (abs128(n) > static_cast<i128>(kParseLimit) * d) throw bad("too large");
    return Rational(n, d);
  }
  const auto dot = text.find('.');
  if (dot == std::string_view::npos) return Rational(parse_int(text, true, kParseLimit));
  std::string_view ip = text.substr(0, dot);
  std::string_view fp = text.substr(dot + 1);
  bool neg = false;
  if (!ip.empty() && ip[0] == '-') {
    neg = true;
    ip.remove_prefix(1);
  }
  if (ip.empty() && fp.empty()) throw bad("missing digits");
  if (fp.size() > 12) throw bad("more than 12 decimals");
  const std::int64_t whole = ip.empty() ? 0 : parse_int(ip, false, kParseLimit);
  std::int64_t frac = 0;
  std::int64_t scale = 1;
  for (char c : fp) {
    if (c < '0' || c > '9') throw bad("unexpected character");
    frac = frac * 10 + (c - '0');
    scale *= 10;
  }
  // whole · scale + frac within 10^18: 999999999999.999999999999 overflowed 64 bits (an abort).
  if (whole > (kTermLimit - frac) / scale) throw bad("more than 18 digits");
  if (whole == kParseLimit && frac > 0) throw bad("too large");  // 1000000000000.5
  Rational r(whole * scale + frac, scale);
  return neg ? -r : r;
}

Rational Rational::from_double(double x, std::string_view what) {
  if (!std::isfinite(x)) throw InputError(std::string(what) + " must be finite, got " + std::to_string(x));
  if (std::fabs(x) > static_cast<double>(kParseLimit)) throw InputError(std::string(what) + " is too large");
  const auto whole = static_cast<std::int64_t>(std::trunc(x));
  // 12 decimals below 1000 in magnitude, fewer above: 15 significant digits in all, what a
  // double holds, and whole · scale stays far inside 64 bits (10^12 decimals of 3.2e8 overflowed).
  std::int64_t scale = 1'000'000'000'000LL;
  const std::int64_t magnitude = whole < 0 ? -whole : whole;
  while (scale > 1 && magnitude >= 1'000'000'000'000'000LL / scale) scale /= 10;
  const auto frac = static_cast<std::int64_t>(std::llround((x - static_cast<double>(whole)) * static_cast<double>(scale)));
  return Rational(whole) + Rational(frac, scale);
}

Rational lcm(const Rational& a, const Rational& b) {
  PB_CHECK(a > Rational(0) && b > Rational(0), "lcm needs positive rationals");
  // a = p/q, b = r/s  ->  lcm(p*s, r*q) / (q*s)
  const i128 ps = static_cast<i128>(a.num()) * b.den();
  const i128 rq = static_cast<i128>(b.num()) * a.den();
  const i128 l = ps / gcd128(ps, rq) * rq;
  const i128 qs = static_cast<i128>(a.den()) * b.den();
  const i128 g = gcd128(l, qs);
  const i128 n = l / g, d = qs / g;
  PB_CHECK(n <= std::numeric_limits<std::int64_t>::max() && d <= std::numeric_limits<std::int64_t>::max(),
           "lcm overflowed 64 bits");
  return Rational(static_cast<std::int64_t>(n), static_cast<std::int64_t>(d));
}

}  // namespace postbox
