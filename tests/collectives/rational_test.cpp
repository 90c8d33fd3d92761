#include "postbox/collectives/rational.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

TEST(Rational, NormalisesSignAndGcd) {
  const Rational a(6, -4);
  EXPECT_EQ(a.num(), -3);
  EXPECT_EQ(a.den(), 2);
  EXPECT_EQ(a.str(), "-3/2");
  EXPECT_EQ(Rational(4, 2).str(), "2");
  EXPECT_TRUE(Rational(4, 2).is_integer());
}

TEST(Rational, FloorAndCeilRoundTowardsInfinities) {
  EXPECT_EQ(Rational(7, 2).floor(), 3);
  EXPECT_EQ(Rational(7, 2).ceil(), 4);
  EXPECT_EQ(Rational(-7, 2).floor(), -4);
  EXPECT_EQ(Rational(-7, 2).ceil(), -3);
  EXPECT_EQ(Rational(3).floor(), 3);
  EXPECT_EQ(Rational(3).ceil(), 3);
}

TEST(Rational, ArithmeticAndOrder) {
  const Rational a(1, 3), b(1, 6);
  EXPECT_EQ(a + b, Rational(1, 2));
  EXPECT_EQ(a - b, Rational(1, 6));
  EXPECT_EQ(a * b, Rational(1, 18));
  EXPECT_EQ(a / b, Rational(2));
  EXPECT_LT(b, a);
  EXPECT_GT(Rational(-1, 2), Rational(-2, 3));
}

struct ParseCase {
  const char* text;
  std::int64_t num, den;
};
class RationalParse : public testing::TestWithParam<ParseCase> {};
TEST_P(RationalParse, ParsesExactly) {
  const auto& c = GetParam();
  const Rational r = Rational::parse(c.text);
  EXPECT_EQ(r.num(), c.num) << c.text;
  EXPECT_EQ(r.den(), c.den) << c.text;
}
INSTANTIATE_TEST_SUITE_P(Texts, RationalParse,
                         testing::Values(ParseCase{"1.8", 9, 5}, ParseCase{"9/5", 9, 5}, ParseCase{"3", 3, 1},
                                         ParseCase{"-2", -2, 1}, ParseCase{"0.125", 1, 8}, ParseCase{"-0.5", -1, 2},
                                         ParseCase{"1.293", 1293, 1000}, ParseCase{".5", 1, 2}));

class RationalParseBad : public testing::TestWithParam<const char*> {};
TEST_P(RationalParseBad, ThrowsInputError) { EXPECT_THROW((void)Rational::parse(GetParam(), "--x"), InputError); }
INSTANTIATE_TEST_SUITE_P(Texts, RationalParseBad,
                         testing::Values("", "abc", "1e-3", "1/0", "nan", "inf", "1.2.3", "1/", "/2", "1.0000000000001",
                                         "10000000000000"));

// Found by the rational fuzz target: 18 digits of a decimal overflowed 64 bits (an abort), and
// str() of an accepted value (2560.000000000001) did not parse back.
TEST(Rational, ParseBoundsDigitsAndReadsBackWhatStrPrints) {
  EXPECT_THROW((void)Rational::parse("999999999999.999999999999", "--x"), InputError);
  EXPECT_EQ(Rational::parse("999999.999999999999", "--x"), Rational(999999999999999999, 1000000000000));
  for (const char* text : {"2560.000000000001", "-0.000000000001", "999999.999999999999", "1999983999999/2"}) {
    const Rational r = Rational::parse(text, "--x");
    EXPECT_EQ(Rational::parse(r.str(), "--x"), r) << text;
  }
  EXPECT_THROW((void)Rational::parse("1000000000001/1", "--x"), InputError);
  EXPECT_THROW((void)Rational::parse("1000000000000.99999", "--x"), InputError);
  EXPECT_EQ(Rational::parse("-1000000000000.000", "--x"), Rational(-1000000000000));
  EXPECT_THROW((void)Rational::parse("1/1000000000000000001", "--x"), InputError);
}

// parse.hpp's one leniency rule: a '-' only, never '+', no spaces.
TEST(Rational, ParseTakesNoPlusSignAndNoSpaces) {
  for (const char* text : {"+5", "+2.5", "+9/5", "9/+5", " 5", "5 ", "2. 5", "- 5"}) {
    EXPECT_THROW((void)Rational::parse(text, "--lambda"), InputError) << text;
  }
  EXPECT_EQ(Rational::parse("-2.5", "x"), Rational(-5, 2));
  EXPECT_EQ(Rational::parse("-9/5", "x"), Rational(-9, 5));
}

TEST(Rational, FromDoubleRefusesNonFinite) {
  EXPECT_THROW((void)Rational::from_double(std::numeric_limits<double>::quiet_NaN()), InputError);
  EXPECT_THROW((void)Rational::from_double(std::numeric_limits<double>::infinity()), InputError);
  EXPECT_EQ(Rational::from_double(1.8), Rational(9, 5));
  // Large magnitudes round to fewer decimals instead of overflowing 64 bits (PB_CHECK abort
  // before; found by the rational fuzz target).
  EXPECT_EQ(Rational::from_double(315535737.8), Rational(1577678689, 5));
  EXPECT_EQ(Rational::from_double(-999999999999.5), Rational(-1999999999999, 2));
  EXPECT_THROW((void)Rational::from_double(1.5e12), InputError);
}

// Bruck §2.5: lcm(1, 1.8) = 9 and f = lcm/λ = 5.
TEST(Rational, LcmOfOneAndLambda) {
  EXPECT_EQ(lcm(Rational(1), Rational(9, 5)), Rational(9));
  EXPECT_EQ(lcm(Rational(1), Rational(9, 5)) / Rational(9, 5), Rational(5));
  EXPECT_EQ(lcm(Rational(1), Rational(2)), Rational(2));
  EXPECT_EQ(lcm(Rational(1, 2), Rational(1, 3)), Rational(1));
}

// try_make: the 128-bit fraction in lowest terms, or nullopt (never an abort) where that leaves
// 64 bits, so that arithmetic on values a user gave can refuse them.
TEST(Rational, TryMakeRefusesWhatLeaves64Bits) {
  EXPECT_EQ(Rational::try_make(6, -4), Rational(-3, 2));
  const internal::int128 big = internal::int128{1} << 70;
  EXPECT_EQ(Rational::try_make(big, big * 3), Rational(1, 3));
  EXPECT_FALSE(Rational::try_make(big, 3).has_value());
  EXPECT_FALSE(Rational::try_make(1, big + 1).has_value());
  EXPECT_FALSE(Rational::try_make(std::numeric_limits<std::int64_t>::min(), 1).has_value());
}

// decimal_str: the integer, a terminating decimal within max_decimals, else p/q; parse() reads it
// back; a numerator whose scaled value leaves 64 bits still prints exactly.
TEST(Rational, DecimalStrIsExactAndShort) {
  EXPECT_EQ(Rational(7).decimal_str(3), "7");
  EXPECT_EQ(Rational(13, 5).decimal_str(3), "2.6");
  EXPECT_EQ(Rational(-1, 8).decimal_str(3), "-0.125");
  EXPECT_EQ(Rational(1, 16).decimal_str(3), "1/16");
  EXPECT_EQ(Rational(1, 16).decimal_str(12), "0.0625");
  EXPECT_EQ(Rational(10, 3).decimal_str(12), "10/3");
  for (const Rational x : {Rational(17, 8), Rational(-3, 1024), Rational(10, 3), Rational(123456789, 1000)})
    EXPECT_EQ(Rational::parse(x.decimal_str(12)), x) << x.str();
  EXPECT_EQ(Rational(9'000'000'000'000'000'001, 8).decimal_str(12), "1125000000000000000.125");
}

}  // namespace
}  // namespace postbox
