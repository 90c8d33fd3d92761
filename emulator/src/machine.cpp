// Machine descriptions: the typed machine and its costs (the text forms, model strings and
// TOML profiles, are read by frontend/machines.hpp). Field reference: docs/emulator.md.
#include "postbox/emulator/machine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "postbox/runtime/check.hpp"

namespace postbox::sim {

std::int64_t MeshSpec::nodes() const {
  std::int64_t n = 1;
  for (int d : dims) n *= d;
  return dims.empty() ? 0 : n;
}

std::vector<std::int64_t> place_ranks(const MeshSpec& mesh, const Placement& pl, int p) {
  const std::int64_t n = mesh.nodes();
  if (n < p) throw InputError("mesh has " + std::to_string(n) + " nodes, fewer than p = " + std::to_string(p));
  std::vector<std::int64_t> node(static_cast<std::size_t>(p));
  switch (pl.kind) {
    case PlacementKind::row_major:
      for (int r = 0; r < p; ++r) node[r] = r;
      break;
    case PlacementKind::snake: {
      // Boustrophedon along X: odd rows (index over all slower dimensions) run backwards.
      const std::int64_t x = mesh.dims.back();
      for (int r = 0; r < p; ++r) {
        const std::int64_t row = r / x, col = r % x;
        node[r] = row * x + ((row % 2) == 0 ? col : x - 1 - col);
      }
      break;
    }
    case PlacementKind::random: {
      // Fisher–Yates over all nodes with mt19937_64 (its output is fixed by the standard);
      // the modulo draw avoids the implementation-defined distributions.
      std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) perm[i] = i;
      std::mt19937_64 rng(pl.seed);
      for (std::int64_t i = n - 1; i > 0; --i) {
        const auto j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(i + 1));
        std::swap(perm[i], perm[j]);
      }
      for (int r = 0; r < p; ++r) node[r] = perm[r];
      break;
    }
    case PlacementKind::list: {
      if (static_cast<std::int64_t>(pl.nodes.size()) < p)
        throw InputError("placement list has " + std::to_string(pl.nodes.size()) + " nodes, fewer than p = " + std::to_string(p));
      std::set<int> seen;
      for (int r = 0; r < p; ++r) {
        const int v = pl.nodes[r];
        if (v >= n) throw InputError("placement list: node " + std::to_string(v) + " is outside the mesh");
        if (!seen.insert(v).second) throw InputError("placement list: node " + std::to_string(v) + " appears twice");
        node[r] = v;
      }
      break;
    }
  }
  return node;
}

const char* model_kind_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::postal: return "postal";
    case ModelKind::send_recv: return "sr";
    case ModelKind::loggp: return "logp";
    case ModelKind::mesh: return "mesh";
    case ModelKind::cluster: return "cluster";
    case ModelKind::host: return "host";
  }
  return "?";
}

std::string model_name(const Machine& m) { return m.kind == ModelKind::host ? m.host_model : model_kind_name(m.kind); }

HostCosts normalised_host_costs(const Machine& m) {
  HostCosts c;
  switch (m.kind) {
    case ModelKind::postal:
      c.send_overhead.base = c.send_gap.base = c.recv_gap.base = 1;
      c.wire = m.lambda;
      return c;
    case ModelKind::send_recv:
      c.send_overhead.base = c.send_gap.base = c.wire = m.send_us;
      c.recv_overhead.base = m.recv_us;
      return c;
    case ModelKind::loggp:
      c.first_byte_free = true;
      c.send_overhead = Linear{m.o, m.O, 0};
      c.send_gap = c.recv_gap = Linear{m.g, m.G, 0};
      c.wire = m.o + m.L;
      // LogGOPSim charges o + max((s − 1)O, (s − 1)G) on accepting a message.
      c.recv_overhead = Linear{m.o, std::max(m.O, m.G), 0};
      c.eager_limit = m.S;
      return c;
    case ModelKind::host: return m.host;
    case ModelKind::mesh: {
      const Cost& so = m.send_mode == SendMode::blocking ? m.send_overhead : m.isend_overhead;
      c.send_overhead = Linear{so.base_us, so.per_byte_us, so.per_packet_us};
      c.recv_overhead = Linear{m.recv_overhead.base_us, m.recv_overhead.per_byte_us, m.recv_overhead.per_packet_us};
      return c;
    }
    case ModelKind::cluster: break;
  }
  PB_CHECK(false, "normalised_host_costs: machine '" + m.name + "' is a cluster: its levels have the host costs");
}

bool has_rendezvous(const Machine& m) {
  if (m.kind == ModelKind::cluster)
    return std::any_of(m.levels.begin(), m.levels.end(), [](const Machine& l) { return has_rendezvous(l); });
  return m.kind != ModelKind::mesh && normalised_host_costs(m).eager_limit != kAlwaysEager;
}

double cost_at(const HostCosts& costs, const Linear& term, std::uint64_t bytes, std::uint64_t packets) {
  const std::uint64_t charged = costs.first_byte_free && bytes > 0 ? bytes - 1 : bytes;
  return term.base + term.per_byte * static_cast<double>(charged) + term.per_packet * static_cast<double>(packets);
}

double nominal_lambda(const Machine& m, std::uint64_t bytes) {
  if (m.kind == ModelKind::mesh) return 0;
  if (m.kind == ModelKind::cluster) {
    if (m.levels.size() != 2) return 0;
    return nominal_lambda(m.levels[m.cluster.nodes > 1 ? 1 : 0], bytes);
  }
  const HostCosts c = normalised_host_costs(m);
  const double round = std::max(cost_at(c, c.send_overhead, bytes), cost_at(c, c.send_gap, bytes));
  return round > 0 ? (c.wire + cost_at(c, c.recv_overhead, bytes)) / round : 0.0;
}

}  // namespace postbox::sim
