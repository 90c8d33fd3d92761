// Exact rational numbers for latency arithmetic.
//
// Bruck's postal model is exact when λ is rational (§2.5 scales time by f = lcm(1, λ)/λ so that
// N_λ changes only at integer times), and Cordsen's model is exact for integer s and r. postbox
// keeps every time, λ, s and r as a Rational: a normalised fraction num/den (den > 0) of 64-bit
// integers, with 128-bit intermediates. An operator whose result leaves 64 bits is a programming
// error (PB_CHECK). Parsing bounds each value, but not what the arithmetic builds from it: a time
// of many steps of an s with 18 digits needs more than 64 bits. Code that computes from values a
// user gave works in 128-bit integers and turns a result into a Rational with try_make(), which
// lets it refuse (InputError) what does not fit.
//
// Floating point enters only where a quantity is irrational (γ(λ), logarithms, the break-even
// λ) and in display (to_double), never in tree construction or completion times.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace postbox {

namespace internal {
__extension__ typedef __int128 int128;  // GCC/Clang builtin; intermediates of Rational only
}  // namespace internal

class Rational {
 public:
  constexpr Rational() = default;
  constexpr Rational(std::int64_t n) : num_(n), den_(1) {}  // NOLINT: implicit from integers is intended
  Rational(std::int64_t num, std::int64_t den);
  // num/den in lowest terms, or nullopt when that does not fit 64 bits. den == 0 → PB_CHECK.
  static std::optional<Rational> try_make(internal::int128 num, internal::int128 den);

  [[nodiscard]] constexpr std::int64_t num() const noexcept { return num_; }
  [[nodiscard]] constexpr std::int64_t den() const noexcept { return den_; }
  [[nodiscard]] constexpr bool is_integer() const noexcept { return den_ == 1; }
  [[nodiscard]] double to_double() const noexcept { return static_cast<double>(num_) / static_cast<double>(den_); }

  // Largest integer <= *this, smallest integer >= *this.
  [[nodiscard]] std::int64_t floor() const noexcept;
  [[nodiscard]] std::int64_t ceil() const noexcept;

  // "p/q" in lowest terms, or "p" when integral.
  [[nodiscard]] std::string str() const;
  // Exact and short: "p" when integral, a terminating decimal of at most max_decimals (0..18)
  // fraction digits when there is one ("2.6", "-0.125"), else str() ("7/3"). parse() reads it
  // back exactly for max_decimals <= 12.
  [[nodiscard]] std::string decimal_str(int max_decimals) const;

  // Parses "3", "-2", "1.8", "0.125", "9/5", "1e-3" is refused. Decimals: at most 12 fraction
  // digits, 18 digits in all; str() parses back. InputError naming `what` (a front end passes
  // the name its user typed) on malformed text, a zero denominator, NaN/inf, or magnitude
  // beyond 10^12.
  static Rational parse(std::string_view text, std::string_view what = "value");
  // The exact value of a finite double with at most 12 significant fraction digits (rounded to
  // 1e-12; from 1000 in magnitude on, to 15 significant digits in all, what a double holds).
  // Throws InputError on NaN/inf or magnitude beyond 10^12.
  static Rational from_double(double x, std::string_view what = "value");

  friend Rational operator+(const Rational& a, const Rational& b);
  friend Rational operator-(const Rational& a, const Rational& b);
  friend Rational operator*(const Rational& a, const Rational& b);
  friend Rational operator/(const Rational& a, const Rational& b);
  friend Rational operator-(const Rational& a) { return Rational::raw(-a.num_, a.den_); }
  Rational& operator+=(const Rational& b) { return *this = *this + b; }
  Rational& operator-=(const Rational& b) { return *this = *this - b; }
  Rational& operator*=(const Rational& b) { return *this = *this * b; }
  Rational& operator/=(const Rational& b) { return *this = *this / b; }

  friend bool operator==(const Rational& a, const Rational& b) noexcept = default;
  friend std::strong_ordering operator<=>(const Rational& a, const Rational& b) noexcept;

 private:
  static constexpr Rational raw(std::int64_t n, std::int64_t d) noexcept {
    Rational r;
    r.num_ = n;
    r.den_ = d;
    return r;
  }
  static Rational make(internal::int128 n, internal::int128 d);

  std::int64_t num_ = 0;
  std::int64_t den_ = 1;
};

// lcm of two positive rationals a = p/q, b = r/s: the smallest positive rational that is an
// integer multiple of both (lcm(p*s, r*q) / (q*s)). Bruck §2.5 uses lcm(1, λ).
Rational lcm(const Rational& a, const Rational& b);

}  // namespace postbox
