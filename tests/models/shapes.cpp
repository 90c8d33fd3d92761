// pb_model_shapes ALGORITHM P: prints the Promela tables the SPIN models (tests/models/*.pml)
// read their barrier shape from, built by barrier_shape() itself, so the models check the
// shapes the engine runs (one source per shape). For every non-empty set M of ranks
// 0..P-1 (a bit mask: the participants left after drops) it gives the shape over those ranks,
// as the engine rebuilds it (spec: /work/notes/barrier-protocol.md, "COMPLETE" step 3):
//   central/tree: per-index arrival node tables (entry node, target, next node) and the
//   wake-up children in send order; rounds: t, m, λ and the offsets (they depend on n only).
// fibo and combine use s = 1, r = 1 (λ = 2, Bruck's running example); hier places rank i on
// PU i of the synthetic "pack:2 core:2 pu:1" (two levels: package, core).
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "postbox/collectives/barrier_shape.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace {

using postbox::BarrierShape;

constexpr int kMaxP = 4;
constexpr int kNone = 7;  // "no node": past the root (the arriver that gets here completes)

struct Tables {
  // Indexed by mask * kMaxP + index (or node).
  std::vector<int> entry, target, next, nwake, rank_of, index_of;
  std::vector<int> wake;  // mask * kMaxP * (kMaxP - 1) + index * (kMaxP - 1) + j
  std::vector<int> nodes; // per mask
};

// Combining nodes of a tree-family shape (spec "Tree family", Arrival).
void arrival_nodes(const BarrierShape& s, int mask, Tables& t) {
  const int n = s.n;
  const auto& ch = s.arrival.children;
  const auto& par = s.arrival.parent;
  auto at = [&](std::vector<int>& v, int x) -> int& { return v[mask * kMaxP + x]; };
  if (!s.match_per_child) {
    // Node v: v and its arrival children; a leaf passes straight to its parent's node.
    t.nodes[mask] = n;
    for (int v = 0; v < n; ++v) {
      at(t.target, v) = 1 + static_cast<int>(ch[v].size());
      at(t.next, v) = par[v] < 0 ? kNone : par[v];
      at(t.entry, v) = (ch[v].empty() && par[v] >= 0) ? par[v] : v;
    }
    return;
  }
  // Tournament: node M(v, j) per arrival child c_j of v, target 2, numbered in (v, j) order.
  std::vector<std::vector<int>> id(n);
  int next_id = 0;
  for (int v = 0; v < n; ++v) {
    for (std::size_t j = 0; j < ch[v].size(); ++j) id[v].push_back(next_id++);
  }
  t.nodes[mask] = next_id;
  // The node v's parent has for v (or kNone at the root).
  auto slot_for = [&](int v) {
    if (par[v] < 0) return kNone;
    const auto& pc = ch[par[v]];
    for (std::size_t j = 0; j < pc.size(); ++j) {
      if (pc[j] == v) return id[par[v]][j];
    }
    PB_CHECK(false, "arrival child not among its parent's children");
    return kNone;
  };
  for (int v = 0; v < n; ++v) {
    at(t.entry, v) = ch[v].empty() ? slot_for(v) : id[v][0];
    for (std::size_t j = 0; j < ch[v].size(); ++j) {
      at(t.target, id[v][j]) = 2;
      at(t.next, id[v][j]) = j + 1 < ch[v].size() ? id[v][j + 1] : slot_for(v);
    }
  }
}

void print_array(const char* name, const std::vector<int>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) std::printf("  %s[%zu] = %d;\n", name, i, v[i]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pb_model_shapes ALGORITHM P (P in 1..%d)\n", kMaxP);
    return 2;
  }
  const auto algorithm = postbox::parse_barrier_algorithm(argv[1]);
  const int p = std::atoi(argv[2]);
  if (!algorithm || p < 1 || p > kMaxP) {
    std::fprintf(stderr, "pb_model_shapes: bad algorithm '%s' or P '%s' (P in 1..%d)\n", argv[1], argv[2], kMaxP);
    return 2;
  }
  const postbox::SendRecv sr{postbox::Rational(1), postbox::Rational(1)};
  const postbox::Topology topo = postbox::Topology::synthetic("pack:2 core:2 pu:1");

  const int masks = 1 << kMaxP;
  Tables t;
  for (auto* v : {&t.entry, &t.target, &t.next, &t.nwake, &t.rank_of, &t.index_of}) v->assign(masks * kMaxP, kNone);
  t.wake.assign(masks * kMaxP * (kMaxP - 1), kNone);
  t.nodes.assign(masks, 0);
  std::vector<int> r_t(kMaxP + 1, 0), r_m(kMaxP + 1, 0), r_off((kMaxP + 1) * (kMaxP - 1), 0);
  long long lambda = 1;
  BarrierShape::Family family = BarrierShape::Family::central;
  std::string comment;

  for (int mask = 1; mask < (1 << p); ++mask) {
    std::vector<int> ranks;
    for (int r = 0; r < p; ++r) {
      if (mask & (1 << r)) ranks.push_back(r);
    }
    const int n = static_cast<int>(ranks.size());
    for (int i = 0; i < n; ++i) {
      t.rank_of[mask * kMaxP + i] = ranks[i];
      t.index_of[mask * kMaxP + ranks[i]] = i;
    }
    std::vector<int> placement = ranks;  // rank i on PU i
    const BarrierShape s = postbox::barrier_shape(*algorithm, n, sr, &topo, &placement);
    family = s.family;
    if (s.family == BarrierShape::Family::rounds) {
      lambda = s.lambda;
      r_t[n] = static_cast<int>(s.t);
      r_m[n] = static_cast<int>(s.m);
      for (std::size_t j = 0; j < s.offset.size(); ++j) r_off[n * (kMaxP - 1) + j] = static_cast<int>(s.offset[j]);
      continue;
    }
    arrival_nodes(s, mask, t);
    for (int v = 0; v < n; ++v) {
      const auto& wc = s.wakeup.children[v];
      t.nwake[mask * kMaxP + v] = static_cast<int>(wc.size());
      for (std::size_t j = 0; j < wc.size(); ++j) t.wake[(mask * kMaxP + v) * (kMaxP - 1) + j] = wc[j];
    }
    if (mask == (1 << p) - 1) {
      comment += "   arrival parents:";
      for (int v = 0; v < n; ++v) comment += " " + std::to_string(s.arrival.parent[v]);
      comment += "\n   wake-up children (send order):";
      for (int v = 0; v < n; ++v) {
        comment += " " + std::to_string(v) + "->{";
        for (std::size_t j = 0; j < s.wakeup.children[v].size(); ++j) {
          comment += (j ? "," : "") + std::to_string(s.wakeup.children[v][j]);
        }
        comment += "}";
      }
      comment += std::string("\n   combining: ") + (s.match_per_child ? "per child (matches)" : "per node") + "\n";
    }
  }
  if (family == BarrierShape::Family::rounds) {
    comment = "   lambda " + std::to_string(lambda) + "; t, m, offsets for n = " + std::to_string(p) + ": " +
              std::to_string(r_t[p]) + ", " + std::to_string(r_m[p]) + ",";
    for (int j = 0; j < r_m[p]; ++j) comment += " " + std::to_string(r_off[p * (kMaxP - 1) + j]);
    comment += "\n";
  }

  const char* fam = family == BarrierShape::Family::central ? "central"
                    : family == BarrierShape::Family::tree  ? "tree"
                                                            : "rounds";
  std::printf("/* generated by pb_model_shapes %s %d from barrier_shape(); do not edit.\n%s*/\n", argv[1], p,
              comment.c_str());
  std::printf("#define SHAPE_FAMILY_%s 1\n#define LAMBDA %lld\n#define NONE %d\n", fam, lambda, kNone);
  std::printf("hidden byte T_entry[%d]; hidden byte T_target[%d]; hidden byte T_next[%d];\n", masks * kMaxP,
              masks * kMaxP, masks * kMaxP);
  std::printf("hidden byte T_nwake[%d]; hidden byte T_wake[%d]; hidden byte T_rank[%d]; hidden byte T_index[%d];\n",
              masks * kMaxP, masks * kMaxP * (kMaxP - 1), masks * kMaxP, masks * kMaxP);
  std::printf("hidden byte R_t[%d]; hidden byte R_m[%d]; hidden byte R_off[%d]; hidden byte T_n[%d];\n", kMaxP + 1,
              kMaxP + 1, (kMaxP + 1) * (kMaxP - 1), masks);
  std::printf("inline shape_init() {\n d_step {\n");
  print_array("T_entry", t.entry);
  print_array("T_target", t.target);
  print_array("T_next", t.next);
  print_array("T_nwake", t.nwake);
  print_array("T_wake", t.wake);
  print_array("T_rank", t.rank_of);
  print_array("T_index", t.index_of);
  print_array("R_t", r_t);
  print_array("R_m", r_m);
  print_array("R_off", r_off);
  std::vector<int> sizes(masks, 0);
  for (int mask = 0; mask < masks; ++mask) sizes[mask] = std::popcount(static_cast<unsigned>(mask));
  print_array("T_n", sizes);
  std::printf(" }\n}\n");
  return 0;
}
