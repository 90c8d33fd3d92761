// Text → numbers, for every value a user types: CLI options, the explorer's API fields, model
// strings, list elements. One grammar and one set of messages everywhere, so `--p 010` means
// the same in every command.
//
// The one leniency rule, for every option, environment variable (POSTBOX_SPIN_NS, POSTBOX_S_NS
// ...), query parameter, model string and file field that holds a number: a number is written
// as typed, without spaces and without a '+' (a leading '-' only, where negatives mean
// something); the letters of a compound value are read in either case ("10x10" and "10X10",
// "1e-3" and "1E-3"); nothing else is forgiven. Rational::parse (collectives/rational.hpp)
// follows it for exact values.
//
// Integers: an optional '-' then decimal digits. "010" is ten; "0x10", "+3", " 3", "3.0",
// "1e3" and "" are refused. Reals: decimal or scientific notation ("0.5", "2e-3"); "nan",
// "inf", hex floats and values that overflow a double are refused. Lists: elements separated
// by `sep`; an empty element (",,", a leading or trailing separator, or "") is refused.
//
// Every failure is an InputError that names `what` (e.g. "--p") and quotes the text as typed,
// never a converted or clamped value: "--p must be at most 65536, got 4294967298".
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

namespace postbox {

// lo <= value <= hi, or InputError "WHAT must be at least LO, got TEXT" ("must not be negative"
// when LO is 0) / "WHAT must be at most HI, got TEXT".
std::int64_t parse_int(std::string_view text, std::string_view what,
                       std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t hi = std::numeric_limits<std::int64_t>::max());

// 0 <= value <= hi; a minus sign is refused ("WHAT must not be negative, got -1").
std::uint64_t parse_uint(std::string_view text, std::string_view what,
                         std::uint64_t hi = std::numeric_limits<std::uint64_t>::max());

// A finite double (range checks are the caller's, quoting the same text).
double parse_real(std::string_view text, std::string_view what);

// The elements of a `sep`-separated list, each non-empty (views into `text`).
std::vector<std::string_view> split_list(std::string_view text, char sep, std::string_view what);

}  // namespace postbox
