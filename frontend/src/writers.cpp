#include "postbox/frontend/writers.hpp"

#include <cstddef>
#include <utility>

namespace postbox::frontend {

nlohmann::json sim_result_json(const sim::SimResult& r, const std::string& machine, const std::string& op,
                               const std::string& algo, int p, std::uint64_t bytes) {
  nlohmann::json j;
  j["machine"] = machine;
  j["op"] = op;
  j["algo"] = algo;
  j["p"] = p;
  j["bytes"] = bytes;
  j["time_us"] = r.time_us;
  j["time_ticks"] = r.time_ticks;
  j["messages"] = r.messages;
  j["rendezvous"] = r.rendezvous;
  j["events"] = r.events;
  j["max_waiting_events"] = r.max_waiting_events;
  j["inline_steps"] = r.inline_steps;
  j["packets"] = r.packets;
  j["channel_waits"] = r.channel_waits;
  j["channel_ties"] = r.channel_ties;
  if (!r.queues.empty()) {  // SimOptions::queue_stats: per rank, as LogGOPSim's --qstat samples them
    nlohmann::json max_posted = nlohmann::json::array(), mean_posted = nlohmann::json::array();
    nlohmann::json max_unexpected = nlohmann::json::array(), mean_unexpected = nlohmann::json::array();
    for (const sim::QueueStats& q : r.queues) {
      max_posted.push_back(q.max_posted);
      mean_posted.push_back(q.mean_posted);
      max_unexpected.push_back(q.max_unexpected);
      mean_unexpected.push_back(q.mean_unexpected);
    }
    j["queues"] = {{"max_posted", std::move(max_posted)},
                   {"mean_posted", std::move(mean_posted)},
                   {"max_unexpected", std::move(max_unexpected)},
                   {"mean_unexpected", std::move(mean_unexpected)}};
  }
  return j;
}

std::string error_line(const InputError& error) {
  if (const auto* field_error = dynamic_cast<const FieldError*>(&error)) return field_error->render("--");
  return error.what();
}

nlohmann::ordered_json number_json(const Rational& x) {
  if (x.is_integer()) return x.num();
  return x.to_double();
}

nlohmann::ordered_json tree_json(const Tree& t) {
  nlohmann::ordered_json j;
  j["shape"] = t.shape;
  j["p"] = t.p;
  j["completion"] = number_json(t.completion);
  j["completion_exact"] = t.completion.str();
  j["root"] = t.root;
  j["s"] = number_json(t.model.s);
  j["r"] = number_json(t.model.r);
  j["lambda"] = number_json(t.model.lambda());
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (int v = 0; v < t.p; ++v) {
    const auto i = static_cast<std::size_t>(v);
    nodes.push_back(nlohmann::ordered_json{
        {"rank", v}, {"parent", t.parent[i]}, {"children", t.children[i]}, {"time", number_json(t.time[i])}});
  }
  j["nodes"] = std::move(nodes);
  return j;
}

nlohmann::json topology_json(const Topology& t) {
  nlohmann::json tree = nlohmann::json::array();
  for (const Topology::Node& n : t.tree()) {
    tree.push_back({{"level", n.level},
                    {"kind", n.kind},
                    {"logical_index", n.logical_index},
                    {"os_index", n.os_index},
                    {"bytes", t.source() == Topology::Source::synthetic ? 0 : n.bytes},
                    {"first_pu", n.first_pu},
                    {"last_pu", n.last_pu}});
  }
  return {{"source", t.source_name()},   {"pus", t.pus()},
          {"cores", t.cores()},          {"packages", t.packages()},
          {"numa_nodes", t.numa_nodes()}, {"l3_groups", t.l3_groups()},
          {"can_bind", t.can_bind()},    {"tree", std::move(tree)}};
}

}  // namespace postbox::frontend
