// Private: the send/receive model in integer time quanta, shared by postal.cpp and tree.cpp.
//
// s = S·q and r = R·q for one quantum q = q_num/q_den and coprime-by-gcd integers S >= 1,
// R >= 0. For Bruck's λ = p/q (s = 1, r = λ − 1) this is his §2.5 scaling: S = f = q and
// S + R = lcm(1, λ) = p. Every activation time is an integer number of quanta, so builders and
// completion checks run on int64 and convert to Rational once at the end.
#pragma once

#include <cstdint>
#include <vector>

#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/tree.hpp"

namespace postbox::internal {

struct Quanta {
  std::int64_t s = 1;
  std::int64_t r = 0;
  std::int64_t q_num = 1;
  std::int64_t q_den = 1;
  [[nodiscard]] Rational to_time(std::int64_t quanta) const {
    if (q_den == 1 && q_num == 1) return Rational(quanta);
    return Rational(quanta) * Rational(q_num, q_den);
  }
};

// Validates s > 0, r >= 0 (InputError) and expresses them in quanta.
Quanta to_quanta(const SendRecv& model);

// N'(0..len-1) in quanta: 1 below s + r, then N'(k − s) + N'(k − s − r); saturating.
// Stops early (shorter result) once an entry reaches `stop_at`.
std::vector<std::int64_t> quanta_table(const Quanta& q, std::int64_t len, std::int64_t stop_at);

std::int64_t sat_add(std::int64_t a, std::int64_t b);

}  // namespace postbox::internal
