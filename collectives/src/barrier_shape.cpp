#include "postbox/collectives/barrier_shape.hpp"

#include <algorithm>

#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox {

namespace {

struct NameOf {
  BarrierAlgorithm algorithm;
  const char* name;
};
constexpr NameOf kNames[] = {
    {BarrierAlgorithm::central, "central"}, {BarrierAlgorithm::dissemination, "dissemination"},
    {BarrierAlgorithm::combine, "combine"}, {BarrierAlgorithm::mcs, "mcs"},
    {BarrierAlgorithm::tournament, "tournament"}, {BarrierAlgorithm::fibo, "fibo"},
    {BarrierAlgorithm::hier, "hier"},
};

// A tree with the same parent relation and every children list reversed.
Tree reversed(Tree t) {
  for (auto& c : t.children) std::reverse(c.begin(), c.end());
  t.recompute_times();
  return t;
}

}  // namespace

const char* to_string(BarrierAlgorithm algorithm) noexcept {
  for (const NameOf& x : kNames) {
    if (x.algorithm == algorithm) return x.name;
  }
  return "?";
}

std::optional<BarrierAlgorithm> parse_barrier_algorithm(std::string_view name) {
  for (const NameOf& x : kNames) {
    if (name == x.name) return x.algorithm;
  }
  return std::nullopt;
}

BarrierShape::Family barrier_family(BarrierAlgorithm algorithm) noexcept {
  switch (algorithm) {
    case BarrierAlgorithm::central: return BarrierShape::Family::central;
    case BarrierAlgorithm::dissemination:
    case BarrierAlgorithm::combine: return BarrierShape::Family::rounds;
    case BarrierAlgorithm::mcs:
    case BarrierAlgorithm::tournament:
    case BarrierAlgorithm::fibo:
    case BarrierAlgorithm::hier: return BarrierShape::Family::tree;
  }
  return BarrierShape::Family::tree;
}

std::int64_t barrier_max_send_rounds(BarrierAlgorithm algorithm, int n, const SendRecv& send_recv) {
  if (barrier_family(algorithm) != BarrierShape::Family::rounds) return 0;
  // For each integer λ a rebuild may pick, N_λ grows with t, so fewer participants need no more
  // send rounds than n do.
  std::int64_t m0 = barrier_shape(algorithm, n, send_recv).m;
  if (algorithm == BarrierAlgorithm::combine) {
    const Rational lambda = send_recv.lambda();
    for (const std::int64_t L : {lambda.floor(), lambda.ceil()}) {
      std::int64_t t = 0;
      while (N_lambda(Rational(L), Rational(t)) < n) ++t;
      m0 = std::max(m0, std::max<std::int64_t>(0, t - L + 1));
    }
  }
  return std::max<std::int64_t>(1, m0);
}

BarrierShape barrier_shape(BarrierAlgorithm algorithm, int n, const SendRecv& send_recv, const Topology* topology,
                           const std::vector<int>* placement, const HierLevels* levels) {
  if (n < 1) throw InputError("barrier: p must be at least 1, got " + std::to_string(n));
  BarrierShape s;
  s.algorithm = algorithm;
  s.family = barrier_family(algorithm);
  s.n = n;
  auto tree = [&](const char* spec) { return build_tree(ShapeSpec::parse(spec), n, 0, send_recv); };
  switch (algorithm) {
    case BarrierAlgorithm::central:
      s.arrival = tree("flat");
      s.wakeup = s.arrival;
      break;
    case BarrierAlgorithm::dissemination:
    case BarrierAlgorithm::combine: {
      if (algorithm == BarrierAlgorithm::dissemination) {
        s.lambda = 1;
        s.variant = "integer";
      } else {
        const PostalChoice c = choose_postal(send_recv.lambda(), n);
        s.lambda = c.L;
        s.variant = c.variant;
      }
      const Rational L(s.lambda);
      while (N_lambda(L, Rational(s.t)) < n) ++s.t;
      s.m = std::max<std::int64_t>(0, s.t - s.lambda + 1);
      for (std::int64_t j = 1; j <= s.m; ++j) s.offset.push_back(N_lambda(L, Rational(j + s.lambda - 2)) % n);
      break;
    }
    case BarrierAlgorithm::mcs:
      s.arrival = tree("kary:4");
      s.wakeup = tree("binary");
      break;
    case BarrierAlgorithm::tournament:
      // The binomial tree lists v's children largest subtree first (its broadcast send order:
      // v + 1 heads the largest). So the matches in increasing round order (the smallest
      // subtree, whose winner is known first, first) are the reversed lists, and the wake-up in
      // reverse round order (the last round's loser first) is the broadcast order itself.
      s.wakeup = tree("binomial");
      s.match_per_child = true;
      s.arrival = reversed(s.wakeup);
      break;
    case BarrierAlgorithm::fibo:
      s.arrival = tree("binomial");
      s.wakeup = tree("fibo");
      break;
    case BarrierAlgorithm::hier:
      if (levels != nullptr) {
        s.wakeup = build_hier_tree({}, levels->groups, n, 0, send_recv, levels->models);
      } else {
        if (topology == nullptr || placement == nullptr) throw InputError("barrier hier needs a topology and a placement");
        s.wakeup = build_tree(ShapeSpec::parse("hier"), n, 0, send_recv, topology, placement);
      }
      // Arrival: the nearest subtrees first (the reverse of the wake-up's send order, which
      // serves the other classes' leaders before its own class).
      s.arrival = reversed(s.wakeup);
      break;
  }
  return s;
}

std::int64_t barrier_messages(const BarrierShape& shape) {
  if (shape.family == BarrierShape::Family::rounds) return static_cast<std::int64_t>(shape.n) * shape.m;
  return 2 * static_cast<std::int64_t>(shape.n - 1);
}

}  // namespace postbox
