// Private: the send/receive model in integer time quanta, shared by postal.cpp and tree.cpp.
//
// s = S·q and r = R·q for one quantum q = q_num/q_den and coprime-by-gcd integers S >= 1,
// R >= 0. For Bruck's λ = p/q (s = 1, r = λ − 1) this is his §2.5 scaling: S = f = q and
// S + R = lcm(1, λ) = p. Every activation time is an integer number of quanta, so builders and
// completion checks run on int64 and convert to Rational once at the end.
//
// Parsing bounds s and r, not the times built from them: p − 1 sends of an s given with 18
// digits leave 64 bits. Every sum of quanta here is checked (add, child), and so is the
// conversion to a Rational (time): a tree whose exact times do not fit is refused with an
// InputError naming its shape and p, never computed wrong or aborted.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "postbox/collectives/postal.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/tree.hpp"

namespace postbox::internal {

// InputError unless n >= 1 (a tree or a table of n ranks).
void check_n(std::int64_t n);

// InputError: the exact times of `shape` over p ranks would overflow 64 bits.
[[noreturn]] void throw_times_overflow(std::string_view shape, std::int64_t p);

struct Quanta {
  std::int64_t s = 1;
  std::int64_t r = 0;
  std::int64_t q_num = 1;
  std::int64_t q_den = 1;
  // quanta · q_num/q_den exactly, or nullopt where that leaves 64 bits.
  [[nodiscard]] std::optional<Rational> try_time(int128 quanta) const;
  // The same, or throw_times_overflow(shape, p).
  [[nodiscard]] Rational time(std::int64_t quanta, std::string_view shape, std::int64_t p) const {
    if (q_den == 1 && q_num == 1) return Rational(quanta);
    if (const auto t = try_time(quanta)) return *t;
    throw_times_overflow(shape, p);
  }
  // a + b, or throw_times_overflow(shape, p) where the sum leaves 64 bits.
  [[nodiscard]] static std::int64_t add(std::int64_t a, std::int64_t b, std::string_view shape, std::int64_t p) {
    std::int64_t out = 0;
    if (__builtin_add_overflow(a, b, &out)) throw_times_overflow(shape, p);
    return out;
  }
  // a + i·s + r: the i-th child (from 1) of a node active at a; checked like add().
  [[nodiscard]] std::int64_t child(std::int64_t a, std::int64_t i, std::string_view shape, std::int64_t p) const {
    std::int64_t sends = 0;
    if (__builtin_mul_overflow(i, s, &sends)) throw_times_overflow(shape, p);
    return add(add(a, sends, shape, p), r, shape, p);
  }
};

// Validates s > 0, r >= 0 (InputError) and expresses them in quanta.
Quanta to_quanta(const SendRecv& model);

// N'(0..len-1) in quanta: 1 below s + r, then N'(k − s) + N'(k − s − r); saturating.
// Stops early (shorter result) once an entry reaches `stop_at`.
std::vector<std::int64_t> quanta_table(const Quanta& q, std::int64_t len, std::int64_t stop_at);

std::int64_t sat_add(std::int64_t a, std::int64_t b);

// alpha_lookup_table() for the model's λ = 1 + r/s = (S + R)/S, computed from the quanta: the
// table needs no time as a Rational (postal.hpp's version returns the same entries).
std::vector<AlphaTableEntry> alpha_lookup_table(const Quanta& q, std::int64_t n_max);

}  // namespace postbox::internal
