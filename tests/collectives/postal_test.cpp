#include "postbox/collectives/postal.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

// ---- brute force references -----------------------------------------------------------------

// Eq. 1 evaluated literally on the quantum grid: λ = p/q, N'(k) = N'(k − q) + N'(k − p) for
// k >= p, else 1 — memoised recursion, independent of the closed form and of the table.
std::int64_t eq1_brute(std::int64_t p, std::int64_t q, std::int64_t k, std::map<std::int64_t, std::int64_t>& memo) {
  if (k < 0) return 0;
  if (k < p) return 1;
  if (auto it = memo.find(k); it != memo.end()) return it->second;
  const std::int64_t v = eq1_brute(p, q, k - q, memo) + eq1_brute(p, q, k - p, memo);
  memo[k] = v;
  return v;
}

// The optimal broadcast time over all trees in the send/receive model, in quanta: the root's first
// child heads some subtree of n − n' nodes (active after s + r), and the root goes on with n'
// nodes from time s. This covers every tree, so it is the exact optimum.
std::vector<std::int64_t> optimum_dp(std::int64_t s, std::int64_t r, int n_max) {
  std::vector<std::int64_t> opt(static_cast<std::size_t>(n_max + 1), 0);
  for (int n = 2; n <= n_max; ++n) {
    std::int64_t best = std::numeric_limits<std::int64_t>::max();
    for (int n1 = 1; n1 < n; ++n1) {
      best = std::min(best, std::max(s + opt[static_cast<std::size_t>(n1)], s + r + opt[static_cast<std::size_t>(n - n1)]));
    }
    opt[static_cast<std::size_t>(n)] = best;
  }
  return opt;
}

struct LambdaCase {
  const char* text;
  std::int64_t p, q;  // λ = p/q
};
const LambdaCase kLambdas[] = {{"1", 1, 1},   {"2", 2, 1},     {"3", 3, 1},       {"1.8", 9, 5},   {"1.95", 39, 20},
                               {"2.5", 5, 2}, {"4/3", 4, 3},   {"1.293", 1293, 1000}, {"7", 7, 1}, {"1.05", 21, 20}};

class PostalByLambda : public testing::TestWithParam<LambdaCase> {
 protected:
  Rational lambda() const { return Rational::parse(GetParam().text); }
};

TEST_P(PostalByLambda, ClosedFormMatchesEq1AndTheScaledTable) {
  const auto& c = GetParam();
  const auto table = N_scaled_table(lambda(), 40 * c.q);
  std::map<std::int64_t, std::int64_t> memo;
  for (std::int64_t k = 0; k <= 40 * c.q; k += (c.q > 20 ? 7 : 1)) {
    const std::int64_t brute = eq1_brute(c.p, c.q, k, memo);
    EXPECT_EQ(N_lambda(lambda(), Rational(k, c.q)), brute) << "t = " << k << "/" << c.q;
    EXPECT_EQ(table[static_cast<std::size_t>(k)], brute);
  }
  EXPECT_EQ(N_lambda(lambda(), Rational(-1, 3)), 0);
}

TEST_P(PostalByLambda, TIsTheInverseOfN) {
  for (std::int64_t n = 1; n <= 500; ++n) {
    const Rational t = T_lambda(lambda(), n);
    EXPECT_GE(N_lambda(lambda(), t), n);
    // Nothing earlier works: the previous change point is below n.
    const auto steps = N_lambda_steps(lambda(), t);
    ASSERT_EQ(steps.back().t, t);
    if (steps.size() > 1) {
      EXPECT_LT(steps[steps.size() - 2].N, n);
    }
  }
}

TEST_P(PostalByLambda, TEqualsTheBruteForceOptimum) {
  const auto& c = GetParam();
  // s = 1 and r = λ − 1 in quanta of 1/q: s = q, r = p − q.
  const auto opt = optimum_dp(c.q, c.p - c.q, 160);
  for (int n = 1; n <= 160; ++n) EXPECT_EQ(T_lambda(lambda(), n), Rational(opt[static_cast<std::size_t>(n)], c.q)) << n;
}

TEST_P(PostalByLambda, RealOverloadsAgreeWithExact) {
  const double l = lambda().to_double();
  for (std::int64_t n : {1, 2, 3, 7, 64, 100, 1000, 123456}) {
    EXPECT_NEAR(T_lambda_real(l, n), T_lambda(lambda(), n).to_double(), 1e-9) << n;
  }
}

TEST_P(PostalByLambda, AlphaRangesAreExactlyTheOptimalSplits) {
  const auto& c = GetParam();
  const auto opt = optimum_dp(c.q, c.p - c.q, 200);
  const auto ranges = alpha_ranges(lambda(), 200);
  ASSERT_EQ(ranges.size(), 199U);
  for (const AlphaRange& a : ranges) {
    const auto n = a.n;
    EXPECT_EQ(a.t, Rational(opt[static_cast<std::size_t>(n)], c.q));
    for (std::int64_t n1 = 1; n1 < n; ++n1) {
      const bool optimal = std::max(c.q + opt[static_cast<std::size_t>(n1)],
                                    c.p + opt[static_cast<std::size_t>(n - n1)]) == opt[static_cast<std::size_t>(n)];
      EXPECT_EQ(optimal, a.n_min <= n1 && n1 <= a.n_max) << "n = " << n << " n' = " << n1;
    }
    const AlphaRange single = alpha_range(lambda(), n);
    EXPECT_EQ(single.n_min, a.n_min);
    EXPECT_EQ(single.n_max, a.n_max);
  }
}

TEST_P(PostalByLambda, LookUpTableGivesALegalAlphaForEveryN) {
  const auto table = alpha_lookup_table(lambda(), 5000);
  const auto tops = triangle_tops(lambda(), 5000);
  ASSERT_FALSE(table.empty());
  EXPECT_LE(table.size(), tops.size());
  EXPECT_GE(table.back().n_upper, 5000);
  for (const AlphaRange& a : alpha_ranges(lambda(), 5000)) {
    const Rational alpha = alpha_lookup(table, a.n);
    EXPECT_GT(alpha, Rational(0));
    EXPECT_LT(alpha, Rational(1));
    EXPECT_LE(a.round_lo(), alpha) << a.n;
    EXPECT_LT(alpha, a.round_hi()) << a.n;
  }
}

TEST_P(PostalByLambda, CordsenFEqualsNInUnitsOfS) {
  const Rational l = lambda();
  for (const Rational s : {Rational(1), Rational(3), Rational(2, 7)}) {
    const Rational r = (l - Rational(1)) * s;
    for (std::int64_t i = 0; i <= 60; ++i) {
      const Rational t = Rational(i, 4) * s;
      EXPECT_EQ(fibo_f(s, r, t), N_lambda(l, t / s));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Lambdas, PostalByLambda, testing::ValuesIn(kLambdas),
                         [](const testing::TestParamInfo<LambdaCase>& i) {
                           return "p" + std::to_string(i.param.p) + "q" + std::to_string(i.param.q);
                         });

// ---- the papers' numbers ----------------------------------------------------------------------

TEST(Postal, Lambda2IsFibonacci) {
  const std::int64_t expect[] = {1, 1, 2, 3, 5, 8, 13, 21, 34};
  for (int t = 0; t < 9; ++t) EXPECT_EQ(N_lambda(Rational(2), Rational(t)), expect[t]);
  for (int t = 0; t < 40; ++t) EXPECT_EQ(N_lambda(Rational(1), Rational(t)), std::int64_t{1} << t);
}

TEST(Postal, Lambda2N8TakesFiveSteps) { EXPECT_EQ(T_lambda(Rational(2), 8), Rational(5)); }

TEST(Postal, Bruck16UsesTreesOfSizes1To21) {
  // §2.3: for λ = 2, n = 16 the bottom-up construction builds 1, 2, 3, 5, 8, 13 and stops at 21.
  const auto steps = N_lambda_steps(Rational(2), T_lambda(Rational(2), 16));
  std::vector<std::int64_t> sizes;
  for (const auto& s : steps) sizes.push_back(s.N);
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{1, 2, 3, 5, 8, 13, 21}));
}

TEST(Postal, AlphaRangeN13IsTheSinglePartition8And5) {
  const AlphaRange a = alpha_range(Rational(2), 13);
  EXPECT_EQ(a.n_min, 8);
  EXPECT_EQ(a.n_max, 8);
  EXPECT_TRUE(a.is_top());
  EXPECT_EQ(a.alpha_min(), Rational(8, 13));
  // "7.5/13 <= α < 8.5/13"
  EXPECT_EQ(a.round_lo(), Rational(15, 26));
  EXPECT_EQ(a.round_hi(), Rational(17, 26));
}

TEST(Postal, AlphaRangeN14IsPartitions6And8To13And1) {
  const AlphaRange a = alpha_range(Rational(2), 14);
  EXPECT_EQ(a.t, Rational(7));
  EXPECT_EQ(a.n_min, 6);   // (6, 8)
  EXPECT_EQ(a.n_max, 13);  // (13, 1)
  EXPECT_EQ(N_lambda(Rational(2), a.t) - 14, 7);  // Δ = 21 − 14
  EXPECT_FALSE(a.is_top());
}

TEST(Postal, Lambda18ScalesByFiveWithLcmNine) {
  const PostalScale sc = postal_scale(Rational(9, 5));
  EXPECT_EQ(sc.f, 5);
  EXPECT_EQ(sc.u, 9);
  // N_λ(t) = N'(5t), N'(t') = N'(t' − 5) + N'(t' − 9).
  const auto table = N_scaled_table(Rational(9, 5), 100);
  for (int t = 0; t <= 20; ++t) EXPECT_EQ(table[static_cast<std::size_t>(5 * t)], N_lambda(Rational(9, 5), Rational(t)));
  for (int k = 9; k <= 100; ++k) {
    EXPECT_EQ(table[static_cast<std::size_t>(k)], table[static_cast<std::size_t>(k - 5)] + table[static_cast<std::size_t>(k - 9)]);
  }
}

// Table 1.
TEST(Postal, GammaMatchesTable1ToThreeDecimals) {
  const double printed[] = {2.000, 1.618, 1.466, 1.380, 1.325, 1.285, 1.255, 1.232, 1.213, 1.197};
  for (int l = 1; l <= 10; ++l) {
    const double g = gamma_lambda(l);
    EXPECT_NEAR(g, printed[l - 1], 0.0005) << "lambda " << l;
    EXPECT_NEAR(std::pow(g, l), std::pow(g, l - 1) + 1.0, 1e-12);
  }
  // Any real λ, and the growth of N: N(t + 1)/N(t) → γ.
  EXPECT_NEAR(gamma_lambda(1.8), static_cast<double>(N_lambda(Rational(9, 5), Rational(61))) /
                                     static_cast<double>(N_lambda(Rational(9, 5), Rational(60))),
              1e-3);
  EXPECT_NEAR(gamma_lambda(3.0), 1.46557123, 1e-8);  // Cordsen Fig. 6: s = 1, r = 2 → "about 1.47"
}

// Table 2.
TEST(Postal, BreakEvenMatchesTable2ToThreeDecimals) {
  const double printed[] = {1.440, 2.518, 3.558, 4.584, 5.604, 6.618, 7.630, 8.640, 9.649};
  for (int k = 1; k <= 9; ++k) EXPECT_NEAR(break_even_lambda(k), printed[k - 1], 0.0005) << "floor " << k;
  // Below the break-even delay-send is faster (asymptotically), above it delay-receive.
  EXPECT_LT(T_delay_send_asymptotic(1.3, 1 << 20), T_delay_receive_asymptotic(1.3, 1 << 20));
  EXPECT_GT(T_delay_send_asymptotic(1.6, 1 << 20), T_delay_receive_asymptotic(1.6, 1 << 20));
}

TEST(Postal, CombineTimesExact) {
  // λ = 2.5: delay-receive runs as λ = 3, delay-send as λ = 2 with sends of 1.25.
  EXPECT_EQ(T_delay_receive(Rational(5, 2), 13), T_lambda(Rational(3), 13));
  EXPECT_EQ(T_delay_send(Rational(5, 2), 13), Rational(5, 4) * T_lambda(Rational(2), 13));
  EXPECT_EQ(T_delay_send(Rational(5, 2), 13), Rational(15, 2));
  // Integer λ: both are T_λ.
  EXPECT_EQ(T_delay_receive(Rational(3), 100), T_lambda(Rational(3), 100));
  EXPECT_EQ(T_delay_send(Rational(3), 100), T_lambda(Rational(3), 100));
}

TEST(Postal, CordsenSequenceForS1R3) {
  // §3.2 prints 1, 1, 1, 1, 2, 3, 4, 5, 7, 10, 14, 19, 25, 36, 50, 69; eq. 2 gives 26 at t = 12
  // (19 + 7), and the printed 36 = 26 + 10 agrees with 26 (docs/postal-model.md).
  const std::vector<std::int64_t> expect{1, 1, 1, 1, 2, 3, 4, 5, 7, 10, 14, 19, 26, 36, 50, 69};
  EXPECT_EQ(fibo_f_table(Rational(1), Rational(3), 15), expect);
  EXPECT_EQ(fibo_steps(Rational(1), Rational(3), 64), 15);
  EXPECT_EQ(fibo_steps(Rational(1), Rational(1), 8), 5);
  EXPECT_EQ(fibo_f_table(Rational(1), Rational(0), 10).back(), 1024);
  // Cordsen's measured s = 27, r = 88: the same growth as λ = 115/27.
  EXPECT_EQ(fibo_time(Rational(27), Rational(88), 19), Rational(27) * T_lambda(Rational(115, 27), 19));
}

TEST(Postal, SaturatesInsteadOfOverflowing) {
  EXPECT_EQ(N_lambda(Rational(1), Rational(100)), kNSaturated);
  EXPECT_EQ(N_lambda(Rational(2), Rational(1000)), kNSaturated);
  EXPECT_EQ(N_lambda(Rational(1), Rational(62)), std::int64_t{1} << 62);
  EXPECT_EQ(T_lambda(Rational(1), std::int64_t{1} << 62), Rational(62));
}

TEST(Postal, BadInputThrows) {
  EXPECT_THROW((void)N_lambda(Rational(1, 2), Rational(3)), InputError);
  EXPECT_THROW((void)T_lambda(Rational(2), 0), InputError);
  EXPECT_THROW((void)T_lambda(Rational(0), 5), InputError);
  EXPECT_THROW((void)gamma_lambda(0.9), InputError);
  EXPECT_THROW((void)gamma_lambda(std::numeric_limits<double>::quiet_NaN()), InputError);
  EXPECT_THROW((void)gamma_lambda(std::numeric_limits<double>::infinity()), InputError);
  EXPECT_THROW((void)T_lambda_real(std::numeric_limits<double>::quiet_NaN(), 4), InputError);
  EXPECT_THROW((void)alpha_range(Rational(2), 1), InputError);
  EXPECT_THROW((void)fibo_f_table(Rational(0), Rational(1), 5), InputError);
  EXPECT_THROW((void)fibo_f_table(Rational(1), Rational(-1), 5), InputError);
  EXPECT_THROW((void)break_even_lambda(0), InputError);
  EXPECT_THROW((void)SendRecv::from_lambda(Rational(99, 100)), InputError);
}

// λ = 1 + 1/123456789123456789, the λ of s = 123456789.123456789 and r = 10^-9: T_λ(1000) is
// 2 + 8λ, but on the way there the Rational times a + kλ left 64 bits and aborted. The
// arithmetic in ticks of 1/Q finds it, its change points and its α ranges.
TEST(Postal, LongDenominatorsDoNotAbort) {
  const Rational lambda(123456789123456790, 123456789123456789);
  const Rational t = T_lambda(lambda, 1000);
  EXPECT_EQ(t, Rational(2) + Rational(8) * lambda);
  EXPECT_GE(N_lambda(lambda, t), 1000);
  EXPECT_LT(N_lambda(lambda, Rational(2) + Rational(7) * lambda), 1000);
  const auto steps = N_lambda_steps(lambda, t);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back().t, t);
  for (const NStep& st : steps) EXPECT_EQ(st.N, N_lambda(lambda, st.t));
  const AlphaRange range = alpha_range(lambda, 1000);
  EXPECT_EQ(range.t, t);
  EXPECT_LE(range.n_min, range.n_max);
  EXPECT_FALSE(alpha_lookup_table(lambda, 1000).empty());
  // f(t) and Cordsen's time for the s and r themselves: s·T_λ(1000) = 10·s + 8·r.
  const Rational s = Rational::parse("123456789.123456789"), r = Rational::parse("0.000000001");
  EXPECT_EQ(fibo_time(s, r, 1000), Rational(1234567891234567898, 1000000000));
  EXPECT_EQ(fibo_f(s, r, fibo_time(s, r, 1000)), N_lambda(lambda, t));
}

// A result that does not fit 64 bits is an InputError: with Q near 10^18, T_λ(1000) = 2 + 8λ
// has a numerator near 10^19. So is f(t) with t/s beyond 64 bits, which saturates instead.
TEST(Postal, ResultsBeyond64BitsAreInputErrors) {
  const Rational lambda(1000000000000000000, 999999999999999999);
  EXPECT_THROW((void)T_lambda(lambda, 1000), InputError);
  EXPECT_THROW((void)alpha_range(lambda, 1000), InputError);
  EXPECT_EQ(T_lambda(lambda, 2), lambda);
  EXPECT_EQ(fibo_f(Rational(1, 1000000000000000000), Rational(1), Rational(100000)), kNSaturated);
}

// ---- constructions ------------------------------------------------------------------------------

class Constructions : public testing::TestWithParam<LambdaCase> {};

TEST_P(Constructions, GreedyAndBottomUpAreOptimalAndConsistent) {
  const Rational lambda = Rational::parse(GetParam().text);
  const SendRecv model = SendRecv::from_lambda(lambda);
  for (int n : {1, 2, 3, 5, 8, 13, 14, 20, 64, 100, 257, 1000}) {
    const Tree g = greedy_two_queue_tree(n, model);
    EXPECT_EQ(g.completion, T_lambda(lambda, n)) << n;
    Tree g2 = g;
    g2.recompute_times();
    EXPECT_EQ(g2.time, g.time);
    const LambdaTreeTable table = LambdaTreeTable::build(n, model);
    EXPECT_EQ(table.completion(), T_lambda(lambda, n));
    const Tree b = table.materialize();
    EXPECT_EQ(b.completion, T_lambda(lambda, n));
    Tree b2 = b;
    b2.recompute_times();
    EXPECT_EQ(b2.time, b.time);
    for (int v = 0; v < n; v += std::max(1, n / 37)) {
      EXPECT_EQ(table.parent(v), b.parent[static_cast<std::size_t>(v)]);
      EXPECT_EQ(table.time(v), b.time[static_cast<std::size_t>(v)]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Lambdas, Constructions, testing::ValuesIn(kLambdas),
                         [](const testing::TestParamInfo<LambdaCase>& i) {
                           return "p" + std::to_string(i.param.p) + "q" + std::to_string(i.param.q);
                         });

TEST(Constructions, BottomUpTableIsLogarithmic) {
  // O(f·log n): the table for λ = 2 and n = 10^6 has T + 1 = 30 entries (N_2(29) = 832040 < 10^6).
  const LambdaTreeTable t = LambdaTreeTable::build(1'000'000, SendRecv::from_lambda(Rational(2)));
  EXPECT_EQ(t.table_size(), static_cast<std::size_t>(T_lambda(Rational(2), 1'000'000).num() + 1));
  EXPECT_EQ(t.completion(), Rational(30));
  const LambdaTreeTable t18 = LambdaTreeTable::build(1'000'000, SendRecv::from_lambda(Rational(9, 5)));
  EXPECT_EQ(t18.table_size(), static_cast<std::size_t>((Rational(5) * T_lambda(Rational(9, 5), 1'000'000)).num() + 1));
}

TEST(Constructions, TooFineADenominatorIsAnInputError) {
  const SendRecv model = SendRecv::from_lambda(Rational::parse("1.000000000001"));
  EXPECT_THROW((void)LambdaTreeTable::build(1000, model), InputError);
  // The closed form has no such limit.
  EXPECT_EQ(T_lambda(Rational::parse("1.000000000001"), 1024), Rational::parse("10.00000000001"));
}

}  // namespace
}  // namespace postbox

namespace postbox {
namespace {

// Regression: two long coprime denominators overflowed the common time quantum
// (signed overflow, then a wrong table); now refused with a message.
TEST(Quanta, CommonDenominatorBeyond64BitsIsRefused) {
  const Rational s(1, 999'999'999'989), r(1, 999'999'999'959);
  EXPECT_THROW((void)fibo_time(s, r, 5), InputError);
  EXPECT_NO_THROW((void)fibo_time(Rational(1, 1000), Rational(3, 7), 5));
}

}  // namespace
}  // namespace postbox
