#include "postbox/collectives/tree.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <string>

#include "postbox/collectives/postal.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"
#include "quanta.hpp"

namespace postbox {

SendRecv SendRecv::from_lambda(const Rational& lambda) {
  validate_lambda(lambda);
  return SendRecv{Rational(1), lambda - Rational(1)};
}

Rational SendRecv::lambda() const {
  // 1 + r/s = (s + r)/s with 128-bit terms: valid s and r of 64-bit fractions can make a λ whose
  // numerator does not fit.
  const internal::int128 den = internal::int128{s.num()} * r.den();
  if (const auto l = Rational::try_make(den + internal::int128{r.num()} * s.den(), den)) return *l;
  throw InputError("lambda = 1 + r/s for s = " + s.str() + " and r = " + r.str() +
                   " would overflow 64 bits; give s and r with fewer decimals");
}

namespace {

constexpr int kMaxK = kMaxKaryDegree;
constexpr int kMaxP = 1 << 26;

int parse_k(std::string_view text, std::string_view whole) {
  int k = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, k);
  if (text.empty() || ec != std::errc() || ptr != end || k < 1 || k > kMaxK) {
    throw InputError("kary:K needs an integer K in 1.." + std::to_string(kMaxK) + ", got '" + std::string(whole) + "'");
  }
  return k;
}

Rational parse_alpha(std::string_view text) {
  const Rational a = Rational::parse(text, "alpha");
  if (a <= Rational(0) || a >= Rational(1)) throw InputError("alpha must lie in (0, 1), got " + a.str());
  return a;
}

}  // namespace

ShapeSpec ShapeSpec::parse(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view head = text.substr(0, colon);
  const std::string_view arg = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  const bool has_arg = colon != std::string_view::npos;
  ShapeSpec spec;
  auto no_arg = [&](Kind k) {
    if (has_arg) throw InputError("shape '" + std::string(head) + "' takes no parameter, got '" + std::string(text) + "'");
    spec.kind = k;
    return spec;
  };
  if (head == "flat") return no_arg(Kind::flat);
  if (head == "binary") return no_arg(Kind::binary);
  if (head == "binomial") return no_arg(Kind::binomial);
  if (head == "greedy") return no_arg(Kind::greedy);
  if (head == "fibo") return no_arg(Kind::fibo);
  if (head == "kary") {
    if (!has_arg) throw InputError("shape kary needs a degree, e.g. kary:8");
    spec.kind = Kind::kary;
    spec.k = parse_k(arg, text);
    return spec;
  }
  if (head == "lambda") {
    spec.kind = Kind::lambda;
    if (has_arg && arg != "auto") spec.alpha = parse_alpha(arg);
    return spec;
  }
  if (head == "hier") {
    spec.kind = Kind::hier;
    if (has_arg) {
      std::size_t pos = 0;
      while (true) {
        const std::size_t comma = arg.find(',', pos);
        const std::string_view part = arg.substr(pos, comma == std::string_view::npos ? arg.npos : comma - pos);
        if (part.empty()) throw InputError("empty level in shape '" + std::string(text) + "'");
        ShapeSpec inner;
        try {
          inner = ShapeSpec::parse(part);
        } catch (const InputError& e) {
          throw InputError("level '" + std::string(part) + "' of shape '" + std::string(text) + "': " + e.what());
        }
        if (inner.kind == Kind::hier) throw InputError("hier levels cannot themselves be hier: '" + std::string(text) + "'");
        spec.levels.push_back(std::move(inner));
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
      }
    }
    return spec;
  }
  throw InputError("unknown shape '" + std::string(text) +
                   "' (known: flat, binary, kary:K, binomial, lambda[:ALPHA|auto], greedy, fibo, hier[:S1,S2,...])");
}

std::string ShapeSpec::name() const {
  switch (kind) {
    case Kind::flat: return "flat";
    case Kind::binary: return "binary";
    case Kind::kary: return "kary:" + std::to_string(k);
    case Kind::binomial: return "binomial";
    case Kind::lambda: return alpha ? "lambda:" + alpha->str() : "lambda";
    case Kind::greedy: return "greedy";
    case Kind::fibo: return "fibo";
    case Kind::hier: {
      std::string s = "hier";
      for (std::size_t i = 0; i < levels.size(); ++i) {
        s.push_back(i == 0 ? ':' : ',');
        s.append(levels[i].name());
      }
      return s;
    }
  }
  return "?";
}

void Tree::recompute_times() {
  const auto np = static_cast<std::size_t>(p);
  PB_CHECK(p >= 1 && parent.size() == np && children.size() == np, "tree arrays sized p");
  PB_CHECK(root >= 0 && root < p && parent[static_cast<std::size_t>(root)] == -1, "root has no parent");
  const internal::Quanta q = internal::to_quanta(model);
  std::vector<std::int64_t> act(np, -1);
  act[static_cast<std::size_t>(root)] = 0;
  std::vector<int> stack{root};
  std::size_t reached = 1;
  while (!stack.empty()) {
    const auto v = static_cast<std::size_t>(stack.back());
    stack.pop_back();
    std::int64_t i = 0;
    for (int c : children[v]) {
      ++i;
      PB_CHECK(c >= 0 && c < p && act[static_cast<std::size_t>(c)] == -1, "each rank is reached once");
      act[static_cast<std::size_t>(c)] = q.child(act[v], i, shape, p);
      ++reached;
      stack.push_back(c);
    }
  }
  PB_CHECK(reached == np, "the tree spans every rank");
  time.clear();
  time.reserve(np);
  std::int64_t done = 0;
  for (std::int64_t a : act) {
    time.push_back(q.time(a, shape, p));
    done = std::max(done, a);
  }
  completion = q.time(done, shape, p);
}

namespace {

// A tree over virtual ranks 0..p-1 rooted at 0: children lists in send order.
using Children = std::vector<std::vector<int>>;

Children build_flat(int p) {
  Children ch(static_cast<std::size_t>(p));
  for (int v = 1; v < p; ++v) ch[0].push_back(v);
  return ch;
}

Children build_kary(int p, int k) {
  Children ch(static_cast<std::size_t>(p));
  for (int v = 1; v < p; ++v) ch[static_cast<std::size_t>((v - 1) / k)].push_back(v);
  return ch;
}

// Recursive doubling: in round j every v < 2^j sends to v + 2^j. v's children are v + 2^j for
// 2^j > v in increasing j, so the first child heads the largest subtree.
Children build_binomial(int p) {
  Children ch(static_cast<std::size_t>(p));
  for (int v = 0; v < p; ++v) {
    std::int64_t bit = 1;
    while (bit <= v) bit <<= 1;
    for (; v + bit < p; bit <<= 1) ch[static_cast<std::size_t>(v)].push_back(static_cast<int>(v + bit));
  }
  return ch;
}

// n' = max(1, min(round(α·n), n − 1)), round half up, exactly: floor((2·a·n + b) / 2b) for α = a/b.
std::int64_t split(const Rational& alpha, std::int64_t n) {
  const internal::int128 num = internal::int128{2} * alpha.num() * n + alpha.den();
  const auto r = static_cast<std::int64_t>(num / (internal::int128{2} * alpha.den()));
  return std::max<std::int64_t>(1, std::min(r, n - 1));
}

// Bruck §2.4 bcast(S, n, s, m, α): S' = the first n' ranks (keeps the source), S'' = the rest
// with its first rank as leader; the source's first send goes to that leader.
Children build_lambda(int p, const std::optional<Rational>& alpha, const SendRecv& model) {
  Children ch(static_cast<std::size_t>(p));
  std::vector<AlphaTableEntry> table;
  if (!alpha && p > 1) table = internal::alpha_lookup_table(internal::to_quanta(model), p);
  std::vector<std::pair<int, int>> stack{{0, p}};  // (first rank, size)
  while (!stack.empty()) {
    auto [lo, n] = stack.back();
    stack.pop_back();
    while (n > 1) {
      const auto n1 = static_cast<int>(split(alpha ? *alpha : alpha_lookup(table, n), n));
      ch[static_cast<std::size_t>(lo)].push_back(lo + n1);
      stack.emplace_back(lo + n1, n - n1);
      n = n1;
    }
  }
  return ch;
}

// Cordsen et al. Fig. 8, in time quanta. Each call roots a subtree of `p` ranks at `id` with the
// other p − 1 laid out in pool order from `first`, and removes the rem = f(steps) − p surplus
// only from nodes that would be notified in the last step. Two corrections to the printed code:
// line 7 reads pop[i-s] + pop[i-r] where eq. 2 needs pop[i-s] + pop[i-s-r], and the table is
// built once instead of capped at 1024 entries.
void fibo_rec(const std::vector<std::int64_t>& pop, const internal::Quanta& q, std::int64_t p, int id, int first,
              Children& ch) {
  if (p <= 1) return;
  std::int64_t steps = 0;
  while (pop[static_cast<std::size_t>(steps)] < p) ++steps;
  std::int64_t rem = pop[static_cast<std::size_t>(steps)] - p;
  std::vector<std::int64_t> sizes;
  for (std::int64_t i = 0;; ++i) {
    const std::int64_t k = steps - (i + 1) * q.s - q.r;
    if (k < 0) break;
    const std::int64_t last = k > 0 ? pop[static_cast<std::size_t>(k)] - pop[static_cast<std::size_t>(k - 1)] : 1;
    const std::int64_t cut = std::min(rem, last);
    sizes.push_back(pop[static_cast<std::size_t>(k)] - cut);
    rem -= cut;
  }
  PB_CHECK(rem == 0, "the Fibo-tree surplus fits in its last step");
  // Delegation (lines 26-35): the last child's subtree comes first in the pool.
  std::vector<int> root_of(sizes.size());
  int j = first;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) continue;
    root_of[i] = j;
    j += static_cast<int>(sizes[i]);
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) continue;
    ch[static_cast<std::size_t>(id)].push_back(root_of[i]);
    fibo_rec(pop, q, sizes[i], root_of[i], root_of[i] + 1, ch);
  }
}

Children build_fibo(int p, const SendRecv& model) {
  Children ch(static_cast<std::size_t>(p));
  const internal::Quanta q = internal::to_quanta(model);
  const auto pop = internal::quanta_table(q, kMaxTable + 2, p);
  fibo_rec(pop, q, p, 0, 1, ch);
  return ch;
}

Children build_virtual(const ShapeSpec& shape, int p, const SendRecv& model) {
  switch (shape.kind) {
    case ShapeSpec::Kind::flat: return build_flat(p);
    case ShapeSpec::Kind::binary: return build_kary(p, 2);
    case ShapeSpec::Kind::kary: return build_kary(p, shape.k);
    case ShapeSpec::Kind::binomial: return build_binomial(p);
    case ShapeSpec::Kind::lambda: return build_lambda(p, shape.alpha, model);
    case ShapeSpec::Kind::greedy: return greedy_two_queue_tree(p, model).children;
    case ShapeSpec::Kind::fibo: return build_fibo(p, model);
    case ShapeSpec::Kind::hier: break;
  }
  PB_CHECK(false, "hier is built over real ranks");
  return {};
}

void validate_spec(const ShapeSpec& shape) {
  if (shape.kind == ShapeSpec::Kind::kary && (shape.k < 1 || shape.k > kMaxK)) {
    throw InputError("kary:K needs K in 1.." + std::to_string(kMaxK) + ", got " + std::to_string(shape.k));
  }
  if (shape.kind == ShapeSpec::Kind::lambda && shape.alpha &&
      (*shape.alpha <= Rational(0) || *shape.alpha >= Rational(1))) {
    throw InputError("alpha must lie in (0, 1), got " + shape.alpha->str());
  }
  for (const ShapeSpec& l : shape.levels) {
    if (l.kind == ShapeSpec::Kind::hier) throw InputError("hier levels cannot themselves be hier");
    validate_spec(l);
  }
}

Tree finish(const ShapeSpec& shape, int p, int root, const SendRecv& model, Children ch) {
  Tree t;
  t.shape = shape.name();
  t.p = p;
  t.root = root;
  t.model = model;
  t.parent.assign(static_cast<std::size_t>(p), -1);
  t.children = std::move(ch);
  for (int v = 0; v < p; ++v) {
    for (int c : t.children[static_cast<std::size_t>(v)]) t.parent[static_cast<std::size_t>(c)] = v;
  }
  t.recompute_times();
  return t;
}

// hier over explicit groups: group[l][rank] names rank's class at level l (outermost first).
// models[l]: the s and r among the leaders of level l's classes (the last repeats: the innermost
// tree, whose members share every class, takes the last level's).
void hier_rec(const std::vector<std::vector<int>>& group, const std::vector<ShapeSpec>& shapes,
              const std::vector<SendRecv>& models, std::size_t level, std::vector<int> members, int leader,
              Children& ch) {
  const SendRecv& model = models[std::min(level, models.size() - 1)];
  if (members.size() <= 1) return;
  if (level == group.size()) {
    // Innermost: the members are indistinguishable; one tree over them.
    std::stable_partition(members.begin(), members.end(), [leader](int v) { return v == leader; });
    const ShapeSpec& s = shapes.empty() ? ShapeSpec{} : shapes[std::min(level, shapes.size() - 1)];
    const Children inner = build_virtual(s, static_cast<int>(members.size()), model);
    for (std::size_t v = 0; v < inner.size(); ++v) {
      for (int c : inner[v]) ch[static_cast<std::size_t>(members[v])].push_back(members[static_cast<std::size_t>(c)]);
    }
    return;
  }
  // Classes at this level in order of first appearance, the leader's class first.
  std::map<int, std::vector<int>> by_class;
  std::vector<int> order;
  const auto& g = group[level];
  const int leader_class = g[static_cast<std::size_t>(leader)];
  order.push_back(leader_class);
  for (int v : members) {
    const int c = g[static_cast<std::size_t>(v)];
    auto [it, fresh] = by_class.try_emplace(c);
    if (fresh && c != leader_class) order.push_back(c);
    it->second.push_back(v);
  }
  if (order.size() > 1) {
    std::vector<int> heads;
    for (int c : order) {
      const auto& cls = by_class[c];
      heads.push_back(c == leader_class ? leader : *std::min_element(cls.begin(), cls.end()));
    }
    const ShapeSpec& s = shapes.empty() ? ShapeSpec{} : shapes[std::min(level, shapes.size() - 1)];
    const Children inner = build_virtual(s, static_cast<int>(heads.size()), model);
    for (std::size_t v = 0; v < inner.size(); ++v) {
      for (int c : inner[v]) ch[static_cast<std::size_t>(heads[v])].push_back(heads[static_cast<std::size_t>(c)]);
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      hier_rec(group, shapes, models, level + 1, by_class[order[i]], heads[i], ch);
    }
  } else {
    hier_rec(group, shapes, models, level + 1, std::move(members), leader, ch);
  }
}

}  // namespace

Tree build_hier_tree(const std::vector<ShapeSpec>& level_shapes, const std::vector<std::vector<int>>& groups, int p,
                     int root, const SendRecv& model) {
  return build_hier_tree(level_shapes, groups, p, root, model, {});
}

Tree build_hier_tree(const std::vector<ShapeSpec>& level_shapes, const std::vector<std::vector<int>>& groups, int p,
                     int root, const SendRecv& model, const std::vector<SendRecv>& level_models) {
  if (p < 1 || p > kMaxP) throw InputError("p must be in 1.." + std::to_string(kMaxP) + ", got " + std::to_string(p));
  if (root < 0 || root >= p) throw InputError("root must be in 0.." + std::to_string(p - 1) + ", got " + std::to_string(root));
  (void)internal::to_quanta(model);
  ShapeSpec spec;
  spec.kind = ShapeSpec::Kind::hier;
  spec.levels = level_shapes;
  validate_spec(spec);
  for (const auto& g : groups) PB_CHECK(g.size() == static_cast<std::size_t>(p), "one group per rank at each level");
  for (const SendRecv& m : level_models) (void)internal::to_quanta(m);
  // Drop levels that do not refine the partition above them, so that a level's shape applies to
  // a real split (a box without L3 groups, or one NUMA node per package, has fewer levels). A
  // level's figures stay with it (eff_models).
  std::vector<std::vector<int>> eff;
  std::vector<SendRecv> eff_models;
  std::vector<int> prev(static_cast<std::size_t>(p), 0);
  for (std::size_t l = 0; l < groups.size(); ++l) {
    const auto& g = groups[l];
    std::map<std::pair<int, int>, int> combo;  // (class above, class here) → id
    std::vector<int> cur(static_cast<std::size_t>(p));
    for (int v = 0; v < p; ++v) {
      const auto key = std::make_pair(prev[static_cast<std::size_t>(v)], g[static_cast<std::size_t>(v)]);
      cur[static_cast<std::size_t>(v)] = combo.try_emplace(key, static_cast<int>(combo.size())).first->second;
    }
    std::map<int, int> above;
    for (int v = 0; v < p; ++v) above.try_emplace(prev[static_cast<std::size_t>(v)], 0);
    if (combo.size() > above.size()) {
      eff.push_back(cur);
      if (!level_models.empty()) eff_models.push_back(level_models[std::min(l, level_models.size() - 1)]);
    }
    prev = std::move(cur);
  }
  // The innermost tree (members that share every class) takes the last given level's figures.
  if (level_models.empty()) {
    eff_models.push_back(model);
  } else {
    eff_models.push_back(level_models.back());
  }
  Children ch(static_cast<std::size_t>(p));
  std::vector<int> all(static_cast<std::size_t>(p));
  for (int v = 0; v < p; ++v) all[static_cast<std::size_t>(v)] = v;
  hier_rec(eff, level_shapes, eff_models, 0, std::move(all), root, ch);
  return finish(spec, p, root, model, std::move(ch));
}

std::vector<std::vector<int>> topology_groups(const Topology& topology, const std::vector<int>& placement) {
  const int p = static_cast<int>(placement.size());
  // "distance <= k" is an equivalence (topology.hpp), so a class is named by its first member.
  std::vector<std::vector<int>> groups;
  for (int level = Topology::kSamePackage; level >= Topology::kSamePu; --level) {
    std::vector<int> g(static_cast<std::size_t>(p), -1);
    std::vector<int> reps;
    for (int v = 0; v < p; ++v) {
      const int pu = placement[static_cast<std::size_t>(v)];
      for (int rep : reps) {
        if (topology.distance(placement[static_cast<std::size_t>(rep)], pu) <= level) {
          g[static_cast<std::size_t>(v)] = rep;
          break;
        }
      }
      if (g[static_cast<std::size_t>(v)] == -1) {
        g[static_cast<std::size_t>(v)] = v;
        reps.push_back(v);
      }
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<std::vector<int>> cluster_groups(int processes, int threads, const std::vector<std::vector<int>>& inside) {
  if (processes < 1) throw InputError("processes must be at least 1, got " + std::to_string(processes));
  if (threads < 1) throw InputError("threads per process must be at least 1, got " + std::to_string(threads));
  if (static_cast<std::int64_t>(processes) * threads > kMaxP)
    throw InputError("processes x threads must be at most " + std::to_string(kMaxP));
  for (const auto& g : inside) PB_CHECK(g.size() == static_cast<std::size_t>(threads), "one class per thread at each level");
  const int p = processes * threads;
  std::vector<std::vector<int>> groups;
  std::vector<int> node(static_cast<std::size_t>(p));
  for (int v = 0; v < p; ++v) node[static_cast<std::size_t>(v)] = v / threads * threads;
  groups.push_back(std::move(node));
  for (const auto& g : inside) {
    std::vector<int> level(static_cast<std::size_t>(p));
    // Thread t of process q is in class (q, inside[t]), named by its first member's global rank.
    for (int v = 0; v < p; ++v) level[static_cast<std::size_t>(v)] = v / threads * threads + g[static_cast<std::size_t>(v % threads)];
    groups.push_back(std::move(level));
  }
  return groups;
}

Tree build_tree(const ShapeSpec& shape, int p, int root, const SendRecv& model, const Topology* topology,
                const std::vector<int>* placement) {
  if (p < 1 || p > kMaxP) throw InputError("p must be in 1.." + std::to_string(kMaxP) + ", got " + std::to_string(p));
  if (root < 0 || root >= p) throw InputError("root must be in 0.." + std::to_string(p - 1) + ", got " + std::to_string(root));
  (void)internal::to_quanta(model);
  validate_spec(shape);
  if (shape.kind == ShapeSpec::Kind::hier) {
    if (topology == nullptr || placement == nullptr) throw InputError("shape hier needs a topology and a placement");
    if (placement->size() != static_cast<std::size_t>(p)) throw InputError("placement must give one PU per rank");
    const std::vector<std::vector<int>> groups = topology_groups(*topology, *placement);
    Tree t = build_hier_tree(shape.levels, groups, p, root, model);
    return t;
  }
  Children virt = build_virtual(shape, p, model);
  if (root == 0) return finish(shape, p, root, model, std::move(virt));
  // Relabel virtual rank v as (v + root) mod p, so virtual 0 is the root.
  Children ch(static_cast<std::size_t>(p));
  for (int v = 0; v < p; ++v) {
    auto& dst = ch[static_cast<std::size_t>((v + root) % p)];
    for (int c : virt[static_cast<std::size_t>(v)]) dst.push_back((c + root) % p);
  }
  return finish(shape, p, root, model, std::move(ch));
}

// ---- the postal shapes built from the model: greedy and the λ-tree ----

namespace {
// Each node's activation time and the completion (the latest) from activations in quanta.
void set_times(Tree& tree, const internal::Quanta& q, const std::vector<std::int64_t>& act, std::string_view shape,
               std::int64_t n) {
  tree.time.reserve(act.size());
  std::int64_t done = 0;
  for (const std::int64_t a : act) {
    tree.time.push_back(q.time(a, shape, n));
    done = std::max(done, a);
  }
  tree.completion = q.time(done, shape, n);
}
}  // namespace

Tree greedy_two_queue_tree(int p, const SendRecv& model) {
  const internal::Quanta q = internal::to_quanta(model);
  if (p < 1) throw InputError("p must be at least 1, got " + std::to_string(p));
  struct Entry {
    int node;
    std::int64_t ready;
  };
  const auto np = static_cast<std::size_t>(p);
  std::vector<Entry> old_q, new_q;  // append-only with read heads: each stays sorted by `ready`
  old_q.reserve(np);
  new_q.reserve(np);
  std::size_t old_head = 0, new_head = 0;
  std::vector<std::int64_t> act(np, 0);
  Tree tree;
  tree.shape = "greedy";
  tree.p = p;
  tree.root = 0;
  tree.model = model;
  tree.parent.assign(np, -1);
  tree.children.assign(np, {});
  new_q.push_back({0, 0});
  for (int size = 1; size < p; ++size) {
    const bool take_old = old_head < old_q.size() &&
                          (new_head == new_q.size() || old_q[old_head].ready <= new_q[new_head].ready);
    const Entry e = take_old ? old_q[old_head++] : new_q[new_head++];
    const std::int64_t sent = internal::Quanta::add(e.ready, q.s, "greedy", p);
    const std::int64_t active = internal::Quanta::add(sent, q.r, "greedy", p);
    act[static_cast<std::size_t>(size)] = active;
    tree.parent[static_cast<std::size_t>(size)] = e.node;
    tree.children[static_cast<std::size_t>(e.node)].push_back(size);
    new_q.push_back({size, active});
    old_q.push_back({e.node, sent});
  }
  set_times(tree, q, act, "greedy", p);
  return tree;
}

LambdaTreeTable LambdaTreeTable::build(std::int64_t n, const SendRecv& model) {
  const internal::Quanta q = internal::to_quanta(model);
  internal::check_n(n);
  LambdaTreeTable t;
  t.n_ = n;
  t.s_ = q.s;
  t.r_ = q.r;
  t.quantum_num_ = q.q_num;
  t.quantum_den_ = q.q_den;
  t.model_ = model;
  t.table_ = internal::quanta_table(q, kMaxTable + 2, n);
  t.budget_ = static_cast<std::int64_t>(t.table_.size()) - 1;
  return t;
}

Rational LambdaTreeTable::completion() const {
  return internal::Quanta{s_, r_, quantum_num_, quantum_den_}.time(budget_, "lambda", n_);
}

namespace {
// One step of the implicit λ-tree walk: the node `lo` heads [lo, lo + size) with `budget`
// quanta left; it sends to the leader of S'' first (S' fully loaded).
struct Walk {
  std::int64_t lo, size, budget, ready;
};
}  // namespace

std::int64_t LambdaTreeTable::parent(std::int64_t v) const {
  PB_CHECK(v >= 0 && v < n_, "rank outside the tree");
  Walk w{0, n_, budget_, 0};
  std::int64_t par = -1;
  while (v != w.lo) {
    const std::int64_t n1 = std::min(table_[static_cast<std::size_t>(w.budget - s_)], w.size - 1);
    if (v >= w.lo + n1) {
      par = w.lo;
      w = Walk{w.lo + n1, w.size - n1, w.budget - s_ - r_, w.ready + s_ + r_};
    } else {
      w = Walk{w.lo, n1, w.budget - s_, w.ready + s_};
    }
  }
  return par;
}

Rational LambdaTreeTable::time(std::int64_t v) const {
  PB_CHECK(v >= 0 && v < n_, "rank outside the tree");
  Walk w{0, n_, budget_, 0};
  std::int64_t act = 0;
  while (v != w.lo) {
    const std::int64_t n1 = std::min(table_[static_cast<std::size_t>(w.budget - s_)], w.size - 1);
    if (v >= w.lo + n1) {
      act = w.ready + s_ + r_;
      w = Walk{w.lo + n1, w.size - n1, w.budget - s_ - r_, act};
    } else {
      w = Walk{w.lo, n1, w.budget - s_, w.ready + s_};
    }
  }
  return internal::Quanta{s_, r_, quantum_num_, quantum_den_}.time(act, "lambda", n_);
}

Tree LambdaTreeTable::materialize() const {
  PB_CHECK(n_ <= std::int64_t{1} << 30, "tree too large to materialise");
  const internal::Quanta q{s_, r_, quantum_num_, quantum_den_};
  const auto np = static_cast<std::size_t>(n_);
  Tree tree;
  tree.shape = "lambda";
  tree.p = static_cast<int>(n_);
  tree.root = 0;
  tree.model = model_;
  tree.parent.assign(np, -1);
  tree.children.assign(np, {});
  std::vector<std::int64_t> act(np, 0);
  std::vector<Walk> stack{Walk{0, n_, budget_, 0}};
  while (!stack.empty()) {
    Walk w = stack.back();
    stack.pop_back();
    const auto root = static_cast<std::size_t>(w.lo);
    while (w.size > 1) {
      const std::int64_t n1 = std::min(table_[static_cast<std::size_t>(w.budget - s_)], w.size - 1);
      const std::int64_t leader = w.lo + n1;
      tree.parent[static_cast<std::size_t>(leader)] = static_cast<int>(w.lo);
      tree.children[root].push_back(static_cast<int>(leader));
      act[static_cast<std::size_t>(leader)] = w.ready + s_ + r_;
      stack.push_back(Walk{leader, w.size - n1, w.budget - s_ - r_, w.ready + s_ + r_});
      w = Walk{w.lo, n1, w.budget - s_, w.ready + s_};
    }
  }
  set_times(tree, q, act, "lambda", n_);
  return tree;
}

}  // namespace postbox
