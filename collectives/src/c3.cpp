#include "postbox/collectives/c3.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/runtime/check.hpp"
#include "s2p_planner.hpp"

namespace postbox {
namespace {

using internal::Round;
using internal::Transfer;

struct Box {
  int r0 = 0, c0 = 0, nr = 1, nc = 1;
  [[nodiscard]] bool contains(int x, int y) const { return x >= r0 && x < r0 + nr && y >= c0 && y < c0 + nc; }
};

std::vector<int> ranks_of(const Mesh& m, const Box& b) {
  std::vector<int> out;
  for (int x = 0; x < b.nr; ++x) {
    for (int y = 0; y < b.nc; ++y) out.push_back(m.rank(b.r0 + x, b.c0 + y));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The rank of `box` at the same offset as `ref` has in `refbox` (clamped): the leader of a
// submachine sits where the source sits in its own submachine.
int same_offset(const Mesh& m, const Box& box, const Box& refbox, int ref) {
  const int x = ref / m.cols, y = ref % m.cols;
  return m.rank(box.r0 + std::min(x - refbox.r0, box.nr - 1), box.c0 + std::min(y - refbox.c0, box.nc - 1));
}

std::vector<int> split_points(int n, int parts) {
  std::vector<int> out;
  for (int k = 0; k <= parts; ++k) out.push_back(static_cast<int>(static_cast<long long>(k) * n / parts));
  return out;
}

// √p × √p-ish tiling used by 3-lev-sq and 2-lev-sq: rows in round(√R) parts, columns in round(√C).
std::vector<Box> square_tiles(const Mesh& m) {
  const int gr = std::max(1, static_cast<int>(std::lround(std::sqrt(static_cast<double>(m.rows)))));
  const int gc = std::max(1, static_cast<int>(std::lround(std::sqrt(static_cast<double>(m.cols)))));
  const auto rs = split_points(m.rows, gr), cs = split_points(m.cols, gc);
  std::vector<Box> out;
  for (int i = 0; i < gr; ++i) {
    for (int j = 0; j < gc; ++j) out.push_back(Box{rs[static_cast<std::size_t>(i)], cs[static_cast<std::size_t>(j)],
                                                   rs[static_cast<std::size_t>(i) + 1] - rs[static_cast<std::size_t>(i)],
                                                   cs[static_cast<std::size_t>(j) + 1] - cs[static_cast<std::size_t>(j)]});
  }
  return out;
}

// 2-lev-rec inside `box` from `leader` (§4.1): the leader sends each row's messages to that
// row's leader (same column), then every row leader sends directly within its row.
void two_lev_rec(const Mesh& m, const Box& box, int leader, Round& r1, Round& r2) {
  const int lx = leader / m.cols, ly = leader % m.cols;
  for (int x = box.r0; x < box.r0 + box.nr; ++x) {
    const int rl = m.rank(x, ly);
    if (x != lx) {
      std::vector<int> blocks;
      for (int y = box.c0; y < box.c0 + box.nc; ++y) blocks.push_back(m.rank(x, y));
      r1.push_back(Transfer{leader, rl, blocks});
    }
    for (int y = box.c0; y < box.c0 + box.nc; ++y) {
      if (y != ly) r2.push_back(Transfer{rl, m.rank(x, y), {m.rank(x, y)}});
    }
  }
}

// Binomial-heap algorithms (§4.1): split the submachine in two, the holder sends the other
// half's messages to its leader, recurse. gamma < 0: halves, cutting the longer side (vertical
// on ties), which alternates vertical and horizontal cuts on a square (logp-lev-sq); otherwise
// the holder's part gets about γ of the longer side (logp-lev-rec:γ).
std::vector<Round> binomial_scatter(const Mesh& m, int root, double gamma) {
  std::vector<std::pair<Box, int>> cur{{Box{0, 0, m.rows, m.cols}, root}};
  std::vector<Round> rounds;
  while (true) {
    Round rd;
    std::vector<std::pair<Box, int>> next;
    for (const auto& [box, holder] : cur) {
      if (box.nr * box.nc == 1) continue;
      const bool vertical = box.nc >= box.nr;
      const int n = vertical ? box.nc : box.nr;
      const int pos = vertical ? holder % m.cols - box.c0 : holder / m.cols - box.r0;
      int cut = (n + 1) / 2;  // first part = [0, cut)
      if (gamma > 0) {
        const int k1 = std::clamp(static_cast<int>(std::lround(gamma * n)), 1, n - 1);
        // The holder's part must contain the holder; pick the cut whose holder part is closest to γn.
        int best = -1;
        double err = 1e300;
        for (int c : {k1, n - k1}) {
          const int part = pos < c ? c : n - c;
          const double e = std::abs(part - gamma * n);
          if (e < err) {
            err = e;
            best = c;
          }
        }
        cut = best;
      }
      Box a = box, b = box;
      if (vertical) {
        a.nc = cut;
        b.c0 = box.c0 + cut;
        b.nc = box.nc - cut;
      } else {
        a.nr = cut;
        b.r0 = box.r0 + cut;
        b.nr = box.nr - cut;
      }
      if (pos >= cut) std::swap(a, b);  // a holds the holder
      const int leader = same_offset(m, b, a, holder);
      rd.push_back(Transfer{holder, leader, ranks_of(m, b)});
      next.emplace_back(a, holder);
      next.emplace_back(b, leader);
    }
    if (rd.empty()) break;
    rounds.push_back(std::move(rd));
    cur = std::move(next);
  }
  return rounds;
}

double parse_gamma(std::string_view text) {
  double g = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), g);
  if (ec != std::errc() || ptr != text.data() + text.size() || !(g > 0 && g < 1)) {
    throw InputError("logp-lev-rec:G needs γ strictly between 0 and 1, got '" + std::string(text) + "'");
  }
  return g;
}

// A broadcast tree as rounds: a rank receives in round k and sends to its i-th child (from 1) in
// round k + i, in the tree's send order.
std::vector<Round> tree_rounds(const Tree& tree, const std::vector<int>& blocks) {
  std::vector<Round> rounds;
  std::vector<int> order{tree.root}, step(static_cast<std::size_t>(tree.p), 0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const int v = order[k];
    int at = step[static_cast<std::size_t>(v)];
    for (int c : tree.children[static_cast<std::size_t>(v)]) {
      step[static_cast<std::size_t>(c)] = ++at;
      if (rounds.size() < static_cast<std::size_t>(at)) rounds.resize(static_cast<std::size_t>(at));
      rounds[static_cast<std::size_t>(at) - 1].push_back(Transfer{v, c, blocks});
      order.push_back(c);
    }
  }
  return rounds;
}

std::vector<Round> scatter_rounds(const std::string& algo, const Mesh& m, int root, const SendRecv& model) {
  const int p = m.p();
  std::vector<Round> rounds;
  if (algo == "1-lev-dir") {
    Round rd;
    for (int d = 1; d < p; ++d) rd.push_back(Transfer{root, (root + d) % p, {(root + d) % p}});
    rounds.push_back(std::move(rd));
  } else if (algo == "1-lev-our-br") {
    // One long message of the p − 1 messages, broadcast down a binomial heap.
    std::vector<int> all;
    for (int j = 0; j < p; ++j) {
      if (j != root) all.push_back(j);
    }
    int d = 1;
    while (d < p) d *= 2;
    for (d /= 2; d >= 1; d /= 2) {
      Round rd;
      for (int v = 0; v + d < p; v += 2 * d) rd.push_back(Transfer{(v + root) % p, (v + d + root) % p, all});
      rounds.push_back(std::move(rd));
    }
  } else if (algo == "1-lev-sys-br") {
    // §4.1: the same long message through "the system's broadcast": ours is the tree `bcast`
    // takes when none is named (default_bcast_shape()), for the request's model.
    std::vector<int> all;
    for (int j = 0; j < p; ++j) {
      if (j != root) all.push_back(j);
    }
    rounds = tree_rounds(build_tree(ShapeSpec::parse(default_bcast_shape()), p, root, model), all);
  } else if (algo == "2-lev-rec") {
    Round r1, r2;
    two_lev_rec(m, Box{0, 0, m.rows, m.cols}, root, r1, r2);
    rounds = {std::move(r1), std::move(r2)};
  } else if (algo == "3-lev-sq") {
    const auto tiles = square_tiles(m);
    Box rootbox;
    for (const auto& t : tiles) {
      if (t.contains(root / m.cols, root % m.cols)) rootbox = t;
    }
    Round r1, r2, r3;
    for (const auto& t : tiles) {
      const int leader = same_offset(m, t, rootbox, root);
      if (leader != root) r1.push_back(Transfer{root, leader, ranks_of(m, t)});
      two_lev_rec(m, t, leader, r2, r3);
    }
    rounds = {std::move(r1), std::move(r2), std::move(r3)};
  } else if (algo == "logp-lev-sq") {
    rounds = binomial_scatter(m, root, -1);
  } else if (algo.starts_with("logp-lev-rec:")) {
    rounds = binomial_scatter(m, root, parse_gamma(std::string_view(algo).substr(13)));
  } else {
    throw InputError("unknown one-to-all algorithm '" + algo +
                     "' (one of: 1-lev-dir, 1-lev-our-br, 1-lev-sys-br, 2-lev-rec, 3-lev-sq, logp-lev-sq, logp-lev-rec:G)");
  }
  std::erase_if(rounds, [](const Round& r) { return r.empty(); });
  return rounds;
}

// Moves every held block one hop (next_hop(rank, block) == rank keeps it), one message per
// (rank, next hop) with its blocks in ascending order.
// A block never travels back to a rank that had it: its bytes are still there.
template <class F>
Round route_step(std::vector<std::vector<int>>& held, std::vector<std::set<int>>& ever, F next_hop) {
  Round rd;
  std::vector<std::vector<int>> nheld(held.size());
  for (std::size_t r = 0; r < held.size(); ++r) {
    std::map<int, std::vector<int>> by_hop;
    for (int blk : held[r]) {
      const int nh = next_hop(static_cast<int>(r), blk);
      if (nh == static_cast<int>(r) || ever[static_cast<std::size_t>(nh)].contains(blk)) {
        nheld[static_cast<std::size_t>(nh)].push_back(blk);
      } else {
        by_hop[nh].push_back(blk);
        ever[static_cast<std::size_t>(nh)].insert(blk);
      }
    }
    for (auto& [nh, blocks] : by_hop) {
      std::sort(blocks.begin(), blocks.end());
      for (int blk : blocks) nheld[static_cast<std::size_t>(nh)].push_back(blk);
      rd.push_back(Transfer{static_cast<int>(r), nh, std::move(blocks)});
    }
  }
  for (auto& h : nheld) std::sort(h.begin(), h.end());
  held = std::move(nheld);
  return rd;
}

// All-to-all 1-lev-dir: one round, rank i sends block i·p + j to j = i + 1, i + 2, ... (mod p).
// Generated, not stored: its p(p − 1) transfers would take 1 GB at p = 4096.
internal::GeneratedRound direct_all_to_all(int p) {
  internal::GeneratedRound rd;
  const auto n = static_cast<std::size_t>(p) - 1;
  rd.size = static_cast<std::size_t>(p) * n;
  rd.fill = [p, n](std::size_t k, Transfer& t) {
    const int i = static_cast<int>(k / n), d = static_cast<int>(k % n) + 1;
    t.from = i;
    t.to = (i + d) % p;
    t.blocks.assign(1, i * p + t.to);
  };
  return rd;
}

// The stored rounds of every all-to-all algorithm but 1-lev-dir (direct_all_to_all()).
std::vector<Round> all_to_all_rounds(const std::string& algo, const Mesh& m) {
  const int p = m.p();
  auto blk = [p](int i, int j) { return i * p + j; };
  std::vector<Round> rounds;
  if (algo == "1-lev-perm:linear") {
    for (int d = 1; d < p; ++d) {
      Round rd;
      for (int i = 0; i < p; ++i) rd.push_back(Transfer{i, (i + d) % p, {blk(i, (i + d) % p)}});
      rounds.push_back(std::move(rd));
    }
  } else if (algo == "1-lev-perm:xor") {
    int P = 1;
    while (P < p) P *= 2;
    for (int k = 1; k < P; ++k) {
      Round rd;
      for (int i = 0; i < p; ++i) {
        if ((i ^ k) < p) rd.push_back(Transfer{i, i ^ k, {blk(i, i ^ k)}});
      }
      rounds.push_back(std::move(rd));
    }
  } else if (algo == "1-lev-perm:balanced") {
    // Torus-shift permutations (x, y) → (x + dr, y + dc): every message of one permutation moves
    // by the same vector, so the load is spread evenly over the mesh links (docs/c3.md).
    for (int dr = 0; dr < m.rows; ++dr) {
      for (int dc = 0; dc < m.cols; ++dc) {
        if (dr == 0 && dc == 0) continue;
        Round rd;
        for (int i = 0; i < p; ++i) {
          const int j = m.rank((i / m.cols + dr) % m.rows, (i % m.cols + dc) % m.cols);
          rd.push_back(Transfer{i, j, {blk(i, j)}});
        }
        rounds.push_back(std::move(rd));
      }
    }
  } else if (algo == "2-lev-sq" || algo == "2-lev-rc" || algo == "logp-lev-bfly") {
    std::vector<std::vector<int>> held(static_cast<std::size_t>(p));
    std::vector<std::set<int>> ever(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) {
      for (int j = 0; j < p; ++j) {
        held[static_cast<std::size_t>(i)].push_back(blk(i, j));
        ever[static_cast<std::size_t>(i)].insert(blk(i, j));
      }
    }
    auto dst = [p](int b) { return b % p; };
    if (algo == "2-lev-rc") {
      // Along the rows to the destination's column, then along the columns.
      rounds.push_back(route_step(held, ever, [&](int r, int b) { return m.rank(r / m.cols, dst(b) % m.cols); }));
      rounds.push_back(route_step(held, ever, [&](int, int b) { return dst(b); }));
    } else if (algo == "2-lev-sq") {
      // Square submachines G_0..G_{q-1}. Step 1 inside the source's submachine to the member
      // in charge of the destination's submachine; step 2 one long message to that submachine;
      // step 3 inside it to the destination.
      const auto tiles = square_tiles(m);
      std::vector<int> group(static_cast<std::size_t>(p)), pos(static_cast<std::size_t>(p));
      std::vector<std::vector<int>> members(tiles.size());
      for (std::size_t g = 0; g < tiles.size(); ++g) {
        members[g] = ranks_of(m, tiles[g]);
        for (std::size_t t = 0; t < members[g].size(); ++t) {
          group[static_cast<std::size_t>(members[g][t])] = static_cast<int>(g);
          pos[static_cast<std::size_t>(members[g][t])] = static_cast<int>(t);
        }
      }
      auto member = [&](int g, int t) {
        const auto& mm = members[static_cast<std::size_t>(g)];
        return mm[static_cast<std::size_t>(t) % mm.size()];
      };
      rounds.push_back(route_step(held, ever, [&](int r, int b) { return member(group[static_cast<std::size_t>(r)], group[static_cast<std::size_t>(dst(b))]); }));
      rounds.push_back(route_step(held, ever, [&](int r, int b) { return member(group[static_cast<std::size_t>(dst(b))], group[static_cast<std::size_t>(r)]); }));
      rounds.push_back(route_step(held, ever, [&](int, int b) { return dst(b); }));
    } else {
      if ((p & (p - 1)) != 0) throw InputError("logp-lev-bfly needs p to be a power of two, got " + std::to_string(p));
      for (int d = 1; d < p; d *= 2) {
        rounds.push_back(route_step(held, ever, [&](int r, int b) { return ((r ^ dst(b)) & d) ? (r ^ d) : r; }));
      }
    }
  } else {
    throw InputError("unknown all-to-all algorithm '" + algo +
                     "' (one of: 1-lev-dir, 1-lev-perm:linear, 1-lev-perm:xor, 1-lev-perm:balanced, 2-lev-sq, "
                     "2-lev-rc, logp-lev-bfly)");
  }
  std::erase_if(rounds, [](const Round& r) { return r.empty(); });
  return rounds;
}

// ---- unit calculator ----

struct Dsu {
  std::vector<int> parent;
  explicit Dsu(int n) : parent(static_cast<std::size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[static_cast<std::size_t>(x)] != x) {
      parent[static_cast<std::size_t>(x)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
      x = parent[static_cast<std::size_t>(x)];
    }
    return x;
  }
  bool unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return false;
    parent[static_cast<std::size_t>(b)] = a;
    return true;
  }
};

// Superstep of every send/recv (0 for copies without communication before them).
std::vector<std::vector<int>> levels(const Plan& plan) {
  const int p = plan.p;
  std::vector<std::vector<int>> lvl(static_cast<std::size_t>(p));
  // matching: (a, b, k) → send index at a
  std::map<std::tuple<int, int, int>, int> send_at;
  std::vector<std::vector<int>> match(static_cast<std::size_t>(p));
  {
    std::map<std::pair<int, int>, int> ns, nr;
    for (int r = 0; r < p; ++r) {
      const RankOps ops = plan.ops(r);
      lvl[static_cast<std::size_t>(r)].assign(ops.size(), -1);
      match[static_cast<std::size_t>(r)].assign(ops.size(), -1);
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].code == OpCode::send) send_at[{r, ops[i].peer, ns[{r, ops[i].peer}]++}] = static_cast<int>(i);
      }
    }
    for (int r = 0; r < p; ++r) {
      const RankOps ops = plan.ops(r);
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].code != OpCode::recv) continue;
        auto it = send_at.find({ops[i].peer, r, nr[{ops[i].peer, r}]++});
        if (it == send_at.end()) throw InputError("plan has a receive without a matching send");
        match[static_cast<std::size_t>(r)][i] = it->second;
      }
    }
  }
  bool done = false;
  while (!done) {
    done = true;
    bool progress = false;
    for (int r = 0; r < p; ++r) {
      const RankOps ops = plan.ops(r);
      auto& L = lvl[static_cast<std::size_t>(r)];
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (L[i] >= 0) continue;
        const OpView op = ops[i];
        int v = 0;
        bool ready = true;
        if (op.code == OpCode::recv) {
          v = lvl[static_cast<std::size_t>(op.peer)][static_cast<std::size_t>(match[static_cast<std::size_t>(r)][i])];
          ready = v >= 0;
        } else {
          for (auto d : op.deps) {
            if (d >= i || L[d] < 0) {
              ready = false;
              break;
            }
            v = std::max(v, L[d]);
          }
          if (op.code == OpCode::send) ++v;
        }
        if (!ready) {
          done = false;
          continue;
        }
        L[i] = v;
        progress = true;
      }
    }
    if (!done && !progress) throw InputError("plan cannot complete: its dependencies form a cycle");
  }
  return lvl;
}

double packets(double bytes, double l) { return std::ceil(bytes / l); }

}  // namespace

const std::vector<std::string>& c3_ops() {
  static const std::vector<std::string> ops{"one-to-one", "one-to-all", "all-to-one", "all-to-all"};
  return ops;
}

bool is_c3_op(std::string_view op) {
  const auto& ops = c3_ops();
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

const std::vector<std::string>& c3_algorithm_names(std::string_view op) {
  static const std::vector<std::string> o2o{"1-lev-dir"};
  static const std::vector<std::string> o2a{"1-lev-dir", "1-lev-our-br", "1-lev-sys-br", "2-lev-rec", "3-lev-sq", "logp-lev-sq", "logp-lev-rec:0.75"};
  static const std::vector<std::string> a2o{"1-lev-dir", "2-lev-rec", "3-lev-sq", "logp-lev-sq"};
  static const std::vector<std::string> a2a{"1-lev-dir", "1-lev-perm:linear", "1-lev-perm:xor", "1-lev-perm:balanced",
                                            "2-lev-sq",  "2-lev-rc",          "logp-lev-bfly"};
  if (op == "one-to-one") return o2o;
  if (op == "one-to-all") return o2a;
  if (op == "all-to-one") return a2o;
  if (op == "all-to-all") return a2a;
  throw InputError("unknown C3 operation '" + std::string(op) + "' (one of: one-to-one, one-to-all, all-to-one, all-to-all)");
}

C3Machine C3Machine::delta() { return C3Machine{8, 512, 16, 10, Switching::wormhole, SendMode::nonblocking}; }

int one_to_one_destination(int p, int i) {
  PB_CHECK(p >= 1 && i >= 0 && i < p, "one_to_one_destination: rank outside 0..p-1");
  const int mid = (p - 1) / 2;
  if (p % 2 == 1 && p > 1) {
    if (i == 0) return mid;
    if (i == mid) return p - 1;
    if (i == p - 1) return 0;
  }
  return p - 1 - i;
}

int one_to_one_source(int p, int j) {
  PB_CHECK(p >= 1 && j >= 0 && j < p, "one_to_one_source: rank outside 0..p-1");
  const int mid = (p - 1) / 2;
  if (p % 2 == 1 && p > 1) {
    if (j == mid) return 0;
    if (j == p - 1) return mid;
    if (j == 0) return p - 1;
  }
  return p - 1 - j;
}

C3Machine C3Machine::network(std::string_view kind, int p) {
  if (p < 2) throw InputError("C3 network machines need p >= 2, got " + std::to_string(p));
  C3Machine m = delta();
  const double P = p, lg = std::log2(P);
  if (kind == "mesh") {
    const int side = static_cast<int>(std::lround(std::sqrt(P)));
    if (side * side != p) throw InputError("the C3 mesh machine is square: p must be a perfect square, got " + std::to_string(p));
    m.b = side;
    m.h = 2.0 / 3.0 * side;
  } else if (kind == "hypercube") {
    if ((p & (p - 1)) != 0) throw InputError("the C3 hypercube needs p to be a power of two, got " + std::to_string(p));
    m.b = P / 2;
    m.h = lg / 2;
  } else if (kind == "tree") {
    m.b = 1;
    m.h = lg;
  } else {
    throw InputError("unknown C3 network '" + std::string(kind) + "' (one of: mesh, hypercube, tree)");
  }
  return m;
}

double mesh_mean_distance(int a, int c) {
  const double da = a, dc = c;
  return (da * da - 1) / (3 * da) + (dc * dc - 1) / (3 * dc);
}

namespace {

// build_c3_plan()'s checks of the request, and its mesh.
Mesh checked_mesh(const C3Request& req) {
  if (req.p < 1) throw InputError("p must be at least 1, got " + std::to_string(req.p));
  if (req.p > 4096) throw InputError("p is too large for the C3 plans: " + std::to_string(req.p));
  {
    PlanRequest size;
    size.op = req.op;
    size.algo = req.algo;
    size.p = req.p;
    check_plan_memory(size);
  }
  const Mesh m = req.mesh ? *req.mesh : near_square_mesh(req.p);
  if (m.rows < 1 || m.cols < 1 || m.p() != req.p) {
    throw InputError("mesh " + std::to_string(m.rows) + "x" + std::to_string(m.cols) + " does not have p = " + std::to_string(req.p) + " ranks");
  }
  if (req.bytes > (std::uint64_t{1} << 40) / static_cast<std::uint64_t>(req.p) / 2) {
    throw InputError("p·L is too large");
  }
  return m;
}

// The stored rounds of one-to-all, of all-to-one (one-to-all's backwards, each transfer
// reversed: §4.2) and of every all-to-all but 1-lev-dir; none for one-to-one and all-to-all
// 1-lev-dir, whose single round of one-block messages build_c3_plan() makes itself. A root
// outside 0..p-1 or an unknown algorithm → InputError.
std::vector<Round> stored_rounds(const C3Request& req, const Mesh& m) {
  const int p = req.p;
  std::vector<Round> rounds;
  if (req.op == "one-to-all" || req.op == "all-to-one") {
    if (req.root < 0 || req.root >= p) {
      throw InputError("root " + std::to_string(req.root) + " is outside 0.." + std::to_string(p - 1));
    }
    const bool scatter = req.op == "one-to-all";
    if (!scatter) {
      const auto& names = c3_algorithm_names(req.op);
      if (std::find(names.begin(), names.end(), req.algo) == names.end()) {
        throw InputError("unknown all-to-one algorithm '" + req.algo + "' (one of: 1-lev-dir, 2-lev-rec, 3-lev-sq, logp-lev-sq)");
      }
    }
    rounds = scatter_rounds(req.algo, m, req.root, req.model ? *req.model : model_of(PlanRequest{}));
    if (!scatter) {
      std::reverse(rounds.begin(), rounds.end());
      for (auto& rd : rounds) {
        for (auto& t : rd) std::swap(t.from, t.to);
      }
    }
  } else if (req.op == "all-to-all" && req.algo != "1-lev-dir") {
    rounds = all_to_all_rounds(req.algo, m);
  }
  return rounds;
}

// The most blocks one message carries, given stored_rounds(req, ·).
std::uint64_t largest_blocks(const C3Request& req, const std::vector<Round>& stored) {
  if (req.op == "one-to-one" || (req.op == "all-to-all" && req.algo == "1-lev-dir")) return req.p > 1 ? 1 : 0;
  return internal::largest_transfer(stored);
}

}  // namespace

std::uint64_t c3_largest_message_blocks(const C3Request& req) {
  const Mesh m = checked_mesh(req);
  if (req.op != "one-to-one" && req.op != "one-to-all" && req.op != "all-to-one" && req.op != "all-to-all") {
    (void)c3_algorithm_names(req.op);  // throws the "unknown operation" error
  }
  return largest_blocks(req, stored_rounds(req, m));
}

Plan build_c3_plan(const C3Request& req) {
  const Mesh m = checked_mesh(req);
  const int p = req.p;
  const std::uint64_t L = req.bytes;
  std::vector<Round> rounds = stored_rounds(req, m);
  internal::BlockLayout lay;
  lay.p = p;
  lay.bytes = L;
  int root = -1;
  if (req.op == "one-to-all" || req.op == "all-to-one") {
    root = req.root;
    lay.user_bytes.assign(static_cast<std::size_t>(p), L);
    lay.user_bytes[static_cast<std::size_t>(root)] = L * static_cast<std::uint64_t>(p);
    const bool scatter = req.op == "one-to-all";
    // Block j is rank j's message: at the root at offset j·L, at rank j at offset 0 (the root's
    // own block stays at root·L). Scatter moves it from the root to j, gather back.
    auto at_root = [L](int b) { return static_cast<std::int64_t>(static_cast<std::uint64_t>(b) * L); };
    auto source = [=](int r, int b) -> std::int64_t {
      if (b < 0 || b >= p) return -1;
      if (r == root && b == root) return at_root(b);
      if (scatter) return r == root ? at_root(b) : -1;
      return r == b ? 0 : -1;
    };
    auto target = [=](int r, int b) -> std::int64_t {
      if (b < 0 || b >= p) return -1;
      if (r == root && b == root) return at_root(b);
      if (scatter) return r == b ? 0 : -1;
      return r == root ? at_root(b) : -1;
    };
    lay.initial_at = source;
    lay.final_at = target;
    lay.final_blocks = [=](int r) {
      if (r != root) return scatter ? std::vector<int>{r} : std::vector<int>{};
      if (scatter) return std::vector<int>{root};
      std::vector<int> all(static_cast<std::size_t>(p));
      std::iota(all.begin(), all.end(), 0);
      return all;
    };
  } else if (req.op == "one-to-one") {
    if (req.algo != "1-lev-dir") throw InputError("unknown one-to-one algorithm '" + req.algo + "' (one of: 1-lev-dir)");
    // §3: every rank sends its block (block i = rank i's message) directly to its destination.
    Round rd;
    for (int i = 0; i < p; ++i) {
      if (one_to_one_destination(p, i) != i) rd.push_back(Transfer{i, one_to_one_destination(p, i), {i}});
    }
    if (!rd.empty()) rounds.push_back(std::move(rd));
    lay.user_bytes.assign(static_cast<std::size_t>(p), 2 * L);
    lay.initial_at = [](int r, int b) -> std::int64_t { return b == r ? 0 : -1; };
    lay.final_at = [p, L](int r, int b) -> std::int64_t {
      return b >= 0 && b < p && one_to_one_destination(p, b) == r ? static_cast<std::int64_t>(L) : -1;
    };
    lay.final_blocks = [p](int r) { return std::vector<int>{one_to_one_source(p, r)}; };
  } else if (req.op == "all-to-all") {
    lay.user_bytes.assign(static_cast<std::size_t>(p), 2 * L * static_cast<std::uint64_t>(p));
    // Block i·p + j goes from i (offset j·L) to j (offset (p + i)·L).
    lay.initial_at = [p, L](int r, int b) -> std::int64_t {
      return b / p == r ? static_cast<std::int64_t>(static_cast<std::uint64_t>(b % p) * L) : -1;
    };
    lay.final_at = [p, L](int r, int b) -> std::int64_t {
      return b % p == r ? static_cast<std::int64_t>(static_cast<std::uint64_t>(p + b / p) * L) : -1;
    };
    lay.final_blocks = [p](int r) {
      std::vector<int> v(static_cast<std::size_t>(p));
      for (int i = 0; i < p; ++i) v[static_cast<std::size_t>(i)] = i * p + r;
      return v;
    };
  } else {
    (void)c3_algorithm_names(req.op);  // throws the "unknown operation" error
  }
  Plan plan = req.op == "all-to-all" && req.algo == "1-lev-dir"
                  ? internal::plan_from_generated_round(req.op, req.algo, lay, direct_all_to_all(p), true)
                  : internal::plan_from_rounds(req.op, req.algo, lay, rounds, true);
  plan.root = root;
  return plan;
}

void validate_c3_parameter(char param, double value, std::string_view what, std::string_view text) {
  // Bounded so that every unit count stays finite (units grow like L/l·h·p).
  constexpr double kMax = 1e9;
  PB_CHECK(param == 's' || param == 'l' || param == 'b' || param == 'h', "validate_c3_parameter: no parameter '" +
                                                                            std::string(1, param) + "'");
  const bool zero_ok = param == 's' || param == 'h';
  if (!std::isfinite(value) || value > kMax || value < 0 || (!zero_ok && value == 0)) {
    throw InputError(std::string(what) + " must be " + (zero_ok ? "in [0, " : "in (0, ") + "1e9], got " +
                     std::string(text));
  }
}

void validate_c3_machine(const C3Machine& m) {
  auto check = [](char name, double v) {
    char text[48];
    std::snprintf(text, sizeof text, "%.6g", v);
    validate_c3_parameter(name, v, std::string("C3 machine: ") + name, text);
  };
  check('s', m.s);
  check('l', m.l);
  check('b', m.b);
  check('h', m.h);
}

C3Units c3_units(const Plan& plan, const C3Machine& mc, Mesh mesh) {
  const int p = plan.p;
  if (mesh.rows == 0 && mesh.cols == 0) mesh = near_square_mesh(p);
  if (mesh.p() != p || mesh.rows < 1) throw InputError("mesh does not have the plan's p ranks");
  validate_c3_machine(mc);
  const auto lvl = levels(plan);
  int K = 0;
  for (const auto& v : lvl) {
    for (int x : v) K = std::max(K, x);
  }
  // Mean distance between two distinct ranks of the whole mesh.
  const double D_full = p > 1 ? mesh_mean_distance(mesh.rows, mesh.cols) * p / (p - 1) : 0;
  C3Units u;
  for (int k = 1; k <= K; ++k) {
    C3Superstep st;
    std::map<std::pair<int, int>, double> Lij;
    std::vector<double> t(static_cast<std::size_t>(p), 0);
    for (int r = 0; r < p; ++r) {
      const RankOps ops = plan.ops(r);
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const OpView op = ops[i];
        const int l = lvl[static_cast<std::size_t>(r)][i];
        if (op.code == OpCode::send && l == k) {
          Lij[{r, op.peer}] += static_cast<double>(op.a.bytes);
          ++st.messages;
        } else if (op.code == OpCode::recv && l == k) {
          t[static_cast<std::size_t>(r)] += static_cast<double>(op.a.bytes);
        } else if (op.code == OpCode::reduce && std::max(l, 1) == k) {
          t[static_cast<std::size_t>(r)] += static_cast<double>(op.a.bytes);
        }
      }
    }
    if (Lij.empty()) continue;
    st.cong = static_cast<int>(Lij.size());
    // Independent submachines.
    Dsu dsu(p);
    for (const auto& [pr, bytes] : Lij) dsu.unite(pr.first, pr.second);
    std::vector<char> active(static_cast<std::size_t>(p), 0);
    for (const auto& [pr, bytes] : Lij) active[static_cast<std::size_t>(pr.first)] = active[static_cast<std::size_t>(pr.second)] = 1;
    std::map<int, Box> box;
    for (bool merged = true; merged;) {
      merged = false;
      box.clear();
      for (int r = 0; r < p; ++r) {
        if (!active[static_cast<std::size_t>(r)]) continue;
        const int x = r / mesh.cols, y = r % mesh.cols;
        auto [it, fresh] = box.try_emplace(dsu.find(r), Box{x, y, 1, 1});
        if (!fresh) {
          Box& b = it->second;
          const int x1 = std::max(b.r0 + b.nr, x + 1), y1 = std::max(b.c0 + b.nc, y + 1);
          b.r0 = std::min(b.r0, x);
          b.c0 = std::min(b.c0, y);
          b.nr = x1 - b.r0;
          b.nc = y1 - b.c0;
        }
      }
      for (auto a = box.begin(); a != box.end() && !merged; ++a) {
        for (auto b = std::next(a); b != box.end(); ++b) {
          const Box &A = a->second, &B = b->second;
          if (A.r0 < B.r0 + B.nr && B.r0 < A.r0 + A.nr && A.c0 < B.c0 + B.nc && B.c0 < A.c0 + A.nc) {
            dsu.unite(a->first, b->first);
            merged = true;
            break;
          }
        }
      }
    }
    st.submachines = static_cast<int>(box.size());
    struct Part {
      double h = 0, bw = 1, size = 1, pairs = 0, packets = 0, sr = 0;
    };
    std::map<int, Part> part;
    std::map<int, std::vector<int>> members;
    for (int r = 0; r < p; ++r) {
      if (active[static_cast<std::size_t>(r)]) members[dsu.find(r)].push_back(r);
    }
    for (const auto& [c, b] : box) {
      Part& q = part[c];
      const auto& mem = members[c];
      // h': the members' mean distance, in the machine's h per mean distance of the whole mesh.
      double sum = 0;
      for (int x : mem) {
        for (int y : mem) sum += std::abs(x / mesh.cols - y / mesh.cols) + std::abs(x % mesh.cols - y % mesh.cols);
      }
      const double n = static_cast<double>(mem.size());
      q.h = D_full > 0 ? mc.h * (sum / (n * (n - 1))) / D_full : mc.h;
      q.bw = mc.b * std::min(b.nr, b.nc) / std::min(mesh.rows, mesh.cols);
      q.size = n;
    }
    std::vector<double> out_pk(static_cast<std::size_t>(p), 0), in_pk(out_pk), max_pk(out_pk), ns(out_pk), nr(out_pk);
    for (const auto& [pr, bytes] : Lij) {
      const double pk = packets(bytes, mc.l);
      const auto a = static_cast<std::size_t>(pr.first), b = static_cast<std::size_t>(pr.second);
      out_pk[a] += pk;
      in_pk[b] += pk;
      max_pk[a] = std::max(max_pk[a], pk);
      ns[a] += 1;
      nr[b] += 1;
      Part& q = part[dsu.find(pr.first)];
      q.pairs += 1;
      q.packets += pk;
    }
    const bool wh = mc.switching == Switching::wormhole;
    const bool bs = mc.sends == SendMode::blocking;
    for (int r = 0; r < p; ++r) {
      if (!active[static_cast<std::size_t>(r)]) continue;
      const auto i = static_cast<std::size_t>(r);
      Part& q = part[dsu.find(r)];
      const double h = q.h, s = mc.s;
      double S = 0, R = 0;
      // Fig. 1.
      if (ns[i] > 0) {
        if (!bs) S = s * ns[i] + (wh ? h : h * max_pk[i]) + out_pk[i];
        else S = 2 * (s + h) * ns[i] + (wh ? h + out_pk[i] : h * out_pk[i]);
      }
      if (nr[i] > 0) {
        if (!bs) R = in_pk[i];
        else R = (s + h) * nr[i] + (wh ? h + in_pk[i] : h * in_pk[i]);
      }
      st.S_max = std::max(st.S_max, S);
      st.R_max = std::max(st.R_max, R);
      st.SR_max = std::max(st.SR_max, S + R);
      q.sr = std::max(q.sr, S + R);
    }
    for (const auto& [c, q] : part) {
      const double La = q.packets / q.pairs;
      const double Cl = La * std::ceil(q.pairs / q.bw);
      const double Cp = La * std::ceil(q.pairs / q.size) * q.h;
      st.C_l = std::max(st.C_l, Cl);
      st.C_p = std::max(st.C_p, Cp);
      st.comm_units = std::max(st.comm_units, q.sr + Cl + Cp);
    }
    for (double ti : t) {
      if (ti > 0) st.comp_units = std::max(st.comp_units, std::max(1.0, std::ceil(ti / mc.l)));
    }
    u.comm_units += st.comm_units;
    u.comp_units += st.comp_units;
    u.S_max += st.S_max;
    u.R_max += st.R_max;
    u.C_l += st.C_l;
    u.C_p += st.C_p;
    u.supersteps.push_back(st);
  }
  return u;
}

C3Request c3_request(const PlanRequest& req) {
  return C3Request{req.op, req.algo, req.p, static_cast<std::uint64_t>(req.bytes),
                   req.op == "all-to-all" || req.op == "one-to-one" ? 0 : req.root, req.mesh, model_of(req)};
}

void register_c3_plans() {
  const std::vector<std::tuple<std::string, std::string, std::string>> algos{
      {"one-to-all", "1-lev-dir", "C3 1-lev-dir: the source sends p-1 messages directly"},
      {"one-to-one", "1-lev-dir", "C3 one-to-one (§3): every rank sends its message directly to a unique destination"},
      {"one-to-all", "1-lev-our-br", "C3 1-lev-our-br: one long message down a binomial heap"},
      {"one-to-all", "1-lev-sys-br", "C3 1-lev-sys-br: one long message down the system's broadcast (bcast's default tree)"},
      {"one-to-all", "2-lev-rec", "C3 2-lev-rec: to the row leaders in the source's column, then within rows"},
      {"one-to-all", "3-lev-sq", "C3 3-lev-sq: to the leaders of sqrt(p) square submachines, then 2-lev-rec"},
      {"one-to-all", "logp-lev-sq", "C3 logp-lev-sq: binomial heap over alternating vertical/horizontal halves"},
      {"one-to-all", "logp-lev-rec:G", "C3 logp-lev-rec:G: binomial heap, the source's part holding a fraction G"},
      {"all-to-one", "1-lev-dir", "C3 1-lev-dir: every rank sends to the root"},
      {"all-to-one", "2-lev-rec", "C3 2-lev-rec: within rows, then the root's column"},
      {"all-to-one", "3-lev-sq", "C3 3-lev-sq: 2-lev-rec in square submachines, then to the root"},
      {"all-to-one", "logp-lev-sq", "C3 logp-lev-sq: binomial heap over halves, combining"},
      {"all-to-all", "1-lev-dir", "C3 1-lev-dir: every rank sends its p-1 messages at once"},
      {"all-to-all", "1-lev-perm:linear|xor|balanced", "C3 1-lev-perm: p-1 permutations, one per superstep"},
      {"all-to-all", "2-lev-sq", "C3 2-lev-sq: three steps through square submachines"},
      {"all-to-all", "2-lev-rc", "C3 2-lev-rc: along rows, then along columns"},
      {"all-to-all", "logp-lev-bfly", "C3 logp-lev-bfly: butterfly, p/2 messages per step (p a power of two)"}};
  for (const auto& [op, algo, text] : algos) {
    register_plan_builder(op, algo, text, [](const PlanRequest& req) { return build_c3_plan(c3_request(req)); });
  }
}

}  // namespace postbox
