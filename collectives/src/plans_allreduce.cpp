// Allreduce (global combine) plans: the postal-model algorithm of Bruck et al. §3 with the
// deficiency ε for any n (derivation: docs/global-combine.md), recursive doubling and
// reduce-then-broadcast.
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "plans_internal.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox {

PostalSchedule postal_schedule(std::int64_t n, std::int64_t L) {
  PB_CHECK(n >= 1 && L >= 1, "postal_schedule: n >= 1 and L >= 1");
  PostalSchedule s;
  s.L = L;
  // Plain N_L(r) of Bruck eq. 1 until it reaches n: t = T_L(n).
  std::vector<std::int64_t> plain{1};
  while (plain.back() < n) {
    const auto r = static_cast<std::int64_t>(plain.size());
    plain.push_back(r < L ? 1 : plain[static_cast<std::size_t>(r - 1)] + plain[static_cast<std::size_t>(r - L)]);
  }
  s.t = static_cast<std::int64_t>(plain.size()) - 1;
  // ε_k = 1 lowers N(t) by N(t − k − L) (the recursion is linear); choose the ε greedily,
  // largest effect first, to remove δ = N_L(t) − n. Greedy is exact because
  // Σ_{m<M} N(m) >= N(M) − 1 for this recursion (docs/global-combine.md).
  std::int64_t delta = plain.back() - n;
  if (s.t >= L) {
    s.eps.assign(static_cast<std::size_t>(s.t - L + 1), 0);
    for (std::int64_t k = 0; k <= s.t - L; ++k) {
      const std::int64_t effect = plain[static_cast<std::size_t>(s.t - k - L)];
      if (effect <= delta) {
        s.eps[static_cast<std::size_t>(k)] = 1;
        delta -= effect;
      }
    }
  }
  PB_CHECK(delta == 0, "postal_schedule: deficiency not representable");
  s.N.assign(static_cast<std::size_t>(s.t + 1), 1);
  for (std::int64_t r = L; r <= s.t; ++r) {
    s.N[static_cast<std::size_t>(r)] =
        s.N[static_cast<std::size_t>(r - 1)] + s.N[static_cast<std::size_t>(r - L)] - s.eps[static_cast<std::size_t>(r - L)];
  }
  PB_CHECK(s.N.back() == n, "postal_schedule: N_eps(t) != n");
  return s;
}

PostalChoice choose_postal(const Rational& lambda, std::int64_t n) {
  validate_lambda(lambda);
  if (lambda.is_integer()) return {lambda.num(), "integer"};
  const Rational recv_time = T_delay_receive(lambda, n);
  const Rational send_time = T_delay_send(lambda, n);
  if (send_time < recv_time) return {lambda.floor(), "delay-send"};
  return {lambda.ceil(), "delay-recv"};
}

namespace internal {
namespace {

// Exchanges bigger than this are ordered (lower rank sends first) so that two streaming sends
// never wait on each other through rings smaller than the message.
constexpr std::uint64_t kOrderedExchangeBytes = 1024;

std::int64_t mod(std::int64_t a, std::int64_t n) { return ((a % n) + n) % n; }

// Bruck §3 with deficiency: after round r, T_i = d_i ⊕ … ⊕ d_{i+N(r)−1} and S_i = d_{i+1} ⊕ … ⊕
// d_{i+N(r)−1} (indices mod n). In round s (1 <= s <= t−L+1) rank j sends T_j (ε_{s−1} = 0)
// or S_j (ε_{s−1} = 1), its value after round s−1, to j − N(s+L−2) + ε_{s−1}; in round R
// (L <= R <= t) rank i receives X from i + N(R−1) − ε_{R−L} and sets T_i ← T_i ⊕ X,
// S_i ← S_i ⊕ X. An empty S (N = 1 and ε = 1) is never sent: that message is skipped.
// The integer latency the rounds are built for, and how the emulator charges the idles that
// make a non-integer λ behave as that L (Bruck §3.2–3.3; Pacing in plan.hpp).
struct PostalVariant {
  std::int64_t L = 1;
  Pacing pacing = Pacing::none;
};

Plan build_postal_L(const PlanRequest& req, PostalVariant v) {
  require_elements(req);
  const std::int64_t L = v.L;
  const std::int64_t n = req.p;
  const auto b = static_cast<std::uint64_t>(req.bytes);
  const PostalSchedule sc = postal_schedule(n, L);
  PlanDraft d(req, -1);
  Plan& plan = d.plan();
  plan.needs_commutative = true;  // the windows wrap around rank n−1
  plan.pacing = v.pacing;
  if (v.pacing != Pacing::none) plan.pacing_latency = static_cast<std::uint32_t>(L);
  // With pacing, each op carries its round r (send: starts no earlier than round r; receive:
  // completes no earlier than round r's end).
  const auto round = [&](std::int64_t r) { return v.pacing == Pacing::none ? 0U : static_cast<std::uint32_t>(r); };
  const Region T = user(0, b), S = scratch(0, b);
  const Region slots[2] = {scratch(b, b), scratch(2 * b, b)};
  for (std::int64_t i = 0; i < n; ++i) {
    const int rank = static_cast<int>(i);
    plan.scratch_bytes[static_cast<std::size_t>(i)] = 3 * b;
    std::int64_t s_len = 0;  // |S_i| in contributions
    int next_slot = 0;
    for (std::int64_t r = 1; r <= sc.t; ++r) {
      if (r <= sc.t - L + 1) {
        const std::int64_t k = r - 1;
        const int e = sc.eps[static_cast<std::size_t>(k)];
        const std::int64_t len = sc.N[static_cast<std::size_t>(k)] - e;
        if (len > 0) {
          const auto to = static_cast<int>(mod(i - sc.N[static_cast<std::size_t>(r + L - 2)] + e, n));
          PB_CHECK(to != rank, "postal: self send");
          d.send(rank, to, e == 0 ? T : S, round(r));
        }
      }
      if (r >= L) {
        const std::int64_t k = r - L;
        const int e = sc.eps[static_cast<std::size_t>(k)];
        const std::int64_t len = sc.N[static_cast<std::size_t>(k)] - e;
        if (len > 0) {
          const auto from = static_cast<int>(mod(i + sc.N[static_cast<std::size_t>(r - 1)] - e, n));
          PB_CHECK(from != rank, "postal: self receive");
          const Region X = slots[next_slot];
          next_slot ^= 1;
          d.recv(rank, from, X, round(r));
          d.reduce(rank, T, X, false);
          if (s_len == 0) d.copy(rank, S, X);
          else d.reduce(rank, S, X, false);
          s_len += len;
        }
        PB_CHECK(s_len + 1 == sc.N[static_cast<std::size_t>(r)], "postal: window bookkeeping");
      }
    }
  }
  return d.finish();
}

PostalVariant postal_L(const PlanRequest& req, const std::string& variant) {
  const Rational lambda = model_of(req).lambda();
  validate_lambda(lambda);
  if (lambda > Rational(1 << 20)) throw InputError("lambda must be at most 2^20 for the postal allreduce");
  if (lambda.is_integer()) return {lambda.num(), Pacing::none};
  if (variant == "postal-delay-recv") return {lambda.ceil(), Pacing::delay_receive};
  if (variant == "postal-delay-send") return {lambda.floor(), Pacing::delay_send};
  const PostalChoice c = choose_postal(lambda, req.p);
  return {c.L, c.variant == "delay-send" ? Pacing::delay_send : Pacing::delay_receive};
}

// Rank-ordered recursive doubling for any p: the first 2·rem ranks fold pairwise (even into
// odd), the remaining power of two exchange with partners at distance 1, 2, 4 …, and the folded
// ranks get the result back. Every rank's value is always a contiguous rank interval, and the
// lower interval is combined on the left, so ⊕ need not commute.
Plan build_recursive_doubling(const PlanRequest& req) {
  require_elements(req);
  const int p = req.p;
  const auto b = static_cast<std::uint64_t>(req.bytes);
  PlanDraft d(req, -1);
  Plan& plan = d.plan();
  const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
  const int rem = p - pof2;
  const Region U = user(0, b), X = scratch(0, b);
  auto real_rank = [&](int nr) { return nr < rem ? 2 * nr + 1 : nr + rem; };
  for (int r = 0; r < p; ++r) {
    plan.scratch_bytes[static_cast<std::size_t>(r)] = b;
    int newrank = -1;
    if (r < 2 * rem) {
      if (r % 2 == 0) {
        d.send(r, r + 1, U);
        d.recv(r, r + 1, U);
        continue;
      }
      d.recv(r, r - 1, X);
      d.reduce(r, U, X, true);
      newrank = r / 2;
    } else {
      newrank = r - rem;
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int np = newrank ^ mask;
      const int partner = real_rank(np);
      const bool lower = np < newrank;  // partner's interval lies left of ours
      if (b > kOrderedExchangeBytes && lower) {
        d.recv(r, partner, X);
        d.send(r, partner, U);
      } else {
        d.send(r, partner, U);
        d.recv(r, partner, X);
      }
      d.reduce(r, U, X, lower);
    }
    if (r < 2 * rem) d.send(r, r - 1, U);
  }
  return d.finish();
}

Plan build_reduce_bcast(const PlanRequest& req) {
  require_elements(req);
  const IntervalTree t = interval_tree(req.p, 0);
  PlanDraft d(req, -1);
  append_interval_reduce(d, t, static_cast<std::uint64_t>(req.bytes), 0);
  append_tree_bcast(d, t.parent, t.children, static_cast<std::uint64_t>(req.bytes));
  return d.finish();
}

}  // namespace

void register_allreduce_plans() {
  register_plan_builder("allreduce", "postal",
                        "Bruck 3: postal-model global combine, any n (deficiency); non-integer lambda: delay-recv or "
                        "delay-send by the break-even rule; commutative operators only",
                        [](const PlanRequest& r) { return build_postal_L(r, postal_L(r, "postal")); });
  register_plan_builder("allreduce", "postal-delay-recv", "postal global combine with lambda treated as ceil(lambda)",
                        [](const PlanRequest& r) { return build_postal_L(r, postal_L(r, "postal-delay-recv")); });
  register_plan_builder("allreduce", "postal-delay-send",
                        "postal global combine with sends idled to lambda/floor(lambda) (runs as floor(lambda))",
                        [](const PlanRequest& r) { return build_postal_L(r, postal_L(r, "postal-delay-send")); });
  register_plan_builder("allreduce", "recursive-doubling",
                        "recursive doubling with folding for any p; rank-ordered, any associative operator",
                        build_recursive_doubling);
  register_plan_builder("allreduce", "reduce-bcast",
                        "binomial (interval) reduce to rank 0, then broadcast; rank-ordered, any associative operator",
                        build_reduce_bcast);
}

}  // namespace internal
}  // namespace postbox
