// The routes of a topology and the fluid max-congestion model (flow_network.hpp).
#include "postbox/emulator/flow_network.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "postbox/runtime/check.hpp"

namespace postbox::sim {
namespace {

constexpr std::uint64_t kMicro = 1'000'000;  // work is kept in 10^-6 tick

std::string host_text(const NetworkTopology& t, int rank) {
  return t.node_names[static_cast<std::size_t>(t.host_nodes[static_cast<std::size_t>(rank)])] + " (rank " +
         std::to_string(rank) + ")";
}

}  // namespace

Routes::Routes(std::shared_ptr<const NetworkTopology> topo) : topo_(std::move(topo)) {
  PB_CHECK(topo_ != nullptr, "Routes: no topology");
  const std::size_t n = topo_->node_names.size();
  out_.assign(n, {});
  table_.assign(n, {});
  any_.assign(n, -1);
  for (std::size_t l = 0; l < topo_->links.size(); ++l) {
    const NetworkTopology::Link& link = topo_->links[l];
    PB_CHECK(link.from >= 0 && static_cast<std::size_t>(link.from) < n && link.to >= 0 && static_cast<std::size_t>(link.to) < n,
             "Routes: a link names a node outside the topology");
    const auto from = static_cast<std::size_t>(link.from);
    const auto id = static_cast<std::int32_t>(l);
    out_[from].push_back(id);
    if (link.any && any_[from] < 0) any_[from] = id;
    for (std::int32_t d : link.dests) table_[from].emplace_back(d, id);
  }
  // The first link (file order) naming a destination wins: a stable sort keeps the links of one
  // destination in order, unique keeps the first.
  for (auto& t : table_) {
    std::stable_sort(t.begin(), t.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    t.erase(std::unique(t.begin(), t.end(), [](const auto& x, const auto& y) { return x.first == y.first; }), t.end());
  }
}

std::vector<std::int32_t> Routes::route(int src, int dst) const {
  const NetworkTopology& t = *topo_;
  PB_CHECK(src >= 0 && dst >= 0 && src < t.hosts() && dst < t.hosts(), "Routes::route: rank outside the hosts");
  const std::int32_t target = t.host_nodes[static_cast<std::size_t>(dst)];
  std::int32_t at = t.host_nodes[static_cast<std::size_t>(src)];
  const std::string what = "network file '" + t.origin + "': the route from " + host_text(t, src) + " to " + host_text(t, dst);
  std::vector<std::int32_t> path;
  // A route without a loop visits each node at most once: more hops than nodes is a loop.
  while (at != target) {
    if (path.size() >= t.node_names.size()) {
      // Find the first node visited twice, to name it.
      std::vector<char> seen(t.node_names.size(), 0);
      std::int32_t x = t.host_nodes[static_cast<std::size_t>(src)];
      for (std::int32_t l : path) {
        seen[static_cast<std::size_t>(x)] = 1;
        x = t.links[static_cast<std::size_t>(l)].to;
        if (seen[static_cast<std::size_t>(x)]) break;
      }
      throw InputError(what + " comes back to node " + t.node_names[static_cast<std::size_t>(x)] + " (a routing loop)");
    }
    const auto node = static_cast<std::size_t>(at);
    const std::vector<std::int32_t>& out = out_[node];
    std::int32_t link = -1;
    if (out.size() == 1) {
      link = out[0];
    } else if (out.empty()) {
      throw InputError(what + " reaches node " + t.node_names[node] + ", which has no outgoing link");
    } else {
      const auto& table = table_[node];
      const auto it = std::lower_bound(table.begin(), table.end(), target,
                                       [](const auto& e, std::int32_t d) { return e.first < d; });
      if (it != table.end() && it->first == target) link = it->second;
      else link = any_[node];
      if (link < 0)
        throw InputError(what + " reaches node " + t.node_names[node] + ", none of whose " + std::to_string(out.size()) +
                         " links names " + t.node_names[static_cast<std::size_t>(target)] + " in its comment (nor is \"*\")");
    }
    path.push_back(link);
    at = t.links[static_cast<std::size_t>(link)].to;
  }
  return path;
}

FlowNetwork::FlowNetwork(std::shared_ptr<const NetworkTopology> topo, int p) : routes_(std::move(topo)), p_(p) {
  const NetworkTopology& t = routes_.topology();
  if (t.hosts() < p)
    throw InputError("network file '" + t.origin + "' has " + std::to_string(t.hosts()) + " hosts (nodes named H...), fewer than p = " +
                     std::to_string(p));
  on_link_.assign(t.links.size(), {});
}

std::uint32_t FlowNetwork::route_of(int src, int dst) {
  const std::uint64_t key = static_cast<std::uint64_t>(src) * static_cast<std::uint64_t>(p_) + static_cast<std::uint64_t>(dst);
  const auto [it, fresh] = path_index_.try_emplace(key, static_cast<std::uint32_t>(paths_.size()));
  if (fresh) {
    try {
      paths_.push_back(routes_.route(src, dst));
    } catch (...) {
      path_index_.erase(it);
      throw;
    }
  }
  return it->second;
}

std::uint32_t FlowNetwork::congestion(std::uint32_t route) const {
  std::size_t k = 1;
  for (std::int32_t l : paths_[route]) k = std::max(k, on_link_[static_cast<std::size_t>(l)].size());
  return static_cast<std::uint32_t>(k);
}

// Brings flow f's remaining work up to `now` at its old rate, then gives it congestion k and the
// end that follows if nothing changes again.
void FlowNetwork::retime(std::uint32_t f, Ticks now, std::uint32_t k) {
  Flow& x = flows_[f];
  const Work done = static_cast<Work>(now - x.last) * kMicro / x.k;
  x.rem = done >= x.rem ? 0 : x.rem - done;
  x.last = now;
  x.k = k;
  if (k > 1 && !x.slowed) {
    x.slowed = true;
    ++slowed_;
  }
  const Work scaled = x.rem * k;
  const Work dt = (scaled + kMicro - 1) / kMicro;
  if (dt > static_cast<Work>(kMaxTicks - now)) throw InputError("virtual time passes 2^62 ticks (53 days of microseconds)");
  x.end = now + static_cast<Ticks>(dt);
  ++x.version;
  due_.push(Due{x.end, x.seq, f, x.version});
}

// The flows that share a link of `route` with flow `self` get the congestion the links now have.
void FlowNetwork::touch_neighbours(std::uint32_t route, std::uint32_t self, Ticks now) {
  ++stamp_;
  scratch_.clear();
  for (std::int32_t l : paths_[route])
    for (std::uint32_t g : on_link_[static_cast<std::size_t>(l)]) {
      if (g == self || seen_[g] == stamp_) continue;
      seen_[g] = stamp_;
      scratch_.push_back(g);
    }
  for (std::uint32_t g : scratch_) {
    const std::uint32_t k = congestion(flows_[g].route);
    if (k != flows_[g].k) retime(g, now, k);  // same rate: its end stands
  }
}

std::uint32_t FlowNetwork::insert(Ticks now, int src, int dst, Ticks work, std::uint32_t msg) {
  PB_CHECK(work > 0, "FlowNetwork::insert: a flow without work");
  PB_CHECK(src >= 0 && dst >= 0 && src < p_ && dst < p_, "FlowNetwork::insert: rank outside 0..p-1");
  const std::uint32_t route = route_of(src, dst);
  std::uint32_t f;
  if (!free_.empty()) {
    f = free_.back();
    free_.pop_back();
  } else {
    f = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
    seen_.push_back(0);
  }
  Flow& x = flows_[f];
  const std::uint32_t version = x.version;
  x = Flow{};
  x.version = version;
  x.rem = static_cast<Work>(work) * kMicro;
  x.last = now;
  x.route = route;
  x.msg = msg;
  x.seq = seq_++;
  for (std::int32_t l : paths_[route]) {
    auto& on = on_link_[static_cast<std::size_t>(l)];
    on.push_back(f);
    max_link_flows_ = std::max(max_link_flows_, static_cast<std::uint32_t>(on.size()));
  }
  ++active_;
  touch_neighbours(route, f, now);
  retime(f, now, congestion(route));
  return f;
}

Ticks FlowNetwork::next_time() {
  while (!due_.empty() && due_.top().version != flows_[due_.top().flow].version) due_.pop();
  PB_CHECK(!due_.empty(), "FlowNetwork::next_time: no flow");
  return due_.top().t;
}

FlowNetwork::Ended FlowNetwork::pop() {
  const Ticks t = next_time();
  const std::uint32_t f = due_.top().flow;
  due_.pop();
  Flow& x = flows_[f];
  ++x.version;  // its queued entries, if any, are stale
  for (std::int32_t l : paths_[x.route]) {
    auto& on = on_link_[static_cast<std::size_t>(l)];
    const auto it = std::find(on.begin(), on.end(), f);
    PB_CHECK(it != on.end(), "FlowNetwork::pop: a flow missing from its link");
    *it = on.back();
    on.pop_back();
  }
  --active_;
  touch_neighbours(x.route, f, t);
  free_.push_back(f);
  return Ended{t, x.msg};
}

}  // namespace postbox::sim
