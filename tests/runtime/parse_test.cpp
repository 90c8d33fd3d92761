// parse.hpp: one grammar for every typed number, and messages that quote what was typed.
#include "postbox/runtime/parse.hpp"

#include <gtest/gtest.h>

#include <string>

#include "postbox/runtime/check.hpp"

#include "input_error.hpp"

namespace postbox {
namespace {

using testing_support::input_error_of;

TEST(ParseInt, DecimalOnlyLeadingZerosAreDecimal) {
  EXPECT_EQ(parse_int("010", "--p"), 10);
  EXPECT_EQ(parse_int("-7", "--x"), -7);
  EXPECT_EQ(parse_int("0", "--x"), 0);
  EXPECT_EQ(parse_int("9223372036854775807", "--x"), INT64_MAX);
  EXPECT_EQ(parse_int("-9223372036854775808", "--x"), INT64_MIN);
}

TEST(ParseInt, RefusesEverythingElse) {
  for (const char* bad : {"0x10", "+3", " 3", "3 ", "3.0", "1e3", "", "-", "--3", "3-", "٣", "0b1", "nan"}) {
    EXPECT_EQ(input_error_of([&] { parse_int(bad, "--p"); }), std::string("--p must be an integer, got '") + bad + "'") << bad;
  }
}

TEST(ParseInt, BoundsQuoteTheTypedText) {
  EXPECT_EQ(input_error_of([] { parse_int("4294967298", "--p", 1, 65536); }), "--p must be at most 65536, got 4294967298");
  EXPECT_EQ(input_error_of([] { parse_int("0", "--p", 1, 65536); }), "--p must be at least 1, got 0");
  EXPECT_EQ(input_error_of([] { parse_int("-5", "--bytes", 0, 10); }), "--bytes must not be negative, got -5");
  // Beyond 64 bits: still a number the user typed, reported against the bound, not saturated.
  EXPECT_EQ(input_error_of([] { parse_int("99999999999999999999999", "--p", 1, 8); }),
            "--p must be at most 8, got 99999999999999999999999");
  EXPECT_EQ(input_error_of([] { parse_int("-99999999999999999999999", "--p", 1, 8); }),
            "--p must be at least 1, got -99999999999999999999999");
}

TEST(ParseUint, FullRangeAndNoSign) {
  EXPECT_EQ(parse_uint("18446744073709551615", "--seed"), UINT64_MAX);
  EXPECT_EQ(parse_uint("007", "--seed"), 7u);
  EXPECT_EQ(input_error_of([] { parse_uint("18446744073709551616", "--seed"); }),
            "--seed must be at most 18446744073709551615, got 18446744073709551616");
  EXPECT_EQ(input_error_of([] { parse_uint("-1", "--seed"); }), "--seed must not be negative, got -1");
  EXPECT_EQ(input_error_of([] { parse_uint("+1", "--seed"); }), "--seed must be an unsigned integer, got '+1'");
  EXPECT_EQ(input_error_of([] { parse_uint("5", "--seed", 4); }), "--seed must be at most 4, got 5");
}

TEST(ParseReal, FiniteDecimalsAndExponents) {
  EXPECT_DOUBLE_EQ(parse_real("0.5", "--h"), 0.5);
  EXPECT_DOUBLE_EQ(parse_real("2e-3", "--h"), 0.002);
  EXPECT_DOUBLE_EQ(parse_real("-1", "--h"), -1.0);
  EXPECT_DOUBLE_EQ(parse_real("1e-300", "--h"), 1e-300);
  for (const char* bad : {"nan", "inf", "-inf", "infinity"}) {
    EXPECT_EQ(input_error_of([&] { parse_real(bad, "--h"); }), std::string("--h must be a finite number, got '") + bad + "'");
  }
  EXPECT_EQ(input_error_of([] { parse_real("1e999", "--h"); }), "--h must be a number within the range of a double, got '1e999'");
  for (const char* bad : {"", "0x1p3", "1,5", " 1", "+1", "1.5.2", "e3"}) {
    EXPECT_EQ(input_error_of([&] { parse_real(bad, "--h"); }), std::string("--h must be a number, got '") + bad + "'") << bad;
  }
}

TEST(SplitList, RefusesEmptyElements) {
  const auto v = split_list("8,16,32", ',', "--sizes");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[1], "16");
  EXPECT_EQ(split_list("x", ',', "--sizes").size(), 1u);
  for (const char* bad : {"", ",", "1,,2", ",1", "1,"}) {
    EXPECT_NE(input_error_of([&] { (void)split_list(bad, ',', "--sizes"); }).find("--sizes has an empty element"),
              std::string::npos)
        << bad;
  }
}

// check.hpp: InputError's what() is one line, even when the text it quotes holds line breaks
// (parsers quote the text as typed: "--p 1<newline>2" gave two lines).
TEST(InputErrorMessage, IsOneLineWhateverItQuotes) {
  EXPECT_EQ(input_error_of([] { (void)parse_int("1\n2", "--p"); }), "--p must be an integer, got '1 2'");
  EXPECT_EQ(input_error_of([] { (void)parse_real("\r\n", "--alpha"); }), "--alpha must be a number, got '  '");
  EXPECT_STREQ(InputError("a\nb\r").what(), "a b ");
  EXPECT_STREQ(InputError(std::string("one line")).what(), "one line");
}

// check.hpp's echo rule: control characters other than line breaks and tabs are written as \xNN
// (an ANSI escape in a value cannot reach the terminal); a word longer than kMaxEchoedWord keeps
// its first 44 and last 23 characters around "..."; the rule applied twice changes nothing.
TEST(InputErrorMessage, EchoesControlCharactersEscapedAndLongValuesShortened) {
  EXPECT_EQ(one_line("got '\x1b[31mred\x1b[0m'"), "got '\\x1b[31mred\\x1b[0m'");
  EXPECT_EQ(one_line(std::string("a\0b\x7f\tc", 6)), "a\\x00b\\x7f c");
  const std::string value(100'000, 'x');
  const std::string line = input_error_of([&] { (void)parse_int("9" + value + "7", "--p"); });
  EXPECT_EQ(line, "--p must be an integer, got '9" + std::string(42, 'x') + "..." + std::string(21, 'x') + "7'");
  EXPECT_LE(line.size(), 200U);
  const std::string exact(kMaxEchoedWord, 'y');
  EXPECT_EQ(one_line(exact + " z"), exact + " z");
  EXPECT_EQ(one_line(one_line(line)), line);
  EXPECT_EQ(one_line(one_line("\x1b\x01")), "\\x1b\\x01");
}

// check.hpp's FieldError: what() writes each field as its bare name, render(prefix) after the
// prefix; both are one line by the echo rule; a value that looks like a field stays a value.
TEST(FieldErrorMessage, NamesFieldsBareOrAsTheFrontEndSpellsThem) {
  const FieldError e({{"unknown "}, FieldError::field("algo"), {" 'ring\n{op}' for "}, FieldError::field("op"), {" bcast"}});
  EXPECT_EQ(std::string(e.what()), "unknown algo 'ring {op}' for op bcast");  // the line break: a space
  EXPECT_EQ(e.render("--"), "unknown --algo 'ring {op}' for --op bcast");
  const FieldError broken({FieldError::field("mesh"), {" got '\x1b[31m'\n"}});
  EXPECT_EQ(std::string(broken.what()), one_line("mesh got '\x1b[31m'\n"));
  EXPECT_EQ(broken.render("--"), one_line("--mesh got '\x1b[31m'\n"));
  EXPECT_EQ(e.render([](const std::string& f) { return "\"" + f + "\""; }), "unknown \"algo\" 'ring {op}' for \"op\" bcast");
  const InputError& as_input = e;  // caught as any InputError, it still reads as one line
  EXPECT_EQ(std::string(as_input.what()).find('\n'), std::string::npos);
}

}  // namespace
}  // namespace postbox
