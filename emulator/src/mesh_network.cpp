// The mesh's costs and topology tables (mesh_network.hpp); the network itself is a template
// over its host, in the header.
#include "mesh_network.hpp"

#include <string>

namespace postbox::sim::detail {

MeshCosts mesh_costs(const Machine& m) {
  MeshCosts c;
  c.router = to_ticks(m.mesh.router_delay_us, "router delay");
  if (!(m.mesh.link_bytes_per_us > 0)) throw InputError("mesh link bandwidth must be positive");
  c.link = to_per_byte(1.0 / m.mesh.link_bytes_per_us, "the link's time per byte");
  return c;
}

MeshTopology::MeshTopology(const MeshSpec& ms)
    : dims_(ms.dims), wrap_(ms.wrap), nd_(static_cast<int>(ms.dims.size())), nvc_(ms.wrap ? 2 : 1),
      nodes_count_(ms.nodes()) {
  net_links_ = nodes_count_ * nd_ * 2 * nvc_;
  const std::int64_t total = channels();
  // Per channel: owner, since, asked, key, FIFO head and tail (or free_at); per link its far node; per node its coordinates.
  require_memory(static_cast<std::uint64_t>(total) * 32 + static_cast<std::uint64_t>(net_links_) * 8 +
                     static_cast<std::uint64_t>(nodes_count_) * static_cast<std::uint64_t>(nd_) * 4,
                 "the mesh's " + std::to_string(total) + " channels");
  std::vector<std::int64_t> strides(static_cast<std::size_t>(nd_), 1);  // node index step per dimension (row-major)
  for (int d = nd_ - 2; d >= 0; --d)
    strides[static_cast<std::size_t>(d)] = strides[static_cast<std::size_t>(d) + 1] * ms.dims[static_cast<std::size_t>(d) + 1];
  coords_.resize(static_cast<std::size_t>(nodes_count_) * static_cast<std::size_t>(nd_));
  for (std::int64_t n = 0; n < nodes_count_; ++n)
    for (int d = 0; d < nd_; ++d)
      coords_[static_cast<std::size_t>(n * nd_ + d)] =
          static_cast<std::int32_t>((n / strides[static_cast<std::size_t>(d)]) % ms.dims[static_cast<std::size_t>(d)]);
  far_node_.resize(static_cast<std::size_t>(net_links_));
  for (std::int64_t n = 0; n < nodes_count_; ++n)
    for (int d = 0; d < nd_; ++d)
      for (int dir = 0; dir < 2; ++dir) {
        const int k = ms.dims[static_cast<std::size_t>(d)];
        const int c = coord(n, d);
        const int nc = dir == 0 ? (c + 1) % k : (c - 1 + k) % k;
        for (int vc = 0; vc < nvc_; ++vc)
          far_node_[static_cast<std::size_t>(((n * nd_ + d) * 2 + dir) * nvc_ + vc)] =
              n + static_cast<std::int64_t>(nc - c) * strides[static_cast<std::size_t>(d)];
      }
}

LinkPlace MeshTopology::place(std::int64_t l) const {
  LinkPlace place;
  place.vcs = nvc_;
  if (is_inject(l)) {
    place.kind = LinkPlace::Kind::inject;
    place.node = l - net_links_;
  } else if (is_eject(l)) {
    place.kind = LinkPlace::Kind::eject;
    place.node = l - net_links_ - nodes_count_;
  } else {
    const std::int64_t per_node = static_cast<std::int64_t>(nd_) * 2 * nvc_;
    const std::int64_t rest = l % per_node;
    const int d = static_cast<int>(rest / (2 * nvc_));
    place.kind = LinkPlace::Kind::link;
    place.node = l / per_node;
    place.axis = nd_ - 1 - d;
    place.dim = d;
    place.plus = (rest / nvc_) % 2 == 0;
    place.vc = static_cast<int>(rest % nvc_);
  }
  return place;
}

}  // namespace postbox::sim::detail
