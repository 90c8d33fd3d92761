// libFuzzer target: exact rationals (rational.hpp: Rational::parse), the text of --lambda, --s,
// --r, --alpha and lambda:ALPHA. What it accepts is within 10^12 in magnitude, prints as text
// that parses back to the same value, and feeds the send/receive model without overflow.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/tree.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using postbox::Rational;
  const std::string_view text = postbox::fuzz::text_of(data, size);
  Rational r;
  try {
    r = Rational::parse(text, "--lambda");
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
    return 0;
  }
  if (r.den() < 1) postbox::fuzz::violation("accepted a rational with denominator " + std::to_string(r.den()));
  if (std::fabs(r.to_double()) > 1e12) postbox::fuzz::violation("accepted " + r.str() + ", beyond 10^12");
  const Rational back = Rational::parse(r.str(), "str()");
  if (back != r) postbox::fuzz::violation("'" + r.str() + "' parses back as " + back.str());
  if (r.floor() > r.ceil() || r.ceil() - r.floor() > 1) postbox::fuzz::violation("floor/ceil of " + r.str());
  // The same value through a double (from_double rounds to 1e-12): never UB, exact for integers.
  try {
    const Rational d = Rational::from_double(r.to_double(), "double");
    if (r.is_integer() && d != r) postbox::fuzz::violation("from_double(" + r.str() + ") = " + d.str());
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
  }
  // λ as `tree --lambda` uses it: s = 1, r = λ − 1; refused below 1.
  try {
    const postbox::SendRecv m = postbox::SendRecv::from_lambda(r);
    if (m.lambda() != r) postbox::fuzz::violation("from_lambda(" + r.str() + ").lambda() = " + m.lambda().str());
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
    if (r >= Rational(1)) postbox::fuzz::violation("from_lambda refused " + r.str() + " >= 1: " + e.what());
  }
  return 0;
}
