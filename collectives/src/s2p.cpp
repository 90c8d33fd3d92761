#include "postbox/collectives/s2p.hpp"

#include <algorithm>
#include <numeric>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"
#include "s2p_planner.hpp"

namespace postbox {
namespace {

using internal::Round;
using internal::Transfer;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Distinct candidates in order until s, then the remaining ranks in row-major order
// (only reached when a pattern has fewer than s cells), sorted.
std::vector<int> take(const std::vector<int>& cand, int p, int s) {
  std::vector<char> used(static_cast<std::size_t>(p), 0);
  std::vector<int> out;
  for (int r : cand) {
    if (static_cast<int>(out.size()) == s) break;
    if (!used[static_cast<std::size_t>(r)]) {
      used[static_cast<std::size_t>(r)] = 1;
      out.push_back(r);
    }
  }
  for (int r = 0; r < p && static_cast<int>(out.size()) < s; ++r) {
    if (!used[static_cast<std::size_t>(r)]) {
      used[static_cast<std::size_t>(r)] = 1;
      out.push_back(r);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> diag_candidates(const Mesh& m, int s, bool left) {
  std::vector<int> cand;
  const int len = std::min(m.rows, m.cols);
  const int offsets = std::max(m.rows, m.cols);
  const int i = ceil_div(s, len);
  for (int k = 0; k < i; ++k) {
    const int d = static_cast<int>(static_cast<long long>(k) * offsets / i);
    for (int t = 0; t < len; ++t) {
      int x = t, y = t;
      if (m.rows <= m.cols) y = (t + d) % m.cols;
      else x = (t + d) % m.rows;
      if (left) y = m.cols - 1 - y;
      cand.push_back(m.rank(x, y));
    }
  }
  return cand;
}

std::vector<int> band_candidates(const Mesh& m, int s) {
  const int len = std::min(m.rows, m.cols);
  const int offsets = std::max(m.rows, m.cols);
  const int i = ceil_div(s, len);  // diagonals needed
  const int nb = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(s) / len))));
  const int w = ceil_div(i, nb);
  std::vector<int> cand;
  for (int k = 0; k < nb; ++k) {
    const int start = static_cast<int>(static_cast<long long>(k) * offsets / nb);
    for (int t = 0; t < w; ++t) {
      const int d = (start + t) % offsets;
      for (int u = 0; u < len; ++u) {
        int x = u, y = u;
        if (m.rows <= m.cols) y = (u + d) % m.cols;
        else x = (u + d) % m.rows;
        cand.push_back(m.rank(x, y));
      }
    }
  }
  return cand;
}

// The cells of i evenly spaced rows (⌊k·r/i⌋, k = 0..i−1), row by row from the left; of j evenly
// spaced columns (⌊k·c/j⌋), column by column from the top. R(s) and C(s) take their first s.
std::vector<int> rows_at(const Mesh& m, int i) {
  std::vector<int> cand;
  for (int k = 0; k < i; ++k) {
    const int x = static_cast<int>(static_cast<long long>(k) * m.rows / i);
    for (int y = 0; y < m.cols; ++y) cand.push_back(m.rank(x, y));
  }
  return cand;
}

std::vector<int> cols_at(const Mesh& m, int j) {
  std::vector<int> cand;
  for (int k = 0; k < j; ++k) {
    const int y = static_cast<int>(static_cast<long long>(k) * m.cols / j);
    for (int x = 0; x < m.rows; ++x) cand.push_back(m.rank(x, y));
  }
  return cand;
}

// The cross distribution as the s-to-p paper defines it (§4): the union of a row distribution
// and a column distribution with about as many sources in each. The row part is R(⌈s/2⌉); the
// other s − ⌈s/2⌉ sources fill evenly spaced columns from the top, skipping the row part's cells
// (take() skips them), with j the fewest columns whose free cells hold them.
std::vector<int> cross_candidates(const Mesh& m, int s) {
  const int a = ceil_div(s, 2);
  const int rows = ceil_div(a, m.cols);
  std::vector<int> cand = rows_at(m, rows);
  cand.resize(static_cast<std::size_t>(a));  // R(a): rows·c ≥ a cells
  const int free_per_column = std::max(1, m.rows - rows);
  const int j = std::min(m.cols, std::max(1, ceil_div(s - a, free_per_column)));
  const std::vector<int> cols = cols_at(m, j);
  cand.insert(cand.end(), cols.begin(), cols.end());
  return cand;
}

std::uint64_t uniform_below(std::mt19937_64& g, std::uint64_t n) {
  // Rejection sampling: the same sequence on every standard library (unlike
  // std::uniform_int_distribution).
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
  std::uint64_t v = 0;
  do {
    v = g();
  } while (v >= limit);
  return v % n;
}

// ---------------------------------------------------------------------------------------------
// Schedule generation. `view` is what the algorithm believes a rank holds and forwards; `real`
// is what it actually holds (they differ after repositioning, where an original source keeps
// its message but is no longer a source of the broadcast). A message carries the sender's view
// minus what the receiver really holds or is receiving this round, so no block arrives twice.
class Sched {
 public:
  Sched(const Mesh& mesh, const std::vector<int>& sources)
      : m_(mesh), p_(mesh.p()), s_(static_cast<int>(sources.size())),
        view_(static_cast<std::size_t>(p_), std::vector<char>(static_cast<std::size_t>(s_), 0)),
        real_(view_), inc_(view_) {
    for (int k = 0; k < s_; ++k) {
      view_[static_cast<std::size_t>(sources[static_cast<std::size_t>(k)])][static_cast<std::size_t>(k)] = 1;
    }
    real_ = view_;
  }

  void send_view(int a, int b) {
    if (a == b) return;
    const auto& va = view_[static_cast<std::size_t>(a)];
    std::vector<int> blocks;
    for (int k = 0; k < s_; ++k) {
      if (va[static_cast<std::size_t>(k)]) blocks.push_back(k);
    }
    if (blocks.empty()) return;
    pending_views_.emplace_back(b, va);
    send(a, b, blocks);
  }

  // Sends `blocks` (minus what b holds or is receiving) and b's view gains them.
  void send(int a, int b, const std::vector<int>& blocks) {
    std::vector<int> out;
    auto& rb = real_[static_cast<std::size_t>(b)];
    auto& ib = inc_[static_cast<std::size_t>(b)];
    for (int k : blocks) {
      pending_view_blocks_.emplace_back(b, k);
      if (rb[static_cast<std::size_t>(k)] || ib[static_cast<std::size_t>(k)]) continue;
      ib[static_cast<std::size_t>(k)] = 1;
      out.push_back(k);
    }
    if (!out.empty()) cur_.push_back(Transfer{a, b, std::move(out)});
  }

  void end_round() {
    for (const auto& t : cur_) {
      for (int k : t.blocks) {
        real_[static_cast<std::size_t>(t.to)][static_cast<std::size_t>(k)] = 1;
        inc_[static_cast<std::size_t>(t.to)][static_cast<std::size_t>(k)] = 0;
      }
    }
    for (auto& [b, v] : pending_views_) {
      auto& vb = view_[static_cast<std::size_t>(b)];
      for (int k = 0; k < s_; ++k) vb[static_cast<std::size_t>(k)] |= v[static_cast<std::size_t>(k)];
    }
    for (auto [b, k] : pending_view_blocks_) view_[static_cast<std::size_t>(b)][static_cast<std::size_t>(k)] = 1;
    pending_views_.clear();
    pending_view_blocks_.clear();
    if (!cur_.empty()) rounds_.push_back(std::move(cur_));
    cur_.clear();
  }

  // After repositioning: the broadcast starts from `holder[k]` for block k.
  void reset_view(const std::vector<int>& holder) {
    for (auto& v : view_) std::fill(v.begin(), v.end(), 0);
    for (int k = 0; k < s_; ++k) view_[static_cast<std::size_t>(holder[static_cast<std::size_t>(k)])][static_cast<std::size_t>(k)] = 1;
  }

  [[nodiscard]] int count_in(const std::vector<int>& line) const {
    int n = 0;
    for (int r : line) {
      for (char c : view_[static_cast<std::size_t>(r)]) n += c;
    }
    return n;
  }

  std::vector<Round> take() { return std::move(rounds_); }
  const Mesh& mesh() const { return m_; }

 private:
  Mesh m_;
  int p_;
  int s_;
  std::vector<std::vector<char>> view_, real_, inc_;
  std::vector<std::pair<int, std::vector<char>>> pending_views_;
  std::vector<std::pair<int, int>> pending_view_blocks_;
  Round cur_;
  std::vector<Round> rounds_;
};

// Br_Lin (§2) on several independent linear arrays at once: P_i and P_{i+n/2} exchange, then
// both halves recurse. Odd n: the first half has ⌈n/2⌉ ranks; its unpaired last rank also sends
// to the first rank of the second half, so the second half learns everything too.
void br_lin(Sched& sc, std::vector<std::vector<int>> segs) {
  while (true) {
    std::vector<std::vector<int>> next;
    bool any = false;
    for (const auto& seg : segs) {
      const int n = static_cast<int>(seg.size());
      if (n <= 1) continue;
      any = true;
      const int h = (n + 1) / 2;
      for (int i = 0; i < n - h; ++i) {
        sc.send_view(seg[static_cast<std::size_t>(i)], seg[static_cast<std::size_t>(h + i)]);
        sc.send_view(seg[static_cast<std::size_t>(h + i)], seg[static_cast<std::size_t>(i)]);
      }
      if (n % 2 == 1) sc.send_view(seg[static_cast<std::size_t>(h - 1)], seg[static_cast<std::size_t>(h)]);
      next.emplace_back(seg.begin(), seg.begin() + h);
      next.emplace_back(seg.begin() + h, seg.end());
    }
    if (!any) return;
    sc.end_round();
    segs = std::move(next);
  }
}

// A sub-mesh: rows [r0, r0+nr), cols [c0, c0+nc) of the full mesh.
struct Box {
  int r0 = 0, c0 = 0, nr = 1, nc = 1;
};

std::vector<std::vector<int>> rows_of(const Mesh& m, const Box& b) {
  std::vector<std::vector<int>> out;
  for (int x = 0; x < b.nr; ++x) {
    std::vector<int> line;
    for (int y = 0; y < b.nc; ++y) line.push_back(m.rank(b.r0 + x, b.c0 + y));
    out.push_back(std::move(line));
  }
  return out;
}
std::vector<std::vector<int>> cols_of(const Mesh& m, const Box& b) {
  std::vector<std::vector<int>> out;
  for (int y = 0; y < b.nc; ++y) {
    std::vector<int> line;
    for (int x = 0; x < b.nr; ++x) line.push_back(m.rank(b.r0 + x, b.c0 + y));
    out.push_back(std::move(line));
  }
  return out;
}
std::vector<int> snake_of(const Mesh& m, const Box& b) {
  std::vector<int> out;
  for (int x = 0; x < b.nr; ++x) {
    for (int t = 0; t < b.nc; ++t) out.push_back(m.rank(b.r0 + x, b.c0 + (x % 2 == 0 ? t : b.nc - 1 - t)));
  }
  return out;
}

// Br_xy_source's choice (§2): rows first when the largest number of sources in a row is at
// most the largest number in a column.
bool rows_first_by_source(const Sched& sc, const Mesh& m, const Box& b) {
  int mr = 0, mc = 0;
  for (const auto& l : rows_of(m, b)) mr = std::max(mr, sc.count_in(l));
  for (const auto& l : cols_of(m, b)) mc = std::max(mc, sc.count_in(l));
  return mr <= mc;
}

// Br_xy on several boxes at once, each with its own dimension order.
void br_xy(Sched& sc, const Mesh& m, const std::vector<Box>& boxes, const std::vector<bool>& rows_first) {
  std::vector<std::vector<int>> phase1, phase2;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    auto rs = rows_of(m, boxes[i]);
    auto cs = cols_of(m, boxes[i]);
    auto& first = rows_first[i] ? rs : cs;
    auto& second = rows_first[i] ? cs : rs;
    phase1.insert(phase1.end(), first.begin(), first.end());
    phase2.insert(phase2.end(), second.begin(), second.end());
  }
  br_lin(sc, std::move(phase1));
  br_lin(sc, std::move(phase2));
}

// Ideal distributions used by repositioning (§3, §5.2): Br_Lin → left diagonal Dl(s); Br_xy_source
// → a row distribution whose rows are the first ⌈s/c⌉ rows, so no two source rows are partners
// in the first column iterations (the paper's R(20) on 10×10 remark).
std::vector<int> ideal_targets(bool lin, const Mesh& sub, int s) {
  if (lin) return source_distribution("diag-left", sub, s);
  std::vector<int> out;
  for (int k = 0; k < s; ++k) out.push_back(k);  // row-major: full rows from the top
  return out;
}

std::vector<int> to_global(const Mesh& full, const Box& b, const std::vector<int>& local) {
  std::vector<int> out;
  for (int r : local) out.push_back(full.rank(b.r0 + r / b.nc, b.c0 + r % b.nc));
  return out;
}

// One round moving each source's message to its target; sources already on a free target stay.
std::vector<int> reposition(Sched& sc, const std::vector<int>& sources, const std::vector<int>& group_of_source,
                            const std::vector<std::vector<int>>& targets_per_group) {
  const int s = static_cast<int>(sources.size());
  std::vector<int> holder(static_cast<std::size_t>(s), -1);
  std::vector<std::vector<char>> claimed;
  for (const auto& t : targets_per_group) claimed.emplace_back(t.size(), 0);
  for (int k = 0; k < s; ++k) {
    const auto g = static_cast<std::size_t>(group_of_source[static_cast<std::size_t>(k)]);
    const auto& t = targets_per_group[g];
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] == sources[static_cast<std::size_t>(k)] && !claimed[g][i]) {
        claimed[g][i] = 1;
        holder[static_cast<std::size_t>(k)] = t[i];
      }
    }
  }
  for (int k = 0; k < s; ++k) {
    if (holder[static_cast<std::size_t>(k)] >= 0) continue;
    const auto g = static_cast<std::size_t>(group_of_source[static_cast<std::size_t>(k)]);
    const auto& t = targets_per_group[g];
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (!claimed[g][i]) {
        claimed[g][i] = 1;
        holder[static_cast<std::size_t>(k)] = t[i];
        break;
      }
    }
    PB_CHECK(holder[static_cast<std::size_t>(k)] >= 0, "not enough target positions");
    sc.send(sources[static_cast<std::size_t>(k)], holder[static_cast<std::size_t>(k)], {k});
  }
  sc.end_round();
  return holder;
}

std::vector<Round> schedule(const std::string& algo, const Mesh& m, const std::vector<int>& sources) {
  Sched sc(m, sources);
  const int p = m.p();
  const int s = static_cast<int>(sources.size());
  const Box whole{0, 0, m.rows, m.cols};
  if (algo == "br-lin") {
    br_lin(sc, {snake_order(m)});
  } else if (algo == "br-xy-source") {
    br_xy(sc, m, {whole}, {rows_first_by_source(sc, m, whole)});
  } else if (algo == "br-xy-dim") {
    // §2: along the longer dimension first; a row is the longer one when r <= c.
    br_xy(sc, m, {whole}, {m.rows <= m.cols});
  } else if (algo == "xor") {
    // All-to-all personalised exchange by exclusive-or permutations (§2, §5.1): in round k,
    // rank i sends its own message (if a source) to i XOR k.
    int P = 1;
    while (P < p) P *= 2;
    std::vector<int> index_of(static_cast<std::size_t>(p), -1);
    for (int k = 0; k < s; ++k) index_of[static_cast<std::size_t>(sources[static_cast<std::size_t>(k)])] = k;
    for (int k = 1; k < P; ++k) {
      for (int i = 0; i < p; ++i) {
        const int j = i ^ k;
        if (j < p && index_of[static_cast<std::size_t>(i)] >= 0) sc.send(i, j, {index_of[static_cast<std::size_t>(i)]});
      }
      sc.end_round();
    }
  } else if (algo == "2-step") {
    // s-to-one into rank 0, then one-to-all from rank 0 with Br_Lin's pattern (§2, §5.1).
    for (int k = 0; k < s; ++k) {
      if (sources[static_cast<std::size_t>(k)] != 0) sc.send(sources[static_cast<std::size_t>(k)], 0, {k});
    }
    sc.end_round();
    sc.reset_view(std::vector<int>(static_cast<std::size_t>(s), 0));
    br_lin(sc, {snake_order(m)});
  } else if (algo == "repos-lin" || algo == "repos-xy-source") {
    const bool lin = algo == "repos-lin";
    const auto holder = reposition(sc, sources, std::vector<int>(static_cast<std::size_t>(s), 0), {ideal_targets(lin, m, s)});
    sc.reset_view(holder);
    if (lin) br_lin(sc, {snake_order(m)});
    else br_xy(sc, m, {whole}, {rows_first_by_source(sc, m, whole)});
  } else if (algo == "part-lin" || algo == "part-xy-source") {
    const bool lin = algo == "part-lin";
    if (p == 1) return {};
    // Two sub-meshes, independent of the sources (§3): top/bottom halves, or left/right on one row.
    Box g1 = whole, g2 = whole;
    const bool split_rows = m.rows >= 2;
    if (split_rows) {
      g1.nr = (m.rows + 1) / 2;
      g2.r0 = g1.nr;
      g2.nr = m.rows - g1.nr;
    } else {
      g1.nc = (m.cols + 1) / 2;
      g2.c0 = g1.nc;
      g2.nc = m.cols - g1.nc;
    }
    const int s2 = std::min(s / 2, g2.nr * g2.nc);
    const int s1 = s - s2;
    std::vector<int> group(static_cast<std::size_t>(s), 0);
    for (int k = s1; k < s; ++k) group[static_cast<std::size_t>(k)] = 1;
    const Mesh m1{g1.nr, g1.nc}, m2{g2.nr, g2.nc};
    std::vector<std::vector<int>> targets{to_global(m, g1, ideal_targets(lin, m1, s1)),
                                          s2 > 0 ? to_global(m, g2, ideal_targets(lin, m2, s2)) : std::vector<int>{}};
    const auto holder = reposition(sc, sources, group, targets);
    sc.reset_view(holder);
    if (lin) br_lin(sc, {snake_of(m, g1), snake_of(m, g2)});
    else br_xy(sc, m, {g1, g2}, {rows_first_by_source(sc, m, g1), rows_first_by_source(sc, m, g2)});
    // Final permutation between the halves: G1's (i, j) pairs with the G2 rank at the same
    // offset (the last G2 row/column when G1 has one more).
    for (int x = 0; x < g1.nr; ++x) {
      for (int y = 0; y < g1.nc; ++y) {
        const int a = m.rank(x, y);
        const int b = split_rows ? m.rank(g2.r0 + std::min(x, g2.nr - 1), y) : m.rank(x, g2.c0 + std::min(y, g2.nc - 1));
        sc.send_view(a, b);
        sc.send_view(b, a);
      }
    }
    sc.end_round();
  } else {
    throw InputError("unknown s2p algorithm '" + algo + "' (one of: br-lin, br-xy-source, br-xy-dim, xor, 2-step, "
                     "repos-lin, repos-xy-source, part-lin, part-xy-source)");
  }
  return sc.take();
}

}  // namespace

Mesh near_square_mesh(int p) {
  PB_CHECK(p >= 1, "near_square_mesh needs p >= 1");
  int r = static_cast<int>(std::sqrt(static_cast<double>(p)));
  while (r > 1 && p % r != 0) --r;
  while ((r + 1) * (r + 1) <= p && p % (r + 1) == 0) ++r;
  return Mesh{r, p / r};
}

std::vector<int> snake_order(const Mesh& mesh) { return snake_of(mesh, Box{0, 0, mesh.rows, mesh.cols}); }

const std::vector<std::string>& source_distribution_names() {
  static const std::vector<std::string> names{"row",  "col",   "equal", "diag-right", "diag-left",
                                              "band", "cross", "block", "random"};
  return names;
}

const std::vector<std::string>& s2p_algorithm_names() {
  static const std::vector<std::string> names{"br-lin",    "br-xy-source",    "br-xy-dim", "xor",           "2-step",
                                              "repos-lin", "repos-xy-source", "part-lin",  "part-xy-source"};
  return names;
}

std::vector<int> source_distribution(std::string_view name, const Mesh& m, int s, std::uint64_t seed) {
  const int p = m.p();
  if (p < 1) throw InputError("empty mesh");
  if (s < 1 || s > p) throw InputError("number of sources s = " + std::to_string(s) + " must be in 1.." + std::to_string(p));
  std::vector<int> cand;
  if (name == "row") {
    cand = rows_at(m, ceil_div(s, m.cols));
  } else if (name == "col") {
    cand = cols_at(m, ceil_div(s, m.rows));
  } else if (name == "equal") {
    // E(s): rank 0 and then every ⌊p/s⌋-th or ⌈p/s⌉-th rank (row-major).
    for (int k = 0; k < s; ++k) cand.push_back(static_cast<int>(static_cast<long long>(k) * p / s));
  } else if (name == "diag-right") {
    cand = diag_candidates(m, s, false);
  } else if (name == "diag-left") {
    cand = diag_candidates(m, s, true);
  } else if (name == "band") {
    cand = band_candidates(m, s);
  } else if (name == "cross") {
    cand = cross_candidates(m, s);
  } else if (name == "block") {
    // SB(s): a ⌈√s⌉ × ⌈√s⌉ square at the top-left corner, widened when the mesh is too flat.
    const int q = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(s))));
    const int h = std::min(q, m.rows);
    const int w = std::min(m.cols, std::max(q, ceil_div(s, h)));
    for (int x = 0; x < h; ++x) {
      for (int y = 0; y < w; ++y) cand.push_back(m.rank(x, y));
    }
  } else if (name == "random") {
    std::mt19937_64 g(seed);
    std::vector<int> all(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) all[static_cast<std::size_t>(r)] = r;
    for (int k = 0; k < s; ++k) {
      const auto j = static_cast<std::size_t>(k) + static_cast<std::size_t>(uniform_below(g, static_cast<std::uint64_t>(p - k)));
      std::swap(all[static_cast<std::size_t>(k)], all[j]);
    }
    cand.assign(all.begin(), all.begin() + s);
  } else {
    throw InputError("unknown source distribution '" + std::string(name) +
                     "' (one of: row, col, equal, diag-right, diag-left, band, cross, block, random)");
  }
  return take(cand, p, s);
}

Mesh s2p_request_mesh(const PlanRequest& req) {
  if (!req.mesh) return near_square_mesh(req.p);
  const Mesh& mesh = *req.mesh;
  if (mesh.rows < 1 || mesh.cols < 1 || static_cast<std::int64_t>(mesh.rows) * mesh.cols != req.p) {
    throw FieldError({FieldError::field("mesh"),
                      {" " + std::to_string(mesh.rows) + "x" + std::to_string(mesh.cols) + " does not have p = " +
                       std::to_string(req.p) + " ranks"}});
  }
  return mesh;
}

std::vector<int> s2p_request_sources(const PlanRequest& req, const Mesh& mesh) {
  if (req.sources.empty()) return source_distribution("equal", mesh, 1, 1);
  const int p = mesh.p();
  std::vector<char> seen(static_cast<std::size_t>(p), 0);
  for (const int r : req.sources) {
    if (r < 0 || r >= p) {
      throw FieldError({FieldError::field("sources"),
                        {": rank " + std::to_string(r) + " is outside 0.." + std::to_string(p - 1)}});
    }
    if (seen[static_cast<std::size_t>(r)]) {
      throw FieldError({FieldError::field("sources"), {": rank " + std::to_string(r) + " is given twice"}});
    }
    seen[static_cast<std::size_t>(r)] = 1;
  }
  return req.sources;
}

namespace {

// build_s2p_plan()'s checks of the request, then its schedule.
std::vector<Round> checked_schedule(const S2PRequest& req) {
  const Mesh& m = req.mesh;
  if (m.rows < 1 || m.cols < 1) throw InputError("mesh needs at least one row and one column");
  const int p = m.p();
  const int s = static_cast<int>(req.sources.size());
  if (s < 1 || s > p) throw InputError("number of sources s = " + std::to_string(s) + " must be in 1.." + std::to_string(p));
  {
    PlanRequest size;
    size.op = "s2p";
    size.algo = req.algo;
    size.p = p;
    check_plan_memory(size);
  }
  std::vector<char> seen(static_cast<std::size_t>(p), 0);
  for (int r : req.sources) {
    if (r < 0 || r >= p) throw InputError("source rank " + std::to_string(r) + " is outside 0.." + std::to_string(p - 1));
    if (seen[static_cast<std::size_t>(r)]) throw InputError("source rank " + std::to_string(r) + " is given twice");
    seen[static_cast<std::size_t>(r)] = 1;
  }
  if (req.bytes > (std::uint64_t{1} << 40) / static_cast<std::uint64_t>(s)) throw InputError("s·bytes is too large");
  return schedule(req.algo, m, req.sources);
}

}  // namespace

std::uint64_t s2p_largest_message_blocks(const S2PRequest& req) {
  return internal::largest_transfer(checked_schedule(req));
}

Plan build_s2p_plan(const S2PRequest& req) {
  const auto rounds = checked_schedule(req);
  const int p = req.mesh.p();
  const int s = static_cast<int>(req.sources.size());

  internal::BlockLayout lay;
  lay.p = p;
  lay.bytes = req.bytes;
  lay.user_bytes.assign(static_cast<std::size_t>(p), req.bytes * static_cast<std::uint64_t>(s));
  // Source k's block lies at offset k·bytes, at its source first and at every rank at the end.
  const std::vector<int> sources = req.sources;
  const std::uint64_t b = req.bytes;
  lay.initial_at = [sources, b](int r, int k) -> std::int64_t {
    if (k < 0 || k >= static_cast<int>(sources.size()) || sources[static_cast<std::size_t>(k)] != r) return -1;
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(k) * b);
  };
  lay.final_at = [s, b](int, int k) -> std::int64_t {
    return k >= 0 && k < s ? static_cast<std::int64_t>(static_cast<std::uint64_t>(k) * b) : -1;
  };
  lay.final_blocks = [s](int) {
    std::vector<int> v(static_cast<std::size_t>(s));
    std::iota(v.begin(), v.end(), 0);
    return v;
  };
  Plan plan = internal::plan_from_rounds("s2p", req.algo, lay, rounds, false);
  return plan;
}

void register_s2p_plans() {
  const std::vector<std::pair<std::string, std::string>> algos{
      {"br-lin", "Br_Lin: binomial exchanges on the snake-order linear array, messages combined"},
      {"br-xy-source", "Br_xy_source: Br_Lin in rows then columns, or columns first when they hold more sources"},
      {"br-xy-dim", "Br_xy_dim: Br_Lin along the longer dimension first"},
      {"xor", "Xor: all-to-all personalised exchange by exclusive-or permutations"},
      {"2-step", "2-Step: s-to-one into rank 0, then one-to-all with Br_Lin's pattern"},
      {"repos-lin", "Repos: move the sources to the left diagonal Dl(s), then Br_Lin"},
      {"repos-xy-source", "Repos: move the sources to the top rows, then Br_xy_source"},
      {"part-lin", "Part: reposition into two halves, Br_Lin in each, exchange"},
      {"part-xy-source", "Part: reposition into two halves, Br_xy_source in each, exchange"}};
  for (const auto& [name, text] : algos) {
    register_plan_builder("s2p", name, text, [name = name](const PlanRequest& req) {
      const Mesh mesh = s2p_request_mesh(req);
      const std::vector<int> sources = s2p_request_sources(req, mesh);
      return build_s2p_plan(S2PRequest{name, mesh, sources, static_cast<std::uint64_t>(req.bytes)});
    });
  }
}

}  // namespace postbox
